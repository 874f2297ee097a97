/* SPDX-License-Identifier: MIT */
/*
 * report: render verdicts as text (SPEC §7), JUnit XML and JSON.  Core
 * stage 5: builds strings in memory; writing them is the caller's job.
 * Defined by the report files (report_text.c, report_yaml.c,
 * report_junit.c, report_json.c, report_pieces.c; report.c the escaper
 * they share).
 */
#ifndef LEAKGATE_REPORT_H
#define LEAKGATE_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"
#include "verdict.h"

/* What a report needs to be trusted: where and how it was measured. */
struct leakgate_report_env {
    const char *sampling;         /* e.g. "exact: every allocation ..." */
    const char *jemalloc_version; /* mallctl "version" */
    const char *binary;           /* path of the executable */
    const char *build_id;         /* hex, "" if none */
    const char *thresholds_path;  /* NULL: none, all limits 0 */
    const char *report_dir;       /* NULL: no artifacts */
    const char *filter;           /* --filter of the run, NULL: none */
    bool has_tests;  /* the thresholds file has `tests:` entries: YAML */
    bool has_suites; /* ... `suites:` entries: goes under them */
};

/*
 * The failure report of SPEC §7 for a failed verdict: a header naming the
 * test and the total retained; per offending stack (largest first) bytes,
 * objects, limit and its shown frames "function  file:line" (inlined
 * frames marked, module+offset when no debug info); then sampling mode,
 * jemalloc version, binary and build-id, artifact paths, and the YAML that
 * would accept the growth.  ANSI colour when `color`.  For a passing
 * verdict returns "".  Returns NULL on ENOMEM.  Caller frees.
 */
char *leakgate_report__text(const struct leakgate_verdict *v,
                            const struct leakgate_report_env *env,
                            bool color);

/*
 * The YAML lines that accept v's offending growth (a `tests:` entry with
 * one `stacks:` rule per offending stack, frames = function names, never
 * addresses; and total_limit when the total was over, peak_limit when the peak
 * was).  NULL on ENOMEM.
 */
char *leakgate_report__yaml(const struct leakgate_verdict *v);

/*
 * The limits of existing stacks rules to raise to accept v's growth (a
 * stack over a rule of the entry that names v exactly), one line each:
 * "the limit of the stacks rule at line N [frames] to SIZE (now X)".
 * "" when none; NULL on ENOMEM.  The same rules and values as
 * --update-thresholds (thresholds_rules.c).
 */
char *leakgate_report__raises(const struct leakgate_verdict *v);

/* Room for leakgate_report__requested()'s text. */
#define LEAKGATE_REPORT_REQUESTED_SIZE 48

/* " (13 B requested)" into out (LEAKGATE_REPORT_REQUESTED_SIZE bytes)
 * when the bytes the program asked for are known (every report shows
 * them beside jemalloc's usable bytes, equal or not: SPEC §7); else "".
 * Returns out.  Cannot fail. */
const char *
leakgate_report__requested(char *out, int64_t requested, bool known);

/* What the scan found of s's objects (alloc/reach.h): "lost" (no
 * reference to any of them), "indirect" (only lost objects point to
 * them), "reachable", "mixed"; NULL when it is not known (a window
 * measured exactly).  Cannot fail. */
const char *leakgate_report__reach_kind(const struct leakgate_vstack *s);

/* s's reachable bytes and objects (0 when not known).  Cannot fail. */
int64_t leakgate_report__reachable_bytes(const struct leakgate_vstack *s);
int64_t leakgate_report__reachable_objs(const struct leakgate_vstack *s);

/* Some of s's objects are lost (or indirectly lost): a leak to fix, for
 * which no accept rule is offered (SPEC §7).  Cannot fail. */
bool leakgate_report__lost_stack(const struct leakgate_vstack *s);

/* The lost and indirectly lost bytes of v's counted stacks.  Cannot
 * fail. */
uint64_t leakgate_report__lost_bytes(const struct leakgate_verdict *v);

/*
 * Why no rule is offered for v's lost bytes (SPEC §7: a leak to fix),
 * after prefix, into b: "no pointer to this stack's objects remains in
 * the program: ...", without a line break.  False (nothing written) when
 * no stack over its limit holds lost bytes and lost_limit was kept.
 */
bool leakgate_report__lost_advice(struct leakgate_buf *b,
                                  const struct leakgate_verdict *v,
                                  const struct leakgate_report_env *env,
                                  const char *prefix);

/* The results format's names of the roots (bit k of LEAKGATE_ROOT_*:
 * name k): "global", "tls", "stack". */
extern const char *const leakgate_report__root_keys[3];

/* Room for leakgate_report__reach()'s text. */
#define LEAKGATE_REPORT_REACH_SIZE 400
/* Room for leakgate_report__roots()'s text. */
#define LEAKGATE_REPORT_ROOTS_SIZE 64

/* "lost", "indirectly lost (only lost objects point to them)",
 * "reachable from a global", or for a stack of several kinds
 * "32 B lost, 16 B reachable from the stack", into out
 * (LEAKGATE_REPORT_REACH_SIZE bytes); "" when not known.  Returns out.
 * Cannot fail. */
const char *leakgate_report__reach(char *out, const struct leakgate_vstack *s);

/* The roots' names, "a global, thread-local storage, the stack" (those
 * in roots, joined by sep: at most 8 bytes), into out
 * (LEAKGATE_REPORT_ROOTS_SIZE bytes).
 * Returns out.  Cannot fail. */
const char *
leakgate_report__roots(char *out, unsigned int roots, const char *sep);

/* Room for leakgate_report__judged()'s text. */
#define LEAKGATE_REPORT_JUDGED_SIZE 128

/* The run's last count, "N windows judged, M over the limits, K not
 * judged" (and " (not a pass)" when K > 0), into out
 * (LEAKGATE_REPORT_JUDGED_SIZE bytes): a linked binary and `leakgate run`
 * print the same line.  Returns out.  Cannot fail. */
const char *
leakgate_report__judged(char *out, size_t judged, size_t over, size_t unjudged);

/* The bytes the program asked for of v's counted stacks, into *out; false
 * when some counted stack's are not known.  Cannot fail. */
bool leakgate_report__requested_total(const struct leakgate_verdict *v,
                                      int64_t *out);

/*
 * One run's YAML as one snippet that applies as a whole (the per-window
 * snippets each are a whole document or section: pasted together they
 * repeat keys): the entries of every failing window in v[0..n) that
 * prints YAML of its own (not a test its suite's shared fixture explains),
 * and `scope: suite` for suites[0..nsuites), one `tests:` and one
 * `suites:` section, after the words that say where (a new leakgate.yaml
 * with `version: 1`, the end of the file, or under its sections).  Sets
 * *count_out to how many windows' snippets it combines.  NULL on ENOMEM.
 */
char *leakgate_report__run_yaml(size_t *count_out,
                                const struct leakgate_verdict *const *v,
                                size_t n,
                                const char *const *suites,
                                size_t nsuites,
                                const struct leakgate_report_env *env);

/* The run's one thresholds document as printed after "leakgate: " (the
 * words that say what it is and where it goes, then run_yaml's text), ""
 * when no window gave an entry; NULL on ENOMEM.  The caller's. */
char *leakgate_report__run_document(const struct leakgate_verdict *const *v,
                                    size_t n,
                                    const char *const *suites,
                                    size_t nsuites,
                                    const struct leakgate_report_env *env);

/*
 * One window of a results document, rendered by the per-window writers
 * below.  A linked run (gate_results.c), `leakgate run` (its records carry
 * the pieces the program rendered) and the merged outputs of several
 * processes (outputs.c) all compose their documents from these pieces
 * with leakgate_report__junit_doc() / leakgate_report__json_doc(), so the
 * three write the same bytes for the same window.
 */
struct leakgate_report_piece {
    const char *suite;      /* JUnit classname, unescaped */
    const char *junit_case; /* leakgate_report__junit_case()'s text */
    const char *json_test;  /* leakgate_report__json_test()'s text */
    leakgate_status status;
    bool failed;    /* a JUnit <failure> (the gate's, or assertions) */
    bool error;     /* a JUnit <error>: the window never closed (ended),
                       or leakgate could not judge it */
    bool skipped;   /* a JUnit <skipped>: measured, not judged on purpose */
    double seconds; /* wall time of the window */
};

/*
 * Render v's JSON test object into *json and its JUnit testcase into
 * *junit (the caller's buffers, which own the text), and fill *out with
 * both and with leakgate_report__piece_of()'s fields.  False when out of
 * memory.
 */
bool leakgate_report__render_piece(struct leakgate_report_piece *out,
                                   struct leakgate_buf *json,
                                   struct leakgate_buf *junit,
                                   const struct leakgate_verdict *v,
                                   const struct leakgate_report_env *env);
/* Fill out's counts from v (the texts stay NULL).  Cannot fail. */
void leakgate_report__piece_of(struct leakgate_report_piece *out,
                               const struct leakgate_verdict *v);

/* True when v is a JUnit <failure> (failed the gate, or carries notes,
 * and is not an <error>).  Cannot fail. */
bool leakgate_report__is_failure(const struct leakgate_verdict *v);

/*
 * Per-window writers (a failed allocation marks b).  junit_case: the
 * `    <testcase classname="SUITE" name="TEST" ...>...</testcase>\n` of v:
 * <properties> with leakgate.retained_bytes, leakgate.retained_objects,
 * leakgate.stacks, per stack leakgate.stack.N.bytes / .objects /
 * .frames, and when the peak was measured leakgate.peak_bytes,
 * leakgate.allocations (and leakgate.peak_limit when one applies);
 * <failure> holding the report and the harness notes (type "leak", "peak"
 * when the peak alone failed it, or "assertion"); <error
 * type="killed"> for a window whose process ended while it ran
 * (v->ended; type="unfinished" when it was still running: outputs.h).
 * json_test: the test object of v, `    {...}` (no trailing newline).
 * junit_env: the run's `  <properties>...</properties>\n`.  json_env:
 * the value of "environment", `{...}`.
 */
void leakgate_report__junit_case(struct leakgate_buf *b,
                                 const struct leakgate_verdict *v,
                                 const struct leakgate_report_env *env);
void leakgate_report__json_test(struct leakgate_buf *b,
                                const struct leakgate_verdict *v);
void leakgate_report__junit_env(struct leakgate_buf *b,
                                const struct leakgate_report_env *env);
void leakgate_report__json_env(struct leakgate_buf *b,
                               const struct leakgate_report_env *env);

/*
 * The documents around n pieces (in run order): JUnit XML with one
 * <testsuite> per suite in order of first appearance, each with counts
 * and env (junit_env's text); JSON results (docs/results-format.md,
 * "leakgate-results" version 1) with env (json_env's text) and the
 * summary.  NULL on ENOMEM.  Caller frees.
 */
char *leakgate_report__junit_doc(const struct leakgate_report_piece *p,
                                 size_t n,
                                 const char *env);
char *leakgate_report__json_doc(const struct leakgate_report_piece *p,
                                size_t n,
                                const char *env);

/* The JUnit XML / JSON results of n verdicts: their pieces in the
 * documents above.  NULL on ENOMEM. */
char *leakgate_report__junit(const struct leakgate_verdict *const *v,
                             size_t n,
                             const struct leakgate_report_env *env);
char *leakgate_report__json(const struct leakgate_verdict *const *v,
                            size_t n,
                            const struct leakgate_report_env *env);

/* How leakgate_report__put_escaped() escapes. */
enum leakgate_report_escape {
    LEAKGATE_REPORT_ESC_XML_TEXT, /* & < > (HTML and XML text) */
    LEAKGATE_REPORT_ESC_XML_ATTR, /* also " ' and newlines */
    LEAKGATE_REPORT_ESC_JSON      /* inside a JSON string, no quotes */
};

/*
 * Append s (NULL: nothing) escaped for mode, with malformed UTF-8 replaced
 * ("?" in XML, U+FFFD in JSON): the escaper of this module, shared with
 * the other renderers (html, the profile diff).  Cannot fail (a failed
 * allocation marks b).
 */
void leakgate_report__put_escaped(struct leakgate_buf *b,
                                  const char *s,
                                  enum leakgate_report_escape mode);

#endif
