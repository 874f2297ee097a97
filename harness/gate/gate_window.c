/* SPDX-License-Identifier: MIT */
/*
 * gate_window: the window's own state, below the gate's state machine
 * (gate.c) and its strategies (gate_suite.c, replay.c, gate_lean.c,
 * gate_fast.c, gate_results.c), which all call it and which it never
 * calls: opening and closing the current scope (a paused suite window
 * held aside while a test runs), its settings, its clock and peak meter,
 * the verdict of a window, whether a replay measures a test, the start
 * directory.  Owns no state of its own: everything is in struct
 * leakgate_gate (gate.h).
 */
#include "gate.h"

#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "diff.h"
#include "error.h"
#include "policy.h"
#include "profile.h"
#include "replay.h"
#include "report_parts.h"
#include "track.h"
#include "util.h"

/* The name of a suite's own window (gate.c says the same). */
#define SUITE_WINDOW "[suite]"

void
leakgate_gate__scope_reset(struct gate_scope *s)
{
    leakgate_util__free(s->suite);
    leakgate_util__free(s->test);
    leakgate_util__free(s->first_before);
    leakgate_diff__free(s->acc);
    leakgate_diff__free(s->run_acc);
    leakgate_diff__free(s->peak_diff);
    for (size_t i = 0; i < s->nruns; i++)
        leakgate_diff__free(s->runs[i]);
    leakgate_util__free(s->runs);
    memset(s, 0, sizeof *s);
}

/* The thresholds file's settings for suite/test ("[suite]" or NULL: the
 * suite's own window). */
void
leakgate_gate__resolve_window(struct leakgate_policy_settings *out,
                              const struct leakgate_gate *gate,
                              const char *suite,
                              const char *test)
{
    if (test && strcmp(test, SUITE_WINDOW) == 0)
        test = NULL;
    leakgate_policy__resolve(out, gate->config, suite, test);
    if (gate->has_peak_opt)
        leakgate_policy__apply_peak_option(out, gate->peak_opt);
}

void
leakgate_gate_settings(struct leakgate_window_settings *out,
                       const leakgate_gate *gate,
                       const char *suite,
                       const char *test)
{
    struct leakgate_policy_settings s;

    leakgate_gate__resolve_window(&s, gate, suite, test);
    /* A warm-up probe (replay.h) runs each listed test once unmeasured. */
    if (gate->replay.warmup && s.warmup == 0 && test &&
        strcmp(test, SUITE_WINDOW) != 0 &&
        leakgate_gate_measures(gate, suite, test))
        s.warmup = 1;
    out->warmup = s.warmup;
    out->suite_scope = s.suite_scope;
    out->repeat = s.repeat;
    out->rerun = s.rerun ? 1 : 0;
}

void
leakgate_gate__clock_start(struct leakgate_gate *gate)
{
    clock_gettime(CLOCK_MONOTONIC, &gate->cur.t0);
    if (gate->cur.settings.settle_ms > 0 &&
        leakgate_profile__live_bytes(&gate->cur.start_live) < 0)
        gate->cur.start_live = 0;
}

void
leakgate_gate__clock_stop(struct leakgate_gate *gate)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    gate->cur.seconds += (double)(t1.tv_sec - gate->cur.t0.tv_sec) +
                         (double)(t1.tv_nsec - gate->cur.t0.tv_nsec) / 1e9;
}

void
leakgate_gate__meter_stop(struct leakgate_gate *gate)
{
    if (gate->cur.metered)
        leakgate_track__meter_stop(&gate->cur.meter);
}

/* Give the scope back to the paused one it interrupted, if any. */
void
leakgate_gate__scope_close(struct leakgate_gate *gate)
{
    leakgate_gate__scope_reset(&gate->cur);
    if (gate->has_held) {
        gate->cur = gate->held;
        memset(&gate->held, 0, sizeof gate->held);
        gate->has_held = false;
    }
}

int
leakgate_gate__scope_open(struct leakgate_gate *gate,
                          const char *suite,
                          const char *test)
{
    struct gate_scope *s = &gate->cur;
    int rc;

    if (s->open && s->paused && !gate->has_held) {
        /* A paused scope (a suite window between init and cleanup) waits
         * while the inner scope (a test) runs. */
        gate->held = *s;
        gate->has_held = true;
        memset(s, 0, sizeof *s);
    }
    if (s->open)
        return leakgate_error__set(LEAKGATE_ESTATE,
                                   "begin %s/%s: %s/%s is still open", suite,
                                   test, s->suite, s->test);
    s->suite = leakgate_util__strdup(suite);
    s->test = leakgate_util__strdup(test);
    leakgate_gate__resolve_window(&s->settings, gate, suite, test);
    rc = leakgate_diff__new_empty(&s->acc);
    if (rc == 0)
        rc = leakgate_diff__new_empty(&s->run_acc);
    if (rc == 0 && (!s->suite || !s->test))
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "scope names");
    if (rc < 0)
        leakgate_gate__scope_close(gate);
    return rc;
}

static size_t
name_hash(const char *suite, const char *test)
{
    uint64_t h = leakgate_util__fnv1a(
        leakgate_util__fnv1a(
            leakgate_util__fnv1a(LEAKGATE_UTIL_FNV_BASIS, suite), "\t"),
        test);

    return (size_t)(h ^ (h >> 29));
}

static bool
same_name(const struct leakgate_verdict *v, const char *suite, const char *test)
{
    return strcmp(v->suite, suite) == 0 && strcmp(v->test, test) == 0;
}

static void
index_put(size_t *slots,
          size_t nslots,
          const struct leakgate_gate *gate,
          size_t i)
{
    const struct leakgate_verdict *v = gate->verdicts[i];
    size_t at = name_hash(v->suite, v->test) & (nslots - 1);

    while (slots[at] != 0) {
        /* One name, one slot: the newest record of it (as the scan). */
        if (same_name(gate->verdicts[slots[at] - 1], v->suite, v->test))
            break;
        at = (at + 1) & (nslots - 1);
    }
    slots[at] = i + 1;
}

void
leakgate_gate__index_verdict(struct leakgate_gate *gate, size_t i)
{
    if (2 * gate->nverdicts > gate->nslots) {
        size_t nslots = gate->nslots ? gate->nslots * 2 : 256;
        size_t *slots;

        while (nslots < 2 * gate->nverdicts)
            nslots *= 2;
        slots = leakgate_util__calloc(nslots, sizeof *slots);
        if (!slots) { /* found by a scan from now on */
            leakgate_util__free(gate->by_name);
            gate->by_name = NULL;
            gate->nslots = 0;
            return;
        }
        for (size_t k = 0; k < gate->nverdicts; k++)
            index_put(slots, nslots, gate, k);
        leakgate_util__free(gate->by_name);
        gate->by_name = slots;
        gate->nslots = nslots;
        return;
    }
    index_put(gate->by_name, gate->nslots, gate, i);
}

struct leakgate_verdict *
leakgate_gate__find_verdict(const struct leakgate_gate *gate,
                            const char *suite,
                            const char *test)
{
    if (gate->by_name && gate->nslots) {
        size_t at = name_hash(suite, test) & (gate->nslots - 1);

        for (; gate->by_name[at] != 0; at = (at + 1) & (gate->nslots - 1)) {
            struct leakgate_verdict *v = gate->verdicts[gate->by_name[at] - 1];

            if (same_name(v, suite, test))
                return v;
        }
        return NULL;
    }
    for (size_t i = gate->nverdicts; i-- > 0;) {
        struct leakgate_verdict *v = gate->verdicts[i];

        if (strcmp(v->suite, suite) == 0 && strcmp(v->test, test) == 0)
            return v;
    }
    return NULL;
}

void
leakgate_gate__go_home(const struct leakgate_gate *gate)
{
    if (gate->start_dir)
        (void)chdir(gate->start_dir);
}

int
leakgate_gate_measures(const leakgate_gate *gate,
                       const char *suite,
                       const char *test)
{
    size_t ls = strlen(suite);

    if (!gate->replay.child)
        return 1;
    for (size_t i = 0; i < gate->replay.n; i++) {
        const char *n = gate->replay.names[i];

        if (strncmp(n, suite, ls) == 0 && n[ls] == '\t' &&
            strcmp(n + ls + 1, test) == 0)
            return 1;
    }
    return 0;
}

void
leakgate_replay__cap_stacks(struct leakgate_gate *gate)
{
    if (!gate->replay.child)
        return;
    for (size_t i = 0; i < gate->nverdicts; i++) {
        struct leakgate_verdict *v = gate->verdicts[i];

        struct leakgate_verdict rest;
        struct leakgate_report_tally t;

        if (v->nstacks <= LEAKGATE_REPLAY_MAX_STACKS)
            continue;
        /* Stacks come largest first (diff.c); the process ends soon.  The
         * totals keep counting the ones left out. */
        rest = *v;
        rest.stacks = v->stacks + LEAKGATE_REPLAY_MAX_STACKS;
        rest.nstacks = v->nstacks - LEAKGATE_REPLAY_MAX_STACKS;
        rest.omitted_bytes = rest.omitted_objs = 0;
        rest.omitted_stacks = 0;
        leakgate_report__tally(&t, &rest);
        v->omitted_bytes += t.bytes > 0 ? (uint64_t)t.bytes : 0;
        v->omitted_objs += t.objs > 0 ? (uint64_t)t.objs : 0;
        v->omitted_stacks += t.ncounted;
        v->nstacks = LEAKGATE_REPLAY_MAX_STACKS;
    }
}
