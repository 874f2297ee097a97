/* SPDX-License-Identifier: MIT */
/*
 * cmd_run: `leakgate run [options] -- PROGRAM [ARGS...]`, gating an
 * unmodified CUnit program.  Main-like and thin: parses the options shared
 * with linked test binaries, hands the rest to leakgate_run_program()
 * (include/leakgate/run.h), prints its diagnostics as `leakgate: ...` and
 * returns the gate's exit status, never the program's.
 */
#include "cmd_run.h"

#include <stdio.h>
#include <string.h>

#include "cli_args.h"
#include "leakgate/leakgate.h"
#include "leakgate/run.h"

/* The index of "--" in argv, or argc when there is none. */
static int
separator(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return i;
    }
    return argc;
}

/* --help, --version, --update-thresholds, --tighten, a missing program:
 * the status,
 * or -1 to go on. */
static int
early_exit(const struct leakgate_gate_options *opts, int sep, int argc)
{
    if (opts->help) {
        fputs(leakgate_run_usage(), stdout);
        return 0;
    }
    if (opts->show_version) {
        printf("leakgate %s\n", leakgate_version());
        return 0;
    }
    if (opts->update_thresholds) {
        fputs("leakgate: run: --update-thresholds is not supported with "
              "`leakgate run`; write results and merge them instead (the "
              "run exits 1 when there is growth to merge: `;`, not "
              "`&&`):\n"
              "  leakgate run --json DIR/ -- PROGRAM; "
              "leakgate thresholds merge DIR --into leakgate.yaml\n",
              stderr);
        return 2;
    }
    if (opts->tighten) {
        fputs("leakgate: run: --tighten (LEAKGATE_TIGHTEN) is not supported "
              "with `leakgate run`; write results and tighten from them:\n"
              "  leakgate run --json DIR/ -- PROGRAM; "
              "leakgate thresholds merge DIR --into leakgate.yaml "
              "--tighten --dry-run\n",
              stderr);
        return 2;
    }
    if (sep + 1 >= argc) {
        fputs("leakgate: run: no program given (usage: leakgate run "
              "[options] -- PROGRAM [ARGS...])\n",
              stderr);
        return 2;
    }
    return -1;
}

int
leakgate_cmd_run(int argc, char **argv)
{
    struct leakgate_gate_options opts;
    leakgate_run *run = NULL;
    int sep = separator(argc, argv);
    int rc, status, program_at;

    rc = leakgate_gate_options_parse_args(&opts, sep, argv, &program_at);
    if (rc < 0 || program_at < sep) {
        const char *hint = sep == argc ? " (the program goes after --: "
                                         "leakgate run [options] -- PROGRAM "
                                         "[ARGS...])"
                                       : "";

        if (rc < 0)
            fprintf(stderr, "leakgate: run: %s%s\n", leakgate_error_last(),
                    hint);
        else
            fprintf(stderr, "leakgate: run: unexpected argument '%s'%s\n",
                    argv[program_at], hint);
        return 2;
    }
    status = early_exit(&opts, sep, argc);
    if (status >= 0)
        return status;
    rc = leakgate_run_program(&run, &opts, argv + sep + 1);
    if (rc < 0)
        return cli_fail(rc == LEAKGATE_EUSAGE ? 2 : 3);
    for (size_t i = 0; i < leakgate_run_message_count(run); i++)
        fprintf(stderr, "leakgate: %s\n", leakgate_run_message(run, i));
    status = leakgate_run_status(run);
    rc = leakgate_run_write_results(run);
    if (rc < 0) /* 2: an output refused (a link, a device...) */
        status = cli_fail(rc == LEAKGATE_EUSAGE ? 2 : 3);
    leakgate_run_free(run);
    return status;
}
