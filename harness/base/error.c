/* SPDX-License-Identifier: MIT */
/*
 * error: the X-macro table of codes, the thread-local detail buffer and
 * the version string (leakgate_version()).
 * Invariant: leakgate_error_last() always returns a NUL-terminated string
 * (empty when nothing failed on this thread).
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[1024];

const char *
leakgate_strerror(int code)
{
    switch (code) {
#define LEAKGATE_X(name, value, text)                                          \
    case value: return text;
        LEAKGATE_ERROR_CODES(LEAKGATE_X)
#undef LEAKGATE_X
    default: return "unknown error";
    }
}

const char *
leakgate_error_last(void)
{
    return last_error;
}

int
leakgate_error__set(int code, const char *fmt, ...)
{
    char text[sizeof last_error];
    va_list ap;

    /* Formatted apart first: an argument may be leakgate_error_last(). */
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    memcpy(last_error, text, sizeof text);
    return code;
}

int
leakgate_error__set_at(int code,
                       const char *name,
                       unsigned int line,
                       unsigned int col,
                       const char *fmt,
                       va_list ap)
{
    char msg[768];

    vsnprintf(msg, sizeof msg, fmt, ap);
    return leakgate_error__set(code, "%s:%u:%u: %s", name, line, col, msg);
}

int
leakgate_error__gather(int first, char first_text[1024], int rc)
{
    if (rc >= 0) {
        if (first < 0) /* a later step may have set a detail */
            memcpy(last_error, first_text, sizeof last_error);
        return first;
    }
    if (first < 0)
        leakgate_error__set(first, "%s; %s", first_text, last_error);
    memcpy(first_text, last_error, sizeof last_error);
    return first < 0 ? first : rc;
}

void
leakgate_error__clear(void)
{
    last_error[0] = '\0';
}

const char *
leakgate_version(void)
{
    return LEAKGATE_VERSION;
}
