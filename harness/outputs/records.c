/* SPDX-License-Identifier: MIT */
/*
 * records: the line records a run's journal (results/outputs*.c) and
 * `leakgate run`'s channel (run/run_proto.c) are made of: a one-letter
 * type and tab-separated fields, each escaped (see records.h).
 */
#include "records.h"

#include <string.h>

/* The characters a field escapes. */
static const char special[] = "\\\t\n";

static const char *
escape_of(char c)
{
    return c == '\\' ? "\\\\" : c == '\t' ? "\\t" : "\\n";
}

void
leakgate_records__put_field(struct leakgate_buf *b, const char *s)
{
    /* Runs of plain characters are copied whole (strcspn, not a loop per
     * character: a window's JSON piece is a kilobyte). */
    for (;;) {
        size_t run = strcspn(s, special);

        leakgate_buf__put(b, s, run);
        s += run;
        if (!*s)
            break;
        leakgate_buf__puts(b, escape_of(*s));
        s++;
    }
}

bool
leakgate_records__put_field_fixed(char *dst,
                                  size_t cap,
                                  size_t *len,
                                  const char *s)
{
    size_t n = *len;

    /* Keep 3 bytes: an escape pair may not fit, then "\n" and the NUL.  A
     * plain character goes in while n + 4 <= cap (n reaches cap - 3). */
    while (*s && n + 4 <= cap) {
        size_t run = strcspn(s, special), room = cap - 3 - n;

        if (run > room)
            run = room;
        memcpy(dst + n, s, run);
        n += run;
        s += run;
        if (!*s || n + 4 > cap)
            break;
        memcpy(dst + n, escape_of(*s), 2);
        n += 2;
        s++;
    }
    dst[n] = '\0';
    *len = n;
    return *s == '\0';
}

static char *
unescape(char *s)
{
    char *out = s, *start = s;

    /* Runs without a backslash move whole (most fields have none). */
    for (;;) {
        char *bs = strchr(s, '\\');
        size_t run = bs ? (size_t)(bs - s) : strlen(s);

        if (out != s)
            memmove(out, s, run);
        out += run;
        s += run;
        if (!bs)
            break;
        if (!s[1]) { /* a backslash last stays */
            *out++ = *s++;
            break;
        }
        s++;
        *out++ = (char)(*s == 't' ? '\t' : *s == 'n' ? '\n' : *s);
        s++;
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
