/* SPDX-License-Identifier: MIT */
/*
 * error: leakgate's error codes and the thread-local "last error" detail.
 *
 * Every fallible function in leakgate returns 0 or a negative
 * LEAKGATE_E* code (see include/leakgate/leakgate.h for the table).  The
 * one-line detail that the caller lacks (path, YAML line:column, mallctl
 * name, address) is stored with leakgate_error__set() and read back with
 * leakgate_error_last().  The module sits at the bottom of the pipeline and
 * depends on nothing but libc.
 */
#ifndef LEAKGATE_ERROR_H
#define LEAKGATE_ERROR_H

#include <stdarg.h>

#include "leakgate/leakgate.h"

/*
 * Record `code` with a printf-style detail and return `code`, so callers
 * can write `return leakgate_error__set(LEAKGATE_EIO, "open %s", p);`.
 * The detail is truncated to 1 KiB.  Cannot fail.
 */
int leakgate_error__set(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * leakgate_error__set() with the detail "NAME:LINE:COL: " and fmt's text
 * (a parser's error at a place in a file).  Returns `code`.
 */
int leakgate_error__set_at(int code,
                           const char *name,
                           unsigned int line,
                           unsigned int col,
                           const char *fmt,
                           va_list ap) __attribute__((format(printf, 5, 0)));

/*
 * Gather the errors of independent steps: given the first error so far
 * (0: none) and the text it set (kept by the caller in `first_text`, 1 KiB),
 * and a step's result rc, return the run's error and leave the detail
 * saying every failure so far ("A; B").  Cannot fail.
 */
int leakgate_error__gather(int first, char first_text[1024], int rc);

/* Forget the last error.  Cannot fail. */
void leakgate_error__clear(void);

#endif
