/* SPDX-License-Identifier: MIT */
/*
 * uninit_heap: a plain CUnit program whose one test reads heap memory it
 * never set -- the pattern of guacamole-server 1.6.0's
 * `[socket] nested_send_instruction` (guac_socket_nest() mallocs its
 * 7 KiB data and never sets `written`).  Its outcome is the allocator's:
 * glibc hands back a chunk an earlier free left dirty (the assertion
 * fails, as in guacamole's plain run), jemalloc a region of a fresh 8 KiB
 * slab (zeros: it passes, as under `leakgate run` did when it preloaded
 * jemalloc for the whole run).  tests/run/CMakeLists.txt checks that a
 * gated run keeps the plain run's outcome: linked with leakgate::cunit
 * (built with UNINIT_HEAP_LINKED: main ends with leakgate_cunit_main())
 * and under `leakgate run`, both on the C library's malloc; and that on
 * jemalloc (leakgate::cunit_jemalloc) MALLOC_CONF=junk:alloc
 * (docs/troubleshooting.md) makes the test fail as the plain one does.
 * With UNINIT_HEAP_FRESH set nothing dirties the chunk and the test
 * passes; glibc's MALLOC_PERTURB_ (the troubleshooting entry's check for
 * an outcome that does not depend on the heap's history) makes it fail
 * in the plain and the gated run alike.
 */
#include <CUnit/Basic.h>
#include <stdlib.h>
#include <string.h>
#ifdef UNINIT_HEAP_LINKED
#include <leakgate/cunit.h>
#endif

struct nest {
    char buffer[7168];
    int written; /* never set by nest_new(): the bug */
};

static struct nest *
nest_new(void)
{
    return malloc(sizeof(struct nest));
}

static void
test_field(void)
{
    /* 9,000 B: glibc splits this freed chunk for the next request (the
     * guard keeps it off the top chunk); jemalloc's 10 KiB class is not
     * the 8 KiB class nest_new() draws from. */
    char *dirty = malloc(9000);
    void *guard = malloc(16);
    struct nest *n;

    /* UNINIT_HEAP_FRESH leaves it as glibc handed it out (fresh memory:
     * zeros), so that only MALLOC_PERTURB_ makes the read fail. */
    if (dirty && !getenv("UNINIT_HEAP_FRESH"))
        memset(dirty, 0x5a, 9000);
    free(dirty);
    n = nest_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    CU_ASSERT_EQUAL(n->written, 0);
    free(n);
    free(guard);
}

int
main(void)
{
    CU_pSuite s;
    int rc;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("uninit", NULL, NULL);
    if (!s || !CU_add_test(s, "field", test_field))
        return 2;
#ifdef UNINIT_HEAP_LINKED
    (void)rc;
    return leakgate_cunit_main(0, NULL);
#endif
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    rc = CU_get_number_of_failures() > 0 ? 1 : 0;
    CU_cleanup_registry();
    return rc;
}
