/* SPDX-License-Identifier: MIT */
/*
 * html: the run's index.html (see html.h).  Sections in page order: the
 * summary banner, the environment, the table of every window, the table
 * of peaks (biggest first, only when some window's peak was measured),
 * then one section per failing window.  Counting follows report.c:
 * "counted" stacks grew and are not ignored; "offending" ones are over
 * their limit, or every counted one when the total is over.
 */
#include "html.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "leakgate/version.h"
#include "util.h"

#define ESC_TEXT LEAKGATE_REPORT_ESC_XML_TEXT
#define ESC_ATTR LEAKGATE_REPORT_ESC_XML_ATTR

static const char style[] =
    "<style>\n"
    ":root{--fail:#b3261e;--pass:#1b7f3b;--skip:#8a6d00;--ink:#1d1d1f;"
    "--mute:#5f6368;--line:#d9d9de;--soft:#f6f6f8}\n"
    "body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Helvetica,Arial,"
    "sans-serif;color:var(--ink);margin:0 auto;max-width:1200px;"
    "padding:1.5em 2em 4em}\n"
    "h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;margin:1.8em 0 .6em;"
    "border-bottom:1px solid var(--line);padding-bottom:.2em}"
    "h3{font-size:1.02em;margin:1.3em 0 .4em}\n"
    "code,pre,.mono{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,"
    "Consolas,monospace;font-size:.92em}\n"
    "pre{background:var(--soft);border:1px solid var(--line);padding:.7em 1em;"
    "overflow-x:auto;border-radius:6px}\n"
    ".banner{padding:.8em 1.1em;border-radius:8px;font-weight:600;"
    "font-size:1.1em;color:#fff}\n"
    ".banner.fail{background:var(--fail)}.banner.pass{background:var(--pass)}"
    ".banner.unjudged{background:var(--skip)}"
    "\n"
    "table{border-collapse:collapse;width:100%;margin:.3em 0}\n"
    "th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid "
    "var(--line);vertical-align:top}\n"
    "th{background:var(--soft);font-weight:600}\n"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}"
    "td.num{white-space:nowrap}\n"
    "table.env th{width:11em}\n"
    "tr.fail td{background:#fdf0ef}\n"
    "td.over{color:var(--fail);font-weight:700}\n"
    ".badge{display:inline-block;padding:.05em .55em;border-radius:1em;"
    "font-size:.85em;font-weight:700;color:#fff}\n"
    ".badge.fail{background:var(--fail)}.badge.pass{background:var(--pass)}"
    ".badge.not_judged{background:var(--skip)}\n"
    "section.failure{border:1px solid var(--line);border-left:6px solid "
    "var(--fail);border-radius:8px;padding:.2em 1.2em 1em;margin:1.5em 0}\n"
    "table.frames td{border:none;padding:.1em .6em}\n"
    "table.frames td.fn{font-weight:600}\n"
    ".muted{color:var(--mute)}\n"
    "figure{margin:.5em 0;overflow-x:auto;border:1px solid var(--line);"
    "border-radius:6px;padding:.5em;background:#fff}\n"
    "figure svg{max-width:100%;height:auto}\n"
    "ul.files{columns:2;margin:.2em 0}\n"
    "ul.failing{margin:.5em 0 0;columns:2}\n"
    "section.cause{border:1px solid var(--line);border-left:6px solid "
    "var(--fail);border-radius:8px;padding:.2em 1.2em 1em;margin:1.5em 0;"
    "background:#fffafa}\n"
    "details.grouped{margin:.6em 0}\n"
    "</style>\n";

/* ---- small helpers ------------------------------------------------------ */

/* What the whole page shares: the source root its paths are shown
 * relative to ("/src/proj/", the directory that holds every source file
 * of the failing windows' shown frames; empty: paths as they are). */
struct page {
    const char *root;
    size_t root_len;
};

static void
text(struct leakgate_buf *b, const char *s)
{
    leakgate_report__put_escaped(b, s, ESC_TEXT);
}

/* A window's name as leakgate prints names (a control byte, a newline or
 * a byte that is not UTF-8 as an escape, leakgate_util__name_escape), as
 * text. */
static void
name_text(struct leakgate_buf *b, const char *name)
{
    struct leakgate_buf printed = LEAKGATE_BUF_INIT;

    if (!name || leakgate_util__name_plain(name)) {
        text(b, name);
        return;
    }
    leakgate_util__name_escape(&printed, name);
    if (printed.failed)
        b->failed = true;
    else
        text(b, printed.ptr);
    leakgate_buf__dispose(&printed);
}

static const char *
or_unknown(const char *s)
{
    return s && *s ? s : "unknown";
}

static void
bytes(struct leakgate_buf *b, int64_t n)
{
    char num[32];

    leakgate_buf__printf(b, "%s&#160;B", leakgate_util__group_signed(num, n));
}

static bool
counted(const struct leakgate_vstack *s)
{
    return s->bytes > 0 && s->judgement.judged && !s->judgement.ignored;
}

static bool
offending(const struct leakgate_verdict *v, const struct leakgate_vstack *s)
{
    if (v->status == LEAKGATE_STATUS_NOT_JUDGED)
        return s->bytes > 0;
    return counted(s) && (s->judgement.over || v->policy.total_over);
}

static const char *
status_name(const struct leakgate_verdict *v)
{
    static const char *const names[] = {"pass", "fail", "not_judged"};

    return (unsigned int)v->status < 3 ? names[v->status] : "fail";
}

/* The path relative to the report dir when it lies under it. */
static const char *
relative(const char *path, const struct leakgate_report_env *env)
{
    size_t n = env->report_dir ? strlen(env->report_dir) : 0;

    if (n && strncmp(path, env->report_dir, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

/* A link target: unreserved bytes as they are, the rest %-encoded. */
static void
href(struct leakgate_buf *b, const char *path)
{
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (isalnum(*p) || strchr("-._~/", *p))
            leakgate_buf__put(b, (const char *)p, 1);
        else
            leakgate_buf__printf(b, "%%%02X", *p);
    }
}

static void
link_to(struct leakgate_buf *b,
        const char *path,
        const struct leakgate_report_env *env)
{
    if (!path)
        return;
    leakgate_buf__puts(b, "<li><a href=\"");
    href(b, relative(path, env));
    leakgate_buf__puts(b, "\"><code>");
    text(b, relative(path, env));
    leakgate_buf__puts(b, "</code></a></li>\n");
}

/* ---- head, banner, environment ------------------------------------------ */

/* out: passed, failed, not judged, and of those the ones leakgate could
 * not judge (never a pass: leakgate_verdict__unjudged()). */
static void
counts(size_t out[4], const struct leakgate_verdict *const *v, size_t n)
{
    out[0] = out[1] = out[2] = out[3] = 0;
    for (size_t i = 0; i < n; i++) {
        out[(unsigned int)v[i]->status < 3 ? v[i]->status : 1]++;
        out[3] += leakgate_verdict__unjudged(v[i]);
    }
}

/* The failing windows under the banner, each a link to its section
 * (or to the card of the cause it shares); at most 20. */
static void
failing_list(struct leakgate_buf *b,
             const struct leakgate_verdict *const *v,
             size_t n,
             const size_t *cause)
{
    size_t shown = 0, failed = 0;
    int64_t asked;
    bool known;
    char req[LEAKGATE_REPORT_REQUESTED_SIZE];

    for (size_t i = 0; i < n; i++)
        failed += v[i]->status == LEAKGATE_STATUS_FAIL;
    if (failed == 0)
        return;
    leakgate_buf__puts(b, "<ul class=\"failing\">\n");
    for (size_t i = 0; i < n && shown < 20; i++) {
        if (v[i]->status != LEAKGATE_STATUS_FAIL)
            continue;
        shown++;
        if (cause[i] != SIZE_MAX)
            leakgate_buf__printf(b, "<li><a href=\"#cause-%zu\"><code>",
                                 cause[i]);
        else
            leakgate_buf__printf(b, "<li><a href=\"#w-%zu\"><code>", i);
        if (v[i]->origin)
            text(b, v[i]->origin);
        name_text(b, v[i]->name);
        leakgate_buf__puts(b, "</code></a> ");
        bytes(b, (int64_t)v[i]->policy.total_bytes);
        known = leakgate_report__requested_total(v[i], &asked);
        leakgate_buf__puts(b, leakgate_report__requested(req, asked, known));
        leakgate_buf__puts(b, "</li>\n");
    }
    if (failed > shown)
        leakgate_buf__printf(b,
                             "<li>and %zu more (<a href=\"#failures\">"
                             "Failures</a>)</li>\n",
                             failed - shown);
    leakgate_buf__puts(b, "</ul>\n");
}

static void
head(struct leakgate_buf *b,
     const size_t c[4],
     size_t n,
     const struct leakgate_html_run *run)
{
    leakgate_buf__puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                          "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
                          "content=\"width=device-width, initial-scale=1\">\n"
                          "<title>leakgate: ");
    leakgate_buf__printf(b, "%zu of %zu windows failed", c[1], n);
    if (run->title) {
        leakgate_buf__puts(b, " — ");
        text(b, run->title);
    }
    leakgate_buf__puts(b, "</title>\n");
    leakgate_buf__puts(b, style);
    leakgate_buf__puts(b, "</head>\n<body>\n<h1>leakgate report");
    if (run->title) {
        leakgate_buf__puts(b, ": <span class=\"mono\">");
        text(b, run->title);
        leakgate_buf__puts(b, "</span>");
    }
    leakgate_buf__puts(b, "</h1>\n");
    leakgate_buf__printf(b,
                         "<p class=\"banner %s\" id=\"summary\">%zu of %zu "
                         "window%s over the limits · %zu passed · %zu not "
                         "judged",
                         c[1]             ? "fail"
                         : c[3] || n == 0 ? "unjudged"
                                          : "pass",
                         c[1], n, n == 1 ? "" : "s", c[0], c[2]);
    if (c[3] > 0)
        leakgate_buf__printf(b,
                             " · %zu window%s leakgate could not judge: "
                             "not a pass",
                             c[3], c[3] == 1 ? "" : "s");
    leakgate_buf__puts(b, "</p>\n");
}

static void
env_row(struct leakgate_buf *b, const char *key, const char *value, bool code)
{
    leakgate_buf__printf(b, "<tr><th>%s</th><td>%s", key, code ? "<code>" : "");
    text(b, value);
    leakgate_buf__printf(b, "%s</td></tr>\n", code ? "</code>" : "");
}

static void
environment(struct leakgate_buf *b,
            const struct leakgate_report_env *env,
            const struct leakgate_html_run *run)
{
    leakgate_buf__puts(b, "<h2 id=\"environment\">Environment</h2>\n"
                          "<table class=\"env\">\n");
    env_row(b, "date", or_unknown(run->date), false);
    env_row(b, "binary", or_unknown(env->binary), true);
    env_row(b, "build-id",
            env->build_id && *env->build_id ? env->build_id : "none", true);
    env_row(b, "jemalloc", or_unknown(env->jemalloc_version), false);
    env_row(b, "sampling", or_unknown(env->sampling), false);
    env_row(b, "thresholds",
            env->thresholds_path ? env->thresholds_path
                                 : "none (every limit 0, no total cap)",
            env->thresholds_path != NULL);
    env_row(b, "report dir", or_unknown(env->report_dir), true);
    if (run->graphviz)
        env_row(b, "pictures", run->graphviz, false);
    env_row(b, "leakgate", LEAKGATE_VERSION, false);
    leakgate_buf__puts(b, "</table>\n");
}

/* ---- the table of windows ----------------------------------------------- */

static const struct leakgate_vstack *
largest(const struct leakgate_verdict *v)
{
    const struct leakgate_vstack *best = NULL;

    for (size_t i = 0; i < v->nstacks; i++) {
        if (counted(&v->stacks[i]) &&
            (!best || v->stacks[i].bytes > best->bytes))
            best = &v->stacks[i];
    }
    return best;
}

static void
limits_cells(struct leakgate_buf *b, const struct leakgate_verdict *v)
{
    const struct leakgate_vstack *big = largest(v);

    leakgate_buf__puts(b, "<td class=\"num\">");
    if (big) {
        bytes(b, big->bytes);
        leakgate_buf__puts(b, " / ");
        bytes(b, (int64_t)big->judgement.limit);
    } else {
        leakgate_buf__puts(b, "—");
    }
    leakgate_buf__puts(b, "</td><td class=\"num\">");
    if (v->settings.total_unlimited)
        leakgate_buf__puts(b, "no cap");
    else
        bytes(b, (int64_t)v->settings.total_limit);
    leakgate_buf__printf(b, "</td><td class=\"num\">%zu%s</td>",
                         v->policy.nover,
                         v->policy.total_over ? " + total" : "");
}

static void
notes_cell(struct leakgate_buf *b, const struct leakgate_verdict *v)
{
    leakgate_buf__puts(b, "<td>");
    if (v->not_judged_why) {
        leakgate_buf__puts(b, "<span class=\"muted\">");
        text(b, v->not_judged_why);
        leakgate_buf__puts(b, "</span>");
    }
    for (size_t i = 0; i < v->nnotes; i++) {
        leakgate_buf__puts(b, i || v->not_judged_why ? "<br>" : "");
        leakgate_buf__puts(b, "<code>");
        text(b, v->notes[i].file);
        leakgate_buf__printf(b, ":%u</code> ", v->notes[i].line);
        text(b, v->notes[i].message);
    }
    leakgate_buf__puts(b, "</td>");
}

/* "2,097,152 B / 1,048,576 B" (peak / its limit), "4,096 B" (no limit)
 * or "—" (not measured); then the allocations. */
static void
peak_cells(struct leakgate_buf *b, const struct leakgate_verdict *v)
{
    char num[32];

    leakgate_buf__printf(b, "<td class=\"num%s\">",
                         v->peak_over ? " over" : "");
    if (!v->peak_known) {
        leakgate_buf__puts(b, "—</td><td class=\"num\">—</td>");
        return;
    }
    bytes(b, (int64_t)v->peak_bytes);
    if (v->settings.peak_limited) {
        leakgate_buf__puts(b, " / ");
        bytes(b, (int64_t)v->settings.peak_limit);
    }
    leakgate_buf__printf(
        b, "</td><td class=\"num\">%s</td>",
        leakgate_util__group_signed(num, (int64_t)v->allocations));
}

static void
window_row(struct leakgate_buf *b,
           const struct leakgate_verdict *v,
           size_t i,
           bool peaks)
{
    char num[32];
    const char *st = status_name(v);

    leakgate_buf__printf(b, "<tr class=\"%s\" id=\"row-%zu\"><td>", st, i);
    if (v->status == LEAKGATE_STATUS_FAIL)
        leakgate_buf__printf(b, "<a href=\"#w-%zu\">", i);
    leakgate_buf__puts(b, "<code>");
    if (v->origin)
        text(b, v->origin);
    name_text(b, v->name);
    leakgate_buf__puts(b, "</code>");
    if (v->status == LEAKGATE_STATUS_FAIL)
        leakgate_buf__puts(b, "</a>");
    leakgate_buf__printf(b,
                         "</td><td><span class=\"badge %s\">%s</span></td>"
                         "<td class=\"num\">",
                         st,
                         v->status == LEAKGATE_STATUS_PASS   ? "PASS"
                         : v->status == LEAKGATE_STATUS_FAIL ? "FAIL"
                                                             : "NOT JUDGED");
    if (v->measured && v->policy.total_objs) {
        bytes(b, (int64_t)v->policy.total_bytes);
        leakgate_buf__printf(
            b, " in %s",
            leakgate_util__group_signed(num, (int64_t)v->policy.total_objs));
    } else if (v->measured) {
        bytes(b, 0);
    } else {
        leakgate_buf__puts(b, "not measured");
    }
    leakgate_buf__puts(b, "</td>");
    limits_cells(b, v);
    if (peaks)
        peak_cells(b, v);
    leakgate_buf__printf(b, "<td class=\"num\">%.1f&#160;ms</td>",
                         v->seconds * 1000.0);
    notes_cell(b, v);
    leakgate_buf__puts(b, "</tr>\n");
}

/* The peak columns are shown when some window's peak was measured (not
 * for results of a leakgate without the peak meter: version 1). */
static void
windows(struct leakgate_buf *b,
        const struct leakgate_verdict *const *v,
        size_t n,
        bool peaks)
{
    leakgate_buf__puts(
        b, "<h2 id=\"windows\">Windows</h2>\n<table class=\"windows\">\n"
           "<thead><tr><th>window</th><th>verdict</th>"
           "<th class=\"num\">retained (objects)</th>"
           "<th class=\"num\">largest stack / its limit</th>"
           "<th class=\"num\">total limit</th><th class=\"num\">over</th>");
    if (peaks)
        leakgate_buf__puts(b, "<th class=\"num\">peak / its limit</th>"
                              "<th class=\"num\">allocations</th>");
    leakgate_buf__puts(b, "<th class=\"num\">time</th><th>notes</th></tr>"
                          "</thead>\n<tbody>\n");
    for (size_t i = 0; i < n; i++)
        window_row(b, v[i], i, peaks);
    leakgate_buf__puts(b, "</tbody>\n</table>\n");
}

/* ---- the table of peaks, biggest first ---------------------------------- */

static bool
any_peak(const struct leakgate_verdict *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i]->peak_known)
            return true;
    }
    return false;
}

/* Window i of the run (its row's id). */
static void
peak_row(struct leakgate_buf *b, const struct leakgate_verdict *v, size_t i)
{
    char num[32];

    leakgate_buf__printf(b, "<tr class=\"%s\"><td><a href=\"#%s-%zu\"><code>",
                         v->peak_over ? "fail" : "pass",
                         v->status == LEAKGATE_STATUS_FAIL ? "w" : "row", i);
    if (v->origin)
        text(b, v->origin);
    name_text(b, v->name);
    leakgate_buf__printf(b, "</code></a></td><td class=\"num%s\">",
                         v->peak_over ? " over" : "");
    bytes(b, (int64_t)v->peak_bytes);
    leakgate_buf__puts(b, "</td><td class=\"num\">");
    if (v->settings.peak_limited)
        bytes(b, (int64_t)v->settings.peak_limit);
    else
        leakgate_buf__puts(b, "none");
    leakgate_buf__printf(
        b, "</td><td class=\"num\">%s</td><td>%s</td></tr>\n",
        leakgate_util__group_signed(num, (int64_t)v->allocations),
        v->peak_over               ? "<b>over its limit</b>"
        : v->settings.peak_limited ? "within its limit"
                                   : "<span class=\"muted\">measured, "
                                     "no limit</span>");
}

/* Every window whose peak was measured, biggest peak first: which tests
 * carry the memory.  Nothing when none was measured. */
static void
peaks_table(struct leakgate_buf *b,
            const struct leakgate_verdict *const *v,
            size_t n)
{
    size_t m, *order = leakgate_verdict__peak_order(v, n, &m);

    if (!order) {
        b->failed = true;
        return;
    }
    leakgate_buf__printf(
        b,
        "<h2 id=\"peaks\">Peak memory</h2>\n<p class=\"muted\">The highest "
        "live heap bytes above each window's start (all threads), biggest "
        "first: %zu measured window%s.</p>\n<table class=\"peaks\">\n"
        "<thead><tr><th>window</th><th class=\"num\">peak</th>"
        "<th class=\"num\">peak limit</th><th class=\"num\">allocations</th>"
        "<th>verdict</th></tr></thead>\n<tbody>\n",
        m, m == 1 ? "" : "s");
    for (size_t k = 0; k < m; k++)
        peak_row(b, v[order[k]], order[k]);
    leakgate_buf__puts(b, "</tbody>\n</table>\n");
    leakgate_util__free(order);
}

/* ---- one failing window ------------------------------------------------- */

static void
frame_row(struct leakgate_buf *b,
          const struct leakgate_frame *f,
          const struct page *pg)
{
    leakgate_buf__puts(b, "<tr><td class=\"fn mono\">");
    text(b, f->function ? f->function : "??");
    if (f->inlined)
        leakgate_buf__puts(b, " <span class=\"muted\">(inlined)</span>");
    leakgate_buf__puts(b, "</td><td class=\"mono\">");
    if (f->file && pg->root_len > 0 &&
        strncmp(f->file, pg->root, pg->root_len) == 0) {
        /* Under the source root: relative, the whole path on hover. */
        leakgate_buf__puts(b, "<span title=\"");
        leakgate_report__put_escaped(b, f->file, ESC_ATTR);
        leakgate_buf__puts(b, "\">");
        text(b, f->file + pg->root_len);
        leakgate_buf__printf(b, ":%u</span>", f->line);
    } else if (f->file) {
        text(b, f->file);
        leakgate_buf__printf(b, ":%u", f->line);
    } else if (f->module) {
        text(b, f->module);
        leakgate_buf__printf(b, "+0x%" PRIxPTR, f->module_offset);
    } else {
        leakgate_buf__printf(b, "0x%" PRIxPTR, f->pc);
    }
    leakgate_buf__puts(b, "</td></tr>\n");
}

/* "stack 2 of 3: 112 B in 1 object, limit 0 B" and its frames; a peak
 * stack (peak true) has no limit of its own. */
static void
stack_block(struct leakgate_buf *b,
            const struct leakgate_vstack *s,
            size_t nth,
            size_t of,
            bool peak,
            const struct page *pg)
{
    char num[32], req[LEAKGATE_REPORT_REQUESTED_SIZE];
    char reach[LEAKGATE_REPORT_REACH_SIZE];
    size_t begin = s->shown_begin, end = s->shown_end;

    if (begin >= end || end > s->nframes) {
        begin = 0;
        end = s->nframes;
    }
    leakgate_buf__printf(b, "<p class=\"stack\"><b>%sstack %zu of %zu</b>: ",
                         peak ? "peak " : "", nth, of);
    bytes(b, s->bytes);
    leakgate_buf__puts(
        b, leakgate_report__requested(req, s->requested, s->requested_known));
    leakgate_buf__printf(b, " in %s object%s",
                         leakgate_util__group_signed(num, s->objs),
                         s->objs == 1 ? "" : "s");
    if (!peak) {
        leakgate_buf__puts(b, ", limit ");
        bytes(b, (int64_t)s->judgement.limit);
    }
    if (*leakgate_report__reach(reach, s)) {
        leakgate_buf__puts(b, "; ");
        leakgate_report__put_escaped(b, reach, ESC_TEXT);
    }
    leakgate_buf__puts(b, "</p>\n<table class=\"frames\">\n");
    for (size_t k = begin; k < end; k++)
        frame_row(b, &s->frames[k], pg);
    for (size_t k = 0; !s->frames && k < s->npcs; k++)
        leakgate_buf__printf(
            b, "<tr><td class=\"mono\">0x%" PRIxPTR "</td></tr>\n", s->pcs[k]);
    leakgate_buf__puts(b, "</table>\n");
}

/* Plain Graphviz output: from "<svg" on, with no script anywhere. */
static const char *
inlinable_svg(const char *svg)
{
    const char *start = svg ? strstr(svg, "<svg") : NULL;

    if (!start)
        return NULL;
    for (const char *p = svg; *p; p++) {
        if (*p == '<' && strncasecmp(p + 1, "script", 6) == 0)
            return NULL;
        if (strncasecmp(p, "javascript:", 11) == 0 ||
            strncasecmp(p, "foreignObject", 13) == 0)
            return NULL;
    }
    return start;
}

/* The SVG with its ids prefixed by "wI-": every picture of the page
 * numbers its nodes the same way, and ids must be unique in a page. */
static void
put_svg(struct leakgate_buf *b, const char *svg, size_t i)
{
    for (const char *id = strstr(svg, " id=\""); id;
         id = strstr(svg, " id=\"")) {
        leakgate_buf__put(b, svg, (size_t)(id - svg) + 5);
        leakgate_buf__printf(b, "w%zu-", i);
        svg = id + 5;
    }
    leakgate_buf__puts(b, svg);
}

static void
picture(struct leakgate_buf *b,
        const struct leakgate_verdict *v,
        size_t i,
        const char *svg,
        const struct leakgate_report_env *env)
{
    const char *inline_svg = inlinable_svg(svg);

    leakgate_buf__puts(b, "<h3>Call graph of the growth</h3>\n");
    if (inline_svg) {
        leakgate_buf__puts(b, "<figure>\n");
        put_svg(b, inline_svg, i);
        leakgate_buf__puts(b, "</figure>\n");
        return;
    }
    leakgate_buf__puts(b, "<p class=\"muted\">");
    if (v->picture_note)
        text(b, v->picture_note);
    else if (v->svg_path)
        leakgate_buf__puts(b, "The SVG could not be shown inline; open it "
                              "from the artifacts.");
    else
        leakgate_buf__puts(b, "No picture was drawn.");
    if (v->dot_path) {
        leakgate_buf__puts(b, " DOT text: <code>");
        text(b, relative(v->dot_path, env));
        leakgate_buf__puts(b, "</code>");
    }
    leakgate_buf__puts(b, "</p>\n");
}

static void
yaml_block(struct leakgate_buf *b,
           const struct leakgate_verdict *v,
           const struct leakgate_report_env *env)
{
    char *yaml = leakgate_report__yaml(v);
    struct leakgate_buf lost = LEAKGATE_BUF_INIT;

    if (!yaml) {
        b->failed = true;
        return;
    }
    if (leakgate_report__lost_advice(&lost, v, env, "") && lost.ptr) {
        leakgate_buf__puts(b, "<h3>Lost</h3>\n<p class=\"lost\">");
        text(b, lost.ptr);
        leakgate_buf__puts(b, "</p>\n");
    }
    b->failed |= lost.failed;
    leakgate_buf__dispose(&lost);
    if (*yaml) {
        leakgate_buf__puts(b, "<h3>To accept this growth</h3>\n<p>");
        if (env->thresholds_path) {
            leakgate_buf__puts(b, "add to <code>");
            text(b, env->thresholds_path);
            leakgate_buf__puts(b, "</code>:</p>\n<pre class=\"yaml\">");
        } else {
            leakgate_buf__puts(b, "create <code>leakgate.yaml</code> with:"
                                  "</p>\n<pre class=\"yaml\">version: 1\n");
        }
        text(b, yaml);
        leakgate_buf__puts(b, "</pre>\n");
    }
    leakgate_util__free(yaml);
}

static void
commands(struct leakgate_buf *b,
         const struct leakgate_verdict *v,
         const struct leakgate_report_env *env)
{
    /* The heap pair's own binary: windows of several binaries share a
     * page. */
    const char *binary =
        v->artifacts_binary ? v->artifacts_binary : env->binary;

    if (!v->heap_before || !v->heap_after)
        return;
    leakgate_buf__puts(b, "<p>Inspect:</p>\n<pre>");
    if (binary && *binary) {
        leakgate_buf__puts(b, "jeprof --text --base=");
        text(b, v->heap_before);
        leakgate_buf__puts(b, " ");
        text(b, binary);
        leakgate_buf__puts(b, " ");
        text(b, v->heap_after);
        leakgate_buf__puts(b, "\n");
    }
    leakgate_buf__puts(b, "leakgate diff ");
    text(b, v->heap_before);
    leakgate_buf__puts(b, " ");
    text(b, v->heap_after);
    leakgate_buf__puts(b, "</pre>\n");
}

static void
artifacts(struct leakgate_buf *b,
          const struct leakgate_verdict *v,
          const struct leakgate_report_env *env)
{
    if (v->artifacts_note) {
        leakgate_buf__puts(b, "<h3>Artifacts</h3>\n<p class=\"muted\">None "
                              "written: ");
        text(b, v->artifacts_note);
        leakgate_buf__puts(b, "</p>\n");
        return;
    }
    if (!v->heap_before && !v->json_path)
        return;
    leakgate_buf__puts(b, "<h3>Artifacts</h3>\n<ul class=\"files\">\n");
    link_to(b, v->heap_before, env);
    link_to(b, v->heap_after, env);
    link_to(b, v->svg_path, env);
    link_to(b, v->pdf_path, env);
    link_to(b, v->dot_path, env);
    link_to(b, v->json_path, env);
    link_to(b, v->text_path, env);
    leakgate_buf__puts(b, "</ul>\n");
    commands(b, v, env);
}

/* A window over its peak_limit: the peak against its limit, and the
 * stacks that held the most bytes at the peak (as the text report). */
static void
peak_section(struct leakgate_buf *b,
             const struct leakgate_verdict *v,
             const struct leakgate_report_env *env,
             const struct page *pg)
{
    char num[32], from[512];

    if (!v->peak_over)
        return;
    leakgate_buf__puts(b, "<h3>Peak</h3>\n<p class=\"peak\">The heap grew ");
    bytes(b, (int64_t)v->peak_bytes);
    leakgate_buf__puts(b, " above its level at the window's start, over its "
                          "limit of ");
    bytes(b, (int64_t)v->settings.peak_limit);
    leakgate_buf__puts(b, " (");
    text(b, leakgate_verdict__peak_source(v, env->thresholds_path, from,
                                          sizeof from));
    leakgate_buf__printf(
        b, "), in %s allocation%s.",
        leakgate_util__group_signed(num, (int64_t)v->allocations),
        v->allocations == 1 ? "" : "s");
    if (v->npeak_stacks == 0) {
        leakgate_buf__puts(b, " No stacks: the exact measurement did not "
                              "reach the limit again.</p>\n");
        return;
    }
    leakgate_buf__puts(b, " At ");
    bytes(b, (int64_t)v->peak_level);
    leakgate_buf__puts(b, " these stacks held the most:</p>\n");
    for (size_t k = 0; k < v->npeak_stacks; k++)
        stack_block(b, &v->peak_stacks[k], k + 1, v->npeak_stacks, true, pg);
}

static void
failure(struct leakgate_buf *b,
        const struct leakgate_verdict *v,
        size_t i,
        const char *svg,
        const struct leakgate_report_env *env,
        const struct page *pg)
{
    size_t of = 0, nth = 0;

    leakgate_buf__printf(b,
                         "<section class=\"failure\" id=\"w-%zu\">\n"
                         "<h2>FAIL <code>",
                         i);
    if (v->origin)
        text(b, v->origin);
    name_text(b, v->name);
    leakgate_buf__puts(b, "</code></h2>\n<p>");
    bytes(b, (int64_t)v->policy.total_bytes);
    leakgate_buf__printf(
        b,
        " retained in %" PRIu64 " object%s; %zu stack%s "
        "over %s limit%s%s.</p>\n",
        v->policy.total_objs, v->policy.total_objs == 1 ? "" : "s",
        v->policy.nover, v->policy.nover == 1 ? "" : "s",
        v->policy.nover == 1 ? "its" : "their", v->policy.nover == 1 ? "" : "s",
        v->policy.total_over ? "; the total is over its cap" : "");
    for (size_t k = 0; k < v->nstacks; k++)
        of += offending(v, &v->stacks[k]);
    leakgate_buf__puts(b, of ? "<h3>Stacks</h3>\n" : "");
    for (size_t k = 0; k < v->nstacks; k++) {
        if (offending(v, &v->stacks[k]))
            stack_block(b, &v->stacks[k], ++nth, of, false, pg);
    }
    peak_section(b, v, env, pg);
    /* The call graph is of what was retained: none for a failure on the
     * peak alone. */
    if (of > 0 || !v->peak_over)
        picture(b, v, i, svg, env);
    yaml_block(b, v, env);
    artifacts(b, v, env);
    leakgate_buf__puts(b, "<details><summary>The report as printed</summary>"
                          "\n<pre>");
    text(b, v->report ? v->report : "");
    leakgate_buf__puts(b, "</pre></details>\n</section>\n");
}

/* ---- causes: failing windows that share their largest stack --------- */

/* The largest offending stack of a failing window, or NULL. */
static const struct leakgate_vstack *
cause_stack(const struct leakgate_verdict *v)
{
    const struct leakgate_vstack *best = NULL;

    for (size_t k = 0; k < v->nstacks; k++) {
        if (offending(v, &v->stacks[k]) &&
            (!best || v->stacks[k].bytes > best->bytes))
            best = &v->stacks[k];
    }
    if (!best || !best->frames || best->shown_end <= best->shown_begin ||
        best->shown_end > best->nframes)
        return NULL;
    return best;
}

/* Whether two stacks show the same functions at the same lines. */
static bool
same_cause(const struct leakgate_vstack *x, const struct leakgate_vstack *y)
{
    if (x->shown_end - x->shown_begin != y->shown_end - y->shown_begin)
        return false;
    for (size_t k = 0; k < x->shown_end - x->shown_begin; k++) {
        const struct leakgate_frame *a = &x->frames[x->shown_begin + k];
        const struct leakgate_frame *c = &y->frames[y->shown_begin + k];

        if (!a->function || !c->function ||
            strcmp(a->function, c->function) != 0 || a->line != c->line)
            return false;
    }
    return true;
}

/* cause[i]: the number of the cause window i shares with another failing
 * window (its first window's index), or SIZE_MAX.  Each window's largest
 * stack is found once.  NULL on ENOMEM. */
static size_t *
causes(const struct leakgate_verdict *const *v, size_t n)
{
    size_t *cause = leakgate_util__calloc(n ? n : 1, sizeof *cause);
    const struct leakgate_vstack **top =
        leakgate_util__calloc(n ? n : 1, sizeof *top);

    if (!cause || !top) {
        leakgate_util__free(cause);
        leakgate_util__free(top);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        cause[i] = SIZE_MAX;
        top[i] =
            v[i]->status == LEAKGATE_STATUS_FAIL ? cause_stack(v[i]) : NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!top[i] || cause[i] != SIZE_MAX)
            continue;
        for (size_t j = i + 1; j < n; j++) {
            if (top[j] && cause[j] == SIZE_MAX && same_cause(top[i], top[j]))
                cause[i] = cause[j] = i;
        }
    }
    leakgate_util__free(top);
    return cause;
}

/* One card for a stack that several failing windows retained: the
 * stack once, and the windows it hit, each linked to its section. */
static void
cause_card(struct leakgate_buf *b,
           const struct leakgate_verdict *const *v,
           size_t n,
           const size_t *cause,
           size_t first,
           const struct page *pg)
{
    const struct leakgate_vstack *s = cause_stack(v[first]);
    const struct leakgate_frame *top = &s->frames[s->shown_begin];
    const struct leakgate_vstack *hit_stack;
    size_t hit = 0;
    char req[LEAKGATE_REPORT_REQUESTED_SIZE];

    for (size_t i = 0; i < n; i++)
        hit += cause[i] == first;
    leakgate_buf__printf(b,
                         "<section class=\"cause\" id=\"cause-%zu\">\n"
                         "<h2>One cause, %zu windows: <code>",
                         first, hit);
    text(b, top->function);
    leakgate_buf__puts(b, "</code></h2>\n<p>The same stack is over its limit "
                          "in each of these windows:</p>\n<ul>\n");
    for (size_t i = 0; i < n; i++) {
        if (cause[i] != first)
            continue;
        leakgate_buf__printf(b, "<li><a href=\"#w-%zu\"><code>", i);
        if (v[i]->origin)
            text(b, v[i]->origin);
        name_text(b, v[i]->name);
        leakgate_buf__puts(b, "</code></a> ");
        hit_stack = cause_stack(v[i]);
        bytes(b, hit_stack->bytes);
        leakgate_buf__puts(
            b, leakgate_report__requested(req, hit_stack->requested,
                                          hit_stack->requested_known));
        leakgate_buf__puts(b, "</li>\n");
    }
    leakgate_buf__puts(b, "</ul>\n");
    stack_block(b, s, 1, 1, false, pg);
    leakgate_buf__puts(b, "<p class=\"muted\">Each window's own report, "
                          "picture and thresholds entry are below.</p>\n"
                          "</section>\n");
}

/* The directory that holds every absolute source path of the failing
 * windows' shown frames, with its '/'; none when they share only "/". */
static void
source_root(struct page *pg, const struct leakgate_verdict *const *v, size_t n)
{
    pg->root = NULL;
    pg->root_len = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i]->status != LEAKGATE_STATUS_FAIL)
            continue;
        for (size_t k = 0; k < v[i]->nstacks; k++) {
            const struct leakgate_vstack *s = &v[i]->stacks[k];

            for (size_t f = s->shown_begin;
                 s->frames && f < s->shown_end && f < s->nframes; f++) {
                const char *file = s->frames[f].file;
                size_t len = 0;

                if (!file || file[0] != '/')
                    continue;
                if (!pg->root) {
                    pg->root = file;
                    pg->root_len = (size_t)(strrchr(file, '/') - file) + 1;
                    continue;
                }
                while (len < pg->root_len && file[len] == pg->root[len])
                    len++;
                while (len > 0 && pg->root[len - 1] != '/')
                    len--;
                pg->root_len = len;
            }
        }
    }
    if (pg->root_len <= 1)
        pg->root_len = 0;
}

char *
leakgate_html__index(const struct leakgate_verdict *const *v,
                     const char *const *svgs,
                     size_t n,
                     const struct leakgate_report_env *env,
                     const struct leakgate_html_run *run)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    size_t c[4], *cause = causes(v, n);
    bool peaks = any_peak(v, n);
    struct page pg;

    if (!cause)
        return NULL;
    counts(c, v, n);
    source_root(&pg, v, n);
    head(&b, c, n, run);
    failing_list(&b, v, n, cause);
    /* The failures first: a cause several windows share once, then each
     * window (those of a shared cause folded). */
    if (c[1]) {
        leakgate_buf__puts(&b, "<h2 id=\"failures\">Failures</h2>\n");
        if (pg.root_len > 0) {
            leakgate_buf__puts(&b, "<p class=\"muted\">Source paths are "
                                   "relative to <code>");
            leakgate_buf__put(&b, pg.root, pg.root_len);
            leakgate_buf__puts(&b, "</code>.</p>\n");
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (cause[i] == i)
            cause_card(&b, v, n, cause, i, &pg);
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i]->status != LEAKGATE_STATUS_FAIL)
            continue;
        if (cause[i] != SIZE_MAX) {
            leakgate_buf__puts(&b, "<details class=\"grouped\"><summary>"
                                   "<code>");
            if (v[i]->origin)
                text(&b, v[i]->origin);
            name_text(&b, v[i]->name);
            leakgate_buf__printf(&b,
                                 "</code>: its report (<a href=\"#cause-%zu\">"
                                 "one cause</a> with others)</summary>\n",
                                 cause[i]);
        }
        failure(&b, v[i], i, svgs ? svgs[i] : NULL, env, &pg);
        if (cause[i] != SIZE_MAX)
            leakgate_buf__puts(&b, "</details>\n");
    }
    windows(&b, v, n, peaks);
    if (peaks)
        peaks_table(&b, v, n);
    environment(&b, env, run);
    leakgate_buf__puts(&b, "<p class=\"muted\">Written by leakgate ");
    leakgate_buf__puts(&b, LEAKGATE_VERSION);
    leakgate_buf__puts(&b, ". Sizes are jemalloc's usable sizes: "
                           "<code>malloc(100)</code> retains 112&#160;B.</p>"
                           "\n</body>\n</html>\n");
    leakgate_util__free(cause);
    return leakgate_buf__take(&b);
}
