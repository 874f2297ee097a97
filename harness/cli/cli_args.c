/* SPDX-License-Identifier: MIT */
/* cli_args: option matching and error messages shared by the verbs. */
#include "cli_args.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "leakgate/leakgate.h"

int
cli_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "leakgate %s: ", verb);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see leakgate %s --help)\n", verb);
    return 2;
}

int
cli_fail(int status)
{
    fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
    return status;
}

int
cli_value_option(
    const char **out, const char *opt, int argc, char **argv, int *i)
{
    size_t n = strlen(opt);

    if (strncmp(argv[*i], opt, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *out = argv[*i] + n + 1;
        return **out ? 1 : -1;
    }
    if (argv[*i][n] != '\0')
        return 0;
    if (*i + 1 >= argc || !*argv[*i + 1])
        return -1;
    *out = argv[++*i];
    return 1;
}
