/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of `leakgate run`'s parent side without starting a program:
 * the record format (harness/run_proto.c), the JUnit/JSON rebuilt from
 * per-verdict pieces, which must be byte-identical to what report.c writes
 * for the same verdicts (harness/run_results.c), the outcome decided from
 * records and a wait status (harness/run_outcome.c), and the ELF
 * inspection behind "not a CUnit program" (harness/run_elf.c).
 */
#include "run_proto.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "util.h"
#include "verdict.h"

static void
test_run__field_round_trip(void)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char *f[LEAKGATE_RUN_FIELDS_MAX];
    size_t n;

    leakgate_buf__puts(&b, "V\t");
    leakgate_records__put_field(&b, "a\tb\nc\\d\\t");
    leakgate_buf__puts(&b, "\t");
    leakgate_records__put_field(&b, "");
    leakgate_buf__puts(&b, "\t");
    leakgate_records__put_field(&b, "plain");
    CU_ASSERT_FATAL(!b.failed);
    CU_ASSERT_PTR_NULL(strchr(b.ptr, '\n'));
    n = leakgate_records__split(f, LEAKGATE_RUN_FIELDS_MAX, b.ptr);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    CU_ASSERT_STRING_EQUAL(f[0], "V");
    CU_ASSERT_STRING_EQUAL(f[1], "a\tb\nc\\d\\t");
    CU_ASSERT_STRING_EQUAL(f[2], "");
    CU_ASSERT_STRING_EQUAL(f[3], "plain");
    leakgate_buf__dispose(&b);
}

static void
test_run__fixed_field_truncates(void)
{
    char line[8];
    size_t len = 0;

    memset(line, 'x', sizeof line);
    CU_ASSERT(!leakgate_records__put_field_fixed(line, sizeof line, &len,
                                                 "\t\t\t\t\t"));
    /* Room is kept for "\n" and the NUL; an escape pair is never cut. */
    CU_ASSERT(len + 2 <= sizeof line);
    CU_ASSERT_EQUAL(len % 2, 0);
    CU_ASSERT_EQUAL(line[len], '\0');
    CU_ASSERT_STRING_EQUAL(line, "\\t\\t\\t");
    len = 0;
    CU_ASSERT(leakgate_records__put_field_fixed(line, sizeof line, &len, "\t"));
    CU_ASSERT_STRING_EQUAL(line, "\\t");
}

/* The seconds field reads back as the same double, and as "%a" would
 * have written it for the values a verdict has. */
static void
test_run__seconds_exact(void)
{
    const double values[] = {
        0.0,     1.0,     0.5,   0.1,     1e-9,
        123.456, 3600.25, 1e300, 5e-324,  2.2250738585072009e-308,
        1.0 / 3, 0.125,   7e-6,  86400.0, 4.9406564584124654e-320};
    char out[LEAKGATE_RUN_SECONDS_MAX], want[64];

    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        double back;

        leakgate_run__seconds(out, values[i]);
        back = strtod(out, NULL);
        CU_ASSERT_EQUAL(memcmp(&back, &values[i], sizeof back), 0);
        snprintf(want, sizeof want, "%a", values[i]);
        if (values[i] >= 2.2250738585072014e-308 || values[i] == 0.0)
            CU_ASSERT_STRING_EQUAL(out, want); /* normal: the same text */
    }
    /* Nothing a verdict's seconds can be besides: 0. */
    leakgate_run__seconds(out, -1.5);
    CU_ASSERT_STRING_EQUAL(out, "0x0p+0");
    leakgate_run__seconds(out, 1.0 / 0.0);
    CU_ASSERT_STRING_EQUAL(out, "0x0p+0");
    leakgate_run__seconds(out, 0.0 / 0.0);
    CU_ASSERT_STRING_EQUAL(out, "0x0p+0");
}

/* The ring: what the writer writes the reader reads, in order, across
 * its end; one process writes it; a full ring whose reader is gone makes
 * the write fail instead of waiting for ever. */
static void
test_run__ring(void)
{
    struct leakgate_run_ring *r, *w;
    struct leakgate_buf out = LEAKGATE_BUF_INIT;
    static char big[LEAKGATE_RUN_RING_BYTES];
    int fd, sv[2];
    size_t total = 0;

    CU_ASSERT_FATAL(leakgate_run__ring_new(&r, &fd));
    CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    w = leakgate_run__ring_map(dup(fd));
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    /* A second writer is refused. */
    CU_ASSERT_PTR_NULL(leakgate_run__ring_map(dup(fd)));
    CU_ASSERT_PTR_NULL(leakgate_run__ring_map(-1));
    /* Records of 1,000 bytes, read every third: the ring's end is crossed
     * several times. */
    for (unsigned int i = 0; i < 200; i++) {
        char rec[1000];

        memset(rec, 'a' + (int)(i % 26), sizeof rec);
        CU_ASSERT_EQUAL_FATAL(
            leakgate_run__ring_write(w, sv[0], -1, rec, sizeof rec), 0);
        total += sizeof rec;
        if (i % 3 == 2 || i == 199)
            CU_ASSERT_EQUAL_FATAL(
                leakgate_run__ring_read(r, atomic_load(&r->head), &out), 0);
    }
    CU_ASSERT_EQUAL_FATAL(out.len, total);
    for (unsigned int i = 0; i < 200; i++)
        CU_ASSERT_EQUAL(out.ptr[i * 1000 + 999], 'a' + (int)(i % 26));
    /* Full, and the reader's end of the channel closed: EIO. */
    memset(big, 'x', sizeof big);
    CU_ASSERT_EQUAL(leakgate_run__ring_write(w, sv[0], -1, big, sizeof big), 0);
    close(sv[1]);
    CU_ASSERT_EQUAL(leakgate_run__ring_write(w, sv[0], -1, "y", 1),
                    LEAKGATE_EIO);
    close(sv[0]);
    leakgate_buf__dispose(&out);
    leakgate_run__ring_unmap(w);
    leakgate_run__ring_unmap(r);
    close(fd);
}

/* ---- pieces and documents ------------------------------------------------ */

static char s_a[] = "alpha", s_b[] = "be<ta>\"q\"", s_t1[] = "leaks",
            s_t2[] = "clean", s_t3[] = "[suite]", s_n1[] = "alpha/leaks",
            s_n2[] = "be<ta>\"q\"/clean", s_n3[] = "alpha/[suite]",
            s_report[] = "leakgate: FAIL alpha/leaks: 112 B\n  stack...\n",
            s_empty[] = "", s_file[] = "t.c", s_msg[] = "1 == 2 & <x>";

struct docs {
    struct leakgate_frame frames[2];
    uintptr_t pcs[2];
    struct leakgate_vstack stack;
    struct leakgate_note note;
    struct leakgate_verdict v[3];
    const struct leakgate_verdict *pv[3];
    struct leakgate_report_env env;
};

static void
docs_init(struct docs *d)
{
    memset(d, 0, sizeof *d);
    d->frames[0] = (struct leakgate_frame){0x401010, "make", "m.c", 7,
                                           "/b/t",   0x1010, false};
    d->frames[1] = (struct leakgate_frame){0x402020, "test_leaks", "t.c", 9,
                                           "/b/t",   0x2020,       false};
    d->pcs[0] = 0x401010;
    d->pcs[1] = 0x402020;
    d->stack = (struct leakgate_vstack){
        d->pcs, 2, d->frames, 2, 0, 2, 112, 1, NULL, 0, {0}, 0, false, {0}};
    d->stack.judgement = (struct leakgate_policy_stack_verdict){
        true, false, NULL, NULL, 0, true};
    d->note = (struct leakgate_note){s_file, 12, s_msg};
    d->v[0] =
        (struct leakgate_verdict){.suite = s_a, .test = s_t1, .name = s_n1};
    d->v[0].status = LEAKGATE_STATUS_FAIL;
    d->v[0].measured = true;
    d->v[0].stacks = &d->stack;
    d->v[0].nstacks = 1;
    d->v[0].policy.total_bytes = 112;
    d->v[0].policy.nover = 1;
    d->v[0].seconds = 0.1234567891;
    d->v[0].report = s_report;
    d->v[1] =
        (struct leakgate_verdict){.suite = s_b, .test = s_t2, .name = s_n2};
    d->v[1].measured = true;
    d->v[1].notes = &d->note;
    d->v[1].nnotes = 1;
    d->v[1].seconds = 0.25;
    d->v[1].report = s_empty;
    d->v[2] =
        (struct leakgate_verdict){.suite = s_a, .test = s_t3, .name = s_n3};
    d->v[2].measured = true;
    d->v[2].report = s_empty;
    d->v[2].seconds = 1e-7;
    for (size_t i = 0; i < 3; i++)
        d->pv[i] = &d->v[i];
    d->env = (struct leakgate_report_env){"exact", "5.3.0", "/b/t", "abc", NULL,
                                          NULL,    NULL,    false,  false};
}

/* A run holding the three verdicts as records, as run_outcome.c would. */
static struct leakgate_run *
run_of(struct docs *d)
{
    struct leakgate_run *r = leakgate_util__calloc(1, sizeof *r);

    CU_ASSERT_FATAL(r != NULL);
    if (!r)
        return NULL;
    r->cases = leakgate_util__calloc(3, sizeof *r->cases);
    CU_ASSERT_FATAL(r->cases != NULL);
    for (size_t i = 0; r->cases && i < 3; i++) {
        struct leakgate_run_case *c = &r->cases[i];

        CU_ASSERT_EQUAL_FATAL(
            leakgate_run__pieces(&c->pieces, &d->v[i], &d->env), 0);
        c->suite = leakgate_util__strdup(d->v[i].suite);
        c->test = leakgate_util__strdup(d->v[i].test);
        c->status = d->v[i].status;
        c->failed =
            d->v[i].status == LEAKGATE_STATUS_FAIL || d->v[i].nnotes > 0;
        c->seconds = d->v[i].seconds;
        r->ncases++;
    }
    if (r->cases && r->ncases > 0) {
        r->junit_env = leakgate_util__strdup(r->cases[0].pieces.junit_env);
        r->json_env = leakgate_util__strdup(r->cases[0].pieces.json_env);
    }
    return r;
}

static void
test_run__results_match_report(void)
{
    struct docs d;
    struct leakgate_run *r;
    char *want_junit, *want_json, *junit, *json;

    docs_init(&d);
    r = run_of(&d);
    want_junit = leakgate_report__junit(d.pv, 3, &d.env);
    want_json = leakgate_report__json(d.pv, 3, &d.env);
    junit = leakgate_run__junit(r);
    json = leakgate_run__json(r);
    CU_ASSERT_FATAL(want_junit && want_json && junit && json);
    CU_ASSERT_STRING_EQUAL(junit, want_junit);
    CU_ASSERT_STRING_EQUAL(json, want_json);
    CU_ASSERT_PTR_NOT_NULL(strstr(junit, "name=\"be&lt;ta&gt;&quot;q&quot;\""));
    leakgate_util__free(want_junit);
    leakgate_util__free(want_json);
    leakgate_util__free(junit);
    leakgate_util__free(json);
    leakgate_run_free(r);
}

static void
test_run__results_without_records(void)
{
    struct docs d;
    struct leakgate_run_pieces p;
    struct leakgate_run *r = leakgate_util__calloc(1, sizeof *r);
    char *want_junit, *want_json, *junit, *json;

    docs_init(&d);
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_EQUAL_FATAL(leakgate_run__pieces(&p, NULL, &d.env), 0);
    CU_ASSERT_PTR_NULL(p.junit_case);
    r->junit_env = p.junit_env;
    r->json_env = p.json_env;
    want_junit = leakgate_report__junit(d.pv, 0, &d.env);
    want_json = leakgate_report__json(d.pv, 0, &d.env);
    junit = leakgate_run__junit(r);
    json = leakgate_run__json(r);
    CU_ASSERT_FATAL(want_junit && want_json && junit && json);
    CU_ASSERT_STRING_EQUAL(junit, want_junit);
    CU_ASSERT_STRING_EQUAL(json, want_json);
    leakgate_util__free(want_junit);
    leakgate_util__free(want_json);
    leakgate_util__free(junit);
    leakgate_util__free(json);
    leakgate_run_free(r);
}

/* ---- outcome ------------------------------------------------------------- */

static struct leakgate_run *
run_with(const char *const *lines, const char *program, int wait_status)
{
    struct leakgate_run *r = leakgate_util__calloc(1, sizeof *r);
    char line[512];

    CU_ASSERT_FATAL(r != NULL);
    if (!r)
        return NULL;
    r->program = leakgate_util__strdup(program);
    for (size_t i = 0; lines[i]; i++) {
        snprintf(line, sizeof line, "%s", lines[i]);
        CU_ASSERT_EQUAL(leakgate_run__take_record(r, line), 0);
    }
    r->wait_status = wait_status;
    CU_ASSERT_EQUAL(leakgate_run__decide(r), 0);
    return r;
}

static bool
said(const struct leakgate_run *r, const char *text)
{
    for (size_t i = 0; i < leakgate_run_message_count(r); i++) {
        if (strstr(leakgate_run_message(r, i), text))
            return true;
    }
    return false;
}

#define V_PASS "V\ts\tok\tpass\t0\t0.5\t  <testsuite name=\"s\"\tC\tJ"
#define V_FAIL "V\ts\tbad\tfail\t1\t0.5\t  <testsuite name=\"s\"\tC\tJ"

static void
test_run__outcome_from_verdicts(void)
{
    const char *pass[] = {"H\t1",           "B\tCU_basic_run_tests",
                          "S\ts\tok\ttest", V_PASS,
                          "D\t0",           NULL};
    const char *fail[] = {"H\t1", "B\tCU_run_all_tests", V_PASS, V_FAIL, "D\t1",
                          NULL};
    const char *assertion[] = {"B\tCU_run_all_tests", V_PASS, "D\t2", NULL};
    const char *none[] = {"H\t1", "B\tCU_basic_run_tests", "D\t0", NULL};
    struct leakgate_run *r;

    /* The program's own exit status never counts. */
    r = run_with(pass, "/nonexistent", W_EXITCODE(1, 0));
    CU_ASSERT_EQUAL(leakgate_run_status(r), 0);
    CU_ASSERT(said(r, "1 window judged, 0 over the limits, 0 not judged"));
    CU_ASSERT_EQUAL(r->ncases, 1);
    leakgate_run_free(r);
    r = run_with(fail, "/nonexistent", W_EXITCODE(0, 0));
    CU_ASSERT_EQUAL(leakgate_run_status(r), 1);
    CU_ASSERT_EQUAL(leakgate_run_failures(r), 1);
    CU_ASSERT(said(r, "2 windows judged, 1 over the limits, 0 not judged"));
    leakgate_run_free(r);
    /* A run that judged no window measured nothing: never exit 0. */
    r = run_with(none, "/nonexistent", W_EXITCODE(0, 0));
    CU_ASSERT_EQUAL(leakgate_run_status(r), 3);
    CU_ASSERT(said(r, "0 windows judged, 0 over the limits, 0 not judged"));
    CU_ASSERT(said(r, "no window was judged"));
    leakgate_run_free(r);
    /* CUnit failure records that reached no record still fail the run. */
    r = run_with(assertion, "/nonexistent", W_EXITCODE(0, 0));
    CU_ASSERT_EQUAL(leakgate_run_status(r), 1);
    leakgate_run_free(r);
}

static void
test_run__outcome_crash_in_test(void)
{
    const char *lines[] = {"H\t1", "B\tCU_basic_run_tests", "S\ts\tok\ttest",
                           V_PASS, "S\tcrash\tsegv\ttest",  NULL};
    struct leakgate_run *r = run_with(lines, "/nonexistent", SIGSEGV);
    char *json;

    CU_ASSERT_EQUAL(leakgate_run_status(r), 1);
    CU_ASSERT(said(r, "the program died of SIGSEGV (Segmentation fault) in "
                      "crash/segv"));
    CU_ASSERT_FATAL(r->crash != NULL);
    CU_ASSERT_STRING_EQUAL(r->crash->test, "segv");
    CU_ASSERT(r->crash->failed);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->crash->pieces.junit_case, "<failure"));
    r->json_env = leakgate_util__strdup("{}");
    json = leakgate_run__json(r);
    CU_ASSERT_PTR_NOT_NULL(json ? strstr(json, "\"not_judged\": 1") : NULL);
    leakgate_util__free(json);
    leakgate_run_free(r);
}

static void
test_run__outcome_exit_and_suite_phases(void)
{
    const char *exit_in_test[] = {"B\tCU_basic_run_tests",
                                  "S\tex\tcalls_exit\ttest", NULL};
    const char *cleanup[] = {"B\tCU_run_all_tests", "S\tsu\t[suite]\tcleanup",
                             NULL};
    const char *between[] = {"B\tCU_run_all_tests", "S\ts\tok\ttest", V_PASS,
                             NULL};
    const char *after[] = {"B\tCU_run_all_tests", V_PASS, "D\t0", NULL};
    struct leakgate_run *r;

    r = run_with(exit_in_test, "/nonexistent", W_EXITCODE(0, 0));
    CU_ASSERT_EQUAL(leakgate_run_status(r), 1);
    CU_ASSERT(said(r, "exited with status 0 in ex/calls_exit"));
    CU_ASSERT_PTR_NOT_NULL(r->crash);
    leakgate_run_free(r);
    r = run_with(cleanup, "/nonexistent", SIGABRT);
    CU_ASSERT(said(r, "died of SIGABRT"));
    CU_ASSERT(said(r, "in the cleanup function of suite su (su/[suite])"));
    CU_ASSERT_STRING_EQUAL(r->crash ? r->crash->test : "", "[suite]");
    leakgate_run_free(r);
    r = run_with(between, "/nonexistent", W_EXITCODE(3, 0));
    CU_ASSERT_EQUAL(leakgate_run_status(r), 1);
    CU_ASSERT(said(r, "during its CUnit run, between tests"));
    CU_ASSERT_PTR_NULL(r->crash);
    leakgate_run_free(r);
    /* A crash after the run still fails it; an exit after it does not. */
    r = run_with(after, "/nonexistent", SIGSEGV);
    CU_ASSERT_EQUAL(leakgate_run_status(r), 1);
    CU_ASSERT(said(r, "after its CUnit run had returned"));
    leakgate_run_free(r);
    r = run_with(after, "/nonexistent", W_EXITCODE(7, 0));
    CU_ASSERT_EQUAL(leakgate_run_status(r), 0);
    leakgate_run_free(r);
}

static void
test_run__outcome_no_test_ran(void)
{
    const char *none[] = {NULL};
    const char *hello[] = {"H\t1", NULL};
    const char *error[] = {"H\t1", "E\t2\tbad.yaml:3:3: unknown key", NULL};
    const char *listed[] = {"H\t1", "L", NULL};
    struct leakgate_run *r;

    r = run_with(none, "/nonexistent", W_EXITCODE(0, 0));
    CU_ASSERT_EQUAL(leakgate_run_status(r), 3);
    CU_ASSERT(said(r, "interposer was not loaded"));
    leakgate_run_free(r);
    /* This test program loads libcunit but ran nothing under leakgate. */
    r = run_with(hello, "/proc/self/exe", W_EXITCODE(0, 0));
    CU_ASSERT_EQUAL(leakgate_run_status(r), 3);
    CU_ASSERT(said(r, "ran no CUnit test: it called none of"));
    leakgate_run_free(r);
    r = run_with(error, "/proc/self/exe", W_EXITCODE(2, 0));
    CU_ASSERT_EQUAL(leakgate_run_status(r), 2);
    CU_ASSERT(said(r, "bad.yaml:3:3"));
    leakgate_run_free(r);
    r = run_with(listed, "/proc/self/exe", W_EXITCODE(0, 0));
    CU_ASSERT_EQUAL(leakgate_run_status(r), 3); /* --list was not asked */
    leakgate_run_free(r);
}

static void
test_run__short_records_ignored(void)
{
    const char *lines[] = {"V\ts\tt", "S\ts", "N", "E\t3", "Q\tx", "", NULL};
    struct leakgate_run *r = run_with(lines, "/nonexistent", W_EXITCODE(0, 0));

    CU_ASSERT_EQUAL(r->ncases, 0);
    CU_ASSERT_EQUAL(r->error_status, 0);
    CU_ASSERT_PTR_NULL(r->junit_env);
    leakgate_run_free(r);
}

static void
test_run__elf(void)
{
    struct leakgate_run_elf e;

    leakgate_run__inspect_elf(&e, "/proc/self/exe");
    CU_ASSERT(e.is_elf);
    CU_ASSERT(e.is_dynamic);
    CU_ASSERT(e.needs_cunit);
    CU_ASSERT(!e.has_cunit_symbols);
    leakgate_run__inspect_elf(&e, LEAKGATE_FIXTURES "/heap/empty.heap");
    CU_ASSERT(!e.is_elf);
    leakgate_run__inspect_elf(&e, "/nonexistent");
    CU_ASSERT(!e.is_elf);
}

const char *const unit_suite = "run";
const struct unit_case unit_cases[] = {
    {"field_round_trip", test_run__field_round_trip},
    {"fixed_field_truncates", test_run__fixed_field_truncates},
    {"seconds_exact", test_run__seconds_exact},
    {"ring", test_run__ring},
    {"results_match_report", test_run__results_match_report},
    {"results_without_records", test_run__results_without_records},
    {"outcome_from_verdicts", test_run__outcome_from_verdicts},
    {"outcome_crash_in_test", test_run__outcome_crash_in_test},
    {"outcome_exit_and_suite_phases", test_run__outcome_exit_and_suite_phases},
    {"outcome_no_test_ran", test_run__outcome_no_test_ran},
    {"short_records_ignored", test_run__short_records_ignored},
    {"elf", test_run__elf},
    {NULL, NULL},
};
