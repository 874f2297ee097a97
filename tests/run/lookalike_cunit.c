/* SPDX-License-Identifier: MIT */
/*
 * A CUnit look-alike runtime, as some projects ship (Eclipse Cyclone DDS
 * links its own libucunit): the CUnit API a test program calls, over a
 * registry and a runner of its own.  It exports no CU_get_registry(), so
 * leakgate's glue, which reads CUnit's registry, would see libcunit's
 * empty one: `leakgate run` must refuse it, naming this library, never
 * pass a run it did not measure (issue 39 item 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*lookalike_fn)(void);

struct lookalike_test {
    const char *name;
    lookalike_fn fn;
};

struct lookalike_suite {
    const char *name;
    struct lookalike_test tests[8];
    int ntests;
};

static struct lookalike_suite suites[8];
static int nsuites;
static unsigned int failures;

int
CU_initialize_registry(void)
{
    nsuites = 0;
    failures = 0;
    return 0;
}

void *
CU_add_suite(const char *name, void *init, void *cleanup)
{
    (void)init;
    (void)cleanup;
    if (nsuites == 8)
        return NULL;
    suites[nsuites].name = name;
    suites[nsuites].ntests = 0;
    return &suites[nsuites++];
}

void *
CU_add_test(void *suite, const char *name, lookalike_fn fn)
{
    struct lookalike_suite *s = suite;

    if (!s || s->ntests == 8)
        return NULL;
    s->tests[s->ntests].name = name;
    s->tests[s->ntests].fn = fn;
    return &s->tests[s->ntests++];
}

void
CU_basic_set_mode(int mode)
{
    (void)mode;
}

int
CU_basic_run_tests(void)
{
    for (int i = 0; i < nsuites; i++) {
        for (int k = 0; k < suites[i].ntests; k++) {
            printf("lookalike: %s/%s\n", suites[i].name,
                   suites[i].tests[k].name);
            suites[i].tests[k].fn();
        }
    }
    return 0;
}

unsigned int
CU_get_number_of_failures(void)
{
    return failures;
}

void
CU_cleanup_registry(void)
{
    nsuites = 0;
}
