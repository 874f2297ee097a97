/* SPDX-License-Identifier: MIT */
/* bench_common: configuration, deep call chains, registration helpers. */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

struct bench_config bench_cfg;

void
bench_config_read(struct bench_config *out)
{
    const char *size = getenv("BENCH_SIZE");
    const char *leak = getenv("BENCH_LEAK");
    const char *accept = getenv("BENCH_ACCEPT");

    out->small = size && strcmp(size, "small") == 0;
    out->leak = leak && strcmp(leak, "1") == 0;
    out->accept = accept && strcmp(accept, "1") == 0;
}

/* The volatile counter after the call keeps it from being a tail call. */
static volatile int descend_frames;

__attribute__((noinline)) void
bench_descend(int depth, void (*fn)(void *payload), void *payload)
{
    if (depth <= 1)
        fn(payload);
    else
        bench_descend(depth - 1, fn, payload);
    descend_frames = descend_frames + 1;
}

uint64_t
bench_rand(uint64_t *state)
{
    uint64_t x = *state;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 2685821657736338717u;
}

CU_pSuite
bench_add_suite(const char *name,
                CU_SetUpFunc setup,
                CU_TearDownFunc teardown,
                const struct bench_test *tests,
                size_t n)
{
    CU_pSuite s =
        CU_add_suite_with_setup_and_teardown(name, NULL, NULL, setup, teardown);

    for (size_t i = 0; s && i < n; i++) {
        if (!CU_add_test(s, tests[i].name, tests[i].fn))
            return NULL;
    }
    return s;
}
