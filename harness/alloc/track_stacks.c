/* SPDX-License-Identifier: MIT */
/*
 * track_stacks: the allocation stacks of the objects a fast window keeps,
 * so that growth the gate would not fail is judged without a replay
 * (track.h, "Stacks").
 *
 * While a window is open and stacks are wanted, the allocation wrappers
 * (intercept.c) hand every chosen allocation here: all of them for a test
 * whose thresholds accept some growth (LEAKGATE_TRACK_STACKS_ALL), or only
 * those whose immediate caller is a function of the C library or the
 * dynamic linker that an ignore list names (LEAKGATE_TRACK_STACKS_RUNTIME:
 * a thread's descriptor, stdio buffers, which the built-in ignore list
 * covers; runtime_needs_stack() decides, from the address ranges
 * leakgate_track__runtime_functions() resolved once).  A program's own
 * strdup, asprintf or getline is not unwound: what it keeps has no stack
 * here, and the window is measured by a replay, as any leak.  The stack is
 * unwound by stackwalk.c (libgcc's frames, from a table), as exact
 * windows unwind it, and the leading frames inside leakgate's own
 * allocation section are dropped, as exact windows drop them: the same
 * pcs exact mode records.
 *
 * Invariant: the objects of a window that are still live at its end are
 * exactly the tracker's bits; when every one of them has a stack here, the
 * growth of each stack in an exact window can only be smaller (objects of
 * that stack from before the window may have been freed), so a verdict of
 * "within every limit" on these stacks is the exact verdict.  Any other
 * verdict is not trusted: the test is measured by a replay.
 *
 * Never allocates (it runs inside malloc): the tables live in mmap'd
 * memory, emptied per window by a generation number; one spin lock.
 */
#include "track.h"

#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "error.h"
#include "jesize.h"
#include "reach.h"
#include "stackwalk.h"
#include "track_hot.h"
#include "util.h"

#define OBJ_SLOTS ((size_t)1 << 22)   /* at most half of them used */
#define OBJ_FIRST ((size_t)1 << 8)    /* a window's table starts this small */
#define STACK_SLOTS ((size_t)1 << 18) /* at most half of them used */
#define PC_WORDS ((size_t)1 << 22)    /* 32 MiB of return addresses */
#define MAX_FRAMES 128                /* as jemalloc's profiler */
#define TOMBSTONE ((uintptr_t)1)
#define MAX_IGNORED 256 /* runtime functions an ignore list names */
#define MAX_GLOBS 64    /* globs kept for the lazy scan */
#define GLOB_CHARS 64   /* ... each shorter than this */

#define ALLOC_PATH __attribute__((section("leakgate_alloc"), noinline))

/* 24 bytes: a million objects left cost 24 MiB here (48 MiB when the
 * table grows past them). */
struct obj_slot {
    uintptr_t addr; /* 0 empty, TOMBSTONE removed */
    uint32_t req;   /* the bytes the program asked for; REQ_UNKNOWN: 4 GiB
                       or more */
    uint32_t stack; /* index into stacks */
    uint16_t gen;   /* valid only in the window of this generation's low
                       16 bits (obj_gen()); the tables are emptied when
                       they wrap */
};
#define REQ_UNKNOWN UINT32_MAX
_Static_assert(STACK_SLOTS <= (size_t)UINT32_MAX,
               "a stack index fits an object slot");

struct stack_slot {
    uint64_t hash;
    uint32_t off; /* first pc in pcs */
    uint32_t n;   /* pcs */
    uint32_t gen;
};

/* Distinct stacks and their return addresses: the window's (emptied with
 * each generation) and the orphans' (kept for the process). */
struct stack_table {
    struct stack_slot *slots; /* empty unless gen */
    uintptr_t *pcs;
    size_t nslots; /* a power of two; at most half of them used */
    size_t pcs_max;
    size_t n; /* slots used */
    size_t npcs;
    uint32_t gen;
};

static struct {
    struct obj_slot *objs;
    struct obj_slot *objs_next; /* where the table grows (swapped) */
    size_t obj_mask;            /* slots in use - 1: grows x4 when half full */
    struct stack_table stk;     /* stk.gen is gen */
    uint32_t gen;
    size_t nobjs;            /* slots used in this window (removed ones too) */
    size_t obj_touched;      /* slots of either object table ever used */
    bool failed;             /* a table was full: some object has no stack */
    uintptr_t runtime[4][2]; /* text of libc and ld.so: [start, end) */
    uintptr_t rtld[2];       /* ld.so's text alone */
    size_t nruntime;
    struct runtime_syms {
        uintptr_t base;         /* load bias */
        const ElfW(Sym) * syms; /* .dynsym */
        const char *names;      /* .dynstr */
        size_t nsyms;
    } rtsyms[4]; /* libc's and ld.so's exported symbols */
    size_t nrtsyms;
    uintptr_t ignored[MAX_IGNORED][2]; /* functions the globs name */
    size_t nignored;
    uintptr_t own[2];    /* leakgate's allocation section */
    uintptr_t runner[2]; /* the test runner's trampolines */
    bool ready;
    /* Carry (track.h): the tables outlive windows; an object slot's gen
     * is then the window that noted it (win), a slot is used while its
     * addr is. */
    bool carry;
    bool compacted_full; /* compacting in this window freed little */
    uint16_t win;
    struct stack_table stk_next; /* where the stacks are compacted to */
} st;

/* Carry: per stack slot, what the window `win` freed of objects earlier
 * windows noted; the slots with such frees, in first-seen order.  Two
 * sets: a compaction moves the window's counts to the other one, under
 * the stacks' new slots. */
struct carried_set {
    uint64_t *objs, *bytes;
    uint16_t *win; /* the entry counts for this window only */
    uint32_t *used;
    size_t nused;
};
static struct carried_set carried, carried_next;
atomic_bool leakgate_track__carry_on;
static void carry_next_window(void);
static void carry_make_room(void);

/* The stack mode, and the runtime's text with its plain sites
 * (track_hot.h: the wrappers call leakgate_track__stack_note() only
 * inside it, and not for a plain site). */
atomic_int leakgate_track__stacks_mode;
struct leakgate_track__sites_map leakgate_track__sites;
static void *plain_map;    /* leakgate_track__sites.plain */
static size_t plain_bytes; /* its size */
_Static_assert(LEAKGATE_TRACK_STACKS_RUNTIME ==
                       LEAKGATE_TRACK__STACKS_RUNTIME &&
                   LEAKGATE_TRACK_STACKS_ALL == LEAKGATE_TRACK__STACKS_ALL,
               "track_hot.h's stack modes are track.h's");
static atomic_flag lock = ATOMIC_FLAG_INIT;
/* Objects with a stack, this window; while there are none the filter
 * (track_hot.h) is 0 and no free calls leakgate_track__stack_drop(). */
static atomic_size_t stacks_live;
_Atomic uint64_t leakgate_track__noted_filter;

/* While the process has one thread nothing can contend (a thread starts
 * from this one, never inside the lock), and the lock is not taken. */
static void
lock_tables(void)
{
    if (leakgate_track__alone())
        return;
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        ;
}

static void
unlock_tables(void)
{
    if (leakgate_track__alone())
        return;
    atomic_flag_clear_explicit(&lock, memory_order_release);
}

/* stacks_live and the noted filter change under the lock only (readers
 * take none): no locked instruction is needed to change them. */
static void
live_add(size_t d)
{
    atomic_store_explicit(
        &stacks_live,
        atomic_load_explicit(&stacks_live, memory_order_relaxed) + d,
        memory_order_relaxed);
}

/* One object with a note fewer (the lock is held). */
static void
live_sub_one(void)
{
    size_t n = atomic_load_explicit(&stacks_live, memory_order_relaxed);

    atomic_store_explicit(&stacks_live, n - 1, memory_order_relaxed);
    /* The last note gone: no free needs to look (track_hot.h). */
    if (n == 1)
        atomic_store_explicit(&leakgate_track__noted_filter, 0,
                              memory_order_relaxed);
}

static bool
is_rtld(const char *path)
{
    const char *base = strrchr(path, '/');

    base = base ? base + 1 : path;
    return strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "ld.so", 5) == 0;
}

static bool
is_runtime(const char *path)
{
    const char *base = strrchr(path, '/');

    base = base ? base + 1 : path;
    return strncmp(base, "libc.so", 7) == 0 || is_rtld(path);
}

/* The number of symbols of a GNU hash table (the highest index a bucket
 * or its chain reaches, plus one). */
static size_t
gnu_hash_nsyms(const uint32_t *h)
{
    uint32_t nbuckets = h[0], symoffset = h[1], bloom_words = h[2];
    const uint32_t *buckets =
        (const uint32_t *)((const ElfW(Addr) *)(h + 4) + bloom_words);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;

    for (uint32_t b = 0; b < nbuckets; b++) {
        if (buckets[b] > last)
            last = buckets[b];
    }
    if (last < symoffset)
        return symoffset;
    while (!(chain[last - symoffset] & 1))
        last++;
    return (size_t)last + 1;
}

/* A dynamic-section pointer: ld.so relocates most in place; the vDSO's
 * and some loaders' stay relative to the load bias. */
static uintptr_t
dyn_ptr(uintptr_t base, ElfW(Addr) p)
{
    return p < base ? base + p : p;
}

/* Keep a runtime object's exported symbols (its .dynsym, .dynstr and the
 * symbol count from its hash table). */
static void
note_syms(const struct dl_phdr_info *info, const ElfW(Phdr) * ph)
{
    const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
    struct runtime_syms r = {info->dlpi_addr, NULL, NULL, 0};

    for (; d->d_tag != DT_NULL; d++) {
        uintptr_t p = dyn_ptr(info->dlpi_addr, d->d_un.d_ptr);

        if (d->d_tag == DT_SYMTAB)
            r.syms = (const ElfW(Sym) *)p;
        else if (d->d_tag == DT_STRTAB)
            r.names = (const char *)p;
        else if (d->d_tag == DT_GNU_HASH)
            r.nsyms = gnu_hash_nsyms((const uint32_t *)p);
        else if (d->d_tag == DT_HASH && r.nsyms == 0)
            r.nsyms = ((const uint32_t *)p)[1];
    }
    if (r.syms && r.names && r.nsyms && st.nrtsyms < 4)
        st.rtsyms[st.nrtsyms++] = r;
}

static int
note_runtime(struct dl_phdr_info *info, size_t size, void *payload)
{
    (void)size;
    (void)payload;
    if (!info->dlpi_name || !is_runtime(info->dlpi_name))
        return 0;
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

        if (ph->p_type == PT_DYNAMIC)
            note_syms(info, ph);
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || st.nruntime >= 4)
            continue;
        st.runtime[st.nruntime][0] = info->dlpi_addr + ph->p_vaddr;
        st.runtime[st.nruntime][1] =
            info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        if (is_rtld(info->dlpi_name)) {
            st.rtld[0] = st.runtime[st.nruntime][0];
            st.rtld[1] = st.runtime[st.nruntime][1];
        }
        st.nruntime++;
    }
    return 0;
}

/*
 * What the runtime call sites of the allocator were found to be, by their
 * return address: util.c's two-part table (a page, then 64 KiB), filled
 * as sites are first seen in a window, emptied by
 * leakgate_track__runtime_functions().
 */
enum { SITE_UNKNOWN, SITE_PLAIN, SITE_IGNORED };
#define SITE_SLOTS_FIRST 256
#define SITE_SLOTS 4096

static struct leakgate_util__addr_slot
    site_first[SITE_SLOTS_FIRST] LEAKGATE_LARGE_TABLE;
static struct leakgate_util__addr_slot
    site_more[SITE_SLOTS] LEAKGATE_LARGE_TABLE;
static const struct leakgate_util__addr_table sites = {
    site_first, SITE_SLOTS_FIRST, site_more, SITE_SLOTS};
static atomic_bool sites_used; /* some site was noted */

/* Remember that site pc (inside the runtime's text) needs no stack. */
static void
plain_cached(uintptr_t pc)
{
    struct leakgate_track__sites_map *s = &leakgate_track__sites;
    uintptr_t off = (pc - s->start) >> 4;

    if (s->plain && off >> 3 < plain_bytes)
        atomic_fetch_or_explicit(&s->plain[off >> 3],
                                 (unsigned char)(1u << (off & 7)),
                                 memory_order_relaxed);
}

/* The longest run of literal characters of a glob (none: ""), which
 * every name it matches contains: a cheap test before fnmatch. */
static void
literal_run(const char *glob, char *out, size_t size)
{
    size_t best = 0, len = 0;
    const char *start = glob;

    out[0] = '\0';
    for (const char *p = glob;; p++) {
        if (*p && !strchr("*?[]\\", *p)) {
            if (len++ == 0)
                start = p;
            continue;
        }
        if (len > best && len < size) {
            memcpy(out, start, len);
            out[len] = '\0';
            best = len;
        }
        len = 0;
        if (*p == '[') /* a class: skip to its end */
            while (p[1] && p[1] != ']')
                p++;
        if (!*p)
            return;
    }
}

/* Which globs a name may match, by the pairs of characters it contains:
 * a glob whose literal run starts with the pair (hashed; collisions only
 * add candidates) is a candidate.  Globs beyond 64, or without a literal
 * run of two characters, always are.  Scanning libc's 3,000 names costs
 * a few lookups per name instead of a strstr per glob.  One page: every
 * name reads it. */
#define PAIR_SLOTS 512
static uint64_t pair_globs[PAIR_SLOTS] LEAKGATE_LARGE_TABLE;
static uint64_t always_globs;

static size_t
pair_slot(unsigned char a, unsigned char b)
{
    return (size_t)(((uint32_t)a << 8 | b) * UINT32_C(0x9e3779b1) >> 23) &
           (PAIR_SLOTS - 1);
}

static void
pairs_init(char (*lits)[GLOB_CHARS], size_t n)
{
    memset(pair_globs, 0, sizeof pair_globs);
    always_globs = n > 64 ? UINT64_MAX : 0;
    for (size_t i = 0; i < n && i < 64; i++) {
        if (strlen(lits[i]) < 2)
            always_globs |= (uint64_t)1 << i;
        else
            pair_globs[pair_slot((unsigned char)lits[i][0],
                                 (unsigned char)lits[i][1])] |= (uint64_t)1
                                                                << i;
    }
}

/* Whether name matches one of the n globs (lits: their literal runs). */
static bool
named(const char *name,
      const char *const *globs,
      char (*lits)[GLOB_CHARS],
      size_t n)
{
    uint64_t maybe = always_globs;

    for (const char *p = name; p[0] && p[1]; p++)
        maybe |=
            pair_globs[pair_slot((unsigned char)p[0], (unsigned char)p[1])];
    for (size_t i = 0; maybe && i < n; i++) {
        if ((i >= 64 || (maybe >> i & 1)) && strstr(name, lits[i]) &&
            leakgate_util__glob_match(globs[i], name))
            return true;
    }
    return false;
}

/* leakgate's allocation section (the wrappers of intercept.c and the
 * ALLOC_PATH functions here), bounded by the linker: an allocation's stack
 * starts below it, as exact windows strip it (intercept.h's range).  No
 * wrappers under the sanitizers: nothing to strip. */
extern const char __start_leakgate_alloc[] __attribute__((weak));
extern const char __stop_leakgate_alloc[] __attribute__((weak));

/* Map an empty stack table of nslots slots and pcs_max return addresses
 * (touched as it fills).  False when a mapping failed. */
static bool
map_stack_table(struct stack_table *t, size_t nslots, size_t pcs_max)
{
    t->slots = leakgate_util__map_zeroed(nslots * sizeof *t->slots, true);
    t->pcs = leakgate_util__map_zeroed(pcs_max * sizeof *t->pcs, true);
    t->nslots = nslots;
    t->pcs_max = pcs_max;
    return t->slots && t->pcs;
}

/* A window's table of stacks uses this many of its STACK_SLOTS slots (a
 * small table stays in the cache); carried, it grows when compacting it
 * leaves it crowded (carry_make_room()). */
#define STACK_SLOTS_FIRST ((size_t)1 << 15)

static int
map_tables(void)
{
    if (st.ready)
        return 0;
    st.objs = leakgate_util__map_zeroed(OBJ_SLOTS * sizeof *st.objs, true);
    st.objs_next = leakgate_util__map_zeroed(OBJ_SLOTS * sizeof *st.objs, true);
    if (!map_stack_table(&st.stk, STACK_SLOTS, PC_WORDS) || !st.objs ||
        !st.objs_next)
        return leakgate_error__set(LEAKGATE_ENOMEM,
                                   "track: stack tables (mmap failed)");
    st.stk.nslots = STACK_SLOTS_FIRST;
    dl_iterate_phdr(note_runtime, NULL);
    if (st.nruntime) {
        uintptr_t lo = st.runtime[0][0], hi = st.runtime[0][1];

        for (size_t i = 1; i < st.nruntime; i++) {
            if (st.runtime[i][0] < lo)
                lo = st.runtime[i][0];
            if (st.runtime[i][1] > hi)
                hi = st.runtime[i][1];
        }
        /* A bit per 16 bytes of the span (libc and the dynamic linker
         * lie a few MiB apart: some KiB of map, most never touched).  A
         * span beyond 4 GiB gets none: no runtime allocation is then
         * unwound, and a window that keeps one (a stdio buffer) is
         * replayed instead. */
        if (hi - lo <= ((uintptr_t)1 << 32)) {
            plain_bytes = ((hi - lo) >> 7) + 1;
            leakgate_track__sites.start = lo;
            plain_map = leakgate_util__map_zeroed(plain_bytes, true);
            leakgate_track__sites.plain = plain_map;
            if (!plain_map)
                return leakgate_error__set(LEAKGATE_ENOMEM,
                                           "track: plain sites (mmap failed)");
        }
    }
#ifndef LEAKGATE_NO_INTERCEPT
    st.own[0] = (uintptr_t)__start_leakgate_alloc;
    st.own[1] = (uintptr_t)__stop_leakgate_alloc;
#endif
    st.ready = true;
    return 0;
}

/*
 * The globs, kept until the ranges are resolved: on the first runtime call
 * site a window meets (runtime_needs_stack()), not at start-up: a process
 * whose windows never allocate through the C library never reads its
 * 3,000 names (~0.7 million instructions).  Static: the scan runs inside
 * an allocation wrapper and allocates nothing (fnmatch keeps short names
 * on its stack).  More or longer globs than fit: resolved at once.
 */
static struct {
    char globs[MAX_GLOBS][GLOB_CHARS];
    char lits[MAX_GLOBS][GLOB_CHARS]; /* their literal runs */
    const char *ptrs[MAX_GLOBS];
    size_t n;
    atomic_int state; /* RANGES_* */
} pending;
enum { RANGES_READY, RANGES_PENDING, RANGES_RESOLVING };
static __thread bool resolving_here __attribute__((tls_model("initial-exec")));

static void
resolve_ranges(const char *const *globs, char (*lits)[GLOB_CHARS], size_t n)
{
    pairs_init(lits, n);
    st.nignored = 0;
    for (size_t m = 0; m < st.nrtsyms; m++) {
        const struct runtime_syms *r = &st.rtsyms[m];

        for (size_t i = 0; i < r->nsyms && st.nignored < MAX_IGNORED; i++) {
            const ElfW(Sym) *sym = &r->syms[i];

            if ((sym->st_info & 0xf) != STT_FUNC ||
                sym->st_shndx == SHN_UNDEF || sym->st_size == 0 ||
                !named(r->names + sym->st_name, globs, lits, n))
                continue;
            st.ignored[st.nignored][0] = r->base + sym->st_value;
            st.ignored[st.nignored][1] = r->base + sym->st_value + sym->st_size;
            st.nignored++;
        }
    }
}

/* The ranges are resolved (now, by this thread, if nobody has); false
 * while another thread resolves them, or from within the scan. */
static bool
ranges_ready(void)
{
    int expected = RANGES_PENDING;

    if (atomic_load_explicit(&pending.state, memory_order_acquire) ==
        RANGES_READY)
        return true;
    if (resolving_here || !atomic_compare_exchange_strong(
                              &pending.state, &expected, RANGES_RESOLVING))
        return false;
    resolving_here = true;
    resolve_ranges(pending.ptrs, pending.lits, pending.n);
    resolving_here = false;
    atomic_store_explicit(&pending.state, RANGES_READY, memory_order_release);
    return true;
}

int
leakgate_track__runtime_functions(const char *const *globs, size_t n)
{
    int rc = map_tables();
    bool fits = n <= MAX_GLOBS;

    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n && fits; i++)
        fits = strlen(globs[i]) < GLOB_CHARS;
    if (atomic_exchange(&sites_used, false)) {
        memset(site_first, 0, sizeof site_first);
        memset(site_more, 0, sizeof site_more);
        /* The plain sites' bits too (track_hot.h): given back, read as
         * zeros. */
        leakgate_util__map_reset(plain_map, plain_bytes);
    }
    st.nignored = 0;
    if (fits) {
        for (size_t i = 0; i < n; i++) {
            memcpy(pending.globs[i], globs[i], strlen(globs[i]) + 1);
            pending.ptrs[i] = pending.globs[i];
            literal_run(globs[i], pending.lits[i], GLOB_CHARS);
        }
        pending.n = n;
        atomic_store(&pending.state, RANGES_PENDING);
        return 0;
    }
    {
        char(*lits)[GLOB_CHARS] = leakgate_util__calloc(n, sizeof *lits);

        if (!lits)
            return leakgate_error__set(LEAKGATE_ENOMEM, "track: globs");
        for (size_t i = 0; i < n; i++)
            literal_run(globs[i], lits[i], GLOB_CHARS);
        resolve_ranges(globs, lits, n);
        leakgate_util__free(lits);
    }
    atomic_store(&pending.state, RANGES_READY);
    return 0;
}

/* Ordinals (track.h): the log of a logging window, the wanted ordinals
 * of a selecting one.  LOG_MAX addresses at most (1 GiB reserved, pages
 * touched as the log grows). */
#define LOG_MAX ((size_t)1 << 27)
static struct {
    uintptr_t *log;     /* mapped on first use */
    size_t nlog;        /* allocations seen: the next ordinal */
    bool overflow;      /* more allocations than LOG_MAX */
    uint64_t *want;     /* a selecting window's ordinals, ascending */
    size_t nwant, next; /* ... and the next one to meet */
    bool logged;        /* the last window logged */
} ord;

static int set_mode(int m);

int
leakgate_track__stacks(enum leakgate_track_stacks m)
{
    return set_mode((int)m);
}

int
leakgate_track__stacks_log(void)
{
    if (!ord.log)
        ord.log = leakgate_util__map_zeroed(LOG_MAX * sizeof *ord.log, true);
    if (!ord.log)
        return leakgate_error__set(LEAKGATE_ENOMEM,
                                   "track: allocation log (mmap failed)");
    return set_mode(LEAKGATE_TRACK__STACKS_LOG);
}

int
leakgate_track__stacks_select(const uint64_t *ords, size_t n)
{
    uint64_t *want = leakgate_util__calloc(n ? n : 1, sizeof *want);

    if (!want)
        return leakgate_error__set(LEAKGATE_ENOMEM, "track: ordinals");
    if (n)
        memcpy(want, ords, n * sizeof *want);
    leakgate_util__free(ord.want);
    ord.want = want;
    ord.nwant = n;
    return set_mode(LEAKGATE_TRACK__STACKS_SELECT);
}

static int
set_mode(int m)
{
    if (m != LEAKGATE_TRACK_STACKS_NONE) {
        int rc = map_tables();

        if (rc < 0)
            return rc;
    }
    ord.nlog = 0;
    ord.next = 0;
    ord.overflow = false;
    ord.logged = m == LEAKGATE_TRACK__STACKS_LOG;
    if (m != LEAKGATE_TRACK__STACKS_SELECT) {
        leakgate_util__free(ord.want);
        ord.want = NULL;
        ord.nwant = 0;
    }
    lock_tables();
    if (st.carry) {
        carry_next_window();
        unlock_tables();
        atomic_store(&leakgate_track__stacks_mode,
                     st.ready ? m : LEAKGATE_TRACK_STACKS_NONE);
        leakgate_track__lane_veto(LEAKGATE_TRACK__VETO_ALL_STACKS, true);
        return 0;
    }
    /* A new generation empties the tables; the window is not open yet. */
    st.gen++;
    if ((uint16_t)st.gen == 0) {
        /* Slots of the generation 65,536 windows ago would look current. */
        memset(st.objs, 0, st.obj_touched * sizeof *st.objs);
        memset(st.objs_next, 0, st.obj_touched * sizeof *st.objs_next);
    }
    st.nobjs = st.stk.n = st.stk.npcs = 0;
    st.stk.gen = st.gen;
    /* Small windows touch a small table: few cache misses, few pages. */
    st.obj_mask = OBJ_FIRST - 1;
    if (st.obj_touched < OBJ_FIRST)
        st.obj_touched = OBJ_FIRST;
    st.failed = false;
    atomic_store(&stacks_live, 0);
    atomic_store(&leakgate_track__noted_filter, 0);
    unlock_tables();
    atomic_store(&leakgate_track__stacks_mode,
                 st.ready ? m : LEAKGATE_TRACK_STACKS_NONE);
    /* The runtime's text is looked at in this mode only (track_hot.h). */
    atomic_store_explicit(&leakgate_track__sites.len,
                          st.ready && m == LEAKGATE_TRACK_STACKS_RUNTIME &&
                                  leakgate_track__sites.plain
                              ? plain_bytes << 7
                              : 0,
                          memory_order_release);
    /* A window that wants every stack takes no lane (track_hot.h); one
     * that logs or selects by ordinals does: the lane calls the stack
     * note for each allocation (leakgate_track__stack_wanted_lane()). */
    leakgate_track__lane_veto(LEAKGATE_TRACK__VETO_ALL_STACKS,
                              st.ready && m == LEAKGATE_TRACK_STACKS_ALL);
    return 0;
}

void
leakgate_track__runner(uintptr_t begin, uintptr_t end)
{
    st.runner[0] = begin;
    st.runner[1] = end;
}

static bool
in_runtime(uintptr_t pc)
{
    for (size_t i = 0; i < st.nruntime; i++) {
        if (pc >= st.runtime[i][0] && pc < st.runtime[i][1])
            return true;
    }
    return false;
}

struct unwound {
    uintptr_t pcs[MAX_FRAMES];
    size_t n;
};

/* The allocation's stack as jemalloc's profiler records it, from the
 * table walk (stackwalk.h): the leading frames in leakgate's allocation
 * section are dropped, and the walk ends at the runner's frame (above it
 * the stack is the same for every allocation of the window). */
static ALLOC_PATH void
unwind(struct unwound *u, const struct leakgate_stackwalk_regs *r)
{
    const struct leakgate_stackwalk_bounds b = {st.own[0], st.own[1],
                                                st.runner[0], st.runner[1]};
    void *raw[MAX_FRAMES];
    unsigned n = 0;

    _Static_assert(sizeof raw == sizeof u->pcs, "a pc is a pointer");
    leakgate_stackwalk__backtrace_in(raw, &n, MAX_FRAMES, &b, r);
    memcpy(u->pcs, raw, n * sizeof *raw);
    u->n = n;
}

/* A return address inside a runtime function an ignore list names. */
static bool
in_ignored(uintptr_t pc)
{
    for (size_t i = 0; i < st.nignored; i++) {
        if (pc > st.ignored[i][0] && pc <= st.ignored[i][1])
            return true;
    }
    return false;
}

static int
site_kind(uintptr_t pc)
{
    uint64_t kind;

    return leakgate_util__addr_get(&sites, pc, &kind) ? (int)kind
                                                      : SITE_UNKNOWN;
}

/* Note what site pc is; false when the table is full (not noted, asked
 * again). */
static bool
site_note(uintptr_t pc, int kind)
{
    atomic_store_explicit(&sites_used, true, memory_order_relaxed);
    return leakgate_util__addr_put(&sites, pc, (uint64_t)kind) >= 0;
}

/*
 * The one place that decides which allocations of a
 * LEAKGATE_TRACK_STACKS_RUNTIME window are unwound: those made by the C
 * library or the dynamic linker on behalf of a runtime function an ignore
 * list names (the built-in list, when on, and the thresholds file's
 * ignore: entries, resolved to the exported functions' address ranges by
 * leakgate_track__runtime_functions()).  caller is the return address into
 * the function that called the allocator:
 *   - outside the runtime: no stack (the program's own allocation);
 *   - inside a named function (_IO_file_doallocate's stdio buffer,
 *     getpwuid's result): a stack;
 *   - inside any other runtime function: decided once per call site, by
 *     the stack of the first allocation made there in a window (a named
 *     function on it: the DTV that pthread_create's allocate_dtv makes,
 *     the time-zone data of localtime's __tzfile_read), then kept.  A
 *     site first seen on the program's behalf (strdup, strndup, asprintf,
 *     getline called by the test) is never unwound again.
 * Only a recorded stack can let a window that keeps something pass
 * without a replay; an allocation left without one sends the window to
 * the replay, which measures it exactly: no choice made here can hide a
 * leak.  *u is filled (*have) when the decision needed the stack.
 */

static ALLOC_PATH bool
runtime_needs_stack(uintptr_t caller,
                    struct unwound *u,
                    bool *have,
                    const struct leakgate_stackwalk_regs *r)
{
    int kind;
    bool named = false;

    *have = false;
    if (!in_runtime(caller)) {
        /* Between the runtime's objects (another library's text): never
         * a stack here, and no call next time (track_hot.h). */
        plain_cached(caller);
        return false;
    }
    kind = site_kind(caller);
    if (kind == SITE_PLAIN)
        plain_cached(caller);
    if (kind != SITE_UNKNOWN)
        return kind == SITE_IGNORED;
    /* The dynamic linker allocates only for itself (link maps, scopes,
     * TLS, the table of loaded objects it grows as libraries load): its
     * own bookkeeping, which the built-in list names by its internal
     * functions, never exported; so every allocation it makes gets a
     * stack.  They are few, made by dlopen and thread creation. */
    if (caller >= st.rtld[0] && caller < st.rtld[1]) {
        (void)site_note(caller, SITE_IGNORED);
        return true;
    }
    if (!ranges_ready())
        return false; /* another thread is resolving: no stack, a replay */
    named = in_ignored(caller);
    if (!named) {
        unwind(u, r);
        *have = true;
        for (size_t i = 0; i < u->n && !named; i++)
            named = in_ignored(u->pcs[i]);
    }
    if (site_note(caller, named ? SITE_IGNORED : SITE_PLAIN) && !named)
        plain_cached(caller);
    return named;
}

static uint64_t
hash_pcs(const uintptr_t *pcs, size_t n)
{
    uint64_t h = n;

    /* A rotate and an xor per frame (no multiply on the chain: a stack
     * note hashes 5 to 30 of them), mixed once at the end. */
    for (size_t i = 0; i < n; i++)
        h = (h << 7 | h >> 57) ^ pcs[i];
    h ^= h >> 31;
    h *= 0x9e3779b97f4a7c15ull;
    return h ^ h >> 29;
}

/* The index of this stack in table t; UINT32_MAX when full. */
static uint32_t
intern_in(struct stack_table *t, const uintptr_t *pcs, size_t n)
{
    const size_t mask = t->nslots - 1;
    uint64_t h = hash_pcs(pcs, n);

    for (size_t i = h & mask;; i = (i + 1) & mask) {
        struct stack_slot *s = &t->slots[i];

        if (s->gen != t->gen) {
            if (t->n >= t->nslots / 2 || t->npcs + n > t->pcs_max)
                return UINT32_MAX;
            s->gen = t->gen;
            s->hash = h;
            s->off = (uint32_t)t->npcs;
            s->n = (uint32_t)n;
            memcpy(&t->pcs[t->npcs], pcs, n * sizeof *pcs);
            t->npcs += n;
            t->n++;
            return (uint32_t)i;
        }
        if (s->hash == h && s->n == n &&
            memcmp(&t->pcs[s->off], pcs, n * sizeof *pcs) == 0)
            return (uint32_t)i;
    }
}

static size_t
obj_home(uintptr_t a)
{
    return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> 40) & st.obj_mask;
}

/* The generation an object slot of this window carries. */
static inline uint16_t
obj_gen(void)
{
    return (uint16_t)st.gen;
}

/* The slot was never used (in this window, unless carrying). */
static inline bool
slot_empty(const struct obj_slot *o)
{
    return o->addr == 0 || (!st.carry && o->gen != obj_gen());
}

/* The slot of object a, or NULL when it has none in this window. */
static struct obj_slot *
find_obj(uintptr_t a)
{
    size_t i = obj_home(a);

    for (;; i = (i + 1) & st.obj_mask) {
        struct obj_slot *o = &st.objs[i];

        if (slot_empty(o))
            return NULL;
        if (o->addr == a)
            return o;
    }
}

/* A slot for a new object a (removed slots are used again). */
static struct obj_slot *
free_slot(uintptr_t a)
{
    size_t i = obj_home(a);

    for (;; i = (i + 1) & st.obj_mask) {
        struct obj_slot *o = &st.objs[i];

        if (slot_empty(o)) {
            st.nobjs++; /* a slot never used in this window */
            return o;
        }
        if (o->addr == TOMBSTONE)
            return o;
    }
}

/* Move the objects into a table of `slots` (a power of two, at most
 * OBJ_SLOTS; removed slots are dropped).  False when they fill half of
 * it.  Called with the lock held. */
static bool
rehash_objs(size_t slots)
{
    size_t old_mask = st.obj_mask, n = 0;
    struct obj_slot *from = st.objs;

    st.obj_mask = slots - 1;
    if (st.obj_mask + 1 > st.obj_touched)
        st.obj_touched = st.obj_mask + 1;
    /* Slots of this generation may be left there from an earlier growth. */
    memset(st.objs_next, 0, (st.obj_mask + 1) * sizeof *st.objs_next);
    st.objs = st.objs_next;
    st.objs_next = from;
    for (size_t i = 0; i <= old_mask; i++) {
        const struct obj_slot *o = &from[i];
        struct obj_slot *to;

        if (slot_empty(o) || o->addr == TOMBSTONE)
            continue;
        for (size_t k = obj_home(o->addr);; k = (k + 1) & st.obj_mask) {
            to = &st.objs[k];
            if (to->addr == 0)
                break;
        }
        *to = *o;
        n++;
    }
    st.nobjs = n;
    return n < (st.obj_mask + 1) / 2;
}

/* The table is half full: move this window's objects into a table four
 * times larger.  False when it is as large as it gets (a carried table is
 * then rebuilt in place of its removed slots, if that leaves room).
 * Called with the lock held. */
static bool
grow_objs(void)
{
    size_t slots = (st.obj_mask + 1) * 4;

    /* (At its largest, rebuilt only when removed slots are many: a
     * rebuild per allocation would free nothing.) */
    if (st.obj_mask + 1 >= OBJ_SLOTS &&
        (!st.carry ||
         st.nobjs - atomic_load_explicit(&stacks_live, memory_order_relaxed) <
             OBJ_SLOTS / 8))
        return false;
    return rehash_objs(slots < OBJ_SLOTS ? slots : OBJ_SLOTS);
}

/* A slot for the new noted object a (the table grown when half full),
 * counted live and in the noted filter; NULL when there is no room.
 * Called with the lock held. */
static struct obj_slot *
new_obj_slot(uintptr_t a)
{
    struct obj_slot *o;

    if (st.nobjs >= (st.obj_mask + 1) / 2)
        (void)grow_objs();
    if (st.nobjs >= (st.obj_mask + 1) / 2)
        return NULL;
    o = free_slot(a);
    live_add(1);
    atomic_store_explicit(&leakgate_track__noted_filter,
                          atomic_load_explicit(&leakgate_track__noted_filter,
                                               memory_order_relaxed) |
                              leakgate_track__noted_bit(a),
                          memory_order_relaxed);
    return o;
}

/* A logging or selecting window's allocation a, the next ordinal:
 * logged (false), or wanted for its stack (true) when it is the next of
 * the chosen ordinals.  The windows that log or select run while the
 * process has one thread (gate_fork.c): then no other thread counts, and
 * a plain add does (no locked instruction per allocation); once a thread
 * has started, the count is atomic (its window is measured otherwise). */
static ALLOC_PATH bool
ordinal_wanted(int m, uintptr_t a)
{
    size_t i;

    if (leakgate_track__alone()) {
        i = __atomic_load_n(&ord.nlog, __ATOMIC_RELAXED);
        __atomic_store_n(&ord.nlog, i + 1, __ATOMIC_RELAXED);
    } else {
        i = __atomic_fetch_add(&ord.nlog, 1, __ATOMIC_RELAXED);
    }

    if (m == LEAKGATE_TRACK__STACKS_LOG) {
        if (i < LOG_MAX)
            ord.log[i] = a;
        else
            ord.overflow = true;
        return false;
    }
    if (ord.next >= ord.nwant || ord.want[ord.next] != i)
        return false;
    ord.next++;
    return true;
}

ALLOC_PATH void
leakgate_track__stack_note(uintptr_t a,
                           uintptr_t caller,
                           size_t req,
                           const struct leakgate_stackwalk_regs *r)
{
    int m = atomic_load_explicit(&leakgate_track__stacks_mode,
                                 memory_order_relaxed);
    struct unwound u;
    struct obj_slot *o;
    uint32_t stack;
    bool have = false;

    if (m == LEAKGATE_TRACK_STACKS_NONE ||
        (m == LEAKGATE_TRACK_STACKS_RUNTIME &&
         !runtime_needs_stack(caller, &u, &have, r)))
        return;
    if (m >= LEAKGATE_TRACK__STACKS_LOG && !ordinal_wanted(m, a))
        return;
    if (!have)
        unwind(&u, r);
    lock_tables();
    stack = intern_in(&st.stk, u.pcs, u.n);
    if (stack == UINT32_MAX && st.carry && !st.compacted_full) {
        /* Carried, the table holds stacks of objects long gone: keep
         * those still needed, in a larger table if it stays crowded, and
         * try again. */
        carry_make_room();
        stack = intern_in(&st.stk, u.pcs, u.n);
    }
    o = find_obj(a);
    if (!o && stack != UINT32_MAX)
        o = new_obj_slot(a);
    if (o && stack != UINT32_MAX) {
        /* Carrying, a slot of an earlier window here is stale (its free
         * went unseen): replaced, not counted as freed. */
        o->addr = a;
        o->gen = st.carry ? st.win : obj_gen();
        o->stack = stack;
        o->req = req < REQ_UNKNOWN ? (uint32_t)req : REQ_UNKNOWN;
    } else {
        st.failed = true;
        if (o) { /* no stale stack may stand for this object */
            o->addr = TOMBSTONE;
            live_sub_one();
        }
    }
    unlock_tables();
}

ALLOC_PATH void
leakgate_track__stack_drop(uintptr_t a)
{
    struct obj_slot *o;

    if (atomic_load_explicit(&stacks_live, memory_order_relaxed) == 0)
        return;
    lock_tables();
    o = find_obj(a);
    if (o) {
        o->addr = TOMBSTONE;
        live_sub_one();
    }
    unlock_tables();
}

bool
leakgate_track__forget(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;

    if (!leakgate_track__installed() || p == 0 || !leakgate_track__erase(p))
        return false;
    leakgate_track__stack_drop(p);
    return true;
}

/* What reach.h says of a stack's objects. */
struct kinds {
    uint64_t lost_objs, lost_bytes, indirect_objs, indirect_bytes;
    uint64_t classified; /* objects with a kind */
    unsigned int roots;
};

struct gather {
    uint64_t *objs;      /* per stack slot */
    uint64_t *bytes;     /* per stack slot */
    uint64_t *req;       /* per stack slot: the bytes asked for */
    uint32_t *used;      /* the slots with objects, in first-seen order */
    struct kinds *kinds; /* per stack slot: reachability */
    size_t nused;
    bool missing;
};

/* One set of gathering arrays, mapped once and kept: zero between uses
 * (gather_free clears what was used), so a window that left something
 * costs no fresh pages. */
static struct gather gathering;

static int
gather_alloc(struct gather *g)
{
    if (!gathering.objs) {
        gathering.objs = leakgate_util__map_zeroed(
            STACK_SLOTS * sizeof *gathering.objs, true);
        gathering.bytes = leakgate_util__map_zeroed(
            STACK_SLOTS * sizeof *gathering.bytes, true);
        gathering.req = leakgate_util__map_zeroed(
            STACK_SLOTS * sizeof *gathering.req, true);
        gathering.used = leakgate_util__map_zeroed(
            STACK_SLOTS * sizeof *gathering.used, true);
        gathering.kinds = leakgate_util__map_zeroed(
            STACK_SLOTS * sizeof *gathering.kinds, true);
        if (!gathering.objs || !gathering.bytes || !gathering.req ||
            !gathering.used || !gathering.kinds) {
            gathering.objs = NULL;
            return leakgate_error__set(LEAKGATE_ENOMEM,
                                       "track: stacks (mmap failed)");
        }
    }
    *g = gathering;
    g->nused = 0;
    g->missing = false;
    return 0;
}

static void
gather_free(struct gather *g)
{
    for (size_t k = 0; g->objs && k < g->nused; k++) {
        g->objs[g->used[k]] = 0;
        g->bytes[g->used[k]] = 0;
        g->req[g->used[k]] = 0;
        memset(&g->kinds[g->used[k]], 0, sizeof *g->kinds);
    }
    g->nused = 0;
}

/* The object at a, of usable bytes, by its kind (reach.h). */
static void
kind_one(struct kinds *k, uintptr_t a, size_t usable)
{
    enum leakgate_reach_kind kind = leakgate_reach__kind(a);

    if (kind == LEAKGATE_REACH_UNKNOWN)
        return;
    k->classified++;
    if (kind == LEAKGATE_REACH_LOST) {
        k->lost_objs++;
        k->lost_bytes += usable;
    } else if (kind == LEAKGATE_REACH_INDIRECT) {
        k->indirect_objs++;
        k->indirect_bytes += usable;
    } else
        k->roots |= LEAKGATE_REACH_ROOT_BIT(kind);
}

static int
gather_one(const void *ptr, size_t usable, void *payload)
{
    struct gather *g = payload;
    struct obj_slot *o = find_obj((uintptr_t)ptr);

    if (!o || (st.carry && o->gen != st.win)) {
        g->missing = true;
        return 1;
    }
    if (g->objs[o->stack]++ == 0)
        g->used[g->nused++] = o->stack;
    g->bytes[o->stack] += usable;
    if (o->req == REQ_UNKNOWN || g->req[o->stack] == UINT64_MAX)
        g->req[o->stack] = UINT64_MAX; /* not known for the whole stack */
    else
        g->req[o->stack] += o->req;
    kind_one(&g->kinds[o->stack], (uintptr_t)ptr, usable);
    return 0;
}

/* Call fn for each gathered stack, in first-seen order (the k-th call is
 * group k); fn's first non-zero return. */
static int
each_group(const struct gather *g, leakgate_track_group_fn fn, void *payload)
{
    for (size_t k = 0; k < g->nused; k++) {
        const struct stack_slot *s = &st.stk.slots[g->used[k]];
        const struct kinds *kd = &g->kinds[g->used[k]];
        uint64_t req = g->req[g->used[k]];
        struct leakgate_track_group grp;
        int rc;

        memset(&grp, 0, sizeof grp);
        grp.pcs = &st.stk.pcs[s->off];
        grp.npcs = s->n;
        grp.objs = g->objs[g->used[k]];
        grp.bytes = g->bytes[g->used[k]];
        grp.requested = req;
        grp.requested_known = req != UINT64_MAX;
        grp.kinds_known = kd->classified == grp.objs;
        if (st.carry && carried.win && carried.win[g->used[k]] == st.win) {
            grp.freed_objs = carried.objs[g->used[k]];
            grp.freed_bytes = carried.bytes[g->used[k]];
        }
        if (grp.kinds_known) {
            grp.lost_objs = kd->lost_objs;
            grp.lost_bytes = kd->lost_bytes;
            grp.indirect_objs = kd->indirect_objs;
            grp.indirect_bytes = kd->indirect_bytes;
            grp.roots = kd->roots;
        }
        rc = fn(&grp, payload);

        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The ordinals of the objects left, being found: an open-addressing set
 * of their addresses (each claimed once, by its last allocation). */
struct ordinals {
    uintptr_t *addrs; /* 0: empty; claimed ones have bit 0 set */
    size_t mask;
    uint64_t *out; /* the ordinals found */
    size_t n;
};

static size_t
ord_home(const struct ordinals *o, uintptr_t a)
{
    return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> 20) & o->mask;
}

static int
ord_add(const void *ptr, size_t usable, void *payload)
{
    struct ordinals *o = payload;
    uintptr_t a = (uintptr_t)ptr;
    size_t i = ord_home(o, a);

    (void)usable;
    while (o->addrs[i] != 0 && o->addrs[i] != a)
        i = (i + 1) & o->mask;
    o->addrs[i] = a;
    return 0;
}

/* The slot of a in the set, or NULL. */
static uintptr_t *
ord_find(const struct ordinals *o, uintptr_t a)
{
    for (size_t i = ord_home(o, a); o->addrs[i] != 0; i = (i + 1) & o->mask) {
        if ((o->addrs[i] & ~(uintptr_t)1) == a)
            return &o->addrs[i];
    }
    return NULL;
}

/* Count the objects left; stop (1) at one whose usable size is unknown
 * (another allocator served it: its bytes would read as 0). */
static int
ord_count(const void *ptr, size_t usable, void *payload)
{
    (void)ptr;
    ++*(size_t *)payload;
    return usable == 0;
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

/* The ordinals of the objects left, from log[0, nlog). */
static int
left_ordinals_in(const uintptr_t *log,
                 size_t nlog,
                 uint64_t **out,
                 size_t *n_out)
{
    struct ordinals o = {0};
    size_t left = 0, slots = 64;
    int rc = leakgate_track__each(ord_count, &left);

    if (rc == LEAKGATE_ESTATE)
        return rc;
    if (rc != 0)
        return leakgate_error__set(LEAKGATE_ENOTFOUND,
                                   "track: an object left has no known size");
    while (slots < left * 2)
        slots *= 2;
    o.mask = slots - 1;
    o.addrs = leakgate_util__calloc(slots, sizeof *o.addrs);
    o.out = leakgate_util__calloc(left ? left : 1, sizeof *o.out);
    if (!o.addrs || !o.out) {
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "track: ordinals");
        goto done;
    }
    (void)leakgate_track__each(ord_add, &o);
    /* The last allocation at an address is the object left there. */
    for (size_t i = nlog; i-- > 0 && o.n < left;) {
        uintptr_t *slot = ord_find(&o, log[i]);

        if (slot && !(*slot & 1)) {
            *slot |= 1;
            o.out[o.n++] = i;
        }
    }
    if (o.n != left) {
        rc = leakgate_error__set(LEAKGATE_ENOTFOUND,
                                 "track: an object left has no ordinal");
        goto done;
    }
    qsort(o.out, o.n, sizeof *o.out, cmp_u64);
    *out = o.out;
    *n_out = o.n;
    o.out = NULL;
done:
    leakgate_util__free(o.addrs);
    leakgate_util__free(o.out);
    return rc;
}

int
leakgate_track__left_ordinals(uint64_t **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!ord.logged)
        return leakgate_error__set(LEAKGATE_ESTATE, "track: no log");
    if (ord.overflow || ord.nlog > LOG_MAX)
        return leakgate_error__set(LEAKGATE_ENOTFOUND,
                                   "track: the allocation log overflowed");
    return left_ordinals_in(ord.log, ord.nlog, out, n_out);
}

/* The first pass's log (track_hot.h): FIRST_MAX addresses at most (a
 * reservation, pages touched as a window's log grows; a window that
 * allocates more is measured with a logging copy, as before). */
#define FIRST_MAX ((size_t)1 << 18)
struct leakgate_track__first_log leakgate_track__first_log;
static struct {
    uintptr_t *base; /* mapped on first use */
    size_t n;        /* what the last window logged */
    bool whole;      /* ... all of it (not full, not stopped early) */
} first;

int
leakgate_track__first_log_start(void)
{
    if (!first.base)
        first.base =
            leakgate_util__map_zeroed(FIRST_MAX * sizeof *first.base, true);
    first.n = 0;
    first.whole = false;
    if (!first.base)
        return leakgate_error__set(LEAKGATE_ENOMEM,
                                   "track: allocation log (mmap failed)");
    leakgate_track__first_log.cur = first.base;
    leakgate_track__first_log.end = first.base + FIRST_MAX;
    return 0;
}

void
leakgate_track__first_log_stop(void)
{
    uintptr_t *cur = leakgate_track__first_log.cur;

    if (!first.base || !cur || cur < first.base || cur > first.base + FIRST_MAX)
        return;
    leakgate_track__first_log.cur = leakgate_track__first_log.end = NULL;
    first.n = (size_t)(cur - first.base);
    first.whole = first.n < FIRST_MAX;
}

int
leakgate_track__first_left_ordinals(uint64_t **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!first.whole)
        return leakgate_error__set(LEAKGATE_ENOTFOUND,
                                   "track: no whole allocation log");
    first.whole = false;
    return left_ordinals_in(first.base, first.n, out, n_out);
}

/* Carry: a group for each stack the window freed earlier windows'
 * objects of and left none on (g: what it left). */
static int
freed_only_groups(const struct gather *g,
                  leakgate_track_group_fn fn,
                  void *payload)
{
    for (size_t k = 0; k < carried.nused; k++) {
        uint32_t i = carried.used[k];
        const struct stack_slot *s = &st.stk.slots[i];
        struct leakgate_track_group grp;
        int rc;

        if (carried.win[i] != st.win || g->objs[i] != 0)
            continue;
        memset(&grp, 0, sizeof grp);
        grp.pcs = &st.stk.pcs[s->off];
        grp.npcs = s->n;
        grp.freed_objs = carried.objs[i];
        grp.freed_bytes = carried.bytes[i];
        rc = fn(&grp, payload);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int
left_groups_with(leakgate_track_group_fn fn, void *payload, bool net);

int
leakgate_track__left_groups(leakgate_track_group_fn fn, void *payload)
{
    return left_groups_with(fn, payload, false);
}

int
leakgate_track__left_groups_net(leakgate_track_group_fn fn, void *payload)
{
    return left_groups_with(fn, payload, st.carry);
}

static int
left_groups_with(leakgate_track_group_fn fn, void *payload, bool net)
{
    struct gather g;
    int rc;

    if (atomic_load(&leakgate_track__stacks_mode) ==
            LEAKGATE_TRACK_STACKS_NONE ||
        st.failed)
        return leakgate_error__set(LEAKGATE_ENOTFOUND,
                                   "track: no stacks for this window");
    rc = gather_alloc(&g);
    if (rc == 0 && leakgate_track__each(gather_one, &g) != 0)
        rc = leakgate_error__set(LEAKGATE_ENOTFOUND,
                                 "track: an object left has no stack");
    if (rc == 0)
        rc = each_group(&g, fn, payload);
    if (rc == 0 && net)
        rc = freed_only_groups(&g, fn, payload);
    gather_free(&g);
    return rc;
}

/* ---- Carry (track.h): the stacks of earlier windows' objects. */

/* Compact the stack table to the stacks carried objects still have and
 * those the open window's frees count against (st.stk_next, swapped in;
 * the counts follow to the other set): at a window's start when the table
 * is a quarter full, or in a window when it is full.  An object whose
 * stack does not fit loses its slot, a count its stack: its free is then
 * not counted (never a smaller growth).  Called with the lock held. */
static void
carry_compact(size_t nslots)
{
    struct stack_table *to = &st.stk_next, from = st.stk;
    struct carried_set *c = &carried, *d = &carried_next, swap;

    to->gen = from.gen + 1; /* newer than any of to's old slots */
    to->n = to->npcs = 0;
    to->nslots = nslots;
    for (size_t j = 0; j < d->nused; j++)
        d->win[d->used[j]] = 0; /* its last use's counts: gone */
    d->nused = 0;
    for (size_t j = 0; j < c->nused; j++) {
        uint32_t k = c->used[j], nk;

        if (c->win[k] != st.win)
            continue;
        nk = intern_in(to, &from.pcs[from.slots[k].off], from.slots[k].n);
        if (nk == UINT32_MAX)
            continue;
        d->win[nk] = st.win;
        d->objs[nk] = c->objs[k];
        d->bytes[nk] = c->bytes[k];
        d->used[d->nused++] = nk;
    }
    for (size_t i = 0; i <= st.obj_mask; i++) {
        struct obj_slot *o = &st.objs[i];
        const struct stack_slot *s;
        uint32_t k;

        if (slot_empty(o) || o->addr == TOMBSTONE)
            continue;
        s = &from.slots[o->stack];
        k = intern_in(to, &from.pcs[s->off], s->n);
        if (k == UINT32_MAX) {
            o->addr = TOMBSTONE;
            live_sub_one();
        } else {
            o->stack = k;
        }
    }
    from = st.stk; /* (to is st.stk_next: swap through a copy) */
    st.stk = *to;
    st.stk_next = from;
    swap = carried;
    carried = carried_next;
    carried_next = swap;
}

/* The carried stack table is full in a window: compacted, and in a table
 * twice as large when a quarter of it is still used; at the largest,
 * still crowded, it is not compacted again in this window (a stack that
 * does not fit then leaves its window unjudged).  Called with the lock
 * held. */
static void
carry_make_room(void)
{
    size_t n = st.stk.nslots;

    carry_compact(n);
    if (st.stk.n >= n / 4 && n < STACK_SLOTS)
        carry_compact(n * 2);
    st.compacted_full =
        (st.stk.nslots >= STACK_SLOTS && st.stk.n >= st.stk.nslots / 4) ||
        st.stk.npcs >= st.stk.pcs_max / 2;
}

/* A new carried window (set_mode): frees count for it; a stack table
 * half way to full is compacted first.  Called with the lock held. */
static void
carry_next_window(void)
{
    if (++st.win == 0) {
        /* 65,535 windows on: no count or object may look as if this
         * window made it. */
        st.win = 1;
        memset(carried.win, 0, STACK_SLOTS * sizeof *carried.win);
        memset(carried_next.win, 0, STACK_SLOTS * sizeof *carried_next.win);
        for (size_t i = 0; i <= st.obj_mask; i++)
            st.objs[i].gen = 0;
    }
    carried.nused = 0;
    st.failed = false;
    st.compacted_full = false;
    if (st.stk.n >= st.stk.nslots / 4 || st.stk.npcs >= st.stk.pcs_max / 2)
        carry_compact(st.stk.nslots);
}

static bool
map_carried(struct carried_set *c)
{
    c->objs = leakgate_util__map_zeroed(STACK_SLOTS * sizeof *c->objs, true);
    c->bytes = leakgate_util__map_zeroed(STACK_SLOTS * sizeof *c->bytes, true);
    c->win = leakgate_util__map_zeroed(STACK_SLOTS * sizeof *c->win, true);
    c->used = leakgate_util__map_zeroed(STACK_SLOTS * sizeof *c->used, true);
    return c->objs && c->bytes && c->win && c->used;
}

int
leakgate_track__carry(void)
{
    int rc;

    if (st.carry)
        return 0;
    rc = map_tables();
    if (rc < 0)
        return rc;
    if (!map_stack_table(&st.stk_next, STACK_SLOTS, PC_WORDS) ||
        !map_carried(&carried) || !map_carried(&carried_next))
        return leakgate_error__set(LEAKGATE_ENOMEM,
                                   "track: carried stacks (mmap failed)");
    lock_tables();
    /* From now on a slot is used while its addr is: empty them all. */
    memset(st.objs, 0, st.obj_touched * sizeof *st.objs);
    memset(st.objs_next, 0, st.obj_touched * sizeof *st.objs_next);
    st.nobjs = st.stk.n = st.stk.npcs = 0;
    st.stk.gen = ++st.gen;
    st.failed = false;
    atomic_store(&stacks_live, 0);
    atomic_store(&leakgate_track__noted_filter, 0);
    st.carry = true;
    unlock_tables();
    atomic_store(&leakgate_track__carry_on, true);
    return 0;
}

ALLOC_PATH void
leakgate_track__carry_drop(uintptr_t a,
                           size_t usable,
                           struct leakgate_track_carry_receipt *receipt)
{
    struct leakgate_track_carry_receipt r;
    struct obj_slot *o;

    memset(&r, 0, sizeof r);
    if (leakgate_track__noted_maybe(a)) {
        lock_tables();
        o = find_obj(a);
        if (o && o->addr != TOMBSTONE) {
            r.found = true;
            r.gen = o->gen;
            r.stack = o->stack;
            r.req = o->req;
            r.stk_gen = st.stk.gen;
            r.usable = usable ? usable : leakgate_jesize__usable((void *)a);
            /* An earlier window's object, freed in this one: as an exact
             * window's profile, its stack shrinks by it. */
            if (o->gen != st.win && leakgate_track__recording()) {
                uint32_t k = o->stack;

                if (carried.win[k] != st.win) {
                    carried.win[k] = st.win;
                    carried.objs[k] = carried.bytes[k] = 0;
                    carried.used[carried.nused++] = k;
                }
                carried.objs[k]++;
                carried.bytes[k] += r.usable;
                r.counted = true;
            }
            o->addr = TOMBSTONE;
            live_sub_one();
        }
        unlock_tables();
    }
    if (receipt)
        *receipt = r;
}

ALLOC_PATH void
leakgate_track__carry_undo(uintptr_t a,
                           const struct leakgate_track_carry_receipt *r)
{
    struct obj_slot *o;

    if (!r->found)
        return;
    lock_tables();
    if (st.stk.gen != r->stk_gen) {
        /* Compacted meanwhile (another thread): the stack's slot moved;
         * the window cannot be judged on its stacks. */
        st.failed = true;
    } else {
        if (r->counted && carried.win[r->stack] == st.win) {
            carried.objs[r->stack]--;
            carried.bytes[r->stack] -= r->usable;
        }
        o = find_obj(a);
        if (!o)
            o = new_obj_slot(a);
        if (o) {
            o->addr = a;
            o->gen = r->gen;
            o->stack = r->stack;
            o->req = r->req;
        } else {
            st.failed = true; /* no room: its free would go uncounted */
        }
    }
    unlock_tables();
}

/* ---- Watch: which objects a test left does the rest of its suite free?
 *
 * The objects a fast window left are watched until the suite's window
 * closes; a free (or a realloc) of one marks its owner's objects released
 * and counts its bytes as released.  A suite whose cleanup or later tests
 * free what failing tests left holds a shared fixture (gate.c's hint);
 * under `scope: suite` what is still watched at the suite's end is what
 * the test lost (gate_suite.c).  Outside a watch, a free costs one relaxed
 * load more. */

#define WATCH_SLOTS ((size_t)1 << 16) /* at most half of them used */
#define WATCH_OWNERS 4096

struct watch_slot {
    uintptr_t addr; /* TOMBSTONE removed */
    uint32_t owner;
    uint32_t entry; /* the object's group in its owner's hold */
    uint64_t bytes; /* usable size */
    uint64_t req;   /* the bytes asked for (0: its stack is not known;
                       UINT64_MAX: too large to note) */
    uint32_t gen;   /* empty unless wt.gen: a clear is gen++ */
};

static struct {
    struct watch_slot *slots;
    uint32_t *list; /* the slots used, in order: wt.used of them */
    uint32_t gen;
    size_t used;
    bool released[WATCH_OWNERS];
    bool overflow[WATCH_OWNERS]; /* some object of the owner is unwatched */
    uint64_t freed_bytes[WATCH_OWNERS];
    uint64_t freed_objs[WATCH_OWNERS];
} wt LEAKGATE_LARGE_TABLE;
/* Some owner was watched (wt is written): until then a clear need not
 * read wt, nor touch its page. */
static bool wt_ever;

atomic_bool leakgate_track__watching;

/* The filter in front of the table (track_hot.h): a bit per 16 home
 * slots, set as objects are watched, all cleared with the watch (a
 * removed object's bit stays set: the table answers for it). */
_Alignas(64) _Atomic uint64_t
    leakgate_track__watch_filter[LEAKGATE_TRACK__WATCH_FILTER_BITS / 64];

/* a may be watched from now on (leakgate_track__watched_maybe()). */
static void
filter_set(uintptr_t a)
{
    atomic_fetch_or_explicit(
        &leakgate_track__watch_filter[leakgate_track__watch_bit(a) / 64],
        UINT64_C(1) << (leakgate_track__watch_bit(a) % 64),
        memory_order_relaxed);
}

static size_t
watch_home(uintptr_t a)
{
    return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> 48);
}

struct watching {
    uint32_t owner;
    const uint32_t *entry_of; /* per stack slot, or NULL */
};

static int
watch_one(const void *ptr, size_t usable, void *payload)
{
    const struct watching *w = payload;
    const struct obj_slot *o;
    uintptr_t a = (uintptr_t)ptr;

    if (wt.used >= WATCH_SLOTS / 2) {
        wt.overflow[w->owner] = true;
        return 0;
    }
    o = w->entry_of ? find_obj(a) : NULL;
    for (size_t i = watch_home(a);; i = (i + 1) & (WATCH_SLOTS - 1)) {
        struct watch_slot *s = &wt.slots[i];

        if (s->gen != wt.gen) {
            s->gen = wt.gen;
            s->addr = a;
            s->owner = w->owner;
            s->entry = o ? w->entry_of[o->stack] : UINT32_MAX;
            s->bytes = usable;
            s->req = !o ? 0 : o->req == REQ_UNKNOWN ? UINT64_MAX : o->req;
            wt.list[wt.used++] = (uint32_t)i;
            filter_set(a);
            return 0;
        }
    }
}

static int
watch_with(uint32_t owner, const uint32_t *entry_of)
{
    struct watching w = {owner, entry_of};
    int rc;

    wt_ever = true;
    /* Its addresses are leakgate's, not the program's references. */
    leakgate_reach__not_root(&wt, sizeof wt);
    wt.released[owner] = false; /* an id handed out again */
    wt.overflow[owner] = false;
    wt.freed_bytes[owner] = wt.freed_objs[owner] = 0;
    if (!wt.slots) {
        wt.slots =
            leakgate_util__map_zeroed(WATCH_SLOTS * sizeof *wt.slots, true);
        wt.list =
            leakgate_util__map_zeroed(WATCH_SLOTS / 2 * sizeof *wt.list, true);
        wt.gen = 1;
        if (!wt.slots || !wt.list) {
            wt.slots = NULL;
            return leakgate_error__set(LEAKGATE_ENOMEM,
                                       "track: watch table (mmap failed)");
        }
    }
    lock_tables();
    rc = leakgate_track__each(watch_one, &w);
    atomic_store(&leakgate_track__watching, true);
    unlock_tables();
    return rc < 0 ? rc : 0;
}

int
leakgate_track__watch_left(uint32_t owner)
{
    if (owner == 0 || owner >= WATCH_OWNERS)
        return 0;
    return watch_with(owner, NULL);
}

int
leakgate_track__hold_left(uint32_t owner,
                          leakgate_track_group_fn fn,
                          void *payload)
{
    struct gather g;
    uint32_t *entry_of = NULL;
    bool stacks;
    int rc = 0;

    memset(&g, 0, sizeof g);
    if (owner == 0 || owner >= WATCH_OWNERS)
        return leakgate_error__set(LEAKGATE_ESTATE, "track: watch owner %u",
                                   (unsigned)owner);
    stacks = atomic_load(&leakgate_track__stacks_mode) !=
                 LEAKGATE_TRACK_STACKS_NONE &&
             !st.failed;
    if (stacks) {
        rc = gather_alloc(&g);
        entry_of = leakgate_util__calloc(STACK_SLOTS, sizeof *entry_of);
        if (rc == 0 && !entry_of)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "track: stacks");
        else if (leakgate_track__each(gather_one, &g) != 0)
            g.missing = true; /* some object left has no stack */
        if (rc < 0)
            goto done;
        stacks = !g.missing;
    }
    if (stacks) {
        /* Group k is entry k of the caller's list. */
        for (size_t k = 0; k < g.nused; k++)
            entry_of[g.used[k]] = (uint32_t)k;
        rc = each_group(&g, fn, payload);
        if (rc != 0)
            goto done;
    }
    rc = watch_with(owner, stacks ? entry_of : NULL);
    if (rc == 0 && !stacks)
        rc = leakgate_error__set(LEAKGATE_ENOTFOUND,
                                 "track: an object left has no stack");
done:
    gather_free(&g);
    leakgate_util__free(entry_of);
    return rc;
}

/* ---- Kept: what failing windows left reachable, until the run ends.
 *
 * A replay keeps the objects a window left that its scan found reachable
 * (reach.h), each with its caller's tag, for the whole run: at the run's
 * end a second scan tells which of them later code made lost (the last
 * pointer to them dropped, nothing freed).  Freed or moved (realloc)
 * objects leave the table, as watched ones do: the watch's filter and
 * flag cover them, and a watch clear keeps them. */

#define KEPT_SLOTS ((size_t)1 << 15) /* at most half of them used */

struct kept_slot {
    uintptr_t addr; /* 0 empty, TOMBSTONE removed */
    uint32_t tag;
    uint64_t bytes; /* usable size */
};

static struct {
    struct kept_slot *slots;
    size_t used, live;
} kept;

/* The kept objects' filter bits into words (the lock held). */
static void
kept_filter(uint64_t *words)
{
    for (size_t i = 0; kept.live > 0 && i < KEPT_SLOTS; i++) {
        uintptr_t a = kept.slots[i].addr;

        if (a && a != TOMBSTONE)
            words[leakgate_track__watch_bit(a) / 64] |=
                UINT64_C(1) << (leakgate_track__watch_bit(a) % 64);
    }
}

/* Put the kept object k in its home slot or after (the lock held). */
static void
kept_put(const struct kept_slot *k)
{
    for (size_t i = watch_home(k->addr) & (KEPT_SLOTS - 1);;
         i = (i + 1) & (KEPT_SLOTS - 1)) {
        if (!kept.slots[i].addr) {
            kept.slots[i] = *k;
            kept.used++;
            kept.live++;
            return;
        }
    }
}

/* The table without its removed slots (the lock held): what frees left
 * makes room again.  False when it cannot be done (no memory). */
static bool
kept_compact(void)
{
    size_t n = 0, bytes = kept.live * sizeof(struct kept_slot);
    struct kept_slot *live = bytes ? mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                                   : NULL;

    if (bytes && live == MAP_FAILED)
        return false;
    for (size_t i = 0; i < KEPT_SLOTS; i++)
        if (kept.slots[i].addr && kept.slots[i].addr != TOMBSTONE)
            live[n++] = kept.slots[i];
    memset(kept.slots, 0, KEPT_SLOTS * sizeof *kept.slots);
    kept.used = kept.live = 0;
    for (size_t i = 0; i < n; i++)
        kept_put(&live[i]);
    if (bytes)
        munmap(live, bytes);
    return true;
}

/* a is being freed or moved (the lock held). */
static void
kept_free(uintptr_t a)
{
    if (kept.live == 0)
        return;
    for (size_t i = watch_home(a) & (KEPT_SLOTS - 1);;
         i = (i + 1) & (KEPT_SLOTS - 1)) {
        struct kept_slot *k = &kept.slots[i];

        if (!k->addr)
            return;
        if (k->addr == a) {
            k->addr = TOMBSTONE;
            kept.live--;
            return;
        }
    }
}

struct keeping {
    const uint32_t *tag_of; /* per stack slot */
    void (*dropped)(uint32_t tag, void *payload);
    void *payload;
};

static int
keep_one(const void *ptr, size_t usable, void *payload)
{
    const struct keeping *kp = payload;
    uintptr_t a = (uintptr_t)ptr;
    const struct obj_slot *o = find_obj(a);
    enum leakgate_reach_kind kind = leakgate_reach__kind(a);
    uint32_t tag = o ? kp->tag_of[o->stack] : UINT32_MAX;

    if (tag == UINT32_MAX || kind < LEAKGATE_REACH_GLOBAL)
        return 0;
    if (kept.used >= KEPT_SLOTS / 2 &&
        (kept.live >= KEPT_SLOTS / 4 || !kept_compact())) {
        kp->dropped(tag, kp->payload);
        return 0;
    }
    for (size_t i = watch_home(a) & (KEPT_SLOTS - 1);;
         i = (i + 1) & (KEPT_SLOTS - 1)) {
        struct kept_slot *k = &kept.slots[i];

        if (k->addr == a)
            return 0; /* kept already */
        if (!k->addr) {
            k->addr = a;
            k->tag = tag;
            k->bytes = usable;
            kept.used++;
            kept.live++;
            filter_set(a);
            return 0;
        }
    }
}

/* Each group's tag, by its stack slot (each_group()'s k-th call is group
 * k). */
struct tagging {
    const struct gather *g;
    uint32_t *tags;
    size_t k;
    leakgate_track_tag_fn tag_of;
    void *payload;
};

static int
tag_group(const struct leakgate_track_group *grp, void *payload)
{
    struct tagging *tg = payload;

    tg->tags[tg->g->used[tg->k++]] = tg->tag_of(grp, tg->payload);
    return 0;
}

int
leakgate_track__keep_left(leakgate_track_tag_fn tag_of,
                          void (*dropped)(uint32_t tag, void *payload),
                          void *payload)
{
    struct gather g;
    struct keeping kp = {NULL, dropped, payload};
    struct tagging tg = {NULL, NULL, 0, NULL, NULL};
    uint32_t *tags = NULL;
    int rc;

    memset(&g, 0, sizeof g);
    if (atomic_load(&leakgate_track__stacks_mode) ==
            LEAKGATE_TRACK_STACKS_NONE ||
        st.failed)
        return leakgate_error__set(LEAKGATE_ENOTFOUND,
                                   "track: the window recorded no stacks");
    if (!kept.slots) {
        kept.slots =
            leakgate_util__map_zeroed(KEPT_SLOTS * sizeof *kept.slots, true);
        if (!kept.slots)
            return leakgate_error__set(LEAKGATE_ENOMEM,
                                       "track: kept objects (mmap failed)");
    }
    rc = gather_alloc(&g);
    tags = leakgate_util__calloc(STACK_SLOTS, sizeof *tags);
    if (rc == 0 && !tags)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "track: kept objects");
    if (rc == 0 && leakgate_track__each(gather_one, &g) != 0)
        rc = leakgate_error__set(LEAKGATE_ENOTFOUND,
                                 "track: an object left has no stack");
    if (rc < 0)
        goto done;
    for (size_t i = 0; i < STACK_SLOTS; i++)
        tags[i] = UINT32_MAX;
    tg.g = &g;
    tg.tags = tags;
    tg.tag_of = tag_of;
    tg.payload = payload;
    (void)each_group(&g, tag_group, &tg);
    kp.tag_of = tags;
    lock_tables();
    rc = leakgate_track__each(keep_one, &kp);
    if (kept.live > 0)
        atomic_store(&leakgate_track__watching, true);
    unlock_tables();
done:
    gather_free(&g);
    leakgate_util__free(tags);
    return rc < 0 ? rc : 0;
}

void
leakgate_track__kept_clear(void)
{
    if (!kept.slots)
        return;
    lock_tables();
    memset(kept.slots, 0, KEPT_SLOTS * sizeof *kept.slots);
    kept.used = kept.live = 0;
    /* The filter's bits for them stay: a free then only looks. */
    atomic_store(&leakgate_track__watching, wt.used > 0);
    unlock_tables();
}

size_t
leakgate_track__kept_live(void)
{
    return kept.live;
}

int
leakgate_track__kept_each(
    int (*fn)(uintptr_t a, uint32_t tag, uint64_t bytes, void *payload),
    void *payload)
{
    int rc = 0;

    /* fn never allocates with the program's allocator (reach.c's). */
    for (size_t i = 0; kept.live > 0 && i < KEPT_SLOTS && rc == 0; i++) {
        const struct kept_slot *k = &kept.slots[i];

        if (k->addr && k->addr != TOMBSTONE)
            rc = fn(k->addr, k->tag, k->bytes, payload);
    }
    return rc;
}

ALLOC_PATH void
leakgate_track__watch_free(uintptr_t a)
{
    if (!leakgate_track__watched_maybe(a))
        return; /* not watched */
    lock_tables();
    for (size_t i = watch_home(a); wt.slots; i = (i + 1) & (WATCH_SLOTS - 1)) {
        struct watch_slot *w = &wt.slots[i];

        if (w->gen != wt.gen)
            break;
        if (w->addr == a) {
            wt.released[w->owner] = true;
            wt.freed_bytes[w->owner] += w->bytes;
            wt.freed_objs[w->owner]++;
            w->addr = TOMBSTONE;
            break;
        }
    }
    kept_free(a);
    unlock_tables();
}

bool
leakgate_track__watch_released(uint32_t owner)
{
    return owner > 0 && owner < WATCH_OWNERS && wt.released[owner];
}

void
leakgate_track__watch_freed(uint32_t owner,
                            uint64_t *bytes,
                            uint64_t *objs,
                            bool *unwatched)
{
    bool ok = owner > 0 && owner < WATCH_OWNERS;

    lock_tables();
    *bytes = ok ? wt.freed_bytes[owner] : 0;
    *objs = ok ? wt.freed_objs[owner] : 0;
    *unwatched = ok && wt.overflow[owner];
    unlock_tables();
}

int
leakgate_track__held_each(int (*fn)(uint32_t owner,
                                    uint32_t entry,
                                    uint64_t bytes,
                                    uint64_t req,
                                    void *payload),
                          void *payload)
{
    struct watch_slot *copy;
    size_t n = 0;
    int rc = 0;

    if (!wt.slots || wt.used == 0)
        return 0;
    /* fn may allocate (and free): copy the live slots first. */
    copy = leakgate_util__calloc(wt.used, sizeof *copy);
    if (!copy)
        return leakgate_error__set(LEAKGATE_ENOMEM, "track: held objects");
    lock_tables();
    for (size_t k = 0; k < wt.used; k++) {
        const struct watch_slot *s = &wt.slots[wt.list[k]];

        if (s->gen == wt.gen && s->addr != TOMBSTONE)
            copy[n++] = *s;
    }
    unlock_tables();
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = fn(copy[i].owner, copy[i].entry, copy[i].bytes, copy[i].req,
                payload);
    leakgate_util__free(copy);
    return rc;
}

void
leakgate_track__watch_clear(void)
{
    /* Kept objects stay watched (below, "Kept"). */
    atomic_store(&leakgate_track__watching, kept.live > 0);
    if (!wt_ever)
        return;
    lock_tables();
    /* Every slot of an older generation is empty. */
    if (wt.used > 0) {
        uint64_t words[LEAKGATE_TRACK__WATCH_FILTER_BITS / 64] = {0};

        wt.gen++;
        /* Each word stored once, with the kept objects' bits: a free on
         * another thread never finds a kept object's bit cleared. */
        kept_filter(words);
        for (size_t k = 0; k < LEAKGATE_TRACK__WATCH_FILTER_BITS / 64; k++)
            atomic_store_explicit(&leakgate_track__watch_filter[k], words[k],
                                  memory_order_relaxed);
    }
    wt.used = 0;
    unlock_tables();
}

/* ---- Orphans: what a test's threads allocate after the test ended.
 *
 * intercept.c notes here every allocation a thread makes once the test
 * that started it is over (a detached worker that outlives its test), with
 * that test's token, its stack and its sizes; any thread's free or resize
 * of one removes it.  What is still here when the run ends is that test's
 * (gate_orphans.c).  The table never shrinks and is never cleared but by
 * leakgate_track__orphans_take(); a free looks here only while it holds
 * something (leakgate_track__orphans_live). */

#define ORPHAN_SLOTS ((size_t)1 << 18) /* at most half of them used */
#define ORPHAN_STACKS ((size_t)1 << 12)
#define ORPHAN_PCS ((size_t)1 << 18)

struct orphan_slot {
    uintptr_t addr; /* 0 empty (removal shifts the probe run back: no
                       tombstones, so a thread that allocates and frees
                       all run long never fills the table) */
    uint32_t owner;
    uint32_t stack; /* UINT32_MAX: not recorded (the stack table was full) */
    uint64_t bytes;
    uint64_t req; /* UINT64_MAX: not known */
};

static struct {
    struct orphan_slot *slots; /* leakgate_track__orphans_live used */
    struct stack_table stk;    /* one generation: kept for the process */
    bool failed;               /* mapping failed: nothing is noted */
    /* Objects that found no slot (the table was half full): owner's
     * verdict cannot be told. */
    uint64_t lost_objs;
    uint32_t lost_owner;
} orph;
atomic_size_t leakgate_track__orphans_live;

static size_t
orphan_home(uintptr_t a)
{
    return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> 46);
}
_Static_assert(ORPHAN_SLOTS == (size_t)1 << 18, "orphan_home() gives 18 bits");

static bool
orphans_map(void)
{
    if (orph.slots || orph.failed)
        return !orph.failed;
    orph.slots =
        leakgate_util__map_zeroed(ORPHAN_SLOTS * sizeof *orph.slots, true);
    orph.failed =
        !map_stack_table(&orph.stk, ORPHAN_STACKS, ORPHAN_PCS) || !orph.slots;
    orph.stk.gen = 1; /* the zeroed slots are empty */
    return !orph.failed;
}

ALLOC_PATH void
leakgate_track__orphan_note(uintptr_t a,
                            uint32_t owner,
                            size_t bytes,
                            size_t req)
{
    static atomic_bool vetoed;
    struct unwound u;
    uint32_t stack;

    /* Frees must look here: none in the lane (which does not). */
    if (!atomic_exchange(&vetoed, true))
        leakgate_track__lane_veto(LEAKGATE_TRACK__VETO_ORPHANS, true);
    unwind(&u, NULL);
    lock_tables();
    if (!orphans_map() ||
        atomic_load_explicit(&leakgate_track__orphans_live,
                             memory_order_relaxed) >= ORPHAN_SLOTS / 2) {
        if (orph.lost_objs++ == 0)
            orph.lost_owner = owner;
        unlock_tables();
        return;
    }
    stack = u.n ? intern_in(&orph.stk, u.pcs, u.n) : UINT32_MAX;
    for (size_t i = orphan_home(a);; i = (i + 1) & (ORPHAN_SLOTS - 1)) {
        struct orphan_slot *s = &orph.slots[i];

        if (s->addr == a || s->addr == 0) {
            if (s->addr == 0)
                atomic_fetch_add(&leakgate_track__orphans_live, 1);
            s->addr = a;
            s->owner = owner;
            s->stack = stack;
            s->bytes = bytes;
            s->req = req;
            break;
        }
    }
    unlock_tables();
}

/* Empty slot i and move back the entries after it in its probe run whose
 * home does not lie in (i, j]: every entry stays reachable from its home
 * (linear probing's deletion, no tombstone). */
static void
orphan_remove(size_t i)
{
    const size_t mask = ORPHAN_SLOTS - 1;

    for (size_t j = (i + 1) & mask; orph.slots[j].addr != 0;
         j = (j + 1) & mask) {
        size_t k = orphan_home(orph.slots[j].addr);

        /* k cyclically in (i, j]: the entry stays where it is. */
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        orph.slots[i] = orph.slots[j];
        i = j;
    }
    orph.slots[i].addr = 0;
    atomic_fetch_sub(&leakgate_track__orphans_live, 1);
}

ALLOC_PATH void
leakgate_track__orphan_free(uintptr_t a)
{
    lock_tables();
    for (size_t i = orphan_home(a); orph.slots;
         i = (i + 1) & (ORPHAN_SLOTS - 1)) {
        const struct orphan_slot *s = &orph.slots[i];

        if (s->addr == 0)
            break;
        if (s->addr == a) {
            orphan_remove(i);
            break;
        }
    }
    unlock_tables();
}

int
leakgate_track__orphans_take(struct leakgate_track_orphan **out,
                             size_t *n_out,
                             uint64_t *lost_objs,
                             uint32_t *lost_owner)
{
    struct leakgate_track_orphan *o;
    size_t n = 0, cap;

    *out = NULL;
    *n_out = 0;
    *lost_objs = 0;
    *lost_owner = 0;
    if (!orph.slots)
        return 0;
    /* The array is allocated outside the lock (an allocation may free, and
     * a free looks here); what threads note meanwhile beyond it is counted
     * as lost, never dropped. */
    cap = atomic_load(&leakgate_track__orphans_live);
    o = leakgate_util__calloc(cap ? cap : 1, sizeof *o);
    if (!o)
        return leakgate_error__set(LEAKGATE_ENOMEM, "track: orphans");
    lock_tables();
    for (size_t i = 0;
         i < ORPHAN_SLOTS && atomic_load_explicit(&leakgate_track__orphans_live,
                                                  memory_order_relaxed) > 0;
         i++) {
        struct orphan_slot *s = &orph.slots[i];
        const struct stack_slot *k;

        if (s->addr == 0)
            continue;
        if (n == cap) {
            if (orph.lost_objs++ == 0)
                orph.lost_owner = s->owner;
        } else {
            k = s->stack == UINT32_MAX ? NULL : &orph.stk.slots[s->stack];
            o[n++] = (struct leakgate_track_orphan){
                .owner = s->owner,
                .pcs = k ? &orph.stk.pcs[k->off] : NULL,
                .npcs = k ? k->n : 0,
                .bytes = s->bytes,
                .requested = s->req,
            };
        }
        /* Taken: judged once. */
        s->addr = 0;
        atomic_fetch_sub(&leakgate_track__orphans_live, 1);
    }
    *lost_objs = orph.lost_objs;
    *lost_owner = orph.lost_owner;
    orph.lost_objs = 0;
    unlock_tables();
    *out = o;
    *n_out = n;
    return 0;
}
