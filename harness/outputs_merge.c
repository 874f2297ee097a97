/* SPDX-License-Identifier: MIT */
/*
 * outputs_merge: a run's journals read back and merged into the shared
 * outputs (see outputs.h).  Each journal is read up to its last newline;
 * its last record of each window is kept; an unfinished journal of a
 * process that is gone adds its running window as an error; the run is
 * loaded as one leakgate-results document (results.c), one record per
 * window chosen (leakgate_results__view), and rendered by report.c or,
 * for index.html, by gate_results.c.
 */
#include "outputs.h"

#include <dirent.h>
#include <errno.h>
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

/* ---- reading a run ------------------------------------------------------ */

struct record {
    const char *suite, *test; /* into the journal's text */
    const char *json;         /* report.c's JSON test object */
    const char *junit;        /* report.c's JUnit testcase */
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
    struct record *tests; /* the document's tests, in order */
    size_t ntests_cap;
    char **owned; /* the killed windows' rendered pieces */
    size_t nowned;
    struct leakgate_buf doc; /* the run as one leakgate-results document */
    size_t ntests;
    bool mixed_env; /* the processes' environments differ (their
                       --filter: one per ctest test) */
};

static int
keep_record(struct journal *j, const struct record *rec)
{
    struct record *more;

    /* The last record of a window is its verdict (a replay revised it). */
    for (size_t i = 0; i < j->nrecs; i++) {
        if (strcmp(j->recs[i].suite, rec->suite) == 0 &&
            strcmp(j->recs[i].test, rec->test) == 0) {
            j->recs[i] = *rec;
            return 0;
        }
    }
    more = leakgate_util__realloc(j->recs, (j->nrecs + 1) * sizeof *more);
    if (!more)
        return leakgate_error__set(LEAKGATE_ENOMEM, "journal");
    j->recs = more;
    j->recs[j->nrecs++] = *rec;
    return 0;
}

/* Take one record line (split in place). */
static int
take_line(struct journal *j, char *line)
{
    char *f[5];
    size_t n = leakgate_run__split(f, 5, line);

    if (n == 2 && strcmp(f[0], "N") == 0)
        j->env = f[1];
    else if (n == 4 && strcmp(f[0], "S") == 0) {
        j->open[0] = f[1];
        j->open[1] = f[2];
        j->open[2] = f[3];
    } else if (n == 5 && strcmp(f[0], "V") == 0) {
        struct record rec = {f[1], f[2], f[3], f[4]};

        if (j->open[0] && strcmp(j->open[0], f[1]) == 0 &&
            strcmp(j->open[1], f[2]) == 0)
            j->open[0] = NULL; /* the running window closed */
        return keep_record(j, &rec);
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
             : leakgate_files__read(&text, path.ptr,
                                    LEAKGATE_OUTPUTS_JOURNAL_MAX, "journal");
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

        if (!leakgate_outputs__journal_owner(de->d_name, &start, &pid))
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
    leakgate_util__free(r->tests);
    for (size_t i = 0; i < r->nowned; i++)
        leakgate_util__free(r->owned[i]);
    leakgate_util__free(r->owned);
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

        (void)leakgate_outputs__journal_owner(names[i], &j->start, &j->pid);
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
add_test(struct run *r, const struct record *rec)
{
    if (r->ntests == r->ntests_cap) {
        size_t cap = r->ntests_cap ? 2 * r->ntests_cap : 64;
        struct record *more =
            leakgate_util__realloc(r->tests, cap * sizeof *more);

        if (!more) {
            r->doc.failed = true;
            return;
        }
        r->tests = more;
        r->ntests_cap = cap;
    }
    leakgate_buf__puts(&r->doc, r->ntests ? ",\n" : "\n");
    leakgate_buf__puts(&r->doc, rec->json);
    r->tests[r->ntests++] = *rec;
}

/* Keep a rendered piece for the run's lifetime (NULL: no memory). */
static const char *
own(struct run *r, struct leakgate_buf *b)
{
    char **more;
    char *text = b->failed ? NULL : leakgate_buf__take(b);

    leakgate_buf__dispose(b);
    more =
        text ? leakgate_util__realloc(r->owned, (r->nowned + 1) * sizeof *more)
             : NULL;
    if (!more) {
        leakgate_util__free(text);
        r->doc.failed = true;
        return NULL;
    }
    r->owned = more;
    r->owned[r->nowned++] = text;
    return text;
}

/* The error record of the window a dead process was running. */
static void
add_killed(struct run *r, const struct journal *j)
{
    struct leakgate_verdict v;
    struct leakgate_note note;
    struct leakgate_buf why = LEAKGATE_BUF_INIT, name = LEAKGATE_BUF_INIT,
                        json = LEAKGATE_BUF_INIT, junit = LEAKGATE_BUF_INIT;
    struct leakgate_report_env no_env;
    struct record rec = {j->open[0], j->open[1], NULL, NULL};
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
    memset(&no_env, 0, sizeof no_env);
    if (why.ptr && name.ptr) {
        leakgate_report__json_test(&json, &v);
        leakgate_report__junit_case(&junit, &v, &no_env);
        rec.json = own(r, &json);
        rec.junit = own(r, &junit);
    }
    if (!why.ptr || !name.ptr || !rec.json || !rec.junit)
        r->doc.failed = true;
    else
        add_test(r, &rec);
    leakgate_buf__dispose(&why);
    leakgate_buf__dispose(&name);
    leakgate_buf__dispose(&json);
    leakgate_buf__dispose(&junit);
}

/* Every journal's records, and the windows of dead processes. */
static void
compose(struct run *r)
{
    const char *env = NULL;

    /* The environment of a process that ended normally (a killed one
     * may not have named its binary yet). */
    for (size_t i = 0; i < r->n && !env; i++)
        env = r->j[i].done ? r->j[i].env : NULL;
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
            add_test(r, &j->recs[k]);
        if (!j->done && j->open[0] &&
            !leakgate_outputs__alive(j->pid, j->start))
            add_killed(r, j);
    }
    leakgate_buf__puts(&r->doc, "\n]}\n");
}

struct slot {
    const struct leakgate_verdict *v;
    size_t index; /* in load order: the document's tests */
};

static int
cmp_slot(const void *a, const void *b)
{
    const struct slot *x = a, *y = b;
    uintptr_t p = (uintptr_t)x->v, q = (uintptr_t)y->v;

    return (p > q) - (p < q);
}

/* The pieces of the windows of the view: the records the processes
 * journaled (report.c's per-window writers), not rendered again. */
static struct leakgate_report_piece *
view_pieces(const struct run *r, const struct leakgate_results *res)
{
    struct leakgate_report_piece *p =
        leakgate_util__calloc(res->nview ? res->nview : 1, sizeof *p);
    struct slot *slots =
        leakgate_util__calloc(res->n ? res->n : 1, sizeof *slots);

    for (size_t i = 0; p && slots && i < res->n; i++)
        slots[i] = (struct slot){res->v[i], i};
    if (p && slots)
        qsort(slots, res->n, sizeof *slots, cmp_slot);
    for (size_t k = 0; p && slots && k < res->nview; k++) {
        struct slot key = {res->view[k], 0};
        const struct slot *at =
            bsearch(&key, slots, res->n, sizeof *slots, cmp_slot);

        leakgate_report__piece_of(&p[k], res->view[k]);
        if (at && at->index < r->ntests) {
            p[k].json_test = r->tests[at->index].json;
            p[k].junit_case = r->tests[at->index].junit;
        }
    }
    if (!slots) {
        leakgate_util__free(p);
        p = NULL;
    }
    leakgate_util__free(slots);
    return p;
}

static char *
document(const struct leakgate_outputs_file *o,
         const struct run *r,
         const struct leakgate_results *res,
         const struct leakgate_report_env *env)
{
    struct leakgate_report_piece *p = view_pieces(r, res);
    struct leakgate_buf e = LEAKGATE_BUF_INIT;
    bool junit = o->kind == LEAKGATE_OUTPUTS_JUNIT;
    char *text = NULL;
    bool whole = p != NULL;

    for (size_t k = 0; whole && k < res->nview; k++)
        whole = p[k].json_test && p[k].junit_case;
    if (junit)
        leakgate_report__junit_env(&e, env);
    else
        leakgate_report__json_env(&e, env);
    if (whole && !e.failed && e.ptr)
        text = junit ? leakgate_report__junit_doc(p, res->nview, e.ptr)
                     : leakgate_report__json_doc(p, res->nview, e.ptr);
    leakgate_buf__dispose(&e);
    leakgate_util__free(p);
    return text;
}

static int
render(const struct leakgate_outputs_file *o,
       const struct run *r,
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
    text = document(o, r, res, &env);
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
stamp_path(const struct leakgate_outputs_file *o)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__printf(&b, "%s/merged", o->rundir);
    return leakgate_buf__take(&b);
}

/* Whether the last merge read this process's whole journal (processes
 * that finish together wait for the lock; the first merges for all). */
static bool
merged_already(const struct leakgate_outputs_file *o)
{
    struct leakgate_buf text = LEAKGATE_BUF_INIT, want = LEAKGATE_BUF_INIT;
    char *path = stamp_path(o);
    struct stat st;
    bool done = false;

    if (path && fstat(o->fd, &st) == 0 &&
        leakgate_files__read(&text, path, LEAKGATE_OUTPUTS_JOURNAL_MAX,
                             "stamp") == 0) {
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
write_stamp(const struct leakgate_outputs_file *o, const struct run *r)
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
merge_one(const struct leakgate_outputs_file *o, const char *pictures)
{
    struct run r;
    struct leakgate_results *res = NULL;
    int lock = -1;
    int rc = leakgate_outputs__lock(&lock, o);

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
    if (rc == 0)
        res->later_wins = true;
    if (rc == 0 && r.mixed_env) {
        res->env.filter = NULL;
        res->filtered = false;
    }
    if (rc == 0)
        rc = render(o, &r, res, pictures);
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
    int rc = leakgate_outputs__append(os, "D\n", 2), first = rc;

    for (size_t i = 0; os && i < os->n; i++) {
        rc = merge_one(&os->out[i], pictures);
        if (first == 0)
            first = rc;
    }
    return first;
}
