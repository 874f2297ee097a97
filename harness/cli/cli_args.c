/* SPDX-License-Identifier: MIT */
/* cli_args: option matching and error messages shared by the verbs. */
#include "cli_args.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The nearest directory from dir (absolute, PATH_MAX) up that holds .git
 * into out; false when there is none. */
static bool
git_top(char *out, char *dir)
{
    char probe[PATH_MAX + 8];
    struct stat st;

    for (;;) {
        char *slash;

        snprintf(probe, sizeof probe, "%s/.git", dir);
        if (stat(probe, &st) == 0) {
            memcpy(out, dir, strlen(dir) + 1);
            return true;
        }
        slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return false;
        *slash = '\0';
    }
}

int
cli_source_root(char *out, const char *given, const char *verb)
{
    char dir[PATH_MAX];
    struct stat st;

    errno = 0;
    if (!given) {
        if (!realpath(".", out))
            return cli_usage_error(verb,
                                   "cannot resolve the current "
                                   "directory: %s",
                                   strerror(errno));
        memcpy(dir, out, strlen(out) + 1);
        git_top(out, dir);
        return 0;
    }
    if (!realpath(given, out))
        return cli_usage_error(verb, "--source-root: %s: %s", given,
                               strerror(errno));
    if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode))
        return cli_usage_error(verb, "--source-root: %s: not a directory",
                               given);
    return 0;
}
