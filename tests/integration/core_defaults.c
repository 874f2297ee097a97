/* SPDX-License-Identifier: MIT */
/*
 * core_defaults: the core API with its default options
 * (LEAKGATE_GATE_OPTIONS_INIT, never parsed): the gate still uses the
 * thresholds file the build named (leakgate_thresholds_file()), which
 * lets core/keeps keep 64 B (issue 42, item 8).  Built twice: with the
 * file (the window passes, exit 0) and without (every limit is 0: it
 * fails, exit 1).
 */
#include <leakgate/leakgate.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

int
main(void)
{
    struct leakgate_gate_options opts = LEAKGATE_GATE_OPTIONS_INIT;
    const leakgate_verdict *v = NULL;
    leakgate_gate *gate;
    int failed;

    if (leakgate_gate_new(&gate, &opts) < 0 ||
        leakgate_gate_begin(gate, "core", "keeps") < 0) {
        fprintf(stderr, "core_defaults: %s\n", leakgate_error_last());
        return 3;
    }
    sink = malloc(40);
    if (leakgate_gate_end(gate, 1, &v) < 0) {
        fprintf(stderr, "core_defaults: %s\n", leakgate_error_last());
        return 3;
    }
    leakgate_gate_print_verdict(gate, v, stderr);
    failed = leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL;
    printf("core/keeps: %s\n", failed ? "fail" : "pass");
    leakgate_gate_free(gate);
    free(sink);
    return failed;
}
