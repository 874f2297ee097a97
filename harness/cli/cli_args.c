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
 * into out; false (out untouched) when there is none.  dir is cut. */
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

/* The current directory as the shell spells it ($PWD, when it is
 * absolute and names the same directory as "."), else its real path,
 * into out (PATH_MAX bytes); false when neither is known. */
static bool
logical_cwd(char *out)
{
    const char *pwd = getenv("PWD");
    struct stat a, b;

    if (pwd && pwd[0] == '/' && strlen(pwd) < PATH_MAX && stat(pwd, &a) == 0 &&
        stat(".", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
        memcpy(out, pwd, strlen(pwd) + 1);
        return true;
    }
    return realpath(".", out) != NULL;
}

/* The absolute path without "." and ".." components, repeated and
 * trailing slashes, in place.  Lexical: symbolic links are kept, as a
 * build through a link records its paths (the frames SARIF locates).
 * Cannot fail; the result is never longer. */
static void
normalize(char *path)
{
    char *w = path;
    const char *r = path;

    while (*r) {
        const char *end;
        size_t n;

        while (*r == '/')
            r++;
        end = strchr(r, '/');
        n = end ? (size_t)(end - r) : strlen(r);
        if (n == 2 && r[0] == '.' && r[1] == '.') {
            while (w > path && *--w != '/')
                continue;
        } else if (n > 0 && !(n == 1 && r[0] == '.')) {
            *w++ = '/';
            memmove(w, r, n);
            w += n;
        }
        r += n;
    }
    if (w == path)
        *w++ = '/';
    *w = '\0';
}

int
cli_source_root(char *out, const char *given, const char *verb)
{
    char dir[PATH_MAX];
    struct stat st;

    errno = 0;
    if (!logical_cwd(dir))
        return cli_usage_error(verb, "cannot resolve the current directory: %s",
                               strerror(errno));
    if (!given) {
        memcpy(out, dir, strlen(dir) + 1);
        git_top(out, dir); /* dir is scratch from here */
        return 0;
    }
    if (given[0] == '/'
            ? snprintf(out, PATH_MAX, "%s", given) >= PATH_MAX
            : snprintf(out, PATH_MAX, "%s/%s", dir, given) >= PATH_MAX)
        return cli_usage_error(verb, "--source-root: %s: path too long", given);
    normalize(out);
    if (stat(out, &st) != 0)
        return cli_usage_error(verb, "--source-root: %s: %s", given,
                               strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return cli_usage_error(verb, "--source-root: %s: not a directory",
                               given);
    return 0;
}

bool
cli_help(int argc, char **argv, const char *usage)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return true;
        }
    }
    return false;
}

int
cli_value_options(const char *verb,
                  const char *const *names,
                  const char **const *fields,
                  size_t n,
                  int argc,
                  char **argv,
                  int *i)
{
    for (size_t k = 0; k < n; k++) {
        int m = cli_value_option(fields[k], names[k], argc, argv, i);

        if (m < 0)
            return cli_usage_error(verb, "option '%s' needs a value", names[k]);
        if (m > 0)
            return 0;
    }
    return cli_usage_error(verb, "unknown option '%s'", argv[*i]);
}
