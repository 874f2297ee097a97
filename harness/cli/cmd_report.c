/* SPDX-License-Identifier: MIT */
/*
 * `leakgate report RESULTS... [--junit FILE] [--html DIR] [--sarif FILE]
 * [--thresholds FILE]`: one summary of the JSON results of any number of test
 * processes (ctest -j, CI shards): the failing windows' reports, the counts,
 * one line per failure, the ten largest peaks (when the results have peaks);
 * optionally one JUnit file, one HTML page, one SARIF log, and what
 * `leakgate thresholds merge` would change in a thresholds file.  Public
 * API only; the summary goes to stdout, `leakgate: <message>` to stderr.
 * Exit status: 0 every window passed; 1 some window failed; 2 usage
 * error, missing or malformed input; 3 an output could not be written.
 */
#include "cmd_report.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leakgate/compare.h"
#include "leakgate/thresholds.h"

#include "cli_args.h"

#define VERB "report"

static const char report_usage[] =
    "usage: leakgate report RESULTS... [--junit FILE] [--html DIR]\n"
    "                       [--sarif FILE [--source-root DIR]]\n"
    "                       [--thresholds FILE [--slack SLACK]]\n"
    "\n"
    "One summary of JSON results (files written by --json, or directories\n"
    "of them): the report of every failing window, the counts, one line\n"
    "per failure, and the ten largest peaks (highest heap above a window's\n"
    "start; results of a leakgate without peaks have none).  A window\n"
    "found in several files is counted once (its judged record wins, a\n"
    "failure over a pass).\n"
    "\n"
    "  --junit FILE       also write one JUnit XML file for every window\n"
    "  --html DIR         also write DIR/index.html, the run's page\n"
    "  --sarif FILE       also write the failing windows as SARIF 2.1.0\n"
    "                     (code scanning: the leak on its source line)\n"
    "  --source-root DIR  with --sarif: paths relative to DIR (default: the\n"
    "                     git work tree of the current directory, else it)\n"
    "  --thresholds FILE  also say what 'leakgate thresholds merge' would\n"
    "                     change in FILE, and which of its limits are loose\n"
    "                     or stale (nothing is written)\n"
    "  --slack SLACK      with --thresholds: how far above the measurement\n"
    "                     a limit may stay (25%, or a size) [LEAKGATE_SLACK]\n"
    "  --help             this text\n"
    "\n"
    "Exit status: 0 every window passed; 1 some window failed (the gate or\n"
    "an assertion); 2 usage error, missing or malformed results, invalid\n"
    "thresholds file; 3 an output could not be written.\n";

struct report_args {
    const char *junit, *html, *thresholds, *slack, *sarif, *source_root;
    char **inputs;
    int ninputs;
};

static int
parse_option(struct report_args *a, int argc, char **argv, int *i)
{
    static const char *const names[] = {"--junit", "--html",  "--thresholds",
                                        "--slack", "--sarif", "--source-root"};
    const char **fields[] = {&a->junit, &a->html,  &a->thresholds,
                             &a->slack, &a->sarif, &a->source_root};

    return cli_value_options(VERB, names, fields,
                             sizeof names / sizeof names[0], argc, argv, i);
}

static int
parse_args(struct report_args *a, int argc, char **argv)
{
    bool options = true;
    int rc = 0;

    memset(a, 0, sizeof *a);
    a->inputs = calloc((size_t)argc, sizeof *a->inputs);
    if (!a->inputs)
        return cli_usage_error(VERB, "out of memory");
    for (int i = 1; i < argc && rc == 0; i++) {
        if (options && strcmp(argv[i], "--") == 0)
            options = false;
        else if (!options || argv[i][0] != '-' || argv[i][1] == '\0')
            a->inputs[a->ninputs++] = argv[i];
        else
            rc = parse_option(a, argc, argv, &i);
    }
    if (rc == 0 && a->ninputs == 0)
        rc = cli_usage_error(VERB,
                             "needs at least one results file or directory");
    if (rc == 0 && a->slack && !a->thresholds)
        rc = cli_usage_error(VERB, "--slack needs --thresholds");
    if (rc == 0 && a->source_root && !a->sarif)
        rc = cli_usage_error(VERB, "--source-root needs --sarif");
    if (!a->slack && getenv("LEAKGATE_SLACK") && *getenv("LEAKGATE_SLACK"))
        a->slack = getenv("LEAKGATE_SLACK");
    return rc;
}

/* What a merge would do to the thresholds file (never written). */
static int
thresholds_preview(leakgate_results *r, const struct report_args *a)
{
    struct leakgate_thresholds_options opts = LEAKGATE_THRESHOLDS_OPTIONS_INIT;
    leakgate_thresholds_outcome *outcome = NULL;
    int rc;

    opts.write = 0;
    opts.slack = a->slack;
    rc = leakgate_results_update_thresholds(r, a->thresholds, &opts, &outcome);
    if (rc < 0)
        return cli_fail(rc == LEAKGATE_ENOMEM || rc == LEAKGATE_ERROR ? 3 : 2);
    fputs(leakgate_thresholds_outcome_text(outcome), stdout);
    leakgate_thresholds_outcome_free(outcome);
    return 0;
}

static int
outputs(leakgate_results *r, const struct report_args *a)
{
    char root[PATH_MAX];

    if (a->junit && leakgate_results_write_junit(r, a->junit) < 0)
        return cli_fail(3);
    if (a->html && leakgate_results_write_html(r, a->html) < 0)
        return cli_fail(3);
    if (a->sarif && cli_source_root(root, a->source_root, VERB) != 0)
        return 2;
    if (a->sarif && leakgate_results_write_sarif(r, a->sarif, root) < 0)
        return cli_fail(3);
    return a->thresholds ? thresholds_preview(r, a) : 0;
}

static int
run_report(const struct report_args *a)
{
    leakgate_results *r = NULL;
    const char *text;
    size_t failed = 0;
    int status = 0;

    if (leakgate_results_new(&r) < 0)
        return cli_fail(3);
    for (int i = 0; i < a->ninputs && status == 0; i++) {
        if (leakgate_results_load(r, a->inputs[i]) < 0)
            status = cli_fail(2);
    }
    if (status == 0 && leakgate_results_summary(r, &text, &failed) < 0)
        status = cli_fail(3);
    if (status == 0) {
        fputs(text, stdout);
        status = outputs(r, a);
    }
    leakgate_results_free(r);
    return status == 0 && failed > 0 ? 1 : status;
}

int
leakgate_cmd_report(int argc, char **argv)
{
    struct report_args a;
    int status;

    if (cli_help(argc, argv, report_usage))
        return 0;
    status = parse_args(&a, argc, argv);
    if (status == 0)
        status = run_report(&a);
    free(a.inputs);
    return status;
}
