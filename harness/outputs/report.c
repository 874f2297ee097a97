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
           (v->policy.total_over && leakgate_report__counted(s));
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
