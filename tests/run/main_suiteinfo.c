/* SPDX-License-Identifier: MIT */
/*
 * A runner in the style of a real suite (libdict's unit_tests.c): suites
 * registered from CU_SuiteInfo and CU_TestInfo arrays with
 * CU_register_suites(), the project's own counting allocator under every
 * object, CU_BRM_SILENT, and a main that walks CU_get_failure_list() after
 * CU_basic_run_tests() and returns its own status.  argv[1] "leak": the
 * lookup test forgets one entry (which the project's own count shows but
 * does not check); "fail": one assertion of it fails.
 */
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t bytes_live;
static int leak;
static int fail;

/* The project's allocator: every object carries its size. */
static void *
xalloc(size_t n)
{
    size_t *p = malloc(sizeof *p + n);

    if (!p)
        abort();
    p[0] = n;
    bytes_live += n;
    return &p[1];
}

static void
xfree(void *q)
{
    size_t *p = (size_t *)q - 1;

    bytes_live -= p[0];
    free(p);
}

struct entry {
    struct entry *next;
    char key[24];
};

static struct entry *
table_add(struct entry *head, const char *key)
{
    struct entry *e = xalloc(sizeof *e);

    e->next = head;
    snprintf(e->key, sizeof e->key, "%s", key);
    return e;
}

/* Free the list, all but its last entry when keep_last. */
static void
table_free(struct entry *e, int keep_last)
{
    while (e) {
        struct entry *next = e->next;

        if (next || !keep_last)
            xfree(e);
        e = next;
    }
}

static struct entry *
table_of(int n)
{
    struct entry *head = NULL;
    char key[24];

    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        head = table_add(head, key);
    }
    return head;
}

static void
test_insert(void)
{
    struct entry *t = table_of(100);
    int n = 0;

    for (const struct entry *e = t; e; e = e->next)
        n++;
    CU_ASSERT_EQUAL(n, 100);
    table_free(t, 0);
}

static void
test_lookup(void)
{
    struct entry *t = table_of(10);
    const struct entry *found = NULL;

    for (const struct entry *e = t; e && !found; e = e->next)
        if (strcmp(e->key, "key-3") == 0)
            found = e;
    CU_ASSERT_PTR_NOT_NULL(found);
    CU_ASSERT_FALSE(fail);
    table_free(t, leak);
}

static CU_TestInfo table_tests[] = {
    {"insert", test_insert},
    {"lookup", test_lookup},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {.pName = "tables", .pTests = table_tests},
    CU_SUITE_INFO_NULL,
};

int
main(int argc, char **argv)
{
    unsigned failures = 0;

    leak = argc > 1 && strcmp(argv[1], "leak") == 0;
    fail = argc > 1 && strcmp(argv[1], "fail") == 0;
    if (CU_initialize_registry() != CUE_SUCCESS ||
        CU_register_suites(suites) != CUE_SUCCESS) {
        fprintf(stderr, "Failed to initialize tests!\n");
        return 2;
    }
    CU_basic_set_mode(CU_BRM_SILENT);
    if (CU_basic_run_tests() != CUE_SUCCESS) {
        fprintf(stderr, "Failed to run tests!\n");
        return 2;
    }
    for (const CU_FailureRecord *f = CU_get_failure_list(); f; f = f->pNext)
        fprintf(stderr, "%u: %s (%s:%u)\n", ++failures, f->pTest->pName,
                f->strFileName, f->uiLineNumber);
    CU_cleanup_registry();
    printf("%zu bytes live\n", bytes_live);
    return failures ? 1 : 0;
}
