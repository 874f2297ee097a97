/* SPDX-License-Identifier: MIT */
/*
 * heap: leakgate's own heap (harness/base/heap.c).  Under the sanitizers
 * it is the C library's (heap.h): the cases that need an own heap say so
 * and check only what holds for both.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heap.h"
#include "unit.h"
#include "util.h"

/* Whether this build has an own heap (not under the sanitizers). */
static bool
own_heap(void)
{
    void *p = leakgate_heap__alloc(1);
    bool own = leakgate_heap__owns(p);

    leakgate_heap__free(p);
    return own;
}

/* Every size from 1 byte to past the largest class: aligned, writable to
 * its end, not overlapping the others, owned up to 1 MiB only. */
static void
test_heap__sizes(void)
{
    static const size_t sizes[] = {1,
                                   15,
                                   16,
                                   17,
                                   255,
                                   256,
                                   257,
                                   320,
                                   321,
                                   4095,
                                   4096,
                                   65536,
                                   65537,
                                   (size_t)1 << 20,
                                   ((size_t)1 << 20) + 1};
    enum { N = sizeof sizes / sizeof sizes[0] };
    unsigned char *p[N];
    bool own = own_heap();

    for (size_t i = 0; i < N; i++) {
        p[i] = leakgate_heap__alloc(sizes[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p[i]);
        CU_ASSERT_EQUAL((uintptr_t)p[i] % 16, 0);
        memset(p[i], (int)i + 1, sizes[i]);
        if (own)
            CU_ASSERT_EQUAL(leakgate_heap__owns(p[i]),
                            sizes[i] <= ((size_t)1 << 20));
    }
    for (size_t i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(p[i][0], (unsigned char)(i + 1));
        CU_ASSERT_EQUAL(p[i][sizes[i] - 1], (unsigned char)(i + 1));
        leakgate_heap__free(p[i]);
    }
    leakgate_heap__free(NULL);
}

/* A freed object is used again for its class; zeroed memory is zero even
 * then. */
static void
test_heap__reuse_and_zero(void)
{
    unsigned char *a = leakgate_heap__alloc(100), *b, *z;

    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    memset(a, 0xa5, 100);
    leakgate_heap__free(a);
    b = leakgate_heap__alloc(100);
    if (own_heap())
        CU_ASSERT_PTR_EQUAL(b, a);
    leakgate_heap__free(b);
    z = leakgate_heap__zalloc(10, 10);
    CU_ASSERT_PTR_NOT_NULL_FATAL(z);
    for (size_t i = 0; i < 100; i++)
        CU_ASSERT_EQUAL_FATAL(z[i], 0);
    leakgate_heap__free(z);
    CU_ASSERT_PTR_NULL(leakgate_heap__zalloc(SIZE_MAX / 2, 3));
}

/* Grown, the text is kept; shrunk to half or less, it moves to a smaller
 * object with its text; resized from NULL, it is new. */
static void
test_heap__resize(void)
{
    char *p = leakgate_heap__resize(NULL, 10), *q;

    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    strcpy(p, "abcdefghi");
    q = leakgate_heap__resize(p, 5000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_STRING_EQUAL(q, "abcdefghi");
    memset(q + 10, 'x', 4989);
    q[4999] = '\0';
    p = leakgate_heap__resize(q, 12);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(memcmp(p, "abcdefghi\0xx", 12), 0);
    if (own_heap())
        CU_ASSERT_PTR_NOT_EQUAL(p, q);
    q = leakgate_heap__resize(p, 11); /* more than half: in place */
    if (own_heap())
        CU_ASSERT_PTR_EQUAL(q, p);
    leakgate_heap__free(q);
}

/* The C library's objects pass through: freed and resized by it. */
static void
test_heap__foreign_objects(void)
{
    char *m = malloc(40), *r;

    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_FALSE(leakgate_heap__owns(m));
    CU_ASSERT_FALSE(leakgate_heap__owns(&m));
    strcpy(m, "the C library's");
    r = leakgate_heap__resize(m, 4000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_STRING_EQUAL(r, "the C library's");
    CU_ASSERT_FALSE(leakgate_heap__owns(r));
    leakgate_heap__free(r);
}

/* An own object handed to the C library (getline's buffer, a library's
 * free()) goes back to leakgate's heap through the allocation wrappers. */
static void
test_heap__through_the_c_library(void)
{
    char *line = leakgate_util__malloc(4);
    size_t cap = 4;
    char text[] = "a line longer than four bytes\nsecond\n";
    FILE *f = fmemopen(text, sizeof text - 1, "r");

    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(getline(&line, &cap, f), 30);
    CU_ASSERT_STRING_EQUAL(line, "a line longer than four bytes\n");
    CU_ASSERT(cap >= 31);
    fclose(f);
    free(line); /* the C library's free: leakgate's wrapper */
    line = leakgate_util__strdup("freed by realloc(p, 0)");
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    line = realloc(line, 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    CU_ASSERT_STRING_EQUAL(line, "freed by realloc(p, 0)");
    free(line);
}

/* A child forked while the parent has objects allocates and frees. */
static void
test_heap__fork(void)
{
    char *p = leakgate_util__strdup("parent");
    pid_t pid;
    int status = 0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        char *c = leakgate_util__strdup("child");
        int ok = c && strcmp(p, "parent") == 0 && strcmp(c, "child") == 0;

        leakgate_util__free(c);
        leakgate_util__free(p);
        _exit(ok ? 0 : 1);
    }
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    leakgate_util__free(p);
}

/* Tables carved beside the heap: page-aligned, zeroed, writable, apart
 * from each other and from the heap's objects, below them; a request
 * larger than the room left is refused (NULL) and map_zeroed() then maps
 * it with mmap.  Under the sanitizers there is no reservation: NULL. */
static void
test_heap__tables(void)
{
    bool own = own_heap();
    unsigned char *a = leakgate_heap__map(10000);
    unsigned char *b = leakgate_heap__map(1);
    void *big;

    if (!own) {
        CU_ASSERT_PTR_NULL(a);
        CU_ASSERT_PTR_NULL(b);
        return;
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL((uintptr_t)a % 4096, 0);
    CU_ASSERT_EQUAL((uintptr_t)b % 4096, 0);
    /* 10000 bytes are three pages, b is carved below them */
    CU_ASSERT_TRUE(b + 4096 <= a);
    CU_ASSERT_FALSE(leakgate_heap__owns(a));
    CU_ASSERT_FALSE(leakgate_heap__owns(b));
    CU_ASSERT_TRUE((uintptr_t)a + 3 * 4096 <= leakgate_heap__span.start);
    for (size_t i = 0; i < 3 * 4096; i++)
        CU_ASSERT_EQUAL_FATAL(a[i], 0);
    memset(a, 0xa5, 3 * 4096);
    CU_ASSERT_EQUAL(b[0], 0);
    b[4095] = 1;
    CU_ASSERT_EQUAL(a[0], 0xa5);
    CU_ASSERT_PTR_NULL(leakgate_heap__map((size_t)4 << 30));
    CU_ASSERT_PTR_NULL(leakgate_heap__map(SIZE_MAX - 100));
    big = leakgate_util__map_zeroed((size_t)4 << 30, true);
    CU_ASSERT_PTR_NOT_NULL(big);
    if (big)
        CU_ASSERT_EQUAL(munmap(big, (size_t)4 << 30), 0);
}

const char *const unit_suite = "heap";
const struct unit_case unit_cases[] = {
    {"test_heap__sizes", test_heap__sizes},
    {"test_heap__reuse_and_zero", test_heap__reuse_and_zero},
    {"test_heap__resize", test_heap__resize},
    {"test_heap__foreign_objects", test_heap__foreign_objects},
    {"test_heap__through_the_c_library", test_heap__through_the_c_library},
    {"test_heap__fork", test_heap__fork},
    {"test_heap__tables", test_heap__tables},
    {NULL, NULL},
};
