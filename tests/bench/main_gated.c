/* SPDX-License-Identifier: MIT */
/* The gated runner: the same tests, every one under the leakgate gate. */
#include <leakgate/cunit.h>

#include "bench.h"

int
main(int argc, char **argv)
{
    bench_config_read(&bench_cfg);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    if (bench_register(&bench_cfg) != 0) {
        CU_cleanup_registry();
        return 3;
    }
    return leakgate_cunit_main(argc, argv);
}
