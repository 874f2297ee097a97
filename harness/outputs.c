/* SPDX-License-Identifier: MIT */
/*
 * outputs: one --junit FILE, --json FILE and index.html for all the
 * processes of a run (see outputs.h).  Journals are appended with single
 * write(2) calls and read back only up to their last newline, so a record
 * torn by SIGKILL, or one being written while another process merges, is
 * never half-read.  Every store is changed (journal created, stale runs
 * removed, outputs written) under its directory's flock.
 */
#include "outputs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "gate.h"
#include "report.h"
#include "results.h"
#include "run_proto.h"
#include "util.h"
#include "verdict.h"

/* A journal holds every window of one process: a whole binary's run. */
#define JOURNAL_MAX ((size_t)256 << 20)
#define MAX_OUTPUTS 3

struct output {
    enum leakgate_outputs_kind kind;
    char *spec;    /* FILE, or DIR for index.html */
    char *store;   /* .NAME.leakgate/ or DIR/.leakgate/ */
    char *rundir;  /* store/run-KEY */
    int fd;        /* this process's journal, -1 when none */
    char *journal; /* its name in rundir */
};

/* A V record already journaled: the same one is not written twice. */
struct sent {
    uint64_t name_hash, json_hash;
};

struct leakgate_outputs {
    struct output out[MAX_OUTPUTS];
    size_t n;
    bool has_env; /* an N record was written */
    struct sent *sent;
    size_t nsent;
};

/* ---- processes ---------------------------------------------------------- */

/* The start time (clock ticks after boot) of a running process: 0, or -1
 * when it is gone or a zombie (killed, not yet reaped). */
static int
proc_start(unsigned long long *out, long pid)
{
    char path[64], text[1024], state = 'Z';
    const char *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    /* "pid (comm) state ppid ..." : comm may hold spaces and ')'. */
    p = strrchr(text, ')');
    if (!p || sscanf(p + 1,
                     " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u "
                     "%*u %*d %*d %*d %*d %*d %*d %llu",
                     &state, out) != 2)
        return -1;
    return state == 'Z' || state == 'X' ? -1 : 0;
}

static bool
alive(long pid, unsigned long long start)
{
    unsigned long long now;

    return proc_start(&now, pid) == 0 && now == start;
}

/* ---- names -------------------------------------------------------------- */

bool
leakgate_outputs__is_shared(const char *spec)
{
    struct stat st;
    size_t n = spec ? strlen(spec) : 0;

    if (n == 0 || spec[n - 1] == '/' ||
        (stat(spec, &st) == 0 && S_ISDIR(st.st_mode)))
        return false;
    return !strstr(spec, "%p") && !strstr(spec, "%h");
}

/* "run-id-ID" for $LEAKGATE_RUN_ID, else "run-p<ppid>-<its start>". */
static char *
run_key(void)
{
    const char *id = getenv(LEAKGATE_OUTPUTS_RUN_ID_ENV);
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    unsigned long long start = 0;
    char *safe;

    if (id && *id) {
        safe = leakgate_util__sanitize_name(id);
        if (safe)
            leakgate_buf__printf(&b, "run-id-%s", safe);
        leakgate_util__free(safe);
        return leakgate_buf__take(&b);
    }
    (void)proc_start(&start, (long)getppid());
    leakgate_buf__printf(&b, "run-p%ld-%llu", (long)getppid(), start);
    return leakgate_buf__take(&b);
}

/* A journal's name "START-PID.log": its process; false for other names. */
static bool
journal_owner(const char *name, unsigned long long *start, long *pid)
{
    char tail[8] = "";

    return sscanf(name, "%20llu-%9ld%7s", start, pid, tail) == 3 &&
           strcmp(tail, ".log") == 0;
}

/* ---- stores ------------------------------------------------------------- */

static int
set_store(struct output *o, const char *key)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT, r = LEAKGATE_BUF_INIT;
    const char *slash = strrchr(o->spec, '/');

    if (o->kind == LEAKGATE_OUTPUTS_INDEX)
        leakgate_buf__printf(&b, "%s/.leakgate", o->spec);
    else if (slash)
        leakgate_buf__printf(&b, "%.*s/.%s.leakgate",
                             (int)(slash == o->spec ? 0 : slash - o->spec),
                             o->spec, slash + 1);
    else
        leakgate_buf__printf(&b, ".%s.leakgate", o->spec);
    o->store = leakgate_buf__take(&b);
    if (o->store)
        leakgate_buf__printf(&r, "%s/%s", o->store, key);
    o->rundir = leakgate_buf__take(&r);
    return o->rundir ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "store");
}

/* Remove dir and the files in it (best effort). */
static void
remove_run(const char *dir)
{
    DIR *d = opendir(dir);

    for (struct dirent *de = d ? readdir(d) : NULL; de; de = readdir(d)) {
        struct leakgate_buf f = LEAKGATE_BUF_INIT;

        if (de->d_name[0] == '.')
            continue;
        leakgate_buf__printf(&f, "%s/%s", dir, de->d_name);
        if (f.ptr)
            unlink(f.ptr);
        leakgate_buf__dispose(&f);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Whether some process that wrote into run directory dir still runs. */
static bool
any_writer_alive(const char *dir)
{
    DIR *d = opendir(dir);
    bool live = false;

    for (struct dirent *de = d ? readdir(d) : NULL; de && !live;
         de = readdir(d)) {
        unsigned long long start;
        long pid;

        live = journal_owner(de->d_name, &start, &pid) && alive(pid, start);
    }
    if (d)
        closedir(d);
    return live;
}

/* A run directory is stale when its starter has ended (run-p...), or, for
 * a named run, when none of its writers runs any more. */
static bool
stale(const char *name, const char *path)
{
    unsigned long long start;
    long pid;

    if (sscanf(name, "run-p%9ld-%20llu", &pid, &start) == 2)
        return !alive(pid, start);
    return strncmp(name, "run-id-", 7) == 0 && !any_writer_alive(path);
}

/* Remove the store's stale runs other than ours (under its lock). */
static void
prune(const struct output *o)
{
    const char *mine = strrchr(o->rundir, '/') + 1;
    DIR *d = opendir(o->store);

    for (struct dirent *de = d ? readdir(d) : NULL; de; de = readdir(d)) {
        struct leakgate_buf path = LEAKGATE_BUF_INIT;

        if (strncmp(de->d_name, "run-", 4) != 0 ||
            strcmp(de->d_name, mine) == 0)
            continue;
        leakgate_buf__printf(&path, "%s/%s", o->store, de->d_name);
        if (path.ptr && stale(de->d_name, path.ptr))
            remove_run(path.ptr);
        leakgate_buf__dispose(&path);
    }
    if (d)
        closedir(d);
}

static int
lock_store(int *fd, const struct output *o)
{
    struct leakgate_buf inside = LEAKGATE_BUF_INIT;
    int rc;

    leakgate_buf__printf(&inside, "%s/lock", o->store);
    rc = inside.failed ? leakgate_error__set(LEAKGATE_ENOMEM, "store")
                       : leakgate_files__lock_dir(fd, inside.ptr);
    leakgate_buf__dispose(&inside);
    return rc;
}

static int
open_journal(struct output *o)
{
    struct leakgate_buf path = LEAKGATE_BUF_INIT;
    unsigned long long start = 0;
    int lock = -1;
    int rc = leakgate_files__mkdirs(o->store);

    if (rc == 0)
        rc = lock_store(&lock, o);
    if (rc == 0) {
        prune(o);
        rc = leakgate_files__mkdirs(o->rundir);
    }
    (void)proc_start(&start, (long)getpid());
    leakgate_buf__printf(&path, "%s/%020llu-%ld.log", o->rundir, start,
                         (long)getpid());
    o->journal =
        path.ptr ? leakgate_util__strdup(strrchr(path.ptr, '/') + 1) : NULL;
    if (rc == 0 && (path.failed || !o->journal))
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "journal");
    if (rc == 0) {
        o->fd = open(path.ptr, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
        if (o->fd < 0)
            rc = leakgate_error__set(LEAKGATE_EIO, "cannot write %s: %s",
                                     path.ptr, strerror(errno));
    }
    leakgate_files__unlock(lock);
    leakgate_buf__dispose(&path);
    return rc;
}

static int
add_output(struct leakgate_outputs *os,
           enum leakgate_outputs_kind kind,
           const char *spec,
           const char *key)
{
    struct output *o = &os->out[os->n++];
    int rc;

    o->kind = kind;
    o->fd = -1;
    o->spec = leakgate_util__strdup(spec);
    rc = o->spec ? set_store(o, key)
                 : leakgate_error__set(LEAKGATE_ENOMEM, "store");
    return rc == 0 ? open_journal(o) : rc;
}

int
leakgate_outputs__open(struct leakgate_outputs **out,
                       const char *junit,
                       const char *json,
                       const char *report_dir)
{
    struct leakgate_outputs *os;
    char *key;
    int rc = 0;

    *out = NULL;
    junit = leakgate_outputs__is_shared(junit) ? junit : NULL;
    json = leakgate_outputs__is_shared(json) ? json : NULL;
    if (!junit && !json && !report_dir)
        return 0;
    os = leakgate_util__calloc(1, sizeof *os);
    key = run_key();
    if (!os || !key) {
        leakgate_util__free(os);
        leakgate_util__free(key);
        return leakgate_error__set(LEAKGATE_ENOMEM, "outputs");
    }
    if (junit)
        rc = add_output(os, LEAKGATE_OUTPUTS_JUNIT, junit, key);
    if (rc == 0 && json)
        rc = add_output(os, LEAKGATE_OUTPUTS_JSON, json, key);
    if (rc == 0 && report_dir)
        rc = add_output(os, LEAKGATE_OUTPUTS_INDEX, report_dir, key);
    leakgate_util__free(key);
    if (rc < 0)
        leakgate_outputs__free(os);
    else
        *out = os;
    return rc;
}

void
leakgate_outputs__free(struct leakgate_outputs *os)
{
    if (!os)
        return;
    for (size_t i = 0; i < os->n; i++) {
        if (os->out[i].fd >= 0)
            close(os->out[i].fd);
        leakgate_util__free(os->out[i].spec);
        leakgate_util__free(os->out[i].store);
        leakgate_util__free(os->out[i].rundir);
        leakgate_util__free(os->out[i].journal);
    }
    leakgate_util__free(os->sent);
    leakgate_util__free(os);
}

/* ---- writing records ---------------------------------------------------- */

static int
append(struct leakgate_outputs *os, const char *line, size_t len)
{
    int rc = 0;

    for (size_t i = 0; os && i < os->n; i++) {
        const char *p = line;
        size_t left = len;

        while (os->out[i].fd >= 0 && left > 0) {
            ssize_t w = write(os->out[i].fd, p, left);

            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                rc = leakgate_error__set(LEAKGATE_EIO,
                                         "cannot write the journal in %s: %s",
                                         os->out[i].rundir, strerror(errno));
                break;
            }
            p += w;
            left -= (size_t)w;
        }
    }
    return rc;
}

void
leakgate_outputs__started(struct leakgate_outputs *os,
                          const char *suite,
                          const char *test,
                          const char *phase)
{
    const char *fields[3] = {suite, test, phase};
    char line[4096];
    size_t len = 0;

    if (!os)
        return;
    line[len++] = 'S';
    for (size_t i = 0; i < 3; i++) {
        if (len + 3 >= sizeof line)
            return; /* names this long are not journaled */
        line[len++] = '\t';
        leakgate_run__put_field_fixed(line, sizeof line, &len, fields[i]);
    }
    line[len++] = '\n';
    (void)append(os, line, len);
}

static int
append_buf(struct leakgate_outputs *os, struct leakgate_buf *b)
{
    int rc;

    leakgate_buf__puts(b, "\n");
    rc = b->failed ? leakgate_error__set(LEAKGATE_ENOMEM, "journal")
                   : append(os, b->ptr, b->len);
    leakgate_buf__dispose(b);
    return rc;
}

int
leakgate_outputs__env(struct leakgate_outputs *os, const char *json_env)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__puts(&b, "N\t");
    leakgate_run__put_field(&b, json_env);
    os->has_env = true;
    return append_buf(os, &b);
}

bool
leakgate_outputs__has_env(const struct leakgate_outputs *os)
{
    return os && os->has_env;
}

static uint64_t
fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* Whether this V record was journaled already; else remember it. */
static bool
sent_before(struct leakgate_outputs *os,
            const char *suite,
            const char *test,
            const char *json)
{
    uint64_t name =
        fnv1a(fnv1a(fnv1a(0xcbf29ce484222325ull, suite), "\t"), test);
    uint64_t text = fnv1a(0xcbf29ce484222325ull, json);
    struct sent *more;

    for (size_t i = 0; i < os->nsent; i++) {
        if (os->sent[i].name_hash != name)
            continue;
        if (os->sent[i].json_hash == text)
            return true;
        os->sent[i].json_hash = text;
        return false;
    }
    more = leakgate_util__realloc(os->sent, (os->nsent + 1) * sizeof *more);
    if (more) {
        os->sent = more;
        os->sent[os->nsent++] = (struct sent){name, text};
    }
    return false;
}

int
leakgate_outputs__window(struct leakgate_outputs *os,
                         const char *suite,
                         const char *test,
                         const char *json_test)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    if (sent_before(os, suite, test, json_test))
        return 0;

    leakgate_buf__puts(&b, "V\t");
    leakgate_run__put_field(&b, suite);
    leakgate_buf__puts(&b, "\t");
    leakgate_run__put_field(&b, test);
    leakgate_buf__puts(&b, "\t");
    leakgate_run__put_field(&b, json_test);
    return append_buf(os, &b);
}

/* ---- reading a run ------------------------------------------------------ */

struct record {
    const char *suite, *test, *json; /* into the journal's text */
};

struct journal {
    char *text;  /* owned; records point into it */
    char *name;  /* owned */
    size_t size; /* bytes of whole lines read */
    long pid;
    unsigned long long start;
    bool done;
    const char *env;
    struct record *recs;
    size_t nrecs;
    const char *open[3]; /* suite, test, phase of the last S; NULL: none */
};

struct run {
    struct journal *j;
    size_t n;
    struct leakgate_buf doc; /* the run as one leakgate-results document */
    size_t ntests;
    bool mixed_env; /* the processes' environments differ (their
                       --filter: one per ctest test) */
};

static int
keep_record(struct journal *j,
            const char *suite,
            const char *test,
            const char *json)
{
    struct record *more;

    /* The last record of a window is its verdict (a replay revised it). */
    for (size_t i = 0; i < j->nrecs; i++) {
        if (strcmp(j->recs[i].suite, suite) == 0 &&
            strcmp(j->recs[i].test, test) == 0) {
            j->recs[i].json = json;
            return 0;
        }
    }
    more = leakgate_util__realloc(j->recs, (j->nrecs + 1) * sizeof *more);
    if (!more)
        return leakgate_error__set(LEAKGATE_ENOMEM, "journal");
    j->recs = more;
    j->recs[j->nrecs++] = (struct record){suite, test, json};
    return 0;
}

/* Take one record line (split in place). */
static int
take_line(struct journal *j, char *line)
{
    char *f[4];
    size_t n = leakgate_run__split(f, 4, line);

    if (n == 2 && strcmp(f[0], "N") == 0)
        j->env = f[1];
    else if (n == 4 && strcmp(f[0], "S") == 0) {
        j->open[0] = f[1];
        j->open[1] = f[2];
        j->open[2] = f[3];
    } else if (n == 4 && strcmp(f[0], "V") == 0) {
        if (j->open[0] && strcmp(j->open[0], f[1]) == 0 &&
            strcmp(j->open[1], f[2]) == 0)
            j->open[0] = NULL; /* the running window closed */
        return keep_record(j, f[1], f[2], f[3]);
    } else if (n == 1 && strcmp(f[0], "D") == 0)
        j->done = true;
    return 0;
}

static int
read_journal(struct journal *j, const char *dir, const char *name)
{
    struct leakgate_buf path = LEAKGATE_BUF_INIT, text = LEAKGATE_BUF_INIT;
    char *line, *end;
    int rc;

    leakgate_buf__printf(&path, "%s/%s", dir, name);
    rc = path.failed
             ? leakgate_error__set(LEAKGATE_ENOMEM, "journal")
             : leakgate_files__read(&text, path.ptr, JOURNAL_MAX, "journal");
    leakgate_buf__dispose(&path);
    if (rc == LEAKGATE_ENOTFOUND) {
        leakgate_buf__dispose(&text);
        return 0; /* removed since it was listed */
    }
    j->text = leakgate_buf__take(&text);
    if (rc < 0 || !j->text)
        return rc < 0 ? rc : leakgate_error__set(LEAKGATE_ENOMEM, "journal");
    /* Only whole lines: the last one may be being written, or torn. */
    line = j->text;
    for (end = strchr(line, '\n'); rc == 0 && end; end = strchr(line, '\n')) {
        *end = '\0';
        rc = take_line(j, line);
        line = end + 1;
    }
    j->size = (size_t)(line - j->text);
    return rc;
}

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The journal names of dir, in start order. */
static int
list_journals(char ***out, size_t *n_out, const char *dir)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    size_t n = 0;
    int rc = 0;

    *out = NULL;
    *n_out = 0;
    if (!d)
        return leakgate_error__set(LEAKGATE_EIO, "%s: %s", dir,
                                   strerror(errno));
    for (struct dirent *de = readdir(d); de && rc == 0; de = readdir(d)) {
        unsigned long long start;
        long pid;
        char **more;

        if (!journal_owner(de->d_name, &start, &pid))
            continue;
        more = leakgate_util__realloc(names, (n + 1) * sizeof *names);
        if (more) {
            names = more;
            names[n] = leakgate_util__strdup(de->d_name);
        }
        if (!more || !names[n])
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "%s", dir);
        else
            n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_names);
    *out = names;
    *n_out = n;
    return rc;
}

static void
run_dispose(struct run *r)
{
    for (size_t i = 0; i < r->n; i++) {
        leakgate_util__free(r->j[i].text);
        leakgate_util__free(r->j[i].name);
        leakgate_util__free(r->j[i].recs);
    }
    leakgate_util__free(r->j);
    leakgate_buf__dispose(&r->doc);
}

static int
read_run(struct run *r, const char *dir)
{
    char **names = NULL;
    size_t n = 0;
    int rc = list_journals(&names, &n, dir);

    r->j = rc == 0 ? leakgate_util__calloc(n ? n : 1, sizeof *r->j) : NULL;
    if (rc == 0 && !r->j)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "journal");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct journal *j = &r->j[r->n++];

        (void)journal_owner(names[i], &j->start, &j->pid);
        j->name = names[i];
        names[i] = NULL;
        rc = read_journal(j, dir, j->name);
    }
    for (size_t i = 0; i < n; i++)
        leakgate_util__free(names[i]);
    leakgate_util__free(names);
    return rc;
}

/* ---- the document ------------------------------------------------------- */

static void
add_test(struct run *r, const char *json)
{
    leakgate_buf__puts(&r->doc, r->ntests++ ? ",\n" : "\n");
    leakgate_buf__puts(&r->doc, json);
}

/* The error record of the window a dead process was running. */
static void
add_killed(struct run *r, const struct journal *j)
{
    struct leakgate_verdict v;
    struct leakgate_note note;
    struct leakgate_buf why = LEAKGATE_BUF_INIT, name = LEAKGATE_BUF_INIT,
                        json = LEAKGATE_BUF_INIT;
    bool suite_phase = strcmp(j->open[2], "test") != 0;

    leakgate_buf__printf(
        &why,
        "killed: the process (pid %ld) ended while this %s ran, without "
        "leakgate seeing it end: SIGKILL (ctest's TIMEOUT, the OOM killer) "
        "or another signal it cannot catch; no verdict",
        j->pid, suite_phase ? "suite's init or cleanup" : "test");
    leakgate_buf__printf(&name, "%s/%s", j->open[0], j->open[1]);
    memset(&v, 0, sizeof v);
    v.suite = (char *)(uintptr_t)j->open[0];
    v.test = (char *)(uintptr_t)j->open[1];
    v.name = name.ptr;
    v.status = LEAKGATE_STATUS_NOT_JUDGED;
    v.not_judged_why = why.ptr;
    v.ended = why.ptr;
    v.report = (char *)(uintptr_t) "";
    note.file = (char *)(uintptr_t) "";
    note.line = 0;
    note.message = why.ptr;
    v.notes = &note;
    v.nnotes = 1;
    v.settings.total_unlimited = true;
    if (why.ptr && name.ptr)
        leakgate_report__json_test(&json, &v);
    if (!why.ptr || !name.ptr || json.failed || !json.ptr)
        r->doc.failed = true;
    else
        add_test(r, json.ptr);
    leakgate_buf__dispose(&why);
    leakgate_buf__dispose(&name);
    leakgate_buf__dispose(&json);
}

/* Every journal's records, and the windows of dead processes. */
static void
compose(struct run *r)
{
    const char *env = NULL;

    for (size_t i = 0; i < r->n; i++) {
        if (!env)
            env = r->j[i].env;
        else if (r->j[i].env && strcmp(env, r->j[i].env) != 0)
            r->mixed_env = true;
    }
    leakgate_buf__printf(&r->doc,
                         "{\"format\": \"leakgate-results\", \"version\": 1,"
                         "\n\"environment\": %s,\n\"tests\": [",
                         env ? env : "null");
    for (size_t i = 0; i < r->n; i++) {
        const struct journal *j = &r->j[i];

        for (size_t k = 0; k < j->nrecs; k++)
            add_test(r, j->recs[k].json);
        if (!j->done && j->open[0] && !alive(j->pid, j->start))
            add_killed(r, j);
    }
    leakgate_buf__puts(&r->doc, "\n]}\n");
}

static int
render(const struct output *o,
       struct leakgate_results *res,
       const char *pictures)
{
    struct leakgate_report_env env = res->env;
    char *text = NULL;
    int rc = leakgate_results__view(res);

    if (rc < 0)
        return rc;
    if (o->kind == LEAKGATE_OUTPUTS_INDEX) {
        env.report_dir = o->spec; /* links are relative to the page */
        return leakgate_gate__write_index(o->spec, res->view, res->nview, &env,
                                          pictures);
    }
    text = o->kind == LEAKGATE_OUTPUTS_JUNIT
               ? leakgate_report__junit(res->view, res->nview, &env)
               : leakgate_report__json(res->view, res->nview, &env);
    /* Atomic, not fsync'ed: every process of the run rewrites it. */
    rc = text ? leakgate_files__write(NULL, o->spec, text, strlen(text),
                                      LEAKGATE_FILES_MKDIRS |
                                          LEAKGATE_FILES_NOSYNC)
              : leakgate_error__set(LEAKGATE_ENOMEM, "%s", o->spec);
    leakgate_util__free(text);
    return rc;
}

/* rundir/merged: "NAME SIZE" of every journal the last merge read. */
static char *
stamp_path(const struct output *o)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__printf(&b, "%s/merged", o->rundir);
    return leakgate_buf__take(&b);
}

/* Whether the last merge read this process's whole journal (processes
 * that finish together wait for the lock; the first merges for all). */
static bool
merged_already(const struct output *o)
{
    struct leakgate_buf text = LEAKGATE_BUF_INIT, want = LEAKGATE_BUF_INIT;
    char *path = stamp_path(o);
    struct stat st;
    bool done = false;

    if (path && fstat(o->fd, &st) == 0 &&
        leakgate_files__read(&text, path, JOURNAL_MAX, "stamp") == 0) {
        leakgate_buf__printf(&want, "\n%s %jd\n", o->journal,
                             (intmax_t)st.st_size);
        done = want.ptr && text.ptr && strstr(text.ptr, want.ptr);
    }
    leakgate_buf__dispose(&text);
    leakgate_buf__dispose(&want);
    leakgate_util__free(path);
    return done;
}

static void
write_stamp(const struct output *o, const struct run *r)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char *path = stamp_path(o);

    leakgate_buf__puts(&b, "\n");
    for (size_t i = 0; i < r->n; i++)
        leakgate_buf__printf(&b, "%s %zu\n", r->j[i].name, r->j[i].size);
    if (path && !b.failed)
        (void)leakgate_files__write(NULL, path, b.ptr, b.len,
                                    LEAKGATE_FILES_NOSYNC);
    leakgate_buf__dispose(&b);
    leakgate_util__free(path);
}

static int
merge_one(const struct output *o, const char *pictures)
{
    struct run r;
    struct leakgate_results *res = NULL;
    int lock = -1;
    int rc = lock_store(&lock, o);

    memset(&r, 0, sizeof r);
    if (rc == 0 && merged_already(o)) {
        leakgate_files__unlock(lock);
        return 0;
    }
    if (rc == 0)
        rc = read_run(&r, o->rundir);
    if (rc == 0) {
        compose(&r);
        if (r.doc.failed)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "merging %s", o->spec);
    }
    if (rc == 0)
        rc = leakgate_results_new(&res);
    if (rc == 0)
        rc = leakgate_results__load_text(res, r.doc.ptr, r.doc.len, o->rundir);
    /* Processes with different filters make a whole run, not a
     * filtered one (leakgate report and --update-thresholds read it). */
    if (rc == 0 && r.mixed_env) {
        res->env.filter = NULL;
        res->filtered = false;
    }
    if (rc == 0)
        rc = render(o, res, pictures);
    if (rc == 0)
        write_stamp(o, &r);
    leakgate_files__unlock(lock);
    leakgate_results_free(res);
    run_dispose(&r);
    return rc;
}

int
leakgate_outputs__merge(struct leakgate_outputs *os, const char *pictures)
{
    int rc = append(os, "D\n", 2), first = rc;

    for (size_t i = 0; os && i < os->n; i++) {
        rc = merge_one(&os->out[i], pictures);
        if (first == 0)
            first = rc;
    }
    return first;
}
