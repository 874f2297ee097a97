/* SPDX-License-Identifier: MIT */
/*
 * thresholds: the ratchet.  From judged windows (a gate's verdicts, or
 * verdicts read back from JSON results) and a thresholds file, compute the
 * file that accepts what was measured (--update-thresholds) and/or lowers
 * what is far above it (--tighten), and say what changed, what is loose
 * and what is stale.
 *
 * Pipeline position: after policy and report, beside the gate.  The
 * windows are judged again against the file as it is now (policy.c), so
 * a file edited since the run, or merged from many processes, is updated
 * correctly.  Edits go through yamledit.c, so nothing but the changed
 * lines moves.  thresholds.c evaluates and accepts, thresholds_tighten.c
 * tightens and finds stale entries, thresholds_file.c loops to a fixed
 * point, checks the result, and does the locked, atomic file update.
 *
 * Invariants: what is written is a valid thresholds file (config.c reads
 * it back before it is written) under which every judged window passes
 * when accepting; stack rules name functions (glob-escaped exact names),
 * never addresses or source lines; limits only go up when accepting and
 * only down when tightening.
 */
#ifndef LEAKGATE_THRESHOLDS_INTERNAL_H
#define LEAKGATE_THRESHOLDS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "leakgate/thresholds.h"
#include "policy.h"
#include "thresholds_rules.h"
#include "util.h"
#include "verdict.h"
#include "yamledit.h"

/* The options, parsed. */
struct leakgate_thresholds_opts {
    bool accept;
    bool tighten;
    bool partial;
    bool write; /* the result will be written (else: a dry run) */
    bool slack_is_bytes;
    uint64_t slack_bytes;   /* when slack_is_bytes */
    unsigned int slack_pct; /* else, percent of the measurement */
};

/* One window judged against the current file. */
struct leakgate_twin {
    const struct leakgate_verdict *v;
    const char *test; /* NULL for a suite's own window */
    bool judged;      /* measured, judged, no failed assertion */
    bool name_judged; /* some window of the same name is judged */
    struct leakgate_policy_settings set;
    struct leakgate_policy_verdict pol;
    struct leakgate_policy_stack_verdict *per; /* v->nstacks */
    bool peak_over; /* judged, its peak known and over set.peak_limit */
};

/* True when w fails under the current file: a stack, the total or its
 * peak over its limit.  Cannot fail. */
bool leakgate_thresholds__failed(const struct leakgate_twin *w);

/* The file as it is now: text, meaning and layout of one round. */
struct leakgate_tstate {
    const char *text;
    struct leakgate_config *cfg;
    struct leakgate_ylayout lay;
    struct leakgate_twin *w;
    size_t nw;
};

/* What an update says, and how much it changed. */
struct leakgate_treport {
    struct leakgate_buf lines;
    size_t changes, stale, loose;
    bool dry; /* nothing is written: changes say "would add" etc. */
};

/* Parse text, load its layout and judge every window.  Returns 0,
 * LEAKGATE_ECONFIG or LEAKGATE_ENOMEM; dispose in every case. */
int leakgate_thresholds__state(struct leakgate_tstate *st,
                               const char *text,
                               size_t len,
                               const char *name,
                               const struct leakgate_verdict *const *v,
                               size_t n);
void leakgate_thresholds__state_dispose(struct leakgate_tstate *st);

/* Accept: edits that make every failing judged window pass (one round).
 * Adds report lines and counts changes.  Cannot fail: allocation
 * failures mark e->failed. */
void leakgate_thresholds__accept(struct leakgate_yedits *e,
                                 struct leakgate_treport *rep,
                                 const struct leakgate_tstate *st);

/* Tighten (apply): lower loose limits, remove stale stack rules.  Or
 * only report (apply false): loose limits and stale stack rules when
 * `limits`, and with complete runs stale entries and ignore rules. */
void leakgate_thresholds__tighten(struct leakgate_yedits *e,
                                  struct leakgate_treport *rep,
                                  const struct leakgate_tstate *st,
                                  const struct leakgate_thresholds_opts *o,
                                  bool apply,
                                  bool limits);

/* Parse a slack ("25%", "4 KiB"); NULL gives 25%.  Returns 0 or
 * LEAKGATE_EUSAGE naming the value. */
int leakgate_thresholds__parse_slack(struct leakgate_thresholds_opts *o,
                                     const char *slack);

/*
 * Rewrite text (len bytes; NULL/0 for a file that does not exist yet)
 * for the windows.  *out and *len_out get the new text (the caller's; equal
 * to the input when nothing changes).  Returns 0, LEAKGATE_ECONFIG,
 * LEAKGATE_ENOMEM, or LEAKGATE_ERROR when the result would not pass.
 */
int leakgate_thresholds__rewrite(char **out,
                                 size_t *len_out,
                                 struct leakgate_treport *rep,
                                 const char *text,
                                 size_t len,
                                 const char *name,
                                 const struct leakgate_verdict *const *v,
                                 size_t n,
                                 const struct leakgate_thresholds_opts *o);

/* The file update behind the public API: lock the directory, read,
 * rewrite, write atomically.  Returns what the public functions do. */
int leakgate_thresholds__update_file(
    leakgate_thresholds_outcome **out,
    const char *path,
    const struct leakgate_verdict *const *v,
    size_t n,
    const struct leakgate_thresholds_options *opts);

/* ---- helpers shared by the thresholds_*.c files ---------------------- */

/* The start of a report line, "  added     " ("  would add " in a dry
 * run for the verbs of changes). */
void leakgate_thresholds__verb(struct leakgate_treport *rep, const char *verb);

/* "4,096 B" into out (>= 32 bytes).  Returns out. */
const char *leakgate_thresholds__bytes(char *out, size_t size, uint64_t n);

/* The layout node of a tests/suites entry's value (NULL if not found). */
const struct leakgate_ynode *
leakgate_thresholds__entry_node(const struct leakgate_tstate *st,
                                const struct leakgate_config_entry *e,
                                const struct leakgate_ynode **section_out,
                                size_t *pair_out);

/* "tests" or "suites": the section of an entry (NULL for defaults). */
const char *leakgate_thresholds__section(const struct leakgate_tstate *st,
                                         const struct leakgate_config_entry *e);

/* "tests \"p/x\" (line 12)", "suites \"s\"", "defaults" for messages. */
void leakgate_thresholds__describe(struct leakgate_buf *b,
                                   const struct leakgate_tstate *st,
                                   const struct leakgate_config_entry *e);

/* "[f, g]" for messages. */
void leakgate_thresholds__frames(struct leakgate_buf *b,
                                 char *const *frames,
                                 size_t n);

#endif
