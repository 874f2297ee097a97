/* SPDX-License-Identifier: MIT */
/*
 * gate: window lifecycle of the core API, the state machine above its
 * strategies.  begin = open the scope with the strategy it is measured
 * with (an exact piece: gate_exact.c; a fast or held window:
 * gate_fast.c; a lean one: gate_lean.c); pause/resume = close/open a
 * piece; end = stop it, judge (gate_judge.c), write what a failure
 * leaves (gate_results.c) and keep the verdict.  The strategies never
 * call back up: what they need of a window is in gate_window.c and
 * gate_exact.c, below them.  Only mallctl runs while recording.
 */
#include "gate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "intercept.h"
#include "options.h"
#include "symbolize.h"
#include "outputs.h"
#include "policy.h"
#include "reach.h"
#include "replay.h"
#include "results.h"
#include "stackwalk.h"
#include "thresholds.h"
#include "util.h"

static int
load_config(struct leakgate_gate *gate)
{
    /* Options not parsed (LEAKGATE_GATE_OPTIONS_INIT) still get the
     * file the build named. */
    const char *path = leakgate_config__path(
        gate->opts.thresholds_path ? gate->opts.thresholds_path
                                   : leakgate_options__build_thresholds());
    int rc;

    if (!path)
        return leakgate_config__new_default(&gate->config);
    gate->thresholds_path = leakgate_util__strdup(path);
    if (!gate->thresholds_path)
        return leakgate_error__set(LEAKGATE_ENOMEM, "thresholds path");
    /* --update-thresholds creates the file it was given (or the build
     * named) when it does not exist yet. */
    if (gate->opts.update_thresholds && access(path, F_OK) != 0 &&
        errno == ENOENT)
        return leakgate_config__new_default(&gate->config);
    rc = leakgate_config__load(&gate->config, path, NULL);
    if (rc == LEAKGATE_ENOMEM)
        return rc;
    /* Every failure to read the file is a configuration error (exit 2);
     * the detail from config names the file and the cause. */
    return rc < 0 ? LEAKGATE_ECONFIG : 0;
}

/* The outputs as absolute paths, so that a test's chdir() cannot move
 * them, each checked before the run (exit 2 for a link, a FIFO, a
 * device, another user's file or store: outputs.c). */
static int
resolve_outputs(struct leakgate_gate *gate)
{
    const char **specs[3] = {&gate->opts.junit_path, &gate->opts.json_path,
                             &gate->opts.report_dir};
    static const enum leakgate_outputs_kind kinds[3] = {
        LEAKGATE_OUTPUTS_JUNIT, LEAKGATE_OUTPUTS_JSON, LEAKGATE_OUTPUTS_INDEX};
    char cwd[4096];
    int rc = 0;

    if (getcwd(cwd, sizeof cwd))
        gate->start_dir = leakgate_util__strdup(cwd);
    for (size_t i = 0; i < 3 && rc == 0; i++) {
        if (!*specs[i] || !**specs[i])
            continue;
        rc = leakgate_files__absolute(&gate->out_paths[i], *specs[i]);
        if (rc == 0) {
            *specs[i] = gate->out_paths[i];
            rc = leakgate_outputs__check(*specs[i], kinds[i]);
        }
    }
    return rc;
}

/* A --junit or --json file left by an earlier run is removed before this
 * one measures anything: a run that stops at a configuration error (exit
 * 2) or is killed leaves no result file that passes for its own.  A run
 * writes its files at its end (shared ones from the run's journals). */
static void
remove_stale_results(const struct leakgate_gate *gate)
{
    const char *paths[2] = {gate->opts.junit_path, gate->opts.json_path};

    for (size_t i = 0; i < 2; i++) {
        if (paths[i] && *paths[i] && !leakgate_results__per_process(paths[i]) &&
            leakgate_files__target(paths[i]) == LEAKGATE_FILES_REGULAR)
            (void)unlink(paths[i]);
    }
    leakgate_error__clear();
}

/* The allocation wrappers (intercept.c) are allocator frames too. */
static int
add_wrapper_range(struct leakgate_gate *gate)
{
    struct leakgate_range *r;
    uintptr_t start, end;

    leakgate_intercept__range(&start, &end);
    if (start == end)
        return 0;
    r = leakgate_util__realloc(gate->strip, (gate->nstrip + 1) * sizeof *r);
    if (!r)
        return leakgate_error__set(LEAKGATE_ENOMEM, "module ranges");
    gate->strip = r;
    r[gate->nstrip].start = start;
    r[gate->nstrip].end = end;
    gate->nstrip++;
    return 0;
}

/* The test frameworks' own modules, whose allocations (a failure
 * record, cmocka's error message) are bookkeeping, never a test's
 * growth: a stack whose allocating frame lies in one is excluded. */
static int
framework_ranges(struct leakgate_gate *gate)
{
    const char *const *modules = leakgate_verdict__framework_modules;

    for (size_t i = 0; modules[i]; i++) {
        struct leakgate_range *found = NULL, *r;
        size_t n = 0;
        int rc = leakgate_profile__module_ranges(&found, &n, modules[i], NULL);

        if (rc < 0)
            return rc;
        r = n ? leakgate_util__realloc(gate->exclude,
                                       (gate->nexclude + n) * sizeof *r)
              : gate->exclude;
        if (n && !r) {
            leakgate_util__free(found);
            return leakgate_error__set(LEAKGATE_ENOMEM, "module ranges");
        }
        if (n)
            memcpy(r + gate->nexclude, found, n * sizeof *r);
        gate->exclude = r;
        gate->nexclude += n;
        leakgate_util__free(found);
    }
    return 0;
}

/* LEAKGATE_UNWIND=check, at exit: what was compared (a difference
 * aborted).  A linked binary and a `leakgate run` child say it; a replay
 * does not (its last line is what its parent quotes when it fails). */
static void
say_stackwalk_check(void)
{
    struct leakgate_stackwalk_stats st;

    leakgate_stackwalk__stats(&st);
    fprintf(stderr,
            "leakgate: stackwalk check: %llu backtraces walked and compared "
            "with libgcc's, %llu differed; %llu from libgcc alone; %llu "
            "rules\n",
            (unsigned long long)st.checked, (unsigned long long)st.differ,
            (unsigned long long)st.fallback, (unsigned long long)st.rules);
}

/*
 * The stacks of exact windows: stackwalk.c's walk (the default), libgcc's
 * through jemalloc's own backtrace (LEAKGATE_UNWIND=libgcc), or the walk
 * checked against libgcc at every allocation, aborting at the first
 * difference (LEAKGATE_UNWIND=check: what ctest runs the corpus with).
 */
static int
choose_stackwalk(bool replay_child)
{
    const char *env = getenv("LEAKGATE_UNWIND");

    if (env && strcmp(env, "libgcc") == 0) {
        leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_LIBGCC);
        return 0;
    }
    if (env && *env && strcmp(env, "fast") != 0 && strcmp(env, "check") != 0)
        return leakgate_error__set(LEAKGATE_EUSAGE,
                                   "LEAKGATE_UNWIND: '%s' is not fast, check "
                                   "or libgcc",
                                   env);
    if (!leakgate_stackwalk__fast_available())
        return 0;
    if (env && strcmp(env, "check") == 0) {
        leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_CHECK_ABORT);
        if (!replay_child)
            atexit(say_stackwalk_check);
    }
    /* A jemalloc without the hook keeps its own backtrace. */
    (void)leakgate_profile__set_backtrace(leakgate_stackwalk__backtrace);
    leakgate_error__clear();
    return 0;
}

static int
prepare_profiling(struct leakgate_gate *gate)
{
    int rc = leakgate_profile__check(&gate->prof);

    if (rc < 0)
        return rc;
    rc = choose_stackwalk(gate->replay.child);
    if (rc < 0)
        return rc;
    /* leakgate_profile__check() refused anything but exact counts. */
    snprintf(gate->sampling, sizeof gate->sampling,
             "exact (every allocation sampled, lg_prof_sample:0)");
    rc = leakgate_profile__set_active(false);
    if (rc == 0)
        rc = leakgate_profile__dumpfile_open(&gate->before);
    if (rc == 0)
        rc = leakgate_profile__dumpfile_open(&gate->after);
    if (rc == 0)
        rc = leakgate_profile__allocator_ranges(&gate->strip, &gate->nstrip);
    if (rc == 0)
        rc = add_wrapper_range(gate);
    if (rc == 0)
        rc = framework_ranges(gate);
    /* Dumping must work before any test runs: jemalloc says so, no
     * probe dump (a dump that fails later still stops the run). */
    if (rc == 0)
        rc = leakgate_profile__dump_ready(&gate->before);
    return rc;
}

/* A lean process: the stacks and the test framework's segments; no
 * jemalloc to prepare (gate_lean.c). */
static int
prepare_lean(struct leakgate_gate *gate)
{
    int rc = choose_stackwalk(gate->replay.child);

    if (rc == 0)
        rc = add_wrapper_range(gate);
    if (rc == 0)
        rc = framework_ranges(gate);
    return rc;
}

/* A sanitizer's allocator serves this program: nothing can be measured,
 * say so before the first test (exit 3), never a silent pass or a crash
 * inside the sanitizer.  leakgate's own sanitizer builds of its tests
 * (LEAKGATE_NO_INTERCEPT) gate no program. */
static int
refuse_sanitizer(void)
{
#ifdef LEAKGATE_NO_INTERCEPT
    return 0;
#else
    const char *which = leakgate_profile__sanitizer();

    if (!which)
        return 0;
    return leakgate_error__set(
        LEAKGATE_ENOPROF,
        "this program is built with %s, whose allocator replaces malloc: "
        "leakgate cannot measure what a test keeps under it.  Build the "
        "gated tests without the sanitizer, and run the sanitizer build "
        "as it is, without leakgate (UBSan alone, -fsanitize=undefined, "
        "can stay)",
        which);
#endif
}

/* A public entry point given NULL where it needs a gate or a name: an
 * error naming the function and the argument, never a crash. */
static int
null_argument(const char *function, const char *argument)
{
    return leakgate_error__set(LEAKGATE_EUSAGE, "%s: %s must not be NULL",
                               function, argument);
}

/* The gate, suite and test of a window's entry point. */
static int
check_window_args(const char *function,
                  const leakgate_gate *gate,
                  const char *suite,
                  const char *test)
{
    if (!gate)
        return null_argument(function, "the gate");
    if (!suite)
        return null_argument(function, "the suite name");
    if (!test)
        return null_argument(function, "the test name");
    return 0;
}

int
leakgate_gate_new(leakgate_gate **out, const struct leakgate_gate_options *opts)
{
    struct leakgate_gate *gate;
    int rc;

    if (!out)
        return null_argument("leakgate_gate_new", "out");
    *out = NULL;
    if (!opts)
        return null_argument("leakgate_gate_new", "the options");
    gate = leakgate_util__calloc(1, sizeof *gate);
    if (!gate)
        return leakgate_error__set(LEAKGATE_ENOMEM, "gate");
    gate->opts = *opts;
    gate->before.fd = gate->after.fd = gate->peak.fd = -1;
    /* checked by leakgate_gate_options_parse(); a caller that filled the
     * options itself gets the same error here */
    if (opts->peak_limit &&
        !leakgate_config__parse_size(&gate->peak_opt, opts->peak_limit)) {
        leakgate_util__free(gate);
        return leakgate_error__set(LEAKGATE_EUSAGE,
                                   "option '--peak-limit': invalid size '%s'",
                                   opts->peak_limit);
    }
    gate->has_peak_opt = opts->peak_limit != NULL;
    gate->filter_literal =
        opts->filter && leakgate_util__glob_literal(opts->filter);
    gate->starters = leakgate_util__map_zeroed(
        GATE_STARTERS * sizeof *gate->starters, false);
    gate->color =
        opts->color > 0 || (opts->color < 0 && isatty(STDERR_FILENO) == 1);
    rc = refuse_sanitizer();
    if (rc == 0)
        rc = resolve_outputs(gate);
    /* A replay's outputs are its first process's. */
    if (rc == 0 && !getenv(LEAKGATE_REPLAY_ENV))
        remove_stale_results(gate);
    if (rc == 0)
        rc = load_config(gate);
    if (rc == 0)
        rc = leakgate_replay__child_setup(gate);
    if (rc == 0)
        rc = leakgate_gate__lean_init(gate);
    if (rc == 0)
        rc = gate->lean ? prepare_lean(gate) : prepare_profiling(gate);
    if (rc < 0) {
        leakgate_gate_free(gate);
        return rc;
    }
    leakgate_gate__fast_init(gate);
    gate->env.sampling = gate->sampling;
    gate->env.jemalloc_version = gate->prof.version;
    gate->env.thresholds_path = gate->thresholds_path;
    gate->env.has_tests = gate->config && gate->config->ntests > 0;
    gate->env.has_suites = gate->config && gate->config->nsuites > 0;
    gate->env.report_dir = gate->opts.report_dir;
    gate->env.filter = opts->filter;
    gate->env.binary = "";
    gate->env.build_id = "";
    *out = gate;
    return 0;
}

/* Stop whatever records the open window, measuring nothing (the window
 * is dropped). */
static void
stop_recording(struct leakgate_gate *gate)
{
    struct leakgate_track_result r;

    if (!gate->cur.open)
        return;
    if (gate->cur.metered)
        leakgate_gate__meter_stop(gate);
    if (gate->cur.fast || gate->cur.tracking ||
        (gate->cur.lean && !gate->cur.paused))
        leakgate_track__end(&r);
    if (!gate->cur.fast && !gate->cur.paused && !gate->lean)
        leakgate_profile__set_active(false);
}

void
leakgate_gate_free(leakgate_gate *gate)
{
    if (!gate)
        return;
    stop_recording(gate);
    leakgate_gate__grew_clear(gate);
    leakgate_gate__scope_reset(&gate->cur);
    leakgate_gate__scope_reset(&gate->held);
    for (size_t i = 0; i < gate->nverdicts; i++)
        leakgate_verdict__free(gate->verdicts[i]);
    leakgate_util__free(gate->verdicts);
    leakgate_util__free(gate->by_name);
    leakgate_util__free(gate->unmatched);
    leakgate_util__free(gate->scope_hints);
    leakgate_outputs__free(gate->outputs);
    leakgate_replay__dispose(gate); /* after the verdicts: see replay.h */
    leakgate_symbolize__free(gate->sym);
    leakgate_util__free(gate->strip);
    leakgate_util__free(gate->exclude);
    if (gate->before.fd >= 0)
        leakgate_profile__dumpfile_close(&gate->before);
    if (gate->after.fd >= 0)
        leakgate_profile__dumpfile_close(&gate->after);
    if (gate->peak.fd >= 0)
        leakgate_profile__dumpfile_close(&gate->peak);
    leakgate_config__free(gate->config);
    leakgate_util__free(gate->thresholds_path);
    for (size_t i = 0; i < 3; i++)
        leakgate_util__free(gate->out_paths[i]);
    leakgate_util__free(gate->start_dir);
    if (gate->starters)
        munmap(gate->starters, GATE_STARTERS * sizeof *gate->starters);
    leakgate_util__free(gate);
}

static bool
filter_matches(const char *filter, const char *name)
{
    return strcmp(filter, name) == 0 || leakgate_util__glob_match(filter, name);
}

int
leakgate_gate_selected(const leakgate_gate *gate,
                       const char *suite,
                       const char *test)
{
    struct leakgate_buf name = LEAKGATE_BUF_INIT;
    char small[256];
    bool plain, selected;

    if (!gate->opts.filter)
        return 1;
    /* A filter with no glob character and no backslash matches only the
     * name it spells, "suite/test" as it is: a name's escaped form (as
     * --list prints a name that is not plain) always has a backslash.
     * No join, no check of the names (every registered test of a
     * one-test process comes here). */
    if (gate->filter_literal)
        return leakgate_util__name_is(gate->opts.filter, suite, test);
    plain = leakgate_util__name_plain(suite) && leakgate_util__name_plain(test);
    /* Called for every registered test of every process (ctest runs one
     * per test): no allocation, no printf for the usual short name. */
    if (leakgate_util__join_to(small, sizeof small, suite, '/', test)) {
        if (filter_matches(gate->opts.filter, small))
            return 1;
        if (plain)
            return 0;
    }
    leakgate_buf__printf(&name, "%s/%s", suite, test);
    selected = !name.failed && filter_matches(gate->opts.filter, name.ptr);
    if (!selected && !plain) {
        /* A name with a newline, a control byte or a byte that is not
         * UTF-8 also matches as --list prints it. */
        leakgate_buf__dispose(&name);
        leakgate_util__name_escape(&name, suite);
        leakgate_buf__puts(&name, "/");
        leakgate_util__name_escape(&name, test);
        selected = !name.failed && filter_matches(gate->opts.filter, name.ptr);
    }
    /* never skip a test because of memory pressure */
    selected |= name.failed;
    leakgate_buf__dispose(&name);
    return selected ? 1 : 0;
}

const char *
leakgate_gate_filter(const leakgate_gate *gate)
{
    return gate->opts.filter;
}

const char *
leakgate_gate_unmatched_entries(leakgate_gate *gate)
{
    leakgate_util__free(gate->unmatched);
    gate->unmatched = leakgate_verdict__unmatched_entries(
        gate->config, (const struct leakgate_verdict *const *)gate->verdicts,
        gate->nverdicts, "this run");
    return gate->unmatched ? gate->unmatched : "";
}

/* A failure to dump or read a profile stops the gate from measuring: the
 * windows after it are recorded as not judged, never as passed. */
static int
note_broken(struct leakgate_gate *gate, int rc)
{
    if (rc < 0 && rc != LEAKGATE_ESTATE && rc != LEAKGATE_ENOMEM &&
        !gate->broken[0])
        snprintf(gate->broken, sizeof gate->broken, "%s (%s)",
                 leakgate_strerror(rc), leakgate_error_last());
    return rc;
}

int
leakgate_gate_begin(leakgate_gate *gate, const char *suite, const char *test)
{
    int rc = check_window_args("leakgate_gate_begin", gate, suite, test);

    /* As leakgate_gate_begin_fast(): the caller's frames stay live. */
    leakgate_reach__stack_from(LEAKGATE_REACH_CALLER_SP());
    if (rc == 0)
        rc = leakgate_gate__scope_open(gate, suite, test);
    if (rc < 0)
        return rc;
    leakgate_gate__fast_rerun_claim(gate);
    rc = gate->lean ? leakgate_gate__lean_piece_start(gate)
                    : note_broken(gate, leakgate_gate__piece_start(gate));
    if (rc < 0) {
        leakgate_gate__scope_close(gate);
        return rc;
    }
    gate->cur.open = true;
    return 0;
}

/* The strategy a scope is measured with is the state machine's choice:
 * a fast window (gate_fast.c), a held one (gate_suite.c) or, when the
 * fast pass is off or the gate stopped measuring (every later window
 * then is recorded as not judged: the exact path knows how), an exact
 * window. */
int
leakgate_gate_begin_fast(leakgate_gate *gate,
                         const char *suite,
                         const char *test)
{
    int bad = check_window_args("leakgate_gate_begin_fast", gate, suite, test);

    if (bad < 0)
        return bad;
    /* The frames of this function's caller and above stay live through
     * the window (the test runs below them): a replay's reachability scan
     * reads them (reach.h).  Its caller's stack pointer: above this
     * frame's saved frame pointer and return address. */
    leakgate_reach__stack_from(LEAKGATE_REACH_CALLER_SP());
    if (gate->replay.child && !gate->broken[0]) {
        int plan = leakgate_gate__fork_plan(gate, suite, test), rc;

        if (plan < 0)
            return plan;
        if (plan != LEAKGATE_GATE__FORK_EXACT) {
            rc = leakgate_gate__fast_open_preset(gate, suite, test);
            if (rc < 0 && plan == LEAKGATE_GATE__FORK_LOGGING)
                _exit(1); /* the copy: its replay measures exactly */
            if (rc < 0)
                return rc;
            gate->cur.ordinals = plan == LEAKGATE_GATE__FORK_ORDINALS;
            gate->cur.deferred = plan == LEAKGATE_GATE__FORK_DEFERRED;
            gate->cur.logged = gate->replay.plan;
            gate->cur.ledger_freed = gate->replay.plan_ledger;
            return 0;
        }
    }
    if (gate->opts.exact && !gate->replay.child && !gate->broken[0]) {
        int rc = leakgate_gate__recorded_open(gate, suite, test);

        if (rc != 0)
            return rc < 0 ? rc : 0;
    }
    if (!gate->fast || gate->broken[0])
        return leakgate_gate_begin(gate, suite, test);
    return leakgate_gate__fast_open(gate, suite, test, false);
}

int
leakgate_gate_begin_held(leakgate_gate *gate,
                         const char *suite,
                         const char *test)
{
    int bad = check_window_args("leakgate_gate_begin_held", gate, suite, test);

    if (bad < 0)
        return bad;
    if (!leakgate_gate_holds_tests(gate))
        return leakgate_error__set(LEAKGATE_ESTATE,
                                   "begin %s/%s: scope: suite needs "
                                   "leakgate's allocation wrappers",
                                   suite, test);
    if (gate->broken[0])
        return leakgate_gate_begin(gate, suite, test);
    return leakgate_gate__fast_open(gate, suite, test, true);
}

int
leakgate_gate_pause(leakgate_gate *gate)
{
    int rc;

    if (!gate->cur.open || gate->cur.paused || gate->cur.fast)
        return leakgate_error__set(LEAKGATE_ESTATE,
                                   "pause: no running exact scope");
    if (gate->cur.lean) {
        leakgate_gate__lean_piece_stop(gate);
        gate->cur.paused = true;
        return 0;
    }
    rc = note_broken(gate, leakgate_gate__piece_stop(gate));
    gate->cur.paused = true;
    return rc;
}

int
leakgate_gate_resume(leakgate_gate *gate)
{
    int rc;

    if (!gate->cur.open || !gate->cur.paused)
        return leakgate_error__set(LEAKGATE_ESTATE, "resume: not paused");
    rc = gate->cur.lean ? leakgate_gate__lean_piece_start(gate)
                        : note_broken(gate, leakgate_gate__piece_start(gate));
    if (rc == 0)
        gate->cur.paused = false;
    return rc;
}

/* Close the current run of the open scope and start the next one. */
static int
push_run(struct gate_scope *s)
{
    struct leakgate_diff **runs =
        leakgate_util__realloc(s->runs, (s->nruns + 1) * sizeof *runs);

    if (!runs)
        return leakgate_error__set(LEAKGATE_ENOMEM, "runs");
    s->runs = runs;
    s->runs[s->nruns++] = s->run_acc;
    s->run_acc = NULL;
    return leakgate_diff__new_empty(&s->run_acc);
}

int
leakgate_gate_next_run(leakgate_gate *gate)
{
    int rc;

    /* A lean process has no exact scope: a run with `repeat:` starts
     * again with jemalloc (leakgate_gate_plan()). */
    if (!gate->cur.open || gate->cur.paused || gate->cur.fast || gate->cur.lean)
        return leakgate_error__set(LEAKGATE_ESTATE,
                                   "next run: no running exact scope");
    rc = note_broken(gate, leakgate_gate__piece_stop(gate));
    if (rc == 0)
        rc = push_run(&gate->cur);
    if (rc == 0)
        rc = note_broken(gate, leakgate_gate__piece_start(gate));
    return rc;
}

void
leakgate_gate_mark_aborted(leakgate_gate *gate, const char *why)
{
    if (!gate->cur.open || gate->cur.aborted)
        return;
    /* Called while recording: copy into the scope, no allocation. */
    gate->cur.aborted = true;
    snprintf(gate->cur.aborted_why, sizeof gate->cur.aborted_why, "%s",
             why ? why : "the test was aborted");
}

static int
push_verdict(struct leakgate_gate *gate, struct leakgate_verdict *v)
{
    if (gate->nverdicts == gate->cap) {
        size_t cap = gate->cap ? gate->cap * 2 : 64;
        struct leakgate_verdict **p =
            leakgate_util__realloc(gate->verdicts, cap * sizeof *p);

        if (!p)
            return leakgate_error__set(LEAKGATE_ENOMEM, "verdict list");
        gate->verdicts = p;
        gate->cap = cap;
    }
    gate->verdicts[gate->nverdicts++] = v;
    leakgate_gate__index_verdict(gate, gate->nverdicts - 1);
    return 0;
}

/* --exact: what a failing test window left is watched, as the fast pass
 * watches it, so that the shared-fixture hint is the same in both modes. */
static int
watch_failed(struct leakgate_gate *gate, struct leakgate_verdict *v)
{
    v->watch_id = leakgate_gate__watch_id(gate);
    return leakgate_track__watch_left(v->watch_id);
}

/* Did the suite window `sv` free a stack that test verdict `tv` kept? */
static bool
released_by(const struct leakgate_verdict *tv,
            const struct leakgate_verdict *sv)
{
    for (size_t i = 0; i < tv->nstacks; i++) {
        if (!tv->stacks[i].judgement.over)
            continue;
        for (size_t k = 0; k < sv->nstacks; k++) {
            if (sv->stacks[k].bytes < 0 &&
                leakgate_diff__same_pcs(tv->stacks[i].pcs, tv->stacks[i].npcs,
                                        sv->stacks[k].pcs, sv->stacks[k].npcs))
                return true;
        }
    }
    return false;
}

/* The run's one thresholds document: every entry the windows' reports
 * and NOTEs gave (accepting growth, `warmup: 1`, `scope: suite` for a
 * shared fixture), in one piece, since entries pasted one after another
 * would repeat keys. */
static void
run_hint(struct leakgate_buf *b,
         const struct leakgate_gate *gate,
         const char *const *suites,
         size_t nsuites)
{
    char *text = leakgate_report__run_document(
        (const struct leakgate_verdict *const *)gate->verdicts, gate->nverdicts,
        suites, nsuites, &gate->env);

    if (!text)
        b->failed = true;
    else
        leakgate_buf__puts(b, text);
    leakgate_util__free(text);
}

const char *
leakgate_gate_scope_hints(leakgate_gate *gate)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    const char **names =
        leakgate_util__calloc(gate->nverdicts + 1, sizeof *names);
    size_t n = 0;

    leakgate_util__free(gate->scope_hints);
    gate->scope_hints = NULL;
    for (size_t i = 0; names && i < gate->nverdicts; i++) {
        const struct leakgate_verdict *v = gate->verdicts[i];

        if (strcmp(v->test, "[suite]") == 0 && v->hint &&
            strstr(v->hint, "scope: suite"))
            names[n++] = v->suite;
    }
    if (names)
        run_hint(&b, gate, names, n);
    if (b.len > 0 || b.failed)
        gate->scope_hints = leakgate_buf__take(&b);
    leakgate_util__free(names);
    return gate->scope_hints ? gate->scope_hints : "";
}

/*
 * A suite window that frees what its failing tests retained points at a
 * shared fixture: say so, and that `scope: suite` judges it at suite end.
 */
static int
hint_shared_fixture(struct leakgate_gate *gate, struct leakgate_verdict *sv)
{
    struct leakgate_buf names = LEAKGATE_BUF_INIT;
    size_t n = 0;

    for (size_t i = 0; i < gate->nverdicts; i++) {
        struct leakgate_verdict *tv = gate->verdicts[i];

        /* Freed in the suite window (exact), or watched objects of its
         * fast pass freed by later tests or the cleanup; not a test that
         * failed only its peak limit. */
        if (tv->status != LEAKGATE_STATUS_FAIL ||
            (leakgate_verdict__peak_only(tv) && tv->first_objs == 0) ||
            strcmp(tv->suite, sv->suite) != 0 ||
            (!released_by(tv, sv) &&
             !leakgate_track__watch_released(tv->watch_id)))
            continue;
        leakgate_buf__printf(&names, "%s%s", n++ ? ", " : "", tv->test);
        /* One diagnosis: its report points at the suite's hint instead of
         * accepting the growth as its own. */
        tv->shared_fixture = true;
        leakgate_util__free(tv->report);
        tv->report = leakgate_report__text(tv, &gate->env, false);
        if (!tv->report)
            names.failed = true;
    }
    if (n > 0 && !names.failed) {
        struct leakgate_buf b = LEAKGATE_BUF_INIT;

        leakgate_buf__printf(&b,
                             "later tests or the suite cleanup freed what "
                             "%zu failing test%s retained (%s): they add to "
                             "a shared fixture. To judge each test at the "
                             "suite's end, on what it left that the suite "
                             "does not free%s, ",
                             n, n == 1 ? "" : "s", names.ptr,
                             /* --exact printed their reports, with their
                              * own entries, when they ended. */
                             gate->opts.exact && !gate->replay.child
                                 ? " (instead of the entries their reports "
                                   "above give)"
                                 : "");
        leakgate_buf__puts(&b, "give the suite `scope: suite` (the "
                               "thresholds document at the end of the run "
                               "holds it)");
        sv->hint = leakgate_buf__take(&b);
        leakgate_util__free(sv->report);
        sv->report =
            sv->hint ? leakgate_report__text(sv, &gate->env, false) : NULL;
    }
    leakgate_buf__dispose(&names);
    return n > 0 && (!sv->report || names.failed)
               ? leakgate_error__set(LEAKGATE_ENOMEM, "fixture hint")
               : 0;
}

const leakgate_verdict *
leakgate_gate_late_hint(leakgate_gate *gate, const char *suite)
{
    struct leakgate_verdict *sv =
        leakgate_gate__find_verdict(gate, suite, "[suite]");

    if (!sv || sv->hint || !sv->measured)
        return NULL;
    if (hint_shared_fixture(gate, sv) < 0 || !sv->hint)
        return NULL;
    return sv;
}

int
leakgate_gate_end(leakgate_gate *gate, int judged, const leakgate_verdict **out)
{
    struct leakgate_verdict *v = NULL;
    int rc = 0;

    if (out)
        *out = NULL;
    if (!gate)
        return null_argument("leakgate_gate_end", "the gate");
    if (!gate->cur.open)
        return leakgate_error__set(LEAKGATE_ESTATE, "end: no open scope");
    if (gate->replay.log_fd)
        leakgate_gate__fork_child_end(gate);
    if (gate->cur.lean) {
        rc = leakgate_gate__lean_end(gate, judged != 0);
        if (rc != 0) {
            /* The watch ends with the suite, as below. */
            if (strcmp(gate->cur.test, "[suite]") == 0 &&
                !leakgate_gate__suite_waits(gate, gate->cur.suite))
                leakgate_track__watch_clear();
            leakgate_gate__scope_close(gate);
            return rc; /* LEAKGATE_GATE_RERUN, or an error */
        }
    } else if (gate->cur.fast) {
        rc = leakgate_gate__fast_stop(gate);
        if (rc == LEAKGATE_GATE__HOLD) {
            rc = leakgate_gate__hold(gate, &v, judged != 0);
            if (rc == 0)
                rc = push_verdict(gate, v);
            if (rc < 0)
                leakgate_verdict__free(v);
            else if (out)
                *out = v;
            leakgate_gate__scope_close(gate);
            return rc;
        }
        if (rc == LEAKGATE_GATE_RERUN && gate->cur.first_logged)
            leakgate_gate__fork_first_note(gate, gate->cur.suite,
                                           gate->cur.test, &gate->cur.first);
        if (rc != 0) {
            leakgate_gate__scope_close(gate);
            return rc; /* LEAKGATE_GATE_RERUN, or an error */
        }
        if (gate->cur.deferred) {
            /* No verdict here: the exact replay gives it (gate_fork.c). */
            rc = leakgate_gate__fork_defer(gate);
            leakgate_gate__scope_close(gate);
            return rc;
        }
    } else if (!gate->cur.paused) {
        rc = note_broken(gate, leakgate_gate__piece_stop(gate));
    }
    if (rc == 0 && gate->cur.nruns > 0)
        rc = push_run(&gate->cur);
    if (rc == 0 && !gate->cur.fast && gate->cur.nruns == 0)
        rc = leakgate_gate__cap_suite_window(gate);
    if (rc == 0)
        rc = leakgate_gate__judge(&v, gate, judged != 0);
    if (rc == 0 && gate->cur.fast_stacks &&
        (v->status != LEAKGATE_STATUS_PASS || !judged)) {
        leakgate_verdict__free(v);
        rc = leakgate_gate__fast_untrusted(gate);
        if (rc == LEAKGATE_GATE_RERUN && gate->cur.first_logged)
            leakgate_gate__fork_first_note(gate, gate->cur.suite,
                                           gate->cur.test, &gate->cur.first);
        leakgate_gate__scope_close(gate);
        return rc;
    }
    if (rc == 0)
        rc = leakgate_gate__fast_annotate(gate, v);
    if (rc == 0 && gate->opts.exact && gate->cur.watched &&
        v->status == LEAKGATE_STATUS_FAIL && !gate->replay.child)
        rc = watch_failed(gate, v);
    if (rc == 0 && strcmp(v->test, "[suite]") == 0) {
        rc = hint_shared_fixture(gate, v);
        /* The watch ends with the suite, or with leakgate_gate_suite_over()
         * when tests of the suite wait for it. */
        if (!leakgate_gate__suite_waits(gate, v->suite) && !gate->replay.ledger)
            leakgate_track__watch_clear();
    }
    /* A replay: what a measured window left may be freed by a later one
     * (gate_fork.c's ledger). */
    if (rc == 0 && gate->replay.child &&
        leakgate_gate_measures(gate, v->suite, v->test) &&
        (gate->cur.fast || gate->cur.watched))
        leakgate_gate__fork_ledger(gate);
    if (rc == 0 && v->status == LEAKGATE_STATUS_FAIL && gate->opts.report_dir)
        rc = leakgate_gate__write_artifacts(gate, v);
    if (rc == 0)
        rc = push_verdict(gate, v);
    /* What it left reachable is classified again at the run's end
     * (gate_late.c). */
    if (rc == 0 && gate->replay.child &&
        leakgate_gate_measures(gate, v->suite, v->test))
        leakgate_gate__late_keep(gate, v);
    /* A replay counts the listed tests it has measured (it stops after
     * the last: leakgate_gate_replay_done, unless kept objects wait for
     * the run's end: its results are written now all the same). */
    if (rc == 0 && gate->replay.child &&
        leakgate_gate_measures(gate, v->suite, v->test)) {
        gate->replay.measured++;
        leakgate_replay__beat_measured(gate);
        if (gate->replay.measured >= gate->replay.n &&
            leakgate_gate__late_pending(gate))
            (void)leakgate_gate_write_results(gate);
    }
    if (rc < 0)
        leakgate_verdict__free(v);
    else if (out)
        *out = v;
    leakgate_gate__scope_close(gate);
    return rc;
}

const leakgate_verdict *
leakgate_gate_verdict(const leakgate_gate *gate,
                      const char *suite,
                      const char *test)
{
    return leakgate_gate__find_verdict(gate, suite, test);
}

/* The thresholds file gives some suite `scope: suite` (a record without
 * a window is then resolved: its test may be judged with its suite). */
static bool
any_suite_scope(const struct leakgate_config *cfg)
{
    if (!cfg)
        return false;
    if (cfg->defaults.scope == LEAKGATE_CONFIG_SCOPE_SUITE)
        return true;
    for (size_t i = 0; i < cfg->nsuites; i++) {
        if (cfg->suites[i].scope == LEAKGATE_CONFIG_SCOPE_SUITE)
            return true;
    }
    return false;
}

static int
new_record(struct leakgate_verdict **out,
           const struct leakgate_gate *gate,
           const char *suite,
           const char *test)
{
    struct leakgate_verdict *v = leakgate_util__calloc(1, sizeof *v);
    struct leakgate_buf name = LEAKGATE_BUF_INIT;

    *out = NULL;
    if (!v)
        return leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
    leakgate_buf__printf(&name, "%s/%s", suite, test);
    v->name = leakgate_buf__take(&name);
    v->suite = leakgate_util__strdup(suite);
    v->test = leakgate_util__strdup(test);
    v->report = leakgate_util__strdup("");
    if (strcmp(test, "[suite]") != 0 && any_suite_scope(gate->config)) {
        struct leakgate_policy_settings set;

        /* A test of a `scope: suite` suite measured as one window is
         * judged with its suite. */
        leakgate_policy__resolve(&set, gate->config, suite, test);
        if (set.suite_scope && !leakgate_gate_holds_tests(gate))
            v->how = LEAKGATE_MEASURED_SUITE;
    }
    if (gate->broken[0]) {
        struct leakgate_buf why = LEAKGATE_BUF_INIT;

        leakgate_buf__printf(&why,
                             "not measured: the gate stopped "
                             "measuring earlier in the run: %s",
                             gate->broken);
        v->status = LEAKGATE_STATUS_NOT_JUDGED;
        v->not_judged_why = leakgate_buf__take(&why);
        if (!v->not_judged_why)
            v->report = NULL;
    }
    if (!v->name || !v->suite || !v->test || !v->report) {
        leakgate_verdict__free(v);
        return leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
    }
    *out = v;
    return 0;
}

static int
append_note(struct leakgate_verdict *v,
            const char *file,
            unsigned int line,
            const char *message)
{
    struct leakgate_note *notes =
        leakgate_util__realloc(v->notes, (v->nnotes + 1) * sizeof *notes);
    struct leakgate_note *n;

    if (!notes)
        return leakgate_error__set(LEAKGATE_ENOMEM, "note");
    v->notes = notes;
    n = &notes[v->nnotes];
    n->file = leakgate_util__strdup(file ? file : "");
    n->message = leakgate_util__strdup(message ? message : "");
    n->line = line;
    if (!n->file || !n->message) {
        leakgate_util__free(n->file);
        leakgate_util__free(n->message);
        return leakgate_error__set(LEAKGATE_ENOMEM, "note");
    }
    v->nnotes++;
    return 0;
}

int
leakgate_gate_note_failure(leakgate_gate *gate,
                           const char *suite,
                           const char *test,
                           const char *file,
                           unsigned int line,
                           const char *message)
{
    struct leakgate_verdict *v;
    int rc = check_window_args("leakgate_gate_note_failure", gate, suite, test);

    if (rc < 0)
        return rc;
    v = leakgate_gate__find_verdict(gate, suite, test);
    if (!v) {
        rc = new_record(&v, gate, suite, test);
        if (rc == 0)
            rc = push_verdict(gate, v);
        if (rc < 0) {
            leakgate_verdict__free(v);
            return rc;
        }
    }
    /* Without a message the call only makes sure the test is recorded. */
    return message ? append_note(v, file, line, message) : 0;
}

void
leakgate_gate__own_threads(struct leakgate_gate *gate, uint32_t token)
{
    (void)gate;
    leakgate_intercept__own_threads(token);
}

const struct leakgate_note *
leakgate_gate__note_unjoined(struct leakgate_gate *gate,
                             const char *suite,
                             const char *test,
                             uint32_t token)
{
    const void *callers[1] = {NULL};
    size_t n = leakgate_intercept__unjoined(token, callers, 1);
    struct leakgate_symbolizer *sym = NULL;
    struct leakgate_frame *frames = NULL;
    const struct leakgate_frame *at = NULL;
    struct leakgate_verdict *v;
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    size_t nframes = 0;
    uintptr_t pc = (uintptr_t)callers[0];
    int rc;

    if (n == 0)
        return NULL;
    if (leakgate_gate__symbolizer(&sym, gate) == 0 &&
        leakgate_symbolize__frames(sym, &frames, &nframes, &pc, 1) == 0) {
        /* The outermost frame of the call: the function that called. */
        for (size_t i = 0; i < nframes; i++)
            at = frames[i].function ? &frames[i] : at;
    }
    leakgate_buf__printf(
        &b,
        "leakgate: %zu thread%s the test started with pthread_create() "
        "(called in %s) %s neither joined nor detached when it ended: the "
        "C library keeps %s stack and descriptor until pthread_join() or "
        "pthread_detach(); join or detach %s in the test",
        n, n == 1 ? "" : "s",
        at && at->function ? at->function : "an unknown function",
        n == 1 ? "was" : "were", n == 1 ? "its" : "their",
        n == 1 ? "it" : "them");
    rc = b.failed ? leakgate_error__set(LEAKGATE_ENOMEM, "note")
                  : leakgate_gate_note_failure(gate, suite, test,
                                               at ? at->file : NULL,
                                               at ? at->line : 0, b.ptr);
    leakgate_buf__dispose(&b);
    leakgate_util__free(frames);
    v = rc == 0 ? leakgate_gate__find_verdict(gate, suite, test) : NULL;
    /* The gate's failure, not an assertion's: its status says so (a
     * verdict a replay or the run's end gives later keeps it). */
    if (v) {
        v->unjoined = true;
        leakgate_verdict__fail_unjoined(v);
    }
    return v && v->nnotes > 0 ? &v->notes[v->nnotes - 1] : NULL;
}

int
leakgate_gate_decline_rerun(leakgate_gate *gate, const char *why)
{
    struct leakgate_verdict *v;
    int rc;

    if (!gate->grew.suite)
        return leakgate_error__set(LEAKGATE_ESTATE,
                                   "decline rerun: no fast scope grew");
    rc = leakgate_gate_note_failure(gate, gate->grew.suite, gate->grew.test,
                                    NULL, 0, NULL);
    v = rc == 0 ? leakgate_gate__find_verdict(gate, gate->grew.suite,
                                              gate->grew.test)
                : NULL;
    if (v)
        rc = leakgate_gate__fast_declined(gate, v, why);
    leakgate_gate__grew_clear(gate);
    return rc;
}

int
leakgate_gate_abandon(leakgate_gate *gate,
                      const char *suite,
                      const char *test,
                      const char *why)
{
    struct leakgate_verdict *v;
    int rc;

    stop_recording(gate);
    if (!gate->lean)
        leakgate_profile__set_active(false);
    leakgate_gate__scope_reset(&gate->cur);
    leakgate_gate__scope_reset(&gate->held);
    gate->has_held = false;
    rc = leakgate_gate_note_failure(gate, suite, test, NULL, 0, why);
    v = rc == 0 ? leakgate_gate__find_verdict(gate, suite, test) : NULL;
    if (!v)
        return rc;
    v->status = LEAKGATE_STATUS_NOT_JUDGED;
    leakgate_util__free(v->not_judged_why);
    v->not_judged_why = leakgate_util__strdup(why);
    return v->not_judged_why ? 0
                             : leakgate_error__set(LEAKGATE_ENOMEM, "abandon");
}

int
leakgate_gate_not_run(leakgate_gate *gate,
                      const char *suite,
                      const char *test,
                      const char *why)
{
    struct leakgate_verdict *v;
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    int rc;

    if (leakgate_gate__find_verdict(gate, suite, test))
        return 0;
    rc = leakgate_gate_note_failure(gate, suite, test, NULL, 0, NULL);
    v = rc == 0 ? leakgate_gate__find_verdict(gate, suite, test) : NULL;
    if (!v)
        return rc;
    leakgate_buf__printf(&b, "%s%s", LEAKGATE_VERDICT_NOT_RUN, why);
    v->status = LEAKGATE_STATUS_NOT_JUDGED;
    leakgate_util__free(v->not_judged_why);
    v->not_judged_why = leakgate_buf__take(&b);
    return v->not_judged_why ? 0
                             : leakgate_error__set(LEAKGATE_ENOMEM, "not run");
}

size_t
leakgate_gate_failures(const leakgate_gate *gate)
{
    size_t n = 0;

    for (size_t i = 0; i < gate->nverdicts; i++)
        n += gate->verdicts[i]->status == LEAKGATE_STATUS_FAIL;
    return n;
}

size_t
leakgate_gate_judged(const leakgate_gate *gate)
{
    size_t n = 0;

    for (size_t i = 0; i < gate->nverdicts; i++)
        n += gate->verdicts[i]->status == LEAKGATE_STATUS_PASS ||
             gate->verdicts[i]->status == LEAKGATE_STATUS_FAIL;
    return n;
}

size_t
leakgate_gate__tests_judged(const struct leakgate_gate *gate)
{
    size_t n = 0;

    for (size_t i = 0; i < gate->nverdicts; i++)
        n += (gate->verdicts[i]->status == LEAKGATE_STATUS_PASS ||
              gate->verdicts[i]->status == LEAKGATE_STATUS_FAIL) &&
             strcmp(gate->verdicts[i]->test, "[suite]") != 0;
    return n;
}

size_t
leakgate_gate_unjudged(const leakgate_gate *gate,
                       const leakgate_verdict **first_out)
{
    size_t n = 0;

    if (first_out)
        *first_out = NULL;
    for (size_t i = 0; i < gate->nverdicts; i++) {
        if (!leakgate_verdict__unjudged(gate->verdicts[i]))
            continue;
        if (n++ == 0 && first_out)
            *first_out = gate->verdicts[i];
    }
    return n;
}

const char *
leakgate_verdict_not_judged_why(const leakgate_verdict *v)
{
    return v->status == LEAKGATE_STATUS_NOT_JUDGED ? v->not_judged_why : NULL;
}

leakgate_status
leakgate_verdict_status(const leakgate_verdict *v)
{
    return v->status;
}

const char *
leakgate_verdict_name(const leakgate_verdict *v)
{
    return v->name;
}

uint64_t
leakgate_verdict_retained_bytes(const leakgate_verdict *v)
{
    return v->policy.total_bytes;
}

size_t
leakgate_verdict_stack_count(const leakgate_verdict *v)
{
    size_t n = 0;

    for (size_t i = 0; i < v->nstacks; i++)
        n += v->stacks[i].judgement.judged && !v->stacks[i].judgement.ignored;
    return n;
}

const char *
leakgate_verdict_hint(const leakgate_verdict *v)
{
    return v->hint;
}

const char *
leakgate_verdict_report(const leakgate_verdict *v)
{
    return v->report ? v->report : "";
}

/* The ratchet on this run's verdicts (thresholds_file.c writes). */
int
leakgate_gate_update_thresholds(leakgate_gate *gate,
                                const struct leakgate_thresholds_options *opts,
                                leakgate_thresholds_outcome **out)
{
    struct leakgate_thresholds_options o = *opts;
    const char *path =
        gate->thresholds_path ? gate->thresholds_path : "leakgate.yaml";

    /* A filtered run saw some tests only: never tighten what it missed. */
    if (gate->opts.filter)
        o.partial = 1;
    return leakgate_thresholds__update_file(
        out, path, (const struct leakgate_verdict *const *)gate->verdicts,
        gate->nverdicts, &o);
}

void
leakgate_gate_probe_copy_end(leakgate_gate *gate)
{
    const leakgate_verdict *v = NULL;
    /* A fast window: its end passes it (left nothing, or only growth
     * within its limits), or asks for a re-run (it left more). */
    int rc = gate->replay.probe_fd ? leakgate_gate_end(gate, 1, &v) : -1;

    leakgate_gate__probe_answer(gate, rc == 0 && v &&
                                          v->status == LEAKGATE_STATUS_PASS);
}
