/* SPDX-License-Identifier: MIT */
/* outputs: the shared --junit FILE of a run merged from per-process
 * journals: every window once, a dead process's running window as a
 * killed error (a live one's as unfinished; a finished window never),
 * torn lines ignored, stale runs removed
 * (and live ones kept), an unwritable store named. */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "outputs.h"
#include "report.h"
#include "run_proto.h"
#include "util.h"
#include "verdict.h"

const char *const unit_suite = "outputs";

/* The JUnit environment of every journal. */
#define PROPS "  <properties>\n  </properties>\n"

static char dir[64];

static void
fresh_dir(const char *run_id)
{
    char cmd[128];

    if (dir[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CU_ASSERT_EQUAL(system(cmd), 0);
    }
    snprintf(dir, sizeof dir, "/tmp/leakgate-outputs-XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    setenv(LEAKGATE_OUTPUTS_RUN_ID_ENV, run_id, 1);
}

/* dir/a, or dir/a/b. */
static char *
path_in(const char *a, const char *b)
{
    struct leakgate_buf p = LEAKGATE_BUF_INIT;

    leakgate_buf__printf(&p, "%s/%s%s%s", dir, a, b ? "/" : "", b ? b : "");
    return leakgate_buf__take(&p);
}

/* The JSON test object of a window (status pass or fail). */
static char *
window_json(const char *suite, const char *test, leakgate_status status)
{
    struct leakgate_verdict v;
    struct leakgate_buf name = LEAKGATE_BUF_INIT, json = LEAKGATE_BUF_INIT;

    memset(&v, 0, sizeof v);
    leakgate_buf__printf(&name, "%s/%s", suite, test);
    v.suite = (char *)(uintptr_t)suite;
    v.test = (char *)(uintptr_t)test;
    v.name = name.ptr;
    v.status = status;
    v.measured = true;
    v.report = (char *)(uintptr_t)(status == LEAKGATE_STATUS_FAIL
                                       ? "leakgate: FAIL x\n"
                                       : "");
    v.settings.total_unlimited = true;
    leakgate_report__json_test(&json, &v);
    leakgate_buf__dispose(&name);
    return leakgate_buf__take(&json);
}

static void
put_record(struct leakgate_buf *b,
           const char *type,
           const char *a,
           const char *c,
           const char *d)
{
    leakgate_buf__puts(b, type);
    for (const char *const *f = (const char *const[]){a, c, d, NULL}; *f; f++) {
        leakgate_buf__puts(b, "\t");
        leakgate_records__put_field(b, *f);
    }
    leakgate_buf__puts(b, "\n");
}

/* Its JUnit testcase. */
static char *
window_junit(const char *json_of)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    /* The pieces are composed as journaled: any text marks which. */
    leakgate_buf__printf(&b, "    <testcase from=\"%s\"/>\n", json_of);
    return leakgate_buf__take(&b);
}

static void
put_window(struct leakgate_buf *b,
           const char *suite,
           const char *test,
           leakgate_status status)
{
    bool fail = status == LEAKGATE_STATUS_FAIL;
    char *json = window_json(suite, test, status);
    struct leakgate_buf name = LEAKGATE_BUF_INIT;
    char *junit;

    leakgate_buf__printf(&name, "%s/%s %s", suite, test,
                         fail ? "fail" : "pass");
    junit = window_junit(name.ptr);
    leakgate_buf__puts(b, "V");
    for (const char *const *f =
             (const char *const[]){suite, test, fail ? "fail" : "pass",
                                   fail ? "5" : "3", fail ? "1" : "0", "0",
                                   "0.5", json, junit, NULL};
         *f; f++) {
        leakgate_buf__puts(b, "\t");
        leakgate_records__put_field(b, *f);
    }
    leakgate_buf__puts(b, "\n");
    free(json);
    free(junit);
    leakgate_buf__dispose(&name);
}

/* Another process's lines, appended to the journal of run directory
 * rundir as it writes them: each line of text framed "\nKEY\tLEN\t...\n";
 * a last line without its newline is a torn write (its LEN says more). */
static void
write_journal(const char *rundir,
              long pid,
              unsigned long long start,
              const char *text)
{
    struct leakgate_buf p = LEAKGATE_BUF_INIT, b = LEAKGATE_BUF_INIT;
    FILE *f;

    leakgate_buf__printf(&p, "%s/journal", rundir);
    CU_ASSERT_EQUAL_FATAL(leakgate_files__mkdirs(rundir, "directory"), 0);
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);

        leakgate_buf__printf(&b, "\n%020llu-%ld\t%zu\t%.*s%s", start, pid,
                             nl ? len : len + 40, (int)len, line,
                             nl ? "\n" : "");
        line += nl ? len + 1 : len;
    }
    f = fopen(p.ptr, "a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(b.ptr ? b.ptr : "", 1, b.len, f), b.len);
    CU_ASSERT_EQUAL(fclose(f), 0);
    leakgate_buf__dispose(&p);
    leakgate_buf__dispose(&b);
}

/* The same journal in both stores of open_own() (j.xml, report/). */
static void
write_journals(const char *run,
               long pid,
               unsigned long long start,
               const char *text)
{
    char *a = path_in(".j.xml.leakgate", run);
    char *b = path_in("report/.leakgate", run);

    write_journal(a, pid, start, text);
    write_journal(b, pid, start, text);
    free(a);
    free(b);
}

/* A pid that no process has any more. */
static long
dead_pid(void)
{
    pid_t pid = fork();

    if (pid == 0)
        _exit(0);
    CU_ASSERT_FATAL(pid > 0);
    waitpid(pid, NULL, 0);
    return (long)pid;
}

/* The start time of a running process (field 22 of /proc/PID/stat). */
static unsigned long long
start_of(long pid)
{
    char path[64], text[1024];
    unsigned long long start = 0;
    FILE *f;
    size_t n;
    const char *p;

    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    p = strrchr(text, ')');
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(sscanf(p + 1,
                           " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u "
                           "%*u %*d %*d %*d %*d %*d %*d %llu",
                           &start),
                    1);
    return start;
}

static char *
read_all(const char *path)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    CU_ASSERT_EQUAL(leakgate_files__read(&b, path, 1 << 24, "file"), 0);
    return leakgate_buf__take(&b);
}

static size_t
count(const char *text, const char *needle)
{
    size_t n = 0;

    for (const char *p = text ? strstr(text, needle) : NULL; p;
         p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The banner of the merged dir/report/index.html. */
static void
check_index(const char *banner)
{
    char *path = path_in("report", "index.html");
    char *html = read_all(path);

    CU_ASSERT_TRUE(html && strstr(html, banner));
    free(path);
    free(html);
}

/* This process's outputs for dir/j.xml and dir/report, with one env
 * and window s/t. */
static struct leakgate_outputs *
open_own(void)
{
    struct leakgate_outputs *os = NULL;
    char *junit = path_in("j.xml", NULL);
    char *report = path_in("report", NULL);
    char *json = window_json("s", "t", LEAKGATE_STATUS_PASS);
    char *junit_of_own = window_junit("s/t pass");
    struct leakgate_report_piece piece;

    CU_ASSERT_EQUAL(leakgate_outputs__open(&os, junit, NULL, report), 0);
    CU_ASSERT_PTR_NOT_NULL(os);
    CU_ASSERT_EQUAL(leakgate_outputs__env(os, "{}", PROPS), 0);
    leakgate_outputs__started(os, "s", "t", "test");
    memset(&piece, 0, sizeof piece);
    piece.suite = "s";
    piece.status = LEAKGATE_STATUS_PASS;
    piece.json_test = json;
    piece.junit_case = junit_of_own;
    CU_ASSERT_EQUAL(leakgate_outputs__window(os, "s", "t", &piece, 3), 0);
    /* The same record again is not journaled twice. */
    CU_ASSERT_EQUAL(leakgate_outputs__window(os, "s", "t", &piece, 3), 0);
    free(junit);
    free(report);
    free(json);
    free(junit_of_own);
    return os;
}

static void
test_outputs__shared_names(void)
{
    fresh_dir("names");
    CU_ASSERT_TRUE(leakgate_outputs__is_shared("junit.xml"));
    CU_ASSERT_TRUE(leakgate_outputs__is_shared("/x/y/results.json"));
    CU_ASSERT_FALSE(leakgate_outputs__is_shared("results/"));
    CU_ASSERT_FALSE(leakgate_outputs__is_shared("r-%p.json"));
    CU_ASSERT_FALSE(leakgate_outputs__is_shared("r-%h.json"));
    CU_ASSERT_FALSE(leakgate_outputs__is_shared(dir));
    CU_ASSERT_FALSE(leakgate_outputs__is_shared(NULL));
    CU_ASSERT_FALSE(leakgate_outputs__is_shared(""));
}

static void
test_outputs__every_window_once(void)
{
    struct leakgate_outputs *os;
    struct leakgate_buf other = LEAKGATE_BUF_INIT;
    char *junit, *xml;

    fresh_dir("once");
    os = open_own();
    /* A finished process of the run: its own test, the suite window
     * both measured (failed there: a failure wins), and its first record
     * of u replaced by its last. */
    put_record(&other, "N", "{}", PROPS, NULL);
    put_window(&other, "s", "u", LEAKGATE_STATUS_FAIL);
    put_window(&other, "s", "[suite]", LEAKGATE_STATUS_FAIL);
    put_window(&other, "s", "u", LEAKGATE_STATUS_PASS);
    put_record(&other, "D", NULL, NULL, NULL);
    write_journals("run-id-once", dead_pid(), 1, other.ptr);
    CU_ASSERT_EQUAL(leakgate_outputs__merge(os, NULL), 0);
    junit = path_in("j.xml", NULL);
    xml = read_all(junit);
    /* The testcases are the pieces the processes journaled. */
    CU_ASSERT_EQUAL(count(xml, "<testcase "), 3);
    CU_ASSERT_EQUAL(count(xml, "<testcase from=\"s/t pass\"/>"), 1);
    CU_ASSERT_EQUAL(count(xml, "<testcase from=\"s/u pass\"/>"), 1);
    CU_ASSERT_EQUAL(count(xml, "<testcase from=\"s/[suite] fail\"/>"), 1);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(xml, "tests=\"3\" failures=\"1\" errors=\"0\""));
    CU_ASSERT_EQUAL(count(xml, "<error"), 0);
    check_index("1 of 3 windows over the limits · 2 passed · 0 not judged");
    leakgate_outputs__free(os);
    leakgate_buf__dispose(&other);
    free(junit);
    free(xml);
}

static void
test_outputs__killed_window_is_an_error(void)
{
    struct leakgate_outputs *os;
    struct leakgate_buf dead = LEAKGATE_BUF_INIT, live = LEAKGATE_BUF_INIT;
    char *junit, *xml;
    long ppid = (long)getppid();

    fresh_dir("killed");
    os = open_own();
    /* Killed in s/k after finishing s/done: an error for s/k only. */
    put_record(&dead, "N", "{}", PROPS, NULL);
    put_record(&dead, "S", "s", "[suite]", "init");
    put_record(&dead, "S", "s", "done", "test");
    put_window(&dead, "s", "done", LEAKGATE_STATUS_PASS);
    put_record(&dead, "S", "s", "k", "test");
    /* A torn record: the process died while writing it. */
    leakgate_buf__puts(&dead, "V\ts\tk\t{\"suite\": ");
    write_journals("run-id-killed", dead_pid(), 1, dead.ptr);
    /* Still running its test s/r (our parent runs: it is alive). */
    put_record(&live, "S", "s", "r", "test");
    write_journals("run-id-killed", ppid, start_of(ppid), live.ptr);
    CU_ASSERT_EQUAL(leakgate_outputs__merge(os, NULL), 0);
    junit = path_in("j.xml", NULL);
    xml = read_all(junit);
    CU_ASSERT_EQUAL(count(xml, "<testcase "), 4);
    CU_ASSERT_EQUAL(count(xml, "<error "), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(
        xml, "classname=\"s\" name=\"k\" time=\"0.000000\">\n      <error "
             "message=\"killed: the process (pid"));
    CU_ASSERT_PTR_NOT_NULL(strstr(xml, "type=\"killed\""));
    /* s/r still runs: a snapshot says so, as unfinished, not killed. */
    CU_ASSERT_PTR_NOT_NULL(strstr(
        xml, "classname=\"s\" name=\"r\" time=\"0.000000\">\n      <error "
             "message=\"unfinished: the process (pid"));
    CU_ASSERT_EQUAL(count(xml, "killed: the process"), 3);
    CU_ASSERT_EQUAL(count(xml, "type=\"unfinished\""), 1);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(xml, "tests=\"4\" failures=\"0\" errors=\"2\""));
    check_index("0 of 4 windows over the limits · 2 passed · 2 not judged");
    leakgate_outputs__free(os);
    leakgate_buf__dispose(&dead);
    leakgate_buf__dispose(&live);
    free(junit);
    free(xml);
}

static void
test_outputs__stale_runs_removed_live_kept(void)
{
    struct leakgate_outputs *os;
    char *old, *parent, *gone, *named_live;
    char name[96];
    long ppid = (long)getppid();
    struct stat st;

    fresh_dir("now");
    old = path_in(".j.xml.leakgate", "run-id-old");
    write_journal(old, dead_pid(), 1, "D\n");
    named_live = path_in(".j.xml.leakgate", "run-id-busy");
    write_journal(named_live, ppid, start_of(ppid), "H\n");
    snprintf(name, sizeof name, "run-p%ld-%llu", ppid, start_of(ppid));
    parent = path_in(".j.xml.leakgate", name);
    CU_ASSERT_EQUAL(leakgate_files__mkdirs(parent, "directory"), 0);
    snprintf(name, sizeof name, "run-p%ld-1", dead_pid());
    gone = path_in(".j.xml.leakgate", name);
    CU_ASSERT_EQUAL(leakgate_files__mkdirs(gone, "directory"), 0);
    os = open_own();
    CU_ASSERT_NOT_EQUAL(stat(old, &st), 0);
    CU_ASSERT_NOT_EQUAL(stat(gone, &st), 0);
    CU_ASSERT_EQUAL(stat(parent, &st), 0);
    CU_ASSERT_EQUAL(stat(named_live, &st), 0);
    leakgate_outputs__free(os);
    free(old);
    free(parent);
    free(gone);
    free(named_live);
}

/* An output whose store cannot be made is lost alone: the others are
 * opened, journaled and written; the merge names the one lost, its path
 * and the cause. */
static void
test_outputs__unwritable_store(void)
{
    struct leakgate_outputs *os = NULL;
    char *file, *junit, *json, *report, *text;

    fresh_dir("unwritable");
    file = path_in("file", NULL);
    CU_ASSERT_EQUAL(leakgate_files__write(NULL, file, "x", 1, 0), 0);
    junit = path_in("file/j.xml", NULL);
    json = path_in("r.json", NULL);
    CU_ASSERT_EQUAL(leakgate_outputs__open(&os, junit, json, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(os);
    CU_ASSERT_PTR_NOT_NULL(os->out[0].broken);
    CU_ASSERT_PTR_NULL(os->out[1].broken);
    CU_ASSERT_EQUAL(leakgate_outputs__env(os, "{}", PROPS), 0);
    CU_ASSERT_EQUAL(leakgate_outputs__merge(os, NULL), LEAKGATE_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(),
                                  "file/j.xml was not written: cannot "
                                  "write "));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(leakgate_error_last(), "file/j.xml: Not a directory"));
    text = read_all(json); /* the JSON is written all the same */
    CU_ASSERT_PTR_NOT_NULL(text);
    free(text);
    leakgate_outputs__free(os);
    os = NULL;
    report = path_in("file/report", NULL);
    CU_ASSERT_EQUAL(leakgate_outputs__open(&os, NULL, NULL, report), 0);
    CU_ASSERT_EQUAL(leakgate_outputs__merge(os, NULL), LEAKGATE_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(),
                                  "file/report/index.html was not "
                                  "written: cannot create report "
                                  "directory "));
    leakgate_outputs__free(os);
    free(file);
    free(junit);
    free(json);
    free(report);
}

/* Concurrent writers of one run's journal: NPROC processes append
 * NWIN records each at once, of 64 B to 24 KiB (beyond PIPE_BUF and a
 * page: a writer that split a record into several write(2)s would
 * interleave with the others). */
#define NPROC 12
#define NWIN 25

static size_t
pad_len(int p, int i)
{
    return 64 + (size_t)((p * 7919 + i * 104729) % 24000);
}

static void
append_many(int p, int go)
{
    struct leakgate_outputs *os = NULL;
    char *junit = path_in("j.xml", NULL), ready;
    int bad = 0;

    setenv(LEAKGATE_OUTPUTS_RENDER_ENV, "end", 1);
    if (read(go, &ready, 1) < 0 ||
        leakgate_outputs__open(&os, junit, NULL, NULL) != 0 ||
        leakgate_outputs__env(os, "{}", PROPS) != 0)
        _exit(3);
    for (int i = 0; i < NWIN && !bad; i++) {
        struct leakgate_buf b = LEAKGATE_BUF_INIT;
        struct leakgate_report_piece piece;
        char suite[16], test[16];

        snprintf(suite, sizeof suite, "p%d", p);
        snprintf(test, sizeof test, "t%d", i);
        leakgate_outputs__started(os, suite, test, "test");
        leakgate_buf__printf(&b, "    <testcase from=\"%d-%d\" pad=\"", p, i);
        for (size_t k = 0; k < pad_len(p, i); k++)
            leakgate_buf__puts(&b, "x");
        leakgate_buf__puts(&b, "\"/>\n");
        memset(&piece, 0, sizeof piece);
        piece.suite = suite;
        piece.status = LEAKGATE_STATUS_PASS;
        piece.json_test = "{}";
        piece.junit_case = b.ptr;
        bad = b.failed ||
              leakgate_outputs__window(os, suite, test, &piece, 3) != 0;
        leakgate_buf__dispose(&b);
    }
    bad = bad || leakgate_outputs__merge(os, NULL) != 0;
    leakgate_outputs__free(os);
    _exit(bad ? 4 : 0);
}

/* Every testcase of the merged xml once and whole; how many. */
static int
whole_cases(const char *xml, bool seen[NPROC][NWIN])
{
    int n = 0;

    for (const char *at = xml ? strstr(xml, "<testcase from=\"") : NULL; at;
         at = strstr(at + 1, "<testcase from=\"")) {
        int p, i, used = 0;
        size_t x;

        if (sscanf(at, "<testcase from=\"%d-%d\" pad=\"%n", &p, &i, &used) !=
                2 ||
            used == 0 || p < 0 || p >= NPROC || i < 0 || i >= NWIN ||
            seen[p][i])
            return -1;
        x = strspn(at + used, "x");
        if (x != pad_len(p, i) || strncmp(at + used + x, "\"/>\n", 4) != 0)
            return -1;
        seen[p][i] = true;
        n++;
    }
    return n;
}

static void
test_outputs__concurrent_writers(void)
{
    bool seen[NPROC][NWIN];
    pid_t pids[NPROC];
    struct stat st;
    int go[2], status, failed = 0;
    char *junit, *xml;

    fresh_dir("concurrent");
    memset(seen, 0, sizeof seen);
    CU_ASSERT_EQUAL_FATAL(pipe(go), 0);
    for (int p = 0; p < NPROC; p++) {
        pids[p] = fork();
        CU_ASSERT_FATAL(pids[p] >= 0);
        if (pids[p] == 0) {
            close(go[1]);
            append_many(p, go[0]);
        }
    }
    close(go[0]);
    close(go[1]); /* all start at once */
    for (int p = 0; p < NPROC; p++)
        failed += waitpid(pids[p], &status, 0) != pids[p] ||
                  !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    CU_ASSERT_EQUAL(failed, 0);
    junit = path_in("j.xml", NULL);
    CU_ASSERT_EQUAL(leakgate_outputs__finish(junit, NULL, NULL), 0);
    xml = read_all(junit);
    CU_ASSERT_EQUAL(whole_cases(xml, seen), NPROC * NWIN);
    CU_ASSERT_TRUE(xml && strstr(xml, "tests=\"300\" failures=\"0\""));
    /* No process had a file of its own: one journal in the run. */
    free(xml);
    xml = path_in(".j.xml.leakgate", "run-id-concurrent/journal");
    CU_ASSERT_EQUAL(stat(xml, &st), 0);
    free(junit);
    free(xml);
}

static void
test_outputs__cleanup(void)
{
    char cmd[128];

    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
    unsetenv(LEAKGATE_OUTPUTS_RUN_ID_ENV);
}

const struct unit_case unit_cases[] = {
    {"shared_names", test_outputs__shared_names},
    {"every_window_once", test_outputs__every_window_once},
    {"killed_window_is_an_error", test_outputs__killed_window_is_an_error},
    {"stale_runs_removed_live_kept",
     test_outputs__stale_runs_removed_live_kept},
    {"unwritable_store", test_outputs__unwritable_store},
    {"concurrent_writers", test_outputs__concurrent_writers},
    {"cleanup", test_outputs__cleanup},
    {NULL, NULL}};
