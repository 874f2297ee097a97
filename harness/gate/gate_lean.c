/* SPDX-License-Identifier: MIT */
/*
 * gate_lean: a lean process (docs/architecture.md "Lean processes").  The
 * test binary links leakgate without jemalloc (leakgate::cunit, the
 * default), or `leakgate run` preloads only its interposer: it starts as
 * fast as a plain one and allocates with the C library's malloc, under
 * leakgate's wrappers.  Every window is a fast one:
 *
 *   a test            the fast first pass, as in any process (gate_fast.c);
 *                     what it left is measured by the replay, which runs
 *                     with jemalloc preloaded (exact windows)
 *   a suite window    its pieces (init, cleanup) are tracker windows: what
 *                     a piece left is watched until the suite's cleanup has
 *                     run; when every object of its pieces was freed by
 *                     then, exact mode would find no growth (no stack of
 *                     its pieces can have grown: each object they added is
 *                     gone) and the window passes; else
 *                     leakgate_gate_end() returns LEAKGATE_GATE_RERUN and
 *                     the glue has it replayed at once
 *
 * A run that needs exact windows from the start (--exact at
 * leakgate_gate_new(); a selected test with `rerun: false` or `repeat:`,
 * which the glue asks leakgate_gate_plan() about before the run) starts
 * the program again, before any test has run, with jemalloc preloaded.
 * (`settle:` needs no restart: a lean window cannot wait for live bytes to
 * settle, so what a deferred free has not yet released goes to the
 * replay, which waits.)
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "gate.h"
#include "jesize.h"
#include "options.h"
#include "profile.h"
#include "track.h"
#include "util.h"

#ifndef LEAKGATE_JEMALLOC_PATH
#define LEAKGATE_JEMALLOC_PATH "libjemalloc.so.2"
#endif

/* Set in the environment of a lean program started again with jemalloc. */
#define LEAN_EXEC_ENV "LEAKGATE_LEAN_EXEC"

/* What profile.c's malloc_conf asks for, also in MALLOC_CONF: a program
 * that links leakgate::lean exports malloc_conf, one that links the core
 * objects some other way may not; and what a process started to measure
 * exactly adds (profile.h). */
#define EXACT_CONF                                                             \
    "prof:true,prof_active:false,lg_prof_sample:0,prof_unbias:"                \
    "false," LEAKGATE_PROFILE__EXACT_CONF_EXTRA

/* The jemalloc a lean process preloads: $LEAKGATE_JEMALLOC (as `leakgate
 * run` reads it), else the one leakgate was built with. */
static const char *
jemalloc_path(void)
{
    const char *env = getenv("LEAKGATE_JEMALLOC");

    return env && *env ? env : LEAKGATE_JEMALLOC_PATH;
}

/* The length of LD_PRELOAD's first entry when it is the library this code
 * is in (libleakgate-preload.so under `leakgate run`), else 0. */
static size_t
own_entry(const char *ld)
{
    static const char here = 0; /* an address in this module */
    Dl_info info;
    size_t n = strcspn(ld, ": ");

    if (n == 0 || !dladdr(&here, &info) || !info.dli_fname ||
        strlen(info.dli_fname) != n || strncmp(ld, info.dli_fname, n) != 0)
        return 0;
    return n;
}

/* LD_PRELOAD for a replay or a restart of a lean process: jemalloc ahead of
 * what the process was started with, or right after leakgate's interposer
 * when that comes first (`leakgate run`: the interposer's malloc_conf and
 * wrappers must come before jemalloc's). */
const char *
leakgate_gate__lean_preload(const struct leakgate_gate *gate,
                            const char *preload)
{
    static char buf[4096];
    const char *old = preload ? preload : getenv("LD_PRELOAD");
    const char *rest;
    size_t own;

    if (!gate->lean)
        return preload;
    if (!old || !*old)
        return jemalloc_path();
    own = own_entry(old);
    rest = old + own + (own && old[own] ? 1 : 0);
    if (snprintf(buf, sizeof buf, "%.*s%s%s%s%s", (int)own, old, own ? ":" : "",
                 jemalloc_path(), *rest ? ":" : "", rest) >= (int)sizeof buf)
        return jemalloc_path();
    return buf;
}

int
leakgate_gate__lean_conf(void)
{
    const char *user = getenv("MALLOC_CONF");
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    int rc = 0;

    /* jemalloc reads MALLOC_CONF last: the user's keys still win. */
    leakgate_buf__printf(&b, "%s%s%s", EXACT_CONF, user && *user ? "," : "",
                         user ? user : "");
    if (b.failed || setenv("MALLOC_CONF", b.ptr, 1) != 0)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "MALLOC_CONF");
    leakgate_buf__dispose(&b);
    return rc;
}

/* This program's own arguments, to start it again with (*argv_out);
 * LEAKGATE_EIO when /proc/self/cmdline has none. */
static int
own_arguments(char *const **argv_out)
{
    int argc = 0, rc = leakgate_options__own_argv(&argc, argv_out);

    if (rc == 0 && argc == 0)
        rc = leakgate_error__set(LEAKGATE_EIO, "/proc/self/cmdline is empty");
    return rc;
}

/* Start this program again with jemalloc preloaded; returns only on
 * failure. */
static int
restart_with_jemalloc(const struct leakgate_gate *gate, const char *why)
{
    char *const *argv = NULL;
    int rc;

    if (getenv(LEAN_EXEC_ENV))
        return leakgate_error__set(
            LEAKGATE_ENOPROF,
            "%s needs exact windows, and this program still has no jemalloc "
            "after it started again with LD_PRELOAD=%s: link the test with "
            "leakgate::cunit_jemalloc (which links jemalloc) instead of "
            "leakgate::cunit",
            why, jemalloc_path());
    rc = own_arguments(&argv);
    if (rc == 0)
        rc = leakgate_gate__lean_conf();
    if (rc < 0)
        return rc;
    if (setenv("LD_PRELOAD", leakgate_gate__lean_preload(gate, NULL), 1) != 0 ||
        setenv(LEAN_EXEC_ENV, why, 1) != 0)
        return leakgate_error__set(LEAKGATE_ENOMEM, "environment");
    /* Nothing is flushed: what the program printed before and has not
     * flushed yet is printed by the new start. */
    execv("/proc/self/exe", argv);
    return leakgate_error__set(LEAKGATE_EIO,
                               "%s needs exact windows: cannot start "
                               "/proc/self/exe again with jemalloc: %s",
                               why, strerror(errno));
}

int
leakgate_gate__lean_init(struct leakgate_gate *gate)
{
    if (leakgate_profile__jemalloc())
        return 0;
    gate->lean = true;
    /* The replay's (and a restart's) jemalloc reads the user's
     * MALLOC_CONF after leakgate's keys: refuse now what it would refuse
     * after the whole run. */
    if (leakgate_profile__check_conf() < 0)
        return LEAKGATE_ENOPROF;
    if (leakgate_track__install() < 0) {
        if (leakgate_profile__valgrind())
            return leakgate_error__set(
                LEAKGATE_ENOPROF,
                "this process runs under valgrind, which replaces malloc: "
                "leakgate's allocation wrappers do not see its allocations.  "
                "leakgate measures leaks itself: run the gated tests without "
                "valgrind; to compare, run valgrind on a build without "
                "leakgate");
        return leakgate_error__set(
            LEAKGATE_ENOPROF,
            "this program links leakgate without jemalloc "
            "(leakgate::cunit), and leakgate's allocation wrappers do "
            "not see its allocations: a sanitizer or another preloaded "
            "allocator serves malloc, and leakgate cannot measure such a "
            "process; build the tests without the sanitizer and preload no "
            "other allocator");
    }
    /* A replay must measure exactly: never a restart, which would lose
     * its list and run as a first run.  A lean replay (replay.c) measures
     * by allocation order: it needs no jemalloc. */
    if (gate->replay.child && !gate->replay.lean_ok)
        return leakgate_error__set(
            LEAKGATE_ENOPROF,
            "this replay has no jemalloc: LD_PRELOAD=%s did not load it "
            "(leakgate::cunit preloads the jemalloc it was built with, "
            "or $LEAKGATE_JEMALLOC)",
            jemalloc_path());
    if (gate->opts.exact && !gate->replay.child)
        return restart_with_jemalloc(gate, "--exact");
    snprintf(gate->sampling, sizeof gate->sampling,
             "exact (a lean process: its fast first pass counts every "
             "allocation)");
    gate->prof.version = "preloaded by the replay";
    return 0;
}

/* A program on jemalloc whose live map is off: start it again with the
 * map on from its first object, so that the exact windows it is about to
 * measure are scanned (alloc/reach.h); returns only on failure.  Never
 * twice: a process whose variable is set already and still has no map
 * (no allocation wrappers) keeps going without kinds. */
static int
restart_with_map(void)
{
    char *const *argv = NULL;

    if (getenv(LEAKGATE_JESIZE_LIVE_MAP_ENV) || !leakgate_track__installed())
        return 0;
    if (own_arguments(&argv) < 0) {
        leakgate_error__clear();
        return 0; /* kinds unknown, as before */
    }
    if (setenv(LEAKGATE_JESIZE_LIVE_MAP_ENV, "1", 1) != 0)
        return 0; /* kinds unknown, as before */
    execv("/proc/self/exe", argv);
    (void)unsetenv(LEAKGATE_JESIZE_LIVE_MAP_ENV);
    return 0; /* could not start again: kinds unknown, as before */
}

int
leakgate_gate_plan(leakgate_gate *gate, const char *suite, const char *test)
{
    struct leakgate_window_settings ws;
    char why[512];

    leakgate_gate_settings(&ws, gate, suite, test);
    if (ws.rerun && ws.repeat <= 1)
        return 0;
    /* On jemalloc already: the live map, from the start. */
    if (!gate->lean)
        return gate->replay.child || leakgate_jesize__live() ||
                       gate->nverdicts > 0 || gate->cur.open
                   ? 0
                   : restart_with_map();
    snprintf(why, sizeof why, "%s/%s (%s)", suite, test ? test : "[suite]",
             ws.rerun ? "repeat:" : "rerun: false");
    /* Once a window has run, starting again would run it twice. */
    if (gate->nverdicts > 0 || gate->cur.open)
        return leakgate_error__set(
            LEAKGATE_ESTATE,
            "%s needs exact windows, and this lean process has measured "
            "windows already: call leakgate_gate_plan() before the first "
            "window, or link leakgate::cunit_jemalloc",
            why);
    return restart_with_jemalloc(gate, why);
}

int
leakgate_gate__lean_piece_start(struct leakgate_gate *gate)
{
    struct gate_scope *s = &gate->cur;
    int rc;

    (void)leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE);
    rc = leakgate_track__begin();
    if (rc < 0)
        return rc;
    leakgate_track__meter_start(s->metered ? &s->meter : NULL);
    s->metered = true;
    s->lean = true;
    return 0;
}

/* Add what was freed of s's watched objects since they were watched. */
static void
count_freed(struct gate_scope *s)
{
    uint64_t bytes = 0, objs = 0;
    bool unwatched = false;

    if (!s->lean_owner)
        return;
    leakgate_track__watch_freed(s->lean_owner, &bytes, &objs, &unwatched);
    s->lean_freed_objs += objs;
    s->lean_freed_bytes += bytes;
    s->first_unknown |= unwatched; /* some did not fit the watch */
}

void
leakgate_gate__lean_piece_stop(struct leakgate_gate *gate)
{
    struct gate_scope *s = &gate->cur;
    struct leakgate_track_result r;
    int rc;

    leakgate_gate__meter_stop(gate);
    rc = leakgate_track__end(&r);
    if (rc == LEAKGATE_ESTATE)
        return;
    s->first.allocs += r.allocs;
    if (rc < 0) {
        s->first_unknown = true;
        return;
    }
    s->first.live_objs += r.live_objs;
    s->first.live_bytes += r.live_bytes;
    if (r.live_objs == 0)
        return;
    if (!s->lean_owner)
        s->lean_owner = leakgate_gate__watch_id(gate);
    else
        count_freed(s); /* watching again starts the counts anew */
    if (leakgate_track__watch_left(s->lean_owner) < 0)
        s->first_unknown = true;
}

int
leakgate_gate__lean_end(struct leakgate_gate *gate, bool judged)
{
    struct gate_scope *s = &gate->cur;
    uint64_t objs, bytes;

    if (!s->paused)
        leakgate_gate__lean_piece_stop(gate);
    count_freed(s);
    objs = s->lean_freed_objs;
    bytes = s->lean_freed_bytes;
    if (s->aborted || !judged)
        return 0; /* NOT_JUDGED, as in exact mode */
    /* The objects its pieces left and nothing freed since. */
    s->first.live_objs =
        s->first.live_objs > objs ? s->first.live_objs - objs : 0;
    s->first.live_bytes =
        s->first.live_bytes > bytes ? s->first.live_bytes - bytes : 0;
    if (!s->first_unknown && s->first.live_objs == 0 &&
        !(s->settings.peak_limited && s->meter.peak > s->settings.peak_limit))
        return 0;
    return leakgate_gate__lean_grew(gate);
}
