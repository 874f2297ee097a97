/* SPDX-License-Identifier: MIT */
/*
 * verdict: the in-memory record of one judged window, shared by the gate
 * (which fills it), the report (which prints it) and the result writers.
 * Core data only: no I/O, no globals.  The public handle leakgate_verdict
 * is this struct.
 */
#ifndef LEAKGATE_VERDICT_H
#define LEAKGATE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diff.h"
#include "leakgate/leakgate.h"
#include "policy.h"
#include "symbolize.h"

/* One stack whose live bytes changed in the window. */
struct leakgate_vstack {
    uintptr_t *pcs; /* stripped raw stack, innermost first (owned) */
    size_t npcs;
    struct leakgate_frame *frames; /* symbolized, innermost first (owned
                                      array; strings owned by the
                                      symbolizer); NULL if not symbolized */
    size_t nframes;
    size_t shown_begin; /* frames[shown_begin, shown_end) are the user's */
    size_t shown_end;   /* code: allocator/runner/libc start trimmed */
    int64_t bytes;      /* retained bytes (negative: freed older memory) */
    int64_t objs;       /* retained objects */
    struct leakgate_diff_thread *threads; /* per-thread deltas (owned) */
    size_t nthreads;
    struct leakgate_policy_stack_verdict judgement;
    /* The bytes the program asked for, when requested_known (the
     * allocation wrappers saw every request: alloc/track.h). */
    int64_t requested;
    bool requested_known;
    /* Reachable or lost (alloc/reach.h), when reach.known. */
    struct leakgate_reach_counts reach;
};

/* A failure the harness reported (an assertion), not the gate's. */
struct leakgate_note {
    char *file;
    unsigned int line;
    char *message;
};

/* How a window was measured. */
enum leakgate_measured {
    LEAKGATE_MEASURED_EXACT = 0, /* an exact window from the start */
    LEAKGATE_MEASURED_FAST,      /* the fast pass: nothing it allocated
                                    stayed live, no dump was needed */
    LEAKGATE_MEASURED_RERUN,     /* the fast pass grew; an exact re-run
                                    retained the same and was judged */
    LEAKGATE_MEASURED_REPLAY,    /* the fast pass left memory: judged
                                    by an exact replay of the run up to
                                    this test in a fresh process */
    LEAKGATE_MEASURED_SUITE,     /* no window of its own: judged with its
                                    suite's window (`scope: suite` without
                                    leakgate's allocation wrappers) */
    LEAKGATE_MEASURED_SUITE_END, /* `scope: suite`: what its window left
                                    and the suite cleanup did not free
                                    (gate_suite.c) */
};

struct leakgate_verdict {
    char *suite;  /* JUnit classname */
    char *test;   /* test name, "[suite]" for the suite window */
    char *name;   /* "suite/test" */
    char *origin; /* shared outputs: what tells same-named windows apart
                     (the ctest TEST_PREFIX, "BINARY:"), shown before
                     suite and name; NULL: none */
    leakgate_status status;
    bool measured;        /* a window was taken (false: note-only record) */
    char *not_judged_why; /* reason when NOT_JUDGED, else NULL */
    struct leakgate_policy_settings settings;
    struct leakgate_policy_verdict policy;
    struct leakgate_vstack *stacks; /* bytes descending; grown first */
    size_t nstacks;
    int64_t excluded_bytes;      /* framework bookkeeping left out */
    struct leakgate_note *notes; /* harness failures */
    size_t nnotes;
    double seconds;     /* wall time of the window */
    char *report;       /* SPEC §7 text, no colour; "" for a pass */
    char *hint;         /* advice found after judging (a shared fixture:
                           try scope: suite), or NULL */
    char *artifact_dir; /* REPORT_DIR/SUITE/ or NULL */
    char *heap_before;  /* artifact paths or NULL */
    char *heap_after;
    char *json_path;
    char *text_path;    /* REPORT_DIR/SUITE/TEST.txt or NULL */
    char *dot_path;     /* the call graph: DOT text, always with artifacts */
    char *svg_path;     /* drawn by Graphviz's dot, or NULL */
    char *pdf_path;     /* drawn by Graphviz's dot, or NULL */
    char *picture_note; /* why there is no SVG/PDF (said once), or NULL */
    char *artifacts_binary; /* the binary whose heap pair they are */
    char *artifacts_note;   /* why the artifacts could not be written (the
                               path and the cause), or NULL */
    char *ended;            /* the window never closed: how its process ended
                               (killed while it ran), or NULL */
    /* A test whose growth later tests or its suite's cleanup freed: the
     * suite window's hint (scope: suite) is its diagnosis, not a YAML
     * entry or `warmup:` of its own. */
    bool shared_fixture;
    enum leakgate_measured how;
    uint64_t first_bytes; /* RERUN, REPLAY: what the fast pass left */
    uint64_t first_objs;
    bool needs_replay;   /* NOT_JUDGED until a replay measures it */
    bool peak_replay;    /* needs_replay for its peak stacks only (a test of
                            a `scope: suite` suite): the replay's window
                            gives them, the verdict stays this one */
    bool rerun_declined; /* replayed because it could not be re-run */
    /* Judged again at the run's end with what its threads allocated after
     * it ended and kept (gate_orphans.c): no `warmup:` probe. */
    bool orphans;
    /* A thread it started was neither joined nor detached when it ended:
     * the gate fails it (the note says which pthread_create call). */
    bool unjoined;
    /* Counted stacks left out of `stacks` (a replay hands its largest
     * LEAKGATE_REPLAY_MAX_STACKS back): every total counts them too. */
    uint64_t omitted_bytes;
    uint64_t omitted_objs;
    size_t omitted_stacks;
    /* The replay ran it once more after its window (gate_fork.c): the
     * warm-up probe's answer, without a probe of its own. */
    bool probe_known;  /* the replay probed it */
    bool made_once;    /* ... and the second run left nothing over */
    uint32_t watch_id; /* what its fast pass left is watched (track.h) */
    bool suite_wait;   /* SUITE_END: NOT_JUDGED until its suite is over */
    struct leakgate_diff *held; /* ... what it left, by stack (owned) */
    uint64_t held_bytes; /* SUITE_END: what it left that later tests or */
    uint64_t held_objs;  /* the suite cleanup freed (the fixture's) */
    /* The peak meter (track.h, Meter): the highest live heap bytes above
     * the window's start, all threads, and the allocations it made. */
    bool peak_known;      /* measured (the allocation wrappers are in) */
    uint64_t peak_bytes;  /* when peak_known */
    uint64_t allocations; /* when peak_known */
    bool peak_over;       /* peak_bytes > settings.peak_limit */
    uint64_t peak_level;  /* the level at which peak_stacks were taken,
                             0: none were (the window was not exact, or
                             never reached its limit there) */
    struct leakgate_vstack *peak_stacks; /* what held the most bytes at
                                            peak_level, bytes descending
                                            (owned) */
    size_t npeak_stacks;
};

/* Move a diff entry's stack, counts and threads into s (e's arrays are
 * stolen: e keeps NULL).  Cannot fail. */
void leakgate_verdict__steal_entry(struct leakgate_vstack *s,
                                   struct leakgate_diff_entry *e);

/* What a verdict judged again (v) takes from the record it replaces (w):
 * its notes (moved), its time, its first pass and an unjoined thread.
 * Cannot fail. */
void leakgate_verdict__carry_record(struct leakgate_verdict *v,
                                    struct leakgate_verdict *w);

/* A thread v's test left neither joined nor detached fails it, whatever
 * its growth (a verdict judged later keeps that): v PASS and unjoined
 * becomes FAIL.  Cannot fail. */
void leakgate_verdict__fail_unjoined(struct leakgate_verdict *v);

/* The reverse: e borrows s's stack and counts (no threads; s keeps its
 * arrays, e must not outlive them).  Cannot fail. */
void leakgate_verdict__lend_entry(struct leakgate_diff_entry *e,
                                  const struct leakgate_vstack *s);

/* True when v is over its peak limit and over no other: it fails, if it
 * fails, on its peak alone.  Cannot fail. */
bool leakgate_verdict__peak_only(const struct leakgate_verdict *v);

/* The indices of the windows of v[0..n) whose peak was measured, largest
 * peak first, equal peaks in index order; *m of them.  Caller frees; NULL
 * on ENOMEM (error set). */
size_t *leakgate_verdict__peak_order(const struct leakgate_verdict *const *v,
                                     size_t n,
                                     size_t *m);

/* Set v's peak figures and judge them against v->settings: peak_over,
 * the policy's failed (stacks, total or peak), and a passing verdict over
 * its peak limit fails.  Cannot fail. */
void leakgate_verdict__set_peak(struct leakgate_verdict *v,
                                bool known,
                                uint64_t bytes,
                                uint64_t allocations);

/* The reason of a window measured but deliberately not judged (not
 * selected by --filter): a JUnit <skipped>, not an error. */
#define LEAKGATE_VERDICT_MEASURED_ONLY                                         \
    "measured only: this window is not selected for judging"

/* The reason of a window whose thresholds set lost_limit but whose
 * objects were not classified (a window measured exactly: jemalloc's
 * profile has no addresses to scan). */
#define LEAKGATE_VERDICT_LOST_UNKNOWN                                          \
    "lost_limit applies, but which of the bytes this test retained are "       \
    "lost is not known: other threads ran that were not stopped for the "      \
    "scan (asleep, polling or blocking its signal), or the run was "           \
    "--exact, which keeps no map of the heap's objects"

/* True when v is NOT_JUDGED because leakgate could not judge it (a replay
 * that failed or timed out, a process that stopped, too many objects to
 * watch), not because it was left out on purpose
 * (LEAKGATE_VERDICT_MEASURED_ONLY), and fails no other way: CUnit's
 * failures (notes: a fatal assertion, a test that died) already make it
 * a <failure>.  Never a pass: a JUnit <error>, exit 3.  Cannot fail. */
bool leakgate_verdict__unjudged(const struct leakgate_verdict *v);

/* The reason of a test the run never reached (it stopped before: a test
 * that called exit(), died or ran longer than --test-timeout); the rest
 * says where.  A JUnit <skipped>, never a pass. */
#define LEAKGATE_VERDICT_NOT_RUN "not run: "

/* True when v is NOT_JUDGED on purpose (LEAKGATE_VERDICT_MEASURED_ONLY)
 * or was never run (LEAKGATE_VERDICT_NOT_RUN): a JUnit <skipped>.  Cannot
 * fail. */
bool leakgate_verdict__skipped(const struct leakgate_verdict *v);

/* Move src's peak stacks and their level into dst (src keeps none; dst
 * had none).  Cannot fail. */
void leakgate_verdict__move_peak_stacks(struct leakgate_verdict *dst,
                                        struct leakgate_verdict *src);

/* At most this many peak stacks are kept (the largest). */
#define LEAKGATE_PEAK_STACKS_MAX 10

/* Where v's peak_limit came from: "option", "defaults", "tests" or
 * "suites"; NULL when no limit applies (results JSON `peak_limit_from`).
 * Cannot fail. */
const char *leakgate_verdict__peak_from(const struct leakgate_verdict *v);

/* The text that names where v's peak_limit came from, as the report names
 * a stack_limit's: `tests "PATTERN" peak_limit, FILE:LINE`, `suites ...`,
 * `defaults.peak_limit, FILE:LINE` or `--peak-limit/LEAKGATE_PEAK_LIMIT`.
 * Written into buf (size > 0); returns buf. */
const char *leakgate_verdict__peak_source(const struct leakgate_verdict *v,
                                          const char *thresholds_path,
                                          char *buf,
                                          size_t size);

/* "exact", "fast pass", "exact re-run", "exact replay", "suite window",
 * "suite end" (results JSON). */
const char *leakgate_verdict__measured_by(enum leakgate_measured how);

/* The leakgate_measured of a measured_by text; false when unknown. */
bool leakgate_verdict__measured_parse(enum leakgate_measured *out,
                                      const char *text);

/*
 * True when a stack over its limit was allocated while the dynamic linker
 * loaded a library (dlopen running a constructor, or the loader's own
 * records of a library never closed): a second run in the process does
 * not load it again, so warmup would only hide the growth.  Cannot fail.
 */
bool leakgate_verdict__grew_loading(const struct leakgate_verdict *v);

/*
 * Choose s->frames[shown_begin, shown_end), the user's code: cut at the
 * innermost test-runner frame (libcunit, or a function named leakgate_*),
 * drop the process/thread start frames after the user's outermost frame,
 * and of the system-library frames before the user's innermost frame keep
 * only the last (the API the user called, e.g. strdup or pthread_create).
 * Falls back to every frame.  Cannot fail.
 */
void leakgate_verdict__trim(struct leakgate_vstack *s);

/* The test frameworks' shared libraries, by the start of their file
 * names ("libcunit."), NULL-terminated: their frames are the runner's
 * (leakgate_verdict__trim()), and what they allocate is bookkeeping that
 * exact windows exclude (gate.c). */
extern const char *const leakgate_verdict__framework_modules[];

/*
 * The suites and tests entries of cfg that match no window of v[0..n):
 * one line each, "FILE:LINE: tests entry 'PATTERN' matches no test of
 * WHAT\n" ("" when every entry matches; NULL for cfg NULL or out of
 * memory).  A typo, or a test that is gone.  The caller frees.
 */
char *
leakgate_verdict__unmatched_entries(const struct leakgate_config *cfg,
                                    const struct leakgate_verdict *const *v,
                                    size_t n,
                                    const char *what);

/* Free a verdict's contents and the verdict; NULL is a no-op. */
void leakgate_verdict__free(struct leakgate_verdict *v);

/* v's origin (shared outputs: it leads the name in every output, and
 * same-named windows of two origins are two windows), "" for none. */
const char *leakgate_verdict__origin(const struct leakgate_verdict *v);

#endif
