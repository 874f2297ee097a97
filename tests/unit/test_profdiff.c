/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of harness/profdiff.c (the renderings of `leakgate diff`)
 * from diffs built by hand, and of harness/diff_profiles.c (the public
 * leakgate_diff_profiles()) on the recorded dumps of tests/fixtures/heap:
 * growth and freed memory, focus and folding, one profile alone, sampled
 * profiles scaled as jeprof does, every bad input with its error and
 * allocation failures.  The end-to-end checks on a live PIE program are in
 * tests/report.
 */
#include "profdiff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leakgate/diff.h"
#include "render.h"
#include "unit.h"
#include "util.h"

#define HEAP LEAKGATE_FIXTURES "/heap/"

static bool
contains(const char *haystack, const char *needle)
{
    bool found = haystack && strstr(haystack, needle) != NULL;

    if (!found)
        fprintf(stderr, "\n  missing: \"%s\"\n  in:\n%s\n", needle,
                haystack ? haystack : "(null)");
    return found;
}

/* ---- renderings of a hand-made diff ------------------------------------- */

struct fixture {
    struct leakgate_frame f1[3], f2[1];
    uintptr_t pcs1[2], pcs2[1], pcs3[2];
    struct leakgate_vstack stacks[4];
    char *notes[1];
    struct leakgate_profdiff d;
};

static char s_note[] = "a note for the reader";

static void
fixture_init(struct fixture *fx)
{
    memset(fx, 0, sizeof *fx);
    fx->f1[0] = (struct leakgate_frame){
        0x10, "cache_store", "/src/s.c", 40, "/bin/svc", 0x10, false};
    fx->f1[1] = (struct leakgate_frame){
        0x20, "handle_requests", "/src/s.c", 47, "/bin/svc", 0x20, false};
    fx->f1[2] = (struct leakgate_frame){0x30, "__libc_start_call_main", NULL,
                                        0,    "/usr/lib/libc.so.6",     0x30,
                                        false};
    fx->f2[0] = (struct leakgate_frame){0x40,           NULL, NULL, 0,
                                        "/lib/libx.so", 0x44, true};
    fx->pcs1[0] = 0x10;
    fx->pcs1[1] = 0x20;
    fx->pcs3[0] = 0xabc;
    fx->pcs3[1] = 0xdef;
    fx->stacks[0] = (struct leakgate_vstack){.pcs = fx->pcs1,
                                             .npcs = 2,
                                             .frames = fx->f1,
                                             .nframes = 3,
                                             .shown_end = 2,
                                             .bytes = 3072,
                                             .objs = 3};
    fx->stacks[1] = (struct leakgate_vstack){.pcs = fx->pcs2,
                                             .npcs = 1,
                                             .frames = fx->f2,
                                             .nframes = 1,
                                             .shown_end = 1,
                                             .bytes = 16,
                                             .objs = 1};
    fx->stacks[2] = (struct leakgate_vstack){
        .pcs = fx->pcs3, .npcs = 2, .bytes = 8, .objs = 1};
    fx->stacks[3] = (struct leakgate_vstack){.bytes = -256, .objs = -1};
    fx->notes[0] = s_note;
    fx->d = (struct leakgate_profdiff){.before_name = "b.heap",
                                       .after_name = "a.heap",
                                       .sample_period = 1,
                                       .binary = "/bin/svc",
                                       .build_id = "abcd",
                                       .nodefraction = 0,
                                       .edgefraction = -1,
                                       .stacks = fx->stacks,
                                       .nstacks = 4,
                                       .notes = fx->notes,
                                       .nnotes = 1};
}

static const char golden_text[] =
    "leakgate diff: 3,096 B retained in 5 objects by 3 stacks\n"
    "  from b.heap\n"
    "  to   a.heap\n"
    "  stack 1 of 3: 3,072 B in 3 objects\n"
    "      cache_store      /src/s.c:40\n"
    "      handle_requests  /src/s.c:47\n"
    "  stack 2 of 3: 16 B in 1 object\n"
    "      ?? (inlined)  /lib/libx.so+0x44\n"
    "  stack 3 of 3: 8 B in 1 object\n"
    "      0xabc\n"
    "      0xdef\n"
    "  also changed: 256 B in 1 object freed by 1 stack (allocated before "
    "the first profile)\n"
    "  note: a note for the reader\n"
    "  measured: exact (heap_v2/1: every allocation sampled)\n"
    "  binary: /bin/svc (build-id abcd)\n";

static void
test_profdiff__text(void)
{
    struct fixture fx;
    char *text;

    fixture_init(&fx);
    text = leakgate_profdiff__text(&fx.d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_STRING_EQUAL(text, golden_text);
    if (strcmp(text, golden_text) != 0)
        fprintf(stderr, "\n--- got:\n%s--- want:\n%s", text, golden_text);
    leakgate_util__free(text);
}

static void
test_profdiff__text_variants(void)
{
    struct fixture fx;
    char *text;

    fixture_init(&fx);
    fx.d.focus = "cache";
    fx.d.unfocused_stacks = 2;
    fx.d.unfocused_bytes = 4104;
    fx.d.nodefraction = 0.01; /* 31 B: stacks 2 and 3 fold */
    fx.d.sample_period = 524288;
    fx.d.before_name = NULL;
    fx.d.build_id = "";
    fx.d.nnotes = 0;
    fx.stacks[2].npcs = 0;
    text = leakgate_profdiff__text(&fx.d);
    CU_ASSERT(contains(text, "leakgate diff: 3,096 B live in 5 objects by 3 "
                             "stacks\n  profile: a.heap (no base: every "
                             "live stack counts)\n  stack 1 of 1: 3,072 B"));
    CU_ASSERT(contains(text, "  focus /cache/: 2 growing stacks (4,104 B) "
                             "did not match\n"));
    CU_ASSERT(contains(text, "  folded: 2 stacks under 0.01 of the growth "
                             "(24 B in all); lower --nodefraction to list "
                             "them\n"));
    CU_ASSERT(contains(text, "measured: sampled (heap_v2/524288: one sample "
                             "per 524,288 bytes allocated on average); "
                             "numbers are estimates"));
    CU_ASSERT(contains(text, "  binary: /bin/svc (no build-id)\n"));
    leakgate_util__free(text);
    /* Nothing grew. */
    fx.d.nstacks = 0;
    text = leakgate_profdiff__text(&fx.d);
    CU_ASSERT(contains(text, "leakgate diff: no stack grew\n"));
    leakgate_util__free(text);
    /* A stack whose every frame was the allocator's. */
    fixture_init(&fx);
    fx.stacks[0] = fx.stacks[2];
    fx.stacks[0].npcs = 0;
    fx.d.nstacks = 1;
    text = leakgate_profdiff__text(&fx.d);
    CU_ASSERT(contains(text, "      (every frame was in the allocator)\n"));
    leakgate_util__free(text);
}

static void
test_profdiff__json(void)
{
    static char weird[] = "we\"ird\\\n\xff";
    struct fixture fx;
    char *json;

    fixture_init(&fx);
    fx.f1[0].function = weird;
    json = leakgate_profdiff__json(&fx.d);
    CU_ASSERT(contains(json, "\"format\": \"leakgate-diff\",\n  \"version\": "
                             "1,"));
    CU_ASSERT(contains(json, "\"before\": \"b.heap\",\n  \"after\": "
                             "\"a.heap\",\n  \"sample_period\": 1,\n  "
                             "\"exact\": true,"));
    CU_ASSERT(contains(json, "\"summary\": {\"grown_bytes\": 3096, "
                             "\"grown_objects\": 5, \"grown_stacks\": 3, "
                             "\"listed_stacks\": 3,"));
    CU_ASSERT(contains(json, "\"freed_bytes\": -256, \"freed_objects\": -1, "
                             "\"freed_stacks\": 1,"));
    CU_ASSERT(contains(json, "\"notes\": [\"a note for the reader\"]"));
    CU_ASSERT(contains(json, "{\"function\": \"we\\\"ird\\\\\\n\\ufffd\", "
                             "\"file\": \"/src/s.c\", \"line\": 40, "
                             "\"module\": \"/bin/svc\", \"offset\": \"0x10\", "
                             "\"inlined\": false, \"pc\": \"0x10\", "
                             "\"shown\": true}"));
    CU_ASSERT(contains(json, "\"function\": \"__libc_start_call_main\", "
                             "\"file\": null, \"line\": null,"));
    CU_ASSERT(contains(json, "\"shown\": false}"));
    CU_ASSERT(contains(json, "{\"bytes\": 8, \"objects\": 1, \"listed\": "
                             "true,\n     \"pcs\": [\"0xabc\", \"0xdef\"],\n"
                             "     \"frames\": null}"));
    CU_ASSERT(contains(json, "{\"bytes\": -256, \"objects\": -1, \"listed\": "
                             "false,"));
    leakgate_util__free(json);
    if (system("python3 -c pass >/dev/null 2>&1") == 0) {
        char path[] = "/tmp/leakgate-profdiff-XXXXXX";
        char cmd[256];
        int fd = mkstemp(path);

        fx.f1[0].function = "plain";
        json = leakgate_profdiff__json(&fx.d);
        CU_ASSERT_FATAL(fd >= 0 && json != NULL);
        CU_ASSERT(write(fd, json, strlen(json)) == (ssize_t)strlen(json));
        close(fd);
        snprintf(cmd, sizeof cmd,
                 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));"
                 " assert d[\"stacks\"][0][\"frames\"][0][\"line\"] == 40' %s",
                 path);
        CU_ASSERT_EQUAL(system(cmd), 0);
        unlink(path);
        leakgate_util__free(json);
    } else {
        fprintf(stderr, "(python3 not found: JSON not parsed) ");
    }
}

static void
test_profdiff__dot(void)
{
    struct fixture fx;
    char *dot = NULL;

    fixture_init(&fx);
    fx.d.focus = "cache";
    CU_ASSERT_EQUAL(leakgate_profdiff__dot(&dot, &fx.d), 0);
    CU_ASSERT(contains(dot, "label=\"leakgate diff: growth from b.heap to "
                            "a.heap\\lgrowth: 3,096 B in 5 objects\\l"
                            "focus: /cache/\\l"));
    CU_ASSERT(contains(dot, "cache_store\\ns.c:40\\n3,072 B (99.2%)"));
    CU_ASSERT(!strstr(dot, "__libc_start_call_main")); /* not shown */
    leakgate_util__free(dot);
}

static void
test_profdiff__notes_and_free(void)
{
    struct leakgate_profdiff *d = leakgate_util__calloc(1, sizeof *d);

    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(leakgate_profdiff__note(d, "one %d", 1), 0);
    CU_ASSERT_EQUAL(leakgate_profdiff__note(d, "two"), 0);
    CU_ASSERT_EQUAL(d->nnotes, 2);
    CU_ASSERT_STRING_EQUAL(d->notes[0], "one 1");
    leakgate_util__fail_after(0);
    CU_ASSERT_EQUAL(leakgate_profdiff__note(d, "three"), LEAKGATE_ENOMEM);
    leakgate_util__fail_after(SIZE_MAX);
    CU_ASSERT_EQUAL(d->nnotes, 2);
    leakgate_profdiff__free(d);
    leakgate_profdiff__free(NULL);
}

/* ---- leakgate_diff_profiles() on recorded dumps ------------------------- */

static char *
diff_ok(const char *before,
        const char *after,
        const struct leakgate_diff_options *o)
{
    char *out = NULL;
    size_t len = 0;
    int rc = leakgate_diff_profiles(&out, &len, before, after, o);

    CU_ASSERT_EQUAL(rc, 0);
    if (rc != 0)
        fprintf(stderr, "\n%s\n", leakgate_error_last());
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(len, strlen(out));
    return out;
}

static void
diff_fails(int want,
           const char *detail,
           const char *before,
           const char *after,
           const struct leakgate_diff_options *o)
{
    char *out = (char *)1;
    size_t len = 1;

    CU_ASSERT_EQUAL(leakgate_diff_profiles(&out, &len, before, after, o), want);
    CU_ASSERT_PTR_NULL(out);
    CU_ASSERT_EQUAL(len, 0);
    CU_ASSERT(contains(leakgate_error_last(), detail));
}

/* The executable of the recorded dumps (/tmp/gen_heap) is normally gone:
 * name a missing one so the result does not depend on the machine. */
static struct leakgate_diff_options
opts(void)
{
    struct leakgate_diff_options o = LEAKGATE_DIFF_OPTIONS_INIT;

    o.exe = "/nonexistent/gen_heap";
    return o;
}

static void
test_profdiff__recorded_dumps(void)
{
    struct leakgate_diff_options o = opts();
    char *out;

    out = diff_ok(HEAP "before.heap", HEAP "after.heap", &o);
    CU_ASSERT(contains(out, "leakgate diff: 5,440 B retained in 3 objects by "
                            "3 stacks\n"));
    CU_ASSERT(contains(out, "stack 1 of 3: 4,096 B in 1 object\n"));
    CU_ASSERT(contains(out, "stack 2 of 3: 1,024 B in 1 object\n"));
    CU_ASSERT(contains(out, "160 B in 2 objects freed by 2 stacks"));
    CU_ASSERT(contains(out, "note: --exe /nonexistent/gen_heap is not "
                            "readable\n"));
    /* jemalloc's frames are gone: none of its library's addresses. */
    CU_ASSERT(!strstr(out, "0x7fd8b4aa2630"));
    leakgate_util__free(out);
    o.format = LEAKGATE_DIFF_FORMAT_JSON;
    o.nodefraction = 0.5;
    out = diff_ok(HEAP "before.heap", HEAP "after.heap", &o);
    CU_ASSERT(contains(out, "\"listed_stacks\": 1, \"folded_stacks\": 2, "
                            "\"folded_bytes\": 1344,"));
    leakgate_util__free(out);
    o = opts();
    o.format = LEAKGATE_DIFF_FORMAT_DOT;
    out = diff_ok(HEAP "before.heap", HEAP "after.heap", &o);
    CU_ASSERT(contains(out, "growth: 5,440 B in 3 objects\\l"));
    leakgate_util__free(out);
}

static void
test_profdiff__one_profile(void)
{
    struct leakgate_diff_options o = opts();
    char *out = diff_ok(NULL, HEAP "before.heap", &o);

    CU_ASSERT(contains(out, "leakgate diff: 384 B live in 4 objects by 2 "
                            "stacks\n  profile: " HEAP "before.heap (no base"));
    leakgate_util__free(out);
    out = diff_ok(NULL, HEAP "empty.heap", &o);
    CU_ASSERT(contains(out, "leakgate diff: no stack grew\n"));
    leakgate_util__free(out);
}

/* Focus by a pc's module path does not match: only function and file
 * names do.  With no symbols (the executable is missing) nothing
 * matches. */
static void
test_profdiff__focus(void)
{
    struct leakgate_diff_options o = opts();
    char *out;

    o.focus = "gen_heap";
    out = diff_ok(HEAP "before.heap", HEAP "after.heap", &o);
    CU_ASSERT(contains(out, "leakgate diff: no stack grew\n"));
    CU_ASSERT(contains(out, "focus /gen_heap/: 3 growing stacks (5,440 B) did "
                            "not match\n"));
    leakgate_util__free(out);
}

static int
write_temp(char *path, const char *text)
{
    int fd = mkstemp(path);
    size_t len = strlen(text);

    if (fd < 0)
        return -1;
    if (write(fd, text, len) != (ssize_t)len) {
        close(fd);
        return -1;
    }
    return close(fd);
}

/* One sampled 8 B object at the default rate stands for 65,536.5 of
 * them: 1 / (1 - e^-(8 / 2^19)), as jeprof scales. */
static void
test_profdiff__sampled(void)
{
    char path[] = "/tmp/leakgate-sampled-XXXXXX";
    struct leakgate_diff_options o = opts();
    char *out;

    CU_ASSERT_EQUAL_FATAL(write_temp(path, "heap_v2/524288\n"
                                           "  t*: 1: 8 [0: 0]\n"
                                           "  t0: 1: 8 [0: 0]\n"
                                           "@ 0x1000 0x2000\n"
                                           "  t*: 1: 8 [0: 0]\n"
                                           "  t0: 1: 8 [0: 0]\n"
                                           "@ 0x1000 0x3000\n"
                                           "  t*: 2: 2097152 [0: 0]\n"
                                           "  t0: 2: 2097152 [0: 0]\n"
                                           "\nMAPPED_LIBRARIES:\n"),
                          0);
    out = diff_ok(NULL, path, &o);
    /* 1 MiB objects are sampled almost surely: 1 / (1 - e^-2) = 1.1565,
     * so 2,097,152 B stand for 2,425,393 B. */
    CU_ASSERT(contains(out, "stack 1 of 2: 2,425,393 B in 2 objects\n"));
    CU_ASSERT(contains(out, "stack 2 of 2: 524,292 B in 65,537 objects\n"));
    CU_ASSERT(contains(out, "measured: sampled (heap_v2/524288"));
    leakgate_util__free(out);
    unlink(path);
}

static void
test_profdiff__bad_input(void)
{
    struct leakgate_diff_options o = opts();
    char path[] = "/tmp/leakgate-shifted-XXXXXX";
    char *text = NULL, *moved;
    size_t len;

    diff_fails(LEAKGATE_EFORMAT, "malformed_truncated.heap:", HEAP "after.heap",
               HEAP "malformed_truncated.heap", &o);
    diff_fails(LEAKGATE_EFORMAT,
               "malformed_garbage.heap:", HEAP "malformed_garbage.heap",
               HEAP "after.heap", &o);
    diff_fails(LEAKGATE_EIO, "cannot read /nonexistent.heap: No such file",
               NULL, "/nonexistent.heap", &o);
    o.focus = "(";
    diff_fails(LEAKGATE_EUSAGE, "--focus '(': ", NULL, HEAP "after.heap", &o);
    o = opts();
    o.nodefraction = 1.5;
    diff_fails(LEAKGATE_EUSAGE, "a fraction must be a number from 0 to 1", NULL,
               HEAP "after.heap", &o);
    o = opts();
    o.format = (leakgate_diff_format)9;
    diff_fails(LEAKGATE_EUSAGE, "unknown format 9", NULL, HEAP "after.heap",
               &o);
    o = opts();
    o.version = 99;
    diff_fails(LEAKGATE_EUSAGE, "version 99", NULL, HEAP "after.heap", &o);
    /* Another process: the executable mapped elsewhere. */
    CU_ASSERT_EQUAL_FATAL(
        leakgate_render__read_file(&text, &len, HEAP "after.heap", 1 << 20), 0);
    moved = strstr(text, "562008744000-562008745000");
    CU_ASSERT_PTR_NOT_NULL_FATAL(moved);
    memcpy(moved, "562009744000-562009745000", 25);
    CU_ASSERT_EQUAL_FATAL(write_temp(path, text), 0);
    o = opts();
    diff_fails(LEAKGATE_EUSAGE, "come from different processes",
               HEAP "before.heap", path, &o);
    unlink(path);
    leakgate_util__free(text);
}

static void
test_profdiff__enomem(void)
{
    struct leakgate_diff_options o = opts();
    size_t failures = 0;

    for (size_t n = 0; n < 2000; n++) {
        char *out = NULL;
        size_t len;
        int rc;

        leakgate_util__fail_after(n);
        rc = leakgate_diff_profiles(&out, &len, HEAP "before.heap",
                                    HEAP "after.heap", &o);
        leakgate_util__fail_after(SIZE_MAX);
        if (rc == 0) {
            leakgate_diff_output_free(out);
            break;
        }
        CU_ASSERT(rc == LEAKGATE_ENOMEM || rc == LEAKGATE_ESYMBOL);
        CU_ASSERT_PTR_NULL(out);
        failures++;
    }
    CU_ASSERT(failures > 10);
}

const char *const unit_suite = "profdiff";
const struct unit_case unit_cases[] = {
    {"test_profdiff__text", test_profdiff__text},
    {"test_profdiff__text_variants", test_profdiff__text_variants},
    {"test_profdiff__json", test_profdiff__json},
    {"test_profdiff__dot", test_profdiff__dot},
    {"test_profdiff__notes_and_free", test_profdiff__notes_and_free},
    {"test_profdiff__recorded_dumps", test_profdiff__recorded_dumps},
    {"test_profdiff__one_profile", test_profdiff__one_profile},
    {"test_profdiff__focus", test_profdiff__focus},
    {"test_profdiff__sampled", test_profdiff__sampled},
    {"test_profdiff__bad_input", test_profdiff__bad_input},
    {"test_profdiff__enomem", test_profdiff__enomem},
    {NULL, NULL},
};
