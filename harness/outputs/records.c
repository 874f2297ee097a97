/* SPDX-License-Identifier: MIT */
/*
 * records: the line records a run's journal (results/outputs*.c) and
 * `leakgate run`'s channel (run/run_proto.c) are made of: a one-letter
 * type and tab-separated fields, each escaped (see records.h).
 */
#include "records.h"

#include <string.h>

void
leakgate_records__put_field(struct leakgate_buf *b, const char *s)
{
    const char *run = s;

    for (; *s; s++) {
        const char *esc = *s == '\\'   ? "\\\\"
                          : *s == '\t' ? "\\t"
                          : *s == '\n' ? "\\n"
                                       : NULL;

        if (!esc)
            continue;
        leakgate_buf__put(b, run, (size_t)(s - run));
        leakgate_buf__puts(b, esc);
        run = s + 1;
    }
    leakgate_buf__puts(b, run);
}

bool
leakgate_records__put_field_fixed(char *dst,
                                  size_t cap,
                                  size_t *len,
                                  const char *s)
{
    size_t n = *len;

    /* Keep 3 bytes: an escape pair may not fit, then "\n" and the NUL. */
    for (; *s && n + 4 <= cap; s++) {
        char c = *s;

        if (c == '\\' || c == '\t' || c == '\n') {
            dst[n++] = '\\';
            c = (char)(c == '\\' ? '\\' : c == '\t' ? 't' : 'n');
        }
        dst[n++] = c;
    }
    dst[n] = '\0';
    *len = n;
    return *s == '\0';
}

static char *
unescape(char *s)
{
    char *out = s, *start = s;

    for (; *s; s++) {
        if (*s != '\\' || !s[1]) {
            *out++ = *s;
            continue;
        }
        s++;
        *out++ = (char)(*s == 't' ? '\t' : *s == 'n' ? '\n' : *s);
    }
    *out = '\0';
    return start;
}

size_t
leakgate_records__split(char **fields, size_t max, char *line)
{
    size_t n = 0;

    while (n < max) {
        char *tab = strchr(line, '\t');

        if (tab)
            *tab = '\0';
        fields[n++] = unescape(line);
        if (!tab)
            break;
        line = tab + 1;
    }
    return n;
}

const char *
leakgate_records__status_name(leakgate_status status)
{
    static const char *const names[] = {"pass", "fail", "not_judged"};

    return (unsigned int)status < 3 ? names[status] : "not_judged";
}

leakgate_status
leakgate_records__status_parse(const char *field)
{
    if (strcmp(field, "pass") == 0)
        return LEAKGATE_STATUS_PASS;
    return strcmp(field, "fail") == 0 ? LEAKGATE_STATUS_FAIL
                                      : LEAKGATE_STATUS_NOT_JUDGED;
}
