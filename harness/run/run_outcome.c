/* SPDX-License-Identifier: MIT */
/*
 * run_outcome: what `leakgate run` concludes.  Takes the records the
 * interposer sent (run_proto.h) into struct leakgate_run, then decides the
 * exit status of SPEC §5 and the diagnostic lines from them and from how
 * the program ended: a signal or an exit() while a test ran fails the run
 * and names the test; a program that never ran a CUnit test is exit 3
 * with the likely reason (static binary, CUnit linked statically, not a
 * CUnit program), from run_elf.c.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "error.h"
#include "outputs.h"
#include "report.h"
#include "run_proto.h"
#include "util.h"

static int
replace(char **slot, const char *value)
{
    char *copy = value ? leakgate_util__strdup(value) : NULL;

    if (value && !copy)
        return leakgate_error__set(LEAKGATE_ENOMEM, "record");
    leakgate_util__free(*slot);
    *slot = copy;
    return 0;
}

static void
clear_running(struct leakgate_run *r)
{
    for (size_t i = 0; i < 3; i++)
        replace(&r->running[i], NULL);
}

/* The earlier record of suite/test, which a revised record replaces. */
static struct leakgate_run_case *
earlier_case(struct leakgate_run *r, const char *suite, const char *test)
{
    for (size_t i = r->ncases; i-- > 0;) {
        struct leakgate_run_case *c = &r->cases[i];

        if (c->suite && c->test && strcmp(c->suite, suite) == 0 &&
            strcmp(c->test, test) == 0)
            return c;
    }
    return NULL;
}

static int
fill_case(struct leakgate_run_case *c, char **f)
{
    memset(c, 0, sizeof *c);
    c->status = leakgate_records__status_parse(f[3]);
    c->failed = strcmp(f[4], "1") == 0;
    c->skipped = strcmp(f[6], "s") == 0;
    c->waiting = strcmp(f[6], "w") == 0;
    c->seconds = strtod(f[5], NULL);
    if (replace(&c->suite, f[1]) < 0 || replace(&c->test, f[2]) < 0 ||
        replace(&c->pieces.junit_case, f[7]) < 0 ||
        replace(&c->pieces.json_test, f[8]) < 0) {
        leakgate_run__case_dispose(c);
        return LEAKGATE_ENOMEM;
    }
    return 0;
}

/* Record f as a case (*out: the case filled). */
static int
take_case(struct leakgate_run *r,
          char **f,
          bool revised,
          const struct leakgate_run_case **out)
{
    struct leakgate_run_case *c = revised ? earlier_case(r, f[1], f[2]) : NULL;
    int rc;

    if (c) { /* in its place: JUnit and JSON keep the run's order */
        leakgate_run__case_dispose(c);
        *out = c;
        return fill_case(c, f);
    }
    if (r->ncases == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct leakgate_run_case *p =
            leakgate_util__realloc(r->cases, cap * sizeof *p);

        if (!p)
            return leakgate_error__set(LEAKGATE_ENOMEM, "records");
        r->cases = p;
        r->cap = cap;
    }
    c = &r->cases[r->ncases];
    rc = fill_case(c, f);
    if (rc < 0)
        return rc;
    *out = c;
    r->ncases++;
    if (r->running[0] && strcmp(r->running[0], f[1]) == 0 &&
        strcmp(r->running[1], f[2]) == 0)
        clear_running(r);
    return 0;
}

static int
take_planned(struct leakgate_run *r, const char *suite, const char *test)
{
    if (r->nplanned + 2 > r->capplanned) {
        size_t cap = r->capplanned ? r->capplanned * 2 : 128;
        char **p = leakgate_util__realloc(r->planned, cap * sizeof *p);

        if (!p)
            return leakgate_error__set(LEAKGATE_ENOMEM, "records");
        r->planned = p;
        r->capplanned = cap;
    }
    r->planned[r->nplanned] = leakgate_util__strdup(suite);
    r->planned[r->nplanned + 1] = leakgate_util__strdup(test);
    if (!r->planned[r->nplanned] || !r->planned[r->nplanned + 1]) {
        leakgate_util__free(r->planned[r->nplanned]);
        leakgate_util__free(r->planned[r->nplanned + 1]);
        return leakgate_error__set(LEAKGATE_ENOMEM, "records");
    }
    r->nplanned += 2;
    return 0;
}

static int
take_error(struct leakgate_run *r, char **f)
{
    if (r->error_status)
        return 0; /* the first error is the cause */
    r->error_status = strcmp(f[1], "2") == 0 ? 2 : 3;
    return replace(&r->error_text, f[2]);
}

int
leakgate_run__take_record(struct leakgate_run *r, char *line)
{
    char *f[LEAKGATE_RUN_FIELDS_MAX];
    size_t n = leakgate_records__split(f, LEAKGATE_RUN_FIELDS_MAX, line);
    char type = '?';
    int rc = 0;

    if (strlen(f[0]) == 1)
        type = f[0][0];
    if (type == 'H')
        r->hello = true;
    else if (type == 'B')
        r->began = r->in_run = true;
    else if (type == 'L')
        r->listed = true;
    else if (type == 'P' && n >= 3)
        rc = take_planned(r, f[1], f[2]);
    else if (type == 'D' && n >= 2) {
        r->in_run = false;
        r->failure_records += strtoul(f[1], NULL, 10);
        clear_running(r);
    } else if (type == 'S' && n >= 4) {
        for (size_t i = 0; i < 3 && rc == 0; i++)
            rc = replace(&r->running[i], f[i + 1]);
        leakgate_outputs__started(r->outputs, f[1], f[2], f[3]);
    } else if (type == 'N' && n >= 3) {
        rc = replace(&r->junit_env, f[1]);
        if (rc == 0)
            rc = replace(&r->json_env, f[2]);
        if (rc == 0 && r->outputs)
            rc = leakgate_outputs__env(r->outputs, f[2], f[1]);
    } else if (type == 'V' && n >= 9) {
        const struct leakgate_run_case *c = NULL;

        rc = take_case(r, f, n >= 10 && strcmp(f[9], "r") == 0, &c);
        /* The shared outputs' journals: what a linked binary journals. */
        if (rc == 0 && r->outputs)
            rc = leakgate_run__journal_case(r->outputs, c);
    } else if (type == 'E' && n >= 3) {
        rc = take_error(r, f);
    }
    return rc;
}

/* ---- deciding ----------------------------------------------------------- */

static int say(struct leakgate_run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
say(struct leakgate_run *r, const char *fmt, ...)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char **m =
        leakgate_util__realloc(r->messages, (r->nmessages + 1) * sizeof *m);
    va_list ap;

    if (!m)
        return leakgate_error__set(LEAKGATE_ENOMEM, "message");
    r->messages = m;
    va_start(ap, fmt);
    leakgate_buf__vprintf(&b, fmt, ap);
    va_end(ap);
    m[r->nmessages] = leakgate_buf__take(&b);
    if (!m[r->nmessages])
        return leakgate_error__set(LEAKGATE_ENOMEM, "message");
    r->nmessages++;
    return 0;
}

/* "died of SIGSEGV (Segmentation fault)" or "exited with status N". */
static void
put_ending(struct leakgate_buf *b, int ws)
{
    if (WIFSIGNALED(ws)) {
        const char *abbrev = sigabbrev_np(WTERMSIG(ws));

        if (abbrev)
            leakgate_buf__printf(b, "died of SIG%s (%s)", abbrev,
                                 strsignal(WTERMSIG(ws)));
        else
            leakgate_buf__printf(b, "died of signal %d", WTERMSIG(ws));
    } else {
        leakgate_buf__printf(b, "exited with status %d", WEXITSTATUS(ws));
    }
}

static void
put_where(struct leakgate_buf *b, const struct leakgate_run *r)
{
    const char *const *run = (const char *const *)r->running;

    if (r->in_run && run[0] && strcmp(run[2], "test") == 0)
        leakgate_buf__printf(b, "in %s/%s", run[0], run[1]);
    else if (r->in_run && run[0])
        leakgate_buf__printf(b, "in the %s function of suite %s (%s/%s)",
                             run[2], run[0], run[0], run[1]);
    else if (r->in_run)
        leakgate_buf__puts(b, "during its CUnit run, between tests");
    else if (r->began)
        leakgate_buf__puts(b, "after its CUnit run had returned");
    else
        leakgate_buf__puts(b, "before running any CUnit test");
}

/* The program died, or exited while CUnit was running: status 1, and a
 * failed record for the test it was in. */
static int
abnormal_end(struct leakgate_run *r)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    bool in_test = r->in_run && r->running[0];
    int rc;

    leakgate_buf__puts(&b, "the program ");
    put_ending(&b, r->wait_status);
    leakgate_buf__puts(&b, " ");
    put_where(&b, r);
    if (WIFEXITED(r->wait_status) && in_test &&
        strcmp(r->running[2], "test") == 0)
        leakgate_buf__puts(&b, " (the test called exit())");
    if (b.failed)
        return leakgate_error__set(LEAKGATE_ENOMEM, "message");
    rc = say(r, "%s", b.ptr);
    if (rc == 0 && in_test)
        rc = leakgate_run__crash_case(r, b.ptr);
    if (rc == 0 && r->running[0] && r->running[1]) {
        struct leakgate_buf why = LEAKGATE_BUF_INIT;

        leakgate_buf__puts(&why, "the run stopped at ");
        leakgate_util__name_escape(&why, r->running[0]);
        leakgate_buf__puts(&why, "/");
        leakgate_util__name_escape(&why, r->running[1]);
        leakgate_buf__puts(&why, " (the program ");
        put_ending(&why, r->wait_status);
        leakgate_buf__puts(&why, ")");
        rc = why.failed ? leakgate_error__set(LEAKGATE_ENOMEM, "message")
                        : leakgate_run__not_run_cases(r, why.ptr);
        leakgate_buf__dispose(&why);
    }
    leakgate_buf__dispose(&b);
    r->status = 1;
    return rc;
}

static int
no_test_ran(struct leakgate_run *r)
{
    const char *p = r->program;
    struct leakgate_run_elf elf;
    const struct leakgate_run_elf *e = &elf;

    r->status = 3;
    leakgate_run__inspect_elf(&elf, p);
    if (e->is_elf && !e->is_dynamic)
        return say(r,
                   "%s is statically linked: nothing can be preloaded into "
                   "it, so no CUnit test can be gated; link it dynamically "
                   "(with the shared libcunit), or link it with "
                   "leakgate::cunit",
                   p);
    if (!r->hello)
        return say(r,
                   "leakgate's interposer was not loaded into %s (see the "
                   "dynamic linker's message above, if any): no CUnit test "
                   "could be gated",
                   p);
    if (e->is_elf && !e->needs_cunit && e->has_cunit_symbols)
        return say(r,
                   "%s has CUnit linked statically (it defines CUnit's "
                   "functions and loads no libcunit), so leakgate cannot "
                   "interpose CUnit's run functions: link it with the "
                   "shared libcunit (-lcunit), or link it with "
                   "leakgate::cunit",
                   p);
    if (e->is_elf && !e->needs_cunit)
        return say(r,
                   "%s is not a CUnit program: it ran no CUnit test and "
                   "loads no libcunit (if CUnit is linked statically into "
                   "it, nothing can be interposed: link the shared libcunit)",
                   p);
    return say(r,
               "%s ran no CUnit test: it called none of CU_basic_run_tests, "
               "CU_automated_run_tests, CU_console_run_tests, "
               "CU_run_all_tests, CU_run_suite, CU_run_test (it exited "
               "with status %d)",
               p, WEXITSTATUS(r->wait_status));
}

static bool
any_failed(const struct leakgate_run *r)
{
    for (size_t i = 0; i < r->ncases; i++) {
        if (r->cases[i].failed)
            return true;
    }
    return r->failure_records > 0;
}

/* The windows judged: a verdict that passed or failed. */
static size_t
judged(const struct leakgate_run *r)
{
    size_t n = 0;

    for (size_t i = 0; i < r->ncases; i++)
        n += r->cases[i].status == LEAKGATE_STATUS_PASS ||
             r->cases[i].status == LEAKGATE_STATUS_FAIL;
    return n;
}

/* The test windows judged, suite windows left out. */
static size_t
tests_judged(const struct leakgate_run *r)
{
    size_t n = 0;

    for (size_t i = 0; i < r->ncases; i++)
        n += (r->cases[i].status == LEAKGATE_STATUS_PASS ||
              r->cases[i].status == LEAKGATE_STATUS_FAIL) &&
             strcmp(r->cases[i].test, "[suite]") != 0;
    return n;
}

/* Those leakgate could not judge (never a pass). */
static size_t
unjudged(const struct leakgate_run *r)
{
    size_t n = 0;

    for (size_t i = 0; i < r->ncases; i++)
        n += r->cases[i].status == LEAKGATE_STATUS_NOT_JUDGED &&
             !r->cases[i].skipped;
    return n;
}

size_t
leakgate_run_failures(const leakgate_run *run)
{
    size_t n = 0;

    for (size_t i = 0; i < run->ncases; i++)
        n += run->cases[i].status == LEAKGATE_STATUS_FAIL;
    return n;
}

/* The run's last count (report.h). */
static int
say_judged(struct leakgate_run *r)
{
    char line[LEAKGATE_REPORT_JUDGED_SIZE];

    return say(r, "%s",
               leakgate_report__judged(line, judged(r),
                                       leakgate_run_failures(r), unjudged(r)));
}

int
leakgate_run__decide(struct leakgate_run *r)
{
    bool died = WIFSIGNALED(r->wait_status);
    bool early = WIFEXITED(r->wait_status) && r->in_run;
    int rc = 0;

    if (r->error_status) {
        r->status = r->error_status;
        /* What was judged still counts; the reason comes last. */
        if (r->began && r->ncases > 0)
            rc = say_judged(r);
        return rc == 0 ? say(r, "%s", r->error_text ? r->error_text : "") : rc;
    }
    if (r->opts.list && r->listed)
        return 0;
    if (died || early)
        rc = abnormal_end(r);
    else if (!r->began)
        return no_test_ran(r);
    else
        r->status = any_failed(r) ? 1 : 0;
    if (rc == 0 && r->began && r->ncases == 0 && !r->crash)
        rc = say(r, "the program's CUnit run had no test to run (an empty "
                    "registry, or --filter matched nothing)");
    if (rc == 0 && r->began)
        rc = say_judged(r);
    /* Exit 0 means measured and within the limits. */
    if (rc == 0 && r->status == 0 && judged(r) == 0) {
        r->status = 3;
        rc = say(r, "the gate could not measure: no window was judged: not "
                    "a pass");
    }
    /* Only suites' init and cleanup were judged, no --filter chose them:
     * no test ran (suites without tests, or tests all inactive). */
    if (rc == 0 && r->status == 0 && tests_judged(r) == 0 && !r->opts.filter) {
        r->status = 3;
        rc = say(r, "the gate could not measure: no test ran (only suites' "
                    "init and cleanup were judged: suites without tests, or "
                    "every test inactive): not a pass");
    }
    return rc;
}
