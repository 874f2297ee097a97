/* SPDX-License-Identifier: MIT */
/*
 * Tests of harness/symbolize.c on this very process: return addresses
 * recorded by symbolize_fixture/fixture.c (compiled with -O2 -g, linked
 * into this test), a libc function, dlopen'd copies of the fixture
 * (LEAKGATE_SYMBOLIZE_FIXTURE_SO: stripped; ..._NOARANGES_SO: debug
 * information without .debug_aranges, as clang emits it by default), and
 * bogus addresses; in-process and offline from /proc/self/maps.
 */
#include "symbolize.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "error.h"
#include "symbolize_fixture/fixture.h"
#include "unit.h"
#include "util.h"

#if !defined(LEAKGATE_SYMBOLIZE_FIXTURE_SO) ||                                 \
    !defined(LEAKGATE_SYMBOLIZE_FIXTURE_NOARANGES_SO)
#error "define the paths of the stripped and no-.debug_aranges fixtures"
#endif

#define FIXTURE_FILE "symbolize_fixture/fixture.c"

static bool
ends_with(const char *s, const char *suffix)
{
    size_t n = s ? strlen(s) : 0, m = strlen(suffix);

    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static const char *
self_exe(void)
{
    static char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);

    path[n > 0 ? n : 0] = '\0';
    return path;
}

/* The load bias of the object containing pc, as the dynamic linker has it. */
static uintptr_t
load_bias(uintptr_t pc)
{
    Dl_info info;
    struct link_map *map = NULL;

    CU_ASSERT_FATAL(
        dladdr1((void *)pc, &info, (void **)&map, RTLD_DL_LINKMAP) != 0);
    return map ? (uintptr_t)map->l_addr : 0;
}

/* Symbolize pcs; asserts success. */
static struct leakgate_frame *
frames_of(struct leakgate_symbolizer *sym,
          size_t *n,
          const uintptr_t *pcs,
          size_t npcs)
{
    struct leakgate_frame *frames = NULL;

    CU_ASSERT_EQUAL_FATAL(
        leakgate_symbolize__frames(sym, &frames, n, pcs, npcs), 0);
    return frames;
}

static struct leakgate_symbolizer *
new_self(void)
{
    struct leakgate_symbolizer *sym = NULL;

    CU_ASSERT_EQUAL_FATAL(leakgate_symbolize__new_self(&sym), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sym);
    /* libdw is dlopened; here it is installed: no "no symbols" note
     * (tests/integration/no_libdw.c has the missing case). */
    CU_ASSERT_PTR_NULL(leakgate_symbolize__no_libdw(sym));
    return sym;
}

static void
assert_unknown(const struct leakgate_frame *f, uintptr_t pc)
{
    CU_ASSERT_EQUAL(f->pc, pc);
    CU_ASSERT_PTR_NULL(f->function);
    CU_ASSERT_PTR_NULL(f->file);
    CU_ASSERT_PTR_NULL(f->module);
    CU_ASSERT_EQUAL(f->line, 0);
    CU_ASSERT_EQUAL(f->module_offset, pc);
    CU_ASSERT_FALSE(f->inlined);
}

/* The frames a self symbolizer must give for lg_fixture_plain's site. */
static void
assert_plain(const struct leakgate_frame *f,
             size_t n,
             const struct lg_fixture_site *site)
{
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(f[0].pc, site->pc);
    CU_ASSERT_STRING_EQUAL(f[0].function, "lg_fixture_plain");
    CU_ASSERT(ends_with(f[0].file, FIXTURE_FILE));
    CU_ASSERT_EQUAL(f[0].line, site->line);
    CU_ASSERT_FALSE(f[0].inlined);
}

static void
test_symbolize__plain_frame(void)
{
    struct leakgate_symbolizer *sym = new_self();
    struct lg_fixture_site site;
    struct leakgate_frame *f;
    size_t n;

    lg_fixture_plain(&site);
    f = frames_of(sym, &n, &site.pc, 1);
    assert_plain(f, n, &site);
    CU_ASSERT_STRING_EQUAL(f[0].module, self_exe());
    CU_ASSERT_EQUAL(f[0].module_offset, site.pc - load_bias(site.pc));
    leakgate_util__free(f);
    leakgate_symbolize__free(sym);
}

static void
assert_inlined(const struct leakgate_frame *f,
               size_t n,
               const struct lg_fixture_site *site)
{
    static const char *const names[] = {"fixture_inner", "fixture_middle",
                                        "lg_fixture_inlined"};
    const unsigned int lines[] = {site->line, site->inner_call,
                                  site->middle_call};

    CU_ASSERT_EQUAL_FATAL(n, 3);
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(f[i].pc, site->pc);
        CU_ASSERT_STRING_EQUAL(f[i].function, names[i]);
        CU_ASSERT(ends_with(f[i].file, FIXTURE_FILE));
        CU_ASSERT_EQUAL(f[i].line, lines[i]);
        CU_ASSERT_EQUAL(f[i].inlined, i < 2);
        CU_ASSERT_PTR_EQUAL(f[i].module, f[0].module);
    }
}

static void
test_symbolize__inlined_frames(void)
{
    struct leakgate_symbolizer *sym = new_self();
    struct lg_fixture_site site;
    struct leakgate_frame *f;
    size_t n;

    lg_fixture_inlined(&site);
    CU_ASSERT(site.line != site.inner_call && site.middle_call != 0);
    f = frames_of(sym, &n, &site.pc, 1);
    assert_inlined(f, n, &site);
    CU_ASSERT_STRING_EQUAL(f[0].module, self_exe());
    leakgate_util__free(f);
    leakgate_symbolize__free(sym);
}

/* Several pcs in one call expand in order; strings are interned. */
static void
test_symbolize__many_pcs_interned(void)
{
    struct leakgate_symbolizer *sym = new_self();
    struct lg_fixture_site a, b;
    struct leakgate_frame *f, *g;
    uintptr_t pcs[3];
    size_t n, m;

    lg_fixture_inlined(&a);
    lg_fixture_plain(&b);
    pcs[0] = a.pc;
    pcs[1] = b.pc;
    pcs[2] = 0x10;
    f = frames_of(sym, &n, pcs, 3);
    CU_ASSERT_EQUAL_FATAL(n, 5);
    assert_inlined(f, 3, &a);
    assert_plain(f + 3, 1, &b);
    assert_unknown(&f[4], 0x10);
    g = frames_of(sym, &m, &b.pc, 1);
    CU_ASSERT_EQUAL_FATAL(m, 1);
    CU_ASSERT_PTR_EQUAL(g[0].function, f[3].function);
    CU_ASSERT_PTR_EQUAL(g[0].file, f[3].file);
    CU_ASSERT_PTR_EQUAL(g[0].module, f[0].module);
    leakgate_util__free(g);
    leakgate_util__free(f);
    leakgate_symbolize__free(sym);
}

static void
test_symbolize__libc_module(void)
{
    struct leakgate_symbolizer *sym = new_self();
    void *fn = dlsym(RTLD_DEFAULT, "getpid");
    uintptr_t pc = (uintptr_t)fn + 1;
    char want[PATH_MAX], got[PATH_MAX];
    struct leakgate_frame *f;
    Dl_info info;
    size_t n;

    CU_ASSERT_FATAL(fn && dladdr(fn, &info) && info.dli_fname);
    f = frames_of(sym, &n, &pc, 1);
    CU_ASSERT_FATAL(n >= 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f[n - 1].module);
    CU_ASSERT_PTR_NOT_NULL(realpath(info.dli_fname, want));
    CU_ASSERT_PTR_NOT_NULL(realpath(f[n - 1].module, got));
    CU_ASSERT_STRING_EQUAL(got, want);
    CU_ASSERT(strstr(f[n - 1].module, "libc.so") != NULL);
    CU_ASSERT(f[n - 1].function && strstr(f[n - 1].function, "getpid"));
    CU_ASSERT_EQUAL(f[n - 1].module_offset, pc - load_bias(pc));
    CU_ASSERT_FALSE(f[n - 1].inlined);
    leakgate_util__free(f);
    leakgate_symbolize__free(sym);
}

static void
test_symbolize__unknown_pcs(void)
{
    struct leakgate_symbolizer *sym = new_self();
    const uintptr_t pcs[] = {0, 0x10, UINTPTR_MAX - 16};
    struct leakgate_frame *f;
    size_t n;

    f = frames_of(sym, &n, pcs, 3);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    for (size_t i = 0; i < 3; i++)
        assert_unknown(&f[i], pcs[i]);
    leakgate_util__free(f);
    leakgate_symbolize__free(sym);
}

static void
test_symbolize__no_pcs(void)
{
    struct leakgate_symbolizer *sym = new_self();
    static struct leakgate_frame poison;
    struct leakgate_frame *f = &poison;
    size_t n = 7;

    CU_ASSERT_EQUAL(leakgate_symbolize__frames(sym, &f, &n, NULL, 0), 0);
    CU_ASSERT_PTR_NULL(f);
    CU_ASSERT_EQUAL(n, 0);
    leakgate_symbolize__free(sym);
    leakgate_symbolize__free(NULL);
}

typedef void fixture_fn(struct lg_fixture_site *site);

static fixture_fn *
dlsym_fn(void *handle, const char *name)
{
    fixture_fn *fn = NULL;
    void *p = dlsym(handle, name);

    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    memcpy(&fn, &p, sizeof fn);
    return fn;
}

/* A library dlopen'd after the first report is found by re-reporting; a
 * stripped one gives its dynamic symbol and module + offset only; strings
 * outlive its dlclose. */
static void
test_symbolize__dlopen_stripped(void)
{
    struct leakgate_symbolizer *sym = new_self();
    struct lg_fixture_site site;
    struct leakgate_frame *f, *g;
    char want[PATH_MAX];
    void *handle;
    uintptr_t pcs[2] = {0x10, 0};
    size_t n;

    leakgate_util__free(frames_of(sym, &n, pcs, 1)); /* first report */
    handle = dlopen(LEAKGATE_SYMBOLIZE_FIXTURE_SO, RTLD_NOW | RTLD_LOCAL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(handle);
    dlsym_fn(handle, "lg_fixture_plain")(&site);
    f = frames_of(sym, &n, &site.pc, 1);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_PTR_NOT_NULL(realpath(LEAKGATE_SYMBOLIZE_FIXTURE_SO, want));
    CU_ASSERT_STRING_EQUAL(f[0].module, want);
    CU_ASSERT_STRING_EQUAL(f[0].function, "lg_fixture_plain");
    CU_ASSERT_PTR_NULL(f[0].file);
    CU_ASSERT_EQUAL(f[0].line, 0);
    CU_ASSERT_EQUAL(f[0].module_offset, site.pc - load_bias(site.pc));
    CU_ASSERT_EQUAL(dlclose(handle), 0);
    pcs[1] = site.pc; /* the miss at pcs[0] re-reports without the lib */
    g = frames_of(sym, &n, pcs, 2);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    assert_unknown(&g[1], site.pc);
    CU_ASSERT_STRING_EQUAL(f[0].module, want);
    CU_ASSERT_STRING_EQUAL(f[0].function, "lg_fixture_plain");
    leakgate_util__free(g);
    leakgate_util__free(f);
    leakgate_symbolize__free(sym);
}

/* Debug information without .debug_aranges (clang's default) still gives
 * file:line and inlined frames. */
static void
test_symbolize__dlopen_no_aranges(void)
{
    struct leakgate_symbolizer *sym = new_self();
    struct lg_fixture_site a, b;
    struct leakgate_frame *f;
    char want[PATH_MAX];
    void *handle;
    uintptr_t pcs[2];
    size_t n;

    handle =
        dlopen(LEAKGATE_SYMBOLIZE_FIXTURE_NOARANGES_SO, RTLD_NOW | RTLD_LOCAL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(handle);
    dlsym_fn(handle, "lg_fixture_inlined")(&a);
    dlsym_fn(handle, "lg_fixture_plain")(&b);
    pcs[0] = a.pc;
    pcs[1] = b.pc;
    f = frames_of(sym, &n, pcs, 2);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    assert_inlined(f, 3, &a);
    assert_plain(f + 3, 1, &b);
    CU_ASSERT_PTR_NOT_NULL(
        realpath(LEAKGATE_SYMBOLIZE_FIXTURE_NOARANGES_SO, want));
    CU_ASSERT_STRING_EQUAL(f[3].module, want);
    CU_ASSERT_EQUAL(f[3].module_offset, b.pc - load_bias(b.pc));
    leakgate_util__free(f);
    leakgate_symbolize__free(sym);
    CU_ASSERT_EQUAL(dlclose(handle), 0);
}

/* One more mapping of a loaded object's file, just below it (libdw maps
 * the files it reads): a re-report (a pc in a library dlopen'd since)
 * must not take it for a segment of the loaded object.  /proc/self/maps
 * merges it (the same inode, only anonymous mappings between), and the
 * object's frames lost their names and offsets. */
static void
test_symbolize__self_ignores_other_mappings(void)
{
    struct leakgate_symbolizer *sym = new_self();
    struct lg_fixture_site a, b;
    struct leakgate_frame *f;
    void *ha, *hb, *map = MAP_FAILED;
    uintptr_t pcs[2], want;
    const char *fn;
    Dl_info info;
    size_t n;
    int fd;

    ha = dlopen(LEAKGATE_SYMBOLIZE_FIXTURE_NOARANGES_SO, RTLD_NOW | RTLD_LOCAL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ha);
    dlsym_fn(ha, "lg_fixture_plain")(&a);
    f = frames_of(sym, &n, &a.pc, 1); /* reported with it */
    CU_ASSERT_EQUAL_FATAL(n, 1);
    want = a.pc - load_bias(a.pc);
    CU_ASSERT_EQUAL(f[0].module_offset, want);
    fn = f[0].function;
    leakgate_util__free(f);
    CU_ASSERT_FATAL(dladdr((void *)a.pc, &info) && info.dli_fbase);
    fd = open(LEAKGATE_SYMBOLIZE_FIXTURE_NOARANGES_SO, O_RDONLY | O_CLOEXEC);
    CU_ASSERT_FATAL(fd >= 0);
    for (uintptr_t k = 1; map == MAP_FAILED && k <= 64; k++)
        map = mmap((char *)info.dli_fbase - k * 4096, 4096, PROT_READ,
                   MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
    close(fd);
    CU_ASSERT_FATAL(map != MAP_FAILED);
    hb = dlopen(LEAKGATE_SYMBOLIZE_FIXTURE_SO, RTLD_NOW | RTLD_LOCAL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(hb);
    dlsym_fn(hb, "lg_fixture_plain")(&b);
    pcs[0] = b.pc; /* in no module yet: reported again */
    pcs[1] = a.pc;
    f = frames_of(sym, &n, pcs, 2);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(f[1].module_offset, want);
    CU_ASSERT_STRING_EQUAL(f[1].function ? f[1].function : "-", fn ? fn : "-");
    leakgate_util__free(f);
    leakgate_symbolize__free(sym);
    CU_ASSERT_EQUAL(munmap(map, 4096), 0);
    CU_ASSERT_EQUAL(dlclose(hb), 0);
    CU_ASSERT_EQUAL(dlclose(ha), 0);
}

/* The GNU build-id of the executable, read from its PT_NOTE segments. */
static int
build_id_cb(struct dl_phdr_info *info, size_t size, void *payload)
{
    char *hex = payload;

    (void)size;
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const unsigned char *p, *end;

        if (ph->p_type != PT_NOTE)
            continue;
        p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
            const unsigned char *desc =
                p + sizeof *nh + ((nh->n_namesz + 3) & ~3u);

            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(p + sizeof *nh, "GNU", 4) == 0) {
                for (size_t k = 0; k < nh->n_descsz && k < 64; k++)
                    snprintf(hex + 2 * k, 3, "%02x", desc[k]);
                return 1;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    return 1; /* only the first object: the executable */
}

static void
test_symbolize__main_module_self(void)
{
    struct leakgate_symbolizer *sym = new_self();
    const char *path = NULL, *id = NULL, *path2, *id2;
    char want[129] = "";

    dl_iterate_phdr(build_id_cb, want);
    CU_ASSERT_FATAL(want[0] != '\0');
    CU_ASSERT_EQUAL_FATAL(leakgate_symbolize__main_module(sym, &path, &id), 0);
    CU_ASSERT_STRING_EQUAL(path, self_exe());
    CU_ASSERT_STRING_EQUAL(id, want);
    CU_ASSERT_EQUAL(leakgate_symbolize__main_module(sym, &path2, &id2), 0);
    CU_ASSERT_PTR_EQUAL(path2, path);
    CU_ASSERT_PTR_EQUAL(id2, id);
    leakgate_symbolize__free(sym);
}

/* This process's /proc/self/maps as mappings (paths point into *text,
 * which the caller frees with leakgate_util__free). */
static struct leakgate_heap_mapping *
read_self_maps(size_t *n, char **text)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    FILE *fp = fopen("/proc/self/maps", "r");
    struct leakgate_heap_mapping *maps;
    char chunk[4096], *line, *eol;
    size_t got;

    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    for (;;) {
        got = fread(chunk, 1, sizeof chunk, fp);
        if (got == 0)
            break;
        leakgate_buf__put(&b, chunk, got);
    }
    fclose(fp);
    *text = leakgate_buf__take(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*text);
    maps = calloc(strlen(*text) / 20 + 1, sizeof *maps);
    CU_ASSERT_PTR_NOT_NULL_FATAL(maps);
    *n = 0;
    for (line = *text; *line; line = eol + 1) {
        struct leakgate_heap_mapping *m = &maps[(*n)++];
        unsigned long start, end, off;
        int path_at = 0;

        eol = strchr(line, '\n');
        CU_ASSERT_PTR_NOT_NULL_FATAL(eol);
        *eol = '\0';
        CU_ASSERT_FATAL(sscanf(line, "%lx-%lx %4s %lx %*s %*s %n", &start, &end,
                               m->perms, &off, &path_at) == 4);
        m->start = start;
        m->end = end;
        m->offset = off;
        m->path = line + path_at;
    }
    return maps;
}

static void
assert_same_frames(const struct leakgate_frame *a,
                   size_t na,
                   const struct leakgate_frame *b,
                   size_t nb)
{
    CU_ASSERT_EQUAL_FATAL(na, nb);
    for (size_t i = 0; i < na; i++) {
        CU_ASSERT_STRING_EQUAL(a[i].function, b[i].function);
        CU_ASSERT_STRING_EQUAL(a[i].file ? a[i].file : "-",
                               b[i].file ? b[i].file : "-");
        CU_ASSERT_EQUAL(a[i].line, b[i].line);
        CU_ASSERT_EQUAL(a[i].module_offset, b[i].module_offset);
        CU_ASSERT_EQUAL(a[i].inlined, b[i].inlined);
    }
}

/* Offline symbolization from maps agrees with in-process. */
static void
check_maps_same_as_self(const struct leakgate_heap_mapping *maps, size_t nmaps)
{
    struct leakgate_symbolizer *self = new_self(), *off = NULL;
    struct lg_fixture_site a, b;
    struct leakgate_frame *fs, *fo;
    const char *path, *id, *path2, *id2;
    uintptr_t pcs[3];
    size_t ns, no;

    lg_fixture_inlined(&a);
    lg_fixture_plain(&b);
    pcs[0] = a.pc;
    pcs[1] = b.pc;
    pcs[2] = (uintptr_t)dlsym(RTLD_DEFAULT, "getpid") + 1;
    CU_ASSERT_EQUAL_FATAL(leakgate_symbolize__new_maps(&off, maps, nmaps, NULL),
                          0);
    fs = frames_of(self, &ns, pcs, 3);
    fo = frames_of(off, &no, pcs, 3);
    assert_same_frames(fs, ns, fo, no);
    assert_inlined(fo, 3, &a);
    for (size_t i = 0; i < no; i++)
        CU_ASSERT_STRING_EQUAL(fo[i].module, fs[i].module);
    CU_ASSERT_EQUAL(leakgate_symbolize__main_module(self, &path, &id), 0);
    CU_ASSERT_EQUAL(leakgate_symbolize__main_module(off, &path2, &id2), 0);
    CU_ASSERT_STRING_EQUAL(path2, path);
    CU_ASSERT_STRING_EQUAL(id2, id);
    leakgate_util__free(fs);
    leakgate_util__free(fo);
    leakgate_symbolize__free(off);
    leakgate_symbolize__free(self);
}

/* All of /proc/self/maps, then only its executable mappings (whose file
 * offsets are not 0, so the load bias must subtract them). */
static void
test_symbolize__maps_same_as_self(void)
{
    struct leakgate_heap_mapping *maps;
    size_t nmaps, nexec = 0;
    bool offset_seen = false;
    char *text;

    maps = read_self_maps(&nmaps, &text);
    check_maps_same_as_self(maps, nmaps);
    for (size_t i = 0; i < nmaps; i++) {
        if (strcmp(maps[i].perms, "r-xp") == 0) {
            offset_seen = offset_seen || maps[i].offset != 0;
            maps[nexec++] = maps[i];
        }
    }
    CU_ASSERT(offset_seen);
    check_maps_same_as_self(maps, nexec);
    free(maps);
    leakgate_util__free(text);
}

/* `exe` replaces the path of the executable's mappings. */
static void
test_symbolize__maps_exe_replaces(void)
{
    struct leakgate_symbolizer *off = NULL;
    struct lg_fixture_site b;
    struct leakgate_frame *f;
    struct leakgate_heap_mapping *maps;
    const char *path, *id;
    size_t nmaps, n;
    char *text;

    lg_fixture_plain(&b);
    maps = read_self_maps(&nmaps, &text);
    CU_ASSERT_EQUAL_FATAL(
        leakgate_symbolize__new_maps(&off, maps, nmaps, "/proc/self/exe"), 0);
    f = frames_of(off, &n, &b.pc, 1);
    assert_plain(f, n, &b);
    CU_ASSERT_STRING_EQUAL(f[0].module, "/proc/self/exe");
    CU_ASSERT_EQUAL(leakgate_symbolize__main_module(off, &path, &id), 0);
    CU_ASSERT_STRING_EQUAL(path, "/proc/self/exe");
    CU_ASSERT(strlen(id) >= 2);
    leakgate_util__free(f);
    leakgate_symbolize__free(off);
    free(maps);
    leakgate_util__free(text);
}

/* Pseudo, anonymous, missing, device and non-ELF mappings are skipped. */
static void
test_symbolize__maps_skips(void)
{
    const struct leakgate_heap_mapping maps[] = {
        {0x1000, 0x2000, 0, "r-xp", "[vdso]"},
        {0x2000, 0x3000, 0, "rw-p", "[heap]"},
        {0x3000, 0x4000, 0, "rw-p", ""},
        {0x4000, 0x5000, 0, "r-xp", "/nonexistent/leakgate/prog"},
        {0x5000, 0x6000, 0, "r--p", "/dev/zero"},
        {0x6000, 0x7000, 0, "r--p", "/proc/self/maps"},
        {0x7000, 0x8000, 0, "r-xp", "/nonexistent/libx.so.1"},
    };
    const uintptr_t pcs[] = {0x1800, 0x2800, 0x3800, 0x4800,
                             0x5800, 0x6800, 0x7800};
    struct leakgate_symbolizer *off = NULL;
    struct leakgate_frame *f;
    const char *path, *id;
    size_t n;

    CU_ASSERT_EQUAL_FATAL(leakgate_symbolize__new_maps(&off, maps, 7, NULL), 0);
    f = frames_of(off, &n, pcs, 7);
    CU_ASSERT_EQUAL_FATAL(n, 7);
    for (size_t i = 0; i < 7; i++)
        assert_unknown(&f[i], pcs[i]);
    CU_ASSERT_EQUAL(leakgate_symbolize__main_module(off, &path, &id),
                    LEAKGATE_ESYMBOL);
    leakgate_util__free(f);
    leakgate_symbolize__free(off);
    CU_ASSERT_EQUAL_FATAL(leakgate_symbolize__new_maps(&off, NULL, 0, NULL), 0);
    CU_ASSERT_EQUAL(leakgate_symbolize__main_module(off, &path, &id),
                    LEAKGATE_ESYMBOL);
    leakgate_symbolize__free(off);
}

/* The executable is the lowest mapping whose file is not a "*.so*", even
 * when a library is mapped below it. */
static void
test_symbolize__maps_main_rule(void)
{
    Dl_info info;
    char libc[PATH_MAX];
    struct leakgate_heap_mapping maps[] = {
        {0x10000000, 0x10001000, 0, "r--p", libc},
        {0x30000000, 0x30001000, 0, "r--p", self_exe()},
        {0x50000000, 0x50001000, 0, "r--p", "/nonexistent/prog"},
    };
    struct leakgate_symbolizer *off = NULL, *self = new_self();
    const char *path, *id, *want_path, *want_id;

    CU_ASSERT_FATAL(dladdr(dlsym(RTLD_DEFAULT, "getpid"), &info) != 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(info.dli_fname, libc));
    CU_ASSERT_EQUAL_FATAL(leakgate_symbolize__new_maps(&off, maps, 3, NULL), 0);
    CU_ASSERT_EQUAL(leakgate_symbolize__main_module(off, &path, &id), 0);
    CU_ASSERT_EQUAL(leakgate_symbolize__main_module(self, &want_path, &want_id),
                    0);
    CU_ASSERT_STRING_EQUAL(path, want_path);
    CU_ASSERT_STRING_EQUAL(id, want_id);
    leakgate_symbolize__free(off);
    leakgate_symbolize__free(self);
}

/* C++ names are demangled when libstdc++ is in the process. */
static void
test_symbolize__demangle(void)
{
    struct leakgate_symbolizer *sym;
    void *fn = dlsym(RTLD_DEFAULT, "_Znwm");
    uintptr_t pc = (uintptr_t)fn + 1;
    struct leakgate_frame *f;
    size_t n;

    if (!fn || !dlsym(RTLD_DEFAULT, "__cxa_demangle"))
        return; /* no C++ runtime in this process: nothing to demangle */
    sym = new_self();
    f = frames_of(sym, &n, &pc, 1);
    CU_ASSERT_FATAL(n >= 1);
    CU_ASSERT_STRING_EQUAL(f[n - 1].function, "operator new(unsigned long)");
    leakgate_util__free(f);
    leakgate_symbolize__free(sym);
}

/* Run new + frames + main_module with the k-th allocation failing. */
static int
run_failing_at(size_t k,
               const struct leakgate_heap_mapping *maps,
               size_t nmaps,
               const uintptr_t *pcs,
               size_t npcs)
{
    struct leakgate_symbolizer *sym = NULL;
    struct leakgate_frame *f = NULL;
    const char *path, *id;
    size_t n = 0;
    int rc;

    leakgate_error__clear();
    leakgate_util__fail_after(k);
    rc = maps ? leakgate_symbolize__new_maps(&sym, maps, nmaps, NULL)
              : leakgate_symbolize__new_self(&sym);
    if (rc == 0)
        rc = leakgate_symbolize__frames(sym, &f, &n, pcs, npcs);
    if (rc == 0) {
        CU_ASSERT_EQUAL(n, 5);
        rc = leakgate_symbolize__main_module(sym, &path, &id);
        rc = rc == LEAKGATE_ESYMBOL ? LEAKGATE_ENOMEM : rc;
    } else {
        CU_ASSERT_PTR_NULL(f);
    }
    leakgate_util__fail_after(SIZE_MAX);
    CU_ASSERT(rc == 0 || rc == LEAKGATE_ENOMEM);
    CU_ASSERT(rc == 0 || leakgate_error_last()[0] != '\0');
    leakgate_util__free(f);
    leakgate_symbolize__free(sym);
    return rc;
}

static void
test_symbolize__enomem(void)
{
    struct lg_fixture_site a, b;
    struct leakgate_heap_mapping *maps;
    uintptr_t pcs[3];
    size_t nmaps, k;
    char *text;

    lg_fixture_inlined(&a);
    lg_fixture_plain(&b);
    pcs[0] = a.pc;
    pcs[1] = b.pc;
    pcs[2] = 0x10;
    for (k = 0; k < 200; k++) {
        if (run_failing_at(k, NULL, 0, pcs, 3) == 0)
            break;
    }
    CU_ASSERT(k > 3 && k < 200);
    maps = read_self_maps(&nmaps, &text);
    for (k = 0; k < 200; k++) {
        if (run_failing_at(k, maps, nmaps, pcs, 3) == 0)
            break;
    }
    CU_ASSERT(k > 3 && k < 200);
    free(maps);
    leakgate_util__free(text);
}

const char *const unit_suite = "symbolize";
const struct unit_case unit_cases[] = {
    {"test_symbolize__plain_frame", test_symbolize__plain_frame},
    {"test_symbolize__inlined_frames", test_symbolize__inlined_frames},
    {"test_symbolize__many_pcs_interned", test_symbolize__many_pcs_interned},
    {"test_symbolize__libc_module", test_symbolize__libc_module},
    {"test_symbolize__unknown_pcs", test_symbolize__unknown_pcs},
    {"test_symbolize__no_pcs", test_symbolize__no_pcs},
    {"test_symbolize__dlopen_stripped", test_symbolize__dlopen_stripped},
    {"test_symbolize__dlopen_no_aranges", test_symbolize__dlopen_no_aranges},
    {"test_symbolize__self_ignores_other_mappings",
     test_symbolize__self_ignores_other_mappings},
    {"test_symbolize__main_module_self", test_symbolize__main_module_self},
    {"test_symbolize__maps_same_as_self", test_symbolize__maps_same_as_self},
    {"test_symbolize__maps_exe_replaces", test_symbolize__maps_exe_replaces},
    {"test_symbolize__maps_skips", test_symbolize__maps_skips},
    {"test_symbolize__maps_main_rule", test_symbolize__maps_main_rule},
    {"test_symbolize__demangle", test_symbolize__demangle},
    {"test_symbolize__enomem", test_symbolize__enomem},
    {NULL, NULL},
};
