/* SPDX-License-Identifier: MIT */
/*
 * fuzz: what the harnesses in tests/fuzz share.  Each fuzz_<parser>.c
 * defines LLVMFuzzerTestOneInput(), the libFuzzer entry point; it is
 * linked either with libFuzzer (-fsanitize=fuzzer, LEAKGATE_FUZZ=ON) or
 * with replay.c, which feeds it the files of a corpus directory so that
 * every build replays the seeds and the regressions (ctest fuzz/replay_*).
 *
 * A harness checks properties of the parser's result, not only that it
 * does not crash; a violated property calls FUZZ_CHECK's abort(), which
 * libFuzzer and ctest both report as a failure with the message.
 */
#ifndef LEAKGATE_TESTS_FUZZ_H
#define LEAKGATE_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with the failed condition and its place when cond is false. */
#define FUZZ_CHECK(cond)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__,        \
                    __LINE__, #cond);                                          \
            abort();                                                           \
        }                                                                      \
    } while (0)

#endif
