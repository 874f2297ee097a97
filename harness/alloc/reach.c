/* SPDX-License-Identifier: MIT */
/*
 * reach: the reachability scan of what a window left (reach.h).
 *
 * Marking: every root word is looked up in the live map (jesize.h): the
 * class byte at or below it, at most 64 KiB below, names the object that
 * holds it; an object found the first time is pushed and its words are
 * scanned in turn.  The objects the window left are kept in an array
 * found by address through a direct index per 16 MiB of addresses (their
 * kind beside them); the
 * heap's other objects,
 * once seen, in a hashed set.  Then the left objects no root reached
 * are lost: those another of them points to are indirect, found by a
 * flood from each lost object nothing points to, then from each one left
 * (cycles).  Everything lives on leakgate's own heap (util.h), which the
 * live map does not hold, and the scan never allocates with malloc.
 */
#include "reach.h"

#include <link.h>
#include <malloc.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "heap.h"
#include "jesize.h"
#include "reach_stop.h"
#include "track.h"
#include "util.h"

/* The C library's: the main thread's stack end at the program's start. */
extern void *__libc_stack_end;

#define LEAF_MASK (((uintptr_t)1 << LEAKGATE_JESIZE__LEAF_SHIFT) - 1)
#define GRAIN LEAKGATE_JESIZE__GRAIN_SHIFT
#define BACK_GRANULES ((size_t)4096) /* an interior pointer: 64 KiB in */
#define MAX_EXCLUDED 8

/* The objects a window left in one leaf of the live map (16 MiB of
 * addresses): for each granule, 1 + the position of the object that
 * starts there (0: none).  A direct table, no probing: what a scan finds
 * costs one load whatever the addresses. */
#define LEAF_GRANULES ((size_t)1 << (LEAKGATE_JESIZE__LEAF_SHIFT - GRAIN))
struct index_leaf {
    uintptr_t leaf; /* address >> LEAF_SHIFT */
    uint32_t *slot; /* LEAF_GRANULES of them, mapped */
};

/* The last classification. */
static struct {
    uintptr_t *objs; /* the objects the window left */
    unsigned char *kind;
    uint32_t *tag;   /* kept objects: each one's tag (track.h) */
    uint64_t *bytes; /* ... and usable bytes */
    bool any_left;   /* any object may be one of objs (else: marked) */
    struct index_leaf *leaves; /* the leaves that hold them */
    size_t nleaves, cap, last;
    size_t n;
    size_t cursor; /* leakgate_reach__kind()'s next position */
    uint32_t gen;  /* its window's generation; 0: none */
} cl;

static struct {
    uintptr_t frame; /* the live stack starts here (0: not noted) */
    uintptr_t end;   /* ... and ends here (0: find it) */
} stk;

static struct {
    uintptr_t lo, hi;
} excluded[MAX_EXCLUDED];
static size_t nexcluded;

void
leakgate_reach__stack_from(const void *frame)
{
    stk.frame = (uintptr_t)frame;
}

void
leakgate_reach__not_root(const void *p, size_t n)
{
    for (size_t i = 0; i < nexcluded; i++)
        if (excluded[i].lo == (uintptr_t)p)
            return;
    if (nexcluded < MAX_EXCLUDED) {
        excluded[nexcluded].lo = (uintptr_t)p;
        excluded[nexcluded].hi = (uintptr_t)p + n;
        nexcluded++;
    }
}

/* ---- The scan's state ---- */

struct work {
    uintptr_t a;
    size_t n; /* bytes to scan */
    unsigned char kind;
};

struct scan {
    struct work *todo;
    size_t ntodo, cap;
    uintptr_t *seen; /* the heap's other objects marked: a hashed set */
    size_t seen_mask, nseen;
    int seen_store;  /* which of st_seen holds it */
    uint32_t *flood; /* indexes of left objects, while flooding */
    size_t nflood;
    bool failed;
    bool unsure;  /* leakgate's own objects not all known (heap.h) */
    bool faulted; /* a read faulted (on_fault) */
};

/* The scan's own memory is mapped, never had from an allocator: other
 * threads may be stopped inside one, holding its lock (reach_stop.h). */
static void *
area(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    return p == MAP_FAILED ? NULL : p;
}

static void
area_free(void *p, size_t bytes)
{
    if (p && bytes)
        munmap(p, bytes);
}

/* The scan's memory is kept from one scan to the next, grown when a scan
 * needs more: a scan maps nothing new unless it needs more than any
 * before it (a hole the program's memory left is then not filled with
 * leakgate's, where a stale pointer of the program would find it). */
struct store {
    void *p;
    size_t bytes;
};
static struct store st_todo, st_roots, st_flood, st_seen[2];

/* At least bytes of st, its contents kept when keep (NULL: no memory;
 * st is as it was). */
static void *
store_get(struct store *st, size_t bytes, bool keep)
{
    size_t want = st->bytes ? st->bytes : 4096;
    void *p;

    if (st->bytes >= bytes)
        return st->p;
    while (want < bytes)
        want *= 2;
    p = area(want);
    if (!p)
        return NULL;
    if (keep && st->p)
        memcpy(p, st->p, st->bytes);
    area_free(st->p, st->bytes);
    st->p = p;
    st->bytes = want;
    return p;
}

/* [a, a + n) overlaps the scan's own memory st. */
static bool
in_store(uintptr_t a, size_t n, const struct store *st)
{
    uintptr_t lo = (uintptr_t)st->p;

    return st->p && a < lo + st->bytes && lo < a + n;
}

/* leakgate's own objects in the program's heap (heap.h), as the scan
 * began. */
static struct {
    const void *p[LEAKGATE_HEAP_LARGE_MAX];
    size_t n;
    bool known;
} own;

/* The bytes of the live object at a (usable n) that can be read: in a
 * lean process jemalloc's class can be larger than the C library's
 * object. */
static size_t
readable(uintptr_t a, size_t n)
{
    void *p = (void *)a;
    size_t real;

    if (!leakgate_jesize__lean())
        return n;
    real = malloc_usable_size(p);
    return real < n ? real : n;
}

/*
 * Which blocks of 64 granules (1 KiB of addresses) of a leaf of the live
 * map hold an object's start, built lazily while a scan runs (the map
 * does not change under it: the other threads are stopped or absent, and
 * the scan allocates nothing the wrappers see): a bit per block, a word
 * per 64 blocks, each word made the first time a look-up needs it from
 * the 4 KiB of class bytes it sums.  A word that points nowhere near an
 * object's start (into a large buffer, into a library beside the heap)
 * then costs a few loads instead of a walk back over 64 KiB of the map.
 */
#define BLOCK_SHIFT 6
#define SUM_WORDS (LEAF_GRANULES >> BLOCK_SHIFT >> 6)
struct summary {
    const unsigned char *leaf;
    uint64_t made[SUM_WORDS / 64]; /* which words of sum are made */
    uint64_t sum[SUM_WORDS];
};
#define MAX_SUMMARIES 64
static struct {
    struct summary *s; /* MAX_SUMMARIES of them, mapped (area()) */
    size_t n, last;
} sums;

static void *area(size_t bytes);

static struct summary *
summary_of(const unsigned char *leaf)
{
    if (sums.last < sums.n && sums.s[sums.last].leaf == leaf)
        return &sums.s[sums.last];
    for (size_t i = 0; i < sums.n; i++)
        if (sums.s[i].leaf == leaf)
            return &sums.s[sums.last = i];
    if (!sums.s && !(sums.s = area(MAX_SUMMARIES * sizeof *sums.s)))
        return NULL;
    if (sums.n == MAX_SUMMARIES)
        return NULL; /* the walk, as without one */
    memset(&sums.s[sums.n], 0, sizeof *sums.s);
    sums.s[sums.n].leaf = leaf;
    return &sums.s[sums.last = sums.n++];
}

/* Summary word w of sm, made when needed. */
static uint64_t
sum_word(struct summary *sm, size_t w)
{
    if (!(sm->made[w / 64] & (UINT64_C(1) << (w % 64)))) {
        const unsigned char *base = sm->leaf + (w << (BLOCK_SHIFT + 6));
        uint64_t bits = 0;

        for (size_t b = 0; b < 64; b++) {
            const unsigned char *blk = base + (b << BLOCK_SHIFT);
            uint64_t any = 0, x;

            for (size_t k = 0; k < (1u << BLOCK_SHIFT); k += 8) {
                memcpy(&x, blk + k, sizeof x);
                any |= x;
            }
            if (any & UINT64_C(0x7f7f7f7f7f7f7f7f))
                bits |= UINT64_C(1) << b;
        }
        sm->sum[w] = bits;
        sm->made[w / 64] |= UINT64_C(1) << (w % 64);
    }
    return sm->sum[w];
}

/* The highest granule in [stop, g] of leaf whose class byte is set, or
 * SIZE_MAX. */
static size_t
nearest_start(const unsigned char *leaf, size_t g, size_t stop)
{
    struct summary *sm = summary_of(leaf);
    size_t b = g >> BLOCK_SHIFT;

    for (;;) {
        size_t lo = b << BLOCK_SHIFT, top = lo + (1u << BLOCK_SHIFT) - 1;
        uint64_t w;

        if (top > g)
            top = g;
        if (lo < stop)
            lo = stop;
        /* This block's granules, from the top down. */
        if (!sm || (sum_word(sm, b >> 6) >> (b & 63) & 1)) {
            for (size_t k = top + 1; k-- > lo;)
                if (__atomic_load_n(&leaf[k], __ATOMIC_RELAXED) &
                    LEAKGATE_JESIZE__CLASS)
                    return k;
        }
        if (lo == stop || b == 0)
            return SIZE_MAX;
        b--;
        if (!sm)
            continue;
        /* The next block below with a start, by the summary's bits. */
        for (;;) {
            w = sum_word(sm, b >> 6) & (~UINT64_C(0) >> (63 - (b & 63)));
            if (w) {
                b = (b & ~(size_t)63) + (size_t)(63 - __builtin_clzll(w));
                break;
            }
            /* None in this word: the word below, unless it is all
             * below stop. */
            if (b < 64 || (((b & ~(size_t)63) - 1) << BLOCK_SHIFT) +
                                  (1u << BLOCK_SHIFT) - 1 <
                              stop)
                return SIZE_MAX;
            b = (b & ~(size_t)63) - 1;
        }
        if ((b << BLOCK_SHIFT) + (1u << BLOCK_SHIFT) - 1 < stop)
            return SIZE_MAX;
    }
}

/* The live object that holds address v: its start (*size: its usable
 * bytes; *left: it may be one the window left), or 0. */
static uintptr_t
object_at(uintptr_t v, size_t *size, bool *left)
{
    unsigned char *leaf, raw;
    size_t g, stop, k, n;
    uintptr_t s;

    if (v < 4096 || v >> 47)
        return 0;
    leaf = leakgate_jesize__leaf(v);
    if (!leaf)
        return 0;
    g = (v & LEAF_MASK) >> GRAIN;
    stop = g > BACK_GRANULES ? g - BACK_GRANULES : 0;
    /* The nearest start at or below v is the only object that can hold
     * it: objects do not overlap. */
    k = nearest_start(leaf, g, stop);
    if (k == SIZE_MAX)
        return 0;
    raw = __atomic_load_n(&leaf[k], __ATOMIC_RELAXED);
    s = (v & ~LEAF_MASK) + ((uintptr_t)k << GRAIN);
    n = leakgate_jesize__decode(raw & LEAKGATE_JESIZE__CLASS);
    if (v - s >= n)
        return 0;
    /* Inside: in the C library's heap the object may be smaller than its
     * jemalloc class, and the last 8 bytes of its chunk (the library's
     * usable size, whatever the class) are the next chunk's header, what
     * the library's own bookkeeping points to (the top chunk, the free
     * lists): not a reference. */
    if (v != s && leakgate_jesize__lean()) {
        size_t lib = malloc_usable_size((void *)s);

        if (v - s >= (lib < n ? lib : n) || (lib >= 8 && v == s + lib - 8))
            return 0;
    }
    *size = n;
    /* In a lean process the tracker's mark says which objects the window
     * left: the others need no look-up. */
    *left = cl.any_left || (raw & LEAKGATE_JESIZE__MARK);
    return s;
}

/* The index leaf of address a (made when create), or NULL. */
static struct index_leaf *
index_leaf(uintptr_t a, bool create)
{
    uintptr_t leaf = a >> LEAKGATE_JESIZE__LEAF_SHIFT;

    if (cl.last < cl.nleaves && cl.leaves[cl.last].leaf == leaf)
        return &cl.leaves[cl.last];
    for (size_t k = 0; k < cl.nleaves; k++)
        if (cl.leaves[k].leaf == leaf) {
            cl.last = k;
            return &cl.leaves[k];
        }
    if (!create)
        return NULL;
    if (cl.nleaves == cl.cap) {
        size_t cap = cl.cap ? cl.cap * 2 : 8;
        struct index_leaf *grown =
            leakgate_util__realloc(cl.leaves, cap * sizeof *grown);

        if (!grown)
            return NULL;
        cl.leaves = grown;
        cl.cap = cap;
    }
    cl.leaves[cl.nleaves].slot =
        leakgate_util__map_zeroed(LEAF_GRANULES * sizeof(uint32_t), false);
    if (!cl.leaves[cl.nleaves].slot)
        return NULL;
    cl.leaves[cl.nleaves].leaf = leaf;
    cl.last = cl.nleaves;
    return &cl.leaves[cl.nleaves++];
}

/* The index of the left object that starts at a, or SIZE_MAX. */
static size_t
left_index(uintptr_t a)
{
    const struct index_leaf *l = index_leaf(a, false);
    uint32_t i = l ? l->slot[(a & LEAF_MASK) >> GRAIN] : 0;

    return i && cl.objs[i - 1] == a ? i - 1 : SIZE_MAX;
}

static bool
push(struct scan *s, uintptr_t a, size_t n, unsigned char kind)
{
    if (s->ntodo == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        struct work *grown = store_get(&st_todo, cap * sizeof *grown, true);

        if (!grown)
            return !(s->failed = true);
        s->todo = grown;
        s->cap = cap;
    }
    s->todo[s->ntodo].a = a;
    s->todo[s->ntodo].n = n;
    s->todo[s->ntodo].kind = kind;
    s->ntodo++;
    return true;
}

static size_t
seen_home(const struct scan *s, uintptr_t a)
{
    return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> 17) & s->seen_mask;
}

/* Add a to the set of the heap's marked objects; false when it was in. */
static bool
seen_add(struct scan *s, uintptr_t a)
{
    size_t i;

    if ((s->nseen + 1) * 2 > s->seen_mask + 1) {
        size_t slots = (s->seen_mask + 1) * 2;
        int other = 1 - s->seen_store;
        uintptr_t *old = s->seen,
                  *grown =
                      store_get(&st_seen[other], slots * sizeof *grown, false);
        size_t old_slots = s->seen_mask + 1;

        if (!grown) {
            s->failed = true;
            return false;
        }
        memset(grown, 0, slots * sizeof *grown);
        s->seen_store = other;
        s->seen = grown;
        s->seen_mask = slots - 1;
        for (size_t k = 0; k < old_slots; k++)
            if (old[k]) {
                i = seen_home(s, old[k]);
                while (s->seen[i])
                    i = (i + 1) & s->seen_mask;
                s->seen[i] = old[k];
            }
    }
    i = seen_home(s, a);
    while (s->seen[i]) {
        if (s->seen[i] == a)
            return false;
        i = (i + 1) & s->seen_mask;
    }
    s->seen[i] = a;
    s->nseen++;
    return true;
}

/* The object at a is leakgate's own (a table of the program's addresses:
 * not a reference the program holds). */
static bool
own_object(struct scan *s, uintptr_t a, size_t n)
{
    /* The scan's own memory, where a stale pointer may point. */
    if (in_store(a, n, &st_todo) || in_store(a, n, &st_roots) ||
        in_store(a, n, &st_flood) || in_store(a, n, &st_seen[0]) ||
        in_store(a, n, &st_seen[1]) ||
        (sums.s && a < (uintptr_t)(sums.s + MAX_SUMMARIES) &&
         (uintptr_t)sums.s < a + n))
        return true;
    s->unsure |= !own.known;
    for (size_t i = 0; i < own.n; i++)
        if ((uintptr_t)own.p[i] == a)
            return true;
    return false;
}

/* The object that holds v, reached from a root of kind: marked and
 * pushed the first time. */
static void
mark(struct scan *s, uintptr_t v, unsigned char kind)
{
    size_t n, i;
    bool left;
    uintptr_t a = object_at(v, &n, &left);

    if (!a)
        return;
    i = left ? left_index(a) : SIZE_MAX;
    if (i != SIZE_MAX) {
        if (cl.kind[i])
            return;
        cl.kind[i] = kind;
    } else if (!seen_add(s, a) || own_object(s, a, n))
        return;
    (void)push(s, a, readable(a, n), kind);
}

/* The words of [lo, hi), leakgate's own ranges apart. */
static void
scan_words(struct scan *s, uintptr_t lo, uintptr_t hi, unsigned char kind)
{
    lo = (lo + 7) & ~(uintptr_t)7;
    for (uintptr_t p = lo; p + 8 <= hi; p += 8) {
        uintptr_t v;

        memcpy(&v, (const void *)p, sizeof v);
        if (v >= 4096)
            mark(s, v, kind);
    }
}

static void
scan_root(struct scan *s, uintptr_t lo, uintptr_t hi, unsigned char kind)
{
    for (size_t i = 0; i < nexcluded && lo < hi; i++) {
        if (excluded[i].hi <= lo || excluded[i].lo >= hi)
            continue;
        if (excluded[i].lo > lo)
            scan_root(s, lo, excluded[i].lo, kind);
        lo = excluded[i].hi;
    }
    if (lo < hi)
        scan_words(s, lo, hi, kind);
}

/* Scan what is pushed until nothing is. */
static void
drain(struct scan *s)
{
    while (s->ntodo > 0 && !s->failed) {
        struct work w = s->todo[--s->ntodo];

        scan_words(s, w.a, w.a + w.n, w.kind);
    }
}

/* A range of roots, and the kind of root it is. */
struct root {
    uintptr_t lo, hi;
    unsigned char kind;
    bool raw; /* in an excluded range, a root all the same */
};

struct roots {
    struct root *r;
    size_t n, cap;
    bool failed;
    uintptr_t tls_lo; /* the calling thread's lowest static TLS block */
};

static void
root_add(struct roots *rs, uintptr_t lo, uintptr_t hi, unsigned char kind)
{
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 64;
        struct root *grown = store_get(&st_roots, cap * sizeof *grown, true);

        if (!grown) {
            rs->failed = true;
            return;
        }
        rs->r = grown;
        rs->cap = cap;
    }
    rs->r[rs->n].lo = lo;
    rs->r[rs->n].hi = hi;
    rs->r[rs->n].kind = kind;
    rs->r[rs->n].raw = false;
    rs->n++;
}

/* The loaded object is leakgate's own shared object (libleakgate-preload.so
 * under `leakgate run`, or a shared libleakgate): its code holds this
 * function.  Linked into the program, leakgate's data is the program's
 * segment's. */
static bool
leakgate_module(const struct dl_phdr_info *info)
{
    uintptr_t here = (uintptr_t)&leakgate_reach__classify;

    if (!info->dlpi_name || !info->dlpi_name[0]) /* the program */
        return false;
    for (size_t k = 0; k < info->dlpi_phnum; k++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && here >= lo &&
            here - lo < ph->p_memsz)
            return true;
    }
    return false;
}

/* The writable data and the thread-local storage of a loaded object:
 * noted, scanned after the dynamic linker's lock is let go.  Not the
 * data of leakgate's own shared object: its tables (a megabyte, most of
 * a scan's words) hold leakgate's references, never the program's. */
static int
phdr_root(struct dl_phdr_info *info, size_t size, void *payload)
{
    struct roots *rs = payload;
    bool own_module = leakgate_module(info);

    (void)size;
    for (size_t k = 0; k < info->dlpi_phnum; k++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[k];

        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && !own_module) {
            uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

            root_add(rs, lo, lo + ph->p_memsz, LEAKGATE_REACH_GLOBAL);
        } else if (ph->p_type == PT_TLS && info->dlpi_tls_data) {
            uintptr_t lo = (uintptr_t)info->dlpi_tls_data;
            uintptr_t tp = (uintptr_t)pthread_self();

            root_add(rs, lo, lo + ph->p_memsz, LEAKGATE_REACH_TLS);
            /* Static TLS lies below the thread pointer (x86-64): how far
             * down tells where other threads' start (reach_stop.h). */
            if (lo < tp && tp - lo < ((uintptr_t)16 << 20) &&
                (!rs->tls_lo || lo < rs->tls_lo))
                rs->tls_lo = lo;
        }
    }
    return 0;
}

/* A fault while the scan reads memory (an object the live map holds by
 * mistake, whose memory went back to the system) ends the scan: the kinds
 * are then not known, the replay goes on. */
static sigjmp_buf *volatile fault_guard;

static void
on_fault(int sig)
{
    sigjmp_buf *g = fault_guard;

    if (g)
        siglongjmp(*g, sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The process's threads now (0: unknown), from /proc/self/stat. */
static long
threads_now(void)
{
    char buf[1024], *p;
    long n = 0;
    ssize_t len;
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return 0;
    len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0)
        return 0;
    buf[len] = '\0';
    /* After the command name's ')': state is field 3, threads field 20. */
    p = strrchr(buf, ')');
    for (int field = 2; p && field < 20; field++)
        p = strchr(p + 1, ' ');
    if (p)
        n = strtol(p + 1, NULL, 10);
    return n;
}

/* The size of the C library's thread descriptor (struct pthread, at
 * pthread_self()), as it tells its debugger library; 0: not known. */
static size_t
descriptor_size(void)
{
    static int looked;
    static size_t size;

    if (!looked) {
        const uint32_t *p = dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread");

        size = p && *p < 65536 ? *p : 0;
        looked = 1;
    }
    return size;
}

/* The end of the calling thread's stack (0: unknown). */
static uintptr_t
stack_end(void)
{
    pthread_attr_t attr;
    void *addr = NULL;
    size_t size = 0;

    if (getpid() == (pid_t)syscall(SYS_gettid))
        return (uintptr_t)__libc_stack_end;
    /* Another thread's attributes are read without an allocation. */
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return 0;
    if (pthread_attr_getstack(&attr, &addr, &size) != 0)
        size = 0;
    pthread_attr_destroy(&attr);
    return size ? (uintptr_t)addr + size : 0;
}

/* The usable size of the live object at a, from the live map. */
static size_t
size_of(uintptr_t a)
{
    const unsigned char *b = leakgate_jesize__byte(a, false);

    return b ? leakgate_jesize__decode(__atomic_load_n(b, __ATOMIC_RELAXED))
             : 0;
}

/* The left object the word at p points into (SIZE_MAX: none). */
static size_t
left_target(uintptr_t p)
{
    uintptr_t v, a;
    size_t n;
    bool left;

    memcpy(&v, (const void *)p, sizeof v);
    if (v < 4096 || !(a = object_at(v, &n, &left)) || !left)
        return SIZE_MAX;
    return left_index(a);
}

/* Lost objects: the left ones no root reached (kind 0), each scanned
 * once.  Each not reached yet is lost and floods what it reaches and
 * nothing reached before as indirectly lost; one it reaches that was
 * lost (nothing before it reached it) is only indirectly lost. */
static void
classify_lost(struct scan *s)
{
    for (size_t first = 0; first < cl.n; first++) {
        if (cl.kind[first])
            continue;
        cl.kind[first] = LEAKGATE_REACH_LOST;
        s->nflood = 0;
        s->flood[s->nflood++] = (uint32_t)first;
        while (s->nflood > 0) {
            size_t x = s->flood[--s->nflood];
            uintptr_t lo = cl.objs[x];
            uintptr_t hi = lo + readable(lo, size_of(lo));

            for (uintptr_t p = lo; p + 8 <= hi; p += 8) {
                size_t j = left_target(p);

                if (j == SIZE_MAX || j == first)
                    continue;
                if (cl.kind[j] == LEAKGATE_REACH_LOST) {
                    cl.kind[j] = LEAKGATE_REACH_INDIRECT; /* scanned */
                } else if (!cl.kind[j]) {
                    cl.kind[j] = LEAKGATE_REACH_INDIRECT;
                    s->flood[s->nflood++] = (uint32_t)j;
                }
            }
        }
    }
}

/* ---- The objects the window left ---- */

struct gathering {
    size_t n;
};

static int
count_one(const void *ptr, size_t usable, void *payload)
{
    struct gathering *g = payload;

    (void)ptr;
    (void)usable;
    g->n++;
    return 0;
}

static int
add_one(const void *ptr, size_t usable, void *payload)
{
    struct gathering *g = payload;

    (void)usable;
    cl.objs[g->n] = (uintptr_t)ptr;
    g->n++;
    return 0;
}

/* The kept objects (track.h, "Keep"), as leakgate_reach__classify_kept()'s
 * caller lists them. */
static leakgate_reach_each_fn kept_each;

static int
count_kept(uintptr_t a, uint32_t tag, uint64_t bytes, void *payload)
{
    (void)a;
    (void)tag;
    (void)bytes;
    ((struct gathering *)payload)->n++;
    return 0;
}

static int
add_kept(uintptr_t a, uint32_t tag, uint64_t bytes, void *payload)
{
    struct gathering *g = payload;

    cl.objs[g->n] = a;
    cl.tag[g->n] = tag;
    cl.bytes[g->n] = bytes;
    g->n++;
    return 0;
}

static void
forget_classification(void)
{
    leakgate_util__free(cl.objs);
    leakgate_util__free(cl.kind);
    leakgate_util__free(cl.tag);
    leakgate_util__free(cl.bytes);
    for (size_t k = 0; k < cl.nleaves; k++)
        munmap(cl.leaves[k].slot, LEAF_GRANULES * sizeof(uint32_t));
    leakgate_util__free(cl.leaves);
    memset(&cl, 0, sizeof cl);
}

/* Stop the other threads (reach_stop.h) and add their roots to rs:
 * 1 when some are stopped, 0 when there were none, -1 when they could
 * not be stopped. */
static int
stop_others(struct roots *rs)
{
    static struct leakgate_reach_stop_range ranges[4 * 512];
    const void *table;
    size_t n = 0, bytes;
    uintptr_t tp = (uintptr_t)pthread_self();

    /* The saved registers are roots of their own kind, not globals. */
    leakgate_reach__stop_table(&table, &bytes);
    leakgate_reach__not_root(table, bytes);
    if (leakgate_reach__stop_others(ranges, sizeof ranges / sizeof *ranges, &n,
                                    rs->tls_lo ? tp - rs->tls_lo : 0) < 0)
        return -1;
    for (size_t i = 0; i < n && !rs->failed; i++) {
        root_add(rs, ranges[i].lo, ranges[i].hi,
                 ranges[i].tls ? LEAKGATE_REACH_TLS : LEAKGATE_REACH_STACK);
        if (!rs->failed)
            rs->r[rs->n - 1].raw = ranges[i].regs != 0;
    }
    if (rs->failed) {
        leakgate_reach__resume_others();
        return -1;
    }
    return n > 0;
}

/* Classify the objects the last window left, or (kept) the kept ones. */
static int
classify(bool kept)
{
    struct gathering g = {0};
    static struct scan s;
    static struct roots rs;
    static struct sigaction old_segv, old_bus;
    struct sigaction on;
    sigjmp_buf env;
    uintptr_t end;
    int rc;
    volatile int stopped = 0; /* read after a fault's siglongjmp */

    forget_classification();
    memset(&rs, 0, sizeof rs);
    rs.r = st_roots.p;
    rs.cap = st_roots.bytes / sizeof *rs.r;
    sums.n = 0; /* the map changed since the last scan */
    if (!leakgate_jesize__live() || !stk.frame)
        return leakgate_error__set(LEAKGATE_ESTATE,
                                   "reach: no live map or no stack noted");
    rc = kept ? kept_each(count_kept, &g) : leakgate_track__each(count_one, &g);
    if (rc != 0)
        return rc;
    if (g.n >= UINT32_MAX / 4)
        return leakgate_error__set(LEAKGATE_ENOMEM, "reach: too many objects");

    cl.objs = leakgate_util__calloc(g.n ? g.n : 1, sizeof *cl.objs);
    cl.kind = leakgate_util__calloc(g.n ? g.n : 1, 1);
    /* In a lean process the tracker's mark says which objects the window
     * left (object_at()); kept ones carry no mark. */
    cl.any_left = kept || !leakgate_jesize__lean();
    if (kept) {
        cl.tag = leakgate_util__calloc(g.n ? g.n : 1, sizeof *cl.tag);
        cl.bytes = leakgate_util__calloc(g.n ? g.n : 1, sizeof *cl.bytes);
    }
    memset(&s, 0, sizeof s);
    s.seen_mask = 1023;
    s.seen = store_get(&st_seen[0], (s.seen_mask + 1) * sizeof *s.seen, false);
    if (s.seen)
        memset(s.seen, 0, (s.seen_mask + 1) * sizeof *s.seen);
    s.flood = store_get(&st_flood, (g.n ? g.n : 1) * sizeof *s.flood, false);
    s.todo = st_todo.p;
    s.cap = st_todo.bytes / sizeof *s.todo;
    if (!cl.objs || !cl.kind || !s.seen || !s.flood ||
        (kept && (!cl.tag || !cl.bytes))) {
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "reach: out of memory");
        goto done;
    }
    g.n = 0;
    if (kept)
        (void)kept_each(add_kept, &g);
    else
        (void)leakgate_track__each(add_one, &g);
    cl.n = g.n;
    for (size_t i = 0; i < cl.n && rc == 0; i++) {
        struct index_leaf *l = index_leaf(cl.objs[i], true);

        if (l)
            l->slot[(cl.objs[i] & LEAF_MASK) >> GRAIN] = (uint32_t)(i + 1);
        else
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "reach: out of memory");
    }
    if (rc != 0)
        goto done;
    dl_iterate_phdr(phdr_root, &rs);
    end = stack_end();
    if (end > stk.frame && end - stk.frame < ((uintptr_t)1 << 30))
        root_add(&rs, stk.frame, end, LEAKGATE_REACH_STACK);
    /* The thread's descriptor holds its pthread_setspecific() values
     * (and the blocks of those past the first 32 keys). */
    if (descriptor_size() > 0)
        root_add(&rs, (uintptr_t)pthread_self(),
                 (uintptr_t)pthread_self() + descriptor_size(),
                 LEAKGATE_REACH_TLS);
    own.n =
        leakgate_heap__large_list(own.p, LEAKGATE_HEAP_LARGE_MAX, &own.known);
    /* The other threads held still, their registers, stacks and TLS
     * roots too (reach_stop.h); the scan allocates nothing from here on. */
    if (threads_now() != 1 && (stopped = stop_others(&rs)) < 0) {
        rc = leakgate_error__set(LEAKGATE_ESTATE,
                                 "reach: other threads could not be held "
                                 "still");
        goto done;
    }
    memset(&on, 0, sizeof on);
    on.sa_handler = on_fault;
    sigemptyset(&on.sa_mask);
    sigaction(SIGSEGV, &on, &old_segv);
    sigaction(SIGBUS, &on, &old_bus);
    if (sigsetjmp(env, 1) == 0) {
        fault_guard = &env;
        /* Globals, thread-local storage, the live stack: each drained
         * before the next, so that an object is named by the first kind
         * of root that reaches it. */
        for (unsigned char kind = LEAKGATE_REACH_GLOBAL;
             kind <= LEAKGATE_REACH_STACK; kind++) {
            for (size_t k = 0; k < rs.n; k++) {
                if (rs.r[k].kind != kind)
                    continue;
                if (rs.r[k].raw)
                    scan_words(&s, rs.r[k].lo, rs.r[k].hi, kind);
                else
                    scan_root(&s, rs.r[k].lo, rs.r[k].hi, kind);
            }
            drain(&s);
        }
        if (!s.failed && !s.unsure && !rs.failed)
            classify_lost(&s);
    } else {
        s.faulted = true;
    }
    fault_guard = NULL;
    if (stopped > 0)
        leakgate_reach__resume_others();
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
    if (s.faulted) {
        rc = leakgate_error__set(LEAKGATE_EIO,
                                 "reach: a fault while reading the heap");
        goto done;
    }
    if (s.failed || rs.failed) {
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "reach: out of memory");
        goto done;
    }
    if (s.unsure) {
        rc = leakgate_error__set(LEAKGATE_ENOTFOUND,
                                 "reach: leakgate's own objects not known");
        goto done;
    }
    cl.gen = leakgate_track__window_gen();
done:
    if (rc != 0)
        forget_classification();
    return rc;
}

int
leakgate_reach__classify(void)
{
    return classify(false);
}

int
leakgate_reach__classify_kept(const void *frame,
                              leakgate_reach_each_fn each,
                              leakgate_reach_kept_fn fn,
                              void *payload)
{
    uintptr_t window_frame = stk.frame;
    int rc;

    kept_each = each;
    stk.frame = (uintptr_t)frame;
    rc = classify(true);
    stk.frame = window_frame;
    for (size_t i = 0; rc == 0 && i < cl.n; i++)
        rc = fn(cl.tag[i], cl.bytes[i], (enum leakgate_reach_kind)cl.kind[i],
                payload);
    forget_classification();
    return rc;
}

enum leakgate_reach_kind
leakgate_reach__kind(uintptr_t a)
{
    size_t i;

    if (!cl.gen || cl.gen != leakgate_track__window_gen())
        return LEAKGATE_REACH_UNKNOWN;
    /* The tracker lists the objects in one order: when they are grouped,
     * the next one is the one asked for. */
    i = cl.cursor < cl.n && cl.objs[cl.cursor] == a ? cl.cursor : left_index(a);
    if (i == SIZE_MAX)
        return LEAKGATE_REACH_UNKNOWN;
    cl.cursor = i + 1;
    return (enum leakgate_reach_kind)cl.kind[i];
}
