/* SPDX-License-Identifier: MIT */
/*
 * replay_run: starting a replay and waiting for it (replay.h).  The first
 * process keeps the options' environment twins as the run began and
 * gives them back to the replay, whatever a test set since; forks, and
 * in the child sets $LEAKGATE_REPLAY (and the probe's and a lean
 * process's settings) and execs /proc/self/exe with stdin and stdout on
 * /dev/null and stderr into the replay's log.  The replay beats on a pipe
 * ($LEAKGATE_REPLAY_BEAT) as its tests' phases start and end; a replay
 * silent for the replay timeout (--replay-timeout) is sent the stop
 * signal, which its glue answers by writing its results, and killed 10 s
 * later.  No allocation in the forked child beyond setenv().
 */
#include "replay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "options.h"
#include "util.h"

/* The option twins as the run begins, before any test can setenv() one
 * (a test's LEAKGATE_FILTER must not choose what its replay runs). */
int
leakgate_replay__save_env(struct leakgate_gate *gate)
{
    const char *const *names = leakgate_options__env_names();
    size_t n = 0;

    while (names[n])
        n++;
    gate->replay.env = leakgate_util__calloc(n + 1, sizeof *gate->replay.env);
    if (!gate->replay.env)
        return leakgate_error__set(LEAKGATE_ENOMEM, "replay environment");
    for (size_t k = 0; k < n; k++) {
        const char *value = getenv(names[k]);

        if (!value)
            continue;
        gate->replay.env[k] = leakgate_util__strdup(value);
        if (!gate->replay.env[k])
            return leakgate_error__set(LEAKGATE_ENOMEM, "replay environment");
    }
    return 0;
}

/* In the forked child: the option twins as they were when the run began. */
static int
restore_env(char *const *saved)
{
    const char *const *names = leakgate_options__env_names();

    for (size_t k = 0; saved && names[k]; k++) {
        int rc = saved[k] ? setenv(names[k], saved[k], 1) : unsetenv(names[k]);

        if (rc != 0)
            return -1;
    }
    return 0;
}

/* In a replay: the pipe it beats on ($LEAKGATE_REPLAY_BEAT), kept from
 * the programs its tests start. */
void
leakgate_replay__take_beat(struct leakgate_gate *gate)
{
    int fd = leakgate_util__env_fd(LEAKGATE_REPLAY_BEAT_ENV);

    unsetenv(LEAKGATE_REPLAY_BEAT_ENV);
    /* Non-blocking: a first process that reads late (a full pipe) must
     * not stop the test that beats. */
    if (fd < 0 || fd == INT_MAX || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 ||
        fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
        return;
    gate->replay.beat_fd = fd + 1;
}

static void
beat_byte(const leakgate_gate *gate, char byte)
{
    int fd = gate ? gate->replay.beat_fd - 1 : -1;
    int saved = errno; /* the test's errno stays the test's */
    ssize_t n;

    if (fd < 0)
        return;
    /* A full pipe (EAGAIN) has beats enough; the first process gone
     * (EPIPE, or SIGPIPE) leaves nobody to tell: nothing to do either way. */
    n = write(fd, &byte, 1);
    (void)n;
    errno = saved;
}

void
leakgate_gate_replay_beat(const leakgate_gate *gate)
{
    beat_byte(gate, '.');
}

void
leakgate_replay__beat_measured(const struct leakgate_gate *gate)
{
    beat_byte(gate, 'm');
}

unsigned int
leakgate_replay__progress_s(void)
{
    const char *v = getenv(LEAKGATE_PROGRESS_ENV);
    char *end;
    long n;

    if (!v || !*v)
        return isatty(STDERR_FILENO) ? 5u : 0u;
    n = strtol(v, &end, 10);
    return *end == '\0' && n > 0 && n <= 3600 ? (unsigned int)n : 0u;
}

int
leakgate_gate_replay_stop_signal(void)
{
    return SIGRTMIN + 3;
}

unsigned int
leakgate_gate_test_timeout(const leakgate_gate *gate)
{
    unsigned int seconds = LEAKGATE_TEST_TIMEOUT_DEFAULT;

    /* Checked by leakgate_gate_options_parse(). */
    (void)leakgate_options__test_timeout(&seconds, gate->opts.test_timeout);
    return seconds;
}

unsigned int
leakgate_gate_replay_timeout(const leakgate_gate *gate)
{
    return gate->replay.timeout_s ? gate->replay.timeout_s
                                  : LEAKGATE_REPLAY_TIMEOUT_DEFAULT;
}

/* In the forked child: become the replay.  Never returns. */
static void
exec_replay(char *const *argv,
            char *const *env,
            int beat,
            const char *list,
            const char *log,
            const char *preload,
            bool probe,
            bool lean)
{
    int null = open("/dev/null", O_RDWR);
    /* The log is new in a directory only this user can write: a name
     * that exists already is never followed. */
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    char beat_text[24];

    if (!argv || !argv[0])
        _exit(127);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
    }
    if (fd >= 0)
        dup2(fd, STDERR_FILENO);
    snprintf(beat_text, sizeof beat_text, "%d", beat);
    /* The write end stays open across exec (pipe2 made it close-on-exec). */
    if (beat >= 0)
        (void)fcntl(beat, F_SETFD, 0);
    if (restore_env(env) != 0 || setenv(LEAKGATE_REPLAY_ENV, list, 1) != 0 ||
        (beat >= 0 && setenv(LEAKGATE_REPLAY_BEAT_ENV, beat_text, 1) != 0) ||
        (probe && setenv(LEAKGATE_REPLAY_WARMUP_ENV, "1", 1) != 0) ||
        (preload && setenv("LD_PRELOAD", preload, 1) != 0) ||
        (lean && leakgate_gate__lean_conf() < 0))
        _exit(127);
    execv("/proc/self/exe", argv);
    fprintf(stderr, "cannot start /proc/self/exe: %s\n", strerror(errno));
    _exit(127);
}

static double
now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The replay has ended: true, *status_out its wait status. */
static bool
ended(pid_t pid, int *status_out, int flags)
{
    pid_t r;

    while ((r = waitpid(pid, status_out, flags)) < 0 && errno == EINTR)
        ;
    return r == pid || (r < 0 && errno == ECHILD);
}

/*
 * Wait for the replay, reading its beats (leakgate_gate_replay_beat()):
 * when none came for the timeout, one test has run that long, and the
 * replay is sent the stop signal (its glue records that test as not
 * judged and writes its results); 10 s later it is killed.  *timed_out
 * says whether it was stopped.
 */
void
leakgate_replay__wait(pid_t pid,
                      int beat,
                      unsigned int timeout_s,
                      size_t total,
                      int *status_out,
                      bool *timed_out)
{
    double start = now_s(), last = start, grace = 0, said = start;
    unsigned int every = leakgate_replay__progress_s();
    size_t measured = 0;

    *timed_out = false;
    while (!ended(pid, status_out, WNOHANG)) {
        struct pollfd p = {beat, POLLIN, 0};
        char buf[512];
        ssize_t got = 0;

        if (poll(&p, beat >= 0 ? 1 : 0, 200) > 0 &&
            (got = read(beat, buf, sizeof buf)) > 0) {
            last = now_s();
            for (ssize_t i = 0; i < got; i++)
                measured += buf[i] == 'm';
        }
        /* Progress on long work: a line every `every` seconds. */
        if (every && now_s() - said >= (double)every) {
            said = now_s();
            fprintf(stderr,
                    "leakgate: replay: %zu of %zu test%s measured, %.0f s\n",
                    measured < total ? measured : total, total,
                    total == 1 ? "" : "s", said - start);
        }
        if (!*timed_out && now_s() - last >= (double)timeout_s) {
            *timed_out = true;
            grace = now_s();
            kill(pid, leakgate_gate_replay_stop_signal());
        } else if (*timed_out && now_s() - grace >= 10.0) {
            kill(pid, SIGKILL);
            (void)ended(pid, status_out, 0);
            return;
        }
    }
}

/*
 * The warm-up probe only adds a NOTE: a test that hangs when it runs again
 * must not hold the run for the whole replay timeout.  It may run ten
 * times as long as the longest window of this run, at least 10 s, at most
 * the replay timeout.
 */
static unsigned int
probe_timeout(const struct leakgate_gate *gate)
{
    double longest = 0;
    unsigned int cap = leakgate_gate_replay_timeout(gate), t;

    for (size_t i = 0; i < gate->nverdicts; i++) {
        double s = gate->verdicts[i]->seconds;

        if (s > longest && s < 1e6)
            longest = s;
    }
    t = (unsigned int)(longest * 10.0) + 1;
    t = t < 10 ? 10 : t;
    return t < cap ? t : cap;
}

/* How many tests the list names (one line each). */
static size_t
listed(const char *list)
{
    struct leakgate_buf text = LEAKGATE_BUF_INIT;
    size_t n = 0;

    if (leakgate_files__read(&text, list, (size_t)64 << 20, "replay list") == 0)
        for (size_t i = 0; i < text.len; i++)
            n += text.ptr[i] == '\n';
    leakgate_error__clear();
    leakgate_buf__dispose(&text);
    return n;
}

int
leakgate_replay__start_and_wait(struct leakgate_gate *gate,
                                char *const *argv,
                                const char *list,
                                const char *log,
                                const char *preload,
                                bool probe,
                                int *status_out)
{
    int beat[2] = {-1, -1};
    pid_t pid;

    fflush(NULL);
    if (pipe2(beat, O_CLOEXEC) == 0)
        (void)fcntl(beat[0], F_SETFL, O_NONBLOCK);
    pid = fork();
    if (pid < 0) {
        close(beat[0]);
        close(beat[1]);
        return leakgate_error__set(LEAKGATE_EIO, "cannot fork the replay: %s",
                                   strerror(errno));
    }
    if (pid == 0)
        exec_replay(argv, gate->replay.env, beat[1], list, log, preload, probe,
                    gate->lean);
    if (beat[1] >= 0)
        close(beat[1]);
    leakgate_replay__wait(pid, beat[0],
                          probe ? probe_timeout(gate)
                                : leakgate_gate_replay_timeout(gate),
                          listed(list), status_out, &gate->replay.timed_out);
    if (beat[0] >= 0)
        close(beat[0]);
    return 0;
}
