/* SPDX-License-Identifier: MIT */
/* results: JSON results written by report.c read back into verdicts;
 * every malformed document is refused with FILE:LINE:COL; one record per
 * window in summaries; per-process file names and no-clobber writes. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "leakgate/thresholds.h"
#include "report.h"
#include "results.h"
#include "util.h"

const char *const unit_suite = "results";

static struct leakgate_config_entry entry = {.pattern = (char[]){"p/*"},
                                             .line = 7};
static struct leakgate_config_stack_rule rule = {.limit = 100, .line = 9};

/* A failing window with one stack over a rule, symbolized. */
static struct leakgate_verdict *
sample(const char *suite, const char *test, leakgate_status status)
{
    struct leakgate_verdict *v = calloc(1, sizeof *v);
    struct leakgate_vstack *s;
    struct leakgate_buf name = LEAKGATE_BUF_INIT;

    leakgate_buf__printf(&name, "%s/%s", suite, test);
    v->name = leakgate_buf__take(&name);
    v->suite = leakgate_util__strdup(suite);
    v->test = leakgate_util__strdup(test);
    v->status = status;
    v->measured = true;
    v->seconds = 0.25;
    v->report = leakgate_util__strdup(
        status == LEAKGATE_STATUS_FAIL ? "leakgate: FAIL p/x: ...\n" : "");
    v->settings.stack_limit = 0;
    v->settings.total_unlimited = true;
    v->settings.test_entry = &entry;
    v->stacks = calloc(1, sizeof *v->stacks);
    v->nstacks = 1;
    s = &v->stacks[0];
    s->bytes = 160;
    s->objs = 2;
    s->pcs = calloc(2, sizeof *s->pcs);
    s->pcs[0] = 0x401010;
    s->pcs[1] = 0x402020;
    s->npcs = 2;
    s->frames = calloc(3, sizeof *s->frames);
    s->nframes = 3;
    s->frames[0] = (struct leakgate_frame){
        0x401010, "cache_insert", "c.c", 42, "/bin/app", 0x1010, true};
    s->frames[1] = (struct leakgate_frame){0x401010,   "cache_put", "c.c", 50,
                                           "/bin/app", 0x1010,      false};
    s->frames[2] = (struct leakgate_frame){0x402020,   "main", "m.c", 3,
                                           "/bin/app", 0x2020, false};
    s->shown_begin = 0;
    s->shown_end = 2;
    /* 96 B lost, 32 B indirectly, 32 B reachable from a global */
    s->reach.known = true;
    s->reach.lost_objs = 1;
    s->reach.lost_bytes = 96;
    s->reach.indirect_bytes = 32;
    s->reach.later_bytes = 64; /* of the lost: reachable when it ended */
    s->reach.later_objs = 1;
    s->reach.roots = LEAKGATE_ROOT_GLOBAL;
    s->judgement = (struct leakgate_policy_stack_verdict){
        true, false, NULL, &rule, 100, status == LEAKGATE_STATUS_FAIL};
    v->policy.total_bytes = 160;
    v->policy.total_objs = 2;
    v->policy.nover = status == LEAKGATE_STATUS_FAIL;
    v->policy.failed = status == LEAKGATE_STATUS_FAIL;
    return v;
}

static char *
sample_json(leakgate_status status)
{
    struct leakgate_report_env env = {"exact", "5.3.0",         "/bin/app",
                                      "ab12",  "leakgate.yaml", NULL,
                                      NULL,    false,           false};
    struct leakgate_verdict *v = sample("p", "x", status);
    const struct leakgate_verdict *one[1] = {v};
    char *json = leakgate_report__json(one, 1, &env);

    leakgate_verdict__free(v);
    return json;
}

static void
test_results__round_trip(void)
{
    struct leakgate_results *r = NULL;
    char *json = sample_json(LEAKGATE_STATUS_FAIL);
    const struct leakgate_verdict *v;
    const struct leakgate_vstack *s;

    CU_ASSERT_EQUAL_FATAL(leakgate_results_new(&r), 0);
    CU_ASSERT_EQUAL_FATAL(
        leakgate_results__load_text(r, json, strlen(json), "r.json"), 0);
    CU_ASSERT_EQUAL(r->n, 1);
    CU_ASSERT_EQUAL(leakgate_results_files(r), 1);
    v = r->v[0];
    CU_ASSERT_STRING_EQUAL(v->name, "p/x");
    CU_ASSERT_EQUAL(v->status, LEAKGATE_STATUS_FAIL);
    CU_ASSERT_TRUE(v->measured);
    CU_ASSERT_DOUBLE_EQUAL(v->seconds, 0.25, 1e-9);
    CU_ASSERT_STRING_EQUAL(v->settings.test_entry->pattern, "p/*");
    CU_ASSERT_EQUAL(v->settings.test_entry->line, 7);
    CU_ASSERT_TRUE(v->settings.total_unlimited);
    CU_ASSERT_EQUAL(v->policy.total_bytes, 160);
    CU_ASSERT_EQUAL_FATAL(v->nstacks, 1);
    s = &v->stacks[0];
    CU_ASSERT_EQUAL(s->bytes, 160);
    CU_ASSERT_EQUAL(s->npcs, 2);
    CU_ASSERT_EQUAL(s->pcs[1], 0x402020);
    CU_ASSERT_EQUAL_FATAL(s->nframes, 3);
    CU_ASSERT_STRING_EQUAL(s->frames[0].function, "cache_insert");
    CU_ASSERT_TRUE(s->frames[0].inlined);
    CU_ASSERT_EQUAL(s->frames[1].line, 50);
    CU_ASSERT_STRING_EQUAL(s->frames[2].module, "/bin/app");
    /* A replay's frames keep their module offsets (libx.so+0x1e515). */
    CU_ASSERT_EQUAL(s->frames[0].module_offset, 0x1010);
    CU_ASSERT_EQUAL(s->frames[2].module_offset, 0x2020);
    CU_ASSERT_EQUAL(s->shown_begin, 0);
    CU_ASSERT_EQUAL(s->shown_end, 2);
    CU_ASSERT_TRUE(s->judgement.over);
    CU_ASSERT_EQUAL(s->judgement.limit, 100);
    CU_ASSERT_EQUAL(s->judgement.rule->line, 9);
    CU_ASSERT_TRUE(s->reach.known);
    CU_ASSERT_EQUAL(s->reach.lost_bytes, 96);
    CU_ASSERT_EQUAL(s->reach.lost_objs, 1);
    CU_ASSERT_EQUAL(s->reach.indirect_bytes, 32);
    CU_ASSERT_EQUAL(s->reach.later_bytes, 64);
    CU_ASSERT_EQUAL(s->reach.later_objs, 1);
    CU_ASSERT_EQUAL(s->reach.roots, LEAKGATE_ROOT_GLOBAL);
    CU_ASSERT_STRING_EQUAL(leakgate_report__reach_kind(s), "mixed");
    CU_ASSERT_STRING_EQUAL(r->env.binary, "/bin/app");
    leakgate_util__free(json);
    leakgate_results_free(r);
}

static void
expect_refused(const char *text, const char *detail)
{
    struct leakgate_results *r = NULL;

    CU_ASSERT_EQUAL_FATAL(leakgate_results_new(&r), 0);
    CU_ASSERT_EQUAL(
        leakgate_results__load_text(r, text, strlen(text), "r.json"),
        LEAKGATE_EFORMAT);
    if (strcmp(leakgate_error_last(), detail) != 0) {
        fprintf(stderr, "\n  expected: %s\n  got:      %s\n", detail,
                leakgate_error_last());
        CU_FAIL("error detail differs");
    }
    CU_ASSERT_EQUAL(r->n, 0);
    CU_ASSERT_EQUAL(r->nfiles, 0);
    leakgate_results_free(r);
}

static void
test_results__malformed_documents(void)
{
    expect_refused("[1]", "r.json:1:1: not leakgate results: expected an "
                          "object with \"format\": \"leakgate-results\", got "
                          "an array");
    expect_refused("{\"version\": 1}",
                   "r.json:1:1: not leakgate results: no 'format' key");
    expect_refused("{\"format\": \"other\", \"version\": 1}",
                   "r.json:1:2: not leakgate results: 'format' is not "
                   "\"leakgate-results\"");
    expect_refused("{\"format\": \"leakgate-results\"}",
                   "r.json:1:1: missing 'version'");
    expect_refused("{\"format\": \"leakgate-results\",\n \"version\": 3}",
                   "r.json:2:2: unsupported results version 3 (this "
                   "leakgate reads versions 1 to 2)");
    expect_refused("{\"format\": \"leakgate-results\", \"version\": \"1\"}",
                   "r.json:1:32: 'version' must be an integer, got a string");
    expect_refused("{\"format\": \"leakgate-results\", \"version\": 1}",
                   "r.json:1:1: missing 'tests'");
    expect_refused("{\"format\": \"leakgate-results\", \"version\": 1,\n"
                   " \"tests\": [{\"suite\": \"s\", \"test\": \"t\",\n"
                   "  \"status\": \"maybe\"}]}",
                   "r.json:3:3: unknown status 'maybe' (expected pass, fail "
                   "or not_judged)");
    expect_refused("{\"format\": \"leakgate-results\", \"version\": 1,\n"
                   " \"tests\": [{\"suite\": \"s\", \"test\": 5}]}",
                   "r.json:2:27: 'test' must be a string, got a number");
    expect_refused("{\"format\": \"leakgate-results\", \"version\": 1,\n"
                   " \"tests\": [{\"suite\": \"s\", \"test\": \"t\",\n"
                   "  \"status\": \"pass\", \"measured\": true,\n"
                   "  \"stacks\": [{\"bytes\": 1, \"objects\": 1,\n"
                   "   \"pcs\": [\"0xZZ\"], \"frames\": null}]}]}",
                   "r.json:5:12: invalid address '0xZZ' in 'pcs'");
    expect_refused("{\"format\": \"leakgate-results\", \"version\": 1,\n"
                   " \"tests\": [{\"suite\": \"s\", \"test\": \"t\",\n"
                   "  \"status\": \"fail\", \"measured\": true,\n"
                   "  \"stacks\": [{\"bytes\": 1, \"objects\": 1,\n"
                   "   \"reachability\": {\"lost_bytes\": -1, "
                   "\"lost_objects\": 0,\n"
                   "    \"indirect_bytes\": 0, \"indirect_objects\": 0},\n"
                   "   \"pcs\": [], \"frames\": null}]}]}",
                   "r.json:5:4: negative count in 'reachability'");
    expect_refused("{\"format\": \"leakgate-results\", \"version\": 1,\n"
                   " \"tests\": [{\"suite\": \"s\", \"test\": \"t\",\n"
                   "  \"status\": \"fail\", \"measured\": true,\n"
                   "  \"stacks\": [{\"bytes\": 1, \"objects\": 1,\n"
                   "   \"reachability\": {\"lost_bytes\": 0, "
                   "\"lost_objects\": 0,\n"
                   "    \"indirect_bytes\": 0, \"indirect_objects\": 0,\n"
                   "    \"roots\": [\"heap\"]},\n"
                   "   \"pcs\": [], \"frames\": null}]}]}",
                   "r.json:7:15: a root must be \"global\", \"tls\" or "
                   "\"stack\"");
    expect_refused("{\"format\": \"leakgate-results\", \"version\": 1,\n"
                   " \"tests\": [{\"suite\": \"s\", \"test\": \"t\",\n"
                   "  \"status\": \"fail\", \"measured\": true,\n"
                   "  \"stacks\": [{\"bytes\": 16, \"objects\": 1,\n"
                   "   \"reachability\": {\"lost_bytes\": 16, "
                   "\"lost_objects\": 1,\n"
                   "    \"indirect_bytes\": 0, \"indirect_objects\": 0,\n"
                   "    \"lost_later_bytes\": 32, \"lost_later_objects\": 1},\n"
                   "   \"pcs\": [], \"frames\": null}]}]}",
                   "r.json:5:4: 'lost_later_bytes' or 'lost_later_objects' "
                   "above the lost and indirectly lost");
    expect_refused("{\"format\": \"leakgate-results\", \"version\": 1, "
                   "\"tests\": [1,",
                   "r.json:1:58: unexpected end of input (expected a value)");
}

static void
test_results__one_record_per_window(void)
{
    struct leakgate_results *r = NULL;
    char *fail = sample_json(LEAKGATE_STATUS_FAIL);
    char *pass = sample_json(LEAKGATE_STATUS_PASS);
    const char *text = NULL;
    size_t failed = 0;

    CU_ASSERT_EQUAL_FATAL(leakgate_results_new(&r), 0);
    CU_ASSERT_EQUAL(leakgate_results__load_text(r, pass, strlen(pass), "a"), 0);
    CU_ASSERT_EQUAL(leakgate_results__load_text(r, fail, strlen(fail), "b"), 0);
    CU_ASSERT_EQUAL(leakgate_results__load_text(r, pass, strlen(pass), "c"), 0);
    CU_ASSERT_EQUAL(leakgate_results_summary(r, &text, &failed), 0);
    CU_ASSERT_EQUAL(r->nview, 1);
    CU_ASSERT_EQUAL(r->view[0]->status, LEAKGATE_STATUS_FAIL);
    CU_ASSERT_EQUAL(failed, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "3 result files, 1 windows"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "  FAIL p/x: 160 B retained"));
    leakgate_util__free(fail);
    leakgate_util__free(pass);
    leakgate_results_free(r);
}

static void
test_results__per_process_paths(void)
{
    char *path = NULL;
    bool noclobber = true;
    char pid[32], dir[] = "/tmp/leakgate-results-XXXXXX";
    struct leakgate_buf second = LEAKGATE_BUF_INIT;

    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    CU_ASSERT_EQUAL(
        leakgate_results__path(&path, &noclobber, "r-%p.json", "json"), 0);
    CU_ASSERT_FALSE(noclobber);
    CU_ASSERT_PTR_NOT_NULL(strstr(path, pid));
    CU_ASSERT_EQUAL(strncmp(path, "r-", 2), 0);
    leakgate_util__free(path);
    CU_ASSERT_EQUAL(leakgate_results__path(&path, &noclobber, "100%%", "json"),
                    0);
    CU_ASSERT_STRING_EQUAL(path, "100%");
    leakgate_util__free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    CU_ASSERT_EQUAL(leakgate_results__path(&path, &noclobber, dir, "json"), 0);
    CU_ASSERT_TRUE(noclobber);
    CU_ASSERT_PTR_NOT_NULL(strstr(path, pid));
    CU_ASSERT_PTR_NOT_NULL(strstr(path, ".json"));
    /* Two writes from one process: the second gets its own name. */
    CU_ASSERT_EQUAL(leakgate_results__write(dir, "json", "{}"), 0);
    CU_ASSERT_EQUAL(leakgate_results__write(dir, "json", "[]"), 0);
    CU_ASSERT_EQUAL(access(path, R_OK), 0);
    leakgate_buf__printf(&second, "%.*s.1.json",
                         (int)(strrchr(path, '.') - path), path);
    CU_ASSERT_EQUAL(access(second.ptr, R_OK), 0);
    unlink(second.ptr);
    unlink(path);
    rmdir(dir);
    leakgate_buf__dispose(&second);
    leakgate_util__free(path);
}

const struct unit_case unit_cases[] = {
    {"test_results__round_trip", test_results__round_trip},
    {"test_results__malformed_documents", test_results__malformed_documents},
    {"test_results__one_record_per_window",
     test_results__one_record_per_window},
    {"test_results__per_process_paths", test_results__per_process_paths},
    {NULL, NULL},
};
