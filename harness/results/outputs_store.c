/* SPDX-License-Identifier: MIT */
/*
 * outputs_store: the stores of the shared outputs (see outputs.h) --
 * ".NAME.leakgate/" beside FILE, "DIR/.leakgate/", their run directories
 * and the run's journal in them, and the lines appended to it (one
 * writev(2) each).  Every directory is opened with
 * O_NOFOLLOW and must belong to this user (files_safe.c); stale runs are
 * emptied through the store's descriptor, only of leakgate's own files,
 * so a planted link or another user's directory is never followed or
 * emptied.  Each store is changed under its flock.
 */
#include "outputs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "results.h"
#include "util.h"

/* ---- processes ---------------------------------------------------------- */

/* What /proc/PID/stat says of a process. */
struct proc {
    unsigned long long start; /* clock ticks after boot */
    long ppid;
    char comm[32]; /* its name, at most 15 bytes */
};

/* 0, or -1 when the process is gone or a zombie (killed, not yet
 * reaped). */
static int
proc_stat(struct proc *out, long pid)
{
    char path[64], text[1024], state = 'Z';
    const char *open_paren, *p;
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
    open_paren = strchr(text, '(');
    p = strrchr(text, ')');
    if (!open_paren || !p || p < open_paren ||
        sscanf(p + 1,
               " %c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u "
               "%*u %*d %*d %*d %*d %*d %*d %llu",
               &state, &out->ppid, &out->start) != 3)
        return -1;
    snprintf(out->comm, sizeof out->comm, "%.*s", (int)(p - open_paren - 1),
             open_paren + 1);
    return state == 'Z' || state == 'X' ? -1 : 0;
}

int
leakgate_outputs__proc_start(unsigned long long *out, long pid)
{
    struct proc pr;
    int rc = proc_stat(&pr, pid);

    *out = rc == 0 ? pr.start : 0;
    return rc;
}

bool
leakgate_outputs__alive(long pid, unsigned long long start)
{
    unsigned long long now;

    return leakgate_outputs__proc_start(&now, pid) == 0 && now == start;
}

/* The process that started the run: the nearest ctest among this
 * process's ancestors (a test command may go through a wrapper: `cmake
 * -E env`, a shell, valgrind), else the parent. */
static void
starter(long *pid_out, unsigned long long *start_out)
{
    struct proc pr;
    long pid = (long)getppid();

    *pid_out = pid;
    *start_out =
        leakgate_outputs__proc_start(start_out, pid) == 0 ? *start_out : 0;
    for (int depth = 0; depth < 16 && pid > 1; depth++) {
        if (proc_stat(&pr, pid) < 0)
            return;
        if (strcmp(pr.comm, "ctest") == 0) {
            *pid_out = pid;
            *start_out = pr.start;
            return;
        }
        pid = pr.ppid;
    }
}

char *
leakgate_outputs__run_key(void)
{
    const char *id = getenv(LEAKGATE_OUTPUTS_RUN_ID_ENV);
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    unsigned long long start = 0;
    long pid = 0;
    char *safe;

    if (id && *id) {
        safe = leakgate_util__sanitize_name(id);
        if (safe)
            leakgate_buf__printf(&b, "run-id-%s", safe);
        leakgate_util__free(safe);
        return leakgate_buf__take(&b);
    }
    starter(&pid, &start);
    leakgate_buf__printf(&b, "run-p%ld-%llu", pid, start);
    return leakgate_buf__take(&b);
}

bool
leakgate_outputs__key_owner(const char *key,
                            size_t key_len,
                            unsigned long long *start,
                            long *pid)
{
    char text[LEAKGATE_OUTPUTS_KEY_MAX], tail[2] = "";

    if (key_len < 22 || key_len >= sizeof text || key[20] != '-')
        return false;
    memcpy(text, key, key_len);
    text[key_len] = '\0';
    return sscanf(text, "%20llu-%9ld%1s", start, pid, tail) == 2 &&
           strspn(text, "0123456789") == 20 &&
           strspn(text + 21, "0123456789") == key_len - 21;
}

/* ---- stores ------------------------------------------------------------- */

int
leakgate_outputs__set_store(struct leakgate_outputs_file *o, const char *key)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT, r = LEAKGATE_BUF_INIT;
    const char *slash = strrchr(o->spec, '/');

    if (o->kind == LEAKGATE_OUTPUTS_INDEX) {
        leakgate_buf__printf(&b, "%s/.leakgate", o->spec);
        o->parent = leakgate_util__strdup(o->spec);
    } else if (slash) {
        leakgate_buf__printf(&b, "%.*s/.%s.leakgate",
                             (int)(slash == o->spec ? 0 : slash - o->spec),
                             o->spec, slash + 1);
        o->parent = leakgate_util__strndup(
            o->spec, slash == o->spec ? 1 : (size_t)(slash - o->spec));
    } else {
        leakgate_buf__printf(&b, ".%s.leakgate", o->spec);
        o->parent = leakgate_util__strdup(".");
    }
    o->store = leakgate_buf__take(&b);
    if (o->store)
        leakgate_buf__printf(&r, "%s/%s", o->store, key);
    o->rundir = leakgate_buf__take(&r);
    return o->rundir && o->parent
               ? 0
               : leakgate_error__set(LEAKGATE_ENOMEM, "store");
}

/* The files leakgate keeps in a run directory: the journal, the merge's
 * stamp and its temporary files. */
static bool
run_file(const char *name)
{
    return strcmp(name, LEAKGATE_OUTPUTS_JOURNAL) == 0 ||
           strcmp(name, "merged") == 0 || strncmp(name, "merged.tmp.", 11) == 0;
}

/* Whether a writer of the journal text (whole lines) still runs. */
static bool
writer_alive(const char *text, size_t len)
{
    const char *end = text + len, *last = NULL;
    size_t last_len = 0;

    for (const char *p = text; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *tab = memchr(p, '\t', (size_t)((nl ? nl : end) - p));
        unsigned long long start;
        long pid;

        /* Consecutive lines are mostly one writer's: checked once. */
        if (tab && !(last && last_len == (size_t)(tab - p) &&
                     memcmp(last, p, last_len) == 0)) {
            last = p;
            last_len = (size_t)(tab - p);
            if (leakgate_outputs__key_owner(p, last_len, &start, &pid) &&
                leakgate_outputs__alive(pid, start))
                return true;
        }
        p = nl ? nl + 1 : end;
    }
    return false;
}

/* Whether some process that wrote into run directory name (of the store
 * store_fd) still runs. */
static bool
any_writer_alive(int store_fd, const char *name)
{
    struct leakgate_buf text = LEAKGATE_BUF_INIT;
    bool live = false;
    int fd, rc;

    if (leakgate_files__open_own_dir(&fd, store_fd, name, name) < 0)
        return true; /* not ours to judge, nor to remove */
    rc = leakgate_files__read_at(&text, fd, LEAKGATE_OUTPUTS_JOURNAL, name,
                                 LEAKGATE_OUTPUTS_JOURNAL_MAX, "journal");
    if (rc == 0)
        live = writer_alive(text.ptr, text.len);
    else if (rc != LEAKGATE_ENOTFOUND)
        live = true; /* unreadable: not judged stale */
    leakgate_buf__dispose(&text);
    close(fd);
    return live;
}

/* A run directory is stale when its starter has ended (run-p...), or, for
 * a named run, when none of its writers runs any more. */
static bool
stale(const char *name, int store_fd)
{
    unsigned long long start;
    long pid;

    if (sscanf(name, "run-p%9ld-%20llu", &pid, &start) == 2)
        return !leakgate_outputs__alive(pid, start);
    return strncmp(name, "run-id-", 7) == 0 &&
           !any_writer_alive(store_fd, name);
}

/* Remove the store's stale runs other than ours (under its lock): only
 * directories of this user, and in them only leakgate's files, unlinked
 * through the store's descriptor (a planted link is never followed). */
static void
prune(const struct leakgate_outputs_file *o, int store_fd)
{
    const char *mine = strrchr(o->rundir, '/') + 1;
    int fd = dup(store_fd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

    if (!d && fd >= 0)
        close(fd);
    if (d)
        rewinddir(d);
    for (struct dirent *de = d ? readdir(d) : NULL; de; de = readdir(d)) {
        struct stat st;

        if (strncmp(de->d_name, "run-", 4) != 0 ||
            strcmp(de->d_name, mine) == 0 ||
            fstatat(store_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            /* Planted: leakgate makes directories.  The link goes. */
            (void)unlinkat(store_fd, de->d_name, 0);
            continue;
        }
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
            continue;
        if (stale(de->d_name, store_fd))
            leakgate_files__empty_own_dir(store_fd, de->d_name, run_file);
    }
    if (d)
        closedir(d);
}

/* The store of o cannot be created: say so in the words of a write of
 * the output itself, with the errno of the step that failed. */
static int
store_failed(const struct leakgate_outputs_file *o, int rc, int err)
{
    if (rc != LEAKGATE_EIO)
        return rc;
    if (o->kind == LEAKGATE_OUTPUTS_INDEX)
        return leakgate_error__set(LEAKGATE_EIO,
                                   "cannot create report directory %s: %s",
                                   o->spec, strerror(err));
    return leakgate_error__set(LEAKGATE_EIO, "cannot write %s: %s", o->spec,
                               strerror(err));
}

int
leakgate_outputs__lock(int *store_fd, const struct leakgate_outputs_file *o)
{
    const char *slash = strrchr(o->store, '/');
    int parent = -1, err = 0;
    int rc = leakgate_files__mkdirs(o->parent, "directory");

    *store_fd = -1;
    err = errno;
    if (rc == 0) {
        parent = open(o->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        err = errno;
        if (parent < 0)
            rc = LEAKGATE_EIO;
    }
    if (rc == 0) {
        rc = leakgate_files__make_own_dir(
            store_fd, parent, slash ? slash + 1 : o->store, o->store);
        err = errno;
    }
    while (rc == 0 && flock(*store_fd, LOCK_EX) != 0) {
        if (errno != EINTR)
            rc = leakgate_error__set(LEAKGATE_EIO, "cannot lock %s: %s",
                                     o->store, strerror(errno));
    }
    if (parent >= 0)
        close(parent);
    if (rc < 0 && *store_fd >= 0) {
        close(*store_fd);
        *store_fd = -1;
    }
    return rc < 0 ? store_failed(o, rc, err) : 0;
}

int
leakgate_outputs__run_dir(int *run_fd,
                          int store_fd,
                          const struct leakgate_outputs_file *o)
{
    return leakgate_files__make_own_dir(run_fd, store_fd,
                                        strrchr(o->rundir, '/') + 1, o->rundir);
}

/* Open (or reopen) the run's journal in the run directory. */
static int
journal_at(struct leakgate_outputs_file *o, int run_fd)
{
    struct stat st;

    if (leakgate_files__open_at(&o->fd, run_fd, LEAKGATE_OUTPUTS_JOURNAL,
                                O_WRONLY | O_CREAT | O_APPEND) != 0 ||
        fstat(o->fd, &st) != 0)
        return leakgate_error__set(LEAKGATE_EIO, "cannot write %s/%s: %s",
                                   o->rundir, LEAKGATE_OUTPUTS_JOURNAL,
                                   strerror(errno));
    o->dev = st.st_dev;
    o->ino = st.st_ino;
    o->opened = true;
    return 0;
}

int
leakgate_outputs__open_journal(struct leakgate_outputs_file *o,
                               const char *key,
                               bool fresh)
{
    int store = -1, run = -1;
    int rc = leakgate_outputs__lock(&store, o);

    /* The run's first process (it makes the run directory) removes the
     * store's stale runs: once per run, not once per process. */
    if (rc == 0)
        rc = leakgate_files__open_own_dir(
            &run, store, strrchr(o->rundir, '/') + 1, o->rundir);
    if (rc == LEAKGATE_ENOTFOUND) {
        if (fresh)
            prune(o, store);
        rc = leakgate_outputs__run_dir(&run, store, o);
    }
    if (rc == 0)
        rc = journal_at(o, run);
    /* Its first line, under the lock: from now on the run has a live
     * writer, and no other run removes it as stale. */
    if (rc == 0)
        rc = leakgate_outputs__append_to(o, key, "H\n", 2);
    if (run >= 0)
        close(run);
    leakgate_files__unlock(store);
    return rc;
}

/* ---- appending ---------------------------------------------------------- */

/* Whether o's descriptor is still its journal: a test may have closed
 * it, and another file may have its number now.  Never allocates. */
bool
leakgate_outputs__journal_ok(const struct leakgate_outputs_file *o)
{
    struct stat st;

    return o->fd >= 0 && fstat(o->fd, &st) == 0 && st.st_dev == o->dev &&
           st.st_ino == o->ino;
}

/* "\nKEY\tLEN\t" of a record of len bytes (its newline last) into
 * head; its length.  Never allocates. */
static size_t
line_head(char *head, size_t cap, const char *key, size_t len)
{
    char digits[24];
    size_t n = 0, k = 0, body = len > 0 ? len - 1 : 0;

    do {
        digits[k++] = (char)('0' + body % 10);
        body /= 10;
    } while (body > 0);
    head[n++] = '\n';
    for (const char *p = key; *p && n + k + 2 < cap; p++)
        head[n++] = *p;
    head[n++] = '\t';
    while (k > 0)
        head[n++] = digits[--k];
    head[n++] = '\t';
    return n;
}

/* Why a write stopped short (it sets no errno): the file size limit
 * reached, or a full file system; "" when neither shows. */
static const char *
short_write_cause(int fd)
{
    struct rlimit lim;
    struct statvfs fs;
    struct stat st;

    if (fstat(fd, &st) == 0 && getrlimit(RLIMIT_FSIZE, &lim) == 0 &&
        lim.rlim_cur != RLIM_INFINITY &&
        (rlim_t)st.st_size >= lim.rlim_cur - (lim.rlim_cur > 0))
        return " (File too large: the file size limit, ulimit -f)";
    if (fstatvfs(fd, &fs) == 0 && fs.f_bavail == 0)
        return " (No space left on device)";
    return "";
}

/* One line into o's journal with a single writev(2): O_APPEND puts it
 * whole after every other process's, never between their bytes.  A
 * short write is not completed (the rest would land after another
 * process's line): the fragment is ignored when read. */
static int
append_one(struct leakgate_outputs_file *o,
           const char *head,
           size_t head_len,
           const char *line,
           size_t len)
{
    struct iovec iov[2] = {{(void *)(uintptr_t)head, head_len},
                           {(void *)(uintptr_t)line, len}};
    ssize_t w;

    do
        w = writev(o->fd, iov, 2);
    while (w < 0 && errno == EINTR);
    if (w == (ssize_t)(head_len + len))
        return 0;
    if (w >= 0)
        return leakgate_error__set(LEAKGATE_EIO,
                                   "cannot write the journal in %s: %zd of "
                                   "%zu bytes written%s",
                                   o->rundir, w, head_len + len,
                                   short_write_cause(o->fd));
    return leakgate_error__set(LEAKGATE_EIO,
                               "cannot write the journal in %s: %s", o->rundir,
                               strerror(errno));
}

int
leakgate_outputs__append_to(struct leakgate_outputs_file *o,
                            const char *key,
                            const char *line,
                            size_t len)
{
    char head[LEAKGATE_OUTPUTS_KEY_MAX + 32];
    size_t head_len = line_head(head, sizeof head, key, len);
    struct stat st;

    if (o->fd >= 0 &&
        (fstat(o->fd, &st) != 0 || st.st_dev != o->dev || st.st_ino != o->ino))
        o->fd = -1; /* not ours any more: never closed */
    if (o->fd < 0 || len == 0)
        return 0;
    if ((size_t)st.st_size + head_len + len > LEAKGATE_OUTPUTS_JOURNAL_MAX)
        return leakgate_error__set(LEAKGATE_EIO,
                                   "cannot write the journal in %s: it "
                                   "would pass its bound of %zu MiB",
                                   o->rundir,
                                   LEAKGATE_OUTPUTS_JOURNAL_MAX >> 20);
    return append_one(o, head, head_len, line, len);
}

void
leakgate_outputs__hold(struct leakgate_outputs_file *o,
                       const char *key,
                       const char *line,
                       size_t len)
{
    char head[LEAKGATE_OUTPUTS_KEY_MAX + 32];
    size_t head_len = line_head(head, sizeof head, key, len);

    if (o->held_lost || len == 0)
        return;
    if (o->held.len + head_len + len > LEAKGATE_OUTPUTS_HELD_MAX ||
        !leakgate_buf__reserve(&o->held, head_len + len + 1)) {
        o->held_lost = true;
        leakgate_buf__dispose(&o->held);
        return;
    }
    leakgate_buf__put(&o->held, head, head_len);
    leakgate_buf__put(&o->held, line, len);
}

/* The store beside (or in) an existing directory must be a directory
 * of this user when it exists. */
static int
check_store(const char *parent, const char *store)
{
    const char *slash = strrchr(store, '/');
    int dirfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1;
    int rc;

    if (dirfd < 0)
        return 0; /* created, or its failure said, when written */
    rc = leakgate_files__open_own_dir(&fd, dirfd, slash ? slash + 1 : store,
                                      store);
    if (fd >= 0)
        close(fd);
    close(dirfd);
    return rc == LEAKGATE_EUSAGE ? rc : 0;
}

int
leakgate_outputs__check(const char *spec, enum leakgate_outputs_kind kind)
{
    struct leakgate_outputs_file o;
    struct leakgate_buf index = LEAKGATE_BUF_INIT;
    int rc = 0;

    if (!spec || !*spec)
        return 0;
    if (kind != LEAKGATE_OUTPUTS_INDEX) {
        if (leakgate_results__per_process(spec))
            return 0;
        rc = leakgate_files__target(spec);
        if (rc == LEAKGATE_EUSAGE)
            return rc;
        if (rc == LEAKGATE_FILES_DISCARD || rc == LEAKGATE_FILES_STREAM)
            return 0;
        rc = 0;
    }
    memset(&o, 0, sizeof o);
    o.kind = kind;
    o.spec = (char *)(uintptr_t)spec;
    if (kind == LEAKGATE_OUTPUTS_INDEX) {
        leakgate_buf__printf(&index, "%s/index.html", spec);
        rc = index.failed ? leakgate_error__set(LEAKGATE_ENOMEM, "path")
                          : leakgate_files__target(index.ptr);
        rc = rc == LEAKGATE_EUSAGE ? rc : 0;
    }
    if (rc == 0)
        rc = leakgate_outputs__set_store(&o, "run");
    if (rc == 0)
        rc = check_store(o.parent, o.store);
    leakgate_buf__dispose(&index);
    leakgate_util__free(o.parent);
    leakgate_util__free(o.store);
    leakgate_util__free(o.rundir);
    return rc;
}
