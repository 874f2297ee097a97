/* SPDX-License-Identifier: MIT */
/*
 * profile: control jemalloc's heap profiler.  Adapter stage 1 (snapshot);
 * the only module that talks to jemalloc (mallctl, looked up in the
 * process at run time: a lean process has no jemalloc).
 *
 * Linking this module defines `malloc_conf`, which turns exact profiling
 * on at jemalloc's start-up (every allocation sampled, raw counts) with
 * recording inactive: the gate activates recording only inside measured
 * windows, so leakgate's own work between windows is never recorded.  A
 * user's MALLOC_CONF still wins per key.
 *
 * Dumps go to an in-memory file (memfd, or an unlinked temporary file when
 * memfd is unavailable) that is read back outside the window.
 */
#ifndef LEAKGATE_PROFILE_H
#define LEAKGATE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

#include "util.h"

/* Is jemalloc in this process (its mallctl resolves)?  A lean process
 * (docs/architecture.md "Lean processes") has none.  Cannot fail. */
bool leakgate_profile__jemalloc(void);

/*
 * A sanitizer that replaces the allocator is in this process: its name
 * and flag ("AddressSanitizer (-fsanitize=address)"), or NULL.  Such a
 * sanitizer's malloc serves the program, and neither jemalloc's profiling
 * nor leakgate's wrappers can measure what a test keeps under it; UBSan
 * alone keeps the C library's malloc (NULL).  Cannot fail.
 */
const char *leakgate_profile__sanitizer(void);
/* This process runs under valgrind, which replaces malloc at run time
 * (its preloaded vgpreload_* objects).  Cannot fail. */
bool leakgate_profile__valgrind(void);
/* Its mallctl (NULL: none), for the library it is defined in. */
const void *leakgate_profile__mallctl(void);

/* What jemalloc says about profiling in this process. */
struct leakgate_profile_info {
    unsigned int lg_sample; /* opt.lg_prof_sample: 0 = every allocation */
    bool unbias;            /* opt.prof_unbias (exact counts need false) */
    const char *version;    /* jemalloc's version string (static) */
};

/*
 * The setting in `conf` (MALLOC_CONF's syntax, "key:value,..."; NULL is
 * empty) that keeps jemalloc from counting every allocation exactly:
 * lg_prof_sample other than 0, prof_unbias:true or prof:false, the last
 * setting of a key winning as in jemalloc.  Written to out as "key:value"
 * (truncated to outsz).  Returns true when there is one.  Cannot fail.
 */
bool leakgate_profile__conf_inexact(char *out, size_t outsz, const char *conf);

/*
 * The error for a process or a run whose jemalloc options are not exact:
 * `setting` is the offending "key:value".  Names where it comes from
 * (MALLOC_CONF when it sets it) and what to remove.  Returns
 * LEAKGATE_ENOPROF.
 */
int leakgate_profile__inexact_error(const char *setting);

/*
 * For a process that has no jemalloc yet (a lean one, `leakgate run`
 * before it starts the program): whether $MALLOC_CONF sets a key that
 * keeps counts inexact, which the jemalloc it preloads would read after
 * leakgate's own.  Returns 0, or LEAKGATE_ENOPROF with
 * leakgate_profile__inexact_error()'s detail.
 */
int leakgate_profile__check_conf(void);

/*
 * What the processes leakgate starts with jemalloc to measure exactly add
 * to malloc_conf, in MALLOC_CONF before the user's keys (gate_lean.c's
 * restart and replays, `leakgate run`'s exact runs): a dirty extent up to
 * 1,024 times a request may be split for it (jemalloc's default: 64).
 * Every object an exact window samples lives on a 16 KiB extent; freed,
 * those coalesce into dirty extents too large to be reused for the next,
 * which jemalloc then maps anew, purging the old (--exact on ci/bench's
 * realistic suite: 0.44 of the time, 22 % less memory;
 * docs/internals/performance-record.md, "The failing path, third
 * round").  Not in malloc_conf itself: a linked process has it whether
 * it measures exactly or not.
 */
#define LEAKGATE_PROFILE__EXACT_CONF_EXTRA "lg_extent_max_active_fit:10"

/*
 * Check that this process allocates with jemalloc, that heap profiling is
 * on and that it counts every allocation exactly (lg_prof_sample:0,
 * prof_unbias:false): sampled counts can miss any leak, and a user's
 * MALLOC_CONF wins over leakgate's malloc_conf.  Returns 0;
 * LEAKGATE_ENOPROF with a detail that says why and how to fix it.
 */
int leakgate_profile__check(struct leakgate_profile_info *out);

/* Record every allocation's stack with fn instead of jemalloc's own
 * libgcc backtrace (mallctl experimental.hooks.prof_backtrace; stackwalk.h
 * has the one leakgate installs).  Returns 0, or LEAKGATE_ENOPROF when
 * this jemalloc has no such hook (its own backtrace stays). */
int leakgate_profile__set_backtrace(void (*fn)(void **, unsigned *, unsigned));

/* Turn recording on or off for all threads (mallctl prof.active).
 * Returns 0 or LEAKGATE_ENOPROF. */
int leakgate_profile__set_active(bool on);

/* Bytes the application holds now (mallctl "stats.allocated" after
 * refreshing "epoch"; objects in thread caches count as held).
 * Returns 0 or LEAKGATE_ENOPROF. */
int leakgate_profile__live_bytes(uint64_t *out);

/*
 * The heap pair, in jemalloc's heap_v2 text (docs/internals/heap-format.md),
 * of a window measured without dumps (the tracker's stacks): *before holds
 * no stack, *after the n stacks given, each live objs and bytes of thread
 * 0; both end with this process's mappings (read once), so that
 * `jeprof --base=BEFORE BINARY AFTER` and `leakgate diff` show its growth.
 * Stacks with no frame are left out.  Both buffers are appended to.
 * Returns 0, LEAKGATE_ENOMEM or LEAKGATE_EIO (the mappings could not be
 * read).
 */
struct leakgate_profile_stack {
    const uintptr_t *pcs; /* innermost first */
    size_t npcs;
    uint64_t objs;
    uint64_t bytes;
};
int leakgate_profile__synthesize_pair(struct leakgate_buf *before,
                                      struct leakgate_buf *after,
                                      const struct leakgate_profile_stack *g,
                                      size_t n);

/* An in-memory dump target and the buffer its text is read into. */
struct leakgate_dumpfile {
    int fd;        /* memfd or unlinked temp file; -1 when closed */
    char path[64]; /* "/proc/self/fd/N" handed to prof.dump */
    char *text;    /* last dump read back (owned), not NUL-terminated */
    size_t len;    /* bytes of text */
    size_t cap;    /* bytes allocated for text */
    dev_t dev;     /* fd's file: a test that closed the gate's */
    ino_t ino;     /* descriptors is noticed, and fd reopened */
};

/* Open the target.  Returns 0 or LEAKGATE_EIO (detail names the cause). */
int leakgate_profile__dumpfile_open(struct leakgate_dumpfile *d);

/* Dump the heap profile into d (allocates nothing that is recorded).
 * Returns 0, LEAKGATE_ENOPROF (profiling off) or LEAKGATE_EDUMP. */
int leakgate_profile__dump(struct leakgate_dumpfile *d);

/* Would a dump into d work?  jemalloc's answer (opt.prof, the prof.dump
 * control) and d's path writable, without dumping.  Returns 0,
 * LEAKGATE_ENOPROF or LEAKGATE_EDUMP. */
int leakgate_profile__dump_ready(const struct leakgate_dumpfile *d);

/* Read the last dump into d->text.  Returns 0, LEAKGATE_EIO or
 * LEAKGATE_ENOMEM. */
int leakgate_profile__dumpfile_read(struct leakgate_dumpfile *d);

void leakgate_profile__dumpfile_close(struct leakgate_dumpfile *d);

/*
 * The loaded segments of every module whose file name starts with
 * `basename_prefix` (e.g. "libjemalloc."), or, when none does and `addr`
 * is not NULL, of the module that contains addr.  *out is the caller's
 * (may be NULL with *n 0 when nothing matched).  Returns 0 or
 * LEAKGATE_ENOMEM.
 */
int leakgate_profile__module_ranges(struct leakgate_range **out,
                                    size_t *n,
                                    const char *basename_prefix,
                                    const void *addr);

/* The segments of jemalloc itself (for stripping allocator frames). */
int leakgate_profile__allocator_ranges(struct leakgate_range **out, size_t *n);

#endif
