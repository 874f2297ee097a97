/* SPDX-License-Identifier: MIT */
/*
 * track_cost: what one malloc+free costs under each way of gating, and
 * what one empty window costs, in one process (jemalloc as leakgate links
 * it: exact-mode malloc_conf, recording inactive).  Prints a Markdown
 * table; run by hand (docs/performance.md quotes it):
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
 */
#include <stdbool.h>
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
        rc = measure_windows();
    return rc;
}
