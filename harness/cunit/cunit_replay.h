/* SPDX-License-Identifier: MIT */
/*
 * cunit_replay: what the CUnit glue does around a replay (replay.h) of
 * the tests whose fast first pass left memory: the message naming them,
 * the replay, their verdicts reported and counted in CUnit's summary, the
 * shared-fixture hints of their suites, and the `warmup:` probe.
 */
#ifndef LEAKGATE_CUNIT_REPLAY_H
#define LEAKGATE_CUNIT_REPLAY_H

#include <CUnit/CUnit.h>
#include <stdbool.h>

#include "cunit_records.h"

/* Count a failing verdict the replay (or its suite's end) gave wt, which
 * CUnit has completed, in CUnit's run summary.  Cannot fail. */
void leakgate_cunit__count_replayed_failure(struct wtest *wt);

/* The failure records of the verdicts leakgate_cunit__count_replayed_
 * failure() counted, into CUnit's failure list (CU_get_failure_list()),
 * after the run, when no window is open: appended to CUnit's own list,
 * or, when that is empty (its head is CUnit's own), kept here until the
 * next run and handed out by CU_get_failure_list() as the glue defines
 * it (cunit_replay.c: CUnit's own list, else these).  Cannot
 * fail (a record that cannot be allocated is left out). */
void leakgate_cunit__add_replayed_records(void);
/* Free the records kept above (a new run starts).  Cannot fail. */
void leakgate_cunit__drop_replayed_records(void);

/* Report the tests of ws (NULL: of every suite) whose report waited for
 * their suite's window. */
void leakgate_cunit__report_late(const struct wsuite *ws);

/* Once per run, after the replay: would `warmup: 1` make a failing test
 * pass?  Prints the NOTEs and tells the hooks. */
void leakgate_cunit__probe_warmup(void);

/* Replay the tests waiting for it now, in_cunit: from the last suite's
 * cleanup (CUnit's summary counts their failures).  Errors go to the
 * run's error (exit 3). */
void leakgate_cunit__replay_awaiting(bool in_cunit);

/* After the last test (after the last suite's cleanup: in_cunit, CUnit's
 * summary still to come): what threads allocated after their test ended
 * and is still live is judged against those tests (gate_orphans.c); a
 * verdict that now fails is reported and counted.  Not in a replay. */
void leakgate_cunit__judge_orphans(bool in_cunit);
/* In a replay, at the end of the program's tests: reachable growth
 * classified again (gate_late.c). */
void leakgate_cunit__late_judge(void);

#endif
