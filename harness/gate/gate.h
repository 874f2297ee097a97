/* SPDX-License-Identifier: MIT */
/*
 * gate: the orchestrator behind the public core API (leakgate.h).  It
 * drives the pipeline for each window: snapshot (profile, heapfile) ->
 * diff -> symbolize -> policy -> report, and keeps the run's verdicts.
 * gate.c owns the window lifecycle, gate_judge.c turns a window's diff into
 * a verdict, gate_results.c writes artifacts and result files.
 *
 * Invariant: between leakgate_gate_begin() and leakgate_gate_end() the
 * gate executes only mallctl calls; everything that allocates (parsing,
 * symbolizing, reporting) runs with recording inactive, so leakgate's own
 * allocations never appear in a window's diff.
 */
#ifndef LEAKGATE_GATE_H
#define LEAKGATE_GATE_H

#include <stdbool.h>
#include <time.h>

#include "config.h"
#include "diff.h"
#include "leakgate/leakgate.h"
#include "profile.h"
#include "report.h"
#include "symbolize.h"
#include "track.h"
#include "verdict.h"

/* The window being measured. */
struct gate_scope {
    bool open;
    bool paused;
    char *suite;
    char *test;
    bool aborted;                  /* set by leakgate_gate_mark_aborted */
    char aborted_why[256];         /* fixed: it is set while recording */
    struct leakgate_diff *acc;     /* sum of the pieces measured so far */
    struct leakgate_diff *run_acc; /* pieces of the current run (repeat) */
    struct leakgate_diff **runs;   /* finished runs, with `repeat` */
    size_t nruns;
    char *first_before; /* text of the first "before" dump (artifacts) */
    size_t first_before_len;
    struct timespec t0;
    double seconds; /* measured time, pauses excluded */
    struct leakgate_policy_settings settings; /* resolved at open */
    uint64_t start_live;     /* live bytes when recording started */
    bool fast;               /* a tracker window: no dumps (gate_fast.c) */
    bool rerun;              /* the exact re-run of a fast window that grew */
    bool tracking;           /* the tracker watches this exact re-run too */
    bool watched;            /* ... and it did: second is valid */
    bool first_unknown;      /* the fast run's table could not grow */
    bool held;               /* a test of a `scope: suite` suite: what it
                                leaves is judged at the suite's end */
    bool peak_stacks_wanted; /* held, over its peak limit: a replay of the
                                test gives the stacks of its peak */
    bool fast_stacks;        /* acc holds the stacks of what the fast window
                                left (track_stacks.c): trusted only to pass */
    struct leakgate_track_result first;  /* what the fast run left */
    struct leakgate_track_result second; /* what the exact re-run left */
    bool metered;                        /* the peak meter ran (track.h) */
    struct leakgate_track_meter meter;   /* where it stood at the last stop */
    struct leakgate_diff *peak_diff;     /* exact: growth by stack at
                                            peak_level (a dump the meter's
                                            trigger took), or NULL */
    uint64_t peak_level;
    bool lean;                 /* a lean process's window in pieces of tracker
                                  windows (gate_lean.c); first sums them */
    uint32_t lean_owner;       /* what its pieces left is watched for it */
    uint64_t lean_freed_objs;  /* freed of an earlier piece's objects */
    uint64_t lean_freed_bytes; /* (the watch counts from its last start) */
    /* A replay's window measured by ordinals (gate_fork.c): its stacks are
     * the exact window's; what the logging run of it left, to compare. */
    bool ordinals;
    bool deferred; /* not measured here: the exact replay measures it */
    struct leakgate_track_result logged;
    uint64_t ledger_freed; /* ledger objects freed when it opened */
    bool first_logged;     /* a first pass's window that logs its allocations
                              (gate_fork.c: ordinals for its replay) */
    bool recorded;         /* --exact measured on the tracker's carried stacks
                              (gate_fast.c), not on profile dumps */
};

/* The last fast window that grew, until its exact re-run begins. */
struct gate_grew {
    char *suite;
    char *test;
    bool unknown; /* the table could not grow: the residue is unknown */
    struct leakgate_track_result r;
    uint32_t watch_id; /* its objects are watched until the suite ends */
    struct leakgate_track_meter meter; /* its peak */
    bool metered;
    struct leakgate_policy_settings settings;
};

/* A fast window's tracker generation and its "suite/test" (cut). */
/* A first pass's window that left objects: the ordinals of what it left
 * in its allocation log (gate_fork.c), for the replay. */
struct gate_first {
    char *suite, *test;
    uint64_t *ords;
    size_t n;
    uint64_t live_objs, live_bytes;
    bool twice; /* a second window of that name: neither is used */
};

struct gate_starter {
    uint32_t gen;
    char name[128];
};
#define GATE_STARTERS 64

struct leakgate_gate {
    struct leakgate_gate_options opts;
    struct leakgate_config *config;
    char *thresholds_path; /* resolved; NULL: no file, all limits 0 */
    char *out_paths[3];    /* --junit, --json, --report-dir made absolute
                              (a test may chdir()); opts point here */
    char *start_dir;       /* the working directory at start-up */
    bool color;
    struct leakgate_profile_info prof;
    char sampling[200];
    struct leakgate_dumpfile before;
    struct leakgate_dumpfile after;
    struct leakgate_dumpfile peak; /* the meter's trigger dumps here (fd -1
                                      until a window has a peak_limit) */
    long long peak_dumped;         /* the level of the last such dump in
                                      this piece, 0: none */
    bool has_peak_opt;             /* --peak-limit */
    bool filter_literal; /* --filter has no glob character, no backslash */
    uint64_t peak_opt;
    struct leakgate_range *strip; /* jemalloc's segments */
    size_t nstrip;
    struct leakgate_range *exclude; /* the test framework's segments */
    size_t nexclude;
    struct leakgate_symbolizer *sym; /* created on first use */
    struct leakgate_report_env env;
    struct gate_scope cur;
    struct gate_scope held; /* a paused scope an inner scope interrupts */
    bool has_held;
    char broken[256]; /* why the gate stopped measuring, "" while it works */
    struct leakgate_verdict **verdicts; /* the run, in order */
    size_t nverdicts;
    size_t cap;
    /* verdicts by name (gate_window.c): open addressing, slots hold an
     * index + 1 (0 empty); nslots a power of two, at least 2 * nverdicts,
     * or 0: no index yet (found by a scan). */
    size_t *by_name;
    size_t nslots;
    int pictures; /* Graphviz: 0 not tried, 1 drawn, -1 no dot, -2 failed */
    bool fast;    /* begin_fast opens tracker windows */
    bool lean;    /* no jemalloc in this process (gate_lean.c) */
    char fast_off[256]; /* why not ("" when fast) */
    struct gate_grew grew;
    uint32_t watch_next; /* the last watch id handed out */
    char *unmatched;     /* leakgate_gate_unmatched_entries() text */
    char *scope_hints;   /* leakgate_gate_scope_hints() text */
    struct leakgate_outputs *outputs; /* journals of shared outputs */
    struct {
        bool child;   /* this process is a replay (replay.h) */
        char **names; /* its list: "SUITE\tTEST" */
        size_t n;
        size_t measured; /* listed tests whose window has closed */
        bool warmup;     /* a probe: listed tests get warmup 1 */
        char *json_path; /* where the replay writes its results */
        struct leakgate_results **loaded; /* every replay's results: they
                                             own strings the verdicts
                                             taken from them point to */
        size_t nloaded;
        unsigned int timeout_s; /* --replay-timeout: a replay's test may
                                   run this long (seconds) */
        int beat_fd;            /* in a replay: where it beats (+1; 0:
                                   none) */
        bool timed_out;         /* the last replay was stopped: a test ran
                                   longer than timeout_s */
        char **env;             /* each option twin's value as the run
                                   began (leakgate_options__env_names()
                                   order; NULL: unset): a replay runs
                                   what leakgate chose, whatever a test
                                   set since */
        /* Windows measured by ordinals (gate_fork.c). */
        struct leakgate_track_result plan; /* what the logging copy of
                                              the next window left */
        uint64_t plan_ledger; /* ledger objects freed when it opens */
        bool all_exact;       /* $LEAKGATE_REPLAY_EXACT: every window exact */
        bool lean_ok;         /* $LEAKGATE_REPLAY_LEAN: may run without
                                 jemalloc (no exact window then) */
        int log_fd;           /* in the forked logging run: where its
                                 ordinals go (+1; 0: not that run) */
        bool by_ordinals;     /* some window of this replay was */
        bool ledger;          /* what measured windows left is watched */
        int probe_fd;         /* in a probe copy: where its answer goes
                                 (+1; 0: not one) */
        char *probe_path;     /* the probes' answers (list ".probe") */
        char *deferred_path;  /* names left to the exact replay */
        size_t exact_pending; /* the first process: tests the replay left
                                 to an exact one */
        /* What first-pass windows left, by ordinals: noted by the first
         * process, read by the replay (gate_fork.c). */
        struct gate_first *first;
        size_t nfirst;
        /* Stacks whose reachable objects are kept for the run's end
         * (gate_late.c): a verdict and a stack of it per tag. */
        struct gate_late *late;
        size_t nlate, late_cap;
    } replay;
    /* The last GATE_STARTERS fast windows by tracker generation: which
     * test started a thread that allocates in a later window (gate_fast.c).
     * A mapping of its own, NULL if that failed: a window writes one
     * entry, and a process that runs a few tests touches a page of it,
     * not the 9 KiB calloc() would clear. */
    struct gate_starter *starters;
};

/* gate_fast.c: a fast window whose tracker stack mode the caller chose
 * (gate_fork.c).  As leakgate_gate__fast_open(). */
int leakgate_gate__fast_open_preset(struct leakgate_gate *gate,
                                    const char *suite,
                                    const char *test);
/*
 * gate_fork.c: how a replay measures the window of a listed test it is
 * about to open (the tracker's stack mode is set for it):
 *   LEAKGATE_GATE__FORK_ORDINALS  by ordinals: a forked copy of the replay
 *       ran the test first, logging every allocation (track.h,
 *       "Ordinals"), and named the ordinals of what it left; this window
 *       records the stacks of those (gate->replay.plan: what the copy left)
 *   LEAKGATE_GATE__FORK_LOGGING   this process is that copy: its window
 *       logs, and its end is leakgate_gate__fork_child_end()
 *   LEAKGATE_GATE__FORK_DEFERRED  not measured here: an exact replay of
 *       the list measures it (the window is opened and closed, unjudged)
 *   LEAKGATE_GATE__FORK_EXACT     an exact window, as before
 * or a negative error.
 */
#define LEAKGATE_GATE__FORK_ORDINALS 0
#define LEAKGATE_GATE__FORK_LOGGING 1
#define LEAKGATE_GATE__FORK_DEFERRED 2
#define LEAKGATE_GATE__FORK_EXACT 3
int leakgate_gate__fork_plan(struct leakgate_gate *gate,
                             const char *suite,
                             const char *test);
/* gate_fork.c: in the forked logging copy, its window's end: hand the
 * ordinals over and end the process.  Never returns. */
_Noreturn void leakgate_gate__fork_child_end(struct leakgate_gate *gate);
/* gate_fork.c: the scope is deferred: its name goes to the exact replay's
 * list, and the replay stops.  Returns 0 or LEAKGATE_EIO. */
int leakgate_gate__fork_defer(struct leakgate_gate *gate);
/* gate_fork.c: in the first process, after a fast window of the test
 * suite/test returned LEAKGATE_GATE_RERUN having left *r: note the
 * ordinals of what it left from the window's allocation log, when its
 * replay may use them.  Best effort: cannot fail. */
void leakgate_gate__fork_first_note(struct leakgate_gate *gate,
                                    const char *suite,
                                    const char *test,
                                    const struct leakgate_track_result *r);
/* gate_fork.c: the first process writes the noted ordinals to path for
 * its replay (nothing when none is noted), which reads them (a file that
 * cannot be read: none; the replay then runs logging copies).  Returns 0
 * or LEAKGATE_EIO. */
int leakgate_gate__fork_first_write(const struct leakgate_gate *gate,
                                    const char *path);
void leakgate_gate__fork_first_read(struct leakgate_gate *gate,
                                    const char *path);
void leakgate_gate__fork_first_free(struct leakgate_gate *gate);
/* gate_late.c: after a measured window of a replay whose verdict v has
 * stacks with reachable objects: keep those objects for the run's end
 * (track.h, "Keep").  Best effort: cannot fail (v keeps the kinds its
 * window found). */
void leakgate_gate__late_keep(struct leakgate_gate *gate,
                              const struct leakgate_verdict *v);
/* gate_late.c: the gate's kept stacks, freed. */
void leakgate_gate__late_free(struct leakgate_gate *gate);
/* gate_late.c: some kept object waits for the run's end. */
bool leakgate_gate__late_pending(const struct leakgate_gate *gate);
/* gate_late.c: the program's tests are over (frame: a frame address of
 * the caller, whose frames and those above stay live): in a replay,
 * classify the kept objects again; those lost now are added to their
 * stacks' lost counts (lost later) and their verdicts judged again.
 * Returns 0 or LEAKGATE_ENOMEM (a scan that cannot run changes
 * nothing). */
int leakgate_gate__late_judge(struct leakgate_gate *gate, const void *frame);
/* gate_judge.c: v's verdict-wide policy (lost bytes, lost_limit) again
 * from its stacks' counts, its status (a pass that now fails its
 * lost_limit fails) and its report.  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_gate__judge_lost_again(struct leakgate_gate *gate,
                                    struct leakgate_verdict *v);
/* gate_fork.c: after a measured window of a replay: watch what it left
 * (the ledger), when a later listed test may free it. */
void leakgate_gate__fork_ledger(struct leakgate_gate *gate);
/* gate_fork.c: in a probe copy (leakgate_gate_probe_copy()), hand its
 * answer over (once: the second run passed) and end it.  Never returns. */
_Noreturn void leakgate_gate__probe_answer(struct leakgate_gate *gate,
                                           bool once);
/* The tracker's watch owner of that ledger (gate_fast.c's ids stop below
 * it), and (gate_fast.c) how many of its objects were freed so far
 * (UINT64_MAX: some were not watched, unknown; 0 without a ledger). */
#define LEAKGATE_GATE__LEDGER 4095u
uint64_t leakgate_gate__ledger_freed(const struct leakgate_gate *gate);

/* gate_fast.c: set up the tracker at leakgate_gate_new().  Cannot fail:
 * without it every window is exact (gate->fast_off says why). */
void leakgate_gate__fast_init(struct leakgate_gate *gate);

/* gate_fast.c: a new owner id for the tracker's watch (track.h).  Cannot
 * fail. */
uint32_t leakgate_gate__watch_id(struct leakgate_gate *gate);

/* gate_lean.c: at leakgate_gate_new(), after the thresholds are loaded: a
 * process without jemalloc is lean (gate->lean); one whose run needs
 * exact windows from the start is started again with jemalloc preloaded
 * (no return).  Returns 0 or an error (LEAKGATE_ENOPROF: jemalloc could
 * not be preloaded; LEAKGATE_EIO; LEAKGATE_ENOMEM). */
int leakgate_gate__lean_init(struct leakgate_gate *gate);
/* gate_lean.c: what a replay of a lean process preloads: jemalloc before
 * the current LD_PRELOAD (preload, when given, as it is).  Cannot fail. */
const char *leakgate_gate__lean_preload(const struct leakgate_gate *gate,
                                        const char *preload);
/* gate_lean.c: MALLOC_CONF for a lean program's jemalloc (exact
 * profiling; the user's keys after it).  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_gate__lean_conf(void);
/* gate_lean.c: a piece of a lean window: start (returns 0 or the
 * tracker's error) and stop (what it left is watched). */
int leakgate_gate__lean_piece_start(struct leakgate_gate *gate);
void leakgate_gate__lean_piece_stop(struct leakgate_gate *gate);
/* gate_lean.c: end the lean window gate->cur: 0 when every object its
 * pieces allocated is gone or it is not judged (judge it as an empty
 * diff), else
 * LEAKGATE_GATE_RERUN (gate->grew says what is left) or an error. */
int leakgate_gate__lean_end(struct leakgate_gate *gate, bool judged);
/* gate_fast.c: a lean window that left objects: LEAKGATE_GATE_RERUN, as
 * leakgate_gate__fast_untrusted(), its objects watched already. */
int leakgate_gate__lean_grew(struct leakgate_gate *gate);

/* gate_fast.c: end the fast window `gate->cur`.  Returns 0 when nothing
 * it allocated is live (cur.acc stays empty: judge it as exact mode
 * would), LEAKGATE_GATE_RERUN when it grew (gate->grew says how much),
 * or an error. */
int leakgate_gate__fast_stop(struct leakgate_gate *gate);

/* gate_fast.c: --exact: open gate->cur for the test suite/test as an
 * exact window measured on the tracker's own records (every allocation's
 * stack, carried across windows: track.h, "Carry"), when it can be: no
 * peak_limit or settle, one thread.  Returns 1 (open), 0 (not this way:
 * an exact window on profile dumps measures it) or an error. */
int leakgate_gate__recorded_open(struct leakgate_gate *gate,
                                 const char *suite,
                                 const char *test);

/* gate_fast.c: open gate->cur as a fast window for suite/test, recording
 * stacks as it needs them (held: a `scope: suite` test, every stack).
 * Returns 0, ESTATE, ENOMEM or the tracker's error. */
int leakgate_gate__fast_open(struct leakgate_gate *gate,
                             const char *suite,
                             const char *test,
                             bool held);

/* gate_fast.c: what leakgate__fast_stop returns for a held window
 * (gate_suite.c) that left objects. */
#define LEAKGATE_GATE__HOLD 0x484f4c44

/* gate_suite.c: the waiting verdict of the held window gate->cur, which
 * left objects (they are watched until leakgate_gate_suite_over()).
 * Returns 0 or an error; *out is the caller's. */
int leakgate_gate__hold(struct leakgate_gate *gate,
                        struct leakgate_verdict **out,
                        bool judged);

/* gate_suite.c: some test of suite waits for leakgate_gate_suite_over().
 * Cannot fail. */
bool leakgate_gate__suite_waits(const struct leakgate_gate *gate,
                                const char *suite);

/* gate_fast.c: the verdict judged on the stacks a fast window recorded
 * (cur.fast_stacks) did not pass: only an exact measurement may say so.
 * Returns LEAKGATE_GATE_RERUN (gate->grew says how much) or an error. */
int leakgate_gate__fast_untrusted(struct leakgate_gate *gate);

/* gate_fast.c: an exact window for suite/test is opening: when it re-runs
 * the fast window in gate->grew, mark cur as its re-run.  Cannot fail. */
void leakgate_gate__fast_rerun_claim(struct leakgate_gate *gate);

/* gate_fast.c: record in v how the window was measured (a re-run: the
 * first and the second run's residue; a residue that did not recur makes
 * v NOT_JUDGED until a replay measures it).  Returns 0 or ENOMEM. */
int leakgate_gate__fast_annotate(struct leakgate_gate *gate,
                                 struct leakgate_verdict *v);

/* gate_window.c: open gate->cur for suite/test (holding a paused
 * scope), without recording.  Returns 0, ESTATE or ENOMEM. */
int leakgate_gate__scope_open(struct leakgate_gate *gate,
                              const char *suite,
                              const char *test);

/* gate_window.c: the last record of suite/test, or NULL. */
struct leakgate_verdict *leakgate_gate__find_verdict(
    const struct leakgate_gate *gate, const char *suite, const char *test);

/* gate_window.c: drop gate->cur, giving it back to the scope it
 * interrupted.  Cannot fail. */
void leakgate_gate__scope_close(struct leakgate_gate *gate);

/* gate_window.c: the open window starts counting its time (and, with `settle`,
 * the live bytes it starts from); clock_stop adds the time since to
 * cur.seconds.  Cannot fail. */
void leakgate_gate__clock_start(struct leakgate_gate *gate);
void leakgate_gate__clock_stop(struct leakgate_gate *gate);

/* gate_window.c: free a scope's names and diffs and zero it.  Cannot
 * fail. */
void leakgate_gate__scope_reset(struct gate_scope *s);

/* gate_window.c: the thresholds file's settings (and --peak-limit) for
 * suite/test ("[suite]" or NULL: the suite's own window).  Cannot fail. */
void leakgate_gate__resolve_window(struct leakgate_policy_settings *out,
                                   const struct leakgate_gate *gate,
                                   const char *suite,
                                   const char *test);

/* gate_fast.c: forget the fast window that grew (gate->grew).  Cannot
 * fail. */
void leakgate_gate__grew_clear(struct leakgate_gate *gate);

/* gate_exact.c: settle deferred frees (`settle`), before a window, exact
 * or fast, stops.  Cannot fail. */
void leakgate_gate__settle(const struct leakgate_gate *gate);

/* gate_exact.c: start a piece of the exact window gate->cur: dump
 * "before", turn recording on, start its meter (and the tracker, for a
 * re-run or a replay).  Returns 0 or a profile or tracker error. */
int leakgate_gate__piece_start(struct leakgate_gate *gate);

/* gate_exact.c: stop the running piece: settle, recording off, dump
 * "after", add the diff of the pair (and of the peak dump) to cur.acc.
 * Returns 0 or a profile, heap file or diff error. */
int leakgate_gate__piece_stop(struct leakgate_gate *gate);

/* gate_exact.c: cap each stack a suite's own window grew by its growth
 * over the whole suite (first "before" to last "after").  Returns 0 or a
 * heap file or diff error. */
int leakgate_gate__cap_suite_window(struct leakgate_gate *gate);

/* gate_fast.c: the record v of the fast window in gate->grew, which the
 * harness does not run again (why: its reason, NULL: none), made a
 * waiting NOT_JUDGED verdict.  Returns 0 or ENOMEM. */
int leakgate_gate__fast_declined(struct leakgate_gate *gate,
                                 struct leakgate_verdict *v,
                                 const char *why);

/* Stop the open window's peak meter (kept in cur.meter).  Cannot fail. */
void leakgate_gate__meter_stop(struct leakgate_gate *gate);

/* With `repeat`: replace cur.acc by the growth that recurred after the
 * first run, and describe one-time growth in *note_out (caller frees;
 * NULL when there is none).  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_gate__classify_runs(struct leakgate_gate *gate, char **note_out);

/* Build the verdict of the closed scope `gate->cur` (its acc is consumed).
 * Returns 0 or LEAKGATE_ENOMEM; *out is the caller's. */
int leakgate_gate__judge(struct leakgate_verdict **out,
                         struct leakgate_gate *gate,
                         bool judged);

/* The test windows judged (PASS or FAIL), suite windows left out: a run
 * without --filter that judged none ran no test.  Cannot fail. */
size_t leakgate_gate__tests_judged(const struct leakgate_gate *gate);

/* Judge the growth acc (consumed) as w's test's, again, after its window
 * (its suite's end, the run's end): *out is a new verdict with w's names
 * and settings, the caller's.  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_gate__judge_again(struct leakgate_verdict **out,
                               struct leakgate_gate *gate,
                               const struct leakgate_verdict *w,
                               struct leakgate_diff *acc);

/* Symbolizer, created on first use.  Returns 0 or a symbolize error. */
int leakgate_gate__symbolizer(struct leakgate_symbolizer **out,
                              struct leakgate_gate *gate);

/* Write the heap pair, report, JSON and call graph (DOT; SVG and PDF
 * when Graphviz's dot is on PATH, else v->picture_note says so, once per
 * gate) of a failed verdict under --report-dir, by descriptor into
 * REPORT_DIR/SUITE (a directory of this user, never followed through a
 * link).  Artifacts that cannot be written (a full disk, a link, a name
 * too long) cost nothing else: v->artifacts_note names the path and the
 * cause, its report says so, and the files of the set already written are
 * removed.  Returns 0 or LEAKGATE_ENOMEM. */
/* gate_window.c: index gate->verdicts[i] by its name (after it was
 * appended).  Cannot fail: without memory, names are found by a scan. */
void leakgate_gate__index_verdict(struct leakgate_gate *gate, size_t i);

int leakgate_gate__write_artifacts(struct leakgate_gate *gate,
                                   struct leakgate_verdict *v);

/* Write v's report again as its text artifact (after a replay revised
 * it), the same way.  Returns 0 or the error of the write. */
int leakgate_gate__rewrite_artifact_text(struct leakgate_gate *gate,
                                         const struct leakgate_verdict *v);

/* The joinable threads created from now on belong to the test of token
 * (0: none), until joined or detached (intercept.h).  Cannot fail. */
void leakgate_gate__own_threads(struct leakgate_gate *gate, uint32_t token);

/* A thread token's test started and left neither joined nor detached
 * fails it: a note of its record ("leakgate: N thread(s) ...") at where
 * pthread_create was called (symbolized), returned (owned by the gate);
 * NULL when every thread was joined or detached, or out of memory. */
const struct leakgate_note *
leakgate_gate__note_unjoined(struct leakgate_gate *gate,
                             const char *suite,
                             const char *test,
                             uint32_t token);

/* A verdict judged again after its window closed (its suite's end, the
 * run's end): with report, its text when it failed, else ""; its
 * artifacts under --report-dir when it failed; and a thread it left
 * unjoined fails it all the same.  Returns 0, LEAKGATE_ENOMEM or the
 * artifacts' error. */
int leakgate_gate__finish_late(struct leakgate_gate *gate,
                               struct leakgate_verdict *v,
                               bool report);
/* Put v where w stands in the run (the run keeps its order); w is
 * freed.  Cannot fail. */
void leakgate_gate__replace_verdict(struct leakgate_gate *gate,
                                    struct leakgate_verdict *w,
                                    struct leakgate_verdict *v);

/* gate_orphans.c: the suite and name of the test of token (false: none
 * known); the verdict of token's test replaced (failed_now: it failed,
 * and had not). */
typedef bool (*leakgate_gate_owner_fn)(uint32_t token,
                                       const char **suite,
                                       const char **test,
                                       void *payload);
typedef void (*leakgate_gate_revised_fn)(uint32_t token,
                                         bool failed_now,
                                         void *payload);
/* After the last test: what the threads of each finished test allocated
 * after it ended and is still live (track.h, Orphans) is added to that
 * test's growth and its verdict judged again (replaced in place; revised()
 * told).  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_gate__judge_orphans(struct leakgate_gate *gate,
                                 leakgate_gate_owner_fn name_of,
                                 leakgate_gate_revised_fn revised,
                                 void *payload);

/* Write `len` bytes to `path` atomically (temporary file + rename).
 * Returns 0 or LEAKGATE_EIO naming the path. */
int leakgate_gate__write_file(const char *path, const char *data, size_t len);

/* Back to the directory the process started in (a test may have left
 * it), for what runs after the tests: the replay, the thresholds file.
 * Best effort: cannot fail. */
void leakgate_gate__go_home(const struct leakgate_gate *gate);

#endif
