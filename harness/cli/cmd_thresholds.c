/* SPDX-License-Identifier: MIT */
/*
 * `leakgate thresholds check FILE...` and `leakgate thresholds merge
 * RESULTS... --into FILE`: validate thresholds files, and fold the JSON
 * results of any number of test processes (ctest -j, CI shards) into one.
 * Public API only (leakgate/thresholds.h); prints the outcome on stdout
 * and `leakgate: <message>` on stderr.  Exit status: 0 done; 2 usage
 * error, missing or malformed input, invalid thresholds file; 3 the
 * thresholds file could not be written.
 */
#include "cmd_thresholds.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "leakgate/thresholds.h"

#include "cli_args.h"

#define VERB "thresholds"

static const char thresholds_usage[] =
    "usage: leakgate thresholds check FILE...\n"
    "       leakgate thresholds merge RESULTS... --into FILE [--tighten]\n"
    "                                 [--slack SLACK] [--dry-run]\n"
    "\n"
    "check  validate thresholds files without running any test (for a\n"
    "       pre-commit hook): 'FILE: ok', or the error as FILE:LINE:COLUMN.\n"
    "merge  fold JSON results (files written by --json, or directories of\n"
    "       them) into the thresholds file: raise limits and add stack\n"
    "       rules so that every measured test passes, and report loose\n"
    "       limits and stale entries.  FILE is created when missing.\n"
    "\n"
    "  --into FILE    the thresholds file to update (required)\n"
    "  --tighten      also lower limits far above what was measured and\n"
    "                 remove stack rules that matched nothing; give the\n"
    "                 results of every test, or limits other tests need\n"
    "                 are lowered\n"
    "  --slack SLACK  how far above the measurement a limit may stay: a\n"
    "                 percentage (25%, the default) or a size (4 KiB)\n"
    "                 [LEAKGATE_SLACK]\n"
    "  --dry-run      print what would change, write nothing\n"
    "  --help         this text\n"
    "\n"
    "Exit status: 0 done; 2 usage error, missing or malformed results,\n"
    "invalid thresholds file; 3 the thresholds file could not be written.\n";

struct merge_args {
    const char *into;
    const char *slack;
    bool tighten;
    bool dry_run;
    char **inputs; /* RESULTS..., borrowed from argv */
    int ninputs;
};

static int
parse_merge(struct merge_args *a, int argc, char **argv)
{
    bool options = true;

    memset(a, 0, sizeof *a);
    a->inputs = calloc((size_t)argc, sizeof *a->inputs);
    if (!a->inputs)
        return cli_usage_error(VERB, "out of memory");
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int m;

        if (options && strcmp(arg, "--") == 0)
            options = false;
        else if (!options || arg[0] != '-' || arg[1] == '\0')
            a->inputs[a->ninputs++] = argv[i];
        else if (strcmp(arg, "--tighten") == 0)
            a->tighten = true;
        else if (strcmp(arg, "--dry-run") == 0)
            a->dry_run = true;
        else {
            m = cli_value_option(&a->into, "--into", argc, argv, &i);
            if (m == 0)
                m = cli_value_option(&a->slack, "--slack", argc, argv, &i);
            if (m == 0)
                return cli_usage_error(VERB, "unknown option '%s'", arg);
            if (m < 0)
                return cli_usage_error(VERB, "option '%s' needs a value", arg);
        }
    }
    if (!a->into)
        return cli_usage_error(VERB,
                               "merge needs --into FILE (the thresholds file)");
    if (a->ninputs == 0)
        return cli_usage_error(VERB, "merge needs at least one results file or "
                                     "directory");
    if (!a->slack && getenv("LEAKGATE_SLACK") && *getenv("LEAKGATE_SLACK"))
        a->slack = getenv("LEAKGATE_SLACK");
    return 0;
}

/* Exit status of a failed update: the file's content is the user's to
 * fix (2); not being able to write it, or a bug, is 3. */
static int
update_status(int rc)
{
    return rc == LEAKGATE_EIO || rc == LEAKGATE_ENOMEM || rc == LEAKGATE_ERROR
               ? 3
               : 2;
}

static int
run_merge(const struct merge_args *a)
{
    struct leakgate_thresholds_options opts = LEAKGATE_THRESHOLDS_OPTIONS_INIT;
    leakgate_thresholds_outcome *outcome = NULL;
    leakgate_results *r = NULL;
    struct stat st;
    int rc, status = 0;

    if (stat(a->into, &st) == 0 && S_ISDIR(st.st_mode))
        return cli_usage_error(
            VERB, "--into %s is a directory, not a thresholds file", a->into);
    if (leakgate_results_new(&r) < 0)
        return cli_fail(3);
    for (int i = 0; i < a->ninputs && status == 0; i++) {
        if (leakgate_results_load(r, a->inputs[i]) < 0)
            status = cli_fail(2);
    }
    opts.tighten = a->tighten;
    opts.write = !a->dry_run;
    opts.slack = a->slack;
    if (status == 0) {
        rc = leakgate_results_update_thresholds(r, a->into, &opts, &outcome);
        if (rc < 0)
            status = cli_fail(update_status(rc));
        else
            fputs(leakgate_thresholds_outcome_text(outcome), stdout);
    }
    leakgate_thresholds_outcome_free(outcome);
    leakgate_results_free(r);
    return status;
}

static int
cmd_merge(int argc, char **argv)
{
    struct merge_args a;
    int status = parse_merge(&a, argc, argv);

    if (status == 0)
        status = run_merge(&a);
    free(a.inputs);
    return status;
}

static int
cmd_check(int argc, char **argv)
{
    int status = 0, files = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            fputs(thresholds_usage, stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error(VERB, "unknown option '%s'", argv[i]);
        files++;
        if (leakgate_thresholds_check(argv[i]) < 0)
            status = cli_fail(2);
        else
            printf("%s: ok\n", argv[i]);
    }
    if (files == 0)
        return cli_usage_error(VERB,
                               "check needs at least one thresholds file");
    return status;
}

int
leakgate_cmd_thresholds(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error(VERB, "missing subcommand: check or merge");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(thresholds_usage, stdout);
        return 0;
    }
    if (strcmp(argv[1], "check") == 0)
        return cmd_check(argc - 1, argv + 1);
    if (strcmp(argv[1], "merge") == 0) {
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--help") == 0) {
                fputs(thresholds_usage, stdout);
                return 0;
            }
        }
        return cmd_merge(argc - 1, argv + 1);
    }
    return cli_usage_error(
        VERB, "unknown subcommand '%s' (expected check or merge)", argv[1]);
}
