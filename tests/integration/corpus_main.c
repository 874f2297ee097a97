/* SPDX-License-Identifier: MIT */
/* The corpus runner: registers every suite and runs it under the gate. */
#include <leakgate/cunit.h>

#include "corpus.h"

void *volatile corpus_sink[64];

int
main(int argc, char **argv)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    corpus_register_leaks();
    corpus_register_fixtures();
    corpus_register_rules();
    corpus_register_real();
    corpus_register_clean();
    return leakgate_cunit_main(argc, argv);
}
