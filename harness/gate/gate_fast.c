/* SPDX-License-Identifier: MIT */
/*
 * gate_fast: the fast first pass of the core API (track.h does the
 * counting).  A fast window records no stacks and takes no dump: the
 * tracker notes what the window allocates and forgets what it frees.
 *
 *   nothing left live  -> the verdict exact mode gives an empty diff
 *   something left     -> leakgate_gate_end() returns LEAKGATE_GATE_RERUN;
 *                         the harness runs the code again in an exact
 *                         window, which the tracker watches too
 *   the re-run left the same objects and bytes
 *                      -> the exact re-run's verdict stands
 *   it left a different amount (growth that happens once: a lazy
 *   initialisation, a cache filled on first use)
 *                      -> NOT_JUDGED, needs_replay: only a replay of the
 *                         run up to this test (replay.h) measures it as
 *                         exact mode would
 *
 * Why an empty table proves a clean window: track.h.
 */
#include <stdio.h>
#include <string.h>

#include "diff.h"
#include "error.h"
#include "gate.h"
#include "policy.h"
#include "reach.h"
#include "reach_stop.h"
#include "report.h"
#include "track.h"
#include "track_hot.h"
#include "util.h"

/* Hand the tracker the globs of every ignore entry that applies (the
 * built-in list unless the file turns it off, and the file's own): the
 * runtime functions whose allocations a window unwinds (track.h). */
static int
runtime_functions(const struct leakgate_config *cfg)
{
    size_t nbuiltin = 0, n = 0, cap = 0;
    const struct leakgate_config_ignore *builtin =
        leakgate_policy__builtin_ignores(&nbuiltin);
    const char **globs;
    int rc;

    if (cfg && !cfg->builtin_ignore)
        nbuiltin = 0;
    for (size_t i = 0; i < nbuiltin; i++)
        cap += builtin[i].nframes;
    for (size_t i = 0; cfg && i < cfg->nignores; i++)
        cap += cfg->ignores[i].nframes;
    globs = leakgate_util__calloc(cap ? cap : 1, sizeof *globs);
    if (!globs)
        return leakgate_error__set(LEAKGATE_ENOMEM, "track: globs");
    for (size_t i = 0; i < nbuiltin; i++) {
        for (size_t k = 0; k < builtin[i].nframes; k++)
            globs[n++] = builtin[i].frames[k];
    }
    for (size_t i = 0; cfg && i < cfg->nignores; i++) {
        for (size_t k = 0; k < cfg->ignores[i].nframes; k++)
            globs[n++] = cfg->ignores[i].frames[k];
    }
    rc = leakgate_track__runtime_functions(globs, n);
    leakgate_util__free(globs);
    return rc;
}

void
leakgate_gate__fast_init(struct leakgate_gate *gate)
{
    /* Installed with --exact too: `scope: suite` judges per object, and
     * the shared-fixture hint watches what failing tests left. */
    int rc = leakgate_track__install();

    if (gate->opts.exact) {
        snprintf(gate->fast_off, sizeof gate->fast_off,
                 "--exact: every window is exact");
        return;
    }
    if (rc < 0) {
        snprintf(gate->fast_off, sizeof gate->fast_off,
                 "leakgate's allocation wrappers are not available (%s)",
                 leakgate_error_last());
        return;
    }
    gate->fast = true;
    (void)runtime_functions(gate->config);
}

int
leakgate_gate_fast_available(const leakgate_gate *gate, const char **why_out)
{
    if (why_out)
        *why_out = gate->fast ? "" : gate->fast_off;
    return gate->fast ? 1 : 0;
}

/* The thresholds let this window keep some growth. */
static bool
accepts_growth(const struct leakgate_policy_settings *set)
{
    return set->stack_limit > 0 ||
           (set->test_entry && set->test_entry->nstacks > 0) ||
           (set->suite_entry && set->suite_entry->nstacks > 0);
}

static int rewrite_report(struct leakgate_gate *gate,
                          struct leakgate_verdict *v);

/* gate_fork.c's ledger (gate.h). */
uint64_t
leakgate_gate__ledger_freed(const struct leakgate_gate *gate)
{
    uint64_t bytes = 0, objs = 0;
    bool unwatched = false;

    if (!gate->replay.ledger)
        return 0;
    leakgate_track__watch_freed(LEAKGATE_GATE__LEDGER, &bytes, &objs,
                                &unwatched);
    /* An object the watch had no room for might be freed unseen. */
    return unwatched ? UINT64_MAX : objs;
}

/* A replay's window by ordinals (gate_fork.c) left r: its stacks are the
 * exact window's when it left what its logging copy left, no thread took
 * part, and it freed nothing the ledger holds. */
static bool
faithful(const struct leakgate_gate *gate,
         const struct leakgate_track_result *r)
{
    const struct gate_scope *s = &gate->cur;

    return r->live_objs == s->logged.live_objs &&
           r->live_bytes == s->logged.live_bytes && r->foreign_allocs == 0 &&
           leakgate_track__alone() &&
           leakgate_gate__ledger_freed(gate) == s->ledger_freed;
}

/* Remember which window the tracker's generation is (no allocation:
 * the window is open). */
static void
note_starter(struct leakgate_gate *gate, const char *suite, const char *test)
{
    uint32_t gen = leakgate_track__window_gen();
    size_t n = GATE_STARTERS;

    if (!gate->starters)
        return;
    /* "suite/test", cut as snprintf() would: once per window, no format. */
    gate->starters[gen % n].gen = gen;
    (void)leakgate_util__join_to(gate->starters[gen % n].name,
                                 sizeof gate->starters[0].name, suite, '/',
                                 test);
}

/* The hint of a window a thread started by an earlier window allocated
 * in: those allocations were not this window's (track_hot.h). */
static int
foreign_hint(struct leakgate_gate *gate, struct leakgate_verdict *v)
{
    const struct gate_scope *s = &gate->cur;
    size_t n = GATE_STARTERS;
    uint32_t gen = s->first.foreign_gen;
    const char *who = gate->starters && gate->starters[gen % n].gen == gen
                          ? gate->starters[gen % n].name
                          : "an earlier test";
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    if (s->first.foreign_allocs == 0 || v->hint)
        return 0;
    leakgate_buf__printf(
        &b,
        "%llu allocation%s made during this test by a thread that %s "
        "started (still running after its window closed) are not counted "
        "here: they are that test's",
        (unsigned long long)s->first.foreign_allocs,
        s->first.foreign_allocs == 1 ? "" : "s", who);
    v->hint = leakgate_buf__take(&b);
    if (!v->hint)
        return leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
    return rewrite_report(gate, v);
}

/* Open a fast window; preset: the tracker's stack mode is chosen
 * already (gate_fork.c). */
static int
open_fast(struct leakgate_gate *gate,
          const char *suite,
          const char *test,
          bool held,
          bool preset)
{
    struct gate_scope *s = &gate->cur;
    int rc = leakgate_gate__scope_open(gate, suite, test);

    if (rc < 0)
        return rc;
    s->fast = true;
    s->held = held;
    /* Stacks of what the test may keep: all its allocations when it is
     * held or its thresholds accept growth, else the C runtime's
     * (built-in ignore list); a window that keeps only such growth needs
     * no replay. */
    if (!preset)
        (void)leakgate_track__stacks(held || accepts_growth(&s->settings)
                                         ? LEAKGATE_TRACK_STACKS_ALL
                                         : LEAKGATE_TRACK_STACKS_RUNTIME);
    /* A first pass's test window logs its allocations' addresses: if it
     * leaves something, its replay selects by those ordinals
     * (gate_fork.c). */
    if (!preset && !held && !gate->replay.child &&
        !accepts_growth(&s->settings) && !s->settings.peak_limited) {
        s->first_logged = leakgate_track__first_log_start() == 0;
        if (!s->first_logged)
            leakgate_error__clear(); /* the replay runs a logging copy */
    }
    leakgate_gate__clock_start(gate);
    rc = leakgate_track__begin();
    if (rc < 0) {
        leakgate_gate__scope_close(gate);
        return rc;
    }
    note_starter(gate, suite, test);
    leakgate_track__own_threads();
    leakgate_track__meter_start(NULL);
    s->metered = true;
    s->open = true;
    return 0;
}

int
leakgate_gate__fast_open(struct leakgate_gate *gate,
                         const char *suite,
                         const char *test,
                         bool held)
{
    return open_fast(gate, suite, test, held, false);
}

int
leakgate_gate__recorded_open(struct leakgate_gate *gate,
                             const char *suite,
                             const char *test)
{
    struct leakgate_policy_settings set;
    int rc;

    if (!leakgate_track__installed() || gate->lean)
        return 0;
    /* A peak names its stacks from a dump at the peak, `settle` waits on
     * the profile's counters, and a thread the window did not start may
     * allocate in it: those windows are measured on dumps. */
    leakgate_gate__resolve_window(&set, gate, suite, test);
    if (set.peak_limited || set.settle_ms > 0 ||
        !(leakgate_track__alone() || leakgate_reach__no_other_thread()))
        return 0;
    if (leakgate_track__carry() < 0 ||
        leakgate_track__stacks(LEAKGATE_TRACK_STACKS_ALL) < 0) {
        leakgate_error__clear(); /* measured on dumps */
        return 0;
    }
    rc = open_fast(gate, suite, test, false, true);
    if (rc < 0)
        return rc;
    gate->cur.recorded = true;
    return 1;
}

int
leakgate_gate__fast_open_preset(struct leakgate_gate *gate,
                                const char *suite,
                                const char *test)
{
    return open_fast(gate, suite, test, false, true);
}

void
leakgate_gate_set_runner(leakgate_gate *gate,
                         const void *begin,
                         const void *end)
{
    (void)gate;
    leakgate_track__runner((uintptr_t)begin, (uintptr_t)end);
}

void
leakgate_gate_exclude_object(leakgate_gate *gate, const void *ptr)
{
    (void)gate;
    if (ptr && leakgate_track__installed())
        leakgate_track__forget(ptr);
}

void
leakgate_gate__grew_clear(struct leakgate_gate *gate)
{
    leakgate_util__free(gate->grew.suite);
    leakgate_util__free(gate->grew.test);
    memset(&gate->grew, 0, sizeof gate->grew);
}

uint32_t
leakgate_gate__watch_id(struct leakgate_gate *gate)
{
    /* 4095 is gate_fork.c's ledger. */
    uint32_t id = ++gate->watch_next % 4095;

    return id ? id : ++gate->watch_next % 4095;
}

/* The window grew by *r: LEAKGATE_GATE_RERUN, gate->grew says how much.
 * watched: the owner its objects are watched for already (gate_lean.c),
 * or 0: what the last tracker window left is watched now, for the suite. */
static int
remember_growth(struct leakgate_gate *gate,
                bool unknown,
                const struct leakgate_track_result *r,
                uint32_t watched)
{
    struct gate_grew *g = &gate->grew;

    leakgate_gate__grew_clear(gate);
    g->suite = leakgate_util__strdup(gate->cur.suite);
    g->test = leakgate_util__strdup(gate->cur.test);
    g->unknown = unknown;
    g->r = *r;
    g->meter = gate->cur.meter;
    g->metered = gate->cur.metered;
    g->settings = gate->cur.settings;
    /* Does the rest of the suite free it?  (a shared fixture: gate.c) */
    if (!unknown && watched) {
        g->watch_id = watched;
    } else if (!unknown) {
        g->watch_id = leakgate_gate__watch_id(gate);
        (void)leakgate_track__watch_left(g->watch_id);
    }
    if (!g->suite || !g->test)
        return leakgate_error__set(LEAKGATE_ENOMEM, "fast window");
    return LEAKGATE_GATE_RERUN;
}

/* The end of a window leakgate_gate__recorded_open() opened, which left
 * *r (rc: leakgate_track__end()'s): its growth by stack, as an exact
 * window's dumps give it, in cur.acc. */
static int
recorded_stop(struct leakgate_gate *gate,
              int rc,
              const struct leakgate_track_result *r)
{
    struct gate_scope *s = &gate->cur;
    struct leakgate_diff *stacks = NULL;

    /* An aborted test (a fatal assertion) is NOT_JUDGED, with what it
     * left, as an exact window's dumps show it. */
    if (rc == 0 && r->foreign_allocs == 0) {
        if (r->live_objs > 0 && leakgate_reach__classify() != 0)
            leakgate_error__clear(); /* reachability not known */
        rc = leakgate_diff__of_track_left(&stacks);
        if (rc == LEAKGATE_ENOTFOUND && r->live_objs == 0) {
            rc = 0; /* it left nothing: no stack can have grown */
            leakgate_error__clear();
        }
        if (rc == LEAKGATE_ENOMEM)
            return rc;
        if (rc == 0) {
            if (stacks) {
                leakgate_diff__free(s->acc);
                s->acc = stacks;
            }
            s->watched = true; /* what it left is the tracker's */
            return 0;
        }
        leakgate_error__clear();
    }
    if (s->aborted)
        return 0;
    s->aborted = true;
    snprintf(s->aborted_why, sizeof s->aborted_why, "%s",
             rc != 0 ? "leakgate could not keep the stack of every "
                       "allocation of this test (its tables were full)"
                     : "a thread an earlier test started allocated "
                       "during this test");
    return 0;
}

int
leakgate_gate__fast_stop(struct leakgate_gate *gate)
{
    struct gate_scope *s = &gate->cur;
    struct leakgate_track_result r;
    struct leakgate_diff *stacks = NULL;
    int rc;

    leakgate_gate__settle(gate);
    leakgate_gate__meter_stop(gate);
    rc = leakgate_track__end(&r);
    if (s->first_logged)
        leakgate_track__first_log_stop();
    leakgate_gate__clock_stop(gate);
    if (rc == LEAKGATE_ESTATE)
        return rc;
    s->first = r;
    s->first_unknown = rc < 0;
    if (s->deferred)
        return 0; /* an exact replay measures it (gate_fork.c) */
    if (s->recorded)
        return recorded_stop(gate, rc, &r);
    /* Over its peak limit: an exact measurement names the stacks that
     * held the peak (a replay, as for a leak).  A test of a `scope:
     * suite` suite that left objects is judged at its suite's end as
     * always, on this peak; the replay only adds the stacks (replay.c). */
    if (!s->aborted && s->settings.peak_limited &&
        s->meter.peak > s->settings.peak_limit) {
        if (!s->held || (rc == 0 && r.live_objs == 0))
            return remember_growth(gate, rc < 0, &r, 0);
        s->peak_stacks_wanted = !gate->replay.child;
    }
    if (s->held && rc < 0 && !s->aborted) {
        s->aborted = true;
        snprintf(s->aborted_why, sizeof s->aborted_why,
                 "leakgate could not count what this test left (its table "
                 "could not grow)");
    }
    if (s->ordinals) {
        /* A replay's window by ordinals: its stacks are the exact
         * window's when it left what its logging run left
         * (gate_fork.c); else an exact replay measures it. */
        if (rc == 0 && faithful(gate, &r) && r.live_objs > 0 &&
            leakgate_reach__classify() != 0)
            leakgate_error__clear(); /* reachability not known */
        if (rc == 0 && faithful(gate, &r) &&
            (r.live_objs == 0 || leakgate_diff__of_track_left(&stacks) == 0)) {
            if (stacks) {
                leakgate_diff__free(s->acc);
                s->acc = stacks;
            }
            return 0;
        }
        s->deferred = true;
        return 0;
    }
    if (s->aborted)
        return 0; /* NOT_JUDGED whatever it left, as in exact mode */
    if (s->held)
        return r.live_objs == 0 ? 0 : LEAKGATE_GATE__HOLD;
    if (rc == 0 && r.live_objs == 0)
        return 0;
    if (rc == 0 && leakgate_diff__of_track_left(&stacks) == 0) {
        leakgate_diff__free(s->acc);
        s->acc = stacks;
        s->fast_stacks = true;
        return 0;
    }
    return remember_growth(gate, rc < 0, &r, 0);
}

int
leakgate_gate__fast_untrusted(struct leakgate_gate *gate)
{
    return remember_growth(gate, false, &gate->cur.first, 0);
}

int
leakgate_gate__lean_grew(struct leakgate_gate *gate)
{
    /* Its pieces' objects are watched already (gate_lean.c). */
    return remember_growth(gate, gate->cur.first_unknown, &gate->cur.first,
                           gate->cur.lean_owner);
}

void
leakgate_gate__fast_rerun_claim(struct leakgate_gate *gate)
{
    struct gate_grew *g = &gate->grew;
    struct gate_scope *s = &gate->cur;

    if (!g->suite || strcmp(g->suite, s->suite) != 0 ||
        strcmp(g->test, s->test) != 0)
        return;
    s->rerun = true;
    s->first = g->r;
    s->first_unknown = g->unknown;
    leakgate_gate__grew_clear(gate);
}

static int
rewrite_report(struct leakgate_gate *gate, struct leakgate_verdict *v)
{
    leakgate_util__free(v->report);
    v->report = leakgate_report__text(v, &gate->env, false);
    return v->report ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "report");
}

/* The re-run is a faithful repetition of the fast run when it left the
 * same objects and bytes behind. */
static bool
recurred(const struct gate_scope *s)
{
    return !s->first_unknown && s->first.live_objs == s->second.live_objs &&
           s->first.live_bytes == s->second.live_bytes;
}

int
leakgate_gate__fast_annotate(struct leakgate_gate *gate,
                             struct leakgate_verdict *v)
{
    const struct gate_scope *s = &gate->cur;
    struct leakgate_buf why = LEAKGATE_BUF_INIT;
    char n[4][32];

    if (s->recorded)
        return 0; /* an exact window */
    if (s->held) {
        v->how = LEAKGATE_MEASURED_SUITE_END;
        return 0;
    }
    if (s->lean) { /* a lean window that left nothing (gate_lean.c) */
        v->how = LEAKGATE_MEASURED_FAST;
        return 0;
    }
    if (s->fast && s->ordinals) {
        /* What it left, for the first process to compare with its fast
         * first pass (replay.c), as an exact replayed window says. */
        v->how = LEAKGATE_MEASURED_REPLAY;
        v->first_bytes = s->first.live_bytes;
        v->first_objs = s->first.live_objs;
        return 0;
    }
    if (s->fast) {
        v->how = LEAKGATE_MEASURED_FAST;
        if (foreign_hint(gate, v) < 0)
            return LEAKGATE_ENOMEM;
        if (v->status != LEAKGATE_STATUS_NOT_JUDGED || s->first.live_objs == 0)
            return 0;
        /* A fatal assertion: exact mode would show what it left; it
         * cannot run again here (CUnit would count its failure twice),
         * a replay measures it. */
        v->first_bytes = s->first.live_bytes;
        v->first_objs = s->first.live_objs;
        v->needs_replay = true;
        v->rerun_declined = true;
        return rewrite_report(gate, v);
    }
    if (gate->replay.child && s->watched) {
        /* What this replayed window left, for the first process to
         * compare with its fast first pass (replay.c). */
        v->how = LEAKGATE_MEASURED_REPLAY;
        v->first_bytes = s->second.live_bytes;
        v->first_objs = s->second.live_objs;
        return 0;
    }
    if (!s->rerun)
        return 0;
    v->how = LEAKGATE_MEASURED_RERUN;
    v->first_bytes = s->first.live_bytes;
    v->first_objs = s->first.live_objs;
    if (recurred(s) || v->status == LEAKGATE_STATUS_NOT_JUDGED)
        return v->report && *v->report ? rewrite_report(gate, v) : 0;
    if (s->first_unknown)
        leakgate_buf__printf(&why, "the fast first pass could not count what "
                                   "this test left (out of memory)");
    else
        leakgate_buf__printf(
            &why,
            "the fast first pass left %s B in %s objects, an exact "
            "re-run %s B in %s objects: growth that does not recur "
            "(a lazy initialisation, a cache filled once)",
            leakgate_util__group_digits(n[0], sizeof n[0], s->first.live_bytes,
                                        false),
            leakgate_util__group_digits(n[1], sizeof n[1], s->first.live_objs,
                                        false),
            leakgate_util__group_digits(n[2], sizeof n[2], s->second.live_bytes,
                                        false),
            leakgate_util__group_digits(n[3], sizeof n[3], s->second.live_objs,
                                        false));
    leakgate_buf__puts(&why, "; an exact replay of the run up to this test "
                             "measures it");
    v->needs_replay = true;
    v->status = LEAKGATE_STATUS_NOT_JUDGED;
    leakgate_util__free(v->not_judged_why);
    v->not_judged_why = leakgate_buf__take(&why);
    leakgate_util__free(v->report);
    v->report = leakgate_util__strdup("");
    if (!v->not_judged_why || !v->report)
        return leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
    return 0;
}

int
leakgate_gate__fast_declined(struct leakgate_gate *gate,
                             struct leakgate_verdict *v,
                             const char *why)
{
    const struct gate_grew *g = &gate->grew;
    struct leakgate_buf text = LEAKGATE_BUF_INIT;
    char nb[32], no[32];

    leakgate_buf__printf(
        &text, "the fast first pass left %s B in %s objects; %s",
        leakgate_util__group_digits(nb, sizeof nb, g->r.live_bytes, false),
        leakgate_util__group_digits(no, sizeof no, g->r.live_objs, false),
        why ? why : "it was not run again");
    v->measured = true;
    v->how = LEAKGATE_MEASURED_RERUN;
    v->first_bytes = g->r.live_bytes;
    v->first_objs = g->r.live_objs;
    v->peak_known = g->metered;
    v->peak_bytes = g->meter.peak;
    v->allocations = g->meter.allocs;
    v->settings = g->settings;
    v->status = LEAKGATE_STATUS_NOT_JUDGED;
    v->needs_replay = true; /* until leakgate_gate_replay() */
    v->rerun_declined = true;
    v->watch_id = g->watch_id;
    leakgate_util__free(v->not_judged_why);
    v->not_judged_why = leakgate_buf__take(&text);
    return v->not_judged_why ? rewrite_report(gate, v)
                             : leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
}
