/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the parsers' default limits (STYLE.md rule 20): every
 * parser of external input stops at an explicit limit with
 * LEAKGATE_ETOOBIG and a message naming the input and the limit, and
 * inputs just inside the limits cost bounded time.  The per-module tests
 * (test_heapfile.c, test_config.c) check each limit with small custom
 * values; this file checks the defaults at their real sizes:
 *
 * - heap_v2: 1 GiB per dump (a sparse mapping, never touched), 4,000,000
 *   records, 64 KiB per line, and a dump of 100,000 live stacks parsed
 *   and diffed in bounded time;
 * - thresholds YAML: 4 MiB per file (text and file), 32 levels of
 *   nesting, and a file at the size limit full of rules (which took
 *   minutes before duplicate rules were found by sorting);
 * - results JSON: 64 MiB per document, 64 levels of nesting, 1 MiB per
 *   string.  (The 4 Mi values limit is checked small in test_json.c: at
 *   its default it costs ~370 MB, see tests/faults/README.md.)
 *
 * Measured times are printed; the bounds are generous so that the test
 * also holds under ASan+UBSan on a busy machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "diff.h"
#include "error.h"
#include "heapfile.h"
#include "json.h"
#include "unit.h"
#include "util.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)
#define TIME_BOUND_S 20.0 /* seconds; real runs take well under 1 s */

/* A fatal check the compiler also sees as leaving the function. */
#define REQUIRE(cond)                                                          \
    do {                                                                       \
        CU_ASSERT_FATAL((cond) ? 1 : 0);                                       \
        if (!(cond))                                                           \
            return;                                                            \
    } while (0)

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
expect_error(int rc, int code, const char *detail)
{
    CU_ASSERT_EQUAL(rc, code);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), detail));
    if (rc != code || !strstr(leakgate_error_last(), detail))
        fprintf(stderr, "\n  rc %d, detail: %s\n  want %d, %s\n", rc,
                leakgate_error_last(), code, detail);
}

/* ---- heap_v2 ----------------------------------------------------------- */

#define HDR "heap_v2/1\n  t*: 1: 16 [0: 0]\n"
#define MAPS "\nMAPPED_LIBRARIES:\n"

static void
test_limits__heap_size(void)
{
    /* Reserved, never touched: the size is refused before any read. */
    size_t len = GIB + 1;
    char *p = mmap(NULL, len, PROT_READ,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    struct leakgate_heap *h = NULL;

    REQUIRE(p != MAP_FAILED);
    expect_error(leakgate_heapfile__parse(&h, p, len, "big.heap", NULL),
                 LEAKGATE_ETOOBIG,
                 "big.heap: 1073741825 bytes exceed max_size (1073741824 "
                 "bytes)");
    CU_ASSERT_PTR_NULL(h);
    munmap(p, len);
}

static void
test_limits__heap_stacks(void)
{
    static const char rec[] = "@ 0x1\n";
    size_t n = 4000001, len = n * (sizeof rec - 1);
    char *text = malloc(len);
    struct leakgate_heap *h = NULL;
    double t0;

    REQUIRE(text != NULL);
    for (size_t i = 0; i < n; i++)
        memcpy(text + i * (sizeof rec - 1), rec, sizeof rec - 1);
    t0 = now_s();
    expect_error(leakgate_heapfile__parse(&h, text, len, "many.heap", NULL),
                 LEAKGATE_ETOOBIG,
                 "many.heap:4000001: more records than max_stacks "
                 "(4000000)");
    printf("\n    4,000,001 records refused in %.3f s\n", now_s() - t0);
    CU_ASSERT(now_s() - t0 < TIME_BOUND_S);
    CU_ASSERT_PTR_NULL(h);
    free(text);
}

/* A dump whose only mapping line is exactly n bytes long. */
static char *
map_line_text(size_t n, size_t *len)
{
    static const char head[] = HDR MAPS "1000-2000 r-xp 00000000 08:01 7 /";
    size_t hl = sizeof head - 1, pad = n - (hl - (sizeof HDR MAPS - 1));
    char *text = malloc(hl + pad + 1);

    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    memcpy(text, head, hl);
    memset(text + hl, 'p', pad);
    text[hl + pad] = '\n';
    *len = hl + pad + 1;
    return text;
}

static void
test_limits__heap_line(void)
{
    struct leakgate_heap *h = NULL;
    size_t len;
    char *ok = map_line_text(64 * KIB, &len);

    CU_ASSERT_EQUAL(leakgate_heapfile__parse(&h, ok, len, "l.heap", NULL), 0);
    REQUIRE(h != NULL);
    CU_ASSERT_EQUAL(h->nmaps, 1);
    CU_ASSERT_EQUAL(strlen(h->maps[0].path), 64 * KIB - 32);
    leakgate_heapfile__free(h);
    free(ok);
    ok = map_line_text(64 * KIB + 1, &len);
    expect_error(leakgate_heapfile__parse(&h, ok, len, "l.heap", NULL),
                 LEAKGATE_ETOOBIG,
                 "l.heap:5: line longer than max_line (65536 bytes)");
    free(ok);
}

/* n distinct live stacks of 16 frames (a real dump's depth), one object
 * each, as jemalloc prints them. */
static char *
many_stacks_text(size_t n, size_t *len)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__printf(&b, "heap_v2/1\n  t*: %zu: %zu [0: 0]\n", n, n * 16);
    leakgate_buf__printf(&b, "  t0: %zu: %zu [0: 0] main\n", n, n * 16);
    for (size_t i = 0; i < n; i++) {
        leakgate_buf__puts(&b, "@ 0x7f0000001000 0x7f0000002000");
        for (size_t f = 0; f < 13; f++)
            leakgate_buf__printf(&b, " 0x55550000%04zx", f);
        leakgate_buf__printf(&b,
                             " 0x%zx\n  t*: 1: 16 [0: 0]\n"
                             "  t0: 1: 16 [0: 0]\n",
                             0x560000000000 + i);
    }
    leakgate_buf__puts(&b, MAPS);
    CU_ASSERT_FATAL(!b.failed);
    *len = b.len;
    return b.ptr;
}

static void
test_limits__heap_100k_stacks(void)
{
    static const char empty_text[] = HDR MAPS;
    struct leakgate_heap *h = NULL, *empty = NULL;
    struct leakgate_diff *d = NULL;
    size_t len;
    char *text = many_stacks_text(100000, &len);
    double t0 = now_s(), t1, t2;

    CU_ASSERT_EQUAL(leakgate_heapfile__parse(&h, text, len, "100k", NULL), 0);
    t1 = now_s();
    REQUIRE(h != NULL);
    CU_ASSERT_EQUAL(h->nstacks, 100000);
    CU_ASSERT_EQUAL(leakgate_heapfile__parse(&empty, empty_text,
                                             sizeof empty_text - 1, "e", NULL),
                    0);
    REQUIRE(empty != NULL);
    CU_ASSERT_EQUAL(leakgate_diff__compute(&d, empty, h, NULL), 0);
    t2 = now_s();
    REQUIRE(d != NULL);
    CU_ASSERT_EQUAL(d->nentries, 100000);
    printf("\n    100,000 stacks (%zu bytes): parse %.3f s, diff %.3f s\n", len,
           t1 - t0, t2 - t1);
    CU_ASSERT(t2 - t0 < TIME_BOUND_S);
    leakgate_diff__free(d);
    leakgate_heapfile__free(empty);
    leakgate_heapfile__free(h);
    leakgate_util__free(text);
}

/* ---- thresholds YAML --------------------------------------------------- */

#define NAME "limits.yaml"

/* "version: 1\n" then a comment filling the text to exactly len bytes. */
static char *
padded_yaml(size_t len)
{
    static const char head[] = "version: 1\n# ";
    char *text = malloc(len);

    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    memcpy(text, head, sizeof head - 1);
    memset(text + sizeof head - 1, 'x', len - sizeof head);
    text[len - 1] = '\n';
    return text;
}

/* Write text to a new temporary file; its path goes to path[64]. */
static void
write_temp(char path[64], const char *text, size_t len)
{
    int fd;

    snprintf(path, 64, "/tmp/leakgate-limits-XXXXXX");
    fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(write(fd, text, len) == (ssize_t)len);
    close(fd);
}

static void
test_limits__yaml_size(void)
{
    struct leakgate_config *cfg = NULL;
    char path[64], want[128];
    char *text = padded_yaml(4 * MIB + 1);

    CU_ASSERT_EQUAL(leakgate_config__parse(&cfg, text, 4 * MIB, NAME, NULL), 0);
    leakgate_config__free(cfg);
    text[4 * MIB - 1] = 'x';
    expect_error(leakgate_config__parse(&cfg, text, 4 * MIB + 1, NAME, NULL),
                 LEAKGATE_ETOOBIG,
                 NAME ": 4194305 bytes, more than the limit of 4194304");
    CU_ASSERT_PTR_NULL(cfg);
    /* The file is refused by its size, before it is read. */
    text[4 * MIB] = '\n';
    write_temp(path, text, 4 * MIB + 1);
    snprintf(want, sizeof want,
             "%s: 4194305 bytes, more than the limit of 4194304", path);
    expect_error(leakgate_config__load(&cfg, path, NULL), LEAKGATE_ETOOBIG,
                 want);
    CU_ASSERT_PTR_NULL(cfg);
    unlink(path);
    free(text);
}

static void
test_limits__yaml_depth(void)
{
    /* A million '[' stop at the 33rd, without recursion or a big tree. */
    size_t n = 1000000, len = 9 + n;
    char *text = malloc(len);
    struct leakgate_config *cfg = NULL;
    double t0 = now_s();

    REQUIRE(text != NULL);
    memcpy(text, "version: ", 9);
    memset(text + 9, '[', n);
    expect_error(leakgate_config__parse(&cfg, text, len, NAME, NULL),
                 LEAKGATE_ETOOBIG, NAME ":1:41: nesting deeper than 32 levels");
    CU_ASSERT(now_s() - t0 < TIME_BOUND_S);
    CU_ASSERT_PTR_NULL(cfg);
    free(text);
}

/* A thresholds text of at most max bytes: one tests entry with as many
 * one-frame stacks rules as fit (or ignore rules), the last one a
 * duplicate of the first when dup.  *nrules gets their number. */
static char *
rules_yaml(size_t max, bool ignore, bool dup, size_t *nrules, size_t *len)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    size_t n = 0;

    leakgate_buf__puts(&b, ignore
                               ? "version: 1\nignore:\n"
                               : "version: 1\ntests:\n  a/b:\n    stacks:\n");
    while (b.len + 64 < max) {
        leakgate_buf__printf(&b,
                             ignore ? "  - {frames: [f%zu]}\n"
                                    : "      - {frames: [f%zu], limit: "
                                      "1}\n",
                             n++);
    }
    if (dup)
        leakgate_buf__puts(&b, ignore ? "  - {frames: [f0]}\n"
                                      : "      - {frames: [f0], limit: 2}\n");
    CU_ASSERT_FATAL(!b.failed);
    *nrules = n + dup;
    *len = b.len;
    return b.ptr;
}

static void
check_rules(bool ignore)
{
    struct leakgate_config *cfg = NULL;
    size_t n, len;
    char *text = rules_yaml(4 * MIB, ignore, false, &n, &len);
    char want[128];
    double t0 = now_s(), t1;

    CU_ASSERT_EQUAL(leakgate_config__parse(&cfg, text, len, NAME, NULL), 0);
    t1 = now_s();
    REQUIRE(cfg != NULL);
    CU_ASSERT_EQUAL(ignore ? cfg->nignores : cfg->tests[0].nstacks, n);
    printf("\n    %zu %s rules (%zu bytes) loaded in %.3f s\n", n,
           ignore ? "ignore" : "stacks", len, t1 - t0);
    CU_ASSERT(t1 - t0 < TIME_BOUND_S);
    leakgate_config__free(cfg);
    leakgate_util__free(text);
    /* The last rule repeats the first: named by both lines. */
    text = rules_yaml(4 * MIB, ignore, true, &n, &len);
    snprintf(want, sizeof want,
             NAME ":%zu:%d: duplicate %s rule: same frames as the rule at "
                  "line %d",
             n + (ignore ? 2 : 4), ignore ? 5 : 9, ignore ? "ignore" : "stacks",
             ignore ? 3 : 5);
    expect_error(leakgate_config__parse(&cfg, text, len, NAME, NULL),
                 LEAKGATE_ECONFIG, want);
    CU_ASSERT(now_s() - t1 < TIME_BOUND_S);
    leakgate_util__free(text);
}

static void
test_limits__yaml_many_rules(void)
{
    check_rules(false);
    check_rules(true);
}

/* ---- results JSON ------------------------------------------------------ */

static void
test_limits__json_size(void)
{
    size_t len = ((size_t)64 << 20) + 1;
    char *p = mmap(NULL, len, PROT_READ,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    struct leakgate_json *j = NULL;

    REQUIRE(p != MAP_FAILED);
    expect_error(leakgate_json__parse(&j, p, len, "big.json", NULL),
                 LEAKGATE_ETOOBIG,
                 "big.json: 67108865 bytes, more than the limit of 67108864");
    CU_ASSERT_PTR_NULL(j);
    munmap(p, len);
}

static void
test_limits__json_depth_and_string(void)
{
    char *text = malloc(MIB + 3); /* '"', MIB + 1 letters, '"' */
    struct leakgate_json *j = NULL;

    REQUIRE(text != NULL);
    memset(text, '[', 65);
    expect_error(leakgate_json__parse(&j, text, 65, "deep.json", NULL),
                 LEAKGATE_ETOOBIG, "deep.json:1:65: nesting deeper than 64");
    CU_ASSERT_PTR_NULL(j);
    text[0] = '"';
    memset(text + 1, 'a', MIB + 1);
    text[MIB + 1] = '"'; /* a string of exactly 1 MiB */
    CU_ASSERT_EQUAL(leakgate_json__parse(&j, text, MIB + 2, "s.json", NULL), 0);
    leakgate_json__free(j);
    text[MIB + 1] = 'a';
    text[MIB + 2] = '"';
    expect_error(leakgate_json__parse(&j, text, MIB + 3, "s.json", NULL),
                 LEAKGATE_ETOOBIG, "s.json:1:1: string longer than 1048576");
    free(text);
}

const char *const unit_suite = "limits";

const struct unit_case unit_cases[] = {
    {"test_limits__heap_size", test_limits__heap_size},
    {"test_limits__heap_stacks", test_limits__heap_stacks},
    {"test_limits__heap_line", test_limits__heap_line},
    {"test_limits__heap_100k_stacks", test_limits__heap_100k_stacks},
    {"test_limits__yaml_size", test_limits__yaml_size},
    {"test_limits__yaml_depth", test_limits__yaml_depth},
    {"test_limits__yaml_many_rules", test_limits__yaml_many_rules},
    {"test_limits__json_size", test_limits__json_size},
    {"test_limits__json_depth_and_string", test_limits__json_depth_and_string},
    {NULL, NULL},
};
