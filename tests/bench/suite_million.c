/* SPDX-License-Identifier: MIT */
/*
 * The "million" suite: a test that leaves a million objects.  Two tests:
 * million/build makes 1,000,000 objects of 16 bytes (8 with
 * BENCH_SIZE=small: 20,000) in a list and frees them all; with
 * BENCH_LEAK=1, million/leak makes as many and frees none (the list's
 * head is dropped: every object lost).  What the gate costs when a
 * change leaks on that scale: the time and memory of judging it.
 */
#include <stdlib.h>

#include "bench.h"

struct cell {
    struct cell *next;
    long value;
};

static size_t
count(void)
{
    return bench_cfg.small ? 20000 : 1000000;
}

/* A list of count() cells, in allocation order reversed. */
static struct cell *
build(void)
{
    struct cell *head = NULL;

    for (size_t i = 0; i < count(); i++) {
        struct cell *c = malloc(sizeof *c); /* BENCH-LEAK:million */

        if (!c)
            break;
        c->next = head;
        c->value = (long)i;
        head = c;
    }
    return head;
}

static void
test_build(void)
{
    struct cell *head = build();
    size_t n = 0;

    while (head) {
        struct cell *next = head->next;

        free(head);
        head = next;
        n++;
    }
    CU_ASSERT_EQUAL(n, count());
}

static void
test_leak(void)
{
    struct cell *volatile head = build();

    CU_ASSERT_PTR_NOT_NULL(head);
    head = NULL;
}

static const struct bench_test tests[] = {{"build", test_build},
                                          {"leak", test_leak}};

int
bench_register(const struct bench_config *cfg)
{
    return bench_add_suite("million", NULL, NULL, tests, cfg->leak ? 2 : 1)
               ? 0
               : -1;
}
