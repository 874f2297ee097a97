/* SPDX-License-Identifier: MIT */
/* Suite "leaks": one leak per allocation API; every test must fail. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

#define NOINLINE __attribute__((noinline))

static NOINLINE void
leak_with_malloc(void)
{
    corpus_sink[0] = malloc(100); /* MARK:malloc */
}

static void
test_malloc(void)
{
    leak_with_malloc();
}

static NOINLINE void
leak_with_calloc(void)
{
    corpus_sink[1] = calloc(1, 5000); /* MARK:calloc */
}

static void
test_calloc(void)
{
    leak_with_calloc();
}

static NOINLINE void
leak_with_realloc(void)
{
    char *p = malloc(10);

    for (size_t n = 20; n <= 1000 && p; n *= 2)
        p = realloc(p, n); /* MARK:realloc */
    corpus_sink[2] = p;
}

static void
test_realloc(void)
{
    leak_with_realloc();
}

static NOINLINE void
leak_with_strdup(void)
{
    corpus_sink[3] = strdup("hello"); /* MARK:strdup */
}

static void
test_strdup(void)
{
    leak_with_strdup();
}

static NOINLINE void
leak_with_memalign(void)
{
    void *p = NULL;

    if (posix_memalign(&p, 64, 256) == 0) /* MARK:memalign */
        corpus_sink[4] = p;
}

static void
test_posix_memalign(void)
{
    leak_with_memalign();
}

static NOINLINE void
leak_one_byte(void)
{
    corpus_sink[5] = malloc(1); /* MARK:one_byte */
}

static void
test_one_byte(void)
{
    leak_one_byte();
}

static void
test_shared_library(void)
{
    corpus_shared_leak(48);
}

/* The library stays loaded: a second run in the process would not run
 * its constructor again, so warmup would hide what it keeps. */
static void
test_dlopen_constructor(void)
{
    CU_ASSERT_PTR_NOT_NULL(dlopen(CORPUS_CTOR_LIB, RTLD_NOW));
}

static void *
thread_leaker(void *arg)
{
    (void)arg;
    corpus_sink[6] = malloc(200); /* MARK:thread */
    return NULL;
}

static void
test_joined_thread(void)
{
    pthread_t t;

    CU_ASSERT_FATAL(pthread_create(&t, NULL, thread_leaker, NULL) == 0);
    pthread_join(t, NULL);
}

static void
test_inlined(void)
{
    corpus_inline_caller();
}

void
corpus_register_leaks(void)
{
    CU_pSuite s = CU_add_suite("leaks", NULL, NULL);

    CU_add_test(s, "malloc", test_malloc);
    CU_add_test(s, "calloc", test_calloc);
    CU_add_test(s, "realloc", test_realloc);
    CU_add_test(s, "strdup", test_strdup);
    CU_add_test(s, "posix_memalign", test_posix_memalign);
    CU_add_test(s, "one_byte", test_one_byte);
    CU_add_test(s, "shared_library", test_shared_library);
    CU_add_test(s, "dlopen_constructor", test_dlopen_constructor);
    CU_add_test(s, "joined_thread", test_joined_thread);
    CU_add_test(s, "inlined", test_inlined);
}
