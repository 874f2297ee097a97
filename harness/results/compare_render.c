/* SPDX-License-Identifier: MIT */
/*
 * compare_render: a comparison (compare.h) as text for a log, Markdown
 * for a CI job summary or a pull-request comment, and JSON
 * ("leakgate-compare" version 1, docs/results-format.md).  Core: builds
 * strings in memory, no I/O.  Rows come sorted (regressions first, then
 * the largest change); text and Markdown list only the rows that changed,
 * JSON every row.
 */
#include "compare.h"

#include <inttypes.h>
#include <string.h>

#include "report.h"
#include "thresholds.h"
#include "util.h"

/* Markdown lists this many stack frames per new stack, this many rows
 * and new stacks: a pull-request comment holds at most 65,536
 * characters (the text and JSON list everything).  Long names (C++
 * templates) are cut to MD_NAME bytes, a stack's line to MD_STACK, the
 * warning to MD_WARNING (an escape writes at most 5 bytes per byte), and
 * no row is added past MD_ROWS_BYTES nor a stack past MD_STACKS_BYTES of
 * Markdown: the worst case ends under 63,000 bytes, and bytes are never
 * fewer than characters. */
#define MD_FRAMES 8
#define MD_ROWS 50
#define MD_STACKS 20
#define MD_NAME 200
#define MD_STACK 1000
#define MD_WARNING 400
#define MD_ROWS_BYTES 40000
#define MD_STACKS_BYTES 54000

static const char *
status_name(leakgate_status s)
{
    return s == LEAKGATE_STATUS_PASS   ? "pass"
           : s == LEAKGATE_STATUS_FAIL ? "fail"
                                       : "not_judged";
}

/* "+16 B" / "-1,024 B" / "+3" (bytes or a count). */
static void
put_delta(struct leakgate_buf *b, uint64_t from, uint64_t to, bool bytes)
{
    char num[32];
    uint64_t d = to > from ? to - from : from - to;

    leakgate_buf__puts(b, to >= from ? "+" : "-");
    leakgate_buf__puts(
        b, bytes ? leakgate_thresholds__bytes(num, sizeof num, d)
                 : leakgate_util__group_digits(num, sizeof num, d, false));
}

/* "+200.0%" of the change from from to to; nothing when from is 0. */
static void
put_pct(struct leakgate_buf *b, uint64_t from, uint64_t to)
{
    long double pct;

    if (from == 0)
        return;
    pct = ((long double)to - (long double)from) * 100.0L / (long double)from;
    leakgate_buf__printf(b, "%+.1Lf%%", pct);
}

static void
put_value(struct leakgate_buf *b, uint64_t v, bool bytes)
{
    char num[32];

    leakgate_buf__puts(
        b, bytes ? leakgate_thresholds__bytes(num, sizeof num, v)
                 : leakgate_util__group_digits(num, sizeof num, v, false));
}

/* One figure of a row: "0 B -> 16 B (+16 B)", "12 -> 18 (+6, +50.0%)",
 * the one side's value, or "-" (not measured). */
static void
put_change(struct leakgate_buf *b,
           const char *arrow,
           const bool known[2],
           const uint64_t v[2],
           bool bytes)
{
    if (!known[0] && !known[1]) {
        leakgate_buf__puts(b, "-");
        return;
    }
    if (!known[0] || !known[1]) {
        put_value(b, known[0] ? v[0] : v[1], bytes);
        return;
    }
    put_value(b, v[0], bytes);
    leakgate_buf__puts(b, arrow);
    put_value(b, v[1], bytes);
    if (v[0] == v[1])
        return;
    leakgate_buf__puts(b, " (");
    put_delta(b, v[0], v[1], bytes);
    if (v[0] != 0)
        leakgate_buf__puts(b, ", ");
    put_pct(b, v[0], v[1]);
    leakgate_buf__puts(b, ")");
}

enum figure { RETAINED, PEAK, ALLOCS };

/* The figure's values on both sides and whether each is known. */
static void
figure(bool known[2],
       uint64_t v[2],
       const struct leakgate_compare_row *r,
       enum figure f)
{
    const struct leakgate_verdict *side[2] = {r->base, r->head};

    for (int i = 0; i < 2; i++) {
        const struct leakgate_verdict *s = side[i];

        known[i] = s && s->measured && (f == RETAINED || s->peak_known);
        v[i] = !known[i]       ? 0
               : f == RETAINED ? s->policy.total_bytes
               : f == PEAK     ? s->peak_bytes
                               : s->allocations;
    }
}

static void
put_figure(struct leakgate_buf *b,
           const char *arrow,
           const struct leakgate_compare_row *r,
           enum figure f)
{
    bool known[2];
    uint64_t v[2];

    figure(known, v, r, f);
    put_change(b, arrow, known, v, f != ALLOCS);
}

void
leakgate_compare__reasons(struct leakgate_buf *b,
                          const struct leakgate_compare_row *r)
{
    bool known[2];
    uint64_t v[2];
    const char *sep = "";

    if (r->why & LEAKGATE_COMPARE_WHY_RETAINED) {
        figure(known, v, r, RETAINED);
        leakgate_buf__puts(b, "retained ");
        put_delta(b, v[0], v[1], true);
        sep = ", ";
    }
    if (r->why & LEAKGATE_COMPARE_WHY_NEW_STACK) {
        leakgate_buf__printf(b, "%s%zu new retained %s", sep, r->nnew_stacks,
                             r->nnew_stacks == 1 ? "stack" : "stacks");
        sep = ", ";
    }
    for (int k = 0; k < 2; k++) {
        unsigned int bit =
            k == 0 ? LEAKGATE_COMPARE_WHY_PEAK : LEAKGATE_COMPARE_WHY_ALLOCS;

        if (!(r->why & bit))
            continue;
        figure(known, v, r, k == 0 ? PEAK : ALLOCS);
        leakgate_buf__printf(b, "%s%s ", sep, k == 0 ? "peak" : "allocations");
        /* from 0 there is no percentage: the growth alone */
        if (v[0] == 0) {
            put_delta(b, v[0], v[1], k == 0);
        } else {
            put_pct(b, v[0], v[1]);
            leakgate_buf__puts(b, " (");
            put_delta(b, v[0], v[1], k == 0);
            leakgate_buf__puts(b, ")");
        }
        sep = ", ";
    }
}

/* "function file:line" of frame k, or the module+offset. */
static void
put_frame(struct leakgate_buf *b, const struct leakgate_frame *f)
{
    leakgate_buf__puts(b, f->function ? f->function : "??");
    if (f->file && f->line)
        leakgate_buf__printf(b, " %s:%u", leakgate_util__base_name(f->file),
                             f->line);
}

/* "16 B (13 B requested) in 1 object: trimmed_copy strtab.c:31 < ..." */
static void
put_stack(struct leakgate_buf *b, const struct leakgate_vstack *s, size_t max)
{
    char num[32], req[LEAKGATE_REPORT_REQUESTED_SIZE];
    char reach[LEAKGATE_REPORT_REACH_SIZE];

    leakgate_buf__printf(
        b, "%s%s in %" PRId64 " %s%s%s: ",
        leakgate_thresholds__bytes(num, sizeof num, (uint64_t)s->bytes),
        leakgate_report__requested(req, s->requested, s->requested_known),
        s->objs, s->objs == 1 ? "object" : "objects",
        *leakgate_report__reach(reach, s) ? ", " : "", reach);
    for (size_t k = s->shown_begin; k < s->shown_end; k++) {
        if (k - s->shown_begin == max) {
            leakgate_buf__puts(b, " < ...");
            break;
        }
        leakgate_buf__puts(b, k > s->shown_begin ? " < " : "");
        put_frame(b, &s->frames[k]);
    }
}

static const char *
row_kind(const struct leakgate_compare_row *r)
{
    return r->why     ? "REGRESSION"
           : !r->base ? "new"
           : !r->head ? "removed"
                      : "changed";
}

static void
put_criteria(struct leakgate_buf *b, const struct leakgate_compare_limits *l)
{
    char num[32];

    leakgate_buf__puts(b, "a regression is retained growth");
    if (l->new_stacks)
        leakgate_buf__puts(b, ", a new retained stack");
    if (l->peak_on)
        leakgate_buf__printf(
            b, ", a peak over +%u%% and +%s", l->peak_pct,
            leakgate_thresholds__bytes(num, sizeof num, l->peak_floor));
    if (l->alloc_on)
        leakgate_buf__printf(b, ", allocations over +%u%% and +%s",
                             l->alloc_pct,
                             leakgate_util__group_digits(
                                 num, sizeof num, l->alloc_floor, false));
}

static void
text_row(struct leakgate_buf *b, const struct leakgate_compare_row *r)
{
    leakgate_buf__printf(b, "%-10s %s%s", row_kind(r), r->origin, r->name);
    if (r->why && !r->base)
        leakgate_buf__puts(b, " (new test)");
    if (r->why) {
        leakgate_buf__puts(b, ": ");
        leakgate_compare__reasons(b, r);
    }
    leakgate_buf__puts(b, "\n    retained ");
    put_figure(b, " -> ", r, RETAINED);
    leakgate_buf__puts(b, "; peak ");
    put_figure(b, " -> ", r, PEAK);
    leakgate_buf__puts(b, "; allocations ");
    put_figure(b, " -> ", r, ALLOCS);
    leakgate_buf__puts(b, "\n");
    for (size_t k = 0; k < r->nnew_stacks; k++) {
        leakgate_buf__puts(b, "    new stack ");
        put_stack(b, r->new_stacks[k], SIZE_MAX);
        leakgate_buf__puts(b, "\n");
    }
}

static void
put_counts(struct leakgate_buf *b, const struct leakgate_compare *c)
{
    leakgate_buf__printf(b,
                         "%zu %s; %zu changed within the limits, %zu new, "
                         "%zu removed, %zu unchanged",
                         c->nregressions,
                         c->nregressions == 1 ? "regression" : "regressions",
                         c->nchanged, c->nnew, c->nremoved, c->nunchanged);
}

char *
leakgate_compare__text(const struct leakgate_compare *c)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__printf(&b,
                         "leakgate compare: base %s (%zu windows), head %s "
                         "(%zu windows)\n",
                         c->base_name, c->base_windows, c->head_name,
                         c->head_windows);
    if (c->warning)
        leakgate_buf__printf(&b, "leakgate compare: warning: %s\n", c->warning);
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].changed || c->rows[i].why)
            text_row(&b, &c->rows[i]);
    leakgate_buf__puts(&b, "leakgate compare: ");
    put_counts(&b, c);
    leakgate_buf__puts(&b, " (");
    put_criteria(&b, &c->lim);
    leakgate_buf__puts(&b, ")\n");
    return leakgate_buf__take(&b);
}

/* ---- Markdown ------------------------------------------------------- */

/* The first max bytes at most of s as Markdown text inside a table
 * cell: punctuation that means something escaped, HTML special
 * characters as entities, no line breaks; a longer s is cut at a UTF-8
 * character boundary and ends with an ellipsis. */
static void
md_put(struct leakgate_buf *b, const char *s, size_t max)
{
    size_t n;
    bool cut;

    if (!s)
        s = "";
    n = strlen(s);
    cut = n > max;
    if (cut) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    for (const char *p = s; p < s + n; p++) {
        if (*p == '<')
            leakgate_buf__puts(b, "&lt;");
        else if (*p == '>')
            leakgate_buf__puts(b, "&gt;");
        else if (*p == '&')
            leakgate_buf__puts(b, "&amp;");
        else if (*p == '\n' || *p == '\r' || *p == '\t')
            leakgate_buf__puts(b, " ");
        else if (strchr("\\`*_[]|#~!", *p))
            leakgate_buf__printf(b, "\\%c", *p);
        else
            leakgate_buf__put(b, p, 1);
    }
    if (cut)
        leakgate_buf__puts(b, "…");
}

/* A row's origin and name, cut as one name is. */
static void
md_name(struct leakgate_buf *b, const struct leakgate_compare_row *r)
{
    struct leakgate_buf s = LEAKGATE_BUF_INIT;

    leakgate_buf__printf(&s, "%s%s", r->origin, r->name);
    md_put(b, s.ptr, MD_NAME);
    b->failed |= s.failed;
    leakgate_buf__dispose(&s);
}

static void
md_row(struct leakgate_buf *b, const struct leakgate_compare_row *r)
{
    leakgate_buf__printf(b, "| %s | ", r->why ? ":x: regression" : row_kind(r));
    md_name(b, r);
    leakgate_buf__puts(b, " | ");
    put_figure(b, " → ", r, RETAINED);
    leakgate_buf__puts(b, " | ");
    put_figure(b, " → ", r, PEAK);
    leakgate_buf__puts(b, " | ");
    put_figure(b, " → ", r, ALLOCS);
    leakgate_buf__puts(b, " | ");
    leakgate_compare__reasons(b, r);
    leakgate_buf__puts(b, " |\n");
}

static void
md_new_stacks(struct leakgate_buf *b, const struct leakgate_compare *c)
{
    size_t shown = 0, all = 0;

    for (size_t i = 0; i < c->n; i++) {
        const struct leakgate_compare_row *r = &c->rows[i];

        for (size_t k = 0; k < r->nnew_stacks; k++) {
            struct leakgate_buf s = LEAKGATE_BUF_INIT;

            if (all++ == 0)
                leakgate_buf__puts(b, "\n#### New retained stacks\n\n");
            if (shown == MD_STACKS || b->len > MD_STACKS_BYTES)
                continue;
            shown++;
            put_stack(&s, r->new_stacks[k], MD_FRAMES);
            leakgate_buf__puts(b, "- ");
            md_name(b, r);
            leakgate_buf__puts(b, ": ");
            md_put(b, s.ptr, MD_STACK);
            leakgate_buf__puts(b, "\n");
            b->failed |= s.failed;
            leakgate_buf__dispose(&s);
        }
    }
    if (all > shown)
        leakgate_buf__printf(b,
                             "- and %zu more (the text output lists them "
                             "all)\n",
                             all - shown);
}

char *
leakgate_compare__markdown(const struct leakgate_compare *c)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    size_t rows = 0, shown = 0;

    leakgate_buf__printf(&b, "### leakgate compare: %zu %s\n\n",
                         c->nregressions,
                         c->nregressions == 1 ? "regression" : "regressions");
    leakgate_buf__puts(&b, "Base ");
    md_put(&b, c->base_name, MD_NAME);
    leakgate_buf__printf(&b, " (%zu windows), head ", c->base_windows);
    md_put(&b, c->head_name, MD_NAME);
    leakgate_buf__printf(&b, " (%zu windows): ", c->head_windows);
    put_counts(&b, c);
    leakgate_buf__puts(&b, ".\n\n");
    if (c->warning) {
        leakgate_buf__puts(&b, "> **Warning**: ");
        md_put(&b, c->warning, MD_WARNING);
        leakgate_buf__puts(&b, "\n\n");
    }
    for (size_t i = 0; i < c->n; i++) {
        if (!c->rows[i].changed && !c->rows[i].why)
            continue;
        if (rows == 0)
            leakgate_buf__puts(&b, "| | test | retained | peak | allocations "
                                   "| regression |\n"
                                   "|---|---|---:|---:|---:|---|\n");
        rows++;
        if (shown < MD_ROWS && b.len <= MD_ROWS_BYTES) {
            md_row(&b, &c->rows[i]);
            shown++;
        }
    }
    if (rows == 0)
        leakgate_buf__puts(&b, "No test changed.\n");
    if (rows > shown)
        leakgate_buf__printf(&b,
                             "\nAnd %zu more changed tests, smaller changes "
                             "(the text output lists them all, the JSON every "
                             "test).\n",
                             rows - shown);
    md_new_stacks(&b, c);
    leakgate_buf__puts(&b, "\n<sub>");
    put_criteria(&b, &c->lim);
    leakgate_buf__puts(&b, ".</sub>\n");
    return leakgate_buf__take(&b);
}

/* ---- JSON ----------------------------------------------------------- */

static void
json_str(struct leakgate_buf *b, const char *s)
{
    leakgate_buf__puts(b, "\"");
    leakgate_report__put_escaped(b, s, LEAKGATE_REPORT_ESC_JSON);
    leakgate_buf__puts(b, "\"");
}

static void
json_side(struct leakgate_buf *b, const struct leakgate_verdict *v)
{
    if (!v) {
        leakgate_buf__puts(b, "null");
        return;
    }
    leakgate_buf__printf(b, "{\"status\": \"%s\", \"measured\": %s, ",
                         status_name(v->status),
                         v->measured ? "true" : "false");
    leakgate_buf__printf(b,
                         "\"retained_bytes\": %" PRIu64
                         ", \"retained_objects\": %" PRIu64 ", ",
                         v->policy.total_bytes, v->policy.total_objs);
    if (v->peak_known)
        leakgate_buf__printf(
            b, "\"peak_bytes\": %" PRIu64 ", \"allocations\": %" PRIu64 "}",
            v->peak_bytes, v->allocations);
    else
        leakgate_buf__puts(b, "\"peak_bytes\": null, \"allocations\": null}");
}

static void
json_stack(struct leakgate_buf *b, const struct leakgate_vstack *s)
{
    leakgate_buf__printf(b, "{\"bytes\": %" PRId64 ", ", s->bytes);
    if (s->requested_known)
        leakgate_buf__printf(b, "\"requested_bytes\": %" PRId64 ", ",
                             s->requested);
    else
        leakgate_buf__puts(b, "\"requested_bytes\": null, ");
    if (leakgate_report__reach_kind(s))
        leakgate_buf__printf(b, "\"reachability\": \"%s\", ",
                             leakgate_report__reach_kind(s));
    else
        leakgate_buf__puts(b, "\"reachability\": null, ");
    leakgate_buf__printf(b, "\"objects\": %" PRId64 ", \"frames\": [", s->objs);
    for (size_t k = s->shown_begin; k < s->shown_end; k++) {
        const struct leakgate_frame *f = &s->frames[k];

        leakgate_buf__puts(b, k > s->shown_begin ? ", " : "");
        leakgate_buf__puts(b, "{\"function\": ");
        if (f->function)
            json_str(b, f->function);
        else
            leakgate_buf__puts(b, "null");
        leakgate_buf__puts(b, ", \"file\": ");
        if (f->file)
            json_str(b, f->file);
        else
            leakgate_buf__puts(b, "null");
        if (f->line)
            leakgate_buf__printf(b, ", \"line\": %u}", f->line);
        else
            leakgate_buf__puts(b, ", \"line\": null}");
    }
    leakgate_buf__puts(b, "]}");
}

static void
json_row(struct leakgate_buf *b, const struct leakgate_compare_row *r)
{
    static const char *const reasons[] = {"retained", "new_stack", "peak",
                                          "allocations"};
    const char *sep = "";

    leakgate_buf__puts(b, "    {\"name\": ");
    json_str(b, r->name);
    if (*r->origin) {
        leakgate_buf__puts(b, ", \"origin\": ");
        json_str(b, r->origin);
    }
    leakgate_buf__printf(b, ", \"state\": \"%s\", \"regression\": %s, ",
                         !r->base     ? "new"
                         : !r->head   ? "removed"
                         : r->changed ? "changed"
                                      : "unchanged",
                         r->why ? "true" : "false");
    leakgate_buf__puts(b, "\"reasons\": [");
    for (unsigned int k = 0; k < 4; k++) {
        if (r->why & (1u << k)) {
            leakgate_buf__printf(b, "%s\"%s\"", sep, reasons[k]);
            sep = ", ";
        }
    }
    leakgate_buf__puts(b, "],\n     \"base\": ");
    json_side(b, r->base);
    leakgate_buf__puts(b, ",\n     \"head\": ");
    json_side(b, r->head);
    leakgate_buf__puts(b, ",\n     \"new_stacks\": [");
    for (size_t k = 0; k < r->nnew_stacks; k++) {
        leakgate_buf__puts(b, k ? ", " : "");
        json_stack(b, r->new_stacks[k]);
    }
    leakgate_buf__puts(b, "]}");
}

static void
json_header(struct leakgate_buf *b, const struct leakgate_compare *c)
{
    const struct leakgate_compare_limits *l = &c->lim;

    leakgate_buf__printf(b,
                         "{\n  \"format\": \"leakgate-compare\",\n"
                         "  \"version\": 1,\n  \"leakgate_version\": \"%s\",\n"
                         "  \"base\": {\"name\": ",
                         leakgate_version());
    json_str(b, c->base_name);
    leakgate_buf__printf(b, ", \"files\": %zu, \"windows\": %zu},\n",
                         c->base_files, c->base_windows);
    leakgate_buf__puts(b, "  \"head\": {\"name\": ");
    json_str(b, c->head_name);
    leakgate_buf__printf(b, ", \"files\": %zu, \"windows\": %zu},\n",
                         c->head_files, c->head_windows);
    leakgate_buf__puts(b, "  \"criteria\": {\"peak_growth_pct\": ");
    if (l->peak_on)
        leakgate_buf__printf(b, "%u", l->peak_pct);
    else
        leakgate_buf__puts(b, "null");
    leakgate_buf__printf(b, ", \"peak_floor\": %" PRIu64 ", ", l->peak_floor);
    leakgate_buf__puts(b, "\"alloc_growth_pct\": ");
    if (l->alloc_on)
        leakgate_buf__printf(b, "%u", l->alloc_pct);
    else
        leakgate_buf__puts(b, "null");
    leakgate_buf__printf(
        b, ", \"alloc_floor\": %" PRIu64 ", \"new_stacks\": %s},\n",
        l->alloc_floor, l->new_stacks ? "true" : "false");
}

char *
leakgate_compare__json(const struct leakgate_compare *c)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    json_header(&b, c);
    leakgate_buf__printf(&b,
                         "  \"summary\": {\"regressions\": %zu, \"changed\": "
                         "%zu, \"new\": %zu, \"removed\": %zu, \"unchanged\": "
                         "%zu},\n  \"warnings\": [",
                         c->nregressions, c->nchanged, c->nnew, c->nremoved,
                         c->nunchanged);
    if (c->warning)
        json_str(&b, c->warning);
    leakgate_buf__puts(&b, "],\n  \"tests\": [");
    for (size_t i = 0; i < c->n; i++) {
        leakgate_buf__puts(&b, i ? ",\n" : "\n");
        json_row(&b, &c->rows[i]);
    }
    leakgate_buf__puts(&b, c->n ? "\n  ]\n}\n" : "]\n}\n");
    return leakgate_buf__take(&b);
}
