/* SPDX-License-Identifier: MIT */
/*
 * parity_check: does a gated run of a CUnit program give the CUnit results
 * of a plain run?  (Issue 12; SPEC.md section 5: under the gate every test
 * runs once per process and its CUnit outcome is that of a plain run, the
 * gate only adds its own verdicts.)
 *
 *     parity_check [--gate-stderr FILE] [--runs GLOB=N]... [--no-run-counts]
 *                  PLAIN GATED
 *
 * PLAIN and GATED are the standard output of the same program run plainly
 * (CU_basic_run_tests) and under the gate, with CUnit's basic interface in
 * verbose mode: "Suite: S", "  Test: T ...passed" or "...FAILED" followed
 * by the numbered failure records "    N. FILE:LINE  - CONDITION" (a
 * condition may continue over several lines), suite warnings, the run
 * summary, then the "corpus runs<TAB>SUITE<TAB>TEST<TAB>N" lines of
 * corpus_runs.c.  Text a test prints is skipped.  Capture stdout alone
 * and give the gate's stderr as --gate-stderr: when both went to one file,
 * whole lines of the gate's between a test's records are skipped, but
 * lines that the two streams' buffers cut apart cannot be told.
 *
 * A difference is any of:
 *   - a test CUnit reports twice in one output, or whose run count is not
 *     1 (or the N of a matching --runs GLOB=N: the warm-up and repeat runs
 *     a thresholds file asks for), or a run count without a CUnit report;
 *   - a test only one run reports, or reports in another order;
 *   - a different result or different failure records (file, line and
 *     condition, in order) once the gated run's own records are removed:
 *     those whose condition starts with "leakgate: ";
 *   - a different "Suite initialization failed" or "Suite cleanup failed"
 *     warning, except a cleanup failure of the gated run for which FILE
 *     has the gate's "leakgate: FAIL SUITE/[suite]";
 *   - a different number of suites or tests run, or of passed assertions
 *     (a hidden second run of a test passes its assertions again);
 *   - a plain run with a record of the gate's, or with no run summary.
 *
 * Prints one line per difference and "parity: N tests compared, M
 * differences".  Exit status: 0 same, 1 different, 2 usage or an input
 * that cannot be read (over MAX_INPUT_BYTES, MAX_TESTS or MAX_RECORDS).
 */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT_BYTES (64u << 20)
#define MAX_TESTS 4096
#define MAX_RECORDS 256
#define MAX_RUN_RULES 64
#define MAX_SUITE_WARNINGS 256
#define GATE_PREFIX "leakgate: "

/* A piece of an input buffer (not NUL-terminated). */
struct span {
    const char *p;
    size_t n;
};

struct record {
    struct span file;
    long line;
    struct span condition; /* trailing white space trimmed */
    bool is_gate;          /* the condition starts with "leakgate: " */
};

enum result { RESULT_NONE, RESULT_PASSED, RESULT_FAILED };

struct test {
    struct span suite;
    struct span name;
    enum result result;
    size_t nrecords;
    struct record records[MAX_RECORDS];
    long runs; /* from "corpus runs" lines; -1 when none */
};

struct warning {
    bool is_init; /* initialization, else cleanup */
    struct span suite;
};

struct summary {
    bool seen;
    long suites_ran;
    long tests_ran;
    long asserts_passed;
};

struct output {
    const char *path;
    char *text;
    size_t len;
    struct test *tests;
    size_t ntests;
    struct warning warnings[MAX_SUITE_WARNINGS];
    size_t nwarnings;
    struct summary summary;
    bool has_runs;
    long stray_runs; /* runs of tests CUnit never reported */
};

struct run_rule {
    const char *glob;
    long runs;
};

struct options {
    const char *gate_stderr;
    struct run_rule rules[MAX_RUN_RULES];
    size_t nrules;
    bool run_counts;
};

static size_t differences;

static void differ(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
differ(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("parity: ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    differences++;
}

static bool
span_eq(struct span a, struct span b)
{
    return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

static bool
starts_with(struct span s, const char *prefix)
{
    size_t n = strlen(prefix);

    return s.n >= n && memcmp(s.p, prefix, n) == 0;
}

static bool
ends_with(struct span s, const char *suffix)
{
    size_t n = strlen(suffix);

    return s.n >= n && memcmp(s.p + s.n - n, suffix, n) == 0;
}

static struct span
trim_right(struct span s)
{
    while (s.n > 0 && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\n' ||
                       s.p[s.n - 1] == '\r' || s.p[s.n - 1] == '\t'))
        s.n--;
    return s;
}

/* Reads `path` whole into out->text.  Returns 0, or -1 (message printed). */
static int
read_whole(struct output *out, const char *path)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap), *grown;

    out->path = path;
    if (!f || !buf) {
        fprintf(stderr, "parity_check: cannot read %s\n", path);
        goto fail;
    }
    for (;;) {
        size_t got = fread(buf + len, 1, cap - len, f);

        len += got;
        if (len < cap)
            break;
        if (cap >= MAX_INPUT_BYTES) {
            fprintf(stderr, "parity_check: %s is over %u bytes\n", path,
                    MAX_INPUT_BYTES);
            goto fail;
        }
        cap *= 2;
        grown = realloc(buf, cap);
        if (!grown)
            goto fail;
        buf = grown;
    }
    if (ferror(f)) {
        fprintf(stderr, "parity_check: cannot read %s\n", path);
        goto fail;
    }
    fclose(f);
    out->text = buf;
    out->len = len;
    return 0;
fail:
    if (f)
        fclose(f);
    free(buf);
    return -1;
}

/* The test reported as suite/name, or NULL. */
static struct test *
find_test(const struct output *out, struct span suite, struct span name)
{
    for (size_t i = 0; i < out->ntests; i++) {
        if (span_eq(out->tests[i].suite, suite) &&
            span_eq(out->tests[i].name, name))
            return &out->tests[i];
    }
    return NULL;
}

/* The parser's state between lines. */
enum phase { PHASE_IDLE, PHASE_OUTPUT, PHASE_RECORDS, PHASE_SUMMARY };

struct parser {
    struct output *out;
    struct span suite;
    struct test *test;
    enum phase phase;
    bool in_gate_text; /* skipping the gate's stderr lines among records */
};

/* `text` is what follows a test's " ..." up to the line's end: output the
 * test printed, then "passed" or "FAILED" when CUnit completed it. */
static void
take_result(struct parser *ps, struct span text)
{
    if (ends_with(text, "passed")) {
        ps->test->result = RESULT_PASSED;
        ps->phase = PHASE_IDLE;
    } else if (ends_with(text, "FAILED")) {
        ps->test->result = RESULT_FAILED;
        ps->phase = PHASE_RECORDS;
    } else {
        ps->phase = PHASE_OUTPUT;
    }
}

static int
start_test(struct parser *ps, struct span line)
{
    struct span rest = {line.p + 8, line.n - 8}; /* after "  Test: " */
    const char *dots = NULL;
    struct test *t;

    for (size_t i = 0; i + 4 <= rest.n; i++) {
        if (memcmp(rest.p + i, " ...", 4) == 0) {
            dots = rest.p + i;
            break;
        }
    }
    if (!dots)
        return 0; /* not CUnit's line */
    if (ps->out->ntests == MAX_TESTS) {
        fprintf(stderr, "parity_check: %s: over %d tests\n", ps->out->path,
                MAX_TESTS);
        return -1;
    }
    t = &ps->out->tests[ps->out->ntests++];
    memset(t, 0, sizeof *t);
    t->suite = ps->suite;
    t->name = (struct span){rest.p, (size_t)(dots - rest.p)};
    t->runs = -1;
    ps->test = t;
    ps->in_gate_text = false;
    take_result(ps, (struct span){dots + 4, line.n - 8 - t->name.n - 4});
    return 0;
}

/* The "  - " after FILE:LINE in a record line (digits, then it, after the
 * last ':' before it), or NULL. */
static const char *
record_separator(const char *p, const char *end)
{
    for (const char *q = p; q + 4 <= end; q++) {
        const char *d = q;

        if (memcmp(q, "  - ", 4) != 0)
            continue;
        while (d > p && d[-1] >= '0' && d[-1] <= '9')
            d--;
        if (d < q && d > p && d[-1] == ':')
            return q;
    }
    return NULL;
}

/* "    N. FILE:LINE  - CONDITION" with N the next record's number: returns
 * the length of "    N. ", or 0 when the line is not such a record (a
 * record's condition may go on over lines that look like one). */
static size_t
record_start(const struct test *t, struct span line)
{
    char want[32];
    int n = snprintf(want, sizeof want, "    %zu. ", t->nrecords + 1);

    if (n <= 0 || !starts_with(line, want))
        return 0;
    if (!record_separator(line.p + n, line.p + line.n))
        return 0;
    return (size_t)n;
}

static int
add_record(struct parser *ps, struct span line, size_t prefix_len)
{
    struct test *t = ps->test;
    const char *p = line.p + prefix_len, *end = line.p + line.n;
    const char *sep = record_separator(p, end), *colon = sep - 1;
    struct record *r;

    if (t->nrecords == MAX_RECORDS) {
        fprintf(stderr, "parity_check: %s: over %d records in one test\n",
                ps->out->path, MAX_RECORDS);
        return -1;
    }
    r = &t->records[t->nrecords++];
    while (*colon != ':') /* record_start() found FILE:DIGITS before sep */
        colon--;
    r->file = (struct span){p, (size_t)(colon - p)};
    r->line = strtol(colon + 1, NULL, 10);
    r->condition = (struct span){sep + 4, (size_t)(end - sep - 4)};
    r->is_gate = starts_with(r->condition, GATE_PREFIX);
    return 0;
}

/* A line after a record that is not a new record: the condition goes on. */
static void
continue_record(struct parser *ps, struct span line)
{
    struct record *r = &ps->test->records[ps->test->nrecords - 1];

    r->condition.n = (size_t)(line.p + line.n - r->condition.p);
}

static void
add_warning(struct parser *ps, struct span line, bool is_init)
{
    const char *q = memchr(line.p, '\'', line.n);
    const char *end = line.p + line.n;
    struct warning *w;

    if (!q || ps->out->nwarnings == MAX_SUITE_WARNINGS)
        return;
    q++;
    while (end > q && end[-1] != '\'')
        end--;
    if (end <= q)
        return;
    w = &ps->out->warnings[ps->out->nwarnings++];
    w->is_init = is_init;
    w->suite = (struct span){q, (size_t)(end - 1 - q)};
}

static void
summary_line(struct parser *ps, struct span line)
{
    char buf[256], type[16], passed[16];
    long total, ran;
    size_t n = line.n < sizeof buf - 1 ? line.n : sizeof buf - 1;

    memcpy(buf, line.p, n);
    buf[n] = '\0';
    if (sscanf(buf, " %15s %ld %ld %15s", type, &total, &ran, passed) != 4)
        return;
    if (strcmp(type, "suites") == 0)
        ps->out->summary.suites_ran = ran;
    else if (strcmp(type, "tests") == 0)
        ps->out->summary.tests_ran = ran;
    else if (strcmp(type, "asserts") == 0)
        ps->out->summary.asserts_passed = strtol(passed, NULL, 10);
}

/* "corpus runs<TAB>SUITE<TAB>TEST<TAB>N" */
static void
runs_line(struct parser *ps, struct span line)
{
    struct span f[3];
    const char *p = line.p + 12, *end = line.p + line.n;
    char num[24];
    long runs;
    struct test *t;

    for (int i = 0; i < 3; i++) {
        const char *tab = i < 2 ? memchr(p, '\t', (size_t)(end - p)) : end;

        if (!tab)
            return;
        f[i] = (struct span){p, (size_t)(tab - p)};
        p = tab + 1;
    }
    snprintf(num, sizeof num, "%.*s", (int)f[2].n, f[2].p);
    runs = strtol(num, NULL, 10);
    ps->out->has_runs = true;
    t = find_test(ps->out, f[0], f[1]);
    if (t)
        t->runs = runs;
    else
        ps->out->stray_runs += runs;
}

/* A line after "FAILED": a new record, or the last one's condition going
 * on.  When stderr was captured with stdout, the gate's lines can come
 * between records: from a "leakgate: " line that does not continue a
 * record of the gate's, lines up to the next record are skipped. */
static int
records_line(struct parser *ps, struct span line)
{
    size_t prefix_len = record_start(ps->test, line);
    size_t n = ps->test->nrecords;

    if (prefix_len > 0) {
        ps->in_gate_text = false;
        return add_record(ps, line, prefix_len);
    }
    if (starts_with(line, GATE_PREFIX) &&
        (n == 0 || !ps->test->records[n - 1].is_gate))
        ps->in_gate_text = true;
    if (n > 0 && !ps->in_gate_text)
        continue_record(ps, line);
    return 0;
}

static int
parse_line(struct parser *ps, struct span line)
{
    if (starts_with(line, "Suite: ")) {
        ps->suite = (struct span){line.p + 7, line.n - 7};
        ps->phase = PHASE_IDLE;
    } else if (starts_with(line, "  Test: ")) {
        return start_test(ps, line);
    } else if (starts_with(line, "WARNING - Suite initialization failed")) {
        add_warning(ps, line, true);
        ps->phase = PHASE_IDLE;
    } else if (starts_with(line, "WARNING - Suite cleanup failed")) {
        add_warning(ps, line, false);
        ps->phase = PHASE_IDLE;
    } else if (starts_with(line, "Run Summary:")) {
        ps->out->summary.seen = true;
        ps->phase = PHASE_SUMMARY;
    } else if (starts_with(line, "corpus runs\t")) {
        runs_line(ps, line);
        ps->phase = PHASE_IDLE;
    } else if (ps->phase == PHASE_OUTPUT) {
        take_result(ps, line);
    } else if (ps->phase == PHASE_RECORDS) {
        return records_line(ps, line);
    } else if (ps->phase == PHASE_SUMMARY) {
        summary_line(ps, line);
    }
    return 0;
}

/* Reads and parses one run's output.  Returns 0, or -1 (message printed). */
static int
parse_output(struct output *out, const char *path)
{
    struct parser ps = {out, {"", 0}, NULL, PHASE_IDLE, false};
    const char *p, *end;

    memset(out, 0, sizeof *out);
    if (read_whole(out, path) < 0)
        return -1;
    out->tests = calloc(MAX_TESTS, sizeof *out->tests);
    if (!out->tests)
        return -1;
    p = out->text;
    end = out->text + out->len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        struct span line = {p, (size_t)((nl ? nl : end) - p)};

        if (line.n > 0 && line.p[line.n - 1] == '\r')
            line.n--;
        if (parse_line(&ps, line) < 0)
            return -1;
        p = nl ? nl + 1 : end;
    }
    for (size_t i = 0; i < out->ntests; i++) {
        for (size_t k = 0; k < out->tests[i].nrecords; k++)
            out->tests[i].records[k].condition =
                trim_right(out->tests[i].records[k].condition);
    }
    return 0;
}

/* The number of runs the options allow for suite/name (1 unless a --runs
 * glob matches). */
static long
allowed_runs(const struct options *opts, const struct test *t)
{
    char key[512];

    snprintf(key, sizeof key, "%.*s/%.*s", (int)t->suite.n, t->suite.p,
             (int)t->name.n, t->name.p);
    for (size_t i = 0; i < opts->nrules; i++) {
        if (fnmatch(opts->rules[i].glob, key, 0) == 0)
            return opts->rules[i].runs;
    }
    return 1;
}

/* Every test once in `out` (CUnit's reports and the run counts). */
static void
check_once(const struct output *out,
           const char *what,
           const struct options *opts,
           bool is_gated)
{
    for (size_t i = 0; i < out->ntests; i++) {
        const struct test *t = &out->tests[i];
        long want = is_gated ? allowed_runs(opts, t) : 1;

        if (find_test(out, t->suite, t->name) != t) {
            differ("%s run: CUnit reports %.*s/%.*s twice (it ran twice in "
                   "one process)",
                   what, (int)t->suite.n, t->suite.p, (int)t->name.n,
                   t->name.p);
            continue; /* its run count is the first report's */
        }
        if (opts->run_counts && out->has_runs && t->runs != want)
            differ("%s run: %.*s/%.*s ran %ld times in one process, "
                   "expected %ld",
                   what, (int)t->suite.n, t->suite.p, (int)t->name.n, t->name.p,
                   t->runs < 0 ? 0 : t->runs, want);
    }
    if (opts->run_counts && !out->has_runs)
        differ("%s run: no \"corpus runs\" lines (%s): the program did not "
               "finish, or does not count its tests' runs",
               what, out->path);
    if (out->stray_runs > 0)
        differ("%s run: %ld test runs that CUnit did not report", what,
               out->stray_runs);
    if (!out->summary.seen)
        differ("%s run: no CUnit run summary (%s): the run did not finish",
               what, out->path);
}

static void
print_record(const char *what, const struct record *r)
{
    printf("  %s: %.*s:%ld  - %.*s\n", what, (int)r->file.n, r->file.p, r->line,
           (int)r->condition.n, r->condition.p);
}

/* The test's records that are not the gate's, copied to `out`. */
static size_t
own_records(const struct record **out, const struct test *t)
{
    size_t n = 0;

    for (size_t k = 0; k < t->nrecords; k++) {
        if (!t->records[k].is_gate)
            out[n++] = &t->records[k];
    }
    return n;
}

static const char *
result_name(enum result r)
{
    return r == RESULT_PASSED   ? "passed"
           : r == RESULT_FAILED ? "FAILED"
                                : "no result";
}

/* One test's result and records, the gate's own removed. */
static void
compare_test(const struct test *plain, const struct test *gated)
{
    static const struct record *pr[MAX_RECORDS], *gr[MAX_RECORDS];
    size_t np = own_records(pr, plain), ng = own_records(gr, gated);
    enum result pres = plain->result, gres = gated->result;
    bool same = np == ng;

    if (gres == RESULT_FAILED && ng == 0 && gated->nrecords > 0)
        gres = RESULT_PASSED; /* failed by the gate's records only */
    for (size_t k = 0; same && k < np; k++) {
        same = span_eq(pr[k]->file, gr[k]->file) &&
               pr[k]->line == gr[k]->line &&
               span_eq(pr[k]->condition, gr[k]->condition);
    }
    if (pres != gres)
        differ("%.*s/%.*s: %s in the plain run, %s in the gated run (its "
               "own records: %zu)",
               (int)plain->suite.n, plain->suite.p, (int)plain->name.n,
               plain->name.p, result_name(pres), result_name(gres), ng);
    if (!same) {
        differ("%.*s/%.*s: different assertion records (plain %zu, gated "
               "%zu, the gate's own left out)",
               (int)plain->suite.n, plain->suite.p, (int)plain->name.n,
               plain->name.p, np, ng);
        for (size_t k = 0; k < np; k++)
            print_record("plain", pr[k]);
        for (size_t k = 0; k < ng; k++)
            print_record("gated", gr[k]);
    }
}

/* Same tests in the same order, each with the same outcome. */
static void
compare_tests(const struct output *plain, const struct output *gated)
{
    bool order_told = false;

    for (size_t i = 0; i < plain->ntests; i++) {
        const struct test *p = &plain->tests[i];
        const struct test *g = find_test(gated, p->suite, p->name);

        for (size_t k = 0; k < p->nrecords; k++) {
            if (p->records[k].is_gate)
                differ("plain run: %.*s/%.*s has a record of the gate's: "
                       "the plain program is gated",
                       (int)p->suite.n, p->suite.p, (int)p->name.n, p->name.p);
        }
        if (!g) {
            differ("%.*s/%.*s: in the plain run only", (int)p->suite.n,
                   p->suite.p, (int)p->name.n, p->name.p);
            continue;
        }
        if (!order_told && (i >= gated->ntests || &gated->tests[i] != g)) {
            differ("%.*s/%.*s: not in the plain run's order", (int)p->suite.n,
                   p->suite.p, (int)p->name.n, p->name.p);
            order_told = true;
        }
        compare_test(p, g);
    }
    for (size_t i = 0; i < gated->ntests; i++) {
        const struct test *g = &gated->tests[i];

        if (!find_test(plain, g->suite, g->name))
            differ("%.*s/%.*s: in the gated run only", (int)g->suite.n,
                   g->suite.p, (int)g->name.n, g->name.p);
    }
}

static bool
has_warning(const struct output *out, const struct warning *w)
{
    for (size_t i = 0; i < out->nwarnings; i++) {
        if (out->warnings[i].is_init == w->is_init &&
            span_eq(out->warnings[i].suite, w->suite))
            return true;
    }
    return false;
}

/* Does the gate's stderr say it failed the suite's own window? */
static bool
gate_failed_suite(const struct output *gate_err, struct span suite)
{
    char want[512];
    const char *p, *end;
    int n;

    if (!gate_err)
        return false;
    n = snprintf(want, sizeof want, "leakgate: FAIL %.*s/[suite]", (int)suite.n,
                 suite.p);
    if (n <= 0 || (size_t)n >= sizeof want)
        return false;
    p = gate_err->text;
    end = gate_err->text + gate_err->len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        struct span line = {p, (size_t)((nl ? nl : end) - p)};

        if (starts_with(line, want))
            return true;
        p = nl ? nl + 1 : end;
    }
    return false;
}

static void
compare_warnings(const struct output *plain,
                 const struct output *gated,
                 const struct output *gate_err)
{
    for (size_t i = 0; i < plain->nwarnings; i++) {
        const struct warning *w = &plain->warnings[i];

        if (!has_warning(gated, w))
            differ("suite %.*s: its %s failed in the plain run only",
                   (int)w->suite.n, w->suite.p,
                   w->is_init ? "initialization" : "cleanup");
    }
    for (size_t i = 0; i < gated->nwarnings; i++) {
        const struct warning *w = &gated->warnings[i];

        if (has_warning(plain, w))
            continue;
        if (!w->is_init && gate_failed_suite(gate_err, w->suite))
            continue; /* the gate's verdict on the suite's window */
        differ("suite %.*s: its %s failed in the gated run only%s",
               (int)w->suite.n, w->suite.p,
               w->is_init ? "initialization" : "cleanup",
               gate_err ? "" : " (no --gate-stderr to tell the gate's)");
    }
}

static void
compare_summaries(const struct summary *p, const struct summary *g)
{
    if (!p->seen || !g->seen)
        return; /* told by check_once */
    if (p->suites_ran != g->suites_ran)
        differ("suites run: %ld plain, %ld gated", p->suites_ran,
               g->suites_ran);
    if (p->tests_ran != g->tests_ran)
        differ("tests run: %ld plain, %ld gated", p->tests_ran, g->tests_ran);
    if (p->asserts_passed != g->asserts_passed)
        differ("passed assertions: %ld plain, %ld gated (a test that runs "
               "again passes its assertions again)",
               p->asserts_passed, g->asserts_passed);
}

static int
usage(void)
{
    fputs("usage: parity_check [--gate-stderr FILE] [--runs GLOB=N]... "
          "[--no-run-counts] PLAIN GATED\n",
          stderr);
    return 2;
}

static int
parse_args(struct options *opts, const char **files, int argc, char **argv)
{
    int nfiles = 0;

    opts->run_counts = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--gate-stderr") == 0 && i + 1 < argc) {
            opts->gate_stderr = argv[++i];
        } else if (strcmp(a, "--runs") == 0 && i + 1 < argc) {
            char *eq = strrchr(argv[++i], '=');
            char *end = NULL;

            if (!eq || opts->nrules == MAX_RUN_RULES)
                return -1;
            *eq = '\0';
            opts->rules[opts->nrules].glob = argv[i];
            opts->rules[opts->nrules].runs = strtol(eq + 1, &end, 10);
            if (!*(eq + 1) || *end || opts->rules[opts->nrules].runs < 1)
                return -1;
            opts->nrules++;
        } else if (strcmp(a, "--no-run-counts") == 0) {
            opts->run_counts = false;
        } else if (a[0] == '-' || nfiles == 2) {
            return -1;
        } else {
            files[nfiles++] = a;
        }
    }
    return nfiles == 2 ? 0 : -1;
}

int
main(int argc, char **argv)
{
    static struct output plain, gated, gate_err;
    struct options opts = {0};
    const char *files[2];
    bool have_err = false;

    if (parse_args(&opts, files, argc, argv) < 0)
        return usage();
    if (parse_output(&plain, files[0]) < 0 ||
        parse_output(&gated, files[1]) < 0)
        return 2;
    if (opts.gate_stderr) {
        if (read_whole(&gate_err, opts.gate_stderr) < 0)
            return 2;
        have_err = true;
    }
    check_once(&plain, "plain", &opts, false);
    check_once(&gated, "gated", &opts, true);
    compare_tests(&plain, &gated);
    compare_warnings(&plain, &gated, have_err ? &gate_err : NULL);
    compare_summaries(&plain.summary, &gated.summary);
    printf("parity: %zu tests compared, %zu difference%s\n", plain.ntests,
           differences, differences == 1 ? "" : "s");
    free(plain.text);
    free(plain.tests);
    free(gated.text);
    free(gated.tests);
    free(gate_err.text);
    return differences > 0 ? 1 : 0;
}
