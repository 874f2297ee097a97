/* SPDX-License-Identifier: MIT */
/*
 * symbolize: return addresses to frames with elfutils' libdwfl.  Adapter
 * stage 3 (snapshot -> diff -> symbolize -> policy -> report); the only
 * file that includes elfutils headers.
 *
 * Two sources of modules: this process (the dynamic linker's objects over
 * the pages they span, dwfl_report_module each, reported on first use and
 * once more per call when a pc lies in no module, so libraries dlopen'd
 * later are found) or the MAPPED_LIBRARIES of a heap profile
 * (dwfl_report_elf per distinct file, offline).
 *
 * Per pc, the lookup address is pc - 1: a return address points after the
 * call, whose line and inline chain are what the user wants to see.  The
 * chain comes from dwarf_getscopes_die() on the innermost scope, because
 * dwarf_getscopes() continues into the abstract origin of an inlined
 * subroutine and so loses its concrete callers.
 *
 * Invariant: every string a frame points to is interned in the
 * symbolizer's pool (libdwfl frees its own strings when a module
 * disappears on re-report), so it stays valid until
 * leakgate_symbolize__free().
 */
#include "symbolize.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "error.h"
#include "heap.h"
#include "util.h"

/* The signature of __cxa_demangle (libstdc++), looked up at run time. */
typedef char *
demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

/* An open-addressing hash set of owned strings. */
struct pool {
    char **slots; /* cap entries, NULL = empty */
    size_t cap;   /* a power of two, or 0 */
    size_t used;  /* occupied slots */
};

/* The frames of one leakgate_symbolize__frames() call. */
struct frame_vec {
    struct leakgate_frame *v;
    size_t n;   /* frames used */
    size_t cap; /* frames allocated */
};

/* One cached pc: its frames are cached.v[first, first + count). */
struct cache_slot {
    uintptr_t pc; /* 0 = empty (pc 0 is never cached) */
    size_t first;
    size_t count;
};

/* A file mapping of a heap profile, for symbolizing without libdw. */
struct plain_map {
    uintptr_t start, end; /* [start, end) */
    uintptr_t bias;       /* load bias of the file: its lowest mapping's
                             start minus that mapping's file offset */
    const char *path;     /* interned */
};

struct leakgate_symbolizer {
    Dwfl *dwfl;             /* NULL when libdw could not be loaded */
    const char *no_libdw;   /* why not (static text), NULL when loaded */
    struct plain_map *maps; /* offline without libdw: file mappings */
    size_t nmaps;
    bool is_self;          /* this process: (re-)report on demand */
    bool reported;         /* the first self report has run */
    uintptr_t main_addr;   /* an address inside the executable, 0 = none */
    struct pool pool;      /* every string handed out */
    demangle_fn *demangle; /* NULL when libstdc++ is not loaded */
    const char *main_path; /* interned by main_module(), NULL before */
    const char *main_build_id;
    struct frame_vec cached;  /* frames of every cached pc, in order */
    struct cache_slot *slots; /* open addressing: pc -> frames in cached */
    size_t nslots;            /* a power of two, 0 before the first use */
    size_t nused;
};

/*
 * libdw is loaded with dlopen(3) the first time a symbolizer is made, not
 * linked: a gated process that never symbolizes (every test passes the
 * fast pass, the common case under ctest's one process per test) does not
 * map libdw, libelf, libz, liblzma and libbz2 nor pay their relocations
 * (docs/internals/performance-record.md, "One process").  Every libdw function
 * this file calls goes through `dw`; calling one directly would be an undefined
 * reference at link time, since nothing links libdw.
 */
#define LIBDW_FUNCTIONS(X)                                                     \
    X(dwarf_attr)                                                              \
    X(dwarf_attr_integrate)                                                    \
    X(dwarf_diecu)                                                             \
    X(dwarf_filesrc)                                                           \
    X(dwarf_formstring)                                                        \
    X(dwarf_formudata)                                                         \
    X(dwarf_getscopes)                                                         \
    X(dwarf_getscopes_die)                                                     \
    X(dwarf_getsrc_die)                                                        \
    X(dwarf_getsrcfiles)                                                       \
    X(dwarf_haspc)                                                             \
    X(dwarf_lineno)                                                            \
    X(dwarf_linesrc)                                                           \
    X(dwarf_tag)                                                               \
    X(dwfl_addrmodule)                                                         \
    X(dwfl_begin)                                                              \
    X(dwfl_build_id_find_elf)                                                  \
    X(dwfl_end)                                                                \
    X(dwfl_errmsg)                                                             \
    X(dwfl_linux_proc_find_elf)                                                \
    X(dwfl_module_addrdie)                                                     \
    X(dwfl_module_addrinfo)                                                    \
    X(dwfl_module_build_id)                                                    \
    X(dwfl_module_getelf)                                                      \
    X(dwfl_module_info)                                                        \
    X(dwfl_module_nextcu)                                                      \
    X(dwfl_offline_section_address)                                            \
    X(dwfl_report_begin)                                                       \
    X(dwfl_report_elf)                                                         \
    X(dwfl_report_end)                                                         \
    X(dwfl_report_module)                                                      \
    X(dwfl_standard_find_debuginfo)

/* One pointer per function, typed from elfutils' own declarations. */
static struct {
#define LIBDW_POINTER(name) __typeof__(name) *name;
    LIBDW_FUNCTIONS(LIBDW_POINTER)
#undef LIBDW_POINTER
} dw;

#ifndef LEAKGATE_LIBDW_SONAME
#define LEAKGATE_LIBDW_SONAME "libdw.so.1"
#endif

const char *leakgate_symbolize__libdw_soname = LEAKGATE_LIBDW_SONAME;

static pthread_once_t libdw_once = PTHREAD_ONCE_INIT;
static bool libdw_loaded;   /* every pointer in dw is set */
static char libdw_why[512]; /* why not, when !libdw_loaded */
static Dwfl_Callbacks self_callbacks, offline_callbacks;

/* Resolve one function of h into *slot (a function pointer, converted
 * from dlsym's object pointer with memcpy, as ISO C has no cast for it).
 * Returns false when h lacks it. */
static bool
resolve(void *h, const char *name, void *slot, size_t size)
{
    void *fn = dlsym(h, name);

    if (!fn || size != sizeof fn)
        return false;
    memcpy(slot, &fn, sizeof fn);
    return true;
}

/* pthread_once routine: dlopen libdw (RTLD_LOCAL: its symbols stay out of
 * the global scope; never closed, its strings live in frames) and resolve
 * every function, or say why not in libdw_why. */
static void
load_libdw(void)
{
    const char *soname = leakgate_symbolize__libdw_soname;
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    const char *missing = NULL;

    if (!h) {
        const char *err = dlerror();
        size_t n = strlen(soname);

        /* dlerror() says "<soname>: <why>": name the library once. */
        if (err && strncmp(err, soname, n) == 0 &&
            strncmp(err + n, ": ", 2) == 0)
            err += n + 2;
        snprintf(libdw_why, sizeof libdw_why, "%s could not be loaded (%s)",
                 soname, err ? err : "dlopen failed");
        return;
    }
#define LIBDW_RESOLVE(name)                                                    \
    if (!missing && !resolve(h, #name, &dw.name, sizeof dw.name))              \
        missing = #name;
    LIBDW_FUNCTIONS(LIBDW_RESOLVE)
#undef LIBDW_RESOLVE
    if (missing) {
        snprintf(libdw_why, sizeof libdw_why, "%s has no function %s", soname,
                 missing);
        return;
    }
    self_callbacks.find_elf = dw.dwfl_linux_proc_find_elf;
    self_callbacks.find_debuginfo = dw.dwfl_standard_find_debuginfo;
    offline_callbacks.find_elf = dw.dwfl_build_id_find_elf;
    offline_callbacks.find_debuginfo = dw.dwfl_standard_find_debuginfo;
    offline_callbacks.section_address = dw.dwfl_offline_section_address;
    libdw_loaded = true;
}

/* True when libdw is usable (loading it on the first call). */
static bool
have_libdw(void)
{
    return pthread_once(&libdw_once, load_libdw) == 0 && libdw_loaded;
}

/* FNV-1a.  Cannot fail. */
static size_t
hash_str(const char *s)
{
    uint64_t h = 14695981039346656037u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (size_t)h;
}

/* The slot holding s, or the empty slot where it belongs.  cap > 0. */
static char **
pool_slot(const struct pool *p, const char *s)
{
    size_t i = hash_str(s) & (p->cap - 1);

    while (p->slots[i] && strcmp(p->slots[i], s) != 0)
        i = (i + 1) & (p->cap - 1);
    return &p->slots[i];
}

/* Keep the load factor <= 1/2.  Returns 0 or LEAKGATE_ENOMEM. */
static int
pool_reserve(struct pool *p)
{
    struct pool bigger;

    if (p->cap && p->used + 1 <= p->cap / 2)
        return 0;
    bigger.cap = p->cap ? p->cap * 2 : 64;
    bigger.used = p->used;
    bigger.slots = leakgate_util__calloc(bigger.cap, sizeof *bigger.slots);
    if (!bigger.slots)
        return leakgate_error__set(LEAKGATE_ENOMEM, "symbol string pool");
    for (size_t i = 0; i < p->cap; i++) {
        if (p->slots[i])
            *pool_slot(&bigger, p->slots[i]) = p->slots[i];
    }
    leakgate_util__free(p->slots);
    *p = bigger;
    return 0;
}

/* *out = the pool's copy of s (NULL for NULL).  Returns 0 or ENOMEM. */
static int
pool_intern(const char **out, struct pool *p, const char *s)
{
    char **slot;
    int rc;

    *out = NULL;
    if (!s)
        return 0;
    rc = pool_reserve(p);
    if (rc < 0)
        return rc;
    slot = pool_slot(p, s);
    if (!*slot) {
        *slot = leakgate_util__strdup(s);
        if (!*slot)
            return leakgate_error__set(LEAKGATE_ENOMEM, "symbol string");
        p->used++;
    }
    *out = *slot;
    return 0;
}

static void
pool_dispose(struct pool *p)
{
    for (size_t i = 0; i < p->cap; i++)
        leakgate_util__free(p->slots[i]);
    leakgate_util__free(p->slots);
}

/* Intern a function name, demangled when it is a C++ one and libstdc++'s
 * demangler is in the process.  Returns 0 or LEAKGATE_ENOMEM. */
static int
intern_function(const char **out,
                struct leakgate_symbolizer *sym,
                const char *raw)
{
    char *plain = NULL;
    int status = -1;
    int rc;

    if (raw && sym->demangle && strncmp(raw, "_Z", 2) == 0)
        plain = sym->demangle(raw, NULL, NULL, &status);
    rc = pool_intern(out, &sym->pool, plain && status == 0 ? plain : raw);
    /* __cxa_demangle returns malloc'd memory: its contract is free(). */
    free(plain);
    return rc;
}

static int
push_frame(struct frame_vec *vec, const struct leakgate_frame *f)
{
    struct leakgate_frame *bigger;
    size_t cap;

    if (vec->n == vec->cap) {
        cap = vec->cap ? vec->cap * 2 : 16;
        bigger = leakgate_util__realloc(vec->v, cap * sizeof *bigger);
        if (!bigger)
            return leakgate_error__set(LEAKGATE_ENOMEM, "frames");
        vec->v = bigger;
        vec->cap = cap;
    }
    vec->v[vec->n++] = *f;
    return 0;
}

/* The objects the dynamic linker has loaded: path and the pages their
 * loadable segments span (as /proc/self/maps shows them). */
struct loaded {
    struct loaded_object {
        char *path;
        uintptr_t start, end;
    } * v;
    size_t n, cap;
    bool failed;
};

static int
note_loaded(struct dl_phdr_info *info, size_t size, void *payload)
{
    struct loaded *l = payload;
    char exe[PATH_MAX];
    const char *path = info->dlpi_name;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    ssize_t len;

    (void)size;
    if (l->n == 0 && l->cap == 0 && (!path || !*path)) { /* the program */
        len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[len > 0 ? len : 0] = '\0';
        path = len > 0 ? exe : "/proc/self/exe";
    }
    /* The file's own path, as /proc/self/maps and a profile name it
     * (/lib is a link to /usr/lib); a library dlopen'd by a relative path:
     * the file, from here. */
    if (path && *path && path != exe && realpath(path, exe))
        path = exe;
    /* The vDSO has a name but no file. */
    if (!path || *path != '/' || access(path, R_OK) != 0)
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        struct loaded_object *v = leakgate_util__realloc(l->v, cap * sizeof *v);

        if (!v) {
            l->failed = true;
            return 1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].start = UINTPTR_MAX;
    l->v[l->n].end = 0;
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        uintptr_t hi = lo + ph->p_memsz;

        if (ph->p_type != PT_LOAD)
            continue;
        lo &= ~(page - 1);
        hi = (hi + page - 1) & ~(page - 1);
        if (lo < l->v[l->n].start)
            l->v[l->n].start = lo;
        if (hi > l->v[l->n].end)
            l->v[l->n].end = hi;
    }
    if (l->v[l->n].start >= l->v[l->n].end)
        return 0; /* nothing loaded */
    l->v[l->n].path = leakgate_util__strdup(path);
    if (!l->v[l->n].path) {
        l->failed = true;
        return 1;
    }
    l->n++;
    return 0;
}

/* Report this process's modules afresh (modules still loaded are kept):
 * the dynamic linker's list, each object over the pages it spans, its
 * file found by name.  (Not
 * /proc/self/maps: a file libdw itself maps to read it, libc.so.6 among
 * them, would look like one more segment of the loaded object and shift
 * its range.)  Returns 0 or LEAKGATE_ESYMBOL. */
static int
report_self(struct leakgate_symbolizer *sym)
{
    struct loaded l = {NULL, 0, 0, false};
    int rc = 0;

    /* Modules may have come and gone (dlopen/dlclose): forget the cache. */
    if (sym->nslots)
        memset(sym->slots, 0, sym->nslots * sizeof *sym->slots);
    sym->nused = 0;
    sym->cached.n = 0;
    sym->reported = true;
    dl_iterate_phdr(note_loaded, &l);
    dw.dwfl_report_begin(sym->dwfl);
    for (size_t i = 0; i < l.n; i++)
        (void)dw.dwfl_report_module(sym->dwfl, l.v[i].path, l.v[i].start,
                                    l.v[i].end);
    if (dw.dwfl_report_end(sym->dwfl, NULL, NULL) != 0)
        rc = leakgate_error__set(LEAKGATE_ESYMBOL, "dwfl_report_end: %s",
                                 dw.dwfl_errmsg(-1));
    else if (l.failed)
        rc = leakgate_error__set(LEAKGATE_ESYMBOL,
                                 "the loaded objects: out of memory");
    for (size_t i = 0; i < l.n; i++)
        leakgate_util__free(l.v[i].path);
    leakgate_util__free(l.v);
    return rc;
}

/* The module containing addr, or NULL.  The range check is needed:
 * libdwfl 0.188's dwfl_addrmodule() also returns the highest module for
 * any address above it (the stack, [vsyscall], garbage). */
static Dwfl_Module *
module_at(Dwfl *dwfl, Dwarf_Addr addr)
{
    Dwfl_Module *mod = dw.dwfl_addrmodule(dwfl, addr);
    Dwarf_Addr start = 0, end = 0;

    if (mod)
        (void)dw.dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL,
                                  NULL);
    return mod && addr >= start && addr < end ? mod : NULL;
}

/* The module containing addr; for this process, report on first use and
 * retry once per frames() call (*retried) after re-reporting.  A failed
 * report leaves the address unknown, which is not an error. */
static Dwfl_Module *
find_module(struct leakgate_symbolizer *sym, Dwarf_Addr addr, bool *retried)
{
    Dwfl_Module *mod;

    if (sym->is_self && !sym->reported)
        (void)report_self(sym);
    mod = module_at(sym->dwfl, addr);
    if (!mod && sym->is_self && !*retried) {
        *retried = true;
        (void)report_self(sym);
        mod = module_at(sym->dwfl, addr);
    }
    return mod;
}

/* Module path, offset and ELF symbol of addr. */
static int
describe_in_module(struct leakgate_symbolizer *sym,
                   struct leakgate_frame *f,
                   Dwfl_Module *mod,
                   Dwarf_Addr addr)
{
    Dwarf_Addr start = 0;
    GElf_Addr bias = 0;
    GElf_Off off;
    GElf_Sym elfsym;
    const char *name =
        dw.dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
    int rc;

    if (!dw.dwfl_module_getelf(mod, &bias))
        bias = start;
    f->module_offset = f->pc - (uintptr_t)bias;
    rc = pool_intern(&f->module, &sym->pool, name);
    if (rc == 0)
        rc = intern_function(&f->function, sym,
                             dw.dwfl_module_addrinfo(mod, addr, &off, &elfsym,
                                                     NULL, NULL, NULL));
    return rc;
}

/* The compilation unit containing addr, or NULL; *bias converts addr to
 * DWARF addresses.  libdw 0.188 finds CUs only through .debug_aranges,
 * which clang does not emit by default, so scan the CUs when it fails.
 * In a binary that mixes both (gcc's CUs with aranges, clang's without:
 * a project built with clang, linked with leakgate by gcc) it can also
 * answer with a CU that does not hold addr: checked, then scanned. */
static Dwarf_Die *
cu_at(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr *bias)
{
    Dwarf_Die *cu = dw.dwfl_module_addrdie(mod, addr, bias);

    if (cu && dw.dwarf_haspc(cu, addr - *bias) <= 0)
        cu = NULL;
    for (Dwarf_Die *it = NULL; !cu;) {
        it = dw.dwfl_module_nextcu(mod, it, bias);
        if (!it)
            break;
        if (dw.dwarf_haspc(it, addr - *bias) > 0)
            cu = it;
    }
    return cu;
}

/* f's file:line = the line-table row of DWARF address daddr in cu. */
static int
line_at(struct leakgate_symbolizer *sym,
        struct leakgate_frame *f,
        Dwarf_Die *cu,
        Dwarf_Addr daddr)
{
    Dwarf_Line *line = dw.dwarf_getsrc_die(cu, daddr);
    int lineno = 0;

    if (!line || dw.dwarf_lineno(line, &lineno) != 0 || lineno < 0)
        lineno = 0;
    f->line = (unsigned int)lineno;
    return pool_intern(&f->file, &sym->pool,
                       line ? dw.dwarf_linesrc(line, NULL, NULL) : NULL);
}

/* The name of a subprogram or inlined subroutine DIE: its linkage name
 * (demangled) when it has one, else DW_AT_name, through abstract origins
 * and specifications.  *out is NULL when it has neither. */
static int
die_function(const char **out, struct leakgate_symbolizer *sym, Dwarf_Die *die)
{
    static const unsigned int attrs[] = {DW_AT_linkage_name,
                                         DW_AT_MIPS_linkage_name, DW_AT_name};
    Dwarf_Attribute attr;
    const char *name = NULL;

    for (size_t i = 0; !name && i < sizeof attrs / sizeof attrs[0]; i++)
        name =
            dw.dwarf_formstring(dw.dwarf_attr_integrate(die, attrs[i], &attr));
    return intern_function(out, sym, name);
}

/* f's file:line = the call site of inlined subroutine `inl`. */
static int
call_site(struct leakgate_symbolizer *sym,
          struct leakgate_frame *f,
          Dwarf_Die *inl)
{
    Dwarf_Attribute attr;
    Dwarf_Word idx, line = 0;
    Dwarf_Files *files;
    size_t nfiles;
    Dwarf_Die cu;
    const char *file = NULL;

    if (dw.dwarf_formudata(dw.dwarf_attr(inl, DW_AT_call_line, &attr), &line) !=
        0)
        line = 0;
    f->line = line > UINT_MAX ? 0 : (unsigned int)line;
    if (dw.dwarf_formudata(dw.dwarf_attr(inl, DW_AT_call_file, &attr), &idx) ==
            0 &&
        dw.dwarf_diecu(inl, &cu, NULL, NULL) &&
        dw.dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 && idx < nfiles)
        file = dw.dwarf_filesrc(files, idx, NULL, NULL);
    return pool_intern(&f->file, &sym->pool, file);
}

/* The concrete scopes around DWARF address daddr, innermost first (*out
 * is malloc'd by libdw: free() it).  Returns their count, 0 if none. */
static int
concrete_scopes(Dwarf_Die **out, Dwarf_Die *cu, Dwarf_Addr daddr)
{
    Dwarf_Die *scopes = NULL;
    int n = dw.dwarf_getscopes(cu, daddr, &scopes);

    *out = NULL;
    if (n > 0)
        n = dw.dwarf_getscopes_die(&scopes[0], out);
    free(scopes);
    return n > 0 ? n : 0;
}

/* Push the inlined frames at daddr in cu (innermost first), then the real
 * function's frame.  `f` holds the module and ELF symbol; cu may be NULL
 * (no debug information: one frame, no file:line). */
static int
push_scopes(struct leakgate_symbolizer *sym,
            struct frame_vec *vec,
            struct leakgate_frame f,
            Dwarf_Die *cu,
            Dwarf_Addr daddr)
{
    Dwarf_Die *scopes = NULL;
    const char *symtab_name = f.function;
    const char *name;
    int n = cu ? concrete_scopes(&scopes, cu, daddr) : 0;
    int rc = cu ? line_at(sym, &f, cu, daddr) : 0;

    for (int i = 0; rc == 0 && i < n; i++) {
        int tag = dw.dwarf_tag(&scopes[i]);

        if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point) {
            rc = die_function(&name, sym, &scopes[i]);
            f.function = name ? name : symtab_name;
            break;
        }
        if (tag != DW_TAG_inlined_subroutine)
            continue;
        rc = die_function(&f.function, sym, &scopes[i]);
        f.inlined = true;
        if (rc == 0)
            rc = push_frame(vec, &f);
        if (rc == 0)
            rc = call_site(sym, &f, &scopes[i]);
        f.function = symtab_name;
    }
    f.inlined = false;
    if (rc == 0)
        rc = push_frame(vec, &f);
    free(scopes);
    return rc;
}

/* *out = the interned path of this process's executable, as
 * /proc/self/maps names it (NULL when /proc is not mounted).
 * Returns 0 or LEAKGATE_ENOMEM. */
static int
self_exe(const char **out, struct leakgate_symbolizer *sym)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);

    *out = NULL;
    if (n <= 0)
        return 0;
    path[n] = '\0';
    return pool_intern(out, &sym->pool, path);
}

/* Without libdw, in this process: the module and offset of pc from the
 * dynamic linker, the function when the module exports it (dladdr sees
 * only dynamic symbols); no file:line.  The main program's path is
 * /proc/self/exe's, as /proc/self/maps names it. */
static int
plain_self_frame(struct leakgate_symbolizer *sym, struct leakgate_frame *f)
{
    struct link_map *map = NULL;
    Dl_info info;
    int rc;

    if (!dladdr1((void *)(f->pc - 1), &info, (void **)&map, RTLD_DL_LINKMAP) ||
        !map)
        return 0;
    f->module_offset = f->pc - (uintptr_t)map->l_addr;
    if (map->l_name && *map->l_name)
        rc = pool_intern(&f->module, &sym->pool, map->l_name);
    else
        rc = self_exe(&f->module, sym);
    if (rc == 0)
        rc = intern_function(&f->function, sym, info.dli_sname);
    return rc;
}

/* Without libdw, offline: the module and offset of pc from the profile's
 * mappings; no function, no file:line. */
static void
plain_maps_frame(const struct leakgate_symbolizer *sym,
                 struct leakgate_frame *f)
{
    for (size_t i = 0; i < sym->nmaps; i++) {
        const struct plain_map *m = &sym->maps[i];

        if (f->pc - 1 >= m->start && f->pc - 1 < m->end) {
            f->module = m->path;
            f->module_offset = f->pc - m->bias;
            return;
        }
    }
}

bool
leakgate_symbolize__system_frame(const struct leakgate_frame *f)
{
    static const char *const dirs[] = {"/lib/", "/usr/lib/", "/lib64/",
                                       "/usr/lib64/"};

    if (!f->module)
        return false;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (strncmp(f->module, dirs[i], strlen(dirs[i])) == 0)
            return true;
    }
    return false;
}

static int
symbolize_pc(struct leakgate_symbolizer *sym,
             struct frame_vec *vec,
             uintptr_t pc,
             bool *retried)
{
    /* A return address points after the call: look up the call itself. */
    Dwarf_Addr addr = pc > 0 ? pc - 1 : 0;
    struct leakgate_frame f = {.pc = pc, .module_offset = pc};
    Dwfl_Module *mod;
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu;
    int rc = 0;

    if (!sym->dwfl) {
        if (pc > 0 && sym->is_self)
            rc = plain_self_frame(sym, &f);
        else if (pc > 0)
            plain_maps_frame(sym, &f);
        return rc < 0 ? rc : push_frame(vec, &f);
    }
    mod = find_module(sym, addr, retried);
    if (!mod)
        return push_frame(vec, &f);
    rc = describe_in_module(sym, &f, mod, addr);
    if (rc < 0)
        return rc;
    /* A system library's frames are named from its symbol table only:
     * its DWARF (a -dbg package, compressed) would cost more than the
     * whole test run to read, for lines reports trim anyway. */
    cu = leakgate_symbolize__system_frame(&f) ? NULL : cu_at(mod, addr, &bias);
    return push_scopes(sym, vec, f, cu, cu ? addr - bias : 0);
}

/*
 * A cache of symbolized pcs: a failing test's stacks share most of their
 * frames (and a test with 100,000 stacks has only a few dozen distinct
 * pcs), so each pc is looked up in DWARF once.  Only pcs inside a known
 * module are cached: an unknown one may resolve after a later dlopen.
 */
static struct cache_slot *
cache_find(const struct leakgate_symbolizer *sym, uintptr_t pc)
{
    size_t mask = sym->nslots - 1;

    if (sym->nslots == 0 || pc == 0)
        return NULL;
    for (size_t i = (pc * 0x9E3779B97F4A7C15u) >> 7 & mask;;
         i = (i + 1) & mask) {
        if (sym->slots[i].pc == pc)
            return &sym->slots[i];
        if (sym->slots[i].pc == 0)
            return NULL;
    }
}

static int
cache_grow(struct leakgate_symbolizer *sym)
{
    size_t n = sym->nslots ? sym->nslots * 2 : 1024;
    struct cache_slot *old = sym->slots;
    size_t nold = sym->nslots;

    sym->slots = leakgate_util__calloc(n, sizeof *sym->slots);
    if (!sym->slots) {
        sym->slots = old;
        return leakgate_error__set(LEAKGATE_ENOMEM, "symbol cache");
    }
    sym->nslots = n;
    sym->nused = 0;
    for (size_t i = 0; i < nold; i++) {
        if (old[i].pc) {
            size_t mask = n - 1,
                   k = (old[i].pc * 0x9E3779B97F4A7C15u) >> 7 & mask;

            while (sym->slots[k].pc)
                k = (k + 1) & mask;
            sym->slots[k] = old[i];
            sym->nused++;
        }
    }
    leakgate_util__free(old);
    return 0;
}

static int
cache_add(struct leakgate_symbolizer *sym,
          uintptr_t pc,
          const struct leakgate_frame *f,
          size_t count)
{
    size_t mask, k, first = sym->cached.n;
    int rc = 0;

    if (pc == 0 || count == 0 || !f[0].module)
        return 0;
    if ((sym->nused + 1) * 2 > sym->nslots)
        rc = cache_grow(sym);
    for (size_t i = 0; rc == 0 && i < count; i++)
        rc = push_frame(&sym->cached, &f[i]);
    if (rc < 0) {
        sym->cached.n = first;
        return rc;
    }
    mask = sym->nslots - 1;
    k = (pc * 0x9E3779B97F4A7C15u) >> 7 & mask;
    while (sym->slots[k].pc)
        k = (k + 1) & mask;
    sym->slots[k] = (struct cache_slot){pc, first, count};
    sym->nused++;
    return 0;
}

/* Symbolize one pc into vec, through the cache. */
static int
cached_pc(struct leakgate_symbolizer *sym,
          struct frame_vec *vec,
          uintptr_t pc,
          bool *retried)
{
    const struct cache_slot *slot = cache_find(sym, pc);
    size_t start = vec->n;
    int rc = 0;

    if (slot) {
        for (size_t i = 0; rc == 0 && i < slot->count; i++)
            rc = push_frame(vec, &sym->cached.v[slot->first + i]);
        return rc;
    }
    rc = symbolize_pc(sym, vec, pc, retried);
    if (rc == 0)
        rc = cache_add(sym, pc, vec->v + start, vec->n - start);
    return rc;
}

static int
frames(struct leakgate_symbolizer *sym,
       struct leakgate_frame **frames_out,
       size_t *nframes_out,
       const uintptr_t *pcs,
       size_t npcs)
{
    struct frame_vec vec = {NULL, 0, 0};
    bool retried = false;
    int rc = 0;

    *frames_out = NULL;
    *nframes_out = 0;
    for (size_t i = 0; i < npcs; i++) {
        rc = cached_pc(sym, &vec, pcs[i], &retried);
        if (rc < 0)
            goto cleanup;
    }
    *frames_out = vec.v;
    *nframes_out = vec.n;
    vec.v = NULL;
cleanup:
    leakgate_util__free(vec.v);
    return rc;
}

/* A symbolizer with an empty session.  Returns 0, ENOMEM or ESYMBOL. */
static int
symbolizer_new(struct leakgate_symbolizer **out, const Dwfl_Callbacks *cb)
{
    struct leakgate_symbolizer *sym;
    void *fn;

    *out = NULL;
    sym = leakgate_util__calloc(1, sizeof *sym);
    if (!sym)
        return leakgate_error__set(LEAKGATE_ENOMEM, "symbolizer");
    /* Without libdw the symbolizer still works, with less to say: every
     * frame is its module and offset (leakgate_symbolize__no_libdw()). */
    if (!have_libdw())
        sym->no_libdw = libdw_why;
    else
        sym->dwfl = dw.dwfl_begin(cb);
    if (!sym->dwfl && !sym->no_libdw) {
        leakgate_util__free(sym);
        return leakgate_error__set(LEAKGATE_ESYMBOL, "dwfl_begin: %s",
                                   dw.dwfl_errmsg(-1));
    }
    /* Demangle only if libstdc++ is already loaded (Debian's jemalloc
     * pulls it in); leakgate itself does not link it.  memcpy converts
     * the object pointer to a function pointer without a cast ISO C
     * forbids. */
    fn = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (fn)
        memcpy(&sym->demangle, &fn, sizeof sym->demangle);
    *out = sym;
    return 0;
}

static int
new_self(struct leakgate_symbolizer **out)
{
    int rc = symbolizer_new(out, &self_callbacks);

    if (rc == 0) {
        (*out)->is_self = true;
        (*out)->main_addr = (uintptr_t)getauxval(AT_PHDR);
    }
    return rc;
}

/* True when the file name looks like a shared object: "x.so", "x.so.6". */
static bool
is_shared_object(const char *path)
{
    const char *base = strrchr(path, '/');
    const char *so = strstr(base ? base + 1 : path, ".so");

    return so && (so[3] == '\0' || so[3] == '.');
}

/* The mapping of the main executable: the lowest file-backed mapping whose
 * file is not a shared object; NULL when there is none. */
static const struct leakgate_heap_mapping *
main_mapping(const struct leakgate_heap_mapping *maps, size_t nmaps)
{
    const struct leakgate_heap_mapping *best = NULL;

    for (size_t i = 0; i < nmaps; i++) {
        const char *path = maps[i].path;

        if (path && path[0] == '/' && !is_shared_object(path) &&
            (!best || maps[i].start < best->start))
            best = &maps[i];
    }
    return best;
}

/* The lowest mapping of maps[i]'s file, or NULL when an earlier mapping
 * has the same file (it was reported already). */
static const struct leakgate_heap_mapping *
first_of_file(const struct leakgate_heap_mapping *maps, size_t nmaps, size_t i)
{
    const struct leakgate_heap_mapping *first = &maps[i];

    for (size_t j = 0; j < nmaps; j++) {
        if (j == i || !maps[j].path || strcmp(maps[j].path, maps[i].path) != 0)
            continue;
        if (j < i)
            return NULL;
        if (maps[j].start < first->start)
            first = &maps[j];
    }
    return first;
}

/* Keep the file mappings for symbolizing without libdw, each with its
 * file's load bias as report_maps() computes it.  Returns 0 or ENOMEM. */
static int
keep_maps(struct leakgate_symbolizer *sym,
          const struct leakgate_heap_mapping *maps,
          size_t nmaps,
          const struct leakgate_heap_mapping *main_map,
          const char *exe)
{
    int rc = 0;

    sym->maps = leakgate_util__calloc(nmaps ? nmaps : 1, sizeof *sym->maps);
    if (!sym->maps)
        return leakgate_error__set(LEAKGATE_ENOMEM, "mappings");
    for (size_t i = 0; rc == 0 && i < nmaps; i++) {
        const struct leakgate_heap_mapping *first = &maps[i];
        struct plain_map *m = &sym->maps[sym->nmaps];
        const char *file = maps[i].path;

        if (!file || file[0] != '/' || strncmp(file, "/dev/", 5) == 0)
            continue;
        for (size_t j = 0; j < nmaps; j++) {
            if (maps[j].path && strcmp(maps[j].path, file) == 0 &&
                maps[j].start < first->start)
                first = &maps[j];
        }
        if (exe && main_map && strcmp(file, main_map->path) == 0)
            file = exe;
        m->start = maps[i].start;
        m->end = maps[i].end;
        m->bias = first->start - first->offset;
        rc = pool_intern(&m->path, &sym->pool, file);
        sym->nmaps++;
    }
    return rc;
}

/* Report each distinct readable file at base = start of its lowest mapping
 * minus that mapping's file offset (the load bias of PIE executables and
 * shared objects; ignored by libdwfl for ET_EXEC).  Files that are not ELF
 * or overlap a reported one are skipped. */
static void
report_maps(Dwfl *dwfl,
            const struct leakgate_heap_mapping *maps,
            size_t nmaps,
            const struct leakgate_heap_mapping *main_map,
            const char *exe)
{
    for (size_t i = 0; i < nmaps; i++) {
        const struct leakgate_heap_mapping *first;
        const char *file = maps[i].path;

        if (!file || file[0] != '/' || strncmp(file, "/dev/", 5) == 0)
            continue;
        first = first_of_file(maps, nmaps, i);
        if (!first)
            continue;
        if (exe && main_map && strcmp(file, main_map->path) == 0)
            file = exe;
        if (access(file, R_OK) != 0)
            continue;
        (void)dw.dwfl_report_elf(dwfl, file, file, -1,
                                 first->start - first->offset, true);
    }
}

static int
new_maps(struct leakgate_symbolizer **out,
         const struct leakgate_heap_mapping *maps,
         size_t nmaps,
         const char *exe)
{
    const struct leakgate_heap_mapping *main_map = main_mapping(maps, nmaps);
    int rc = symbolizer_new(out, &offline_callbacks);

    if (rc < 0)
        return rc;
    (*out)->main_addr = main_map ? main_map->start : 0;
    if (!(*out)->dwfl) {
        rc = keep_maps(*out, maps, nmaps, main_map, exe);
        if (rc == 0 && main_map)
            rc = pool_intern(&(*out)->main_path, &(*out)->pool,
                             exe ? exe : main_map->path);
        if (rc == 0)
            rc = pool_intern(&(*out)->main_build_id, &(*out)->pool, "");
        if (rc < 0) {
            leakgate_symbolize__free(*out);
            *out = NULL;
        }
        return rc;
    }
    dw.dwfl_report_begin((*out)->dwfl);
    report_maps((*out)->dwfl, maps, nmaps, main_map, exe);
    if (dw.dwfl_report_end((*out)->dwfl, NULL, NULL) != 0) {
        rc = leakgate_error__set(LEAKGATE_ESYMBOL, "dwfl_report_end: %s",
                                 dw.dwfl_errmsg(-1));
        leakgate_symbolize__free(*out);
        *out = NULL;
    }
    return rc;
}

/* The GNU build-id note of the main program (the first object
 * dl_iterate_phdr reports), as lowercase hex into payload; "" when none. */
static int
main_build_id_note(struct dl_phdr_info *info, size_t size, void *payload)
{
    struct leakgate_buf *hex = payload;

    (void)size;
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const unsigned char *p =
            (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;

        while (ph->p_type == PT_NOTE && p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
            const unsigned char *desc =
                p + sizeof *n + ((n->n_namesz + 3u) & ~3u);

            if (desc + n->n_descsz > end)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
                memcmp(p + sizeof *n, "GNU", 4) == 0) {
                for (size_t k = 0; k < n->n_descsz; k++)
                    leakgate_buf__printf(hex, "%02x", desc[k]);
                return 1;
            }
            p = desc + ((n->n_descsz + 3u) & ~3u);
        }
    }
    return 1; /* only the first object: the main program */
}

/* Intern the hex text of a build-id, and dispose of it.  Returns 0 or
 * LEAKGATE_ENOMEM. */
static int
intern_hex(const char **out,
           struct leakgate_symbolizer *sym,
           struct leakgate_buf *hex)
{
    int rc = hex->failed ? leakgate_error__set(LEAKGATE_ENOMEM, "build-id")
                         : pool_intern(out, &sym->pool, hex->ptr);

    leakgate_buf__dispose(hex);
    return rc;
}

/* Intern this process's build-id without libdw ("" when it has none).
 * Returns 0 or LEAKGATE_ENOMEM. */
static int
self_build_id(const char **out, struct leakgate_symbolizer *sym)
{
    struct leakgate_buf hex = LEAKGATE_BUF_INIT;

    leakgate_buf__puts(&hex, "");
    dl_iterate_phdr(main_build_id_note, &hex);
    return intern_hex(out, sym, &hex);
}

/* This process's executable and build-id, read once without libdw
 * (leakgate_symbolize__self_main()). */
static pthread_once_t self_main_once = PTHREAD_ONCE_INIT;
static char self_main_path[PATH_MAX] LEAKGATE_LARGE_TABLE;
static char self_main_build_id[2 * 64 + 1];

static void
read_self_main(void)
{
    struct leakgate_buf hex = LEAKGATE_BUF_INIT;
    ssize_t n =
        readlink("/proc/self/exe", self_main_path, sizeof self_main_path - 1);

    self_main_path[n > 0 ? n : 0] = '\0';
    leakgate_buf__puts(&hex, "");
    dl_iterate_phdr(main_build_id_note, &hex);
    snprintf(self_main_build_id, sizeof self_main_build_id, "%s",
             hex.ptr && !hex.failed ? hex.ptr : "");
    leakgate_buf__dispose(&hex);
}

int
leakgate_symbolize__self_main(const char **path_out, const char **build_id_out)
{
    if (pthread_once(&self_main_once, read_self_main) != 0 ||
        !self_main_path[0])
        return leakgate_error__set(LEAKGATE_ESYMBOL,
                                   "main executable not found");
    *path_out = self_main_path;
    *build_id_out = self_main_build_id;
    return 0;
}

/* Intern the build-id of mod as lowercase hex ("" when it has none). */
static int
intern_build_id(const char **out,
                struct leakgate_symbolizer *sym,
                Dwfl_Module *mod)
{
    struct leakgate_buf hex = LEAKGATE_BUF_INIT;
    const unsigned char *bits = NULL;
    GElf_Addr vaddr, bias;
    int len;

    /* The build-id is read from the ELF file: open it first. */
    (void)dw.dwfl_module_getelf(mod, &bias);
    len = dw.dwfl_module_build_id(mod, &bits, &vaddr);

    leakgate_buf__puts(&hex, "");
    for (int i = 0; i < len; i++)
        leakgate_buf__printf(&hex, "%02x", bits[i]);
    return intern_hex(out, sym, &hex);
}

static int
main_module(struct leakgate_symbolizer *sym,
            const char **path_out,
            const char **build_id_out)
{
    Dwfl_Module *mod;
    bool retried = true; /* a missing executable will not appear later */
    int rc = 0;

    if (!sym->dwfl && sym->is_self && !sym->main_build_id) {
        rc = self_exe(&sym->main_path, sym);
        if (rc == 0)
            rc = self_build_id(&sym->main_build_id, sym);
        if (rc < 0)
            return leakgate_error__set(LEAKGATE_ESYMBOL,
                                       "main executable: out of memory");
    }
    if (!sym->main_path || !sym->main_build_id) {
        if (!sym->dwfl)
            return leakgate_error__set(LEAKGATE_ESYMBOL,
                                       "main executable not found");
        mod =
            sym->main_addr ? find_module(sym, sym->main_addr, &retried) : NULL;
        if (!mod)
            return leakgate_error__set(LEAKGATE_ESYMBOL,
                                       "main executable not found");
        rc = pool_intern(
            &sym->main_path, &sym->pool,
            dw.dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        if (rc == 0)
            rc = intern_build_id(&sym->main_build_id, sym, mod);
        if (rc < 0)
            return leakgate_error__set(LEAKGATE_ESYMBOL,
                                       "main executable: out of memory");
    }
    *path_out = sym->main_path;
    *build_id_out = sym->main_build_id;
    return 0;
}

void
leakgate_symbolize__free(struct leakgate_symbolizer *sym)
{
    if (!sym)
        return;
    if (sym->dwfl) {
        leakgate_heap__divert(true);
        dw.dwfl_end(sym->dwfl);
        leakgate_heap__divert(false);
    }
    leakgate_util__free(sym->maps);
    pool_dispose(&sym->pool);
    leakgate_util__free(sym->cached.v);
    leakgate_util__free(sym->slots);
    leakgate_util__free(sym);
}

/* ---- The entry points: libdw allocates on leakgate's heap (heap.h,
 * "Diverted"), never among the program's objects ---- */

int
leakgate_symbolize__new_self(struct leakgate_symbolizer **out)
{
    int rc;

    leakgate_heap__divert(true);
    rc = new_self(out);
    leakgate_heap__divert(false);
    return rc;
}

int
leakgate_symbolize__new_maps(struct leakgate_symbolizer **out,
                             const struct leakgate_heap_mapping *maps,
                             size_t nmaps,
                             const char *exe)
{
    int rc;

    leakgate_heap__divert(true);
    rc = new_maps(out, maps, nmaps, exe);
    leakgate_heap__divert(false);
    return rc;
}

int
leakgate_symbolize__frames(struct leakgate_symbolizer *sym,
                           struct leakgate_frame **frames_out,
                           size_t *nframes_out,
                           const uintptr_t *pcs,
                           size_t npcs)
{
    int rc;

    leakgate_heap__divert(true);
    rc = frames(sym, frames_out, nframes_out, pcs, npcs);
    leakgate_heap__divert(false);
    return rc;
}

int
leakgate_symbolize__main_module(struct leakgate_symbolizer *sym,
                                const char **path_out,
                                const char **build_id_out)
{
    int rc;

    leakgate_heap__divert(true);
    rc = main_module(sym, path_out, build_id_out);
    leakgate_heap__divert(false);
    return rc;
}

const char *
leakgate_symbolize__no_libdw(const struct leakgate_symbolizer *sym)
{
    return sym->no_libdw;
}
