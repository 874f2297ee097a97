/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of harness/render.c: running Graphviz's dot.  The real dot
 * (when installed) draws SVG and PDF; fake `dot` scripts on a private PATH
 * fail, hang (killed at the timeout) and die by a signal; without dot on
 * PATH the caller is told LEAKGATE_ENOTFOUND.  Plus reading files whole,
 * with its limits and errors.
 */
#include "render.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "util.h"

static const char simple_dot[] = "digraph g { a -> b; }\n";

/* A private directory holding an executable `dot` with the given body,
 * put first on PATH; the old PATH is returned (the caller restores it). */
static char *
fake_dot(char *dir, size_t size, const char *body)
{
    char path[512];
    const char *old = getenv("PATH");
    char *saved = leakgate_util__strdup(old ? old : "");
    FILE *f;

    snprintf(dir, size, "%s/leakgate-render-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/dot", dir);
    f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
    setenv("PATH", dir, 1);
    return saved;
}

static void
restore_path(char *saved, const char *dir)
{
    char path[512];

    setenv("PATH", saved, 1);
    leakgate_util__free(saved);
    snprintf(path, sizeof path, "%s/dot", dir);
    unlink(path);
    rmdir(dir);
}

static bool
dot_installed(void)
{
    char *out = NULL;
    size_t len = 0;
    int rc = leakgate_render__text(&out, &len, simple_dot, strlen(simple_dot),
                                   "svg", 20000);

    leakgate_util__free(out);
    if (rc == LEAKGATE_ENOTFOUND)
        fprintf(stderr, "(dot not installed: not checked) ");
    return rc != LEAKGATE_ENOTFOUND;
}

static void
test_render__svg_and_pdf(void)
{
    char *out = NULL;
    size_t len = 0;

    if (!dot_installed())
        return;
    CU_ASSERT_EQUAL(leakgate_render__text(&out, &len, simple_dot,
                                          strlen(simple_dot), "svg", 20000),
                    0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(len, strlen(out));
    CU_ASSERT(strstr(out, "<svg") != NULL);
    CU_ASSERT(strstr(out, "<title>a&#45;&gt;b</title>") != NULL);
    leakgate_util__free(out);
    CU_ASSERT_EQUAL(leakgate_render__text(&out, &len, simple_dot,
                                          strlen(simple_dot), "pdf", 20000),
                    0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT(len > 100 && memcmp(out, "%PDF-", 5) == 0);
    leakgate_util__free(out);
    /* Bad DOT: dot's own message. */
    CU_ASSERT_EQUAL(
        leakgate_render__text(&out, &len, "digraph {", 9, "svg", 20000),
        LEAKGATE_ERROR);
    CU_ASSERT_PTR_NULL(out);
    CU_ASSERT(strstr(leakgate_error_last(), "dot failed (exit 1)") != NULL);
}

static void
test_render__not_on_path(void)
{
    const char *old = getenv("PATH");
    char *saved = leakgate_util__strdup(old ? old : "");
    char *out = (char *)1;
    size_t len = 1;

    setenv("PATH", "/nonexistent-leakgate", 1);
    CU_ASSERT_EQUAL(leakgate_render__text(&out, &len, simple_dot,
                                          strlen(simple_dot), "svg", 20000),
                    LEAKGATE_ENOTFOUND);
    CU_ASSERT_PTR_NULL(out);
    CU_ASSERT_EQUAL(len, 0);
    CU_ASSERT(strstr(leakgate_error_last(), "`dot` not found on PATH") != NULL);
    setenv("PATH", saved, 1);
    leakgate_util__free(saved);
}

static void
test_render__dot_fails(void)
{
    char dir[256];
    char *saved = fake_dot(dir, sizeof dir,
                           "echo 'Error: cannot draw this' >&2\n"
                           "echo 'second line' >&2\nexit 3");
    char *out = NULL;
    size_t len = 0;

    CU_ASSERT_EQUAL(leakgate_render__text(&out, &len, simple_dot,
                                          strlen(simple_dot), "svg", 20000),
                    LEAKGATE_ERROR);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           "dot failed (exit 3): Error: cannot draw this");
    restore_path(saved, dir);
}

static void
test_render__killed_by_signal(void)
{
    char dir[256];
    char *saved = fake_dot(dir, sizeof dir, "kill -9 $$");
    char *out = NULL;
    size_t len = 0;

    CU_ASSERT_EQUAL(leakgate_render__text(&out, &len, simple_dot,
                                          strlen(simple_dot), "svg", 20000),
                    LEAKGATE_ERROR);
    CU_ASSERT(strstr(leakgate_error_last(), "killed by signal 9") != NULL);
    restore_path(saved, dir);
}

static void
test_render__timeout(void)
{
    char dir[256];
    /* exec: the shell becomes sleep, so the kill reaches it. */
    char *saved = fake_dot(dir, sizeof dir, "exec /bin/sleep 30");
    struct timespec t0, t1;
    char *out = NULL;
    size_t len = 0;
    double took;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    CU_ASSERT_EQUAL(leakgate_render__text(&out, &len, simple_dot,
                                          strlen(simple_dot), "svg", 300),
                    LEAKGATE_ERROR);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    took = (double)(t1.tv_sec - t0.tv_sec) +
           (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    CU_ASSERT(took >= 0.25 && took < 10.0);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           "dot did not finish in time and was killed");
    restore_path(saved, dir);
}

static void
test_render__file_writes_output(void)
{
    char dir[256];
    char *saved = fake_dot(dir, sizeof dir,
                           "# dot -Tfmt -o OUT IN: copy IN to OUT\n"
                           "[ \"$1\" = -Tsvg ] && [ \"$2\" = -o ] || exit 9\n"
                           "/bin/cat \"$4\" > \"$3\"");
    char in[300], outp[300];
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    snprintf(in, sizeof in, "%s/in.dot", dir);
    snprintf(outp, sizeof outp, "%s/out.svg", dir);
    f = fopen(in, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("hello", f);
    fclose(f);
    CU_ASSERT_EQUAL(leakgate_render__file(in, outp, "svg", 20000), 0);
    CU_ASSERT_EQUAL(leakgate_render__read_file(&text, &len, outp, 100), 0);
    CU_ASSERT_STRING_EQUAL(text, "hello");
    CU_ASSERT_EQUAL(len, 5);
    leakgate_util__free(text);
    unlink(in);
    unlink(outp);
    restore_path(saved, dir);
}

static void
test_render__read_file(void)
{
    char *text = (char *)1;
    size_t len = 1;

    CU_ASSERT_EQUAL(
        leakgate_render__read_file(&text, &len, "/nonexistent/x.heap", 100),
        LEAKGATE_EIO);
    CU_ASSERT_PTR_NULL(text);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           "cannot read /nonexistent/x.heap: No such file or "
                           "directory");
    CU_ASSERT_EQUAL(leakgate_render__read_file(&text, &len, "/", 100),
                    LEAKGATE_EIO);
    CU_ASSERT(strstr(leakgate_error_last(), "Is a directory") != NULL);
    CU_ASSERT_EQUAL(leakgate_render__read_file(
                        &text, &len, LEAKGATE_FIXTURES "/heap/after.heap", 100),
                    LEAKGATE_ETOOBIG);
    CU_ASSERT(strstr(leakgate_error_last(), "more than 100 bytes") != NULL);
    CU_ASSERT_EQUAL(
        leakgate_render__read_file(
            &text, &len, LEAKGATE_FIXTURES "/heap/after.heap", 1 << 20),
        0);
    CU_ASSERT(len > 100 && strncmp(text, "heap_v2/1\n", 10) == 0);
    CU_ASSERT_EQUAL(strlen(text), len);
    leakgate_util__free(text);
}

const char *const unit_suite = "render";
const struct unit_case unit_cases[] = {
    {"test_render__svg_and_pdf", test_render__svg_and_pdf},
    {"test_render__not_on_path", test_render__not_on_path},
    {"test_render__dot_fails", test_render__dot_fails},
    {"test_render__killed_by_signal", test_render__killed_by_signal},
    {"test_render__timeout", test_render__timeout},
    {"test_render__file_writes_output", test_render__file_writes_output},
    {"test_render__read_file", test_render__read_file},
    {NULL, NULL},
};
