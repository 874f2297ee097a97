/* SPDX-License-Identifier: MIT */
/*
 * report_junit: one window as a JUnit XML testcase
 * (leakgate_report__junit_case(): properties, the report and the harness
 * notes in a <failure>, an <error> for a window whose process ended, a
 * <skipped> for one left out of judging), the run's <properties>, and
 * the JUnit document around such pieces (leakgate_report__junit_doc():
 * one <testsuite> per suite, with counts).  docs/results-format.md.
 * Above report_text.c (a testcase carries the report) and report.c.
 */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "leakgate/version.h"
#include "report_parts.h"
#include "util.h"

static bool
case_failed(const struct leakgate_verdict *v)
{
    return v->status == LEAKGATE_STATUS_FAIL || v->nnotes > 0;
}

static void
xml_attr(struct leakgate_buf *b, const char *name, const char *value)
{
    leakgate_buf__puts(b, " ");
    leakgate_buf__puts(b, name);
    leakgate_buf__puts(b, "=\"");
    leakgate_report__put_escaped(b, value, LEAKGATE_REPORT_ESC_XML_ATTR);
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
             leakgate_report__or_unknown(env->jemalloc_version));
    xml_prop(b, indent + 2, "leakgate.sampling",
             leakgate_report__or_unknown(env->sampling));
    xml_prop(b, indent + 2, "leakgate.binary",
             leakgate_report__or_unknown(env->binary));
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
    leakgate_report__shown_range(s, &begin, &end);
    for (size_t k = end; s->frames && k-- > begin;) {
        leakgate_report__put_escaped(
            b, s->frames[k].function ? s->frames[k].function : "??",
            LEAKGATE_REPORT_ESC_XML_ATTR);
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
    struct leakgate_report_tally n;
    size_t nth = 0;
    char name[64];

    leakgate_report__tally(&n, v);
    leakgate_buf__puts(b, "      <properties>\n");
    if (v->how == LEAKGATE_MEASURED_SUITE_END) {
        xml_prop(b, 8, "leakgate.measured_by",
                 "suite end: judged after its suite's cleanup on what it "
                 "left that is still live (scope: suite)");
        xml_prop_int(b, 8, "leakgate.held_by_fixture_bytes",
                     (int64_t)v->held_bytes);
    }
    xml_prop_int(b, 8, "leakgate.retained_bytes", n.bytes);
    if (n.requested_known)
        xml_prop_int(b, 8, "leakgate.requested_bytes", n.requested);
    xml_prop_int(b, 8, "leakgate.retained_objects", n.objs);
    xml_prop_int(b, 8, "leakgate.stacks", (int64_t)n.ncounted);
    xml_prop_int(b, 8, "leakgate.excluded_bytes", v->excluded_bytes);
    junit_peak_props(b, v);
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        if (!leakgate_report__counted(s))
            continue;
        nth++;
        snprintf(name, sizeof name, "leakgate.stack.%zu.bytes", nth);
        xml_prop_int(b, 8, name, s->bytes);
        if (s->requested_known) {
            snprintf(name, sizeof name, "leakgate.stack.%zu.requested_bytes",
                     nth);
            xml_prop_int(b, 8, name, s->requested);
        }
        snprintf(name, sizeof name, "leakgate.stack.%zu.objects", nth);
        xml_prop_int(b, 8, name, s->objs);
        if (leakgate_report__reach_kind(s)) {
            snprintf(name, sizeof name, "leakgate.stack.%zu.reachability", nth);
            xml_prop(b, 8, name, leakgate_report__reach_kind(s));
            snprintf(name, sizeof name, "leakgate.stack.%zu.lost_bytes", nth);
            xml_prop_int(b, 8, name,
                         s->reach.lost_bytes + s->reach.indirect_bytes);
        }
        junit_frames_prop(b, nth, s);
    }
    leakgate_buf__puts(b, "      </properties>\n");
}

static void
put_note(struct leakgate_buf *b,
         const struct leakgate_note *note,
         enum leakgate_report_escape mode)
{
    if (note->file && *note->file) {
        leakgate_report__put_escaped(b, note->file, mode);
        leakgate_buf__printf(b, ":%u: ", note->line);
    }
    leakgate_report__put_escaped(b, note->message, mode);
}

/* One line: the first assertion, then the report's header line. */
static void
junit_message(struct leakgate_buf *b,
              const struct leakgate_verdict *v,
              const char *report)
{
    const char *line = report;

    if (v->nnotes > 0) {
        put_note(b, &v->notes[0], LEAKGATE_REPORT_ESC_XML_ATTR);
        if (v->nnotes > 1)
            leakgate_buf__printf(
                b, " (and %zu more assertion %s)", v->nnotes - 1,
                leakgate_report__plural(v->nnotes - 1, "failure", "failures"));
    }
    /* A failure told by its note alone (a thread left unjoined) has no
     * report of its own. */
    if (!leakgate_report__gate_failed(v) || !*line)
        return;
    if (strncmp(line, "leakgate: ", 10) == 0)
        line += 10;
    leakgate_buf__puts(b, v->nnotes > 0 ? "; " : "");
    leakgate_report__put_escaped_n(b, line, strcspn(line, "\n"),
                                   LEAKGATE_REPORT_ESC_XML_ATTR);
}

/* "peak" when the gate failed the window on its peak alone, "leak" when
 * it failed on what the window retained (with or without the peak),
 * "thread" on a thread it left neither joined nor detached alone, else
 * "assertion". */
static const char *
failure_type(const struct leakgate_verdict *v)
{
    if (!leakgate_report__gate_failed(v))
        return v->unjoined ? "thread" : "assertion";
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
        put_note(b, &v->notes[i], LEAKGATE_REPORT_ESC_XML_TEXT);
        leakgate_buf__puts(b, "\n");
    }
    if (leakgate_report__gate_failed(v)) {
        leakgate_buf__puts(b, v->nnotes > 0 ? "\n" : "");
        leakgate_report__put_escaped(b, report, LEAKGATE_REPORT_ESC_XML_TEXT);
    }
    leakgate_buf__puts(b, "</failure>\n");
}

/* A window that never closed: its process ended (killed) while it ran. */
static void
junit_error(struct leakgate_buf *b, const struct leakgate_verdict *v)
{
    leakgate_buf__puts(b, "      <error message=\"");
    leakgate_report__put_escaped(b, v->ended, LEAKGATE_REPORT_ESC_XML_ATTR);
    leakgate_buf__printf(b, "\" type=\"%s\">",
                         strncmp(v->ended, "unfinished", 10) == 0 ? "unfinished"
                                                                  : "killed");
    leakgate_report__put_escaped(b, v->ended, LEAKGATE_REPORT_ESC_XML_TEXT);
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
    leakgate_report__put_escaped_n(
        b, leakgate_report__or_unknown(v->not_judged_why),
        strcspn(leakgate_report__or_unknown(v->not_judged_why), "\n"),
        LEAKGATE_REPORT_ESC_XML_ATTR);
    leakgate_buf__puts(b, "\" type=\"not_judged\">");
    leakgate_report__put_escaped(
        b, *report ? report : leakgate_report__or_unknown(v->not_judged_why),
        LEAKGATE_REPORT_ESC_XML_TEXT);
    leakgate_buf__puts(b, "</error>\n");
}

/* A window measured but left out of judging on purpose. */
static void
junit_skipped(struct leakgate_buf *b, const struct leakgate_verdict *v)
{
    leakgate_buf__puts(b, "      <skipped message=\"");
    leakgate_report__put_escaped(b, v->not_judged_why,
                                 LEAKGATE_REPORT_ESC_XML_ATTR);
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

        leakgate_buf__printf(&cls, "%s%s", v->origin,
                             leakgate_report__suite_of(v));
        if (cls.failed)
            b->failed = true;
        xml_name_attr(b, "classname", cls.ptr ? cls.ptr : "");
        leakgate_buf__dispose(&cls);
    } else {
        xml_name_attr(b, "classname", leakgate_report__suite_of(v));
    }
    xml_name_attr(b, "name", v->test);
    leakgate_buf__printf(b, " time=\"%.6f\">\n",
                         leakgate_report__seconds_of(v));
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
            leakgate_report__put_escaped(b, report,
                                         LEAKGATE_REPORT_ESC_XML_TEXT);
        else
            leakgate_report__put_escaped(b, v->not_judged_why,
                                         LEAKGATE_REPORT_ESC_XML_TEXT);
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
