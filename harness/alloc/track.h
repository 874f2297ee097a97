/* SPDX-License-Identifier: MIT */
/*
 * track: the cheap exact first pass, beside profile.
 *
 * leakgate's allocation wrappers (intercept.c: malloc, calloc, realloc,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc, jemalloc's
 * mallocx family and C++'s operator new) record, while a window is open, every
 * pointer they return, and remove it again when it is freed (free,
 * realloc's free half, dallocx, sdallocx, operator delete).  A pointer
 * resized in place (realloc, rallocx, xallocx) is recorded too, because
 * exact profiling samples it anew at the resizing stack.  Frees of objects
 * from before the window are ignored.
 *
 * Invariant (why an empty table is proof): a stack's live bytes can only
 * grow between two exact dumps through objects allocated or resized
 * inside the window that are still live at its end; exactly those are in
 * the table.  So an empty table at window end means exact mode would
 * have found no growth on any stack, and no dump is needed.  A non-empty
 * table means "grew": the test must be measured again in an exact window
 * to learn the stacks.  The tracker never says "clean" wrongly; it can
 * say "grew" where exact mode finds nothing (growth it excludes, such as
 * CUnit's own failure records, or one-time growth).
 *
 * The tracker never allocates (it runs inside malloc): the table is a
 * bitmap in mmap'd memory, one bit per 8 bytes of address space, set and
 * cleared with one atomic operation each (no lock; plain loads and stores
 * while the process has one thread), in leaves mapped on first use; its
 * accesses are as local as the heap's; the counts are per thread.  Objects of
 * all threads are tracked, as exact profiling counts all threads.  Outside
 * windows a wrapper adds one relaxed load to jemalloc's own fast path.
 */
#ifndef LEAKGATE_TRACK_H
#define LEAKGATE_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What one window left behind. */
struct leakgate_track_result {
    uint64_t live_objs;  /* objects allocated in the window, still live */
    uint64_t live_bytes; /* their usable bytes (malloc_usable_size) */
    uint64_t allocs;     /* allocations and in-place resizes seen */
    uint64_t frees;      /* frees of objects allocated in the window */
    /* Allocations not counted: made by a thread that an earlier window
     * started (track_hot.h, leakgate_track__foreign()), the first such
     * window's generation (leakgate_track__window_gen()), 0: none. */
    uint64_t foreign_allocs;
    uint32_t foreign_gen;
};

/* The generation of the open window, or of the last one (0: none yet);
 * each leakgate_track__begin() starts a new one.  Cannot fail. */
uint32_t leakgate_track__window_gen(void);

/* The threads the open window starts are its own (a test's window; not a
 * suite's pieces): track_hot.h, leakgate_track__born.  Until the next
 * leakgate_track__begin().  Cannot fail. */
void leakgate_track__own_threads(void);

/*
 * Get ready (once; later calls return 0): map the table, and prove with a
 * probe allocation that this process's malloc is leakgate's wrapper.
 * Returns 0; LEAKGATE_ENOPROF (malloc comes from elsewhere, e.g. a
 * sanitizer, or the wrappers are not built); LEAKGATE_ENOMEM (the table
 * could not be mapped).
 */
int leakgate_track__install(void);

/* True once leakgate_track__install() succeeded.  Cannot fail. */
bool leakgate_track__installed(void);

/* Open a window: empty the table, start recording.  Returns 0, or
 * LEAKGATE_ESTATE when not installed or a window is already open. */
int leakgate_track__begin(void);

/*
 * Close the window: stop recording and count what is left.  Returns 0;
 * LEAKGATE_ESTATE (no open window); LEAKGATE_ENOMEM when the table could
 * not grow during the window (the result is then unknown: measure the
 * window in exact mode).  *out is filled in every case but ESTATE.
 */
int leakgate_track__end(struct leakgate_track_result *out);

/*
 * Drop ptr from the table of the open or the last window (e.g. a failure
 * record CUnit allocated inside the window, which exact mode excludes).
 * Returns true when ptr was recorded.  Cannot fail.
 */
bool leakgate_track__forget(const void *ptr);

/*
 * Call fn for every object the last closed window left behind (any
 * order), with its usable size.  Call it right after
 * leakgate_track__end(), before the program frees any of those objects:
 * frees after the window no longer update the table.  fn may allocate.
 * Stops at the first non-zero return of fn and returns it; returns 0 when
 * every object was visited, or LEAKGATE_ESTATE while a window is open.
 */
int leakgate_track__each(int (*fn)(const void *ptr,
                                   size_t usable_bytes,
                                   void *payload),
                         void *payload);

/*
 * Stacks (track_stacks.c).  Which allocations of the next window get
 * their stack recorded: none; those whose immediate caller is a function
 * of the C library or the dynamic linker that an ignore list names
 * (runtime: leakgate_track__runtime_functions()); or all.  Call before
 * leakgate_track__begin(); maps the tables on first use.  Returns 0, or
 * LEAKGATE_ENOMEM (then no stacks are recorded).
 */
enum leakgate_track_stacks {
    LEAKGATE_TRACK_STACKS_NONE,
    LEAKGATE_TRACK_STACKS_RUNTIME,
    LEAKGATE_TRACK_STACKS_ALL
};
int leakgate_track__stacks(enum leakgate_track_stacks mode);

/*
 * Ordinals (a replay's two runs of one test from one state: gate_fork.c).
 * Every allocation of a window that wants stacks is counted, from 0, in
 * the order the wrappers see them: its ordinal.  A logging window records
 * no stack, only the address of each allocation in that order
 * (leakgate_track__stacks_log()); after it, leakgate_track__left_ordinals()
 * names the ordinals of the objects it left.  A selecting window
 * (leakgate_track__stacks_select()) records the stacks of the allocations
 * with the given ordinals only: run from the same state, the same test
 * allocates in the same order, so it records a stack for exactly the
 * objects it leaves, at the cost of a counter per allocation
 * (leakgate_track__left_groups() says ENOTFOUND when it did not).
 * Both keep the lane (track_hot.h): it counts each allocation there too.
 * Call before leakgate_track__begin().  Return 0, or LEAKGATE_ENOMEM.
 */
int leakgate_track__stacks_log(void);
/* ords: n ordinals, ascending; copied. */
int leakgate_track__stacks_select(const uint64_t *ords, size_t n);
/*
 * After a logging window's leakgate_track__end(): the ordinals of the
 * objects it left, ascending (*out: leakgate_util__free()), *n_out of
 * them.  Returns 0; LEAKGATE_ENOTFOUND when the log overflowed or an
 * object left has no ordinal; LEAKGATE_ENOMEM; LEAKGATE_ESTATE (the last
 * window did not log).
 */
int leakgate_track__left_ordinals(uint64_t **out, size_t *n_out);
/*
 * The first pass's log (track_hot.h): a first pass's fast window logs the
 * address of each allocation, as a logging window does, and keeps its
 * stack mode.  leakgate_track__first_log_start() before
 * leakgate_track__begin() (0, or LEAKGATE_ENOMEM),
 * leakgate_track__first_log_stop() after leakgate_track__end(); then
 * leakgate_track__first_left_ordinals() names the ordinals of the
 * objects the window left, as leakgate_track__left_ordinals() does
 * (LEAKGATE_ENOTFOUND: the log is not whole, or was taken already).
 */
int leakgate_track__first_log_start(void);
void leakgate_track__first_log_stop(void);
int leakgate_track__first_left_ordinals(uint64_t **out, size_t *n_out);

/*
 * The runtime functions of LEAKGATE_TRACK_STACKS_RUNTIME: the C library's
 * and the dynamic linker's exported functions whose names match one of
 * the n globs (the ignore lists' frames), resolved to address ranges now
 * (globs are not kept).  Until the first call no allocation is a runtime
 * one.  Call while no window is open.  Returns 0, or LEAKGATE_ENOMEM (the
 * tables could not be mapped).
 */
int leakgate_track__runtime_functions(const char *const *globs, size_t n);

/* Recorded stacks end at the first frame in [begin, end), the test
 * runner's code (leakgate_gate_set_runner).  Cannot fail. */
void leakgate_track__runner(uintptr_t begin, uintptr_t end);

/* The wrappers' side: object a was noted, allocated from caller (the
 * wrapper's return address) for a request of req bytes (what the program
 * asked for: a calloc's product, a realloc's new size), its stack walked
 * from the wrapper's frame r (stackwalk.h; NULL: from here); object a is
 * freed.  Never allocate. */
struct leakgate_stackwalk_regs;
void leakgate_track__stack_note(uintptr_t a,
                                uintptr_t caller,
                                size_t req,
                                const struct leakgate_stackwalk_regs *r);
void leakgate_track__stack_drop(uintptr_t a);

/*
 * Carry (track_stacks.c): --exact measured on these records instead of
 * profiling.  From leakgate_track__carry() on, the stacks noted in a
 * window are kept after it, for as long as their objects live; a window's
 * free (or resize) of an object an earlier window noted counts against
 * that object's stack, as an exact window's profile subtracts it.  Then
 * leakgate_track__left_groups_net() names each stack's net growth: what
 * the window left on it less what it freed of earlier windows' objects,
 * and the stacks it only freed from.  Kept for the process (no way back).
 * Returns 0, or LEAKGATE_ENOMEM (the tables could not be mapped: nothing
 * is carried).  Call while no window is open.
 */
int leakgate_track__carry(void);
/* The wrappers' side: the object at a is being freed or resized, and no
 * window noted it as its own (leakgate_track__erase() said false), or it
 * was resized in place (xallocx); usable: its usable size before (0: look
 * it up, a is still allocated).  *receipt (may be NULL) says what was
 * dropped, for leakgate_track__carry_undo() when a resize then fails (the
 * object lives on as it was).  Never allocates. */
struct leakgate_track_carry_receipt {
    bool found, counted;
    uint16_t gen;
    uint32_t stack, req;
    uint32_t stk_gen; /* the stack table's generation (a compaction) */
    uint64_t usable;
};
void leakgate_track__carry_drop(uintptr_t a,
                                size_t usable,
                                struct leakgate_track_carry_receipt *receipt);
void
leakgate_track__carry_undo(uintptr_t a,
                           const struct leakgate_track_carry_receipt *receipt);

/*
 * One allocation stack of the objects a window left (leading allocator
 * frames dropped, as exact windows drop them): its return addresses,
 * innermost first (the tracker's: valid until the next
 * leakgate_track__stacks()), how many objects it holds, their usable
 * bytes and the bytes the program asked for.  The tracker builds no diff (the
 * hot path must not): its caller turns the groups into one (profile/diff.c,
 * leakgate_diff__of_track_left).
 */
struct leakgate_track_group {
    const uintptr_t *pcs;
    size_t npcs;
    uint64_t objs;
    uint64_t bytes;
    uint64_t requested;   /* when requested_known (a request of 4 GiB */
    bool requested_known; /* or more is not noted) */
    /* Reachability (reach.h), when kinds_known (every object of the
     * group classified): the lost and the indirectly lost ones; the rest
     * is reachable, from the roots whose LEAKGATE_REACH_ROOT_BIT()s are in
     * roots. */
    bool kinds_known;
    uint64_t lost_objs, lost_bytes;
    uint64_t indirect_objs, indirect_bytes;
    unsigned int roots;
    /* Carry: objects of this stack that earlier windows noted and this
     * window freed, and their usable bytes (0 unless carried). */
    uint64_t freed_objs, freed_bytes;
};
typedef int (*leakgate_track_group_fn)(const struct leakgate_track_group *g,
                                       void *payload);

/*
 * After leakgate_track__end(): call fn for each allocation stack of the
 * objects the window left, in the order they were first seen.  Returns
 * 0; LEAKGATE_ENOTFOUND when some object left has no recorded stack (not
 * chosen, or a table was full: fn is not called); LEAKGATE_ENOMEM; fn's
 * first non-zero return.  fn may allocate.
 */
int leakgate_track__left_groups(leakgate_track_group_fn fn, void *payload);
/*
 * After leakgate_track__end() of a carried window: as
 * leakgate_track__left_groups(), each group's freed_* set, then one group
 * more for each stack the window only freed objects of (objs 0).  Returns
 * what leakgate_track__left_groups() returns.
 */
int leakgate_track__left_groups_net(leakgate_track_group_fn fn, void *payload);

/*
 * Watch (track_stacks.c): after leakgate_track__end(), watch the objects
 * the window left, for owner (1..4095; 0: do nothing), until
 * leakgate_track__watch_clear(): a later free or realloc of one of them
 * marks owner released.  Returns 0 or LEAKGATE_ENOMEM.  Objects beyond
 * the table's room are not watched.
 */
int leakgate_track__watch_left(uint32_t owner);
/* Something owner left was freed since it was watched.  Cannot fail. */
bool leakgate_track__watch_released(uint32_t owner);
/*
 * Hold (gate_suite.c, `scope: suite`): as leakgate_track__watch_left(),
 * and fn is called first for each allocation stack of the objects left,
 * as leakgate_track__left_groups() calls it: the k-th call is group k,
 * which leakgate_track__held_each() names as each watched object's entry.
 * Returns 0; LEAKGATE_ENOTFOUND when some object left has no recorded
 * stack (the objects are watched all the same, without entries, and fn is
 * not called); LEAKGATE_ESTATE (owner out of range); LEAKGATE_ENOMEM;
 * fn's first non-zero return (nothing watched).
 */
int leakgate_track__hold_left(uint32_t owner,
                              leakgate_track_group_fn fn,
                              void *payload);
/* What watch_free released of owner's objects; *unwatched: some object of
 * owner did not fit the table.  Cannot fail. */
void leakgate_track__watch_freed(uint32_t owner,
                                 uint64_t *bytes,
                                 uint64_t *objs,
                                 bool *unwatched);
/* Call fn for every watched object still live (its owner, its entry in
 * the owner's held groups or UINT32_MAX, its usable bytes, the bytes the
 * program asked for: 0 without an entry, UINT64_MAX not known).  fn may
 * allocate.  Returns fn's first non-zero return, 0, or LEAKGATE_ENOMEM. */
int leakgate_track__held_each(int (*fn)(uint32_t owner,
                                        uint32_t entry,
                                        uint64_t bytes,
                                        uint64_t req,
                                        void *payload),
                              void *payload);
/*
 * Keep (track_stacks.c, "Kept"): after leakgate_track__end() and the
 * window's reachability scan (reach.h), keep the objects the window left
 * that the scan found reachable, for the rest of the process: tag_of is
 * called once per allocation stack of the objects left, in
 * leakgate_track__left_groups()'s order, and names the tag its reachable
 * objects are kept under (UINT32_MAX: none of them).  A later free or
 * realloc of a kept object drops it; leakgate_track__watch_clear() does
 * not.  At most 16,384 objects are kept: dropped is called with the tag
 * of each object that did not fit.  Returns 0; LEAKGATE_ENOTFOUND when
 * the window recorded no stacks or some object left has none;
 * LEAKGATE_ENOMEM.
 */
typedef uint32_t (*leakgate_track_tag_fn)(const struct leakgate_track_group *g,
                                          void *payload);
int leakgate_track__keep_left(leakgate_track_tag_fn tag_of,
                              void (*dropped)(uint32_t tag, void *payload),
                              void *payload);
/* Keep nothing any more (the run's end has judged them).  Cannot fail. */
void leakgate_track__kept_clear(void);
/* The kept objects still live.  Cannot fail. */
size_t leakgate_track__kept_live(void);
/* Call fn for every kept object still live (its address, tag and usable
 * bytes); fn's first non-zero return, or 0. */
int leakgate_track__kept_each(
    int (*fn)(uintptr_t a, uint32_t tag, uint64_t bytes, void *payload),
    void *payload);
/* Stop watching the objects (their owners' released flags stay, until an
 * owner id is handed out again).  Cannot fail. */
void leakgate_track__watch_clear(void);
/* The wrappers' side: a is being freed or moved while watching. */
void leakgate_track__watch_free(uintptr_t a);

/*
 * Orphans (track_stacks.c): what a test's threads allocate after the test
 * ended.  The allocation wrappers note each such object with the token of
 * the test that started the thread (intercept.h), and any free or resize
 * of it removes it again.  leakgate_track__orphans_take() forgets them
 * all and hands back those still live (*out, *n_out of them, the caller
 * frees it with leakgate_util__free()): each one's owner, allocation stack
 * (pcs NULL when it was not recorded), usable bytes and requested bytes
 * (UINT64_MAX when not known); *lost_objs: objects that did not fit the
 * table (the first of them owned by *lost_owner).  Returns 0 or
 * LEAKGATE_ENOMEM.
 */
struct leakgate_track_orphan {
    uint32_t owner;
    uintptr_t *pcs; /* the tracker's (kept until the process ends) */
    size_t npcs;
    uint64_t bytes;
    uint64_t requested;
};
int leakgate_track__orphans_take(struct leakgate_track_orphan **out,
                                 size_t *n_out,
                                 uint64_t *lost_objs,
                                 uint32_t *lost_owner);

/*
 * Meter: the window's peak of live heap bytes above its start, all
 * threads, in jemalloc's usable sizes, and how many allocations it made.
 * The wrappers count every allocation, resize and free while it is on,
 * frees of objects older than the window too (they lower the level).
 * The test's thread counts with plain stores, others atomically
 * (track_hot.h): a few nanoseconds per call.  Cannot fail.
 */
struct leakgate_track_meter {
    int64_t live;    /* bytes above the window's start now */
    uint64_t peak;   /* the highest live (0: it never rose) */
    uint64_t allocs; /* allocations and resizes */
};
/* Count from `from` (a piece of a window that was stopped; NULL: a new
 * window, all zero). */
void leakgate_track__meter_start(const struct leakgate_track_meter *from);
/* Stop counting (and disarm the trigger); where it stands. */
void leakgate_track__meter_stop(struct leakgate_track_meter *out);
/*
 * Trigger: when the level reaches `at` bytes (> 0; else disarmed), the
 * allocating thread calls fn(level, payload) from inside the allocation
 * wrapper, once at a time; fn returns the next level to trigger at (0:
 * none).  fn must not allocate (it may dump a profile).  fn NULL keeps
 * the last one.  Disarmed by leakgate_track__meter_stop().
 */
typedef long long (*leakgate_track_trigger_fn)(long long level, void *payload);
void leakgate_track__meter_arm(long long at,
                               leakgate_track_trigger_fn fn,
                               void *payload);

#endif
