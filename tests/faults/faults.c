/* SPDX-License-Identifier: MIT */
/*
 * The fault corpus: CUnit tests that stress the gate the way hostile or
 * unlucky test suites do, linked with leakgate::cunit and run under the
 * real gate by tests/faults/CMakeLists.txt (one ctest expectation per
 * fault: exit status and messages).  Each suite is one kind of fault:
 *
 *   big/one_gib           keeps a 1 GiB allocation
 *   many/stacks_100k      keeps 100,000 objects from 100,000 call stacks
 *   deep/recursion_200    keeps an object allocated 200 calls deep
 *                         (jemalloc records at most 128 frames)
 *   fork/child_exits      forks; the child allocates and calls exit()
 *   fork/parent_leaks     the same, and the parent keeps 64 bytes
 *   thread/left_running   starts a thread that allocates, then blocks
 *                         forever (never joined)
 *   thread/after          a clean test after it
 *   leak/plain            keeps 100 bytes (for the stripped binary and
 *                         the unwritable-output faults)
 *   crash/segfault, crash/abort, crash/exit
 *                         die in the middle of the run (selected only by
 *                         the crash expectations)
 *
 * The same source is also built stripped (faults_stripped).
 */
#include <CUnit/CUnit.h>
#include <leakgate/cunit.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define STACKS 100000u
#define DEPTH_BITS 17 /* 2^17 > STACKS distinct paths */

int main(int argc, char **argv);

/* Keeps the leaked pointers reachable. */
static void *volatile sink[8];
static void *volatile many[STACKS];

static void
test_big_one_gib(void)
{
    sink[0] = malloc((size_t)1 << 30);
    CU_ASSERT_PTR_NOT_NULL(sink[0]);
}

/* ---- many: one call stack per object ------------------------------- */

static void walk(unsigned int i, int depth);

static NOINLINE void
leaf(unsigned int i)
{
    many[i] = malloc(8);
}

/* Two callers of walk(): the return address encodes one bit of i. */
static NOINLINE void
zero(unsigned int i, int depth)
{
    walk(i, depth + 1);
    __asm__ volatile("" ::: "memory"); /* no tail call */
}

static NOINLINE void
one(unsigned int i, int depth)
{
    walk(i, depth + 1);
    __asm__ volatile("" ::: "memory");
}

static NOINLINE void
walk(unsigned int i, int depth)
{
    if (depth == DEPTH_BITS)
        leaf(i);
    else if ((i >> depth) & 1u)
        one(i, depth);
    else
        zero(i, depth);
    __asm__ volatile("" ::: "memory");
}

/* FAULTS_STACKS=N (1..100000) keeps N stacks instead, to measure how
 * the cost grows. */
static unsigned int
nstacks(void)
{
    const char *env = getenv("FAULTS_STACKS");
    unsigned long n = env ? strtoul(env, NULL, 10) : STACKS;

    return n >= 1 && n <= STACKS ? (unsigned int)n : STACKS;
}

static void
test_many_stacks_100k(void)
{
    unsigned int n = nstacks();

    for (unsigned int i = 0; i < n; i++)
        walk(i, 0);
    CU_ASSERT_PTR_NOT_NULL(many[n - 1]);
}

/* ---- deep: beyond jemalloc's 128 frames ---------------------------- */

static NOINLINE void *
deep_alloc(int depth)
{
    void *p = depth == 0 ? malloc(24) : deep_alloc(depth - 1);

    __asm__ volatile("" ::: "memory");
    return p;
}

static void
test_deep_recursion_200(void)
{
    sink[1] = deep_alloc(200);
}

/* ---- fork ------------------------------------------------------------ */

static void
fork_child_exits(void)
{
    pid_t pid = fork();
    int status = 0;

    if (pid == 0) {
        sink[2] = malloc(4096); /* the child's, gone with it */
        exit(0);                /* atexit handlers run in the child */
    }
    CU_ASSERT_FATAL(pid > 0);
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void
test_fork_child_exits(void)
{
    fork_child_exits();
}

static void
test_fork_parent_leaks(void)
{
    fork_child_exits();
    sink[3] = malloc(64);
}

/* ---- thread ---------------------------------------------------------- */

static int ready[2]; /* pipe: the thread says it allocated */

static void *
blocker(void *arg)
{
    char c = 'x';
    sigset_t all;

    (void)arg;
    sink[4] = malloc(200);
    if (write(ready[1], &c, 1) != 1)
        abort();
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;)
        pause(); /* never returns: killed when the process exits */
    return NULL;
}

static void
test_thread_left_running(void)
{
    pthread_t t;
    char c;

    CU_ASSERT_FATAL(pipe(ready) == 0);
    CU_ASSERT_FATAL(pthread_create(&t, NULL, blocker, NULL) == 0);
    CU_ASSERT_EQUAL(read(ready[0], &c, 1), 1);
    pthread_detach(t);
}

static void
test_thread_after(void)
{
    free(malloc(32));
}

/* ---- leak, crash ------------------------------------------------------ */

static void
test_leak_plain(void)
{
    sink[5] = malloc(100);
}

static void
test_crash_segfault(void)
{
    raise(SIGSEGV);
}

static void
test_crash_abort(void)
{
    abort();
}

static void
test_crash_exit(void)
{
    exit(0);
}

/* Leaks in the first run and dies in the replay that measures it: with
 * FAULTS_MARK=FILE, the first run creates FILE, a run that finds it
 * aborts (tests/faults/replay_scratch.cmake). */
static void
test_replay_dies(void)
{
    const char *mark = getenv("FAULTS_MARK");
    FILE *f;

    if (!mark)
        return;
    if (access(mark, F_OK) == 0)
        abort();
    f = fopen(mark, "w");
    if (f)
        fclose(f);
    sink[6] = malloc(24);
}

/* Leaks in the first run only: with FAULTS_MARK=FILE, the run that finds
 * FILE (the replay) allocates nothing. */
static void
test_replay_differs(void)
{
    const char *mark = getenv("FAULTS_MARK");
    FILE *f;

    if (!mark || access(mark, F_OK) == 0)
        return;
    f = fopen(mark, "w");
    if (f)
        fclose(f);
    sink[7] = malloc(40);
}

struct fault {
    const char *suite, *name;
    CU_TestFunc fn;
};

static const struct fault faults[] = {
    {"big", "one_gib", test_big_one_gib},
    {"many", "stacks_100k", test_many_stacks_100k},
    {"deep", "recursion_200", test_deep_recursion_200},
    {"fork", "child_exits", test_fork_child_exits},
    {"fork", "parent_leaks", test_fork_parent_leaks},
    {"thread", "left_running", test_thread_left_running},
    {"thread", "after", test_thread_after},
    {"leak", "plain", test_leak_plain},
    {"crash", "before", test_thread_after},
    {"crash", "segfault", test_crash_segfault},
    {"crash", "abort", test_crash_abort},
    {"crash", "exit", test_crash_exit},
    {"rescue", "leak", test_leak_plain},
    {"rescue", "segfault", test_crash_segfault},
    {"replay", "dies", test_replay_dies},
    {"replay", "differs", test_replay_differs},
};

int
main(int argc, char **argv)
{
    CU_pSuite suite = NULL;
    const char *current = "";

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        if (strcmp(current, faults[i].suite) != 0) {
            current = faults[i].suite;
            suite = CU_add_suite(current, NULL, NULL);
        }
        if (!suite || !CU_add_test(suite, faults[i].name, faults[i].fn))
            return 3;
    }
    return leakgate_cunit_main(argc, argv);
}
