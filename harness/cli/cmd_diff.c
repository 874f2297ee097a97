/* SPDX-License-Identifier: MIT */
/*
 * `leakgate diff [options] [BEFORE.heap] AFTER.heap`: the growth between
 * two jemalloc heap profiles of any program (or the live memory of one),
 * symbolized offline.  Parses its options and hands over to
 * leakgate_diff_profiles() (public API, leakgate/diff.h); prints the
 * result on stdout and `leakgate: <message>` on stderr.  Exit status: 0
 * printed; 2 usage, unreadable or malformed profile; 3 the diff could not
 * be drawn (no Graphviz `dot` for svg/pdf) or symbolized.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_diff.h"
#include "cli_args.h"
#include "leakgate/diff.h"

static const char diff_usage[] =
    "usage: leakgate diff [options] [BEFORE.heap] AFTER.heap\n"
    "\n"
    "The growth between two jemalloc heap profiles of one process (dumped\n"
    "with mallctl(\"prof.dump\") or prof_gdump), per allocation stack,\n"
    "symbolized offline from the profile's MAPPED_LIBRARIES.  With one\n"
    "profile, everything live in it.\n"
    "\n"
    "  --exe BINARY      the program's binary, when the recorded path is\n"
    "                    gone or moved\n"
    "  --focus REGEX     only stacks with a function or source file that\n"
    "                    matches (POSIX extended regex)\n"
    "  --nodefraction F  fold what retains less than F of the growth: graph\n"
    "                    nodes (default 0.005), stacks in text/json\n"
    "                    (default 0)\n"
    "  --edgefraction F  fold graph edges below F of the growth (0.001)\n"
    "  --format FORMAT   text (default), json, dot, svg or pdf (svg and pdf\n"
    "                    need Graphviz's dot)\n"
    "  --help            this text\n"
    "\n"
    "Exit status: 0 printed; 2 usage error, unreadable or malformed\n"
    "profile; 3 dot missing or failed.\n";

static const char *const format_names[] = {"text", "json", "dot", "svg", "pdf"};

/* "leakgate diff: BEFORE'ARG'AFTER (see ...)" on stderr; returns 2. */
static int
usage_error(const char *before, const char *arg, const char *after)
{
    return cli_usage_error("diff", "%s%s%s", before, arg ? arg : "",
                           after ? after : "");
}

static int
parse_fraction(double *out, const char *opt, const char *s)
{
    char *end = NULL;
    double f;

    errno = 0;
    f = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(f >= 0 && f <= 1)) {
        fprintf(stderr,
                "leakgate diff: %s wants a number from 0 to 1, got '%s'\n", opt,
                s);
        return 2;
    }
    *out = f;
    return 0;
}

static int
parse_format(leakgate_diff_format *out, const char *s)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++) {
        if (strcmp(s, format_names[i]) == 0) {
            *out = (leakgate_diff_format)i;
            return 0;
        }
    }
    return usage_error("unknown --format '", s,
                       "': text, json, dot, svg or pdf");
}

/* --name VALUE or --name=VALUE at argv[*i]; *value is NULL when argv[*i]
 * is not this option.  Returns 2 when the value is missing. */
static int
option_value(
    const char **value, int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    const char *a = argv[*i];

    *value = NULL;
    if (!a || strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
        return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 0;
    }
    if (*i + 1 >= argc)
        return usage_error(name, NULL, " needs a value");
    *value = argv[++*i];
    return 0;
}

static int
apply_option(struct leakgate_diff_options *o, size_t which, const char *v)
{
    switch (which) {
    case 0: o->exe = v; return 0;
    case 1: o->focus = v; return 0;
    case 2: return parse_fraction(&o->nodefraction, "--nodefraction", v);
    case 3: return parse_fraction(&o->edgefraction, "--edgefraction", v);
    default: return parse_format(&o->format, v);
    }
}

/* One option at argv[*i].  Returns 0, 2 (usage), or -1 when it is not an
 * option of ours. */
static int
parse_option(struct leakgate_diff_options *o, int argc, char **argv, int *i)
{
    static const char *const names[] = {"--exe", "--focus", "--nodefraction",
                                        "--edgefraction", "--format"};

    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const char *v;
        int rc = option_value(&v, argc, argv, i, names[k]);

        if (rc != 0)
            return rc;
        if (v)
            return apply_option(o, k, v);
    }
    return -1;
}

static int
status_for(int rc)
{
    switch (rc) {
    case LEAKGATE_EIO:
    case LEAKGATE_EFORMAT:
    case LEAKGATE_ETOOBIG:
    case LEAKGATE_EUSAGE: return 2;
    default: return 3;
    }
}

static int
run_diff(const char *before,
         const char *after,
         const struct leakgate_diff_options *o)
{
    char *out = NULL;
    size_t len = 0;
    int rc = leakgate_diff_profiles(&out, &len, before, after, o);

    if (rc < 0) {
        fprintf(stderr, "leakgate diff: %s\n", leakgate_error_last());
        if (rc == LEAKGATE_ENOTFOUND)
            fputs("leakgate diff: install Graphviz (apt-get install "
                  "graphviz) or use --format dot\n",
                  stderr);
        return status_for(rc);
    }
    rc = fwrite(out, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : 3;
    if (rc != 0)
        fprintf(stderr, "leakgate diff: cannot write the output: %s\n",
                strerror(errno));
    leakgate_diff_output_free(out);
    return rc;
}

int
leakgate_cmd_diff(int argc, char **argv)
{
    struct leakgate_diff_options o = LEAKGATE_DIFF_OPTIONS_INIT;
    const char *files[3] = {NULL, NULL, NULL};
    int nfiles = 0;

    for (int i = 1; i < argc; i++) {
        int rc;

        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(diff_usage, stdout);
            return 0;
        }
        if (strcmp(argv[i], "--") == 0) {
            while (++i < argc && nfiles < 3)
                files[nfiles++] = argv[i];
            break;
        }
        rc = argv[i][0] == '-' && argv[i][1] ? parse_option(&o, argc, argv, &i)
                                             : -1;
        if (rc > 0)
            return rc;
        if (rc == 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1])
            return usage_error("unknown option '", argv[i], "'");
        if (nfiles < 3)
            files[nfiles++] = argv[i];
    }
    if (nfiles == 0)
        return usage_error("no profile given", NULL, NULL);
    if (nfiles > 2)
        return usage_error(
            "too many profiles: give BEFORE and AFTER, or one profile", NULL,
            NULL);
    return run_diff(nfiles == 2 ? files[0] : NULL, files[nfiles - 1], &o);
}
