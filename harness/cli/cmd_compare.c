/* SPDX-License-Identifier: MIT */
/*
 * `leakgate compare BASE HEAD [options]`: the JSON results of two runs
 * (the target branch's and the change's; files or directories, shards
 * merged) compared test by test: retained bytes, peak and allocations,
 * new and removed tests, regressions first.  Text (default), Markdown or
 * JSON on stdout; optionally Markdown, JSON and SARIF files.  Public API
 * only; `leakgate: <message>` to stderr.  Exit status: 0 no regression;
 * 1 a regression; 2 usage error, missing, malformed or mismatched
 * results; 3 an output could not be written.
 */
#include "cmd_compare.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "leakgate/compare.h"

#include "cli_args.h"

#define VERB "compare"

static const char compare_usage[] =
    "usage: leakgate compare BASE HEAD [--format text|markdown|json]\n"
    "                        [--markdown FILE] [--json FILE] [--sarif FILE]\n"
    "                        [--source-root DIR] [--peak-growth PCT]\n"
    "                        [--peak-floor SIZE] [--alloc-growth PCT]\n"
    "                        [--alloc-floor N] [--new-stacks]\n"
    "\n"
    "Compare the JSON results of two runs test by test (BASE: the target\n"
    "branch's, HEAD: the change's; each a file written by --json or a\n"
    "directory of them, shards merged): retained bytes, peak and\n"
    "allocations, base -> head, new and removed tests, regressions first,\n"
    "then the largest change.  Growth of retained bytes is always a\n"
    "regression.\n"
    "\n"
    "  --format FORMAT     what stdout gets: text (default), markdown, json\n"
    "  --markdown FILE     also write the Markdown (a job summary, a pull\n"
    "                      request comment) to FILE\n"
    "  --json FILE         also write the JSON to FILE\n"
    "  --sarif FILE        also write the regressions as SARIF 2.1.0\n"
    "  --source-root DIR   SARIF paths are relative to DIR (default: the git\n"
    "                      work tree holding the current directory, else\n"
    "                      the current directory)\n"
    "  --peak-growth PCT   a peak above the base's by more than PCT (10%)\n"
    "                      is a regression; 'off': peaks never are\n"
    "  --peak-floor SIZE   ... and by at least SIZE (4 KiB)\n"
    "  --alloc-growth PCT  allocations above the base's by more than PCT\n"
    "                      (20%) are a regression; 'off': never\n"
    "  --alloc-floor N     ... and by at least N more (16)\n"
    "  --new-stacks        a retained stack the base test did not retain is\n"
    "                      a regression (stacks compared by function names)\n"
    "  --help              this text\n"
    "\n"
    "Exit status: 0 no regression; 1 a regression; 2 usage error, missing,\n"
    "malformed or mismatched results; 3 an output could not be written.\n";

struct compare_args {
    const char *format, *markdown, *json, *sarif, *source_root;
    const char *inputs[2];
    int ninputs;
    struct leakgate_compare_options opts;
};

static int
parse_option(struct compare_args *a, int argc, char **argv, int *i)
{
    static const char *const names[] = {
        "--format",     "--markdown",     "--json",
        "--sarif",      "--source-root",  "--peak-growth",
        "--peak-floor", "--alloc-growth", "--alloc-floor"};
    const char **fields[] = {
        &a->format,          &a->markdown,          &a->json,
        &a->sarif,           &a->source_root,       &a->opts.peak_growth,
        &a->opts.peak_floor, &a->opts.alloc_growth, &a->opts.alloc_floor};

    if (strcmp(argv[*i], "--new-stacks") == 0) {
        a->opts.new_stacks = 1;
        return 0;
    }
    return cli_value_options(VERB, names, fields,
                             sizeof names / sizeof names[0], argc, argv, i);
}

static int
check_args(const struct compare_args *a)
{
    if (a->ninputs != 2)
        return cli_usage_error(VERB,
                               "needs two results (BASE HEAD: files or "
                               "directories), got %d",
                               a->ninputs);
    if (a->format && strcmp(a->format, "text") != 0 &&
        strcmp(a->format, "markdown") != 0 && strcmp(a->format, "json") != 0)
        return cli_usage_error(
            VERB, "--format: '%s' is not text, markdown or json", a->format);
    if (a->source_root && !a->sarif)
        return cli_usage_error(VERB, "--source-root needs --sarif");
    return 0;
}

static int
parse_args(struct compare_args *a, int argc, char **argv)
{
    bool options = true;
    int rc = 0;

    memset(a, 0, sizeof *a);
    a->opts = (struct leakgate_compare_options)LEAKGATE_COMPARE_OPTIONS_INIT;
    for (int i = 1; i < argc && rc == 0; i++) {
        if (options && strcmp(argv[i], "--") == 0)
            options = false;
        else if (!options || argv[i][0] != '-' || argv[i][1] == '\0') {
            if (a->ninputs < 2)
                a->inputs[a->ninputs] = argv[i];
            a->ninputs++;
        } else
            rc = parse_option(a, argc, argv, &i);
    }
    return rc == 0 ? check_args(a) : rc;
}

static int
load(leakgate_results **out, const char *path)
{
    if (leakgate_results_new(out) < 0)
        return cli_fail(3);
    return leakgate_results_load(*out, path) < 0 ? cli_fail(2) : 0;
}

static leakgate_compare_format
format_of(const char *name)
{
    if (name && strcmp(name, "markdown") == 0)
        return LEAKGATE_COMPARE_MARKDOWN;
    if (name && strcmp(name, "json") == 0)
        return LEAKGATE_COMPARE_JSON;
    return LEAKGATE_COMPARE_TEXT;
}

/* The rendering fmt of c on stdout. */
static int
print(const leakgate_compare *c, leakgate_compare_format fmt)
{
    char *text = NULL;

    if (leakgate_compare_render(&text, c, fmt) < 0)
        return cli_fail(3);
    fputs(text, stdout);
    leakgate_compare_output_free(text);
    return 0;
}

static int
outputs(const leakgate_compare *c, const struct compare_args *a)
{
    char root[PATH_MAX];
    int rc = a->sarif ? cli_source_root(root, a->source_root, VERB) : 0;

    if (rc == 0)
        rc = print(c, format_of(a->format));
    if (rc == 0 && a->markdown &&
        leakgate_compare_write(c, LEAKGATE_COMPARE_MARKDOWN, a->markdown) < 0)
        rc = cli_fail(3);
    if (rc == 0 && a->json &&
        leakgate_compare_write(c, LEAKGATE_COMPARE_JSON, a->json) < 0)
        rc = cli_fail(3);
    if (rc == 0 && a->sarif &&
        leakgate_compare_write_sarif(c, a->sarif, root) < 0)
        rc = cli_fail(3);
    return rc;
}

static int
run_compare(struct compare_args *a)
{
    leakgate_results *base = NULL, *head = NULL;
    leakgate_compare *c = NULL;
    int status = load(&base, a->inputs[0]);

    if (status == 0)
        status = load(&head, a->inputs[1]);
    a->opts.base_name = a->inputs[0];
    a->opts.head_name = a->inputs[1];
    if (status == 0) {
        int rc = leakgate_compare_new(&c, base, head, &a->opts);

        if (rc < 0)
            status = cli_fail(rc == LEAKGATE_ENOMEM ? 3 : 2);
    }
    if (status == 0)
        status = outputs(c, a);
    if (status == 0 && leakgate_compare_regressions(c) > 0)
        status = 1;
    leakgate_compare_free(c);
    leakgate_results_free(head);
    leakgate_results_free(base);
    return status;
}

int
leakgate_cmd_compare(int argc, char **argv)
{
    struct compare_args a;
    int status;

    if (cli_help(argc, argv, compare_usage))
        return 0;
    status = parse_args(&a, argc, argv);
    if (status == 0)
        status = run_compare(&a);
    return status;
}
