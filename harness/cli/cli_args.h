/* SPDX-License-Identifier: MIT */
/*
 * cli_args: the command-line helpers shared by the `leakgate` verbs:
 * "--opt VALUE"/"--opt=VALUE" matching and the two error messages (usage,
 * exit 2; a library failure with leakgate_error_last()).  CLI only.
 */
#ifndef LEAKGATE_CLI_ARGS_H
#define LEAKGATE_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>

/* Print "leakgate VERB: <message> (see leakgate VERB --help)" to stderr.
 * Returns 2, the usage exit status. */
int cli_usage_error(const char *verb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* When argv (before a "--") asks for --help or -h: print usage to stdout
 * and return true (the verb exits 0).  Cannot fail. */
bool cli_help(int argc, char **argv, const char *usage);

/* Print "leakgate: <leakgate_error_last()>" to stderr; returns status. */
int cli_fail(int status);

/* "--opt VALUE" or "--opt=VALUE" at argv[*i] (advancing *i past a separate
 * value): 1 matched, 0 not this option, -1 the value is missing or empty. */
int cli_value_option(
    const char **out, const char *opt, int argc, char **argv, int *i);

/* The option at argv[*i] among names[0, n) ("--opt VALUE" or
 * "--opt=VALUE"), its value stored in *fields[k]: 0 when it was one of
 * them, else 2 after a usage error (unknown option, missing value). */
int cli_value_options(const char *verb,
                      const char *const *names,
                      const char **const *fields,
                      size_t n,
                      int argc,
                      char **argv,
                      int *i);

/* The source root SARIF paths are relative to, into out (PATH_MAX
 * bytes): given (a directory, made absolute against the current one and
 * cleaned of "." and ".." as spelled: symbolic links are kept), else the
 * nearest directory from the current one up that holds .git (a git work
 * tree), else the current directory; the current directory as the
 * shell's $PWD spells it when that names it.  Returns 0, or 2 after a
 * usage error naming the option. */
int cli_source_root(char *out, const char *given, const char *verb);

#endif
