/* SPDX-License-Identifier: MIT */
/*
 * results: JSON result files in and out.  In: a "leakgate-results"
 * version-1 document (docs/results-format.md, written by report.c) is read
 * back with json.c into verdicts, so that what several processes measured
 * can be judged, merged and reported together.  Out: the per-process file
 * names of --json/--junit (a directory, or %p/%h in the path) and their
 * atomic, never-clobbering write.
 *
 * A loaded verdict carries everything the thresholds writer and the
 * renderers need: names, status, stacks with their symbolized frames and
 * judgement, notes and the stored report.  Pointers a live verdict has
 * into the thresholds file (the entry or rule that set a limit) point
 * here to small records holding the pattern and line the file recorded.
 */
#ifndef LEAKGATE_RESULTS_H
#define LEAKGATE_RESULTS_H

#include <stdbool.h>
#include <stddef.h>

#include "leakgate/thresholds.h"
#include "report.h"
#include "verdict.h"

struct leakgate_results {
    struct leakgate_verdict **v; /* every loaded window, in load order */
    size_t n, cap;
    void **owned; /* strings and records the verdicts point to */
    size_t nowned, capowned;
    struct leakgate_report_env env; /* of the first file (strings owned) */
    bool has_env;
    bool filtered; /* every file came from a run with the same --filter */
    size_t nfiles;
    /* The results version of the first file and, when a later file has
     * another, that file's name and version (`leakgate compare` refuses
     * such a mix); names owned. */
    int version;
    char *version_file;
    int other_version;
    char *other_version_file;
    const struct leakgate_verdict **view; /* one per name: see summary */
    size_t nview;
    char *summary; /* last summary text */
};

/*
 * Parse one document (len bytes, `name` for messages) and append its
 * windows.  Returns 0; LEAKGATE_EFORMAT ("NAME:LINE:COL: what");
 * LEAKGATE_ETOOBIG; LEAKGATE_ENOMEM.  r is unchanged on failure.
 */
int leakgate_results__load_text(struct leakgate_results *r,
                                const char *text,
                                size_t len,
                                const char *name);

/* Which record of a window speaks for it (higher wins): judged beats
 * measured-only beats unmeasured; among judged, a failure beats a pass;
 * with notes beats without.  0..5.  Cannot fail. */
int leakgate_results__rank(const struct leakgate_verdict *v);
/* The same from a record's fields (a `leakgate run` record: measured,
 * its status, whether it has notes).  Cannot fail. */
int
leakgate_results__rank_of(bool measured, leakgate_status status, bool notes);

/* Fill r->view: one verdict per window name (judged over measured-only,
 * fail over pass-with-notes over pass), in first-seen
 * order.  Returns 0
 * or LEAKGATE_ENOMEM. */
int leakgate_results__view(struct leakgate_results *r);

/* spec names one file per process: a directory (DIR/, or one that
 * exists) or a name with %p or %h.  Cannot fail. */
bool leakgate_results__per_process(const char *spec);

/*
 * The file a process writes for --json/--junit SPEC (extension ext, e.g.
 * "json"): a SPEC ending in '/' or naming a directory gives
 * "SPEC/PROGRAM.HOST.PID.EXT" (*noclobber_out true: never replace
 * another file); otherwise "%p" becomes the pid, "%h" the host name and
 * "%%" a '%'.  Returns 0 or LEAKGATE_ENOMEM; *out is the caller's.
 */
int leakgate_results__path(char **out,
                           bool *noclobber_out,
                           const char *spec,
                           const char *ext);

/*
 * Write text to the file leakgate_results__path() names for spec,
 * atomically (creating a directory SPEC/ when needed).  Returns 0,
 * LEAKGATE_EIO (naming the path) or LEAKGATE_ENOMEM.
 */
int
leakgate_results__write(const char *spec, const char *ext, const char *text);

/* leakgate_results__write() of a rendered text, which it frees; NULL text
 * (the rendering ran out of memory) is LEAKGATE_ENOMEM naming what. */
int leakgate_results__write_rendered(const char *spec,
                                     const char *ext,
                                     char *text,
                                     const char *what);

/* results_api.c: */
/*
 * Write DIR/index.html for n verdicts (html.c): the SVG of each failing
 * verdict is read back from its svg_path and inlined.  `pictures` says
 * what became of the call graphs (NULL: not said).  The entry point for
 * any aggregation of verdicts (a gate's run, or several runs merged).
 * Returns 0, LEAKGATE_EIO (naming the path) or LEAKGATE_ENOMEM.
 */
int leakgate_results__write_index(const char *dir,
                                  const struct leakgate_verdict *const *v,
                                  size_t n,
                                  const struct leakgate_report_env *env,
                                  const char *pictures);

#endif
