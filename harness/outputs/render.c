/* SPDX-License-Identifier: MIT */
/*
 * render: run Graphviz's `dot` on DOT text (see render.h).  The child gets
 * /dev/null for stdin and stdout, a pipe for stderr (its first KiB is kept
 * for the error message), default SIGPIPE and an empty signal mask.  The
 * parent reads the pipe until EOF, then polls for the exit, both bounded
 * by one deadline; past it the child is killed with SIGKILL and reaped.
 */
#include "render.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "util.h"

/* Bytes of dot's stderr kept for the error message. */
#define STDERR_KEPT 1024

struct child {
    pid_t pid;
    int err_fd;            /* read end of the child's stderr */
    char err[STDERR_KEPT]; /* its first bytes, NUL-terminated */
    size_t nerr;           /* bytes in err */
};

static long long
now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void
spawn_setup(posix_spawn_file_actions_t *fa,
            posix_spawnattr_t *attr,
            int err_write_fd)
{
    sigset_t none, dfl;

    posix_spawn_file_actions_init(fa);
    posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(fa, err_write_fd, 2);
    posix_spawnattr_init(attr);
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    posix_spawnattr_setsigmask(attr, &none);
    posix_spawnattr_setsigdefault(attr, &dfl);
    posix_spawnattr_setflags(attr,
                             POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

/* Start dot with argv.  Returns 0, LEAKGATE_ENOTFOUND or LEAKGATE_EIO. */
static int
spawn_dot(struct child *c, char *const argv[])
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int fds[2];
    int rc;

    if (pipe2(fds, O_CLOEXEC) != 0)
        return leakgate_error__set(LEAKGATE_EIO, "cannot run dot: pipe: %s",
                                   strerror(errno));
    spawn_setup(&fa, &attr, fds[1]);
    rc = posix_spawnp(&c->pid, "dot", &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        if (rc == ENOENT)
            return leakgate_error__set(LEAKGATE_ENOTFOUND,
                                       "graphviz `dot` not found on PATH");
        return leakgate_error__set(LEAKGATE_EIO, "cannot run dot: %s",
                                   strerror(rc));
    }
    c->err_fd = fds[0];
    return 0;
}

/* Read the child's stderr until EOF or the deadline. */
static void
drain_stderr(struct child *c, long long deadline)
{
    char buf[4096];

    for (;;) {
        long long left = deadline - now_ms();
        struct pollfd p = {c->err_fd, POLLIN, 0};
        ssize_t got;
        int n;

        if (left <= 0)
            return;
        n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (n < 0 && errno != EINTR)
            return;
        if (n <= 0)
            continue;
        got = read(c->err_fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return;
        if (c->nerr + 1 < sizeof c->err) {
            size_t room = sizeof c->err - 1 - c->nerr;
            size_t take = (size_t)got < room ? (size_t)got : room;

            memcpy(c->err + c->nerr, buf, take);
            c->nerr += take;
            c->err[c->nerr] = '\0';
        }
    }
}

/* Wait for the exit until the deadline, then kill.  Returns 0 with
 * *status, or LEAKGATE_ERROR (timed out, detail set). */
static int
reap(struct child *c, long long deadline, int *status)
{
    const struct timespec pause = {0, 2000000L};

    for (;;) {
        pid_t w = waitpid(c->pid, status, WNOHANG);

        if (w == c->pid)
            return 0;
        if (w < 0 && errno != EINTR)
            return leakgate_error__set(LEAKGATE_ERROR, "dot: waitpid: %s",
                                       strerror(errno));
        if (now_ms() >= deadline)
            break;
        nanosleep(&pause, NULL);
    }
    kill(c->pid, SIGKILL);
    while (waitpid(c->pid, status, 0) < 0 && errno == EINTR)
        continue;
    return leakgate_error__set(LEAKGATE_ERROR,
                               "dot did not finish in time and was killed");
}

/* The verdict on dot's exit status.  Returns 0 or LEAKGATE_ERROR. */
static int
judge_exit(const struct child *c, int status)
{
    size_t first_line = strcspn(c->err, "\n");

    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFSIGNALED(status))
        return leakgate_error__set(LEAKGATE_ERROR,
                                   "dot was killed by signal %d: %.*s",
                                   WTERMSIG(status), (int)first_line, c->err);
    return leakgate_error__set(LEAKGATE_ERROR, "dot failed (exit %d): %.*s",
                               WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                               (int)first_line, c->err);
}

/* Start `dot -T<format> -o out_path in_path` as c. */
static int
start_file(struct child *c,
           const char *in_path,
           const char *out_path,
           const char *format)
{
    struct leakgate_buf flag = LEAKGATE_BUF_INIT;
    char *argv[6] = {NULL};
    int rc;

    leakgate_buf__printf(&flag, "-T%s", format);
    argv[0] = leakgate_util__strdup("dot");
    argv[1] = leakgate_buf__take(&flag);
    argv[2] = leakgate_util__strdup("-o");
    argv[3] = leakgate_util__strdup(out_path);
    argv[4] = leakgate_util__strdup(in_path);
    rc = argv[0] && argv[1] && argv[2] && argv[3] && argv[4]
             ? spawn_dot(c, argv)
             : leakgate_error__set(LEAKGATE_ENOMEM, "dot arguments");
    for (size_t i = 0; i < 5; i++)
        leakgate_util__free(argv[i]);
    return rc;
}

/* Wait for c (started) until the deadline; its verdict. */
static int
finish(struct child *c, long long deadline)
{
    int status = 0;
    int rc;

    drain_stderr(c, deadline);
    close(c->err_fd);
    c->err_fd = -1;
    rc = reap(c, deadline, &status);
    return rc == 0 ? judge_exit(c, status) : rc;
}

int
leakgate_render__file(const char *in_path,
                      const char *out_path,
                      const char *format,
                      unsigned int timeout_ms)
{
    struct child c = {.pid = -1, .err_fd = -1};
    long long deadline = now_ms() + (long long)timeout_ms;
    int rc = start_file(&c, in_path, out_path, format);

    return rc == 0 ? finish(&c, deadline) : rc;
}

/* Append what is left of fd to b (at most max_bytes in all). */
static int
read_rest(struct leakgate_buf *b, int fd, const char *path, size_t max_bytes)
{
    char chunk[65536];

    for (;;) {
        ssize_t got = read(fd, chunk, sizeof chunk);

        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return leakgate_error__set(LEAKGATE_EIO, "cannot read %s: %s", path,
                                       strerror(errno));
        if (got == 0)
            return 0;
        if ((size_t)got > max_bytes - b->len)
            return leakgate_error__set(
                LEAKGATE_ETOOBIG, "%s: more than %zu bytes", path, max_bytes);
        leakgate_buf__put(b, chunk, (size_t)got);
        if (b->failed)
            return leakgate_error__set(LEAKGATE_ENOMEM, "reading %s", path);
    }
}

int
leakgate_render__read_file(char **out,
                           size_t *len_out,
                           const char *path,
                           size_t max_bytes)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc;

    *out = NULL;
    *len_out = 0;
    if (fd < 0)
        return leakgate_error__set(LEAKGATE_EIO, "cannot read %s: %s", path,
                                   strerror(errno));
    rc = read_rest(&b, fd, path, max_bytes);
    close(fd);
    if (rc == 0) {
        *len_out = b.len;
        *out = leakgate_buf__take(&b);
        if (!*out)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "reading %s", path);
    }
    leakgate_buf__dispose(&b);
    return rc;
}

/* A new empty temporary file "leakgate-XXXXXX<suffix>"; *path_out is the
 * caller's.  Returns an open fd or a negative LEAKGATE_E*. */
static int
temp_file(char **path_out, const char *suffix)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    const char *dir = leakgate_files__tmpdir(NULL);
    int fd;

    *path_out = NULL;
    leakgate_buf__printf(&b, "%s/leakgate-XXXXXX%s", dir, suffix);
    if (b.failed) {
        leakgate_error__set(LEAKGATE_ENOMEM, "temporary file name");
        return LEAKGATE_ENOMEM;
    }
    fd = mkstemps(b.ptr, (int)strlen(suffix));
    if (fd < 0) {
        leakgate_error__set(LEAKGATE_EIO,
                            "cannot create a temporary file %s: %s", b.ptr,
                            strerror(errno));
        leakgate_buf__dispose(&b);
        return LEAKGATE_EIO;
    }
    *path_out = leakgate_buf__take(&b);
    if (!*path_out) { /* cannot happen: b holds the name */
        close(fd);
        leakgate_error__set(LEAKGATE_ENOMEM, "temporary file name");
        return LEAKGATE_ENOMEM;
    }
    return fd;
}

static int
write_all(int fd, const char *data, size_t len, const char *path)
{
    while (len > 0) {
        ssize_t put = write(fd, data, len);

        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0)
            return leakgate_error__set(LEAKGATE_EIO, "cannot write %s: %s",
                                       path, strerror(errno));
        data += put;
        len -= (size_t)put;
    }
    return 0;
}

int
leakgate_render__texts(char **outs,
                       size_t *lens,
                       const char *dot,
                       size_t len,
                       const char *const *formats,
                       size_t n,
                       unsigned int timeout_ms)
{
    char *in_path = NULL, *out_paths[LEAKGATE_RENDER_MAX] = {NULL};
    int out_fds[LEAKGATE_RENDER_MAX];
    struct child c[LEAKGATE_RENDER_MAX];
    bool started[LEAKGATE_RENDER_MAX] = {false};
    long long deadline = now_ms() + (long long)timeout_ms;
    int in_fd = temp_file(&in_path, ".dot");
    int rc = in_fd < 0 ? in_fd : 0;

    if (n > LEAKGATE_RENDER_MAX)
        n = LEAKGATE_RENDER_MAX;
    for (size_t i = 0; i < n; i++) {
        outs[i] = NULL;
        lens[i] = 0;
        out_fds[i] = -1;
        c[i] = (struct child){.pid = -1, .err_fd = -1};
    }
    if (rc == 0)
        rc = write_all(in_fd, dot, len, in_path);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        out_fds[i] = temp_file(&out_paths[i], ".out");
        rc = out_fds[i] < 0 ? out_fds[i] : 0;
    }
    /* Every format's dot at once: they run side by side. */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = start_file(&c[i], in_path, out_paths[i], formats[i]);
        started[i] = rc == 0;
    }
    for (size_t i = 0; i < n; i++) {
        int one;

        if (!started[i])
            continue;
        one = finish(&c[i], deadline);
        if (rc == 0 && one == 0)
            one = leakgate_render__read_file(&outs[i], &lens[i], out_paths[i],
                                             SIZE_MAX - 1);
        if (rc == 0)
            rc = one;
    }
    if (rc < 0) {
        for (size_t i = 0; i < n; i++) {
            leakgate_util__free(outs[i]);
            outs[i] = NULL;
            lens[i] = 0;
        }
    }
    if (in_fd >= 0)
        close(in_fd);
    if (in_path)
        unlink(in_path);
    leakgate_util__free(in_path);
    for (size_t i = 0; i < n; i++) {
        if (out_fds[i] >= 0)
            close(out_fds[i]);
        if (out_paths[i])
            unlink(out_paths[i]);
        leakgate_util__free(out_paths[i]);
    }
    return rc;
}

int
leakgate_render__text(char **out,
                      size_t *len_out,
                      const char *dot,
                      size_t len,
                      const char *format,
                      unsigned int timeout_ms)
{
    const char *formats[1] = {format};

    return leakgate_render__texts(out, len_out, dot, len, formats, 1,
                                  timeout_ms);
}
