/* SPDX-License-Identifier: MIT */
/*
 * Windows leakgate must judge, or refuse with a clear error, never lose
 * or show as passing (issue 26 items 3 and 6; the gate/names tests in
 * tests/integration/CMakeLists.txt).  $NAMES_CASE picks the tests (all
 * when unset); each leaking test leaves one malloc(100) (112 B), which
 * its fast first pass finds and a replay measures:
 *
 *   nl     a test name with a newline
 *   ctl    a test name with control bytes (an ANSI colour escape)
 *   utf    a test name that is not UTF-8
 *   dup    two tests of one suite with the same name (the second leaks:
 *          judged as "dup#2")
 *   collide  tests "dup", "dup" and "dup#2" (refused: two "dup#2")
 *   env    a test that sets LEAKGATE_FILTER in its own environment
 *   crash  a test that dies of SIGABRT on its second run (the replay's)
 *   deaf   a test that hangs on its second run (or the one $NAMES_DEAF_RUN
 *          names), every signal blocked
 *   hang   a test that hangs on its second run, then one that leaks
 *   counted  a leak that counts its runs in $NAMES_MARKER.runs
 *   stall  a test that never ends, then one that leaks
 *   brisk  four 0.3 s tests, then a leak after a joined thread
 *   alike  leaks named "a b", "a_b", "a:b", and one in a suite of a
 *          300-byte name (artifact names)
 *
 * "Second run" is told by a marker file, $NAMES_MARKER: the first run
 * creates it.  Every case also has "plainleak", an ordinary leak, first.
 * Built with NAMES_PLAIN it is a plain CUnit program (no leakgate), for
 * `leakgate run`.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#ifndef NAMES_PLAIN
#include <leakgate/cunit.h>
#endif

static void *volatile sink;

static void
leak(void)
{
    sink = malloc(100);
    sink = NULL;
    CU_ASSERT_TRUE(1);
}

static void
clean(void)
{
    CU_ASSERT_TRUE(1);
}

static void
set_filter(void)
{
    CU_ASSERT_EQUAL(setenv("LEAKGATE_FILTER", "x/nothing", 1), 0);
    leak();
}

/* Whether this is the second run: the first one makes the marker. */
static int
second_run(void)
{
    const char *m = getenv("NAMES_MARKER");
    FILE *f;

    if (!m || !*m)
        return 0;
    if (access(m, F_OK) == 0)
        return 1;
    f = fopen(m, "w");
    if (f)
        fclose(f);
    return 0;
}

static void
crash_second(void)
{
    if (second_run())
        abort();
    leak();
}

static void
hang_second(void)
{
    if (second_run()) {
        for (;;)
            pause();
    }
    leak();
}

/* Which run of the test this is (1: the first process's), counted in
 * $NAMES_MARKER.runs, a line "PID PARENT" per run; 0 without a marker. */
static long
run_number(void)
{
    const char *m = getenv("NAMES_MARKER");
    char path[4096];
    FILE *f;
    long n = 0;
    int c;

    if (!m || !*m || snprintf(path, sizeof path, "%s.runs", m) >= 4096)
        return 0;
    f = fopen(path, "a+");
    if (!f)
        return 0;
    fprintf(f, "%ld %ld\n", (long)getpid(), (long)getppid());
    fflush(f);
    rewind(f);
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Hangs, every signal blocked, on run $NAMES_DEAF_RUN (default 2: the
 * replay's own, which selects by the first pass's ordinals; 3: the copy
 * that answers the warm-up probe's question). */
static void
deaf_hang_second(void)
{
    const char *at = getenv("NAMES_DEAF_RUN");
    sigset_t all;

    if (run_number() == (at && *at ? strtol(at, NULL, 10) : 2)) {
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, NULL);
        for (;;)
            pause();
    }
    leak();
}

/* A test that never ends (the first pass's watchdog, --test-timeout). */
static void
stall(void)
{
    for (;;)
        pause();
}

/* Threads a test starts: joined, detached (after or at creation), or
 * forgotten (neither: the test fails, naming the pthread_create call). */
static void *
thread_work(void *arg)
{
    return arg;
}

static void
thread_joined(void)
{
    pthread_t t;

    CU_ASSERT_FATAL(pthread_create(&t, NULL, thread_work, NULL) == 0);
    CU_ASSERT(pthread_join(t, NULL) == 0);
}

static void
thread_detached(void)
{
    pthread_attr_t a;
    pthread_t t, u;

    CU_ASSERT_FATAL(pthread_create(&t, NULL, thread_work, NULL) == 0);
    CU_ASSERT(pthread_detach(t) == 0);
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    CU_ASSERT(pthread_create(&u, &a, thread_work, NULL) == 0);
    pthread_attr_destroy(&a);
}

static void
thread_forgotten(void)
{
    pthread_t t;
    int rc = pthread_create(&t, NULL, thread_work, NULL); /* MARK:forgotten */

    CU_ASSERT(rc == 0);
}

/* A leak that takes 1.5 s in every run: its replay lasts that long
 * (progress lines, LEAKGATE_PROGRESS). */
static void
slow_leak(void)
{
    const struct timespec t = {1, 500000000L};

    nanosleep(&t, NULL);
    leak();
}

/* A test well under a 1 s --test-timeout (0.3 s), four of which run
 * before brisk_leak: a replay or probe of the run lasts longer than the
 * timeout, a test never does. */
static void
brisk(void)
{
    const struct timespec t = {0, 300000000L};

    nanosleep(&t, NULL);
}

/* A leak after a joined thread: its replay measures it in an exact
 * window, and the warm-up probe's question gets a replay of its own. */
static void
brisk_leak(void)
{
    pthread_t t;

    CU_ASSERT_FATAL(pthread_create(&t, NULL, thread_work, NULL) == 0);
    CU_ASSERT(pthread_join(t, NULL) == 0);
    leak();
}

/* A leak that counts its runs ($NAMES_MARKER.runs): how many times the
 * gate ran it (replay_ordinals.sh).  With $NAMES_COUNTED_MANY it first
 * allocates and frees 300,000 objects: more than the first pass's
 * allocation log holds, so its replay measures it with a logging copy. */
static void
counted(void)
{
    (void)run_number();
    if (getenv("NAMES_COUNTED_MANY")) {
        for (int i = 0; i < 300000; i++)
            free(malloc(16));
    }
    leak();
}

static int
wanted(const char *which, const char *name)
{
    return !which || strcmp(which, name) == 0;
}

int
main(int argc, char **argv)
{
    const char *which = getenv("NAMES_CASE");
    CU_pSuite s;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    s = CU_add_suite("names", NULL, NULL);
    CU_add_test(s, "plainleak", leak);
    if (wanted(which, "nl"))
        CU_add_test(s, "new\nline", leak);
    if (wanted(which, "ctl"))
        CU_add_test(s, "ctl\001x\033[31m", leak);
    if (wanted(which, "utf"))
        CU_add_test(s, "bad\xff\xfeutf", leak);
    if (wanted(which, "dup")) {
        CU_add_test(s, "dup", clean);
        CU_add_test(s, "dup", leak);
    }
    if (wanted(which, "collide")) {
        CU_add_test(s, "dup", clean);
        CU_add_test(s, "dup", clean);
        CU_add_test(s, "dup#2", clean);
    }
    if (wanted(which, "env"))
        CU_add_test(s, "setfilter", set_filter);
    if (wanted(which, "crash"))
        CU_add_test(s, "crash", crash_second);
    if (wanted(which, "deaf"))
        CU_add_test(s, "deaf", deaf_hang_second);
    if (wanted(which, "alike")) {
        /* Three names that sanitize alike, and a suite name longer than a
         * file name may be: each keeps artifacts of its own. */
        static char longname[301];

        CU_add_test(s, "a b", leak);
        CU_add_test(s, "a_b", leak);
        CU_add_test(s, "a:b", leak);
        memset(longname, 'L', sizeof longname - 1);
        CU_add_test(CU_add_suite(longname, NULL, NULL), "t", leak);
    }
    if (wanted(which, "stall")) {
        CU_add_test(s, "stall", stall);
        CU_add_test(s, "after_stall", leak);
    }
    if (wanted(which, "counted"))
        CU_add_test(s, "counted", counted);
    if (wanted(which, "slow"))
        CU_add_test(s, "slow", slow_leak);
    if (wanted(which, "brisk")) {
        CU_add_test(s, "brisk1", brisk);
        CU_add_test(s, "brisk2", brisk);
        CU_add_test(s, "brisk3", brisk);
        CU_add_test(s, "brisk4", brisk);
        CU_add_test(s, "brisk_leak", brisk_leak);
    }
    if (wanted(which, "threads")) {
        CU_add_test(s, "thread_joined", thread_joined);
        CU_add_test(s, "thread_detached", thread_detached);
        CU_add_test(s, "thread_forgotten", thread_forgotten);
    }
    if (wanted(which, "hang")) {
        CU_add_test(s, "hang", hang_second);
        CU_add_test(s, "after_hang", leak);
    }
#ifndef NAMES_PLAIN
    /* A runner's own ways into CUnit, as pgpointcloud's `cu_tester SUITE`
     * (CU_basic_run_suite()): $NAMES_DIRECT picks one; the program
     * returns 0 whatever the tests did.  The gate runs under each. */
    {
        const char *direct = getenv("NAMES_DIRECT");

        if (direct && *direct) {
            CU_basic_set_mode(CU_BRM_VERBOSE);
            if (strcmp(direct, "suite") == 0)
                CU_basic_run_suite(s);
            else if (strcmp(direct, "test") == 0)
                CU_basic_run_test(s, CU_get_test(s, "plainleak"));
            else if (strcmp(direct, "all") == 0)
                CU_run_all_tests();
            else if (strcmp(direct, "run_suite") == 0)
                CU_run_suite(s);
            CU_cleanup_registry();
            return 0;
        }
    }
#endif
#ifdef NAMES_PLAIN
    /* The unmodified twin that `leakgate run` gates (names_cases_plain). */
    (void)argc;
    (void)argv;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    CU_cleanup_registry();
    return 0;
#else
    return leakgate_cunit_main(argc, argv);
#endif
}
