/* SPDX-License-Identifier: MIT */
/*
 * run: `leakgate run`, the parent side of gating an unmodified CUnit
 * program.  Starts the program (run_env.c prepares its path and
 * environment) with one end of a socket pair and its doorbell inherited,
 * reads the records its interposer (preload.c) streams while it runs
 * (run_proto.h), and decides the outcome from those records and from how
 * the program ended (a signal, exit() during a test), never from its exit
 * status.  The program's stdin, stdout and stderr are the caller's:
 * nothing is captured.  While the program runs SIGINT and SIGQUIT are
 * ignored here (the program gets them from the terminal and its death is
 * reported) and SIGTERM and SIGHUP are passed on to it.
 */
#include "leakgate/run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "outputs.h"
#include "run_proto.h"
#include "util.h"

static volatile sig_atomic_t forward_pid;

static void
forward_signal(int sig)
{
    if (forward_pid > 0)
        kill((pid_t)forward_pid, sig);
}

struct saved_signals {
    struct sigaction intr, quit, term, hup;
};

static void
signals_take(struct saved_signals *s)
{
    struct sigaction ign, fwd;

    memset(&ign, 0, sizeof ign);
    memset(&fwd, 0, sizeof fwd);
    ign.sa_handler = SIG_IGN;
    fwd.sa_handler = forward_signal;
    fwd.sa_flags = SA_RESTART;
    sigemptyset(&ign.sa_mask);
    sigemptyset(&fwd.sa_mask);
    sigaction(SIGINT, &ign, &s->intr);
    sigaction(SIGQUIT, &ign, &s->quit);
    sigaction(SIGTERM, &fwd, &s->term);
    sigaction(SIGHUP, &fwd, &s->hup);
}

static void
signals_restore(const struct saved_signals *s)
{
    sigaction(SIGINT, &s->intr, NULL);
    sigaction(SIGQUIT, &s->quit, NULL);
    sigaction(SIGTERM, &s->term, NULL);
    sigaction(SIGHUP, &s->hup, NULL);
}

static int
spawn(pid_t *pid_out, const char *path, char *const *argv, char *const *envp)
{
    posix_spawnattr_t attr;
    sigset_t def, none;
    int rc;

    sigemptyset(&def);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGQUIT);
    sigaddset(&def, SIGTERM);
    sigaddset(&def, SIGHUP);
    sigaddset(&def, SIGPIPE);
    sigemptyset(&none);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigdefault(&attr, &def);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr,
                             POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    rc = posix_spawn(pid_out, path, NULL, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
        return leakgate_error__set(LEAKGATE_ENOTFOUND, "cannot execute %s: %s",
                                   path, strerror(rc));
    return 0;
}

/* Take every complete line of in; keep the rest.  *scanned: bytes of in
 * already known to hold no newline. */
static int
take_lines(struct leakgate_run *r, struct leakgate_buf *in, size_t *scanned)
{
    size_t start = 0;
    int rc = 0;

    for (size_t i = *scanned; i < in->len && rc == 0; i++) {
        if (in->ptr[i] != '\n')
            continue;
        in->ptr[i] = '\0';
        rc = leakgate_run__take_record(r, in->ptr + start);
        start = i + 1;
    }
    memmove(in->ptr, in->ptr + start, in->len - start + 1);
    in->len -= start;
    *scanned = in->len;
    return rc;
}

/* Take what the channel holds now, without waiting; *open false once it
 * has closed. */
static int
drain(struct leakgate_run *r,
      int fd,
      struct leakgate_buf *in,
      size_t *scanned,
      bool *open)
{
    static char chunk[1 << 16];

    for (;;) {
        ssize_t got = recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);

        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (got <= 0) {
            *open = false;
            return 0;
        }
        leakgate_buf__put(in, chunk, (size_t)got);
        if (in->failed)
            return leakgate_error__set(LEAKGATE_ENOMEM, "records");
        if (take_lines(r, in, scanned) < 0)
            return -1;
    }
}

/* Reset the doorbell (an eventfd: one read takes every ring so far). */
static void
ring_off(int bell)
{
    uint64_t rings;

    while (read(bell, &rings, sizeof rings) < 0 && errno == EINTR)
        ;
}

/* A descriptor that becomes readable when the program ends, or -1 (a
 * kernel before 5.3: the tick and the channel's close tell then). */
static int
open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* Take what the channel and the ring hold now, in the order they were
 * written: the ring's head first, then the channel (whatever the program
 * sent before it wrote there is in the channel by then), then the ring up
 * to that head. */
static int
drain_all(struct leakgate_run *r,
          const int ch[3],
          struct leakgate_run_ring *ring,
          struct leakgate_buf in[2],
          size_t scanned[2],
          bool *open)
{
    uint64_t head =
        ring ? atomic_load_explicit(&ring->head, memory_order_acquire) : 0;
    int rc = *open ? drain(r, ch[0], &in[0], &scanned[0], open) : 0;

    if (rc == 0 && ring)
        rc = leakgate_run__ring_read(ring, head, &in[1]);
    if (rc == 0 && in[1].len > scanned[1])
        rc = take_lines(r, &in[1], &scanned[1]);
    return rc;
}

/* Read records until the channel closes, or until the program has exited
 * and nothing more is waiting (a process it started may hold the socket
 * open).  *exited: the program was reaped into r->wait_status.  This
 * process sleeps on the doorbell (ch[2]: the program found the channel
 * full), the channel's close, the program's end and a 250 ms tick, not on
 * the channel's data: a record sent wakes nobody (run_proto.h). */
static int
pump(struct leakgate_run *r,
     const int ch[3],
     struct leakgate_run_ring *ring,
     pid_t pid,
     bool *exited)
{
    struct leakgate_buf in[2] = {LEAKGATE_BUF_INIT, LEAKGATE_BUF_INIT};
    size_t scanned[2] = {0, 0};
    int pidfd = open_pidfd(pid), rc = 0;
    bool open = true;

    *exited = false;
    while (rc == 0 && open) {
        struct pollfd p[3] = {
            {ch[2], POLLIN, 0}, {ch[0], 0, 0}, {pidfd, POLLIN, 0}};
        int n = *exited ? 0 : poll(p, 3, 250);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        if (p[0].revents)
            ring_off(ch[2]);
        rc = drain_all(r, ch, ring, in, scanned, &open);
        if (*exited)
            break;
        if (n == 0 || p[2].revents)
            *exited = waitpid(pid, &r->wait_status, WNOHANG) == pid;
    }
    /* The channel closed (every process holding it ended): what the ring
     * holds is all there is. */
    if (rc == 0)
        rc = drain_all(r, ch, ring, in, scanned, &open);
    if (pidfd >= 0)
        close(pidfd);
    leakgate_buf__dispose(&in[0]);
    leakgate_buf__dispose(&in[1]);
    return rc;
}

static void
reap(pid_t pid, int *status, bool exited)
{
    while (!exited) {
        pid_t w = waitpid(pid, status, 0);

        exited = w == pid || (w < 0 && errno != EINTR);
    }
}

static int
run_child(struct leakgate_run *r,
          char *const *argv,
          char *const *envp,
          int ch[3],
          struct leakgate_run_ring *ring,
          int *ring_fd)
{
    struct saved_signals saved;
    bool exited = false;
    pid_t pid;
    int rc;

    signals_take(&saved);
    rc = spawn(&pid, r->program, argv, envp);
    close(ch[1]);
    ch[1] = -1;
    if (*ring_fd >= 0) {
        close(*ring_fd);
        *ring_fd = -1;
    }
    if (rc == 0) {
        forward_pid = pid;
        rc = pump(r, ch, ring, pid, &exited);
        /* Closed before waiting: a program still writing gets EPIPE. */
        close(ch[0]);
        ch[0] = -1;
        reap(pid, &r->wait_status, exited);
        forward_pid = 0;
    }
    signals_restore(&saved);
    return rc;
}

/* The socket pair (ch[1] the program's end, inherited) and the doorbell
 * (ch[2], an eventfd both sides hold). */
static int
channel(int ch[3])
{
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ch) != 0)
        return leakgate_error__set(LEAKGATE_EIO, "socketpair: %s",
                                   strerror(errno));
    if (fcntl(ch[1], F_SETFD, 0) != 0 || (ch[2] = eventfd(0, EFD_NONBLOCK)) < 0)
        return leakgate_error__set(LEAKGATE_EIO, "leakgate run's channel: %s",
                                   strerror(errno));
    return 0;
}

/* A program built with a sanitizer that replaces malloc cannot be gated:
 * said before it runs (exit 3), not after a crash inside the sanitizer. */
static int
refuse_sanitizer(const char *program)
{
    struct leakgate_run_elf elf;

    leakgate_run__inspect_elf(&elf, program);
    if (!elf.sanitizer)
        return 0;
    return leakgate_error__set(
        LEAKGATE_ENOPROF,
        "%s is built with %s, whose allocator replaces malloc: leakgate "
        "cannot measure what a test keeps under it.  Build the gated tests "
        "without the sanitizer, and run the sanitizer build as it is, "
        "without leakgate (UBSan alone, -fsanitize=undefined, can stay)",
        program, elf.sanitizer);
}

int
leakgate_run_program(leakgate_run **out,
                     const struct leakgate_gate_options *opts,
                     char *const *argv)
{
    struct leakgate_run *r;
    struct leakgate_run_envp env = {NULL, 0, 0, false};
    char *preload = NULL, *jemalloc = NULL;
    int ch[3] = {-1, -1, -1}, ring_fd = -1, rc;
    struct leakgate_run_ring *ring = NULL;

    *out = NULL;
    if (!argv || !argv[0])
        return leakgate_error__set(LEAKGATE_EUSAGE, "no program to run");
    /* A link, a FIFO, a device or another user's file as an output:
     * refused before the program runs (exit 2). */
    rc = leakgate_outputs__check(opts->junit_path, LEAKGATE_OUTPUTS_JUNIT);
    if (rc == 0)
        rc = leakgate_outputs__check(opts->json_path, LEAKGATE_OUTPUTS_JSON);
    if (rc == 0)
        rc = leakgate_outputs__check(opts->report_dir, LEAKGATE_OUTPUTS_INDEX);
    if (rc < 0)
        return rc;
    r = leakgate_util__calloc(1, sizeof *r);
    if (!r)
        return leakgate_error__set(LEAKGATE_ENOMEM, "run");
    r->opts = *opts;
    rc = leakgate_run__find_program(&r->program, argv[0]);
    if (rc == 0)
        rc = refuse_sanitizer(r->program);
    if (rc == 0)
        rc = leakgate_run__find_preload(&preload);
    if (rc == 0)
        rc = leakgate_run__find_jemalloc(&jemalloc);
    /* Shared --junit FILE, --json FILE and index.html are merged by this
     * process from the records (the program's interposer writes none).
     * Without journals the run goes on: writing the files says why they
     * cannot be written. */
    if (rc == 0 &&
        (leakgate_outputs__open(&r->outputs, opts->junit_path, opts->json_path,
                                opts->report_dir) < 0 ||
         leakgate_outputs__set_binary(r->outputs, r->program) < 0)) {
        leakgate_outputs__free(r->outputs);
        r->outputs = NULL;
    }
    if (rc == 0)
        rc = channel(ch);
    /* No ring (no memfd here): the records come on the channel. */
    if (rc == 0)
        (void)leakgate_run__ring_new(&ring, &ring_fd);
    if (rc == 0)
        rc = leakgate_run__build_env(&env, opts, preload, jemalloc, ch[1],
                                     ch[2], ring_fd, NULL);
    if (rc == 0)
        rc = run_child(r, argv, env.v, ch, ring, &ring_fd);
    /* Killed while tests waited for their replay: no verdict is lost. */
    if (rc == 0)
        rc = leakgate_run__replay_waiting(r, argv, preload, jemalloc);
    if (rc == 0)
        rc = leakgate_run__decide(r);
    for (int i = 0; i < 3; i++) {
        if (ch[i] >= 0)
            close(ch[i]);
    }
    if (ring_fd >= 0)
        close(ring_fd);
    leakgate_run__ring_unmap(ring);
    leakgate_run__env_free(&env);
    leakgate_util__free(preload);
    leakgate_util__free(jemalloc);
    if (rc < 0) {
        leakgate_run_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int
leakgate_run_status(const leakgate_run *run)
{
    return run->status;
}

size_t
leakgate_run_message_count(const leakgate_run *run)
{
    return run->nmessages;
}

const char *
leakgate_run_message(const leakgate_run *run, size_t i)
{
    return i < run->nmessages ? run->messages[i] : "";
}

void
leakgate_run_free(leakgate_run *run)
{
    if (!run)
        return;
    for (size_t i = 0; i < run->ncases; i++)
        leakgate_run__case_dispose(&run->cases[i]);
    leakgate_util__free(run->cases);
    for (size_t i = 0; i < run->nmessages; i++)
        leakgate_util__free(run->messages[i]);
    leakgate_util__free(run->messages);
    for (size_t i = 0; i < 3; i++)
        leakgate_util__free(run->running[i]);
    leakgate_run__case_dispose(run->crash);
    leakgate_util__free(run->crash);
    for (size_t i = 0; i < run->nplanned; i++)
        leakgate_util__free(run->planned[i]);
    leakgate_util__free(run->planned);
    leakgate_outputs__free(run->outputs);
    leakgate_util__free(run->junit_env);
    leakgate_util__free(run->json_env);
    leakgate_util__free(run->error_text);
    leakgate_util__free(run->program);
    leakgate_util__free(run);
}

/* The options block of the test binaries' --help ("options ..." up to
 * "exit status:"), so that both always list the same options. */
static void
put_gate_options(struct leakgate_buf *b)
{
    const char *text = leakgate_gate_options_usage();
    const char *from = strstr(text, "\noptions");
    const char *to = from ? strstr(from, "\nexit status:") : NULL;

    if (from && to)
        leakgate_buf__put(b, from + 1, (size_t)(to - from));
}

const char *
leakgate_run_usage(void)
{
    static char text[4096];
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    if (text[0])
        return text;
    leakgate_buf__puts(
        &b, "usage: leakgate run [options] -- PROGRAM [ARGS...]\n"
            "\n"
            "Runs an unmodified CUnit test program (dynamically linked to\n"
            "libcunit) under the gate: jemalloc and leakgate's CUnit\n"
            "interposer are preloaded, every test the program runs is\n"
            "measured and reported as in a linked test binary, and the exit\n"
            "status is the gate's, whatever the program returns.  The\n"
            "program's own output is passed through.\n\n");
    put_gate_options(&b);
    leakgate_buf__puts(
        &b, "environment:\n"
            "  LEAKGATE_PRELOAD     path of libleakgate-preload.so (default:\n"
            "                       ../lib next to the leakgate executable)\n"
            "  LEAKGATE_JEMALLOC    path of libjemalloc.so.2 (default: the "
            "one\n"
            "                       leakgate itself runs on)\n"
            "\n"
            "exit status: 0 all tests passed; 1 a test failed (assertion,\n"
            "gate, or the program died or exited in a test); 2 usage or\n"
            "configuration error; 3 the gate could not run (no such program,\n"
            "not executable, not a CUnit program, jemalloc or the interposer\n"
            "cannot be preloaded, profiling unavailable).\n");
    snprintf(text, sizeof text, "%s",
             b.ptr && !b.failed ? b.ptr
                                : "usage: leakgate run [options] -- "
                                  "PROGRAM [ARGS...]\n");
    leakgate_buf__dispose(&b);
    return text;
}
