/* SPDX-License-Identifier: MIT */
/*
 * preload: leakgate's CUnit interposer, the heart of
 * libleakgate-preload.so, which `leakgate run` preloads (ahead of
 * libjemalloc) into an unmodified CUnit program.  The library carries the
 * whole gate, the CUnit glue (cunit.c) and `malloc_conf` (profile.c), so
 * exact profiling is on from the program's first allocation.
 *
 * It defines CUnit's run functions.  The outermost call made by the
 * program (CU_basic_run_tests, CU_automated_run_tests, CU_run_all_tests,
 * CU_run_suite, CU_run_test, CU_basic_run_suite, CU_basic_run_test) runs
 * the real one (dlsym(RTLD_NEXT)) under leakgate_cunit_run(); calls made
 * inside it, and every call when the program was not started by
 * `leakgate run`, go straight to CUnit.  CU_console_run_tests is passed
 * through: the runs it starts are wrapped one by one.
 *
 * Every finished record is streamed to `leakgate run` over the socket in
 * $LEAKGATE_RUN_FD (run_proto.h) as soon as it is complete, so that a
 * crash or an exit() in a later test loses nothing.  Only the one exported
 * CUnit interface is touched: CUnit headers are included here and in
 * cunit.c, nowhere else.
 */
#include <CUnit/Automated.h>
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_calls.h"
#include "cunit_hooks.h"
#include "cunit_run.h"
#include "error.h"
#include "gate.h"
#include "leakgate/cunit.h"
#include "replay.h"
#include "run_proto.h"

static struct {
    int fd;              /* the channel, -1 when not under leakgate run */
    int bell;            /* its doorbell (run_proto.h), or -1 */
    bool claimed;        /* this process runs the tests */
    unsigned int depth;  /* nesting of interposed calls */
    leakgate_gate *gate; /* created at the first run */
    char *json_env;      /* the environment last sent (N record) */
    bool list;           /* --list */
    int color;           /* --color 1, --no-color 0, -1 not given */
    bool replay;         /* this process is a replay (replay.h) */
    char *preload;       /* LD_PRELOAD that started this process */
    bool pieces;         /* records carry JUnit/JSON pieces */
    /* The ring the claimed process writes its records to (run_proto.h);
     * NULL: the channel. */
    struct leakgate_run_ring *ring;
} child = {-1, -1, false, 0, NULL, NULL, false, -1, false, NULL, false, NULL};

/* Held while a record is written to the ring (one writer at a time). */
static atomic_flag ring_busy = ATOMIC_FLAG_INIT;

/* Write a record where leakgate run reads it: the ring, else the channel.
 * A record written while the ring is busy (another thread's, or the rescue
 * of a program dying inside a write) goes on the channel: one send, never
 * mixed into the ring's record.  Once leakgate run is gone the tests run
 * unobserved. */
static void
send_bytes(const char *data, size_t len)
{
    int rc;

    if (child.fd < 0)
        return;
    if (child.ring && !atomic_flag_test_and_set(&ring_busy)) {
        rc = leakgate_run__ring_write(child.ring, child.fd, child.bell, data,
                                      len);
        atomic_flag_clear(&ring_busy);
    } else {
        rc = leakgate_run__send(child.fd, child.bell, data, len);
    }
    if (rc < 0)
        child.fd = -1;
}

/* Build a record of short fields in line (LINE_MAX_FIXED bytes, with its
 * newline): false when a field had to be cut short or left out. */
#define LINE_MAX_FIXED 2048
static bool
fixed_line(char *line,
           size_t *len,
           const char *type,
           const char *const *fields,
           size_t n)
{
    bool whole = true;

    *len = 0;
    leakgate_records__put_field_fixed(line, LINE_MAX_FIXED, len, type);
    for (size_t i = 0; i < n; i++) {
        if (*len + 3 >= LINE_MAX_FIXED) {
            whole = false;
            break; /* names this long: a short record, which is ignored */
        }
        line[(*len)++] = '\t';
        whole &= leakgate_records__put_field_fixed(line, LINE_MAX_FIXED, len,
                                                   fields[i]);
    }
    line[(*len)++] = '\n';
    return whole;
}

/* A record of short fields, built on the stack: no allocation, so it may
 * be sent while a window records. */
static void
send_fixed(const char *type, const char *const *fields, size_t n)
{
    char line[LINE_MAX_FIXED];
    size_t len;

    (void)fixed_line(line, &len, type, fields, n);
    send_bytes(line, len);
}

static void
send_buf(struct leakgate_buf *b)
{
    leakgate_buf__puts(b, "\n");
    if (!b->failed)
        send_bytes(b->ptr, b->len);
    leakgate_buf__dispose(b);
}

/* The gate cannot run: tell leakgate run, which prints the message, and
 * stop the program (its output so far is flushed). */
static void
send_error(int status, const char *message)
{
    const char *fields[2] = {status == 2 ? "2" : "3", message};

    send_fixed("E", fields, 2);
}

static _Noreturn void
fail(int status, const char *message)
{
    /* A replay has no channel: its log is its stderr. */
    if (child.fd < 0)
        fprintf(stderr, "leakgate: %s\n", message);
    send_error(status, message);
    fflush(NULL);
    _exit(status);
}

__attribute__((constructor)) static void
preload_loaded(void)
{
    const char *env = getenv(LEAKGATE_RUN_ENV_FD);
    char pid[32];
    const char *fields[1] = {pid};

    if ((!env || !*env) && getenv(LEAKGATE_REPLAY_ENV))
        child.replay = true;
    if ((child.fd = leakgate_util__env_fd(LEAKGATE_RUN_ENV_FD)) < 0)
        return;
    child.bell = leakgate_util__env_fd(LEAKGATE_RUN_ENV_BELL);
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    send_fixed("H", fields, 1);
}

/* This process runs CUnit tests: keep the channel from the programs it
 * starts, and give them the environment the user had. */
/*
 * The program dies (a fatal signal, exit() in a test): the tests still
 * waiting for a replay are measured first and their records sent, so that
 * leakgate run loses no verdict.  Best effort (it allocates); only in the
 * claimed process, not in a child a test forked.
 */
static pid_t claimed_pid;

static void
rescue_on_exit(void)
{
    if (getpid() == claimed_pid)
        leakgate_cunit__rescue();
}

static void
rescue_on_signal(int sig)
{
    static volatile sig_atomic_t once;

    if (once++ == 0 && getpid() == claimed_pid) {
        alarm(10);
        leakgate_cunit__rescue();
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void
arm_rescue(void)
{
    static const int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

    claimed_pid = getpid();
    atexit(rescue_on_exit);
    /* A program's own handler stays: the test behaves as in a plain run. */
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction now;

        if (sigaction(signals[i], NULL, &now) == 0 && now.sa_handler == SIG_DFL)
            signal(signals[i], rescue_on_signal);
    }
}

/* In a child this process forked: the ring is the parent's alone. */
static void
forked(void)
{
    child.ring = NULL;
}

static void
claim(void)
{
    const char *saved = getenv(LEAKGATE_RUN_ENV_SAVED_PRELOAD);
    const char *list = getenv(LEAKGATE_RUN_ENV_LIST);
    const char *color = getenv(LEAKGATE_RUN_ENV_COLOR);
    const char *pieces = getenv(LEAKGATE_RUN_ENV_PIECES);

    child.claimed = true;
    child.pieces = pieces && strcmp(pieces, "1") == 0;
    child.preload = leakgate_util__strdup(getenv("LD_PRELOAD"));
    child.list = list && strcmp(list, "1") == 0;
    if (color && *color)
        child.color = strcmp(color, "1") == 0;
    fcntl(child.fd, F_SETFD, FD_CLOEXEC);
    if (child.bell >= 0)
        fcntl(child.bell, F_SETFD, FD_CLOEXEC);
    /* The ring, when leakgate run made one: this process's records go
     * there, a forked child's on the channel (forked()). */
    child.ring =
        leakgate_run__ring_map(leakgate_util__env_fd(LEAKGATE_RUN_ENV_RING));
    if (child.ring)
        pthread_atfork(NULL, NULL, forked);
    if (saved)
        setenv("LD_PRELOAD", saved, 1);
    else
        unsetenv("LD_PRELOAD");
    unsetenv(LEAKGATE_RUN_ENV_SAVED_PRELOAD);
    unsetenv(LEAKGATE_RUN_ENV_FD);
    unsetenv(LEAKGATE_RUN_ENV_BELL);
    unsetenv(LEAKGATE_RUN_ENV_RING);
    unsetenv(LEAKGATE_RUN_ENV_LIST);
    unsetenv(LEAKGATE_RUN_ENV_COLOR);
    unsetenv(LEAKGATE_RUN_ENV_PIECES);
    arm_rescue();
}

static void
send_env(const struct leakgate_run_pieces *p)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    if (child.json_env && strcmp(child.json_env, p->json_env) == 0)
        return;
    leakgate_util__free(child.json_env);
    child.json_env = leakgate_util__strdup(p->json_env);
    leakgate_buf__puts(&b, "N\t");
    leakgate_records__put_field(&b, p->junit_env);
    leakgate_buf__puts(&b, "\t");
    leakgate_records__put_field(&b, p->json_env);
    send_buf(&b);
}

/* Whether env's fields are those the environment was last rendered from
 * (a window's record renders it again only when one changed: rendering
 * is a function of these fields); else remember them.  False when not
 * known. */
static bool
env_unchanged(const struct leakgate_report_env *env)
{
    static char *seen[7];
    static bool known;
    const char *now[7] = {env->sampling, env->jemalloc_version, env->binary,
                          env->build_id, env->thresholds_path,  env->report_dir,
                          env->filter};
    bool same = known;

    for (size_t i = 0; same && i < 7; i++)
        same = now[i] && seen[i] ? strcmp(now[i], seen[i]) == 0
                                 : now[i] == seen[i];
    if (same)
        return true;
    known = true;
    for (size_t i = 0; i < 7; i++) {
        leakgate_util__free(seen[i]);
        seen[i] = now[i] ? leakgate_util__strdup(now[i]) : NULL;
        known = known && (seen[i] || !now[i]);
    }
    return false;
}

/* A program linked with leakgate (or carrying its own malloc_conf) has a
 * gate of its own, or a configuration jemalloc reads instead of ours: the
 * malloc_conf jemalloc sees is not in this library. */
static void
check_not_linked(void)
{
    void *seen = dlsym(RTLD_DEFAULT, "malloc_conf");
    Dl_info theirs, ours;

    if (seen && dladdr(seen, &theirs) && dladdr(&child, &ours) &&
        theirs.dli_fbase != ours.dli_fbase)
        fail(3, "the program defines its own malloc_conf: it is linked "
                "with leakgate (run it directly, without leakgate run) or "
                "configures jemalloc itself");
}

static void
start_gate(void)
{
    static char name[] = "leakgate-run";
    char *const argv[] = {name, NULL};
    struct leakgate_gate_options opts;
    struct leakgate_run_pieces env;
    struct leakgate_symbolizer *sym;
    char message[1200];
    int rc = leakgate_gate_options_parse(&opts, 1, argv);

    /* leakgate run writes --junit and --json from the records. */
    opts.junit_path = opts.json_path = NULL;
    check_not_linked();
    if (child.color >= 0)
        opts.color = child.color;
    if (rc == 0)
        rc = leakgate_gate_new(&child.gate, &opts);
    if (rc == 0 && child.replay)
        return; /* no channel: the replay's results go to a file */
    if (rc < 0) {
        snprintf(message, sizeof message, "in the program: %s%s: %s",
                 leakgate_strerror(rc),
                 rc == LEAKGATE_ENOPROF ? " (jemalloc was not preloaded as "
                                          "its allocator, or profiling is "
                                          "off)"
                                        : "",
                 leakgate_error_last());
        fail(rc == LEAKGATE_ECONFIG || rc == LEAKGATE_EUSAGE ? 2 : 3, message);
    }
    /* JUnit and JSON name the binary and its build-id even when every
     * test passes (no window needed symbols). */
    if (child.pieces)
        (void)leakgate_gate__symbolizer(&sym, child.gate);
    if (leakgate_run__pieces(&env, NULL, &child.gate->env) < 0)
        fail(3, leakgate_error_last());
    send_env(&env);
    leakgate_run__pieces_dispose(&env);
}

static void
on_started(const char *suite, const char *test, const char *phase, void *p)
{
    const char *fields[3] = {suite, test, phase};

    (void)p;
    send_fixed("S", fields, 3);
}

/* A verdict's record (run_proto.h's V): its fields after the type, in
 * f[], and how many.  seconds: room for the seconds field, exact so that
 * the parent sums the same doubles report.c would (strtod reads it back). */
static size_t
verdict_fields(const char **f,
               char seconds[LEAKGATE_RUN_SECONDS_MAX],
               const struct leakgate_verdict *v,
               const struct leakgate_run_pieces *p,
               bool revised)
{
    bool failed = v->status == LEAKGATE_STATUS_FAIL || v->nnotes > 0;

    leakgate_run__seconds(seconds, v->seconds);
    f[0] = v->suite;
    f[1] = v->test;
    f[2] = leakgate_records__status_name(v->status);
    f[3] = failed ? "1" : "0";
    f[4] = seconds;
    /* run_proto.h: "s" measured only, "w" waiting for a replay */
    f[5] = leakgate_verdict__skipped(v) ? "s" : v->needs_replay ? "w" : "";
    f[6] = p->junit_case ? p->junit_case : "";
    f[7] = p->json_test ? p->json_test : "";
    f[8] = "r";
    return revised ? 9 : 8;
}

static void
send_record(const char *suite, const char *test, bool revised)
{
    const struct leakgate_verdict *v =
        leakgate_gate__find_verdict(child.gate, suite, test);
    struct leakgate_run_pieces pieces;
    const char *f[9];
    char seconds[LEAKGATE_RUN_SECONDS_MAX], line[LINE_MAX_FIXED];
    size_t n, len;

    if (!v)
        return; /* its window could not open: the run's error says why */
    memset(&pieces, 0, sizeof pieces);
    if (child.pieces && env_unchanged(&child.gate->env)) {
        if (leakgate_run__case_pieces(&pieces, v, &child.gate->env) < 0)
            fail(3, leakgate_error_last());
    } else if (child.pieces) {
        if (leakgate_run__pieces(&pieces, v, &child.gate->env) < 0)
            fail(3, leakgate_error_last());
        send_env(&pieces);
    }
    n = verdict_fields(f, seconds, v, &pieces, revised);
    /* Most records (no pieces): built on the stack, no allocation. */
    if (fixed_line(line, &len, "V", f, n)) {
        send_bytes(line, len);
    } else {
        struct leakgate_buf b = LEAKGATE_BUF_INIT;

        leakgate_buf__puts(&b, "V");
        for (size_t i = 0; i < n; i++) {
            leakgate_buf__puts(&b, "\t");
            leakgate_records__put_field(&b, f[i]);
        }
        if (b.failed)
            fail(3, "out of memory while sending a record to leakgate run");
        send_buf(&b);
    }
    leakgate_run__pieces_dispose(&pieces);
}

static void
on_finished(const char *suite, const char *test, void *p)
{
    (void)p;
    send_record(suite, test, false);
}

static void
on_revised(const char *suite, const char *test, void *p)
{
    (void)p;
    send_record(suite, test, true);
}

/* The run stopped (a test ran longer than --test-timeout): leakgate run
 * exits 3 with why, the test running named as not judged. */
static void
on_stopped(const char *why, void *p)
{
    (void)p;
    send_error(3, why);
}

/* A test the run will reach unless the program dies first (leakgate run
 * lists the others as not run: run_proto.h's P). */
static void
on_planned(const char *suite, const char *test, void *p)
{
    const char *fields[2] = {suite, test};

    (void)p;
    send_fixed("P", fields, 2);
}

/* ---- the interposed functions ------------------------------------------ */

/* CUnit's own definition; without one, nothing can run. */
static int
call_real(void *payload)
{
    if (leakgate_cunit__call_real(payload) == -1)
        fail(3, "CUnit's run functions are not in a shared libcunit");
    return (int)((struct leakgate_cunit_call *)payload)->result;
}

/* The run function the program called comes from a CUnit look-alike
 * runtime (cunit_run.h): refused before the first test, with the library
 * named. */
static void
check_one_cunit(const struct leakgate_cunit_call *c)
{
    char message[1400];

    if (leakgate_cunit__lookalike(c->name, dlsym(RTLD_NEXT, c->name), message,
                                  sizeof message))
        fail(3, message);
}

static void
list_and_exit(void)
{
    int rc = leakgate_cunit_list();

    if (rc == 0)
        send_fixed("L", NULL, 0);
    fflush(NULL);
    _exit(rc == 0 ? 0 : 3);
}

static void
send_end(void)
{
    const char *text;
    char failures[32];
    const char *fields[1] = {failures};
    int rc = leakgate_cunit_run_error(&text);

    if (rc < 0)
        send_error(rc == LEAKGATE_EUSAGE ? 2 : 3, text);
    /* --junit, --json and index.html are leakgate run's, from the
     * records (its run may share them with other processes). */
    snprintf(failures, sizeof failures, "%u",
             CU_get_number_of_failure_records());
    send_fixed("D", fields, 1);
}

/* Run CUnit's function under the gate, with these hooks. */
static void
run_gated(struct leakgate_cunit_call *c,
          const struct leakgate_cunit_hooks *hooks)
{
    if (!child.gate)
        start_gate();
    child.depth++;
    leakgate_cunit__set_hooks(hooks);
    leakgate_cunit_run(child.gate, call_real, c);
    child.depth--;
}

/* A replay started by the claimed process (replay.h): measure the listed
 * tests, write the results file, stream nothing. */
static CU_ErrorCode
replay(struct leakgate_cunit_call *c)
{
    run_gated(c, NULL);
    if (leakgate_gate_write_results(child.gate) < 0)
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
    return c->result;
}

static CU_ErrorCode
intercept(struct leakgate_cunit_call *c)
{
    struct leakgate_cunit_hooks hooks = {on_started, on_finished, on_revised,
                                         NULL,       NULL,        on_stopped,
                                         on_planned};
    const char *fields[1] = {c->name};

    if ((child.fd < 0 && !child.replay) || child.depth > 0) {
        call_real(c);
        return c->result;
    }
    check_one_cunit(c);
    if (child.replay)
        return replay(c);
    if (!child.claimed)
        claim();
    if (child.list)
        list_and_exit();
    send_fixed("B", fields, 1);
    hooks.replay_preload = child.preload; /* known once claimed */
    run_gated(c, &hooks);
    /* One snippet for the YAML of all the run's windows, as a linked
     * binary prints it (leakgate_cunit_main). */
    if (*leakgate_gate_scope_hints(child.gate))
        fprintf(stderr, "leakgate: %s", leakgate_gate_scope_hints(child.gate));
    send_end();
    return c->result;
}

/* The interposers are the library's only exports besides malloc_conf
 * (preload.map). */
LEAKGATE_CUNIT_RUN_FUNCTIONS(__attribute__((visibility("default"))), intercept)
