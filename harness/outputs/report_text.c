/* SPDX-License-Identifier: MIT */
/*
 * report_text: the failure report of SPEC §7, what a developer reads when
 * a test fails.  It names the test and what it retained, prints each
 * offending stack trimmed to the user's code with an aligned file:line
 * column, says where every limit came from, how the numbers were
 * measured, where the artifacts are, and ends with the YAML that would
 * accept the growth (report_yaml.c).  ANSI colour only when asked for.
 * Above report.c (report_parts.h), below report_junit.c, whose testcase
 * carries this text.
 */
#include "report.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report_parts.h"
#include "util.h"

/* A report shows the largest offending stacks in full; the rest are
 * counted (JSON has them all). */
#define MAX_TEXT_STACKS 20

/* ANSI SGR parameters: failure, note, the numbers, the paths. */
#define SGR_FAIL "1;31"
#define SGR_NOTE "1;33"
#define SGR_BOLD "1"
#define SGR_DIM "2"

/* Widest function column that locations still line up after: one long
 * C++ name must not push every location off the screen. */
#define NAME_COLUMN_MAX 40
/* Threads listed for one stack before "and N more". */
#define THREADS_SHOWN 8

struct text {
    struct leakgate_buf *b;
    bool color;
};

static uint64_t
magnitude(int64_t n)
{
    return n < 0 ? 0 - (uint64_t)n : (uint64_t)n;
}

static void
sgr_on(struct text *t, const char *sgr)
{
    if (t->color)
        leakgate_buf__printf(t->b, "\033[%sm", sgr);
}

static void
sgr_off(struct text *t)
{
    if (t->color)
        leakgate_buf__puts(t->b, "\033[0m");
}

/* "4,096 B" in bold. */
static void
put_bytes(struct text *t, int64_t bytes)
{
    char num[32];

    sgr_on(t, SGR_BOLD);
    leakgate_buf__printf(t->b, "%s B", leakgate_util__group_signed(num, bytes));
    sgr_off(t);
}

/* "1 object", "3 objects" (freed objects are counted as a magnitude). */
static void
put_objs(struct text *t, int64_t objs)
{
    char num[32];

    leakgate_buf__printf(
        t->b, "%s %s", leakgate_report__group_u(num, magnitude(objs), false),
        leakgate_report__plural(magnitude(objs), "object", "objects"));
}

static const char *
path_or(const struct leakgate_report_env *env)
{
    return env->thresholds_path ? env->thresholds_path : "thresholds file";
}

/* `tests "parser/test_x" stack_limit, leakgate.yaml:12` */
static void
put_entry(struct text *t,
          const char *section,
          const struct leakgate_config_entry *e,
          const char *what,
          const struct leakgate_report_env *env)
{
    leakgate_buf__printf(t->b, "%s \"%s\" %s, %s:%u", section,
                         e->pattern ? e->pattern : "", what, path_or(env),
                         e->line);
}

static bool
owns_rule(const struct leakgate_config_entry *e,
          const struct leakgate_config_stack_rule *r)
{
    for (size_t i = 0; e && i < e->nstacks; i++) {
        if (&e->stacks[i] == r)
            return true;
    }
    return false;
}

/* `tests "parser/test_x" stack rule [cache_insert], leakgate.yaml:14` */
static void
put_rule(struct text *t,
         const struct leakgate_verdict *v,
         const struct leakgate_config_stack_rule *r,
         const struct leakgate_report_env *env)
{
    const struct leakgate_config_entry *te = v->settings.test_entry;
    const struct leakgate_config_entry *se = v->settings.suite_entry;

    if (owns_rule(te, r))
        leakgate_buf__printf(t->b, "tests \"%s\" ", te->pattern);
    else if (owns_rule(se, r))
        leakgate_buf__printf(t->b, "suites \"%s\" ", se->pattern);
    leakgate_buf__puts(t->b, "stack rule [");
    for (size_t i = 0; i < r->nframes; i++)
        leakgate_buf__printf(t->b, "%s%s", i ? ", " : "", r->frames[i]);
    leakgate_buf__printf(t->b, "], %s:%u", path_or(env), r->line);
}

static void
put_limit_source(struct text *t,
                 const struct leakgate_verdict *v,
                 const struct leakgate_vstack *s,
                 const struct leakgate_report_env *env)
{
    switch (leakgate_report__limit_source(v, s)) {
    case LEAKGATE_REPORT_SOURCE_RULE:
        put_rule(t, v, s->judgement.rule, env);
        break;
    case LEAKGATE_REPORT_SOURCE_TEST_ENTRY:
        put_entry(t, "tests", v->settings.test_entry, "stack_limit", env);
        break;
    case LEAKGATE_REPORT_SOURCE_SUITE_ENTRY:
        put_entry(t, "suites", v->settings.suite_entry, "stack_limit", env);
        break;
    case LEAKGATE_REPORT_SOURCE_DEFAULTS:
    case LEAKGATE_REPORT_SOURCE_NONE:
        leakgate_buf__puts(t->b, env->thresholds_path
                                     ? "defaults.stack_limit"
                                     : "no thresholds file: every limit is 0");
        break;
    }
}

static void
put_total_source(struct text *t,
                 const struct leakgate_verdict *v,
                 const struct leakgate_report_env *env)
{
    const struct leakgate_policy_settings *st = &v->settings;

    if (st->test_entry && st->test_entry->has_total_limit)
        put_entry(t, "tests", st->test_entry, "total_limit", env);
    else if (st->suite_entry && st->suite_entry->has_total_limit)
        put_entry(t, "suites", st->suite_entry, "total_limit", env);
    else
        leakgate_buf__puts(t->b, "defaults.total_limit");
}

/* ", allocated by thread 3" when it was not simply the first thread. */
static void
put_threads(struct text *t, const struct leakgate_vstack *s)
{
    char num[32];

    if (s->nthreads == 0 || (s->nthreads == 1 && s->threads[0].tid == 0))
        return;
    if (s->nthreads == 1) {
        leakgate_buf__printf(t->b, ", allocated by thread %" PRIu64,
                             s->threads[0].tid);
        return;
    }
    leakgate_buf__puts(t->b, ", allocated by threads ");
    for (size_t i = 0; i < s->nthreads && i < THREADS_SHOWN; i++)
        leakgate_buf__printf(
            t->b, "%s%" PRIu64 " (%s B)", i ? ", " : "", s->threads[i].tid,
            leakgate_util__group_signed(num, s->threads[i].delta_bytes));
    if (s->nthreads > THREADS_SHOWN)
        leakgate_buf__printf(t->b, " and %zu more",
                             s->nthreads - THREADS_SHOWN);
}

static size_t
name_width(const struct leakgate_frame *f)
{
    size_t n = f->function ? strlen(f->function) : 2;

    return n + (f->inlined ? strlen(" (inlined)") : 0);
}

static void
put_location(struct text *t, const struct leakgate_frame *f)
{
    sgr_on(t, SGR_DIM);
    if (f->file && f->line)
        leakgate_buf__printf(t->b, "%s:%u", f->file, f->line);
    else if (f->file)
        leakgate_buf__puts(t->b, f->file);
    else if (f->module)
        leakgate_buf__printf(t->b, "%s+0x%" PRIxPTR, f->module,
                             f->module_offset);
    else
        leakgate_buf__printf(t->b, "0x%" PRIxPTR, f->pc);
    sgr_off(t);
}

static void
text_pcs(struct text *t, const struct leakgate_vstack *s)
{
    if (s->npcs == 0)
        leakgate_buf__puts(t->b, "      (no frames outside the allocator)\n");
    for (size_t i = 0; i < s->npcs; i++)
        leakgate_buf__printf(t->b, "      0x%" PRIxPTR "\n", s->pcs[i]);
}

/* "      cache_insert    src/cache.c:42", innermost first, the locations
 * in one column. */
static void
text_frames(struct text *t, const struct leakgate_vstack *s)
{
    size_t begin, end, width = 0;

    if (!s->frames) {
        text_pcs(t, s);
        return;
    }
    leakgate_report__shown_range(s, &begin, &end);
    for (size_t k = begin; k < end; k++) {
        size_t w = name_width(&s->frames[k]);

        if (w <= NAME_COLUMN_MAX && w > width)
            width = w;
    }
    for (size_t k = begin; k < end; k++) {
        const struct leakgate_frame *f = &s->frames[k];
        size_t w = name_width(f);

        leakgate_buf__printf(t->b, "      %s%s%*s  ",
                             f->function ? f->function : "??",
                             f->inlined ? " (inlined)" : "",
                             (int)(w < width ? width - w : 0), "");
        put_location(t, f);
        leakgate_buf__puts(t->b, "\n");
    }
}

/* One stack of the growth, or (peak) one that held the peak: no limit of
 * its own. */
static void
text_stack(struct text *t,
           const struct leakgate_verdict *v,
           const struct leakgate_report_env *env,
           const struct leakgate_vstack *s,
           size_t nth,
           size_t of,
           bool peak)
{
    char num[32], req[LEAKGATE_REPORT_REQUESTED_SIZE];
    char reach[LEAKGATE_REPORT_REACH_SIZE];

    leakgate_buf__printf(t->b, "  %sstack %zu of %zu: ", peak ? "peak " : "",
                         nth, of);
    put_bytes(t, s->bytes);
    leakgate_buf__puts(t->b, leakgate_report__requested(req, s->requested,
                                                        s->requested_known));
    leakgate_buf__puts(t->b, " in ");
    put_objs(t, s->objs);
    if (!peak && v->status != LEAKGATE_STATUS_NOT_JUDGED) {
        leakgate_buf__printf(
            t->b, ", %s %s B (",
            s->judgement.over ? "limit" : "within its limit",
            leakgate_report__group_u(num, s->judgement.limit, false));
        put_limit_source(t, v, s, env);
        leakgate_buf__puts(t->b, ")");
    }
    put_threads(t, s);
    if (*leakgate_report__reach(reach, s))
        leakgate_buf__printf(t->b, "; %s", reach);
    leakgate_buf__puts(t->b, "\n");
    text_frames(t, s);
}

static void
text_stacks(struct text *t,
            const struct leakgate_verdict *v,
            const struct leakgate_report_env *env,
            const struct leakgate_report_tally *n)
{
    size_t nth = 0;

    for (size_t i = 0; i < v->nstacks; i++) {
        if (!leakgate_report__offending(v, &v->stacks[i]))
            continue;
        if (nth == MAX_TEXT_STACKS) {
            leakgate_buf__printf(t->b,
                                 "  ... and %zu more stacks (smaller ones) "
                                 "not shown here; --json and --report-dir "
                                 "keep every one\n",
                                 n->nshown - nth);
            break;
        }
        text_stack(t, v, env, &v->stacks[i], ++nth, n->nshown, false);
    }
}

/* The window's name, printable: a newline or a control byte in a test's
 * name must not cut or colour the report (leakgate_util__name_escape). */
static void
put_name(struct text *t, const struct leakgate_verdict *v)
{
    if (v->name) {
        leakgate_util__name_escape(t->b, v->name);
    } else {
        leakgate_util__name_escape(t->b, leakgate_report__or_unknown(v->suite));
        leakgate_buf__puts(t->b, "/");
        leakgate_util__name_escape(t->b, leakgate_report__or_unknown(v->test));
    }
}

/* "; peak 41,943,152 B, 1,204 allocations" (when measured).  The peak is
 * the heap's net rise, the retained bytes the sum of the stacks that grew:
 * a window that freed older memory may retain more than its peak, and the
 * line says why instead of contradicting itself. */
static void
put_peak(struct text *t,
         const struct leakgate_verdict *v,
         const struct leakgate_report_tally *n)
{
    char num[32];

    if (!v->peak_known)
        return;
    leakgate_buf__puts(t->b, "; peak ");
    put_bytes(t, (int64_t)v->peak_bytes);
    leakgate_buf__printf(
        t->b, ", %s %s", leakgate_report__group_u(num, v->allocations, false),
        leakgate_report__plural(v->allocations, "allocation", "allocations"));
    if (n->bytes <= 0 || v->peak_bytes >= (uint64_t)n->bytes)
        return;
    if (n->nfreed > 0)
        leakgate_buf__printf(
            t->b,
            " (the heap's net rise: the window also freed "
            "%s B allocated before it)",
            leakgate_report__group_u(num, magnitude(n->freed_bytes), false));
    else
        leakgate_buf__puts(t->b, " (the heap's net rise, less than it "
                                 "retained: memory allocated before the "
                                 "window was freed in it)");
}

/* A window over its peak_limit: what held the bytes at the peak. */
static void
text_peak(struct text *t,
          const struct leakgate_verdict *v,
          const struct leakgate_report_env *env)
{
    char num[32];

    if (!v->peak_over)
        return;
    leakgate_buf__puts(t->b, "  peak: the heap grew ");
    put_bytes(t, (int64_t)v->peak_bytes);
    leakgate_buf__printf(
        t->b,
        " above its level at the test's start, limit "
        "%s B",
        leakgate_report__group_u(num, v->settings.peak_limit, false));
    if (v->npeak_stacks == 0) {
        /* (A `scope: suite` test's come from the replay too.) */
        leakgate_buf__puts(t->b, "; no stacks: the exact measurement did not "
                                 "reach the limit again\n");
        return;
    }
    leakgate_buf__printf(t->b,
                         "; in an exact measurement of the test, at %s B, "
                         "these stacks held the most:\n",
                         leakgate_report__group_u(num, v->peak_level, false));
    for (size_t i = 0; i < v->npeak_stacks; i++)
        text_stack(t, v, env, &v->peak_stacks[i], i + 1, v->npeak_stacks, true);
}

/* "leakgate: FAIL parser/t: 4,208 B retained in 2 objects (...)" */
static void
text_header(struct text *t,
            const struct leakgate_verdict *v,
            const struct leakgate_report_env *env,
            const struct leakgate_report_tally *n)
{
    bool note = v->status == LEAKGATE_STATUS_NOT_JUDGED;
    size_t nover = v->policy.nover;
    char num[32], req[LEAKGATE_REPORT_REQUESTED_SIZE];

    leakgate_buf__puts(t->b, "leakgate: ");
    sgr_on(t, note ? SGR_NOTE : SGR_FAIL);
    leakgate_buf__puts(t->b, note ? "NOTE" : "FAIL");
    sgr_off(t);
    leakgate_buf__puts(t->b, " ");
    put_name(t, v);
    leakgate_buf__puts(t->b, ": ");
    put_bytes(t, n->bytes);
    leakgate_buf__puts(t->b, leakgate_report__requested(req, n->requested,
                                                        n->requested_known));
    leakgate_buf__puts(t->b, " retained in ");
    put_objs(t, n->objs);
    if (note) {
        leakgate_buf__printf(t->b, ", not judged: %s\n",
                             leakgate_report__or_unknown(v->not_judged_why));
        return;
    }
    leakgate_buf__puts(t->b, " (");
    if (nover > 0)
        leakgate_buf__printf(
            t->b, "%zu %s", nover,
            leakgate_report__plural(nover, "stack over its limit",
                                    "stacks over their limits"));
    if (v->policy.total_over) {
        leakgate_buf__printf(
            t->b, "%stotal over its limit of %s B (", nover ? "; " : "",
            leakgate_report__group_u(num, v->settings.total_limit, false));
        put_total_source(t, v, env);
        leakgate_buf__puts(t->b, ")");
    }
    if (v->policy.lost_over)
        leakgate_buf__printf(
            t->b, "%slost bytes over lost_limit of %s B",
            nover || v->policy.total_over ? "; " : "",
            leakgate_report__group_u(num, v->settings.lost_limit, false));
    if (v->peak_over) {
        char from[512];

        leakgate_buf__printf(
            t->b, "%speak over its limit of %s B (%s)",
            nover || v->policy.total_over || v->policy.lost_over ? "; " : "",
            leakgate_report__group_u(num, v->settings.peak_limit, false),
            leakgate_verdict__peak_source(v, env->thresholds_path, from,
                                          sizeof from));
    }
    leakgate_buf__puts(t->b, ")");
    put_peak(t, v, n);
    leakgate_buf__puts(t->b, "\n");
}

static bool
ignore_seen_before(const struct leakgate_verdict *v, size_t i)
{
    for (size_t j = 0; j < i; j++) {
        if (v->stacks[j].bytes > 0 && v->stacks[j].judgement.ignored &&
            v->stacks[j].judgement.ignore == v->stacks[i].judgement.ignore)
            return true;
    }
    return false;
}

/* "1 stack ignored (ignore rule leakgate.yaml:20: reason; ...)" */
static void
put_ignored(struct text *t,
            const struct leakgate_verdict *v,
            const struct leakgate_report_env *env,
            size_t nignored)
{
    const char *sep = "";

    leakgate_buf__printf(t->b, "%zu %s ignored (", nignored,
                         leakgate_report__plural(nignored, "stack", "stacks"));
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_config_ignore *ig = v->stacks[i].judgement.ignore;

        if (v->stacks[i].bytes <= 0 || !v->stacks[i].judgement.ignored ||
            ignore_seen_before(v, i))
            continue;
        if (ig && ig->line == 0) {
            leakgate_buf__printf(t->b, "%s%s", sep, ig->reason);
            sep = "; ";
            continue;
        }
        leakgate_buf__printf(t->b, "%signore rule", sep);
        if (ig)
            leakgate_buf__printf(t->b, " %s:%u", path_or(env), ig->line);
        if (ig && ig->reason)
            leakgate_buf__printf(t->b, ": %s", ig->reason);
        sep = "; ";
    }
    leakgate_buf__puts(t->b, ")");
}

static void
text_also(struct text *t,
          const struct leakgate_verdict *v,
          const struct leakgate_report_env *env,
          const struct leakgate_report_tally *n)
{
    char num[32];
    const char *sep = "";

    if (n->nwithin > 0) {
        leakgate_buf__printf(
            t->b, "  also grew, within limits: %zu %s, ", n->nwithin,
            leakgate_report__plural(n->nwithin, "stack", "stacks"));
        put_bytes(t, n->within_bytes);
        leakgate_buf__puts(t->b, " in ");
        put_objs(t, n->within_objs);
        leakgate_buf__puts(t->b, "\n");
    }
    if (n->nfreed == 0 && n->nignored == 0 && v->excluded_bytes == 0)
        return;
    leakgate_buf__puts(t->b, "  also changed (not counted): ");
    if (n->nfreed > 0) {
        put_bytes(t, n->freed_bytes);
        leakgate_buf__puts(t->b, " in ");
        put_objs(t, n->freed_objs);
        leakgate_buf__puts(t->b, " freed from earlier tests");
        sep = "; ";
    }
    if (n->nignored > 0) {
        leakgate_buf__puts(t->b, sep);
        put_ignored(t, v, env, n->nignored);
        sep = "; ";
    }
    if (v->excluded_bytes != 0)
        leakgate_buf__printf(
            t->b, "%s%s B of test-framework bookkeeping", sep,
            leakgate_util__group_signed(num, v->excluded_bytes));
    leakgate_buf__puts(t->b, "\n");
}

static void
text_measured(struct text *t, const struct leakgate_report_env *env)
{
    leakgate_buf__printf(t->b, "  measured: %s, jemalloc %s, binary ",
                         leakgate_report__or_unknown(env->sampling),
                         leakgate_report__or_unknown(env->jemalloc_version));
    sgr_on(t, SGR_DIM);
    leakgate_buf__puts(t->b, leakgate_report__or_unknown(env->binary));
    sgr_off(t);
    if (env->build_id && *env->build_id)
        leakgate_buf__printf(t->b, " (build-id %s)\n", env->build_id);
    else
        leakgate_buf__puts(t->b, " (no build-id)\n");
}

/* When no shown frame has a file:line, the first program module (not the
 * system's libraries) among them: built without debug information.
 * NULL: some frame has its line, or none is the program's. */
static const char *
no_debug_module(const struct leakgate_verdict *v)
{
    const char *module = NULL;

    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        for (size_t k = s->shown_begin; s->frames && k < s->shown_end; k++) {
            const struct leakgate_frame *f = &s->frames[k];

            if (f->file)
                return NULL;
            if (!module && f->module && strncmp(f->module, "/lib/", 5) != 0 &&
                strncmp(f->module, "/usr/lib", 8) != 0 &&
                strncmp(f->module, "/lib64/", 7) != 0)
                module = f->module;
        }
    }
    return module;
}

/* Frames without file:line: say why and how to get them. */
static void
text_debug(struct text *t, const struct leakgate_verdict *v)
{
    const char *module = no_debug_module(v);

    if (module)
        leakgate_buf__printf(
            t->b,
            "  no file:line: %s has no debug information; build it with -g "
            "(CMake: -DCMAKE_BUILD_TYPE=RelWithDebInfo or Debug) to see the "
            "lines (docs/troubleshooting.md, \"Missing debug "
            "information\")\n",
            module);
}

/* How a verdict of the fast first pass came to be (gate_fast.c). */
static void
text_fast(struct text *t, const struct leakgate_verdict *v)
{
    if (v->how == LEAKGATE_MEASURED_SUITE_END) {
        if (v->policy.nover == 0 && !v->policy.total_over)
            return; /* nothing retained over a limit: its peak only */
        leakgate_buf__puts(t->b, "  scope: suite: allocated by this test and "
                                 "still live after the suite cleanup (every "
                                 "allocation's stack recorded)\n");
        return;
    }
    if (v->how != LEAKGATE_MEASURED_RERUN && v->how != LEAKGATE_MEASURED_REPLAY)
        return;
    leakgate_buf__puts(t->b, "  first pass: fast (no stacks) left ");
    put_bytes(t, (int64_t)v->first_bytes);
    leakgate_buf__puts(t->b, " in ");
    put_objs(t, (int64_t)v->first_objs);
    if (v->peak_over)
        leakgate_buf__puts(t->b, " and went over its peak limit");
    if (v->how == LEAKGATE_MEASURED_RERUN)
        leakgate_buf__puts(t->b, "; these stacks are from an exact re-run of "
                                 "the test that left the same\n");
    else
        leakgate_buf__puts(t->b, "; these stacks are from an exact replay of "
                                 "the run up to this test in a fresh process "
                                 "(a test runs once per process)\n");
}

/* A fast first pass that was not judged (a fatal assertion, a re-run
 * declined): no stacks to show, only what it left. */
static void
text_fast_note(struct text *t, const struct leakgate_verdict *v)
{
    leakgate_buf__puts(t->b, "leakgate: ");
    sgr_on(t, SGR_NOTE);
    leakgate_buf__puts(t->b, "NOTE");
    sgr_off(t);
    leakgate_buf__puts(t->b, " ");
    put_name(t, v);
    leakgate_buf__puts(t->b, ": ");
    put_bytes(t, (int64_t)v->first_bytes);
    leakgate_buf__puts(t->b, " retained in ");
    put_objs(t, (int64_t)v->first_objs);
    leakgate_buf__printf(t->b,
                         " by the fast first pass, not judged: %s\n"
                         "  the fast first pass records no stacks: run with "
                         "--exact (or set rerun: false for this test) to see "
                         "them\n",
                         leakgate_report__or_unknown(v->not_judged_why));
}

static void
text_artifacts(struct text *t,
               const struct leakgate_verdict *v,
               const struct leakgate_report_env *env)
{
    bool heaps = v->heap_before && v->heap_after;
    const char *files[5] = {v->json_path, v->svg_path, v->pdf_path, v->dot_path,
                            v->text_path};

    /* Under scope: suite (gate_suite.c), or with what its threads kept
     * after it (gate_orphans.c), no heap pair shows the objects. */
    bool one_by_one = v->how == LEAKGATE_MEASURED_SUITE_END || v->orphans;

    if (!heaps && (!one_by_one || !v->json_path)) {
        if (env->report_dir && v->artifacts_note)
            leakgate_buf__printf(t->b,
                                 "  artifacts: none written under %s: %s\n",
                                 env->report_dir, v->artifacts_note);
        else if (env->report_dir)
            leakgate_buf__printf(t->b, "  artifacts: none written under %s\n",
                                 env->report_dir);
        else
            leakgate_buf__puts(t->b, "  artifacts: none, pass --report-dir "
                                     "DIR to keep the heap profiles\n");
        return;
    }
    leakgate_buf__puts(t->b, "  artifacts: ");
    sgr_on(t, SGR_DIM);
    if (heaps)
        leakgate_buf__printf(t->b, "%s, %s", v->heap_before, v->heap_after);
    /* Its JSON; the call graph: SVG and PDF when Graphviz drew them, and
     * its DOT text; then this report as text.  Every file written is
     * listed. */
    for (size_t i = 0, n = heaps ? 1 : 0; i < 5; i++) {
        if (files[i])
            leakgate_buf__printf(t->b, "%s%s", n++ ? ", " : "", files[i]);
    }
    sgr_off(t);
    if (!heaps && v->orphans)
        leakgate_buf__puts(t->b, " (no heap profiles: what a thread "
                                 "allocated after the test ended is judged "
                                 "object by object, and no pair of heap "
                                 "dumps shows it)");
    else if (!heaps)
        leakgate_buf__puts(t->b, " (no heap profiles: under scope: suite "
                                 "the objects are judged one by one, and "
                                 "no pair of heap dumps shows them)");
    leakgate_buf__puts(t->b, "\n");
    if (v->picture_note)
        leakgate_buf__printf(t->b, "  picture: %s\n", v->picture_note);
    if (heaps && env->binary && *env->binary)
        leakgate_buf__printf(
            t->b, "  inspect: jeprof --text --show_bytes --base=%s %s %s\n",
            v->heap_before, env->binary, v->heap_after);
}

static void
put_indented(struct leakgate_buf *b, const char *text)
{
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");

        leakgate_buf__puts(b, "    ");
        leakgate_buf__put(b, line, len);
        leakgate_buf__puts(b, "\n");
        line += len + (line[len] == '\n');
    }
}

/* The edits that accept the growth: limits of existing rules to raise,
 * then YAML to add. */
/* The stacks over their limits whose objects are lost: a leak to fix,
 * offered no rule. */
static void
text_lost(struct text *t,
          const struct leakgate_verdict *v,
          const struct leakgate_report_env *env)
{
    if (leakgate_report__lost_advice(t->b, v, env, "  lost: "))
        leakgate_buf__puts(t->b, "\n");
}

/* Some stack over its limit was not scanned (reach.h): its objects may
 * be lost or reachable. */
static bool
unscanned(const struct leakgate_verdict *v)
{
    for (size_t i = 0; i < v->nstacks; i++)
        if (v->stacks[i].judgement.over && !v->stacks[i].reach.known)
            return true;
    return false;
}

static void
text_yaml(struct text *t,
          const struct leakgate_verdict *v,
          const struct leakgate_report_env *env)
{
    char *raises = leakgate_report__raises(v);
    char *yaml = leakgate_report__yaml(v);
    const char *file =
        env->thresholds_path ? env->thresholds_path : "leakgate.yaml";

    if (v->shared_fixture) {
        /* One diagnosis per pattern: the suite's (gate.c). */
        leakgate_buf__printf(t->b,
                             "  shared fixture: later tests or the suite "
                             "cleanup freed what it retained; the NOTE of "
                             "%s/[suite] says how to judge it (scope: "
                             "suite), not an entry of its own\n",
                             leakgate_report__or_unknown(v->suite));
    } else if (!yaml || !raises) {
        t->b->failed = true;
    } else {
        text_lost(t, v, env);
        if ((*raises || *yaml) && unscanned(v))
            leakgate_buf__puts(
                t->b, "  reachable or lost: not known (other threads ran "
                      "that were not stopped for the scan: asleep, polling "
                      "or blocking its signal; or an exact window of a "
                      "process that kept no map of its objects from its "
                      "start); make sure this growth is not a leak before "
                      "you accept it\n");
        if (*raises) {
            leakgate_buf__printf(
                t->b, "  to accept this growth, raise in %s:\n", file);
            put_indented(t->b, raises);
        }
        if (*yaml) {
            /* Its entry only: one run prints one thresholds document,
             * at its end, that holds every entry (gate.c's run hint). */
            leakgate_buf__printf(
                t->b,
                "  %s, its entry under `%s` (the thresholds document at "
                "the end of the run holds it, with every other):\n",
                *raises ? "and" : "to accept this growth",
                leakgate_report__suite_window(v) ? "suites:" : "tests:");
            put_indented(t->b, yaml + strcspn(yaml, "\n") + 1);
        }
    }
    leakgate_util__free(raises);
    leakgate_util__free(yaml);
}

char *
leakgate_report__text(const struct leakgate_verdict *v,
                      const struct leakgate_report_env *env,
                      bool color)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    struct text t = {&b, color};
    struct leakgate_report_tally n;

    leakgate_report__tally(&n, v);
    if (v->status == LEAKGATE_STATUS_NOT_JUDGED && n.nshown == 0 &&
        v->first_objs > 0 && !v->needs_replay) {
        text_fast_note(&t, v);
    } else if (v->status == LEAKGATE_STATUS_NOT_JUDGED && n.nshown > 0) {
        text_header(&t, v, env, &n);
        text_stacks(&t, v, env, &n);
    } else if (leakgate_report__gate_failed(v)) {
        text_header(&t, v, env, &n);
        text_stacks(&t, v, env, &n);
        text_peak(&t, v, env);
        text_also(&t, v, env, &n);
        text_measured(&t, env);
        text_debug(&t, v);
        text_fast(&t, v);
        text_artifacts(&t, v, env);
        text_yaml(&t, v, env);
    }
    if (v->hint) {
        leakgate_buf__puts(&b, "leakgate: NOTE ");
        leakgate_util__name_escape(&b, v->name);
        leakgate_buf__printf(&b, ": %s\n", v->hint);
    }
    return leakgate_buf__take(&b);
}
