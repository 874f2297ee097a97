/* SPDX-License-Identifier: MIT */
/*
 * run_results: the --junit and --json files of `leakgate run`, written by
 * the parent from the records the program sent, so that a crash loses
 * nothing that finished.  Each testcase and test object is the piece
 * report.c rendered in the program (run_proto.c); this file only puts the
 * envelope around them, in report.c's layout (one <testsuite> per suite in
 * order of first appearance, counts, the environment properties; the
 * "leakgate-results" top level with its summary), so run mode writes what
 * linked mode writes.  tests/run checks that they stay identical.  The
 * test the program died in becomes a not-judged record with the failure
 * as a note, rendered by report.c here.
 */
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "gate.h"
#include "policy.h"
#include "results.h"
#include "run_proto.h"
#include "util.h"
#include "verdict.h"

/* The settings the program would have resolved for suite/test. */
static void
resolve(struct leakgate_policy_settings *out,
        struct leakgate_config **cfg_out,
        const struct leakgate_run *r,
        const char *suite,
        const char *test)
{
    const char *path = leakgate_config__path(r->opts.thresholds_path);

    *cfg_out = NULL;
    if (path && leakgate_config__load(cfg_out, path, NULL) < 0)
        *cfg_out = NULL; /* the program said so already, or it died first */
    leakgate_policy__resolve(out, *cfg_out, suite,
                             !test || strcmp(test, "[suite]") == 0 ? NULL
                                                                   : test);
}

static int
crash_verdict(struct leakgate_verdict *v, const char *message)
{
    struct leakgate_buf name = LEAKGATE_BUF_INIT;

    leakgate_buf__printf(&name, "%s/%s", v->suite, v->test);
    v->name = leakgate_buf__take(&name);
    v->status = LEAKGATE_STATUS_NOT_JUDGED;
    v->not_judged_why = leakgate_util__strdup(message);
    v->report = leakgate_util__strdup("");
    v->notes = leakgate_util__calloc(1, sizeof *v->notes);
    if (v->notes) {
        v->nnotes = 1;
        v->notes[0].file = leakgate_util__strdup("");
        v->notes[0].message = leakgate_util__strdup(message);
    }
    if (!v->name || !v->not_judged_why || !v->report || !v->notes ||
        !v->notes[0].file || !v->notes[0].message)
        return leakgate_error__set(LEAKGATE_ENOMEM, "crash record");
    return 0;
}

int
leakgate_run__crash_case(struct leakgate_run *r, const char *message)
{
    struct leakgate_verdict *v;
    struct leakgate_run_case *c;
    struct leakgate_report_env env = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    struct leakgate_config *cfg = NULL;
    int rc = 0;

    if (!r->running[0] || !r->running[1])
        return 0; /* no test was running */
    v = leakgate_util__calloc(1, sizeof *v);
    c = leakgate_util__calloc(1, sizeof *c);
    if (!v || !c) {
        leakgate_util__free(v);
        leakgate_util__free(c);
        return leakgate_error__set(LEAKGATE_ENOMEM, "crash record");
    }
    v->suite = leakgate_util__strdup(r->running[0]);
    v->test = leakgate_util__strdup(r->running[1]);
    c->suite = leakgate_util__strdup(r->running[0]);
    c->test = leakgate_util__strdup(r->running[1]);
    if (!v->suite || !v->test || !c->suite || !c->test)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "crash record");
    if (rc == 0)
        rc = crash_verdict(v, message);
    if (rc == 0) {
        resolve(&v->settings, &cfg, r, v->suite, v->test);
        rc = leakgate_run__pieces(&c->pieces, v, &env);
    }
    c->status = LEAKGATE_STATUS_NOT_JUDGED;
    c->failed = true;
    leakgate_verdict__free(v);
    leakgate_config__free(cfg);
    if (rc < 0) {
        leakgate_run__case_dispose(c);
        leakgate_util__free(c);
        return rc;
    }
    r->crash = c;
    return 0;
}

/* ---- documents ---------------------------------------------------------- */

struct cases {
    const struct leakgate_run_case **v;
    size_t n;
};

static void
junit_counts(struct leakgate_buf *b, const struct cases *cs, const char *suite)
{
    size_t tests = 0, failures = 0;
    double seconds = 0;

    for (size_t i = 0; i < cs->n; i++) {
        if (suite && strcmp(cs->v[i]->suite, suite) != 0)
            continue;
        tests++;
        failures += cs->v[i]->failed;
        seconds += cs->v[i]->seconds > 0 ? cs->v[i]->seconds : 0.0;
    }
    leakgate_buf__printf(b,
                         " tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
                         "skipped=\"0\" time=\"%.6f\">\n",
                         tests, failures, seconds);
}

/* The environment's <properties>, two spaces deeper. */
static void
put_indented(struct leakgate_buf *b, const char *text)
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
suite_seen_before(const struct cases *cs, size_t i)
{
    for (size_t k = 0; k < i; k++) {
        if (strcmp(cs->v[k]->suite, cs->v[i]->suite) == 0)
            return true;
    }
    return false;
}

static char *
junit_doc(const struct cases *cs, const char *env)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                           "<testsuites name=\"leakgate\"");
    junit_counts(&b, cs, NULL);
    leakgate_buf__puts(&b, env);
    for (size_t i = 0; i < cs->n; i++) {
        const char *suite = cs->v[i]->suite;

        if (suite_seen_before(cs, i))
            continue;
        leakgate_buf__puts(&b, cs->v[i]->pieces.suite_tag);
        junit_counts(&b, cs, suite);
        put_indented(&b, env);
        for (size_t k = i; k < cs->n; k++) {
            if (strcmp(cs->v[k]->suite, suite) == 0)
                leakgate_buf__puts(&b, cs->v[k]->pieces.junit_case);
        }
        leakgate_buf__puts(&b, "  </testsuite>\n");
    }
    leakgate_buf__puts(&b, "</testsuites>\n");
    return leakgate_buf__take(&b);
}

static char *
json_doc(const struct cases *cs, const char *env)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    size_t count[3] = {0, 0, 0};

    for (size_t i = 0; i < cs->n; i++) {
        if ((unsigned int)cs->v[i]->status < 3)
            count[cs->v[i]->status]++;
    }
    leakgate_buf__printf(
        &b,
        "{\n  \"format\": \"leakgate-results\",\n"
        "  \"version\": 1,\n"
        "  \"leakgate_version\": \"%s\",\n"
        "  \"environment\": %s,\n"
        "  \"summary\": {\n    \"tests\": %zu,\n"
        "    \"passed\": %zu,\n    \"failed\": %zu,\n"
        "    \"not_judged\": %zu\n  },\n  \"tests\": [",
        LEAKGATE_VERSION, env, cs->n, count[LEAKGATE_STATUS_PASS],
        count[LEAKGATE_STATUS_FAIL], count[LEAKGATE_STATUS_NOT_JUDGED]);
    for (size_t i = 0; i < cs->n; i++) {
        leakgate_buf__puts(&b, i ? ",\n" : "\n");
        leakgate_buf__puts(&b, cs->v[i]->pieces.json_test);
    }
    leakgate_buf__puts(&b, cs->n ? "\n  ]\n}\n" : "]\n}\n");
    return leakgate_buf__take(&b);
}

/* The records in order, then the test the program died in. */
static char *
document(const struct leakgate_run *r,
         char *(*render)(const struct cases *, const char *),
         const char *env)
{
    struct cases cs = {NULL, 0};
    char *text;

    if (!env)
        return NULL;
    cs.v = leakgate_util__calloc(r->ncases + 1,
                                 sizeof(const struct leakgate_run_case *));
    if (!cs.v)
        return NULL;
    for (size_t i = 0; i < r->ncases; i++)
        cs.v[cs.n++] = &r->cases[i];
    if (r->crash)
        cs.v[cs.n++] = r->crash;
    text = render(&cs, env);
    leakgate_util__free(cs.v);
    return text;
}

char *
leakgate_run__junit(const struct leakgate_run *r)
{
    return document(r, junit_doc, r->junit_env);
}

char *
leakgate_run__json(const struct leakgate_run *r)
{
    return document(r, json_doc, r->json_env);
}

int
leakgate_run_write_results(const leakgate_run *r)
{
    int rc = 0;

    /* Nothing was gated (no environment record): like a linked binary
     * whose gate could not start, write nothing. */
    if (!r->junit_env || !r->json_env)
        return 0;
    if (r->opts.junit_path)
        rc = leakgate_results__write_rendered(r->opts.junit_path, "xml",
                                              leakgate_run__junit(r), "JUnit");
    if (rc == 0 && r->opts.json_path)
        rc = leakgate_results__write_rendered(r->opts.json_path, "json",
                                              leakgate_run__json(r), "JSON");
    return rc;
}
