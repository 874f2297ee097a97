/* SPDX-License-Identifier: MIT */
/*
 * run_proto: the record format of `leakgate run`'s channel (see
 * run_proto.h): field escaping, splitting, sending without SIGPIPE, and
 * the JUnit/JSON pieces of one verdict, cut out of what report.c renders
 * so that run mode writes exactly what linked mode writes.  Used by both
 * sides; no state.
 */
#include "run_proto.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "error.h"
#include "gate.h"

void
leakgate_run__put_field(struct leakgate_buf *b, const char *s)
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

void
leakgate_run__put_field_fixed(char *dst, size_t cap, size_t *len, const char *s)
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
leakgate_run__split(char **fields, size_t max, char *line)
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

int
leakgate_run__send(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = send(fd, data, len, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return leakgate_error__set(
                LEAKGATE_EIO, "leakgate run's channel: %s", strerror(errno));
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

/* A copy of [begin, end), or NULL (ENOMEM, or a marker was missing). */
static char *
cut(const char *begin, const char *end)
{
    if (!begin || !end || end < begin)
        return NULL;
    return leakgate_util__strndup(begin, (size_t)(end - begin));
}

/* The text between `open` and the next `close` after it (both excluded,
 * or included when keep): NULL when absent. */
static char *
between(const char *doc, const char *open, const char *close, bool keep)
{
    const char *a = strstr(doc, open), *b;

    if (!a)
        return NULL;
    b = strstr(a + strlen(open), close);
    if (!b)
        return NULL;
    return keep ? cut(a, b + strlen(close)) : cut(a + strlen(open), b);
}

static int
junit_pieces(struct leakgate_run_pieces *out, const char *doc, bool with_case)
{
    out->junit_env =
        between(doc, "\n  <properties>\n", "\n  </properties>\n", true);
    if (out->junit_env)
        memmove(out->junit_env, out->junit_env + 1, strlen(out->junit_env));
    if (!with_case)
        return out->junit_env ? 0 : LEAKGATE_EFORMAT;
    out->suite_tag = between(doc, "\n  <testsuite ", " tests=\"", true);
    if (out->suite_tag) {
        memmove(out->suite_tag, out->suite_tag + 1, strlen(out->suite_tag));
        out->suite_tag[strlen(out->suite_tag) - strlen(" tests=\"")] = '\0';
    }
    out->junit_case = between(doc, "    <testcase ", "    </testcase>\n", true);
    return out->junit_env && out->suite_tag && out->junit_case
               ? 0
               : LEAKGATE_EFORMAT;
}

static int
json_pieces(struct leakgate_run_pieces *out, const char *doc, bool with_test)
{
    const char *tests, *end;

    out->json_env =
        between(doc, "\n  \"environment\": ", ",\n  \"summary\": ", false);
    if (!with_test)
        return out->json_env ? 0 : LEAKGATE_EFORMAT;
    tests = strstr(doc, "\n  \"tests\": [\n");
    end = strstr(doc, "\n  ]\n}\n");
    if (tests)
        out->json_test = cut(tests + strlen("\n  \"tests\": [\n"), end);
    return out->json_env && out->json_test ? 0 : LEAKGATE_EFORMAT;
}

int
leakgate_run__pieces(struct leakgate_run_pieces *out,
                     const struct leakgate_verdict *v,
                     const struct leakgate_report_env *env)
{
    const struct leakgate_verdict *one[1] = {v};
    char *junit = leakgate_report__junit(one, v ? 1 : 0, env);
    char *json = leakgate_report__json(one, v ? 1 : 0, env);
    int rc = 0;

    memset(out, 0, sizeof *out);
    if (!junit || !json) {
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "rendering a record");
        goto cleanup;
    }
    rc = junit_pieces(out, junit, v != NULL);
    if (rc == 0)
        rc = json_pieces(out, json, v != NULL);
    if (rc == LEAKGATE_EFORMAT)
        rc = leakgate_error__set(LEAKGATE_EFORMAT,
                                 "the JUnit/JSON layout of report.c is not "
                                 "the one leakgate run cuts records from");
cleanup:
    if (rc < 0)
        leakgate_run__pieces_dispose(out);
    leakgate_util__free(junit);
    leakgate_util__free(json);
    return rc;
}

void
leakgate_run__pieces_dispose(struct leakgate_run_pieces *p)
{
    leakgate_util__free(p->suite_tag);
    leakgate_util__free(p->junit_case);
    leakgate_util__free(p->json_test);
    leakgate_util__free(p->junit_env);
    leakgate_util__free(p->json_env);
    memset(p, 0, sizeof *p);
}

void
leakgate_run__case_dispose(struct leakgate_run_case *c)
{
    if (!c)
        return;
    leakgate_util__free(c->suite);
    leakgate_util__free(c->test);
    leakgate_run__pieces_dispose(&c->pieces);
    memset(c, 0, sizeof *c);
}
