/* SPDX-License-Identifier: MIT */
/*
 * report: render verdicts for people and machines.  Core stage 5: reads
 * in-memory verdicts, builds strings with struct leakgate_buf, never writes
 * a file, keeps no state.
 *
 * - text (SPEC §7): what a developer reads when a test fails.  It names the
 *   test and what it retained, prints each offending stack trimmed to the
 *   user's code with an aligned file:line column, says where every limit
 *   came from, how the numbers were measured, where the artifacts are, and
 *   ends with the YAML that would accept the growth.
 * - YAML: that suggestion alone (exact names, glob-escaped, quoted where
 *   YAML would misread them).
 * - JUnit XML and JSON results (docs/results-format.md).
 *
 * Invariants: every string that comes from a test, a symbol or a path goes
 * through an escaper (XML, JSON or YAML); the XML and JSON escapers also
 * replace malformed UTF-8, so the output is well-formed whatever the names
 * contain.  No ANSI codes unless colour is asked for.  A failed allocation
 * marks the buffer, which is checked once when the text is taken: every
 * entry point returns NULL on ENOMEM and leaks nothing.
 *
 * "Counted" stacks grew (bytes > 0) and are not ignored: they make up the
 * retained total.  "Offending" stacks are printed in full: over their own
 * limit, or every counted stack when the total is over (and every counted
 * stack of a verdict that was not judged).
 */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "leakgate/version.h"
#include "thresholds_rules.h"
#include "util.h"
#include "yamledit.h"

/* A report shows the largest offending stacks in full, and the YAML
 * suggestion names that many; the rest are counted (JSON has them all). */
#define MAX_TEXT_STACKS 20
#define MAX_YAML_STACKS 50

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
/* Nesting of the JSON document (root, tests, test, stacks, stack, frames,
 * frame) plus room. */
#define JSON_DEPTH_MAX 12

struct text {
    struct leakgate_buf *b;
    bool color;
};

/* What a verdict's stacks add up to. */
struct tally {
    int64_t bytes, objs; /* counted stacks */
    size_t ncounted;
    size_t nshown;  /* offending stacks */
    size_t nwithin; /* counted but not shown */
    int64_t within_bytes, within_objs;
    size_t nignored;
    size_t nfreed; /* stacks that shrank */
    int64_t freed_bytes, freed_objs;
};

/* Where a stack's limit came from. */
enum limit_source {
    SOURCE_NONE, /* not judged or ignored */
    SOURCE_RULE,
    SOURCE_TEST_ENTRY,
    SOURCE_SUITE_ENTRY,
    SOURCE_DEFAULTS,
};

enum escape { ESC_XML_TEXT, ESC_XML_ATTR, ESC_JSON };

/* ---- shared helpers ---------------------------------------------------- */

static const char *
or_unknown(const char *s)
{
    return s && *s ? s : "unknown";
}

static const char *
plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static uint64_t
magnitude(int64_t n)
{
    return n < 0 ? 0 - (uint64_t)n : (uint64_t)n;
}

/* n with thousands separators ("4,208") into out (>= 32 bytes); returns
 * out.  Cannot fail. */
static const char *
group_u(char *out, uint64_t n, bool negative)
{
    return leakgate_util__group_digits(out, 32, n, negative);
}

static bool
counted(const struct leakgate_vstack *s)
{
    return s->bytes > 0 && !s->judgement.ignored;
}

static bool
gate_failed(const struct leakgate_verdict *v)
{
    return v->status == LEAKGATE_STATUS_FAIL && v->policy.failed;
}

static bool
offending(const struct leakgate_verdict *v, const struct leakgate_vstack *s)
{
    if (v->status == LEAKGATE_STATUS_NOT_JUDGED)
        return counted(s);
    return s->judgement.over || (v->policy.total_over && counted(s));
}

static bool
suite_window(const struct leakgate_verdict *v)
{
    return v->test && strcmp(v->test, "[suite]") == 0;
}

static void
tally(struct tally *out, const struct leakgate_verdict *v)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        if (s->bytes > 0 && s->judgement.ignored) {
            out->nignored++;
        } else if (s->bytes < 0) {
            out->nfreed++;
            out->freed_bytes += s->bytes;
            out->freed_objs += s->objs;
        } else if (counted(s)) {
            out->ncounted++;
            out->bytes += s->bytes;
            out->objs += s->objs;
            if (offending(v, s)) {
                out->nshown++;
            } else {
                out->nwithin++;
                out->within_bytes += s->bytes;
                out->within_objs += s->objs;
            }
        }
    }
}

static enum limit_source
limit_source(const struct leakgate_verdict *v, const struct leakgate_vstack *s)
{
    const struct leakgate_policy_settings *st = &v->settings;

    if (s->bytes <= 0 || s->judgement.ignored)
        return SOURCE_NONE;
    if (s->judgement.rule)
        return SOURCE_RULE;
    if (st->test_entry && st->test_entry->has_stack_limit)
        return SOURCE_TEST_ENTRY;
    if (st->suite_entry && st->suite_entry->has_stack_limit)
        return SOURCE_SUITE_ENTRY;
    return SOURCE_DEFAULTS;
}

/* frames[*begin, *end) to show; every frame when the range is empty or
 * out of bounds.  Cannot fail. */
static void
shown_range(const struct leakgate_vstack *s, size_t *begin, size_t *end)
{
    *begin = s->shown_begin;
    *end = s->shown_end;
    if (*begin >= *end || *end > s->nframes) {
        *begin = 0;
        *end = s->nframes;
    }
}

static void
put_ascii(struct leakgate_buf *b, char c, enum escape mode)
{
    static const char specials[] = "&<>\"'";
    static const char *const entities[] = {"&amp;", "&lt;", "&gt;", "&quot;",
                                           "&apos;"};
    const char *special = strchr(specials, c);

    if (mode == ESC_JSON) {
        if (c == '"' || c == '\\')
            leakgate_buf__printf(b, "\\%c", c);
        else if (c == '\n')
            leakgate_buf__puts(b, "\\n");
        else if (c == '\t')
            leakgate_buf__puts(b, "\\t");
        else if ((unsigned char)c < 0x20)
            leakgate_buf__printf(b, "\\u%04x", (unsigned int)c);
        else
            leakgate_buf__put(b, &c, 1);
    } else if (c && special &&
               (mode == ESC_XML_ATTR || special - specials < 3)) {
        leakgate_buf__puts(b, entities[special - specials]);
    } else if (c == '\n' || c == '\t' || c == '\r') {
        /* Attribute values must stay on one line; a parser would turn a
         * raw newline into a space anyway. */
        leakgate_buf__put(b, mode == ESC_XML_ATTR ? " " : &c, 1);
    } else {
        /* XML 1.0 has no way to write the other control characters. */
        leakgate_buf__put(b, (unsigned char)c < 0x20 ? "?" : &c, 1);
    }
}

/*
 * Append the first n bytes of s escaped for mode.  util's escapers do not
 * check UTF-8, and one stray byte in a symbol makes a whole XML or JSON
 * document unreadable, so malformed sequences become "?" (XML) or U+FFFD
 * (JSON), as do the non-characters XML forbids.
 */
static void
put_escaped_n(struct leakgate_buf *b, const char *s, size_t n, enum escape mode)
{
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *end = p + n;

    while (p < end && *p) {
        uint32_t cp;
        size_t len = leakgate_util__utf8_seq(p, &cp);

        if (len == 0)
            leakgate_buf__puts(b, mode == ESC_JSON ? "\\ufffd" : "?");
        else if (len == 1)
            put_ascii(b, (char)*p, mode);
        else if (mode != ESC_JSON && (cp == 0xfffe || cp == 0xffff))
            leakgate_buf__puts(b, "?");
        else
            leakgate_buf__put(b, (const char *)p, len);
        p += len ? len : 1;
    }
}

static void
put_escaped(struct leakgate_buf *b, const char *s, enum escape mode)
{
    put_escaped_n(b, s ? s : "", s ? strlen(s) : 0, mode);
}

void
leakgate_report__put_escaped(struct leakgate_buf *b,
                             const char *s,
                             enum leakgate_report_escape mode)
{
    enum escape m = mode == LEAKGATE_REPORT_ESC_JSON       ? ESC_JSON
                    : mode == LEAKGATE_REPORT_ESC_XML_ATTR ? ESC_XML_ATTR
                                                           : ESC_XML_TEXT;

    put_escaped(b, s, m);
}

/* ---- text -------------------------------------------------------------- */

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

    leakgate_buf__printf(t->b, "%s %s", group_u(num, magnitude(objs), false),
                         plural(magnitude(objs), "object", "objects"));
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
    switch (limit_source(v, s)) {
    case SOURCE_RULE: put_rule(t, v, s->judgement.rule, env); break;
    case SOURCE_TEST_ENTRY:
        put_entry(t, "tests", v->settings.test_entry, "stack_limit", env);
        break;
    case SOURCE_SUITE_ENTRY:
        put_entry(t, "suites", v->settings.suite_entry, "stack_limit", env);
        break;
    case SOURCE_DEFAULTS:
    case SOURCE_NONE:
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
    shown_range(s, &begin, &end);
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
    char num[32];

    leakgate_buf__printf(t->b, "  %sstack %zu of %zu: ", peak ? "peak " : "",
                         nth, of);
    put_bytes(t, s->bytes);
    leakgate_buf__puts(t->b, " in ");
    put_objs(t, s->objs);
    if (!peak && v->status != LEAKGATE_STATUS_NOT_JUDGED) {
        leakgate_buf__printf(t->b, ", %s %s B (",
                             s->judgement.over ? "limit" : "within its limit",
                             group_u(num, s->judgement.limit, false));
        put_limit_source(t, v, s, env);
        leakgate_buf__puts(t->b, ")");
    }
    put_threads(t, s);
    leakgate_buf__puts(t->b, "\n");
    text_frames(t, s);
}

static void
text_stacks(struct text *t,
            const struct leakgate_verdict *v,
            const struct leakgate_report_env *env,
            const struct tally *n)
{
    size_t nth = 0;

    for (size_t i = 0; i < v->nstacks; i++) {
        if (!offending(v, &v->stacks[i]))
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
        leakgate_util__name_escape(t->b, or_unknown(v->suite));
        leakgate_buf__puts(t->b, "/");
        leakgate_util__name_escape(t->b, or_unknown(v->test));
    }
}

/* "; peak 41,943,152 B, 1,204 allocations" (when measured).  The peak is
 * the heap's net rise, the retained bytes the sum of the stacks that grew:
 * a window that freed older memory may retain more than its peak, and the
 * line says why instead of contradicting itself. */
static void
put_peak(struct text *t,
         const struct leakgate_verdict *v,
         const struct tally *n)
{
    char num[32];

    if (!v->peak_known)
        return;
    leakgate_buf__puts(t->b, "; peak ");
    put_bytes(t, (int64_t)v->peak_bytes);
    leakgate_buf__printf(t->b, ", %s %s", group_u(num, v->allocations, false),
                         plural(v->allocations, "allocation", "allocations"));
    if (n->bytes <= 0 || v->peak_bytes >= (uint64_t)n->bytes)
        return;
    if (n->nfreed > 0)
        leakgate_buf__printf(t->b,
                             " (the heap's net rise: the window also freed "
                             "%s B allocated before it)",
                             group_u(num, magnitude(n->freed_bytes), false));
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
    leakgate_buf__printf(t->b,
                         " above its level at the test's start, limit "
                         "%s B",
                         group_u(num, v->settings.peak_limit, false));
    if (v->npeak_stacks == 0) {
        /* (A `scope: suite` test's come from the replay too.) */
        leakgate_buf__puts(t->b, "; no stacks: the exact measurement did not "
                                 "reach the limit again\n");
        return;
    }
    leakgate_buf__printf(t->b,
                         "; in an exact measurement of the test, at %s B, "
                         "these stacks held the most:\n",
                         group_u(num, v->peak_level, false));
    for (size_t i = 0; i < v->npeak_stacks; i++)
        text_stack(t, v, env, &v->peak_stacks[i], i + 1, v->npeak_stacks, true);
}

/* "leakgate: FAIL parser/t: 4,208 B retained in 2 objects (...)" */
static void
text_header(struct text *t,
            const struct leakgate_verdict *v,
            const struct leakgate_report_env *env,
            const struct tally *n)
{
    bool note = v->status == LEAKGATE_STATUS_NOT_JUDGED;
    size_t nover = v->policy.nover;
    char num[32];

    leakgate_buf__puts(t->b, "leakgate: ");
    sgr_on(t, note ? SGR_NOTE : SGR_FAIL);
    leakgate_buf__puts(t->b, note ? "NOTE" : "FAIL");
    sgr_off(t);
    leakgate_buf__puts(t->b, " ");
    put_name(t, v);
    leakgate_buf__puts(t->b, ": ");
    put_bytes(t, n->bytes);
    leakgate_buf__puts(t->b, " retained in ");
    put_objs(t, n->objs);
    if (note) {
        leakgate_buf__printf(t->b, ", not judged: %s\n",
                             or_unknown(v->not_judged_why));
        return;
    }
    leakgate_buf__puts(t->b, " (");
    if (nover > 0)
        leakgate_buf__printf(
            t->b, "%zu %s", nover,
            plural(nover, "stack over its limit", "stacks over their limits"));
    if (v->policy.total_over) {
        leakgate_buf__printf(t->b, "%stotal over its limit of %s B (",
                             nover ? "; " : "",
                             group_u(num, v->settings.total_limit, false));
        put_total_source(t, v, env);
        leakgate_buf__puts(t->b, ")");
    }
    if (v->peak_over) {
        char from[512];

        leakgate_buf__printf(t->b, "%speak over its limit of %s B (%s)",
                             nover || v->policy.total_over ? "; " : "",
                             group_u(num, v->settings.peak_limit, false),
                             leakgate_verdict__peak_source(
                                 v, env->thresholds_path, from, sizeof from));
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
                         plural(nignored, "stack", "stacks"));
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
          const struct tally *n)
{
    char num[32];
    const char *sep = "";

    if (n->nwithin > 0) {
        leakgate_buf__printf(t->b, "  also grew, within limits: %zu %s, ",
                             n->nwithin, plural(n->nwithin, "stack", "stacks"));
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
                         or_unknown(env->sampling),
                         or_unknown(env->jemalloc_version));
    sgr_on(t, SGR_DIM);
    leakgate_buf__puts(t->b, or_unknown(env->binary));
    sgr_off(t);
    if (env->build_id && *env->build_id)
        leakgate_buf__printf(t->b, " (build-id %s)\n", env->build_id);
    else
        leakgate_buf__puts(t->b, " (no build-id)\n");
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
                         or_unknown(v->not_judged_why));
}

static void
text_artifacts(struct text *t,
               const struct leakgate_verdict *v,
               const struct leakgate_report_env *env)
{
    bool heaps = v->heap_before && v->heap_after;
    const char *files[5] = {v->json_path, v->svg_path, v->pdf_path, v->dot_path,
                            v->text_path};

    /* Under scope: suite (gate_suite.c) no heap pair shows the objects. */
    if (!heaps && (v->how != LEAKGATE_MEASURED_SUITE_END || !v->json_path)) {
        if (env->report_dir)
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
    if (!heaps)
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
                             or_unknown(v->suite));
    } else if (!yaml || !raises) {
        t->b->failed = true;
    } else {
        if (*raises) {
            leakgate_buf__printf(
                t->b, "  to accept this growth, raise in %s:\n", file);
            put_indented(t->b, raises);
        }
        if (*yaml && env->thresholds_path &&
            (suite_window(v) ? env->has_suites : env->has_tests)) {
            /* A second `tests:` would be a duplicate key: under it. */
            leakgate_buf__printf(t->b, "  %s, add under `%s` in %s:\n",
                                 *raises ? "and" : "to accept this growth",
                                 suite_window(v) ? "suites:" : "tests:", file);
            put_indented(t->b, yaml + strcspn(yaml, "\n") + 1);
        } else if (*yaml) {
            if (env->thresholds_path)
                leakgate_buf__printf(t->b, "  %s, add to %s:\n",
                                     *raises ? "and" : "to accept this growth",
                                     file);
            else
                leakgate_buf__puts(t->b,
                                   "  to accept this growth, create "
                                   "leakgate.yaml with:\n    version: 1\n");
            put_indented(t->b, yaml);
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
    struct tally n;

    tally(&n, v);
    if (v->status == LEAKGATE_STATUS_NOT_JUDGED && n.nshown == 0 &&
        v->first_objs > 0 && !v->needs_replay) {
        text_fast_note(&t, v);
    } else if (v->status == LEAKGATE_STATUS_NOT_JUDGED && n.nshown > 0) {
        text_header(&t, v, env, &n);
        text_stacks(&t, v, env, &n);
    } else if (gate_failed(v)) {
        text_header(&t, v, env, &n);
        text_stacks(&t, v, env, &n);
        text_peak(&t, v, env);
        text_also(&t, v, env, &n);
        text_measured(&t, env);
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

/* ---- YAML suggestion --------------------------------------------------- */

/* s inside a YAML comment: a line break would end the comment. */
static void
put_comment(struct leakgate_buf *b, const char *s)
{
    for (const char *p = s; *p; p++)
        leakgate_buf__put(b, (unsigned char)*p < 0x20 ? "?" : p, 1);
}

/* What the suggestion has to say: computed by thresholds_rules.c, as
 * `--update-thresholds` and `thresholds merge` compute it. */
struct suggestion {
    bool suite;       /* under `suites:` (a suite window) */
    const char *name; /* the window's entry name (suite or suite/test) */
    /* The winning entry of the same section.  When it does not name the
     * window exactly, the new entry replaces it for this window (only the
     * most specific entry applies), so its settings are repeated. */
    const struct leakgate_config_entry *winner;
    bool shadowed;
    struct leakgate_tneed need;
};

/* Fill sg; false on ENOMEM. */
static bool
suggestion_init(struct suggestion *sg, const struct leakgate_verdict *v)
{
    struct leakgate_policy_stack_verdict *per;
    bool own, ok;

    memset(sg, 0, sizeof *sg);
    sg->suite = suite_window(v);
    sg->name = sg->suite ? v->suite : v->name;
    sg->winner = sg->suite ? v->settings.suite_entry : v->settings.test_entry;
    own = leakgate_thresholds__exclusive(sg->winner, sg->name);
    sg->shadowed = sg->winner && !own;
    per = leakgate_util__calloc(v->nstacks ? v->nstacks : 1, sizeof *per);
    ok = per &&
         leakgate_thresholds__need_init(&sg->need, own ? sg->winner : NULL);
    for (size_t i = 0; ok && i < v->nstacks; i++)
        per[i] = v->stacks[i].judgement;
    ok = ok &&
         leakgate_thresholds__need_window(&sg->need, v, per, &v->policy, NULL);
    if (ok && v->peak_over)
        leakgate_thresholds__need_peak(&sg->need, v->peak_bytes);
    leakgate_util__free(per);
    return ok;
}

static bool
need_adds(const struct suggestion *sg)
{
    return sg->need.nrules > 0 || sg->need.set_stack || sg->need.set_total ||
           sg->need.set_peak;
}

static void
yaml_size(struct leakgate_buf *b, const char *key, uint64_t bytes)
{
    leakgate_buf__printf(b, "    %s: ", key);
    leakgate_yamledit__put_size(b, bytes);
    leakgate_buf__puts(b, "\n");
}

/* A new rule, as the ratchet writes it. */
static void
yaml_rule(struct leakgate_buf *b, const struct leakgate_trule *r)
{
    char human[32];

    leakgate_buf__puts(b, "      - frames: [");
    for (size_t k = 0; k < r->nnames; k++) {
        leakgate_buf__puts(b, k ? ", " : "");
        leakgate_thresholds__put_glob(b, r->names[k]);
    }
    leakgate_buf__puts(b, "]\n        exact: true\n        limit: ");
    leakgate_yamledit__put_size(b, r->limit);
    if (r->nstacks > 1)
        leakgate_buf__printf(
            b,
            "   # covers %zu stacks: each may retain up "
            "to %s",
            r->nstacks,
            leakgate_util__human_bytes(human, sizeof human, r->limit));
    leakgate_buf__puts(b, "\n");
}

/* Rules carried over from a shadowed entry, after the new ones (a new
 * rule with the same frames takes the larger limit instead). */
static void
yaml_carried_rules(struct leakgate_buf *b, const struct suggestion *sg)
{
    for (size_t i = 0; sg->shadowed && i < sg->winner->nstacks; i++) {
        const struct leakgate_config_stack_rule *r = &sg->winner->stacks[i];

        leakgate_buf__puts(b, "      - frames: [");
        for (size_t k = 0; k < r->nframes; k++) {
            leakgate_buf__puts(b, k ? ", " : "");
            leakgate_yamledit__put_scalar(b, r->frames[k]);
        }
        leakgate_buf__printf(b, "]  # from line %u\n", r->line);
        if (r->exact)
            leakgate_buf__puts(b, "        exact: true\n");
        leakgate_buf__puts(b, "        limit: ");
        leakgate_yamledit__put_size(b, r->limit);
        leakgate_buf__puts(b, "\n");
    }
}

static void
yaml_rules(struct leakgate_buf *b, const struct suggestion *sg)
{
    const struct leakgate_tneed *nd = &sg->need;

    if (nd->nrules == 0 && !(sg->shadowed && sg->winner->nstacks > 0))
        return;
    leakgate_buf__puts(b, "    stacks:\n");
    for (size_t i = 0; i < nd->nrules; i++) {
        if (i == MAX_YAML_STACKS) {
            leakgate_buf__printf(b,
                                 "      # %zu more rules are not listed: "
                                 "with this many, a stack_limit or "
                                 "total_limit fits better\n",
                                 nd->nrules - MAX_YAML_STACKS);
            break;
        }
        yaml_rule(b, &nd->rules[i]);
    }
    yaml_carried_rules(b, sg);
}

/* The peak_limit that accepts the peak (the ratchet's: the peak plus
 * headroom), else what a shadowed entry set. */
static void
yaml_peak(struct leakgate_buf *b, const struct suggestion *sg)
{
    const struct leakgate_config_entry *w = sg->shadowed ? sg->winner : NULL;
    char num[32];

    if (sg->need.set_peak) {
        leakgate_buf__puts(b, "    peak_limit: ");
        leakgate_yamledit__put_size(
            b, leakgate_thresholds__peak_allowance(sg->need.peak_bytes));
        leakgate_buf__printf(b, "   # peak %s B + headroom\n",
                             group_u(num, sg->need.peak_bytes, false));
    } else if (w && w->has_peak_limit && w->peak_unlimited) {
        leakgate_buf__puts(b, "    peak_limit: ~\n");
    } else if (w && w->has_peak_limit) {
        yaml_size(b, "peak_limit", w->peak_limit);
    }
}

/* The limits of the entry: the measured growth where it was over, else
 * what a shadowed entry set. */
static void
yaml_limits(struct leakgate_buf *b, const struct suggestion *sg)
{
    const struct leakgate_config_entry *w = sg->shadowed ? sg->winner : NULL;
    uint64_t stack_limit = sg->need.stack_limit;

    if (sg->need.set_total)
        yaml_size(b, "total_limit", sg->need.total_limit);
    else if (w && w->has_total_limit && w->total_unlimited)
        leakgate_buf__puts(b, "    total_limit: ~\n");
    else if (w && w->has_total_limit)
        yaml_size(b, "total_limit", w->total_limit);
    if (w && w->has_stack_limit && w->stack_limit > stack_limit)
        stack_limit = w->stack_limit;
    if (sg->need.set_stack)
        leakgate_buf__puts(b, "    # a stack without function names "
                              "cannot have a rule\n");
    if (sg->need.set_stack || (w && w->has_stack_limit))
        yaml_size(b, "stack_limit", stack_limit);
    yaml_peak(b, sg);
    if (w && w->has_warmup)
        leakgate_buf__printf(b, "    warmup: %u\n", w->warmup);
    if (w && w->scope != LEAKGATE_CONFIG_SCOPE_UNSET)
        leakgate_buf__printf(b, "    scope: %s\n",
                             w->scope == LEAKGATE_CONFIG_SCOPE_SUITE ? "suite"
                                                                     : "test");
}

static void
yaml_entry(struct leakgate_buf *b, const struct suggestion *sg)
{
    const struct leakgate_config_entry *w = sg->winner;

    leakgate_buf__puts(b, sg->suite ? "suites:\n  " : "tests:\n  ");
    leakgate_thresholds__put_key(b, sg->name);
    leakgate_buf__puts(b, ":\n");
    if (sg->shadowed) {
        leakgate_buf__printf(b, "    # replaces %s \"",
                             sg->suite ? "suites" : "tests");
        put_comment(b, w->pattern);
        leakgate_buf__printf(b,
                             "\" (line %u) here: its settings are "
                             "repeated\n",
                             w->line);
    } else if (w && w->pattern) {
        leakgate_buf__printf(b,
                             "    # merge into the entry at line %u: these "
                             "values replace its own, these rules go "
                             "after its rules\n",
                             w->line);
    }
    yaml_limits(b, sg);
    yaml_rules(b, sg);
}

char *
leakgate_report__yaml(const struct leakgate_verdict *v)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    struct suggestion sg;

    if (!suggestion_init(&sg, v))
        b.failed = true;
    else if (need_adds(&sg))
        yaml_entry(&b, &sg);
    leakgate_thresholds__need_dispose(&sg.need);
    return leakgate_buf__take(&b);
}

char *
leakgate_report__raises(const struct leakgate_verdict *v)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    struct suggestion sg;

    if (!suggestion_init(&sg, v))
        b.failed = true;
    for (size_t j = 0; !b.failed && sg.need.raise && j < sg.winner->nstacks;
         j++) {
        const struct leakgate_config_stack_rule *r = &sg.winner->stacks[j];
        char human[32];

        if (sg.need.raise[j] <= r->limit)
            continue;
        leakgate_buf__printf(&b, "the limit of the stacks rule at line %u [",
                             r->line);
        for (size_t k = 0; k < r->nframes; k++)
            leakgate_buf__printf(&b, "%s%s", k ? ", " : "", r->frames[k]);
        leakgate_buf__puts(&b, "] to ");
        leakgate_yamledit__put_size(&b, sg.need.raise[j]);
        leakgate_buf__printf(
            &b, " (now %s)\n",
            leakgate_util__human_bytes(human, sizeof human, r->limit));
    }
    leakgate_thresholds__need_dispose(&sg.need);
    return leakgate_buf__take(&b);
}

/* ---- one run's YAML ---------------------------------------------------- */

/* The window prints YAML of its own (text_yaml); *yaml_out and
 * *raises_out are the caller's.  False when it prints none (or ENOMEM:
 * *failed). */
static bool
window_yaml(char **yaml_out,
            char **raises_out,
            const struct leakgate_verdict *v,
            bool *failed)
{
    *yaml_out = NULL;
    *raises_out = NULL;
    if (!gate_failed(v) || v->shared_fixture)
        return false;
    *yaml_out = leakgate_report__yaml(v);
    *raises_out = leakgate_report__raises(v);
    if (!*yaml_out || !*raises_out) {
        *failed = true;
        return false;
    }
    return **yaml_out || **raises_out;
}

static bool
listed(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++) {
        if (strcmp(names[i], name) == 0)
            return true;
    }
    return false;
}

/* The entries of one section ("tests:" or "suites:"), each line indented
 * by `indent`; a suite that also gets `scope: suite` gets it inside its own
 * entry. */
struct run_section {
    struct leakgate_buf entries; /* YAML at the section's entry level */
    struct leakgate_buf raises;
    size_t count;
};

static void
put_lines(struct leakgate_buf *b, const char *text, const char *indent)
{
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");

        leakgate_buf__printf(b, "%s%.*s\n", indent, (int)len, line);
        line += len + (line[len] == '\n');
    }
}

static void
run_collect(struct run_section *sec,
            const struct leakgate_verdict *const *v,
            size_t n,
            const char *const *suites,
            size_t nsuites,
            bool *failed)
{
    for (size_t i = 0; i < n; i++) {
        char *yaml, *raises;
        bool suite = suite_window(v[i]);

        if (window_yaml(&yaml, &raises, v[i], failed)) {
            sec[suite].count++;
            /* The entry without its section line. */
            leakgate_buf__puts(&sec[suite].entries,
                               yaml + strcspn(yaml, "\n") + (*yaml != '\0'));
            if (*yaml && suite && listed(suites, nsuites, v[i]->suite))
                leakgate_buf__puts(&sec[suite].entries, "    scope: suite\n");
            leakgate_buf__puts(&sec[suite].raises, raises);
        }
        leakgate_util__free(yaml);
        leakgate_util__free(raises);
    }
    for (size_t i = 0; i < nsuites; i++) {
        bool own = false;

        /* Given inside the suite window's own entry above. */
        for (size_t k = 0; k < n && !own; k++) {
            char *yaml = NULL, *raises = NULL;

            if (suite_window(v[k]) && v[k]->suite &&
                strcmp(v[k]->suite, suites[i]) == 0)
                own = window_yaml(&yaml, &raises, v[k], failed) && *yaml;
            leakgate_util__free(yaml);
            leakgate_util__free(raises);
        }
        sec[1].count++;
        if (own)
            continue;
        /* As the suite's own NOTE writes it (gate.c). */
        leakgate_buf__puts(&sec[1].entries, "  '");
        for (const char *c = suites[i]; *c; c++)
            leakgate_buf__put(&sec[1].entries, *c == '\'' ? "''" : c,
                              *c == '\'' ? 2 : 1);
        leakgate_buf__puts(&sec[1].entries, "':\n    scope: suite\n");
    }
}

/* Where each section goes, and its entries, into b. */
static void
run_place(struct leakgate_buf *b,
          const struct run_section *sec,
          const struct leakgate_report_env *env)
{
    static const char *const key[2] = {"tests:", "suites:"};
    const bool has[2] = {env->has_tests, env->has_suites};
    const char *sep = "";

    if (!env->thresholds_path)
        leakgate_buf__puts(b, "create leakgate.yaml with:\n  version: 1\n");
    /* Sections the file lacks: one block at its end. */
    for (int k = 0; k < 2; k++) {
        if (!sec[k].entries.len || (env->thresholds_path && has[k]))
            continue;
        if (env->thresholds_path && !*sep)
            leakgate_buf__printf(b, "add to %s:\n", env->thresholds_path);
        sep = "and ";
        leakgate_buf__printf(b, "  %s\n", key[k]);
        put_lines(b, sec[k].entries.ptr, "  ");
    }
    /* Sections it has: under them (a second one is a duplicate key). */
    for (int k = 0; k < 2 && env->thresholds_path; k++) {
        if (!sec[k].entries.len || !has[k])
            continue;
        leakgate_buf__printf(b, "%sadd under `%s` in %s:\n", sep, key[k],
                             env->thresholds_path);
        sep = "and ";
        put_lines(b, sec[k].entries.ptr, "  ");
    }
    for (int k = 0; k < 2; k++) {
        if (!sec[k].raises.len)
            continue;
        leakgate_buf__printf(b, "%sraise in %s:\n", sep,
                             env->thresholds_path ? env->thresholds_path
                                                  : "leakgate.yaml");
        sep = "and ";
        put_lines(b, sec[k].raises.ptr, "    ");
    }
}

char *
leakgate_report__run_yaml(size_t *count_out,
                          const struct leakgate_verdict *const *v,
                          size_t n,
                          const char *const *suites,
                          size_t nsuites,
                          const struct leakgate_report_env *env)
{
    struct run_section sec[2] = {{LEAKGATE_BUF_INIT, LEAKGATE_BUF_INIT, 0},
                                 {LEAKGATE_BUF_INIT, LEAKGATE_BUF_INIT, 0}};
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    bool failed = false;

    run_collect(sec, v, n, suites, nsuites, &failed);
    *count_out = sec[0].count + sec[1].count;
    run_place(&b, sec, env);
    for (int k = 0; k < 2; k++) {
        failed |= sec[k].entries.failed || sec[k].raises.failed;
        leakgate_buf__dispose(&sec[k].entries);
        leakgate_buf__dispose(&sec[k].raises);
    }
    if (failed)
        b.failed = true;
    return leakgate_buf__take(&b);
}

/* ---- JUnit XML --------------------------------------------------------- */

static const char *
suite_of(const struct leakgate_verdict *v)
{
    return v->suite ? v->suite : "";
}

static bool
case_failed(const struct leakgate_verdict *v)
{
    return v->status == LEAKGATE_STATUS_FAIL || v->nnotes > 0;
}

static double
seconds_of(const struct leakgate_verdict *v)
{
    return isfinite(v->seconds) && v->seconds > 0 ? v->seconds : 0.0;
}

static void
xml_attr(struct leakgate_buf *b, const char *name, const char *value)
{
    leakgate_buf__printf(b, " %s=\"", name);
    put_escaped(b, value, ESC_XML_ATTR);
    leakgate_buf__puts(b, "\"");
}

static void
xml_prop(struct leakgate_buf *b,
         int indent,
         const char *name,
         const char *value)
{
    leakgate_buf__printf(b, "%*s<property", indent, "");
    xml_attr(b, "name", name);
    xml_attr(b, "value", value);
    leakgate_buf__puts(b, "/>\n");
}

static void
xml_prop_int(struct leakgate_buf *b,
             int indent,
             const char *name,
             int64_t value)
{
    char num[32];

    snprintf(num, sizeof num, "%" PRId64, value);
    xml_prop(b, indent, name, num);
}

static void
junit_env(struct leakgate_buf *b,
          int indent,
          const struct leakgate_report_env *env)
{
    leakgate_buf__printf(b, "%*s<properties>\n", indent, "");
    xml_prop(b, indent + 2, "leakgate.version", LEAKGATE_VERSION);
    xml_prop(b, indent + 2, "leakgate.jemalloc_version",
             or_unknown(env->jemalloc_version));
    xml_prop(b, indent + 2, "leakgate.sampling", or_unknown(env->sampling));
    xml_prop(b, indent + 2, "leakgate.binary", or_unknown(env->binary));
    xml_prop(b, indent + 2, "leakgate.build_id",
             env->build_id ? env->build_id : "");
    xml_prop(b, indent + 2, "leakgate.thresholds",
             env->thresholds_path ? env->thresholds_path
                                  : "none: every limit is 0");
    if (env->report_dir)
        xml_prop(b, indent + 2, "leakgate.report_dir", env->report_dir);
    leakgate_buf__printf(b, "%*s</properties>\n", indent, "");
}

/* <property name="leakgate.stack.N.frames" value="outer;...;inner"/> */
static void
junit_frames_prop(struct leakgate_buf *b,
                  size_t nth,
                  const struct leakgate_vstack *s)
{
    size_t begin, end;

    leakgate_buf__printf(b,
                         "        <property name=\"leakgate.stack.%zu."
                         "frames\" value=\"",
                         nth);
    shown_range(s, &begin, &end);
    for (size_t k = end; s->frames && k-- > begin;) {
        put_escaped(b, s->frames[k].function ? s->frames[k].function : "??",
                    ESC_XML_ATTR);
        leakgate_buf__puts(b, k > begin ? ";" : "");
    }
    for (size_t k = s->npcs; !s->frames && k-- > 0;)
        leakgate_buf__printf(b, "0x%" PRIxPTR "%s", s->pcs[k], k ? ";" : "");
    leakgate_buf__puts(b, "\"/>\n");
}

/* The peak meter's figures, when it ran: the peak and the allocations,
 * and the limit when one applies (none: measured, not judged). */
static void
junit_peak_props(struct leakgate_buf *b, const struct leakgate_verdict *v)
{
    if (!v->peak_known)
        return;
    xml_prop_int(b, 8, "leakgate.peak_bytes", (int64_t)v->peak_bytes);
    xml_prop_int(b, 8, "leakgate.allocations", (int64_t)v->allocations);
    if (v->settings.peak_limited)
        xml_prop_int(b, 8, "leakgate.peak_limit",
                     (int64_t)v->settings.peak_limit);
}

static void
junit_case_props(struct leakgate_buf *b, const struct leakgate_verdict *v)
{
    struct tally n;
    size_t nth = 0;
    char name[64];

    tally(&n, v);
    leakgate_buf__puts(b, "      <properties>\n");
    if (v->how == LEAKGATE_MEASURED_SUITE_END) {
        xml_prop(b, 8, "leakgate.measured_by",
                 "suite end: judged after its suite's cleanup on what it "
                 "left that is still live (scope: suite)");
        xml_prop_int(b, 8, "leakgate.held_by_fixture_bytes",
                     (int64_t)v->held_bytes);
    }
    xml_prop_int(b, 8, "leakgate.retained_bytes", n.bytes);
    xml_prop_int(b, 8, "leakgate.retained_objects", n.objs);
    xml_prop_int(b, 8, "leakgate.stacks", (int64_t)n.ncounted);
    xml_prop_int(b, 8, "leakgate.excluded_bytes", v->excluded_bytes);
    junit_peak_props(b, v);
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        if (!counted(s))
            continue;
        nth++;
        snprintf(name, sizeof name, "leakgate.stack.%zu.bytes", nth);
        xml_prop_int(b, 8, name, s->bytes);
        snprintf(name, sizeof name, "leakgate.stack.%zu.objects", nth);
        xml_prop_int(b, 8, name, s->objs);
        junit_frames_prop(b, nth, s);
    }
    leakgate_buf__puts(b, "      </properties>\n");
}

static void
put_note(struct leakgate_buf *b,
         const struct leakgate_note *note,
         enum escape mode)
{
    if (note->file && *note->file) {
        put_escaped(b, note->file, mode);
        leakgate_buf__printf(b, ":%u: ", note->line);
    }
    put_escaped(b, note->message, mode);
}

/* One line: the first assertion, then the report's header line. */
static void
junit_message(struct leakgate_buf *b,
              const struct leakgate_verdict *v,
              const char *report)
{
    const char *line = report;

    if (v->nnotes > 0) {
        put_note(b, &v->notes[0], ESC_XML_ATTR);
        if (v->nnotes > 1)
            leakgate_buf__printf(b, " (and %zu more assertion %s)",
                                 v->nnotes - 1,
                                 plural(v->nnotes - 1, "failure", "failures"));
    }
    if (!gate_failed(v))
        return;
    if (strncmp(line, "leakgate: ", 10) == 0)
        line += 10;
    leakgate_buf__puts(b, v->nnotes > 0 ? "; " : "");
    put_escaped_n(b, line, strcspn(line, "\n"), ESC_XML_ATTR);
}

/* "peak" when the gate failed the window on its peak alone, "leak" when
 * it failed on what the window retained (with or without the peak),
 * else "assertion". */
static const char *
failure_type(const struct leakgate_verdict *v)
{
    if (!gate_failed(v))
        return "assertion";
    if (leakgate_verdict__peak_only(v))
        return "peak";
    return "leak";
}

static void
junit_failure(struct leakgate_buf *b,
              const struct leakgate_verdict *v,
              const char *report)
{
    leakgate_buf__puts(b, "      <failure message=\"");
    junit_message(b, v, report);
    leakgate_buf__printf(b, "\" type=\"%s\">", failure_type(v));
    for (size_t i = 0; i < v->nnotes; i++) {
        put_note(b, &v->notes[i], ESC_XML_TEXT);
        leakgate_buf__puts(b, "\n");
    }
    if (gate_failed(v)) {
        leakgate_buf__puts(b, v->nnotes > 0 ? "\n" : "");
        put_escaped(b, report, ESC_XML_TEXT);
    }
    leakgate_buf__puts(b, "</failure>\n");
}

/* A window that never closed: its process ended (killed) while it ran. */
static void
junit_error(struct leakgate_buf *b, const struct leakgate_verdict *v)
{
    leakgate_buf__puts(b, "      <error message=\"");
    put_escaped(b, v->ended, ESC_XML_ATTR);
    leakgate_buf__printf(b, "\" type=\"%s\">",
                         strncmp(v->ended, "unfinished", 10) == 0 ? "unfinished"
                                                                  : "killed");
    put_escaped(b, v->ended, ESC_XML_TEXT);
    leakgate_buf__puts(b, "</error>\n");
}

/* A name attribute: as leakgate prints names (a newline, a control byte,
 * a byte that is not UTF-8 as an escape: XML 1.0 cannot carry them). */
static void
xml_name_attr(struct leakgate_buf *b, const char *name, const char *value)
{
    struct leakgate_buf printed = LEAKGATE_BUF_INIT;

    if (!value || leakgate_util__name_plain(value)) {
        xml_attr(b, name, value);
        return;
    }
    leakgate_util__name_escape(&printed, value);
    if (printed.failed)
        b->failed = true;
    else
        xml_attr(b, name, printed.ptr ? printed.ptr : "");
    leakgate_buf__dispose(&printed);
}

/* A window leakgate could not judge: never a pass (exit 3).  The reason
 * is the message; the report, when there is one, the text. */
static void
junit_unjudged(struct leakgate_buf *b,
               const struct leakgate_verdict *v,
               const char *report)
{
    leakgate_buf__puts(b, "      <error message=\"not judged: ");
    put_escaped_n(b, or_unknown(v->not_judged_why),
                  strcspn(or_unknown(v->not_judged_why), "\n"), ESC_XML_ATTR);
    leakgate_buf__puts(b, "\" type=\"not_judged\">");
    put_escaped(b, *report ? report : or_unknown(v->not_judged_why),
                ESC_XML_TEXT);
    leakgate_buf__puts(b, "</error>\n");
}

/* A window measured but left out of judging on purpose. */
static void
junit_skipped(struct leakgate_buf *b, const struct leakgate_verdict *v)
{
    leakgate_buf__puts(b, "      <skipped message=\"");
    put_escaped(b, v->not_judged_why, ESC_XML_ATTR);
    leakgate_buf__puts(b, "\"/>\n");
}

void
leakgate_report__junit_case(struct leakgate_buf *b,
                            const struct leakgate_verdict *v,
                            const struct leakgate_report_env *env)
{
    char *owned = NULL;
    const char *report = v->report;

    if (!report) {
        owned = leakgate_report__text(v, env, false);
        report = owned;
    }
    if (!report) {
        b->failed = true;
        return;
    }
    leakgate_buf__puts(b, "    <testcase");
    /* A shared output's origin (the ctest prefix, "BINARY:") first. */
    if (v->origin) {
        struct leakgate_buf cls = LEAKGATE_BUF_INIT;

        leakgate_buf__printf(&cls, "%s%s", v->origin, suite_of(v));
        if (cls.failed)
            b->failed = true;
        xml_name_attr(b, "classname", cls.ptr ? cls.ptr : "");
        leakgate_buf__dispose(&cls);
    } else {
        xml_name_attr(b, "classname", suite_of(v));
    }
    xml_name_attr(b, "name", v->test);
    leakgate_buf__printf(b, " time=\"%.6f\">\n", seconds_of(v));
    if (v->measured) {
        junit_case_props(b, v);
    } else if (v->how == LEAKGATE_MEASURED_SUITE) {
        leakgate_buf__puts(b, "      <properties>\n");
        xml_prop(b, 8, "leakgate.measured_by",
                 "suite window: judged with its suite's own window "
                 "(scope: suite)");
        leakgate_buf__puts(b, "      </properties>\n");
    }
    if (v->ended)
        junit_error(b, v);
    else if (leakgate_verdict__unjudged(v))
        junit_unjudged(b, v, report);
    else if (leakgate_verdict__skipped(v))
        junit_skipped(b, v);
    if (!v->ended && case_failed(v))
        junit_failure(b, v, report);
    if (v->status == LEAKGATE_STATUS_NOT_JUDGED) {
        leakgate_buf__puts(b, "      <system-out>");
        if (*report)
            put_escaped(b, report, ESC_XML_TEXT);
        else
            put_escaped(b, v->not_judged_why, ESC_XML_TEXT);
        leakgate_buf__puts(b, "</system-out>\n");
    }
    leakgate_buf__puts(b, "    </testcase>\n");
    leakgate_util__free(owned);
}

bool
leakgate_report__is_failure(const struct leakgate_verdict *v)
{
    return !v->ended && case_failed(v);
}

/* "tests=.. failures=.. errors=.. skipped="0" time=.." of the pieces of
 * suite (every piece when suite is NULL). */
static void
junit_counts(struct leakgate_buf *b,
             const struct leakgate_report_piece *p,
             size_t n,
             const char *suite)
{
    size_t tests = 0, failures = 0, errors = 0, skipped = 0;
    double seconds = 0;

    for (size_t i = 0; i < n; i++) {
        if (suite && strcmp(p[i].suite, suite) != 0)
            continue;
        tests++;
        failures += p[i].failed;
        /* The testcase's text says (a piece from a record or a journal
         * carries no flags): the writers escape every '<' of a text. */
        errors += p[i].error ||
                  (p[i].junit_case && strstr(p[i].junit_case, "<error "));
        skipped += p[i].skipped ||
                   (p[i].junit_case && strstr(p[i].junit_case, "<skipped "));
        seconds +=
            isfinite(p[i].seconds) && p[i].seconds > 0 ? p[i].seconds : 0.0;
    }
    leakgate_buf__printf(b,
                         " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
                         "skipped=\"%zu\" time=\"%.6f\">\n",
                         tests, failures, errors, skipped, seconds);
}

/* text, every line two spaces deeper. */
static void
put_deeper(struct leakgate_buf *b, const char *text)
{
    while (*text) {
        size_t n = strcspn(text, "\n");

        leakgate_buf__puts(b, "  ");
        leakgate_buf__put(b, text, n);
        text += n;
        if (*text == '\n') {
            leakgate_buf__puts(b, "\n");
            text++;
        }
    }
}

static bool
suite_seen_before(const struct leakgate_report_piece *p, size_t i)
{
    for (size_t k = 0; k < i; k++) {
        if (strcmp(p[k].suite, p[i].suite) == 0)
            return true;
    }
    return false;
}

char *
leakgate_report__junit_doc(const struct leakgate_report_piece *p,
                           size_t n,
                           const char *env)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                           "<testsuites name=\"leakgate\"");
    junit_counts(&b, p, n, NULL);
    leakgate_buf__puts(&b, env);
    /* One <testsuite> per suite, in order of first appearance. */
    for (size_t i = 0; i < n; i++) {
        if (suite_seen_before(p, i))
            continue;
        leakgate_buf__puts(&b, "  <testsuite");
        xml_name_attr(&b, "name", p[i].suite);
        junit_counts(&b, p, n, p[i].suite);
        put_deeper(&b, env);
        for (size_t k = i; k < n; k++) {
            if (strcmp(p[k].suite, p[i].suite) == 0)
                leakgate_buf__puts(&b, p[k].junit_case);
        }
        leakgate_buf__puts(&b, "  </testsuite>\n");
    }
    leakgate_buf__puts(&b, "</testsuites>\n");
    return leakgate_buf__take(&b);
}

void
leakgate_report__junit_env(struct leakgate_buf *b,
                           const struct leakgate_report_env *env)
{
    junit_env(b, 2, env);
}

static void
dispose_pieces(struct leakgate_report_piece *p,
               struct leakgate_buf *bufs,
               size_t n)
{
    for (size_t i = 0; bufs && i < n; i++)
        leakgate_buf__dispose(&bufs[i]);
    leakgate_util__free(bufs);
    leakgate_util__free(p);
}

/* The pieces of n verdicts (strings owned by *bufs, n of them). */
static struct leakgate_report_piece *
render_pieces(struct leakgate_buf **bufs_out,
              const struct leakgate_verdict *const *v,
              size_t n,
              const struct leakgate_report_env *env,
              bool junit)
{
    struct leakgate_report_piece *p =
        leakgate_util__calloc(n ? n : 1, sizeof *p);
    struct leakgate_buf *bufs = leakgate_util__calloc(n ? n : 1, sizeof *bufs);
    bool failed = !p || !bufs;

    for (size_t i = 0; !failed && i < n; i++) {
        if (junit)
            leakgate_report__junit_case(&bufs[i], v[i], env);
        else
            leakgate_report__json_test(&bufs[i], v[i]);
        failed = bufs[i].failed || !bufs[i].ptr;
        leakgate_report__piece_of(&p[i], v[i]);
        p[i].junit_case = p[i].json_test = bufs[i].ptr;
    }
    if (failed) {
        dispose_pieces(p, bufs, n);
        bufs = NULL;
        p = NULL;
    }
    *bufs_out = bufs;
    return p;
}

bool
leakgate_report__render_piece(struct leakgate_report_piece *out,
                              struct leakgate_buf *json,
                              struct leakgate_buf *junit,
                              const struct leakgate_verdict *v,
                              const struct leakgate_report_env *env)
{
    leakgate_report__json_test(json, v);
    leakgate_report__junit_case(junit, v, env);
    leakgate_report__piece_of(out, v);
    out->json_test = json->ptr;
    out->junit_case = junit->ptr;
    return !json->failed && json->ptr && !junit->failed && junit->ptr;
}

void
leakgate_report__piece_of(struct leakgate_report_piece *out,
                          const struct leakgate_verdict *v)
{
    memset(out, 0, sizeof *out);
    out->suite = suite_of(v);
    out->status = v->status;
    out->failed = leakgate_report__is_failure(v);
    out->error = v->ended != NULL || leakgate_verdict__unjudged(v);
    out->skipped = !out->error && leakgate_verdict__skipped(v);
    out->seconds = seconds_of(v);
}

char *
leakgate_report__junit(const struct leakgate_verdict *const *v,
                       size_t n,
                       const struct leakgate_report_env *env)
{
    struct leakgate_buf envb = LEAKGATE_BUF_INIT, *bufs = NULL;
    struct leakgate_report_piece *p = render_pieces(&bufs, v, n, env, true);
    char *doc = NULL;

    junit_env(&envb, 2, env);
    if (p && !envb.failed)
        doc = leakgate_report__junit_doc(p, n, envb.ptr);
    dispose_pieces(p, bufs, n);
    leakgate_buf__dispose(&envb);
    return doc;
}

/* ---- JSON -------------------------------------------------------------- */

/* A pretty-printing writer: one member per line, two-space indent. */
struct json {
    struct leakgate_buf *b;
    int depth;
    bool fresh[JSON_DEPTH_MAX]; /* nothing written yet at this depth */
};

static void
json_key(struct json *j, const char *key)
{
    leakgate_buf__printf(j->b, "%s\n%*s", j->fresh[j->depth] ? "" : ",",
                         j->depth * 2, "");
    j->fresh[j->depth] = false;
    if (key)
        leakgate_buf__printf(j->b, "\"%s\": ", key);
}

static void
json_open(struct json *j, const char *key, const char *bracket)
{
    json_key(j, key);
    leakgate_buf__puts(j->b, bracket);
    if (j->depth + 1 >= JSON_DEPTH_MAX) {
        j->b->failed = true; /* a bug: the document is deeper than planned */
        return;
    }
    j->fresh[++j->depth] = true;
}

static void
json_close(struct json *j, const char *bracket)
{
    bool empty = j->fresh[j->depth];

    j->depth--;
    if (!empty)
        leakgate_buf__printf(j->b, "\n%*s", j->depth * 2, "");
    leakgate_buf__puts(j->b, bracket);
}

static void
json_str(struct json *j, const char *key, const char *s)
{
    json_key(j, key);
    if (!s) {
        leakgate_buf__puts(j->b, "null");
        return;
    }
    leakgate_buf__puts(j->b, "\"");
    put_escaped(j->b, s, ESC_JSON);
    leakgate_buf__puts(j->b, "\"");
}

static void
json_int(struct json *j, const char *key, int64_t n)
{
    json_key(j, key);
    leakgate_buf__printf(j->b, "%" PRId64, n);
}

static void
json_uint(struct json *j, const char *key, uint64_t n)
{
    json_key(j, key);
    leakgate_buf__printf(j->b, "%" PRIu64, n);
}

/* An unsigned number, or null when !present. */
static void
json_opt(struct json *j, const char *key, bool present, uint64_t n)
{
    json_key(j, key);
    if (present)
        leakgate_buf__printf(j->b, "%" PRIu64, n);
    else
        leakgate_buf__puts(j->b, "null");
}

static void
json_bool(struct json *j, const char *key, bool value)
{
    json_key(j, key);
    leakgate_buf__puts(j->b, value ? "true" : "false");
}

/* Addresses are strings: JSON readers lose precision above 2^53. */
static void
json_hex(struct json *j, const char *key, uintptr_t value)
{
    json_key(j, key);
    leakgate_buf__printf(j->b, "\"0x%" PRIxPTR "\"", value);
}

static void
json_env(struct json *j, const struct leakgate_report_env *env)
{
    json_open(j, "environment", "{");
    json_str(j, "sampling", env->sampling);
    json_str(j, "jemalloc_version", env->jemalloc_version);
    json_str(j, "binary", env->binary);
    json_str(j, "build_id", env->build_id);
    json_str(j, "thresholds", env->thresholds_path);
    json_str(j, "report_dir", env->report_dir);
    json_str(j, "filter", env->filter);
    json_close(j, "}");
}

static void
json_frame(struct json *j, const struct leakgate_frame *f, bool shown)
{
    json_open(j, NULL, "{");
    json_str(j, "function", f->function);
    json_str(j, "file", f->file);
    json_opt(j, "line", f->line != 0, f->line);
    json_str(j, "module", f->module);
    if (f->module)
        json_hex(j, "offset", f->module_offset);
    else
        json_str(j, "offset", NULL);
    json_bool(j, "inlined", f->inlined);
    json_hex(j, "pc", f->pc);
    json_bool(j, "shown", shown);
    json_close(j, "}");
}

static void
json_stack_lists(struct json *j, const struct leakgate_vstack *s)
{
    size_t begin, end;

    json_open(j, "threads", "[");
    for (size_t i = 0; i < s->nthreads; i++) {
        json_open(j, NULL, "{");
        json_uint(j, "tid", s->threads[i].tid);
        json_int(j, "bytes", s->threads[i].delta_bytes);
        json_int(j, "objects", s->threads[i].delta_objs);
        json_close(j, "}");
    }
    json_close(j, "]");
    json_open(j, "pcs", "[");
    for (size_t i = 0; i < s->npcs; i++)
        json_hex(j, NULL, s->pcs[i]);
    json_close(j, "]");
    if (!s->frames) {
        json_str(j, "frames", NULL);
        return;
    }
    shown_range(s, &begin, &end);
    json_open(j, "frames", "[");
    for (size_t k = 0; k < s->nframes; k++)
        json_frame(j, &s->frames[k], k >= begin && k < end);
    json_close(j, "]");
}

static void
json_stack(struct json *j,
           const struct leakgate_verdict *v,
           const struct leakgate_vstack *s)
{
    static const char *const sources[] = {NULL, "stack_rule", "test_entry",
                                          "suite_entry", "defaults"};
    const struct leakgate_policy_stack_verdict *jg = &s->judgement;
    enum limit_source src = limit_source(v, s);
    bool ignored = s->bytes > 0 && jg->ignored;

    json_open(j, NULL, "{");
    json_int(j, "bytes", s->bytes);
    json_int(j, "objects", s->objs);
    json_bool(j, "judged", s->bytes > 0);
    json_bool(j, "counted", counted(s));
    json_opt(j, "limit", src != SOURCE_NONE, jg->limit);
    json_str(j, "limit_source", sources[src]);
    json_opt(j, "rule_line", src == SOURCE_RULE, jg->rule ? jg->rule->line : 0);
    json_bool(j, "over", jg->over);
    json_bool(j, "ignored", ignored);
    json_opt(j, "ignore_line", ignored && jg->ignore,
             jg->ignore ? jg->ignore->line : 0);
    json_str(j, "ignore_reason",
             ignored && jg->ignore ? jg->ignore->reason : NULL);
    json_stack_lists(j, s);
    json_close(j, "}");
}

static void
json_entry(struct json *j,
           const char *key,
           const struct leakgate_config_entry *e)
{
    if (!e) {
        json_str(j, key, NULL);
        return;
    }
    json_open(j, key, "{");
    json_str(j, "pattern", e->pattern);
    json_uint(j, "line", e->line);
    json_close(j, "}");
}

static void
json_limits(struct json *j, const struct leakgate_verdict *v)
{
    const struct leakgate_policy_settings *st = &v->settings;

    json_uint(j, "stack_limit", st->stack_limit);
    json_opt(j, "total_limit", !st->total_unlimited, st->total_limit);
    json_uint(j, "warmup", st->warmup);
    json_bool(j, "suite_scope", st->suite_scope);
    json_entry(j, "test_entry", st->test_entry);
    json_entry(j, "suite_entry", st->suite_entry);
    json_uint(j, "stacks_over", v->policy.nover);
    json_bool(j, "total_over", v->policy.total_over);
}

/* The peak meter's figures and, over the limit, what held the peak. */
static void
json_peak(struct json *j, const struct leakgate_verdict *v)
{
    const struct leakgate_policy_settings *st = &v->settings;
    const struct leakgate_config_entry *e = st->peak_entry;
    const char *from = leakgate_verdict__peak_from(v);

    json_opt(j, "peak_bytes", v->peak_known, v->peak_bytes);
    json_opt(j, "allocations", v->peak_known, v->allocations);
    json_opt(j, "peak_limit", st->peak_limited, st->peak_limit);
    json_str(j, "peak_limit_from", from);
    json_opt(j, "peak_limit_line", e && st->peak_limited, e ? e->line : 0);
    json_bool(j, "peak_over", v->peak_over);
    json_opt(j, "peak_level", v->npeak_stacks > 0, v->peak_level);
    json_open(j, "peak_stacks", "[");
    for (size_t i = 0; i < v->npeak_stacks; i++) {
        json_open(j, NULL, "{");
        json_int(j, "bytes", v->peak_stacks[i].bytes);
        json_int(j, "objects", v->peak_stacks[i].objs);
        json_stack_lists(j, &v->peak_stacks[i]);
        json_close(j, "}");
    }
    json_close(j, "]");
}

static void
json_notes(struct json *j, const struct leakgate_verdict *v)
{
    json_open(j, "notes", "[");
    for (size_t i = 0; i < v->nnotes; i++) {
        json_open(j, NULL, "{");
        json_str(j, "file", v->notes[i].file);
        json_uint(j, "line", v->notes[i].line);
        json_str(j, "message", v->notes[i].message);
        json_close(j, "}");
    }
    json_close(j, "]");
}

static void
json_test(struct json *j, const struct leakgate_verdict *v)
{
    static const char *const status[] = {"pass", "fail", "not_judged"};
    struct tally n;

    tally(&n, v);
    json_open(j, NULL, "{");
    json_str(j, "suite", v->suite);
    json_str(j, "test", v->test);
    json_str(j, "name", v->name);
    if (v->origin)
        json_str(j, "origin", v->origin);
    json_str(j, "status",
             (unsigned int)v->status < 3 ? status[v->status] : "unknown");
    json_bool(j, "measured", v->measured);
    json_str(j, "measured_by", leakgate_verdict__measured_by(v->how));
    if (v->first_objs > 0 || v->how == LEAKGATE_MEASURED_RERUN ||
        v->how == LEAKGATE_MEASURED_REPLAY) {
        json_open(j, "first_pass", "{");
        json_uint(j, "bytes", v->first_bytes);
        json_uint(j, "objects", v->first_objs);
        json_close(j, "}");
    } else {
        json_str(j, "first_pass", NULL);
    }
    if (v->how == LEAKGATE_MEASURED_SUITE_END) {
        json_open(j, "held_by_fixture", "{");
        json_uint(j, "bytes", v->held_bytes);
        json_uint(j, "objects", v->held_objs);
        json_close(j, "}");
    }
    json_key(j, "seconds");
    leakgate_buf__printf(j->b, "%.6f", seconds_of(v));
    json_int(j, "retained_bytes", n.bytes);
    json_int(j, "retained_objects", n.objs);
    json_uint(j, "counted_stacks", n.ncounted);
    json_int(j, "excluded_bytes", v->excluded_bytes);
    json_limits(j, v);
    json_peak(j, v);
    json_str(j, "not_judged_why", v->not_judged_why);
    if (v->ended)
        json_str(j, "ended", v->ended);
    json_notes(j, v);
    json_open(j, "artifacts", "{");
    json_str(j, "dir", v->artifact_dir);
    json_str(j, "heap_before", v->heap_before);
    json_str(j, "heap_after", v->heap_after);
    json_str(j, "json", v->json_path);
    json_str(j, "text", v->text_path);
    json_str(j, "dot", v->dot_path);
    json_str(j, "svg", v->svg_path);
    json_str(j, "pdf", v->pdf_path);
    if (v->picture_note)
        json_str(j, "picture_note", v->picture_note);
    json_close(j, "}");
    json_str(j, "report", v->report);
    json_open(j, "stacks", "[");
    for (size_t i = 0; i < v->nstacks; i++)
        json_stack(j, v, &v->stacks[i]);
    json_close(j, "]");
    json_close(j, "}");
}

/* Render into b what `fill` writes at depth 1 (after a first member),
 * from the first character of the value on: one member's value, or one
 * array item, as it appears in the document. */
static void
json_value(struct leakgate_buf *b,
           int depth,
           void (*fill)(struct json *, const void *),
           const void *arg)
{
    struct leakgate_buf tmp = LEAKGATE_BUF_INIT;
    struct json j;
    const char *at;

    memset(&j, 0, sizeof j);
    j.b = &tmp;
    j.depth = depth;
    j.fresh[depth] = true;
    fill(&j, arg);
    at = tmp.ptr ? tmp.ptr + strspn(tmp.ptr, "\n") : NULL;
    if (at && depth == 1)
        at = strchr(at, '{'); /* after the key */
    if (tmp.failed || !at)
        b->failed = true;
    else
        leakgate_buf__puts(b, at);
    leakgate_buf__dispose(&tmp);
}

static void
fill_test(struct json *j, const void *v)
{
    json_test(j, v);
}

static void
fill_env(struct json *j, const void *env)
{
    json_env(j, env);
}

void
leakgate_report__json_test(struct leakgate_buf *b,
                           const struct leakgate_verdict *v)
{
    json_value(b, 2, fill_test, v);
}

void
leakgate_report__json_env(struct leakgate_buf *b,
                          const struct leakgate_report_env *env)
{
    json_value(b, 1, fill_env, env);
}

char *
leakgate_report__json_doc(const struct leakgate_report_piece *p,
                          size_t n,
                          const char *env)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    size_t count[3] = {0, 0, 0};

    for (size_t i = 0; i < n; i++) {
        if ((unsigned int)p[i].status < 3)
            count[p[i].status]++;
    }
    leakgate_buf__printf(&b,
                         "{\n  \"format\": \"leakgate-results\",\n"
                         "  \"version\": 2,\n"
                         "  \"leakgate_version\": \"%s\",\n"
                         "  \"environment\": %s,\n"
                         "  \"summary\": {\n    \"tests\": %zu,\n"
                         "    \"passed\": %zu,\n    \"failed\": %zu,\n"
                         "    \"not_judged\": %zu\n  },\n  \"tests\": [",
                         LEAKGATE_VERSION, env, n, count[LEAKGATE_STATUS_PASS],
                         count[LEAKGATE_STATUS_FAIL],
                         count[LEAKGATE_STATUS_NOT_JUDGED]);
    for (size_t i = 0; i < n; i++) {
        leakgate_buf__puts(&b, i ? ",\n" : "\n");
        leakgate_buf__puts(&b, p[i].json_test);
    }
    leakgate_buf__puts(&b, n ? "\n  ]\n}\n" : "]\n}\n");
    return leakgate_buf__take(&b);
}

char *
leakgate_report__json(const struct leakgate_verdict *const *v,
                      size_t n,
                      const struct leakgate_report_env *env)
{
    struct leakgate_buf envb = LEAKGATE_BUF_INIT, *bufs = NULL;
    struct leakgate_report_piece *p = render_pieces(&bufs, v, n, env, false);
    char *doc = NULL;

    leakgate_report__json_env(&envb, env);
    if (p && !envb.failed && envb.ptr)
        doc = leakgate_report__json_doc(p, n, envb.ptr);
    dispose_pieces(p, bufs, n);
    leakgate_buf__dispose(&envb);
    return doc;
}
