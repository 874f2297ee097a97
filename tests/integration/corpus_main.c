/* SPDX-License-Identifier: MIT */
/*
 * The corpus runner: registers every suite and runs it under the gate.
 * With CORPUS_COUNT_RUNS=1 in the environment it also counts each test's
 * runs in this process and prints them after the run (corpus_runs.c; the
 * parity checks set it), which adds one frame under every test's stacks.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <leakgate/cunit.h>

#include "corpus.h"

void *volatile corpus_sink[64];

int
main(int argc, char **argv)
{
    const char *count = getenv("CORPUS_COUNT_RUNS");
    bool counting = count && strcmp(count, "1") == 0;
    int status;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    corpus_register_leaks();
    corpus_register_fixtures();
    corpus_register_rules();
    corpus_register_real();
    corpus_register_once();
    corpus_register_held();
    corpus_register_peak();
    corpus_register_clean();
    if (counting && corpus_runs_wrap() != 0)
        return 3;
    status = leakgate_cunit_main(argc, argv);
    if (counting)
        corpus_runs_print();
    return status;
}
