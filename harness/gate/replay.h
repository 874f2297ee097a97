/* SPDX-License-Identifier: MIT */
/*
 * replay: exact verdicts for growth that happens once.
 *
 * A fast window that grew is re-run in an exact window (gate_fast.c).
 * When the re-run leaves less than the first run did, part of the growth
 * happened only once (a lazy initialisation, a cache filled on first use,
 * glibc's time-zone data): exact mode would have measured it with its
 * stacks, the re-run cannot.  Such verdicts stay NOT_JUDGED
 * (needs_replay) until the end of the run; then the program is started
 * again (/proc/self/exe with the same arguments, $LEAKGATE_REPLAY naming
 * a list file) and runs every test once, unmeasured, except the listed
 * ones, each measured in an exact window from the start.  The state
 * before a listed test is then what exact mode would have had: every
 * earlier test ran once.  The replay writes its JSON results next to the
 * list; the first process takes the listed tests' verdicts from it.
 *
 * The replay assumes that the suite is deterministic, as any re-run
 * does; the report says which verdicts came from a replay.
 */
#ifndef LEAKGATE_REPLAY_H
#define LEAKGATE_REPLAY_H

#include <stdbool.h>

#include "gate.h"

#define LEAKGATE_REPLAY_ENV "LEAKGATE_REPLAY"
/* ... and, set to 1, makes it a warm-up probe (leakgate_gate_probe_warmup). */
#define LEAKGATE_REPLAY_WARMUP_ENV "LEAKGATE_REPLAY_WARMUP"
/* ... and, set to 1, measures every listed test in an exact window (the
 * tests a replay left to an exact one: gate_fork.c).  Without it a
 * replay measures by ordinals where it can, and names the tests it could
 * not in the list's ".exact" twin. */
#define LEAKGATE_REPLAY_EXACT_ENV "LEAKGATE_REPLAY_EXACT"
/* ... and, set to 1, lets the replay of a lean process run lean, without
 * jemalloc: it measures by allocation order alone (replay.c). */
#define LEAKGATE_REPLAY_LEAN_ENV "LEAKGATE_REPLAY_LEAN"
/* ... and the pipe (a file descriptor) it beats on as its tests run
 * (leakgate_gate_replay_beat()): the first process stops a replay that is
 * silent for the replay timeout. */
#define LEAKGATE_REPLAY_BEAT_ENV "LEAKGATE_REPLAY_BEAT"

/*
 * At leakgate_gate_new(): when $LEAKGATE_REPLAY names a list, make this
 * gate the replay's: exact windows for the listed tests only, JSON
 * results to the list's ".json" twin, no JUnit, no thresholds update.
 * Returns 0 (also when this is no replay), LEAKGATE_EIO or ENOMEM.
 */
int leakgate_replay__child_setup(struct leakgate_gate *gate);

/* replay_run.c: at leakgate_gate_new(), keep the options' environment
 * twins for the replays (0 or ENOMEM); in a replay, take the pipe it
 * beats on from $LEAKGATE_REPLAY_BEAT (cannot fail). */
int leakgate_replay__save_env(struct leakgate_gate *gate);
void leakgate_replay__take_beat(struct leakgate_gate *gate);

/* In a replay: a listed test was measured (a beat of its own, counted
 * by the first process for its progress lines).  Cannot fail. */
void leakgate_replay__beat_measured(const struct leakgate_gate *gate);

/* Progress lines while a replay runs, every N seconds on stderr:
 * $LEAKGATE_PROGRESS (seconds; 0 or not a number: none), else 5 when
 * stderr is a terminal, else none.  Cannot fail. */
#define LEAKGATE_PROGRESS_ENV "LEAKGATE_PROGRESS"

/* A new scratch directory for a replay's files, $TMPDIR/leakgate-replay.*
 * (or /tmp's), after this user's stale ones are removed
 * (leakgate_files__clean_stale_replays()); *dir its path.  Returns 0,
 * LEAKGATE_EIO (naming it) or LEAKGATE_ENOMEM. */
int leakgate_replay__make_scratch(struct leakgate_buf *dir);

/* Wait for the replay pid, reading its beats on beat (non-blocking):
 * silent for timeout_s, it is sent the stop signal, and killed 10 s
 * later (*timed_out says so); a progress line every
 * leakgate_replay__progress_s() seconds counts its measured tests of
 * total.  *status: its wait status. */
void leakgate_replay__wait(pid_t pid,
                           int beat,
                           unsigned int timeout_s,
                           size_t total,
                           int *status,
                           bool *timed_out);
unsigned int leakgate_replay__progress_s(void);

/*
 * replay_run.c: start the replay of list (this program again, its output
 * into log, preload in LD_PRELOAD when not NULL; probe: the warm-up probe)
 * and wait for it, stopping it when a test runs longer than the replay
 * timeout (gate->replay.timed_out says so).  *status_out: its wait
 * status.  Returns 0 or LEAKGATE_EIO (cannot fork).
 */
int leakgate_replay__start_and_wait(struct leakgate_gate *gate,
                                    char *const *argv,
                                    const char *list,
                                    const char *log,
                                    const char *preload,
                                    bool probe,
                                    int *status_out);

/* The public side (leakgate.h): leakgate_gate_measures(),
 * leakgate_gate_replays_pending(), leakgate_gate_replay(),
 * leakgate_verdict_waits_for_replay(). */

/* Free what the replay left in the gate (after its verdicts). */
void leakgate_replay__dispose(struct leakgate_gate *gate);

/*
 * In a replay, before it writes its results: a window with more than
 * LEAKGATE_REPLAY_MAX_STACKS stacks keeps only its largest ones (its
 * status, totals and report text stay whole), so that the results file
 * stays readable (100,000 stacks take 1.9 GB of JSON).  The first process
 * then shows the replay's own report.  Outside a replay, nothing.
 */
#define LEAKGATE_REPLAY_MAX_STACKS 1000
void leakgate_replay__cap_stacks(struct leakgate_gate *gate);

#endif
