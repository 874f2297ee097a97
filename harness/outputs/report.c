/* SPDX-License-Identifier: MIT */
/*
 * report: what every renderer of a verdict shares, at the bottom of the
 * report files (report_parts.h says who calls it): the XML and JSON
 * escapers, which stacks count and which a report shows in full, what
 * they add up to, where a stack's limit came from.  Core stage 5: reads
 * in-memory verdicts, builds strings with struct leakgate_buf, never
 * writes a file, keeps no state.  The renderers above it: report_text.c
 * (SPEC §7), report_yaml.c (the YAML that accepts growth), report_junit.c
 * and report_json.c (one window each), report_pieces.c (the documents of
 * a run).
 *
 * Invariants: every string that comes from a test, a symbol or a path goes
 * through an escaper (XML, JSON or YAML); the XML and JSON escapers also
 * replace malformed UTF-8, so the output is well-formed whatever the names
 * contain.  No ANSI codes unless colour is asked for.  A failed allocation
 * marks the buffer, which is checked once when the text is taken: every
 * entry point returns NULL on ENOMEM and leaks nothing.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_parts.h"
#include "util.h"

const char *
leakgate_report__or_unknown(const char *s)
{
    return s && *s ? s : "unknown";
}

const char *
leakgate_report__plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* n with thousands separators ("4,208") into out (>= 32 bytes); returns
 * out.  Cannot fail. */
const char *
leakgate_report__group_u(char *out, uint64_t n, bool negative)
{
    return leakgate_util__group_digits(out, 32, n, negative);
}

bool
leakgate_report__counted(const struct leakgate_vstack *s)
{
    return s->bytes > 0 && !s->judgement.ignored;
}

bool
leakgate_report__gate_failed(const struct leakgate_verdict *v)
{
    return v->status == LEAKGATE_STATUS_FAIL && v->policy.failed;
}

bool
leakgate_report__offending(const struct leakgate_verdict *v,
                           const struct leakgate_vstack *s)
{
    if (v->status == LEAKGATE_STATUS_NOT_JUDGED)
        return leakgate_report__counted(s);
    return s->judgement.over ||
           (v->policy.total_over && leakgate_report__counted(s)) ||
           (v->policy.lost_over && leakgate_report__counted(s) &&
            leakgate_report__lost_stack(s));
}

bool
leakgate_report__suite_window(const struct leakgate_verdict *v)
{
    return v->test && strcmp(v->test, "[suite]") == 0;
}

void
leakgate_report__tally(struct leakgate_report_tally *out,
                       const struct leakgate_verdict *v)
{
    memset(out, 0, sizeof *out);
    out->requested_known = v->omitted_stacks == 0;
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        if (s->bytes > 0 && s->judgement.ignored) {
            out->nignored++;
        } else if (s->bytes < 0) {
            out->nfreed++;
            out->freed_bytes += s->bytes;
            out->freed_objs += s->objs;
        } else if (leakgate_report__counted(s)) {
            out->ncounted++;
            out->bytes += s->bytes;
            out->objs += s->objs;
            out->requested += s->requested;
            out->requested_known &= s->requested_known;
            if (leakgate_report__offending(v, s)) {
                out->nshown++;
            } else {
                out->nwithin++;
                out->within_bytes += s->bytes;
                out->within_objs += s->objs;
            }
        }
    }
    /* Only the list is capped: totals count every stack. */
    out->bytes += (int64_t)v->omitted_bytes;
    out->objs += (int64_t)v->omitted_objs;
    out->ncounted += v->omitted_stacks;
    out->requested_known &= out->ncounted > 0;
}

bool
leakgate_report__requested_total(const struct leakgate_verdict *v, int64_t *out)
{
    struct leakgate_report_tally n;

    leakgate_report__tally(&n, v);
    *out = n.requested;
    return n.requested_known;
}

const char *
leakgate_report__judged(char *out, size_t judged, size_t over, size_t unjudged)
{
    snprintf(out, LEAKGATE_REPORT_JUDGED_SIZE,
             "%zu window%s judged, %zu over the limits, %zu not judged%s",
             judged, judged == 1 ? "" : "s", over, unjudged,
             unjudged > 0 ? " (not a pass)" : "");
    return out;
}

const char *
leakgate_report__requested(char *out, int64_t requested, bool known)
{
    char num[32];

    out[0] = '\0';
    if (known)
        snprintf(out, LEAKGATE_REPORT_REQUESTED_SIZE, " (%s B requested)",
                 leakgate_util__group_signed(num, requested));
    return out;
}

int64_t
leakgate_report__reachable_bytes(const struct leakgate_vstack *s)
{
    return s->reach.known
               ? s->bytes - s->reach.lost_bytes - s->reach.indirect_bytes
               : 0;
}

int64_t
leakgate_report__reachable_objs(const struct leakgate_vstack *s)
{
    return s->reach.known
               ? s->objs - s->reach.lost_objs - s->reach.indirect_objs
               : 0;
}

bool
leakgate_report__lost_stack(const struct leakgate_vstack *s)
{
    return s->reach.known && s->bytes > 0 &&
           s->reach.lost_bytes + s->reach.indirect_bytes > 0;
}

uint64_t
leakgate_report__lost_bytes(const struct leakgate_verdict *v)
{
    uint64_t n = 0;

    for (size_t i = 0; i < v->nstacks; i++)
        if (leakgate_report__counted(&v->stacks[i]) &&
            leakgate_report__lost_stack(&v->stacks[i]))
            n += (uint64_t)(v->stacks[i].reach.lost_bytes +
                            v->stacks[i].reach.indirect_bytes);
    return n;
}

const char *const leakgate_report__root_keys[3] = {"global", "tls", "stack"};

bool
leakgate_report__lost_advice(struct leakgate_buf *b,
                             const struct leakgate_verdict *v,
                             const struct leakgate_report_env *env,
                             const char *prefix)
{
    size_t n = 0, of = 0;
    char num[32], lim[32];

    for (size_t i = 0; i < v->nstacks; i++)
        if (v->stacks[i].judgement.over) {
            of++;
            n += leakgate_report__lost_stack(&v->stacks[i]);
        }
    if (n == 0 && !v->policy.lost_over)
        return false;
    leakgate_buf__puts(b, prefix);
    if (v->policy.lost_over)
        leakgate_buf__printf(
            b,
            "%s B of what this test retained no pointer in the program "
            "reaches, over its lost_limit of %s B: a leak to fix; ",
            leakgate_report__group_u(num, leakgate_report__lost_bytes(v),
                                     false),
            leakgate_report__group_u(lim, v->settings.lost_limit, false));
    else if (n == of)
        leakgate_buf__printf(b,
                             "no pointer to %s remains in the program: a "
                             "leak to fix, not growth to accept; ",
                             of == 1 ? "this stack's objects"
                                     : "these stacks' objects");
    else
        leakgate_buf__printf(b,
                             "%zu of these %zu stacks hold objects no "
                             "pointer in the program reaches: a leak to "
                             "fix; ",
                             n, of);
    leakgate_buf__printf(b,
                         "no rule is offered to accept lost bytes (to "
                         "accept them anyway, add to %s a rule of your own: "
                         "docs/thresholds.md, \"Accepting growth by hand\")",
                         env->thresholds_path ? env->thresholds_path
                                              : "leakgate.yaml");
    return true;
}

const char *
leakgate_report__reach_kind(const struct leakgate_vstack *s)
{
    const struct leakgate_reach_counts *r = &s->reach;
    int64_t reachable = leakgate_report__reachable_objs(s);

    if (!r->known || s->objs <= 0)
        return NULL;
    if (reachable == 0)
        return r->lost_objs == 0 ? "indirect" : "lost";
    return r->lost_objs == 0 && r->indirect_objs == 0 ? "reachable" : "mixed";
}

const char *
leakgate_report__roots(char *out, unsigned int roots, const char *sep)
{
    static const char *const names[] = {"a global", "thread-local storage",
                                        "the stack"};
    size_t len = 0;

    out[0] = '\0';
    for (unsigned int k = 0; k < 3; k++)
        if (roots & (1u << k)) {
            int w = snprintf(out + len, LEAKGATE_REPORT_ROOTS_SIZE - len,
                             "%s%s", len ? sep : "", names[k]);

            if (w > 0 && (size_t)w < LEAKGATE_REPORT_ROOTS_SIZE - len)
                len += (size_t)w;
        }
    return out;
}

const char *
leakgate_report__reach(char *out, const struct leakgate_vstack *s)
{
    const struct leakgate_reach_counts *r = &s->reach;
    const char *kind = leakgate_report__reach_kind(s);
    char roots[LEAKGATE_REPORT_ROOTS_SIZE], a[32], b[32], c[32];
    size_t len;

    out[0] = '\0';
    if (!kind)
        return out;
    leakgate_report__roots(roots, r->roots, " and ");
    if (strcmp(kind, "lost") == 0 && r->indirect_objs == 0)
        snprintf(out, LEAKGATE_REPORT_REACH_SIZE, "lost");
    else if (strcmp(kind, "indirect") == 0)
        snprintf(out, LEAKGATE_REPORT_REACH_SIZE,
                 "indirectly lost (only lost objects point to %s)",
                 s->objs == 1 ? "it" : "them");
    else if (strcmp(kind, "reachable") == 0)
        snprintf(out, LEAKGATE_REPORT_REACH_SIZE, "reachable from %s", roots);
    else {
        len = 0;
        if (r->lost_bytes)
            len +=
                (size_t)snprintf(out, LEAKGATE_REPORT_REACH_SIZE, "%s B lost",
                                 leakgate_util__group_signed(a, r->lost_bytes));
        if (r->indirect_bytes && len < LEAKGATE_REPORT_REACH_SIZE)
            len += (size_t)snprintf(
                out + len, LEAKGATE_REPORT_REACH_SIZE - len,
                "%s%s B indirectly lost", len ? ", " : "",
                leakgate_util__group_signed(b, r->indirect_bytes));
        if (strcmp(kind, "mixed") == 0 && len < LEAKGATE_REPORT_REACH_SIZE)
            snprintf(out + len, LEAKGATE_REPORT_REACH_SIZE - len,
                     "%s%s B reachable from %s", len ? ", " : "",
                     leakgate_util__group_signed(
                         c, leakgate_report__reachable_bytes(s)),
                     roots);
    }
    /* Reachable when the test ended, lost by the run's end (gate_late.c). */
    len = strlen(out);
    if (r->later_bytes > 0 && len < LEAKGATE_REPORT_REACH_SIZE) {
        if (r->later_bytes == r->lost_bytes + r->indirect_bytes)
            snprintf(out + len, LEAKGATE_REPORT_REACH_SIZE - len,
                     " by the end of the run (reachable from %s when the "
                     "test ended: what ran after it dropped the last "
                     "pointer without freeing)",
                     roots);
        else
            snprintf(out + len, LEAKGATE_REPORT_REACH_SIZE - len,
                     " (%s B of the lost reachable when the test ended: "
                     "what ran after it dropped the last pointer without "
                     "freeing)",
                     leakgate_util__group_signed(a, r->later_bytes));
    }
    return out;
}

enum leakgate_report_source
leakgate_report__limit_source(const struct leakgate_verdict *v,
                              const struct leakgate_vstack *s)
{
    const struct leakgate_policy_settings *st = &v->settings;

    if (s->bytes <= 0 || s->judgement.ignored)
        return LEAKGATE_REPORT_SOURCE_NONE;
    if (s->judgement.rule)
        return LEAKGATE_REPORT_SOURCE_RULE;
    if (st->test_entry && st->test_entry->has_stack_limit)
        return LEAKGATE_REPORT_SOURCE_TEST_ENTRY;
    if (st->suite_entry && st->suite_entry->has_stack_limit)
        return LEAKGATE_REPORT_SOURCE_SUITE_ENTRY;
    return LEAKGATE_REPORT_SOURCE_DEFAULTS;
}

/* frames[*begin, *end) to show; every frame when the range is empty or
 * out of bounds.  Cannot fail. */
void
leakgate_report__shown_range(const struct leakgate_vstack *s,
                             size_t *begin,
                             size_t *end)
{
    *begin = s->shown_begin;
    *end = s->shown_end;
    if (*begin >= *end || *end > s->nframes) {
        *begin = 0;
        *end = s->nframes;
    }
}

static void
put_ascii(struct leakgate_buf *b, char c, enum leakgate_report_escape mode)
{
    static const char specials[] = "&<>\"'";
    static const char *const entities[] = {"&amp;", "&lt;", "&gt;", "&quot;",
                                           "&apos;"};
    const char *special = strchr(specials, c);

    if (mode == LEAKGATE_REPORT_ESC_JSON) {
        leakgate_buf__put_json_char(b, c);
    } else if (c && special &&
               (mode == LEAKGATE_REPORT_ESC_XML_ATTR ||
                special - specials < 3)) {
        leakgate_buf__puts(b, entities[special - specials]);
    } else if (c == '\n' || c == '\t' || c == '\r') {
        /* Attribute values must stay on one line; a parser would turn a
         * raw newline into a space anyway. */
        leakgate_buf__put(b, mode == LEAKGATE_REPORT_ESC_XML_ATTR ? " " : &c,
                          1);
    } else {
        /* XML 1.0 has no way to write the other control characters. */
        leakgate_buf__put(b, (unsigned char)c < 0x20 ? "?" : &c, 1);
    }
}

/* Printable ASCII that no mode escapes. */
static bool
is_plain(unsigned char c)
{
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '&' &&
           c != '<' && c != '>' && c != '\'';
}

/*
 * Append the first n bytes of s escaped for mode.  util's escapers do not
 * check UTF-8, and one stray byte in a symbol makes a whole XML or JSON
 * document unreadable, so malformed sequences become "?" (XML) or U+FFFD
 * (JSON), as do the non-characters XML forbids.
 */
void
leakgate_report__put_escaped_n(struct leakgate_buf *b,
                               const char *s,
                               size_t n,
                               enum leakgate_report_escape mode)
{
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *end = p + n;

    while (p < end && *p) {
        const unsigned char *run = p;
        uint32_t cp;
        size_t len;

        /* Printable ASCII that no mode escapes goes in whole runs. */
        while (run < end && is_plain(*run))
            run++;
        if (run > p) {
            leakgate_buf__put(b, (const char *)p, (size_t)(run - p));
            p = run;
            continue;
        }
        len = leakgate_util__utf8_seq(p, &cp);

        if (len == 0)
            leakgate_buf__puts(b, mode == LEAKGATE_REPORT_ESC_JSON ? "\\ufffd"
                                                                   : "?");
        else if (len == 1)
            put_ascii(b, (char)*p, mode);
        else if (mode != LEAKGATE_REPORT_ESC_JSON &&
                 (cp == 0xfffe || cp == 0xffff))
            leakgate_buf__puts(b, "?");
        else
            leakgate_buf__put(b, (const char *)p, len);
        p += len ? len : 1;
    }
}

void
leakgate_report__put_escaped(struct leakgate_buf *b,
                             const char *s,
                             enum leakgate_report_escape mode)
{
    if (mode != LEAKGATE_REPORT_ESC_JSON &&
        mode != LEAKGATE_REPORT_ESC_XML_ATTR)
        mode = LEAKGATE_REPORT_ESC_XML_TEXT;
    leakgate_report__put_escaped_n(b, s ? s : "", s ? strlen(s) : 0, mode);
}

const char *
leakgate_report__suite_of(const struct leakgate_verdict *v)
{
    return v->suite ? v->suite : "";
}

double
leakgate_report__seconds_of(const struct leakgate_verdict *v)
{
    return isfinite(v->seconds) && v->seconds > 0 ? v->seconds : 0.0;
}
