/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of harness/heapfile.c: recorded jemalloc 5.3 dumps
 * (tests/fixtures/heap/, see tests/fixtures/README.md), hand-made valid
 * and malformed dumps, every limit, and allocation failures.  Every text
 * is parsed from a buffer of exactly its length (no NUL after it), so
 * AddressSanitizer catches any read past `len`.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "heapfile.h"
#include "unit.h"
#include "util.h"

/* A fatal check that the compiler also sees as leaving the function (CUnit's
 * longjmp is invisible to -Wnull-dereference at -O2). */
#define REQUIRE(cond)                                                          \
    do {                                                                       \
        CU_ASSERT_FATAL((cond) ? 1 : 0);                                       \
        if (!(cond))                                                           \
            return;                                                            \
    } while (0)

#ifndef LEAKGATE_FIXTURES
#error "LEAKGATE_FIXTURES must name tests/fixtures"
#endif

/* A copy of s without its NUL (malloc(0) when s is empty). */
static char *
exact_copy(const char *s, size_t n)
{
    char *p = malloc(n ? n : 1);

    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    memcpy(p, s, n);
    return p;
}

static char *
read_fixture(const char *name, size_t *len)
{
    char path[1024];
    char *buf;
    long n;
    FILE *f;

    snprintf(path, sizeof path, "%s/heap/%s", LEAKGATE_FIXTURES, name);
    f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    CU_ASSERT_FATAL(n > 0);
    buf = malloc((size_t)n); /* exactly the file: no NUL after it */
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    CU_ASSERT_FATAL(fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static int
parse_fixture(struct leakgate_heap **out, const char *name)
{
    size_t len;
    char *text = read_fixture(name, &len);
    int err = leakgate_heapfile__parse(out, text, len, name, NULL);

    free(text); /* the heap must not point into the text */
    return err;
}

static int
parse_text(struct leakgate_heap **out,
           const char *s,
           const struct leakgate_heap_limits *lim)
{
    size_t n = strlen(s);
    char *text = exact_copy(s, n);
    int err = leakgate_heapfile__parse(out, text, n, "t.heap", lim);

    free(text);
    return err;
}

static bool
is_sorted(const struct leakgate_heap *h)
{
    for (size_t i = 1; i < h->nstacks; i++) {
        const struct leakgate_heap_stack *a = &h->stacks[i - 1];
        const struct leakgate_heap_stack *b = &h->stacks[i];
        size_t n = a->npcs < b->npcs ? a->npcs : b->npcs, j = 0;

        while (j < n && a->pcs[j] == b->pcs[j])
            j++;
        if (j < n ? a->pcs[j] > b->pcs[j] : a->npcs >= b->npcs)
            return false;
    }
    return true;
}

static const struct leakgate_heap_stack *
find_stack(const struct leakgate_heap *h, uint64_t bytes)
{
    for (size_t i = 0; i < h->nstacks; i++) {
        if (h->stacks[i].live_bytes == bytes)
            return &h->stacks[i];
    }
    return NULL;
}

static const struct leakgate_heap_mapping *
find_map(const struct leakgate_heap *h,
         const char *path_part,
         const char *perms)
{
    for (size_t i = 0; i < h->nmaps; i++) {
        if (strstr(h->maps[i].path, path_part) &&
            (!perms || strcmp(h->maps[i].perms, perms) == 0))
            return &h->maps[i];
    }
    return NULL;
}

#define HDR "heap_v2/1\n  t*: 1: 16 [0: 0]\n  t0: 1: 16 [0: 0]\n"
#define REC "@ 0x10 0x20\n  t*: 1: 16 [0: 0]\n  t0: 1: 16 [0: 0]\n"
#define MAPS                                                                   \
    "\nMAPPED_LIBRARIES:\n"                                                    \
    "00400000-00401000 r-xp 00000000 08:01 42 /bin/x\n"

static void
test_heapfile__recorded_before(void)
{
    struct leakgate_heap *h;
    const struct leakgate_heap_stack *a, *c;

    CU_ASSERT_EQUAL_FATAL(parse_fixture(&h, "before.heap"), 0);
    CU_ASSERT_EQUAL(h->sample_period, 1);
    CU_ASSERT_EQUAL(h->total_objs, 4);
    CU_ASSERT_EQUAL(h->total_bytes, 384);
    CU_ASSERT_EQUAL_FATAL(h->nthreads, 1);
    CU_ASSERT_EQUAL(h->threads[0].tid, 0);
    CU_ASSERT_EQUAL(h->threads[0].live_bytes, 384);
    CU_ASSERT_STRING_EQUAL(h->threads[0].name, "main");
    CU_ASSERT_EQUAL_FATAL(h->nstacks, 2);
    CU_ASSERT(is_sorted(h));
    a = find_stack(h, 336); /* 3 x malloc(100), usable size 112 */
    c = find_stack(h, 48);
    REQUIRE(a);
    REQUIRE(c);
    CU_ASSERT_EQUAL(a->live_objs, 3);
    CU_ASSERT_EQUAL(c->live_objs, 1);
    CU_ASSERT(a->npcs > 4 && a->npcs <= 128);
    CU_ASSERT_EQUAL_FATAL(a->nthreads, 1);
    CU_ASSERT_EQUAL(a->threads[0].tid, 0);
    CU_ASSERT_EQUAL(a->threads[0].live_objs, 3);
    CU_ASSERT_PTR_NULL(a->threads[0].name);
    CU_ASSERT(h->nmaps > 10);
    leakgate_heapfile__free(h);
}

static void
test_heapfile__recorded_after_threads(void)
{
    struct leakgate_heap *h;
    const struct leakgate_heap_stack *t;

    CU_ASSERT_EQUAL_FATAL(parse_fixture(&h, "after.heap"), 0);
    CU_ASSERT_EQUAL(h->total_bytes, 5664);
    CU_ASSERT_EQUAL_FATAL(h->nthreads, 2);
    CU_ASSERT_STRING_EQUAL(h->threads[0].name, "main");
    CU_ASSERT_EQUAL(h->threads[1].tid, 1);
    CU_ASSERT_EQUAL(h->threads[1].live_bytes, 1024);
    CU_ASSERT_STRING_EQUAL(h->threads[1].name, "worker one");
    CU_ASSERT(is_sorted(h));
    CU_ASSERT_PTR_NOT_NULL(find_stack(h, 4096));
    CU_ASSERT_PTR_NOT_NULL(find_stack(h, 224)); /* keep_a, one freed */
    CU_ASSERT_PTR_NULL(find_stack(h, 48));      /* keep_c, freed */
    t = find_stack(h, 1024);
    REQUIRE(t);
    CU_ASSERT_EQUAL_FATAL(t->nthreads, 1);
    CU_ASSERT_EQUAL(t->threads[0].tid, 1);
    CU_ASSERT_EQUAL(t->threads[0].live_bytes, 1024);
    leakgate_heapfile__free(h);
}

static void
test_heapfile__recorded_empty(void)
{
    struct leakgate_heap *h;

    CU_ASSERT_EQUAL_FATAL(parse_fixture(&h, "empty.heap"), 0);
    CU_ASSERT_EQUAL(h->nstacks, 0);
    CU_ASSERT_EQUAL(h->total_objs, 0);
    CU_ASSERT_EQUAL(h->total_bytes, 0);
    CU_ASSERT_EQUAL(h->nthreads, 1);
    CU_ASSERT(h->nmaps > 10);
    leakgate_heapfile__free(h);
}

/* The executable is PIE: its text mapping has a file offset, and the
 * mapped file with spaces in its name is kept whole. */
static void
test_heapfile__recorded_mappings(void)
{
    struct leakgate_heap *h;
    const struct leakgate_heap_mapping *exe, *spaced, *je;
    bool anon = false;

    CU_ASSERT_EQUAL_FATAL(parse_fixture(&h, "after.heap"), 0);
    exe = find_map(h, "gen_heap", "r-xp");
    REQUIRE(exe);
    CU_ASSERT(exe->offset > 0);
    CU_ASSERT(exe->start < exe->end);
    CU_ASSERT(exe->start > 0x10000000); /* PIE: not at 0x400000 */
    spaced = find_map(h, "leakgate gen heap ", NULL);
    REQUIRE(spaced);
    CU_ASSERT_EQUAL(spaced->path[0], '/');
    CU_ASSERT_STRING_EQUAL(spaced->path + strlen(spaced->path) - 4, ".bin");
    je = find_map(h, "libjemalloc", "r-xp");
    CU_ASSERT_PTR_NOT_NULL(je);
    for (size_t i = 0; i < h->nmaps; i++)
        anon = anon || h->maps[i].path[0] == '\0';
    CU_ASSERT(anon);
    /* Every recorded frame of jemalloc lies in its text mapping. */
    CU_ASSERT(je && h->stacks[0].pcs[0] >= je->start &&
              h->stacks[0].pcs[0] < je->end);
    leakgate_heapfile__free(h);
}

static void
test_heapfile__handmade(void)
{
    struct leakgate_heap *h;
    const struct leakgate_heap_stack *s;

    CU_ASSERT_EQUAL_FATAL(parse_fixture(&h, "handmade.heap"), 0);
    CU_ASSERT_EQUAL_FATAL(h->nstacks, 3);
    /* Sorted by pcs, a prefix before its extensions. */
    s = h->stacks;
    CU_ASSERT_EQUAL(s[0].pcs[1], 0x55d0c0a01100);
    CU_ASSERT_EQUAL(s[1].npcs, 2);
    CU_ASSERT_EQUAL(s[1].pcs[1], 0x55d0c0a01200);
    CU_ASSERT_EQUAL(s[1].live_bytes, 32);
    CU_ASSERT_EQUAL(s[1].threads[0].tid, 7);
    CU_ASSERT_EQUAL(s[2].npcs, 3);
    CU_ASSERT_EQUAL(s[2].live_bytes, 4096);
    CU_ASSERT_EQUAL(s[2].threads[0].tid, 0);
    CU_ASSERT_EQUAL_FATAL(h->nthreads, 2);
    CU_ASSERT_STRING_EQUAL(h->threads[1].name, "pool worker 2");
    CU_ASSERT_EQUAL_FATAL(h->nmaps, 7);
    CU_ASSERT_STRING_EQUAL(h->maps[0].path, "/opt/my app/bin/unit tests");
    CU_ASSERT_EQUAL(h->maps[1].offset, 0x1000);
    CU_ASSERT_STRING_EQUAL(h->maps[1].perms, "r-xp");
    CU_ASSERT_STRING_EQUAL(h->maps[2].path, "[heap]");
    CU_ASSERT_STRING_EQUAL(h->maps[3].path, "");
    CU_ASSERT_STRING_EQUAL(h->maps[5].path, "/tmp/scratch file (deleted)");
    CU_ASSERT_EQUAL(h->maps[6].start, (uintptr_t)0xffffffffff600000);
    CU_ASSERT_STRING_EQUAL(h->maps[6].perms, "--xp");
    leakgate_heapfile__free(h);
}

struct bad_file {
    const char *file;
    const char *detail; /* expected start of leakgate_error_last() */
};

static void
test_heapfile__malformed_files(void)
{
    static const struct bad_file cases[] = {
        {"malformed_bad_hex.heap", "malformed_bad_hex.heap:5: "},
        {"malformed_missing_tstar.heap", "malformed_missing_tstar.heap:9: "},
        {"malformed_overflow.heap", "malformed_overflow.heap:6: "},
        {"malformed_record_before_header.heap",
         "malformed_record_before_header.heap:1: "},
        {"malformed_truncated.heap", "malformed_truncated.heap:7: "},
        {"malformed_garbage.heap", "malformed_garbage.heap:8: "},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct leakgate_heap *h = (void *)&h;
        int err = parse_fixture(&h, cases[i].file);
        const char *d = leakgate_error_last();
        bool ok = err == LEAKGATE_EFORMAT &&
                  strncmp(d, cases[i].detail, strlen(cases[i].detail)) == 0;

        if (!ok)
            fprintf(stderr, "\n%s: %d %s\n", cases[i].file, err, d);
        CU_ASSERT(ok);
        CU_ASSERT_PTR_NULL(h);
    }
}

struct bad_text {
    const char *text;
    int code;
    const char *detail; /* a substring of leakgate_error_last() */
};

static const struct bad_text bad_texts[] = {
    {"", LEAKGATE_EFORMAT, "t.heap:1: truncated: expected 'heap_v2/"},
    {"garbage\n", LEAKGATE_EFORMAT, "t.heap:1: expected 'heap_v2/"},
    {"heap_v1/1\n", LEAKGATE_EFORMAT, "t.heap:1: expected 'heap_v2/"},
    {"heap_v2/3\n", LEAKGATE_EFORMAT, ":1: sample period 3 is not a power"},
    {"heap_v2/0\n", LEAKGATE_EFORMAT, ":1: sample period 0 is not a power"},
    {"heap_v2/\n", LEAKGATE_EFORMAT, ":1: expected a decimal number"},
    {"heap_v2/1x\n", LEAKGATE_EFORMAT, ":1: unexpected text at column 10"},
    {"heap_v2/1\r\n", LEAKGATE_EFORMAT, ":1: unexpected text"},
    {"heap_v2/1\n" REC, LEAKGATE_EFORMAT, ":2: expected the header totals"},
    {"heap_v2/1\n", LEAKGATE_EFORMAT, ":2: truncated: expected the header"},
    {"heap_v2/1\n  t*: 1: 16\n", LEAKGATE_EFORMAT, ":2: expected ' ['"},
    {"heap_v2/1\n  t*: 1 16 [0: 0]\n", LEAKGATE_EFORMAT, ":2: expected ': '"},
    {"heap_v2/1\n  t*: -1: 16 [0: 0]\n", LEAKGATE_EFORMAT,
     ":2: expected a decimal number at column 7"},
    {"heap_v2/1\n  t*: 1: 18446744073709551616 [0: 0]\n", LEAKGATE_EFORMAT,
     ":2: number overflows uint64 at column 10"},
    {"heap_v2/1\n  t*: 1: 16 [0: 99999999999999999999]\n", LEAKGATE_EFORMAT,
     ":2: number overflows uint64"},
    {"heap_v2/1\n  t*: 1: 16 [0: 0] x\n", LEAKGATE_EFORMAT,
     ":2: unexpected text"},
    {HDR "  tx: 1: 16 [0: 0]\n", LEAKGATE_EFORMAT,
     ":4: expected a decimal number"},
    {HDR "  t1: 1: 16 [0: 0]name\n", LEAKGATE_EFORMAT, ":4: expected ' '"},
    {HDR "@ 0x10 0x2g\n", LEAKGATE_EFORMAT,
     ":4: bad character in address at column 11"},
    {HDR "@ 0x10 0123\n", LEAKGATE_EFORMAT, ":4: bad character in address"},
    {HDR "@ 0x10 0xg\n", LEAKGATE_EFORMAT, ":4: expected a hex number"},
    {HDR "@ 0x10 1234\n", LEAKGATE_EFORMAT, ":4: expected a 0x address"},
    {HDR "@ 0x10 x\n", LEAKGATE_EFORMAT, ":4: expected a 0x address"},
    {HDR "@ 0x10  0x20\n", LEAKGATE_EFORMAT, ":4: expected a 0x address"},
    {HDR "@ 0x10 \n", LEAKGATE_EFORMAT, ":4: expected a 0x address"},
    {HDR "@\n", LEAKGATE_EFORMAT, ":4: expected ' '"},
    {HDR "@ 0x10000000000000000\n", LEAKGATE_EFORMAT,
     ":4: hex number overflows an address"},
    {HDR "@ 0x10\n  t0: 1: 16 [0: 0]\n", LEAKGATE_EFORMAT,
     ":5: expected the record's totals after its '@' line"},
    {HDR "@ 0x10\n" MAPS, LEAKGATE_EFORMAT, ":5: expected the record's"},
    {HDR "@ 0x10\n", LEAKGATE_EFORMAT, ":5: truncated: expected the record"},
    {HDR REC "  t*: 1: 16 [0: 0]\n", LEAKGATE_EFORMAT,
     ":7: expected a thread line"},
    {HDR REC "  t1: 1: 16 [0: 0] name\n", LEAKGATE_EFORMAT,
     ":7: unexpected text"},
    {HDR REC "MAPPED_LIBRARIES:\n", LEAKGATE_EFORMAT,
     ":7: expected a thread line '  tN: ...', a record"},
    {HDR REC, LEAKGATE_EFORMAT, ":7: truncated: expected the blank line"},
    {HDR REC "\n", LEAKGATE_EFORMAT, ":8: truncated: expected 'MAPPED_"},
    {HDR REC "\n\nMAPPED_LIBRARIES:\n", LEAKGATE_EFORMAT,
     ":8: expected 'MAPPED_LIBRARIES:'"},
    {HDR REC "\nMAPPED_LIBRARIES: x\n", LEAKGATE_EFORMAT,
     ":8: expected 'MAPPED_LIBRARIES:'"},
    {HDR REC MAPS "00400000-00401000 r-xp", LEAKGATE_EFORMAT,
     ":10: truncated: the last line has no newline"},
    {HDR REC MAPS "\n", LEAKGATE_EFORMAT, ":10: expected a hex number"},
    {HDR REC MAPS "0040-\n", LEAKGATE_EFORMAT, ":10: expected a hex number"},
    {HDR REC MAPS "00401000-00400000 r-xp 0 08:01 1\n", LEAKGATE_EFORMAT,
     ":10: mapping ends before it starts"},
    {HDR REC MAPS "00400000-00401000 rwzp 0 08:01 1\n", LEAKGATE_EFORMAT,
     ":10: expected permissions"},
    {HDR REC MAPS "00400000-00401000 r-x 0 08:01 1\n", LEAKGATE_EFORMAT,
     ":10: expected permissions"},
    {HDR REC MAPS "00400000-00401000 r-xp 0 08:01\n", LEAKGATE_EFORMAT,
     ":10: expected ' '"},
    {HDR REC MAPS "00400000-00401000 r-xp 0 0801 1\n", LEAKGATE_EFORMAT,
     ":10: expected ':'"},
    {HDR REC MAPS "00400000-00401000 r-xp 0 08:01 1x\n", LEAKGATE_EFORMAT,
     ":10: expected ' '"},
    {HDR REC REC MAPS, LEAKGATE_EFORMAT,
     ":7: the same stack is recorded twice"},
    {HDR "@ 0x1\n  t*: 1: 1 [0: 0]\n" REC "@ 0x1\n  t*: 1: 1 [0: 0]\n" MAPS,
     LEAKGATE_EFORMAT, ":9: the same stack is recorded twice"},
};

static void
test_heapfile__malformed_texts(void)
{
    for (size_t i = 0; i < sizeof bad_texts / sizeof bad_texts[0]; i++) {
        const struct bad_text *c = &bad_texts[i];
        struct leakgate_heap *h = (void *)&h;
        int err = parse_text(&h, c->text, NULL);
        const char *d = leakgate_error_last();
        bool ok = err == c->code && strstr(d, c->detail) != NULL &&
                  strncmp(d, "t.heap:", 7) == 0;

        if (!ok)
            fprintf(stderr, "\ncase %zu: got %d \"%s\", want \"%s\"\n", i, err,
                    d, c->detail);
        CU_ASSERT(ok);
        CU_ASSERT_PTR_NULL(h);
    }
}

/* NUL bytes cannot be written in a C string literal table. */
static void
test_heapfile__nul_bytes(void)
{
    static const char name_nul[] = "heap_v2/1\n  t*: 0: 0 [0: 0]\n"
                                   "  t0: 0: 0 [0: 0] ab\0cd\n" MAPS;
    static const char path_nul[] = HDR REC MAPS "0-1 r--p 0 0:0 0 /a\0b\n";
    static const char count_nul[] = "heap_v2/1\n  t*: 1\0: 0 [0: 0]\n";
    struct leakgate_heap *h;

    CU_ASSERT_EQUAL(
        leakgate_heapfile__parse(&h, name_nul, sizeof name_nul - 1, "n", NULL),
        LEAKGATE_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "n:3: NUL byte"));
    CU_ASSERT_EQUAL(
        leakgate_heapfile__parse(&h, path_nul, sizeof path_nul - 1, "p", NULL),
        LEAKGATE_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "p:10: NUL byte"));
    CU_ASSERT_EQUAL(leakgate_heapfile__parse(&h, count_nul,
                                             sizeof count_nul - 1, "c", NULL),
                    LEAKGATE_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "c:2: expected"));
}

static void
test_heapfile__valid_forms(void)
{
    struct leakgate_heap *h;

    /* Zero records; a thread with an empty name; a zero address as
     * printf's %#x prints it; max values; upper-case hex; a mapping line
     * without a path and without the trailing space. */
    CU_ASSERT_EQUAL_FATAL(
        parse_text(&h,
                   "heap_v2/524288\n"
                   "  t*: 18446744073709551615: 0 [0: 0]\n"
                   "  t3: 0: 0 [0: 0] \n"
                   "@ 0x1 0 0xFFFFFFFFFFFFFFFF\n  t*: 0: 0 [5: 80]\n"
                   "\nMAPPED_LIBRARIES:\n"
                   "7f0000000000-7f0000021000 rw-p 00000000 00:00 0\n",
                   NULL),
        0);
    CU_ASSERT_EQUAL(h->sample_period, 524288);
    CU_ASSERT_EQUAL(h->total_objs, UINT64_MAX);
    CU_ASSERT_STRING_EQUAL(h->threads[0].name, "");
    CU_ASSERT_EQUAL(h->threads[0].tid, 3);
    CU_ASSERT_EQUAL_FATAL(h->nstacks, 1);
    CU_ASSERT_EQUAL(h->stacks[0].nthreads, 0);
    CU_ASSERT_EQUAL_FATAL(h->stacks[0].npcs, 3);
    CU_ASSERT_EQUAL(h->stacks[0].pcs[0], 1);
    CU_ASSERT_EQUAL(h->stacks[0].pcs[1], 0);
    CU_ASSERT_EQUAL(h->stacks[0].pcs[2], UINTPTR_MAX);
    CU_ASSERT_EQUAL_FATAL(h->nmaps, 1);
    CU_ASSERT_STRING_EQUAL(h->maps[0].path, "");
    leakgate_heapfile__free(h);
    CU_ASSERT_EQUAL_FATAL(parse_text(&h, HDR MAPS, NULL), 0);
    CU_ASSERT_EQUAL(h->nstacks, 0);
    CU_ASSERT_EQUAL(h->nthreads, 1);
    CU_ASSERT_PTR_NULL(h->threads[0].name);
    leakgate_heapfile__free(h);
    leakgate_heapfile__free(NULL);
}

/* Every proper prefix of a dump cut before its maps is rejected, without
 * reading past the prefix (ASan) and without leaking. */
static void
test_heapfile__every_truncation(void)
{
    size_t len, maps_at;
    char *text = read_fixture("after.heap", &len);
    const char *m = strstr(text, "MAPPED_LIBRARIES:\n");

    REQUIRE(m);
    maps_at = (size_t)(m - text) + strlen("MAPPED_LIBRARIES:\n");
    for (size_t n = 0; n < len; n++) {
        char *cut = exact_copy(text, n);
        struct leakgate_heap *h;
        int err = leakgate_heapfile__parse(&h, cut, n, "cut", NULL);

        if (n < maps_at) {
            CU_ASSERT_EQUAL(err, LEAKGATE_EFORMAT);
        } else if (text[n - 1] == '\n') {
            CU_ASSERT_EQUAL(err, 0); /* whole map lines are dropped */
        } else {
            CU_ASSERT_EQUAL(err, LEAKGATE_EFORMAT);
        }
        if (err == 0)
            leakgate_heapfile__free(h);
        free(cut);
    }
    free(text);
}

/* The text parses with *field = exact and fails one below it. */
static void
check_limit(const char *text,
            struct leakgate_heap_limits *lim,
            size_t *field,
            size_t exact,
            const char *detail)
{
    struct leakgate_heap *h;

    *field = exact;
    CU_ASSERT_EQUAL(parse_text(&h, text, lim), 0);
    leakgate_heapfile__free(h);
    *field = exact - 1;
    CU_ASSERT_EQUAL(parse_text(&h, text, lim), LEAKGATE_ETOOBIG);
    if (!strstr(leakgate_error_last(), detail))
        fprintf(stderr, "\n%s\n", leakgate_error_last());
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), detail));
    CU_ASSERT_PTR_NULL(h);
    *field = 0;
}

static void
test_heapfile__limits(void)
{
    static const char text[] = HDR "@ 0x10 0x20 0x30\n  t*: 1: 16 [0: 0]\n"
                                   "@ 0x10\n  t*: 1: 16 [0: 0]\n" MAPS;
    struct leakgate_heap_limits lim = {0, 0, 0, 0};

    check_limit(text, &lim, &lim.max_size, strlen(text),
                "t.heap: 177 bytes exceed max_size (176 bytes)");
    check_limit(text, &lim, &lim.max_line, 47,
                "t.heap:10: line longer than max_line (46 bytes)");
    check_limit(text, &lim, &lim.max_frames, 3,
                "t.heap:4: stack deeper than max_frames (2)");
    check_limit(text, &lim, &lim.max_stacks, 2,
                "t.heap:6: more records than max_stacks (1)");
}

static char *
deep_stack_text(size_t frames)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__puts(&b, HDR "@");
    for (size_t i = 0; i < frames; i++)
        leakgate_buf__printf(&b, " 0x%zx", i + 1);
    leakgate_buf__puts(&b, "\n  t*: 1: 16 [0: 0]\n" MAPS);
    CU_ASSERT_FATAL(!b.failed);
    return b.ptr;
}

static void
test_heapfile__default_limits(void)
{
    char *ok = deep_stack_text(256), *deep = deep_stack_text(257);
    char *longl = deep_stack_text(12000); /* a line over 64 KiB */
    struct leakgate_heap *h;

    CU_ASSERT_EQUAL(parse_text(&h, ok, NULL), 0);
    leakgate_heapfile__free(h);
    CU_ASSERT_EQUAL(parse_text(&h, deep, NULL), LEAKGATE_ETOOBIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "(256)"));
    CU_ASSERT_EQUAL(parse_text(&h, longl, NULL), LEAKGATE_ETOOBIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "(65536 bytes)"));
    leakgate_util__free(ok);
    leakgate_util__free(deep);
    leakgate_util__free(longl);
}

static void
test_heapfile__alloc_failure(void)
{
    size_t len;
    char *text = read_fixture("after.heap", &len);
    struct leakgate_heap *h = (void *)&h;

    leakgate_util__fail_after(0);
    CU_ASSERT_EQUAL(leakgate_heapfile__parse(&h, text, len, "a", NULL),
                    LEAKGATE_ENOMEM);
    leakgate_util__fail_after(SIZE_MAX);
    CU_ASSERT_PTR_NULL(h);
    /* One allocation per heap: the next one succeeds. */
    leakgate_util__fail_after(1);
    CU_ASSERT_EQUAL(leakgate_heapfile__parse(&h, text, len, "a", NULL), 0);
    leakgate_util__fail_after(SIZE_MAX);
    leakgate_heapfile__free(h);
    free(text);
}

/* A dump of n stacks of 12 frames with 2 thread lines each, shaped like
 * jemalloc's (~500 bytes a record). */
static char *
big_dump(size_t n, size_t *len)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__puts(&b, HDR);
    for (size_t i = n; i-- > 0;) {
        leakgate_buf__puts(&b, "@ 0x7f983d2a2630 0x7f983d2a2d21 "
                               "0x7f983d295f24 0x7f983d222045");
        for (size_t f = 0; f < 8; f++)
            leakgate_buf__printf(&b, " 0x%zx", 0x563e06fa6000 + i * 8 + f);
        leakgate_buf__printf(&b,
                             "\n  t*: 2: %zu [0: 0]\n  t0: 1: 16 [0: 0]\n"
                             "  t1: 1: %zu [0: 0]\n",
                             16 + i, i);
    }
    leakgate_buf__puts(&b, MAPS);
    CU_ASSERT_FATAL(!b.failed);
    *len = b.len;
    return b.ptr;
}

static double
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
test_heapfile__speed(void)
{
    static const size_t sizes[] = {1000, 10000};

    for (size_t k = 0; k < 2; k++) {
        size_t len;
        char *text = big_dump(sizes[k], &len);
        struct leakgate_heap *h;
        double best = 1e9;

        for (int rep = 0; rep < 5; rep++) {
            double t0 = now_ms(), dt;

            CU_ASSERT_EQUAL_FATAL(
                leakgate_heapfile__parse(&h, text, len, "big", NULL), 0);
            dt = now_ms() - t0;
            best = dt < best ? dt : best;
            CU_ASSERT_EQUAL(h->nstacks, sizes[k]);
            CU_ASSERT(is_sorted(h));
            leakgate_heapfile__free(h);
        }
        printf("\n  parse %zu stacks (%zu KiB): %.2f ms ", sizes[k], len / 1024,
               best);
        /* Generous: only catches quadratic behaviour, even under ASan. */
        CU_ASSERT(best < (double)sizes[k] / 10);
        leakgate_util__free(text);
    }
}

const char *const unit_suite = "heapfile";
const struct unit_case unit_cases[] = {
    {"test_heapfile__recorded_before", test_heapfile__recorded_before},
    {"test_heapfile__recorded_after_threads",
     test_heapfile__recorded_after_threads},
    {"test_heapfile__recorded_empty", test_heapfile__recorded_empty},
    {"test_heapfile__recorded_mappings", test_heapfile__recorded_mappings},
    {"test_heapfile__handmade", test_heapfile__handmade},
    {"test_heapfile__malformed_files", test_heapfile__malformed_files},
    {"test_heapfile__malformed_texts", test_heapfile__malformed_texts},
    {"test_heapfile__nul_bytes", test_heapfile__nul_bytes},
    {"test_heapfile__valid_forms", test_heapfile__valid_forms},
    {"test_heapfile__every_truncation", test_heapfile__every_truncation},
    {"test_heapfile__limits", test_heapfile__limits},
    {"test_heapfile__default_limits", test_heapfile__default_limits},
    {"test_heapfile__alloc_failure", test_heapfile__alloc_failure},
    {"test_heapfile__speed", test_heapfile__speed},
    {NULL, NULL},
};
