/* SPDX-License-Identifier: MIT */
/*
 * wrapper_suite: a project with its own allocation wrapper (xmalloc)
 * under every stack, gated with the public core API, for the rules
 * leakgate writes (issue 14): a rule written for one path must not cover
 * a new path through the same wrapper, a helper shared by two paths, a
 * stack nested in another, an inlined helper, or a line-number change
 * (built twice, the second copy with every line moved: SHIFT_LINES).
 *   WRAP_NEW=1     pool/paths also leaks through pool_grow
 *   WRAP_B=1       pool/shared also leaks through path_b
 *   SHADOW_GROW=1  pool/shadow's nested stack keeps 96 B instead of 48
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leakgate/leakgate.h"
#include "leakgate/thresholds.h"

#ifdef SHIFT_LINES
#line 5000
#endif

void *xmalloc(size_t n);
void *pool_new(void);
void *pool_grow(void);
void *make_string(void);
void *path_a(void);
void *path_b(void);
void *resource_init(void);
void *new_string(void);
void *many_alloc(void);

static void *kept[64];
static size_t nkept;

static void
keep(void *p)
{
    if (nkept < sizeof kept / sizeof kept[0])
        kept[nkept++] = p;
}

static int
on(const char *name)
{
    const char *e = getenv(name);

    return e && strcmp(e, "1") == 0;
}

__attribute__((noinline)) void *
xmalloc(size_t n)
{
    void *p = malloc(n);

    if (!p)
        abort();
    return p;
}

__attribute__((noinline)) void *
pool_new(void)
{
    return xmalloc(8192);
}

__attribute__((noinline)) void *
pool_grow(void)
{
    return xmalloc(40);
}

__attribute__((noinline)) void *
make_string(void)
{
    return xmalloc(24);
}

__attribute__((noinline)) void *
path_a(void)
{
    return make_string();
}

__attribute__((noinline)) void *
path_b(void)
{
    return make_string();
}

__attribute__((noinline)) void *
new_string(void)
{
    return xmalloc(on("SHADOW_GROW") ? 96 : 48);
}

__attribute__((noinline)) void *
resource_init(void)
{
    keep(new_string());
    return xmalloc(512);
}

static inline __attribute__((always_inline)) void *
inl_helper(void)
{
    return xmalloc(32);
}

__attribute__((noinline)) void *
many_alloc(void)
{
    return xmalloc(16);
}

static void
test_paths(void)
{
    keep(pool_new());
    if (on("WRAP_NEW"))
        keep(pool_grow());
}

static void
test_shared(void)
{
    keep(path_a());
    if (on("WRAP_B"))
        keep(path_b());
}

static void
test_shadow(void)
{
    keep(resource_init());
}

static void
test_inline(void)
{
    keep(inl_helper());
}

static void
test_many(void)
{
    keep(many_alloc());
    keep(many_alloc());
    keep(many_alloc());
}

static const struct {
    const char *test;
    void (*fn)(void);
} tests[] = {
    {"paths", test_paths},   {"shared", test_shared}, {"shadow", test_shadow},
    {"inline", test_inline}, {"many", test_many},
};

int
main(int argc, char **argv)
{
    struct leakgate_gate_options opts;
    struct leakgate_thresholds_options t = LEAKGATE_THRESHOLDS_OPTIONS_INIT;
    leakgate_thresholds_outcome *out = NULL;
    leakgate_gate *gate = NULL;
    int status = 0;

    if (leakgate_gate_options_parse(&opts, argc, argv) < 0 ||
        leakgate_gate_new(&gate, &opts) < 0) {
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
        return 2;
    }
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        const leakgate_verdict *v = NULL;

        if (!leakgate_gate_selected(gate, "pool", tests[i].test))
            continue;
        if (leakgate_gate_begin(gate, "pool", tests[i].test) < 0)
            return 3;
        tests[i].fn();
        if (leakgate_gate_end(gate, 1, &v) < 0)
            return 3;
        leakgate_gate_print_verdict(gate, v, stderr);
    }
    /* The run's one thresholds document, after the last verdict. */
    if (*leakgate_gate_scope_hints(gate))
        fprintf(stderr, "leakgate: %s", leakgate_gate_scope_hints(gate));
    if (leakgate_gate_write_results(gate) < 0)
        return 3;
    status = leakgate_gate_failures(gate) > 0;
    if (opts.update_thresholds) {
        t.accept = 1;
        t.write = 1;
        if (leakgate_gate_update_thresholds(gate, &t, &out) < 0) {
            fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
            return 2;
        }
        fputs(leakgate_thresholds_outcome_text(out), stderr);
        leakgate_thresholds_outcome_free(out);
        status = 0;
    }
    leakgate_gate_free(gate);
    return status;
}
