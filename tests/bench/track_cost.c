/* SPDX-License-Identifier: MIT */
/*
 * track_cost: what one malloc+free costs under each way of gating, and
 * what one empty window costs, in one process (jemalloc as leakgate links
 * it: exact-mode malloc_conf, recording inactive).  Prints a Markdown
 * table; run by hand (docs/internals/performance-record.md quotes it):
 *
 *   build/bench/tests/bench/bench_track_cost [iterations]
 *
 * MALLOC_CONF changes the configuration under test (e.g. prof:false for
 * plain jemalloc, lg_prof_sample:19 for default sampling).
 *
 * Per malloc+free (64 bytes, from 5 and from 30 frames deep), medians of
 * 5 repetitions:
 *   prof inactive          the fast pass without the tracker (floor)
 *   profiling active       prof.active=true; with lg_prof_sample:0 every
 *                          allocation unwinds its stack (today's windows)
 *   wrappers, no window    tracker installed, outside windows
 *   tracker window         tracker recording (the fast first pass)
 *   runtime stacks         the fast pass as a gated test has it: the
 *                          stacks of allocations whose caller is the C
 *                          runtime are recorded (none here)
 *   every stack            the fast pass of a test whose thresholds
 *                          accept growth: every allocation's stack is
 *                          unwound and recorded (track_stacks.c)
 * Per empty window: leakgate_track__begin/end versus the exact gate's
 * leakgate_gate_begin/end (two dumps, parse, diff, judge).
 *
 * The peak meter (issue 16; docs/internals/performance-record.md "Peak meter:
 * mechanism and cost"), per malloc+free as above: meter on                the
 * wrappers' meter alone (global atomics: live, peak, allocations; sallocx per
 * call) tracker window + meter  the fast first pass as built since 3060c7b
 *   meter, trigger armed    an exact window's meter with a peak_limit
 *                           far above (profiling inactive here)
 *   two threads             both rows again with two threads churning at
 *                           once (the meter's counters are shared)
 * and jemalloc's own per-thread peak (thread.peak.reset/read): what the
 * pair costs per window, and what it and the meter read for a window
 * whose peak is 8 x 1 KiB on this thread, and for one whose peak is
 * 2 MiB held by a second thread.
 */
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leakgate/leakgate.h"
#include "profile.h"
#include "track.h"

#define REPS 5

static double
now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double
median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

static volatile int frames_left;

static __attribute__((noinline)) void
churn_at(int depth, size_t iterations)
{
    if (depth > 1) {
        churn_at(depth - 1, iterations);
    } else {
        for (size_t i = 0; i < iterations; i++) {
            void *volatile p = malloc(64);

            free(p);
        }
    }
    frames_left = depth; /* not a tail call: every frame stays */
}

static double
ns_per_op(int depth, size_t iterations)
{
    double v[REPS];

    for (int r = 0; r < REPS; r++) {
        double t0 = now_ns();

        churn_at(depth, iterations);
        v[r] = (now_ns() - t0) / (double)iterations;
    }
    return median(v, REPS);
}

static void
row(const char *what, size_t iterations)
{
    printf("| %s | %.0f | %.0f |\n", what, ns_per_op(5, iterations),
           ns_per_op(30, iterations));
}

/* A window per repetition: the stack tables count removed objects too,
 * and hold 2^18 objects per window. */
static double
ns_per_op_stacks(enum leakgate_track_stacks mode, int depth, size_t iterations)
{
    struct leakgate_track_result r;
    double v[REPS];

    for (int k = 0; k < REPS; k++) {
        double t0;

        (void)leakgate_track__stacks(mode);
        leakgate_track__begin();
        t0 = now_ns();
        churn_at(depth, iterations);
        v[k] = (now_ns() - t0) / (double)iterations;
        leakgate_track__end(&r);
    }
    (void)leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE);
    return median(v, REPS);
}

static void
row_stacks(const char *what, enum leakgate_track_stacks mode, size_t n)
{
    printf("| %s | %.0f | %.0f |\n", what, ns_per_op_stacks(mode, 5, n),
           ns_per_op_stacks(mode, 30, n));
}

static double
track_window_us(size_t windows)
{
    struct leakgate_track_result r;
    double v[REPS];

    for (int k = 0; k < REPS; k++) {
        double t0 = now_ns();

        for (size_t i = 0; i < windows; i++) {
            leakgate_track__begin();
            leakgate_track__end(&r);
        }
        v[k] = (now_ns() - t0) / (double)windows / 1e3;
    }
    return median(v, REPS);
}

static double
gate_window_us(leakgate_gate *gate, size_t windows, bool fast)
{
    double v[REPS];

    for (int k = 0; k < REPS; k++) {
        double t0 = now_ns();

        for (size_t i = 0; i < windows; i++) {
            if (fast)
                leakgate_gate_begin_fast(gate, "cost", "empty");
            else
                leakgate_gate_begin(gate, "cost", "empty");
            leakgate_gate_end(gate, 1, NULL);
        }
        v[k] = (now_ns() - t0) / (double)windows / 1e3;
    }
    return median(v, REPS);
}

static int
measure_ops(size_t n)
{
    printf("| configuration | ns per malloc+free, 5 frames deep | "
           "30 frames deep |\n|---|---:|---:|\n");
    row("jemalloc, profiling inactive (no tracker)", n);
    if (leakgate_profile__set_active(true) == 0) {
        row("profiling active (every allocation when lg_prof_sample:0)",
            n / 20);
        leakgate_profile__set_active(false);
    }
    if (leakgate_track__install() != 0) {
        fprintf(stderr, "track_cost: %s\n", leakgate_error_last());
        return 3;
    }
    row("tracker installed, no window open", n);
    leakgate_track__begin();
    row("tracker window open (the fast first pass)", n);
    {
        struct leakgate_track_result r;

        leakgate_track__end(&r);
    }
    row_stacks("tracker window, runtime stacks (a gated test's fast pass)",
               LEAKGATE_TRACK_STACKS_RUNTIME, n);
    row_stacks("tracker window, every stack recorded (accepted growth)",
               LEAKGATE_TRACK_STACKS_ALL, n / 40 < 100000 ? n / 40 : 100000);
    return 0;
}

/* The meter's rows: the wrappers meter while it is on. */
static long long
far_away(long long level, void *payload)
{
    (void)payload;
    return level + (1LL << 40);
}

static void
row_meter(const char *what, bool window, bool armed, size_t n)
{
    struct leakgate_track_result r;
    struct leakgate_track_meter m;

    if (window)
        leakgate_track__begin();
    leakgate_track__meter_start(NULL);
    if (armed)
        leakgate_track__meter_arm(1LL << 40, far_away, NULL);
    row(what, n);
    leakgate_track__meter_stop(&m);
    if (window)
        leakgate_track__end(&r);
}

/* Two threads churning at once: ns per malloc+free of each. */
struct churner {
    size_t iterations;
    double ns;
};

static void *
churn_thread(void *arg)
{
    struct churner *c = arg;

    c->ns = ns_per_op(5, c->iterations);
    return NULL;
}

static double
two_threads_ns(size_t iterations)
{
    struct churner a = {iterations, 0}, b = {iterations, 0};
    pthread_t t;

    if (pthread_create(&t, NULL, churn_thread, &b) != 0)
        return -1;
    churn_thread(&a);
    pthread_join(t, NULL);
    return (a.ns + b.ns) / 2;
}

static void
row_two_threads(const char *what, bool meter, size_t n)
{
    struct leakgate_track_result r;
    struct leakgate_track_meter m;

    leakgate_track__begin();
    if (meter)
        leakgate_track__meter_start(NULL);
    printf("| %s | %.0f | |\n", what, two_threads_ns(n));
    if (meter)
        leakgate_track__meter_stop(&m);
    leakgate_track__end(&r);
}

static int
measure_meter(size_t n)
{
    printf("\n| peak meter (issue 16) | ns per malloc+free, 5 frames deep | "
           "30 frames deep |\n|---|---:|---:|\n");
    row("wrappers, meter off (one relaxed load more than before)", n);
    row_meter("meter on (no tracker window)", false, false, n);
    row_meter("meter on, trigger armed (an exact window with a peak_limit)",
              false, true, n);
    {
        struct leakgate_track_result r;

        leakgate_track__begin();
        row("tracker window, meter off (the fast pass before 3060c7b)", n);
        leakgate_track__end(&r);
    }
    row_meter("tracker window + meter (the fast pass as built)", true, false,
              n);
    row_two_threads("two threads at once: tracker window, meter off", false, n);
    row_two_threads("two threads at once: tracker window + meter", true, n);
    return 0;
}

/* jemalloc's per-thread peak: thread.peak.reset, then thread.peak.read. */
static int
jemalloc_peak_reset(void)
{
    return mallctl("thread.peak.reset", NULL, NULL, NULL, 0);
}

static uint64_t
jemalloc_peak_read(void)
{
    uint64_t v = 0;
    size_t len = sizeof v;

    return mallctl("thread.peak.read", &v, &len, NULL, 0) == 0 ? v : 0;
}

static __attribute__((noinline)) void
working_set(size_t n)
{
    void *volatile blocks[64];

    for (size_t i = 0; i < n; i++)
        blocks[i] = malloc(1024);
    for (size_t i = 0; i < n; i++)
        free(blocks[i]);
}

static void *
hog(void *arg)
{
    char *volatile p = malloc((size_t)2 << 20);

    (void)arg;
    if (p)
        memset(p, 1, (size_t)2 << 20);
    free(p);
    return NULL;
}

static void
small_set(void)
{
    working_set(8);
}

static void
medium_set(void)
{
    working_set(64);
}

static void
big_here(void)
{
    hog(NULL);
}

static void
big_in_thread(void)
{
    pthread_t t;

    if (pthread_create(&t, NULL, hog, NULL) == 0)
        pthread_join(t, NULL);
}

/* One window of `what`, read both ways. */
static void
peak_both(const char *what, void (*fn)(void))
{
    struct leakgate_track_meter m;
    uint64_t jp;

    jemalloc_peak_reset();
    leakgate_track__meter_start(NULL);
    fn();
    leakgate_track__meter_stop(&m);
    jp = jemalloc_peak_read();
    printf("| %s | %llu | %llu |\n", what, (unsigned long long)m.peak,
           (unsigned long long)jp);
}

static int
measure_jemalloc_peak(void)
{
    double v[REPS];

    if (jemalloc_peak_reset() != 0) {
        printf("\n(thread.peak.reset: not available)\n");
        return 0;
    }
    for (int k = 0; k < REPS; k++) {
        double t0 = now_ns();
        uint64_t sum = 0;

        for (int i = 0; i < 20000; i++) {
            jemalloc_peak_reset();
            sum += jemalloc_peak_read();
        }
        v[k] = (now_ns() - t0) / 20000;
        if (sum == UINT64_MAX)
            puts("");
    }
    printf("\n| jemalloc thread.peak per window | ns |\n|---|---:|\n"
           "| thread.peak.reset + thread.peak.read (mallctl by name) | "
           "%.0f |\n",
           median(v, REPS));
    printf("\n| window | meter peak (B) | jemalloc thread.peak.read "
           "(B) |\n|---|---:|---:|\n");
    peak_both("8 x malloc(1 KiB), freed (peak_stable/small)", small_set);
    peak_both("64 x malloc(1 KiB), freed (peak_stable/medium)", medium_set);
    peak_both("2 MiB on this thread, freed (peak/freed_big)", big_here);
    peak_both("a second thread holds 2 MiB, joined (peak/thread)",
              big_in_thread);
    return 0;
}

static int
measure_windows(void)
{
    struct leakgate_gate_options opts;
    char arg0[] = "track_cost";
    char *argv[] = {arg0, NULL};
    leakgate_gate *gate = NULL;

    printf("\n| empty window | µs per window |\n|---|---:|\n");
    printf("| tracker (begin + end) | %.2f |\n", track_window_us(20000));
    if (leakgate_gate_options_parse(&opts, 1, argv) != 0 ||
        leakgate_gate_new(&gate, &opts) != 0) {
        printf("| exact gate | n/a (%s) |\n", leakgate_error_last());
        return 0;
    }
    printf("| fast gate window (leakgate_gate_begin_fast + end: tracker, "
           "verdict) | %.2f |\n",
           gate_window_us(gate, 2000, true));
    printf("| exact gate (2 dumps, parse, diff, judge) | %.1f |\n",
           gate_window_us(gate, 200, false));
    leakgate_gate_free(gate);
    return 0;
}

int
main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 2000000;
    int rc;

    if (n < 100) {
        fputs("usage: bench_track_cost [iterations >= 100]\n", stderr);
        return 2;
    }
    rc = measure_ops(n);
    if (rc == 0)
        rc = measure_meter(n);
    if (rc == 0)
        rc = measure_jemalloc_peak();
    if (rc == 0)
        rc = measure_windows();
    return rc;
}
