/* SPDX-License-Identifier: MIT */
/*
 * stackwalk: the table walk gives libgcc's backtrace, frame for frame, in the
 * shapes a test's stacks take (plain calls, recursion, alloca and other
 * rbp-based frames, a large frame, a second thread), falls back to libgcc
 * through a signal frame, and its check fires when the walk is wrong.
 */
#include "unit.h"

#include <alloca.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "stackwalk.h"

const char *const unit_suite = "stackwalk";

#define MAX 128

struct shot {
    void *vec[MAX];
    unsigned n;
};

static volatile int sink;

/* One backtrace in CHECK mode: the walk and libgcc compared. */
static __attribute__((noinline)) void
take(struct shot *s)
{
    leakgate_stackwalk__backtrace(s->vec, &s->n, MAX);
    sink += (int)s->n;
}

static void
stats(struct leakgate_stackwalk_stats *st)
{
    leakgate_stackwalk__stats(st);
}

static __attribute__((noinline)) void
recurse(struct shot *s, int depth)
{
    if (depth == 0)
        take(s);
    else
        recurse(s, depth - 1);
    sink++; /* not a tail call */
}

static __attribute__((noinline)) void
with_alloca(struct shot *s, size_t n)
{
    char *buf = alloca(n);

    memset(buf, 1, n);
    sink += buf[n / 2];
    recurse(s, 3);
    sink += buf[0];
}

static __attribute__((noinline)) void
with_vla(struct shot *s, size_t n)
{
    char buf[n];

    memset(buf, 2, n);
    with_alloca(s, n / 2 + 1);
    sink += buf[n - 1];
}

static __attribute__((noinline)) void
with_big_frame(struct shot *s)
{
    volatile char big[300000];

    big[0] = 1;
    big[sizeof big - 1] = 2;
    take(s);
    sink += big[0] + big[sizeof big - 1];
}

/* Run fn in CHECK mode and expect the walk to have agreed with libgcc. */
static void
expect_agrees(void (*fn)(struct shot *), unsigned min_frames)
{
    struct leakgate_stackwalk_stats before, after;
    struct shot s;

    leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_CHECK);
    stats(&before);
    fn(&s);
    fn(&s); /* the second time from the table */
    stats(&after);
    leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_FAST);
    CU_ASSERT_EQUAL(after.differ, before.differ);
    CU_ASSERT_TRUE(s.n >= min_frames);
    if (leakgate_stackwalk__fast_available()) {
        CU_ASSERT_EQUAL(after.fast - before.fast, 2);
        CU_ASSERT_EQUAL(after.checked - before.checked, 2);
    }
}

static void
plain_calls(struct shot *s)
{
    recurse(s, 0);
}

static void
deep_calls(struct shot *s)
{
    recurse(s, 60);
}

static void
rbp_frames(struct shot *s)
{
    with_vla(s, 100);
}

static void
big_frame(struct shot *s)
{
    with_big_frame(s);
}

static void
test_stackwalk__plain_calls_agree(void)
{
    expect_agrees(plain_calls, 4);
}

static void
test_stackwalk__deep_recursion_agrees(void)
{
    expect_agrees(deep_calls, 60);
}

static void
test_stackwalk__alloca_and_vla_frames_agree(void)
{
    expect_agrees(rbp_frames, 8);
}

static void
test_stackwalk__large_frame_agrees(void)
{
    expect_agrees(big_frame, 4);
}

static void
test_stackwalk__caps_at_max_len(void)
{
    void *vec[4];
    void *ref[MAX];
    unsigned n = 0, nref = 0;

    leakgate_stackwalk__backtrace(vec, &n, 4);
    leakgate_stackwalk__backtrace(ref, &nref, MAX);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT_TRUE(nref > 4);
    /* Frame 0 is the return address of each call; the rest agree. */
    CU_ASSERT_EQUAL(memcmp(vec + 1, ref + 1, 3 * sizeof *vec), 0);
    leakgate_stackwalk__backtrace(vec, &n, 0);
    CU_ASSERT_EQUAL(n, 0);
}

static void *
thread_body(void *arg)
{
    deep_calls(arg);
    return NULL;
}

static void
in_thread(struct shot *s)
{
    pthread_t t;

    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, thread_body, s), 0);
    pthread_join(t, NULL);
}

static void
test_stackwalk__second_thread_agrees(void)
{
    expect_agrees(in_thread, 60);
}

static struct shot in_handler;

static void
on_signal(int sig)
{
    (void)sig;
    take(&in_handler);
}

static void
test_stackwalk__signal_frame_falls_back_to_libgcc(void)
{
    struct leakgate_stackwalk_stats before, after;

    leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_CHECK);
    signal(SIGUSR1, on_signal);
    stats(&before);
    raise(SIGUSR1);
    stats(&after);
    signal(SIGUSR1, SIG_DFL);
    leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_FAST);
    CU_ASSERT_TRUE(in_handler.n > 3);
    CU_ASSERT_EQUAL(after.differ, before.differ);
    if (leakgate_stackwalk__fast_available())
        CU_ASSERT_EQUAL(after.fallback - before.fallback, 1);
}

static void
test_stackwalk__check_fires_on_a_wrong_frame(void)
{
    struct leakgate_stackwalk_stats before, after;
    struct shot s;

    if (!leakgate_stackwalk__fast_available())
        return;
    leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_CHECK);
    leakgate_stackwalk__test_skew(2);
    stats(&before);
    deep_calls(&s);
    stats(&after);
    leakgate_stackwalk__test_skew(0);
    leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_FAST);
    CU_ASSERT_EQUAL(after.differ - before.differ, 1);
    /* libgcc's answer is kept: the skewed frame is not in it */
    {
        struct shot ref;

        leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_CHECK);
        deep_calls(&ref);
        leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_FAST);
        /* the same recursion frames (the call sites below differ) */
        CU_ASSERT_EQUAL(s.n, ref.n);
        CU_ASSERT_EQUAL(memcmp(s.vec, ref.vec, 50 * sizeof *s.vec), 0);
    }
}

static void
test_stackwalk__table_keeps_rules(void)
{
    struct leakgate_stackwalk_stats st;
    struct shot s;

    deep_calls(&s);
    stats(&st);
    if (leakgate_stackwalk__fast_available()) {
        CU_ASSERT_TRUE(st.rules > 3);
    } else {
        CU_ASSERT_EQUAL(st.rules, 0);
    }
}

/* The rules of a module unloaded since are not used for the module that
 * took its address: f() has a 300-byte frame in one build, 3,000 in the
 * other, at the same offset. */
static struct shot in_module;

static void
module_callback(void)
{
    take(&in_module);
}

static void *
call_module(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void (*f)(void (*)(void));
    void *sym;

    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    sym = dlsym(h, "stackwalk_fixture_f");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sym);
    memcpy(&f, &sym, sizeof f);
    f(module_callback);
    f(module_callback);
    dlclose(h);
    return sym;
}

static void
test_stackwalk__unloaded_module_rules_are_not_reused(void)
{
    struct leakgate_stackwalk_stats before, after;
    void *first, *second;

    leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_CHECK);
    stats(&before);
    first = call_module(STACKWALK_FIXTURE_SMALL);
    second = call_module(STACKWALK_FIXTURE_LARGE);
    stats(&after);
    leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_FAST);
    /* the case only exists when the second build took the first's place */
    CU_ASSERT_PTR_EQUAL(first, second);
    CU_ASSERT_EQUAL(after.differ, before.differ);
    if (leakgate_stackwalk__fast_available())
        CU_ASSERT_EQUAL(after.fast - before.fast, 4);
}

#if defined(__x86_64__)
/*
 * Call-frame information GCC does not write but libgcc reads its own way;
 * the walk must leave each to libgcc.  expr_then_offset: a CFA expression,
 * then def_cfa_offset (libgcc keeps the expression).  restore_ra: the
 * return address's rule restored (libgcc: unsaved, not the CIE's).
 * bare_restorer: a rt_sigreturn trampoline without an FDE (libgcc's
 * fallback knows it by its code).
 */
void stackwalk_expr_then_offset(void (*cb)(void));
void stackwalk_restore_ra(void (*cb)(void));
void stackwalk_bare_restorer(void);
__asm__(".text\n"
        ".globl stackwalk_expr_then_offset\n"
        ".type stackwalk_expr_then_offset,@function\n"
        "stackwalk_expr_then_offset:\n"
        ".cfi_startproc\n"
        "subq $8, %rsp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_escape 0x0f, 0x02, 0x77, 0x10\n" /* CFA = rsp + 16, an expr */
        ".cfi_def_cfa_offset 64\n"
        "call *%rdi\n"
        "addq $8, %rsp\n"
        ".cfi_def_cfa 7, 8\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size stackwalk_expr_then_offset, .-stackwalk_expr_then_offset\n"
        ".globl stackwalk_restore_ra\n"
        ".type stackwalk_restore_ra,@function\n"
        "stackwalk_restore_ra:\n"
        ".cfi_startproc\n"
        "subq $8, %rsp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_restore 16\n"
        "call *%rdi\n"
        "addq $8, %rsp\n"
        ".cfi_def_cfa_offset 8\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size stackwalk_restore_ra, .-stackwalk_restore_ra\n"
        "nop\n"
        ".globl stackwalk_bare_restorer\n"
        "stackwalk_bare_restorer:\n"
        "movq $15, %rax\n"
        "syscall\n"
        "hlt\n");

static struct shot in_asm;

static void
asm_callback(void)
{
    take(&in_asm);
}

static void
on_bare_signal(int sig)
{
    (void)sig;
    take(&in_asm);
}

/* Run fn in CHECK mode: libgcc's answer and no fast walk. */
static void
expect_fallback(void (*fn)(void))
{
    struct leakgate_stackwalk_stats before, after;

    leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_CHECK);
    stats(&before);
    fn();
    stats(&after);
    leakgate_stackwalk__set_mode(LEAKGATE_STACKWALK_FAST);
    CU_ASSERT_EQUAL(after.differ, before.differ);
    CU_ASSERT_EQUAL(after.fallback - before.fallback, 1);
    CU_ASSERT_EQUAL(after.fast, before.fast);
    CU_ASSERT_TRUE(in_asm.n > 2);
}

static void
expr_then_offset(void)
{
    stackwalk_expr_then_offset(asm_callback);
}

static void
restore_ra(void)
{
    stackwalk_restore_ra(asm_callback);
}

static void
bare_restorer(void)
{
    /* the kernel's struct sigaction: handler, flags, restorer, mask */
    struct {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        unsigned long mask;
    } act = {on_bare_signal, 0x04000000UL /* SA_RESTORER */,
             stackwalk_bare_restorer, 0};

    CU_ASSERT_EQUAL_FATAL(syscall(SYS_rt_sigaction, SIGUSR2, &act, NULL, 8), 0);
    raise(SIGUSR2);
    signal(SIGUSR2, SIG_DFL);
}

static void
test_stackwalk__cfi_libgcc_reads_its_own_way_falls_back(void)
{
    expect_fallback(expr_then_offset);
    expect_fallback(restore_ra);
    expect_fallback(bare_restorer);
}
#endif

const struct unit_case unit_cases[] = {
    {"plain calls agree with libgcc", test_stackwalk__plain_calls_agree},
    {"deep recursion agrees", test_stackwalk__deep_recursion_agrees},
    {"alloca and VLA frames agree",
     test_stackwalk__alloca_and_vla_frames_agree},
    {"a 300 KB frame agrees", test_stackwalk__large_frame_agrees},
    {"stops at max_len", test_stackwalk__caps_at_max_len},
    {"a second thread agrees", test_stackwalk__second_thread_agrees},
    {"a signal frame falls back to libgcc",
     test_stackwalk__signal_frame_falls_back_to_libgcc},
    {"the check fires on a wrong frame",
     test_stackwalk__check_fires_on_a_wrong_frame},
    {"the table keeps rules", test_stackwalk__table_keeps_rules},
    {"an unloaded module's rules are not reused",
     test_stackwalk__unloaded_module_rules_are_not_reused},
#if defined(__x86_64__)
    {"CFI libgcc reads its own way falls back",
     test_stackwalk__cfi_libgcc_reads_its_own_way_falls_back},
#endif
    {NULL, NULL},
};
