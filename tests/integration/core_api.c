/* SPDX-License-Identifier: MIT */
/*
 * core_api: the framework-agnostic API (include/leakgate/leakgate.h) used
 * directly by a hand-written main, as a cmocka or Unity harness would:
 * scopes, pause/resume, repeat runs, misuse errors, and results files.
 * Prints "N passed, N failed"; exit 0 when every check passes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leakgate/leakgate.h"

static void *volatile sink[16];
static void *lazy_cache;
static size_t checks, failures;

#define CHECK(cond)                                                            \
    do {                                                                       \
        checks++;                                                              \
        if (!(cond)) {                                                         \
            failures++;                                                        \
            fprintf(stderr, "core_api.c:%d: check failed: %s\n", __LINE__,     \
                    #cond);                                                    \
        }                                                                      \
    } while (0)

__attribute__((noinline)) static void
leak(size_t n)
{
    static unsigned int next;

    sink[next++ % 16] = malloc(n);
}

__attribute__((noinline)) static void
lazy_lookup(void)
{
    if (!lazy_cache)
        lazy_cache = malloc(2048);
}

static const leakgate_verdict *
scope_in(leakgate_gate *gate,
         const char *suite,
         const char *test,
         void (*body)(void))
{
    const leakgate_verdict *v = NULL;

    CHECK(leakgate_gate_begin(gate, suite, test) == 0);
    body();
    CHECK(leakgate_gate_end(gate, 1, &v) == 0);
    return v;
}

static const leakgate_verdict *
scope(leakgate_gate *gate, const char *test, void (*body)(void))
{
    return scope_in(gate, "core", test, body);
}

static void
body_clean(void)
{
    free(malloc(100));
}

static void
body_leak(void)
{
    leak(24);
}

static void
check_scopes(leakgate_gate *gate)
{
    const leakgate_verdict *v = scope(gate, "clean", body_clean);

    CHECK(v && leakgate_verdict_status(v) == LEAKGATE_STATUS_PASS);
    CHECK(v && leakgate_verdict_stack_count(v) == 0);
    CHECK(v && strcmp(leakgate_verdict_report(v), "") == 0);
    v = scope(gate, "leak", body_leak);
    CHECK(v && leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL);
    CHECK(v && leakgate_verdict_retained_bytes(v) == 32);
    CHECK(v && strstr(leakgate_verdict_report(v), "core_api.c:"));
    CHECK(v && strcmp(leakgate_verdict_name(v), "core/leak") == 0);
}

/* The peak meter's figures: 1 MiB and 112 B live at once, then freed. */
static void
body_peak(void)
{
    void *big = malloc((size_t)1 << 20);
    void *small = malloc(100);

    sink[14] = big;
    sink[13] = small;
    free(small);
    free(big);
    sink[14] = sink[13] = NULL;
}

static void
check_peak(leakgate_gate *gate)
{
    const leakgate_verdict *v = scope(gate, "peak", body_peak);

    CHECK(v && leakgate_verdict_status(v) == LEAKGATE_STATUS_PASS);
    CHECK(v && leakgate_verdict_retained_bytes(v) == 0);
    if (v && !leakgate_verdict_peak_measured(v)) {
        /* No allocation wrappers (a sanitizer build): nothing measured. */
        CHECK(leakgate_verdict_peak_bytes(v) == 0);
        CHECK(leakgate_verdict_allocations(v) == 0);
        return;
    }
    CHECK(v && leakgate_verdict_peak_bytes(v) == ((uint64_t)1 << 20) + 112);
    CHECK(v && leakgate_verdict_allocations(v) == 2);
    v = scope(gate, "peak_clean", body_clean);
    CHECK(v && leakgate_verdict_peak_measured(v));
    CHECK(v && leakgate_verdict_peak_bytes(v) == 112);
    CHECK(v && leakgate_verdict_allocations(v) == 1);
}

static void
check_pause(leakgate_gate *gate)
{
    const leakgate_verdict *v = NULL;

    CHECK(leakgate_gate_begin(gate, "core", "paused") == 0);
    CHECK(leakgate_gate_pause(gate) == 0);
    leak(500); /* not counted: between pause and resume */
    CHECK(leakgate_gate_resume(gate) == 0);
    CHECK(leakgate_gate_end(gate, 1, &v) == 0);
    CHECK(v && leakgate_verdict_status(v) == LEAKGATE_STATUS_PASS);
}

static void
check_repeat(leakgate_gate *gate)
{
    const leakgate_verdict *v = NULL;

    /* Lazy initialisation grows in the first run only: a note. */
    CHECK(leakgate_gate_begin(gate, "core", "repeat_lazy") == 0);
    lazy_lookup();
    CHECK(leakgate_gate_next_run(gate) == 0);
    lazy_lookup();
    CHECK(leakgate_gate_next_run(gate) == 0);
    lazy_lookup();
    CHECK(leakgate_gate_end(gate, 1, &v) == 0);
    CHECK(v && leakgate_verdict_status(v) == LEAKGATE_STATUS_PASS);
    CHECK(v && strstr(leakgate_verdict_report(v), "one-time growth"));
    /* A leak grows in every run: reported with its bytes per run. */
    CHECK(leakgate_gate_begin(gate, "core", "repeat_leak") == 0);
    leak(100);
    CHECK(leakgate_gate_next_run(gate) == 0);
    leak(100);
    CHECK(leakgate_gate_end(gate, 1, &v) == 0);
    CHECK(v && leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL);
    CHECK(v && leakgate_verdict_retained_bytes(v) == 112);
}

static void
check_misuse(leakgate_gate *gate)
{
    CHECK(leakgate_gate_end(gate, 1, NULL) == LEAKGATE_ESTATE);
    CHECK(leakgate_gate_pause(gate) == LEAKGATE_ESTATE);
    CHECK(leakgate_gate_resume(gate) == LEAKGATE_ESTATE);
    CHECK(leakgate_gate_next_run(gate) == LEAKGATE_ESTATE);
    CHECK(leakgate_gate_begin(gate, "core", "a") == 0);
    CHECK(leakgate_gate_begin(gate, "core", "b") == LEAKGATE_ESTATE);
    CHECK(strstr(leakgate_error_last(), "core/a is still open") != NULL);
    CHECK(leakgate_gate_end(gate, 0, NULL) == 0);
    /* NULL where a gate or a name belongs: an error, never a crash. */
    CHECK(leakgate_gate_begin(gate, "s", NULL) == LEAKGATE_EUSAGE);
    CHECK(strstr(leakgate_error_last(),
                 "leakgate_gate_begin: the test name must not be NULL") !=
          NULL);
    CHECK(leakgate_gate_begin(NULL, "s", "t") == LEAKGATE_EUSAGE);
    CHECK(leakgate_gate_begin_fast(gate, NULL, "t") == LEAKGATE_EUSAGE);
    CHECK(leakgate_gate_begin_held(NULL, "s", "t") == LEAKGATE_EUSAGE);
    CHECK(leakgate_gate_end(NULL, 1, NULL) == LEAKGATE_EUSAGE);
    CHECK(leakgate_gate_note_failure(gate, NULL, "t", NULL, 0, "x") ==
          LEAKGATE_EUSAGE);
    CHECK(leakgate_gate_new(NULL, NULL) == LEAKGATE_EUSAGE);
    /* The gate still works after them. */
    CHECK(leakgate_gate_begin(gate, "core", "c") == 0);
    CHECK(leakgate_gate_end(gate, 0, NULL) == 0);
}

static void
body_leak24(void)
{
    leak(24);
}

/* A cache made on first use: growth that happens once. */
static void
body_lazy(void)
{
    static void *once;

    if (!once)
        once = malloc(512);
    sink[15] = once;
}

/* The fast first pass: a clean scope passes without a re-run; a leaking
 * one asks for a re-run whose exact verdict names the first pass; growth
 * that does not recur waits for a replay; a declined re-run is not
 * judged; fast scopes cannot pause. */
static void
check_fast(leakgate_gate *gate)
{
    const leakgate_verdict *v = NULL;
    void *p;

    CHECK(leakgate_gate_fast_available(gate, NULL) == 1);
    CHECK(leakgate_gate_decline_rerun(gate, "no") == LEAKGATE_ESTATE);
    CHECK(leakgate_gate_begin_fast(gate, "fast", "clean") == 0);
    CHECK(leakgate_gate_pause(gate) == LEAKGATE_ESTATE);
    CHECK(leakgate_gate_next_run(gate) == LEAKGATE_ESTATE);
    body_clean();
    p = malloc(64); /* the framework's: excluded */
    leakgate_gate_exclude_object(gate, p);
    CHECK(leakgate_gate_end(gate, 1, &v) == 0);
    free(p);
    CHECK(v && leakgate_verdict_status(v) == LEAKGATE_STATUS_PASS);

    v = NULL;
    CHECK(leakgate_gate_begin_fast(gate, "fast", "leak") == 0);
    body_leak24();
    CHECK(leakgate_gate_end(gate, 1, &v) == LEAKGATE_GATE_RERUN);
    CHECK(v == NULL);
    v = scope_in(gate, "fast", "leak", body_leak24);
    CHECK(v && leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL);
    CHECK(v && leakgate_verdict_retained_bytes(v) == 32);
    CHECK(v && strstr(leakgate_verdict_report(v),
                      "first pass: fast (no stacks) left 32 B in 1 object; "
                      "these stacks are from an exact re-run") != NULL);
    CHECK(v && strstr(leakgate_verdict_report(v), "body_leak24") != NULL);

    CHECK(leakgate_gate_begin_fast(gate, "fast", "once") == 0);
    body_lazy();
    CHECK(leakgate_gate_end(gate, 1, &v) == LEAKGATE_GATE_RERUN);
    v = scope_in(gate, "fast", "once", body_lazy);
    CHECK(v && leakgate_verdict_status(v) == LEAKGATE_STATUS_NOT_JUDGED);

    CHECK(leakgate_gate_begin_fast(gate, "fast", "declined") == 0);
    body_leak24();
    CHECK(leakgate_gate_end(gate, 1, &v) == LEAKGATE_GATE_RERUN);
    CHECK(leakgate_gate_decline_rerun(gate, "it cannot run twice") == 0);
}

/* --exact: begin_fast opens exact scopes. */
static void
check_exact_option(void)
{
    struct leakgate_gate_options opts = LEAKGATE_GATE_OPTIONS_INIT;
    const leakgate_verdict *v = NULL;
    const char *why = NULL;
    leakgate_gate *gate;

    opts.exact = 1;
    opts.color = 0;
    CHECK(leakgate_gate_new(&gate, &opts) == 0);
    CHECK(leakgate_gate_fast_available(gate, &why) == 0);
    CHECK(why && strstr(why, "--exact") != NULL);
    CHECK(leakgate_gate_begin_fast(gate, "exact", "leak") == 0);
    body_leak24();
    CHECK(leakgate_gate_end(gate, 1, &v) == 0);
    CHECK(v && leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL);
    CHECK(v && strstr(leakgate_verdict_report(v), "first pass") == NULL);
    leakgate_gate_free(gate);
}

int
main(int argc, char **argv)
{
    struct leakgate_gate_options opts = LEAKGATE_GATE_OPTIONS_INIT;
    leakgate_gate *gate;

    if (argc > 1)
        opts.json_path = argv[1];
    opts.color = 0;
    if (leakgate_gate_new(&gate, &opts) < 0) {
        fprintf(stderr, "core_api: %s\n", leakgate_error_last());
        return 3;
    }
    check_scopes(gate);
    check_peak(gate);
    check_pause(gate);
    check_repeat(gate);
    check_misuse(gate);
    check_fast(gate);
    CHECK(leakgate_gate_note_failure(gate, "core", "clean", "x.c", 3,
                                     "an assertion") == 0);
    CHECK(leakgate_gate_failures(gate) == 3);
    CHECK(leakgate_gate_write_results(gate) == 0);
    leakgate_gate_free(gate);
    check_exact_option();
    printf("%zu passed, %zu failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
