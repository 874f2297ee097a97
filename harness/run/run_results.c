/* SPDX-License-Identifier: MIT */
/*
 * run_results: the --junit and --json files of `leakgate run`, written by
 * the parent from the records the program sent, so that a crash loses
 * nothing that finished.  Each testcase and test object is the piece
 * report.c's per-window writers rendered in the program (run_proto.c);
 * report.c's document writers put them together, as they do for a linked
 * run, so run mode writes what linked mode writes.  tests/run checks that they
 * stay identical.  The test the program died in becomes a not-judged record
 * with the failure as a note, rendered by report.c here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "gate.h"
#include "outputs.h"
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
    struct leakgate_report_env env = {NULL, NULL, NULL,  NULL, NULL,
                                      NULL, NULL, false, false};
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

/* The records of a run, by a hash of their names: whether a planned test
 * has one is a binary search, not a scan (a run of 10,000 tests that
 * stopped early lists most of them as not run). */
struct keyed {
    uint64_t h;
    size_t i;
};

static uint64_t
name_key(const char *suite, const char *test)
{
    uint64_t h = leakgate_util__hash_bytes(0, suite, strlen(suite) + 1);

    return leakgate_util__hash_bytes(h, test, strlen(test));
}

static int
cmp_keyed(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;

    return (x->h > y->h) - (x->h < y->h);
}

/* Whether suite/test has a record among keys[0..n) (sorted), or is the
 * test the program died in. */
static bool
has_record(const struct leakgate_run *r,
           const struct keyed *keys,
           size_t n,
           const char *suite,
           const char *test)
{
    uint64_t h = name_key(suite, test);
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (keys[mid].h < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n && keys[lo].h == h; lo++) {
        const struct leakgate_run_case *c = &r->cases[keys[lo].i];

        if (strcmp(c->suite, suite) == 0 && strcmp(c->test, test) == 0)
            return true;
    }
    return r->crash && strcmp(r->crash->suite, suite) == 0 &&
           strcmp(r->crash->test, test) == 0;
}

/* One "not run" record for suite/test (as gate.c's not-run verdict). */
static int
not_run_case(struct leakgate_run *r,
             const struct leakgate_config *cfg,
             const char *suite,
             const char *test,
             const char *why)
{
    struct leakgate_verdict v;
    struct leakgate_run_case *c, *more;
    struct leakgate_report_env env = {NULL, NULL, NULL,  NULL, NULL,
                                      NULL, NULL, false, false};
    struct leakgate_buf name = LEAKGATE_BUF_INIT, reason = LEAKGATE_BUF_INIT;
    int rc = 0;

    if (r->ncases == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;

        more = leakgate_util__realloc(r->cases, cap * sizeof *more);
        if (!more)
            return leakgate_error__set(LEAKGATE_ENOMEM, "records");
        r->cases = more;
        r->cap = cap;
    }
    memset(&v, 0, sizeof v);
    leakgate_buf__printf(&name, "%s/%s", suite, test);
    leakgate_buf__printf(&reason, "%s%s", LEAKGATE_VERDICT_NOT_RUN, why);
    v.suite = (char *)(uintptr_t)suite;
    v.test = (char *)(uintptr_t)test;
    v.name = name.ptr;
    v.status = LEAKGATE_STATUS_NOT_JUDGED;
    v.not_judged_why = reason.ptr;
    v.report = (char *)(uintptr_t) "";
    c = &r->cases[r->ncases];
    memset(c, 0, sizeof *c);
    c->suite = leakgate_util__strdup(suite);
    c->test = leakgate_util__strdup(test);
    if (name.failed || reason.failed || !c->suite || !c->test)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "not run record");
    if (rc == 0) {
        leakgate_policy__resolve(&v.settings, cfg, suite,
                                 strcmp(test, "[suite]") == 0 ? NULL : test);
        rc = leakgate_run__pieces(&c->pieces, &v, &env);
    }
    leakgate_buf__dispose(&name);
    leakgate_buf__dispose(&reason);
    if (rc < 0) {
        leakgate_run__case_dispose(c);
        return rc;
    }
    c->status = LEAKGATE_STATUS_NOT_JUDGED;
    c->skipped = true;
    r->ncases++;
    return 0;
}

int
leakgate_run__not_run_cases(struct leakgate_run *r, const char *why)
{
    const char *path = leakgate_config__path(r->opts.thresholds_path);
    struct leakgate_config *cfg = NULL;
    size_t n = r->ncases;
    struct keyed *keys = leakgate_util__calloc(n ? n : 1, sizeof *keys);
    int rc = 0;

    if (!keys)
        return leakgate_error__set(LEAKGATE_ENOMEM, "records");
    for (size_t i = 0; i < n; i++) {
        keys[i].h = name_key(r->cases[i].suite, r->cases[i].test);
        keys[i].i = i;
    }
    qsort(keys, n, sizeof *keys, cmp_keyed);
    /* The settings the program would have resolved (once for them all). */
    if (path && leakgate_config__load(&cfg, path, NULL) < 0)
        cfg = NULL; /* the program said so already, or it died first */
    for (size_t i = 0; rc == 0 && i + 1 < r->nplanned; i += 2) {
        const char *suite = r->planned[i], *test = r->planned[i + 1];

        /* Records added here are of tests planned once: not looked up. */
        if (!has_record(r, keys, n, suite, test))
            rc = not_run_case(r, cfg, suite, test, why);
    }
    leakgate_config__free(cfg);
    leakgate_util__free(keys);
    return rc;
}

/* ---- documents ---------------------------------------------------------- */

/* The records in order, then the test the program died in, composed by
 * report.c's document writers. */
static char *
document(const struct leakgate_run *r, bool junit)
{
    const char *env = junit ? r->junit_env : r->json_env;
    struct leakgate_report_piece *p;
    size_t n = 0;
    char *text;

    if (!env)
        return NULL;
    p = leakgate_util__calloc(r->ncases + 1, sizeof *p);
    if (!p)
        return NULL;
    for (size_t i = 0; i <= r->ncases; i++) {
        const struct leakgate_run_case *c =
            i < r->ncases ? &r->cases[i] : r->crash;

        if (!c)
            continue;
        p[n].suite = c->suite;
        p[n].junit_case = c->pieces.junit_case ? c->pieces.junit_case : "";
        p[n].json_test = c->pieces.json_test ? c->pieces.json_test : "";
        p[n].status = c->status;
        p[n].failed = c->failed;
        p[n].seconds = c->seconds;
        n++;
    }
    text = junit ? leakgate_report__junit_doc(p, n, env)
                 : leakgate_report__json_doc(p, n, env);
    leakgate_util__free(p);
    return text;
}

char *
leakgate_run__junit(const struct leakgate_run *r)
{
    return document(r, true);
}

char *
leakgate_run__json(const struct leakgate_run *r)
{
    return document(r, false);
}

int
leakgate_run__journal_case(struct leakgate_outputs *os,
                           const struct leakgate_run_case *c)
{
    struct leakgate_report_piece piece;
    /* What the record says: failed is a gate failure or notes. */
    int rank = leakgate_results__rank_of(true, c->status, c->failed);

    if (!c->pieces.json_test || !*c->pieces.json_test ||
        !c->pieces.junit_case || !*c->pieces.junit_case)
        return 0; /* the program renders no pieces: nothing shared */
    memset(&piece, 0, sizeof piece);
    piece.suite = c->suite;
    piece.junit_case = c->pieces.junit_case;
    piece.json_test = c->pieces.json_test;
    piece.status = c->status;
    piece.failed = c->failed;
    piece.seconds = c->seconds;
    return leakgate_outputs__window(os, c->suite, c->test, &piece, rank);
}

/* The shared outputs: every record into the journals (those already
 * there are not written again), the test the program died in, then the
 * merge. */
static int
write_shared(const struct leakgate_run *r)
{
    struct leakgate_outputs *os = r->outputs;
    int rc = 0;

    if (!os) {
        rc = leakgate_outputs__open(&os, r->opts.junit_path, r->opts.json_path,
                                    r->opts.report_dir);
        if (rc == 0)
            rc = leakgate_outputs__set_binary(os, r->program);
        if (rc < 0) {
            leakgate_outputs__free(os);
            os = NULL;
        }
    }
    if (rc < 0 || !os)
        return rc;
    if (!leakgate_outputs__has_env(os))
        rc = leakgate_outputs__env(os, r->json_env, r->junit_env);
    for (size_t i = 0; rc == 0 && i <= r->ncases; i++) {
        const struct leakgate_run_case *c =
            i < r->ncases ? &r->cases[i] : r->crash;

        if (c)
            rc = leakgate_run__journal_case(os, c);
    }
    if (rc == 0)
        rc = leakgate_outputs__merge(os, NULL);
    if (os != r->outputs)
        leakgate_outputs__free(os);
    return rc;
}

int
leakgate_run_write_results(const leakgate_run *r)
{
    char said[1024];
    int rc = 0;

    /* Nothing was gated (no environment record): like a linked binary
     * whose gate could not start, write nothing. */
    if (!r->junit_env || !r->json_env)
        return 0;
    /* Each output on its own: one that cannot be written costs no other. */
    said[0] = '\0';
    if (r->opts.junit_path && !leakgate_outputs__is_shared(r->opts.junit_path))
        rc = leakgate_error__gather(
            rc, said,
            leakgate_results__write_rendered(r->opts.junit_path, "xml",
                                             leakgate_run__junit(r), "JUnit"));
    if (r->opts.json_path && !leakgate_outputs__is_shared(r->opts.json_path))
        rc = leakgate_error__gather(
            rc, said,
            leakgate_results__write_rendered(r->opts.json_path, "json",
                                             leakgate_run__json(r), "JSON"));
    return leakgate_error__gather(rc, said, write_shared(r));
}
