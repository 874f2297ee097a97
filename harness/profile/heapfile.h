/* SPDX-License-Identifier: MIT */
/*
 * heapfile: parse jemalloc's heap_v2 text profile (what mallctl("prof.dump")
 * writes) into memory.  Core stage 1 of the pipeline (snapshot -> diff ->
 * symbolize -> policy -> report): pure parsing of a buffer, no I/O, no
 * globals.  Format: docs/internals/heap-format.md.
 *
 * Invariants: stacks are sorted by their pcs (lexicographic, then length)
 * and unique; every count is exactly as printed; the parser never reads
 * past `len` and enforces the limits given.
 */
#ifndef LEAKGATE_HEAPFILE_H
#define LEAKGATE_HEAPFILE_H

#include <stddef.h>
#include <stdint.h>

/* One `tN:` line (or the totals of a thread in the header). */
struct leakgate_heap_thread {
    uint64_t tid;        /* N of `tN:` */
    uint64_t live_objs;  /* objects */
    uint64_t live_bytes; /* bytes (usable sizes) */
    const char *name;    /* thread name appended to the line, or NULL */
};

/* One `@ 0x.. 0x..` record. */
struct leakgate_heap_stack {
    const uintptr_t *pcs; /* return addresses, innermost first */
    size_t npcs;          /* 1..max_frames */
    uint64_t live_objs;   /* from its `t*:` line */
    uint64_t live_bytes;
    const struct leakgate_heap_thread *threads; /* its `tN:` lines */
    size_t nthreads;
};

/* One line of MAPPED_LIBRARIES (a /proc/self/maps line). */
struct leakgate_heap_mapping {
    uintptr_t start;  /* inclusive */
    uintptr_t end;    /* exclusive */
    uint64_t offset;  /* file offset of start */
    char perms[5];    /* "r-xp" */
    const char *path; /* "" for anonymous mappings */
};

struct leakgate_heap {
    uint64_t sample_period; /* N of heap_v2/N: 1 = every allocation */
    uint64_t total_objs;    /* header `t*:` */
    uint64_t total_bytes;
    const struct leakgate_heap_thread *threads; /* header `tN:` lines */
    size_t nthreads;
    const struct leakgate_heap_stack *stacks; /* sorted, see above */
    size_t nstacks;
    const struct leakgate_heap_mapping *maps; /* in file order */
    size_t nmaps;
    void *priv; /* parser-owned storage */
};

/* Parser limits; a value of 0 means "the default" given in brackets. */
struct leakgate_heap_limits {
    size_t max_size;   /* whole text [1 GiB] */
    size_t max_line;   /* one line [64 KiB] */
    size_t max_frames; /* pcs per stack [256; jemalloc prints <= 128] */
    size_t max_stacks; /* records [4,000,000] */
};

/*
 * Parse `len` bytes of heap_v2 text.  `name` (a path or "<memfd>") is used
 * in error details.  limits may be NULL (all defaults).
 * Returns 0; LEAKGATE_EFORMAT with "NAME:LINE: what" in the detail;
 * LEAKGATE_ETOOBIG naming the limit; LEAKGATE_ENOMEM.  *out is NULL on
 * failure.  The text need not be NUL-terminated and may be freed after.
 */
int leakgate_heapfile__parse(struct leakgate_heap **out,
                             const char *text,
                             size_t len,
                             const char *name,
                             const struct leakgate_heap_limits *limits);

/* Free a parsed heap; NULL is a no-op. */
void leakgate_heapfile__free(struct leakgate_heap *heap);

/* Order two stacks (return addresses, innermost first): by address, frame
 * by frame, then the shorter first.  Cannot fail. */
int leakgate_heapfile__cmp_pcs(const uintptr_t *a,
                               size_t na,
                               const uintptr_t *b,
                               size_t nb);

#endif
