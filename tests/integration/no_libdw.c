/* SPDX-License-Identifier: MIT */
/*
 * no_libdw: leakgate without libdw at run time.  symbolize.c dlopens libdw
 * (libdw.so.1) the first time it symbolizes; here it is made to look for a
 * library that does not exist (leakgate_symbolize__libdw_soname, set before
 * anything symbolizes), as on a machine without libdw1.  Checks that:
 *   - a leaking exact window still fails with its report, the report says
 *     there are no symbols and names the library it could not load, and
 *     the frames are module+offset (no crash, no exit 3);
 *   - the symbolizer alone (this process and offline from mappings) gives
 *     module, offset and exported function names, no file:line, and the
 *     executable's path and build-id.
 * Prints "N checks, N failed"; exit 0 when every check passes.
 */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leakgate/leakgate.h"
#include "symbolize.h"
#include "util.h"

#define MISSING "libleakgate-no-such-libdw.so.1"

static void *volatile sink;
static size_t checks, failures;

#define CHECK(cond)                                                            \
    do {                                                                       \
        checks++;                                                              \
        if (!(cond)) {                                                         \
            failures++;                                                        \
            fprintf(stderr, "no_libdw.c:%d: check failed: %s\n", __LINE__,     \
                    #cond);                                                    \
        }                                                                      \
    } while (0)

__attribute__((noinline)) static void
leak(void)
{
    sink = malloc(48);
}

/* A leaking exact window: FAIL, with a report that says why it has no
 * symbols and shows the leak's frames as module+offset. */
static void
check_gate(void)
{
    struct leakgate_gate_options opts = LEAKGATE_GATE_OPTIONS_INIT;
    const leakgate_verdict *v = NULL;
    const char *report;
    leakgate_gate *gate = NULL;

    opts.exact = 1;
    CHECK(leakgate_gate_new(&gate, &opts) == 0);
    if (!gate) {
        fprintf(stderr, "no_libdw: %s\n", leakgate_error_last());
        failures++;
        return;
    }
    CHECK(leakgate_gate_begin(gate, "nolibdw", "leak") == 0);
    leak();
    CHECK(leakgate_gate_end(gate, 1, &v) == 0);
    CHECK(v && leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL);
    report = v ? leakgate_verdict_report(v) : NULL;
    CHECK(report && strstr(report, "no symbols: " MISSING
                                   " could not be loaded") != NULL);
    CHECK(report && strstr(report, "no_libdw+0x") != NULL);
    if (report)
        fputs(report, stderr);
    leakgate_gate_free(gate);
    sink = NULL;
}

static uintptr_t
load_bias(const void *addr)
{
    struct link_map *map = NULL;
    Dl_info info;

    if (!dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return 0;
    return (uintptr_t)map->l_addr;
}

/* This process: an address in the executable, one in libc (an exported
 * function: named from the dynamic symbol table), the executable's path
 * and build-id. */
static void
check_self(void)
{
    struct leakgate_symbolizer *sym = NULL;
    struct leakgate_frame *f = NULL;
    size_t n = 0;
    uintptr_t pcs[3];
    const char *path = NULL, *build_id = NULL;
    void (*fn)(void) = leak;
    void *qsort_addr = dlsym(RTLD_DEFAULT, "qsort");

    memcpy(&pcs[0], &fn, sizeof pcs[0]);
    pcs[0] += 1;
    pcs[1] = (uintptr_t)qsort_addr + 1;
    pcs[2] = 1; /* in no module */
    CHECK(leakgate_symbolize__new_self(&sym) == 0);
    if (!sym)
        return;
    CHECK(leakgate_symbolize__no_libdw(sym) &&
          strstr(leakgate_symbolize__no_libdw(sym), MISSING) != NULL);
    CHECK(leakgate_symbolize__frames(sym, &f, &n, pcs, 3) == 0);
    CHECK(n == 3);
    if (n == 3) {
        CHECK(f[0].module && strstr(f[0].module, "no_libdw") != NULL);
        CHECK(f[0].module_offset == pcs[0] - load_bias((void *)pcs[0]));
        CHECK(f[0].file == NULL && f[0].line == 0 && !f[0].inlined);
        CHECK(f[1].module && strstr(f[1].module, "libc.so") != NULL);
        CHECK(f[1].function && strcmp(f[1].function, "qsort") == 0);
        CHECK(f[2].module == NULL && f[2].function == NULL);
    }
    leakgate_util__free(f);
    CHECK(leakgate_symbolize__main_module(sym, &path, &build_id) == 0);
    CHECK(path && strstr(path, "no_libdw") != NULL);
    /* gcc and clang on Debian link with --build-id: 20 bytes, 40 digits */
    CHECK(build_id && strlen(build_id) == 40);
    leakgate_symbolize__free(sym);
}

/* Offline (`leakgate diff`): module and offset from a profile's mappings. */
static void
check_maps(void)
{
    static const struct leakgate_heap_mapping maps[] = {
        {0x400000, 0x401000, 0, "r--p", "/opt/app/bin/server"},
        {0x401000, 0x405000, 0x1000, "r-xp", "/opt/app/bin/server"},
        {0x7f0000001000, 0x7f0000009000, 0x1000, "r-xp", "/lib/libx.so.1"},
        {0x7f0000000000, 0x7f0000001000, 0, "r--p", "/lib/libx.so.1"},
    };
    struct leakgate_symbolizer *sym = NULL;
    struct leakgate_frame *f = NULL;
    uintptr_t pcs[] = {0x401234, 0x7f0000002001, 0x10};
    const char *path = NULL, *build_id = NULL;
    size_t n = 0;

    CHECK(leakgate_symbolize__new_maps(&sym, maps, 4, NULL) == 0);
    if (!sym)
        return;
    CHECK(leakgate_symbolize__frames(sym, &f, &n, pcs, 3) == 0);
    CHECK(n == 3);
    if (n == 3) {
        CHECK(f[0].module && strcmp(f[0].module, "/opt/app/bin/server") == 0);
        CHECK(f[0].module_offset == 0x1234);
        CHECK(f[1].module && strcmp(f[1].module, "/lib/libx.so.1") == 0);
        CHECK(f[1].module_offset == 0x2001);
        CHECK(f[2].module == NULL);
    }
    leakgate_util__free(f);
    CHECK(leakgate_symbolize__main_module(sym, &path, &build_id) == 0);
    CHECK(path && strcmp(path, "/opt/app/bin/server") == 0);
    leakgate_symbolize__free(sym);
}

int
main(void)
{
    /* Before anything symbolizes: libdw is loaded once per process. */
    leakgate_symbolize__libdw_soname = MISSING;
    check_gate();
    check_self();
    check_maps();
    printf("%zu checks, %zu failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
