/* SPDX-License-Identifier: MIT */
/*
 * run_env: what `leakgate run` needs before it starts the program: the
 * program's path (as execvp() would find it, with a clear error when it
 * does not exist or is not executable), the interposer
 * libleakgate-preload.so ($LEAKGATE_PRELOAD, else ../lib next to the
 * leakgate executable, else the build tree), libjemalloc ($LEAKGATE_JEMALLOC,
 * else the one this process runs on), and the program's environment:
 * LD_PRELOAD = the interposer, then the user's own LD_PRELOAD: the
 * program's run is on the C library's malloc, as a plain run's (a lean
 * process, gate/gate_lean.c), and its replays add jemalloc right after the
 * interposer ($LEAKGATE_JEMALLOC is set to the one found here).  A run
 * that needs exact windows from its first test (--exact, a thresholds
 * entry with `rerun: false` or `repeat:`) preloads jemalloc from the start
 * instead (the interposer first: it carries leakgate's malloc_conf, which
 * must come before jemalloc's empty one in lookup order).  Then the gate
 * options in their LEAKGATE_* twins, and the channel's descriptor.
 */
#include "leakgate/run.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "error.h"
#include "jesize.h"
#include "profile.h"
#include "replay.h"
#include "run_proto.h"
#include "util.h"

#ifndef LEAKGATE_RUN_LIBDIR_REL
#define LEAKGATE_RUN_LIBDIR_REL "../lib"
#endif
#define PRELOAD_NAME "libleakgate-preload.so"

extern char **environ;

static int
check_program(const char *path, const char *shown)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return leakgate_error__set(LEAKGATE_ENOTFOUND, "cannot run %s: %s",
                                   shown, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return leakgate_error__set(LEAKGATE_ENOTFOUND,
                                   "cannot run %s: it is a directory", shown);
    if (access(path, X_OK) != 0)
        return leakgate_error__set(LEAKGATE_ENOTFOUND,
                                   "cannot run %s: not executable (mode "
                                   "%04o): %s",
                                   shown, (unsigned int)(st.st_mode & 07777),
                                   strerror(errno));
    return 0;
}

/* Resolve argv[0] as execvp() would, with a clear error. */
int
leakgate_run__find_program(char **out, const char *name)
{
    const char *path = getenv("PATH");
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    *out = NULL;
    if (!*name)
        return leakgate_error__set(LEAKGATE_ENOTFOUND,
                                   "cannot run '': empty program name");
    if (strchr(name, '/')) {
        if (check_program(name, name) < 0)
            return LEAKGATE_ENOTFOUND;
        *out = leakgate_util__strdup(name);
        return *out ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "path");
    }
    for (const char *p = path ? path : "/usr/bin:/bin"; p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);

        leakgate_buf__printf(&b, "%.*s/%s", (int)(n ? n : 1), n ? p : ".",
                             name);
        if (b.ptr && access(b.ptr, X_OK) == 0 &&
            check_program(b.ptr, name) == 0) {
            *out = leakgate_buf__take(&b);
            return *out ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "path");
        }
        leakgate_buf__dispose(&b);
        p = colon ? colon + 1 : NULL;
    }
    return leakgate_error__set(LEAKGATE_ENOTFOUND,
                               "cannot run %s: no such program in PATH", name);
}

static int
preload_candidate(char **out, struct leakgate_buf *tried, const char *path)
{
    leakgate_buf__printf(tried, "%s%s", tried->len ? ", " : "", path);
    if (access(path, R_OK) != 0)
        return LEAKGATE_ENOTFOUND;
    *out = leakgate_util__strdup(path);
    return *out ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "path");
}

/* $LEAKGATE_PRELOAD, else ../lib next to the leakgate executable, else the
 * build tree this library was built in. */
int
leakgate_run__find_preload(char **out)
{
    const char *env = getenv("LEAKGATE_PRELOAD");
    struct leakgate_buf tried = LEAKGATE_BUF_INIT, p = LEAKGATE_BUF_INIT;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    int rc = LEAKGATE_ENOTFOUND;

    *out = NULL;
    if (env && *env) {
        rc = preload_candidate(out, &tried, env);
        if (rc == LEAKGATE_ENOTFOUND)
            rc = leakgate_error__set(rc,
                                     "cannot find leakgate's interposer: "
                                     "LEAKGATE_PRELOAD=%s: %s",
                                     env, strerror(errno));
        leakgate_buf__dispose(&tried);
        return rc;
    }
    if (n > 0) {
        exe[n] = '\0';
        n = strrchr(exe, '/') ? strrchr(exe, '/') - exe : 0;
        leakgate_buf__printf(&p, "%.*s/%s/%s", (int)n, exe,
                             LEAKGATE_RUN_LIBDIR_REL, PRELOAD_NAME);
        if (p.ptr)
            rc = preload_candidate(out, &tried, p.ptr);
    }
#ifdef LEAKGATE_RUN_BUILD_PRELOAD
    if (rc == LEAKGATE_ENOTFOUND)
        rc = preload_candidate(out, &tried, LEAKGATE_RUN_BUILD_PRELOAD);
#endif
    if (rc == LEAKGATE_ENOTFOUND)
        rc = leakgate_error__set(rc,
                                 "cannot find leakgate's interposer %s "
                                 "(looked for %s); set LEAKGATE_PRELOAD to "
                                 "its path",
                                 PRELOAD_NAME, tried.ptr ? tried.ptr : "-");
    leakgate_buf__dispose(&tried);
    leakgate_buf__dispose(&p);
    return rc;
}

#ifndef LEAKGATE_JEMALLOC_PATH
#define LEAKGATE_JEMALLOC_PATH "libjemalloc.so.2"
#endif

/* $LEAKGATE_JEMALLOC, else the libjemalloc this process runs on, else the
 * one leakgate was built with (the command links the lean core: it runs
 * on the C library's malloc). */
int
leakgate_run__find_jemalloc(char **out)
{
    const char *env = getenv("LEAKGATE_JEMALLOC");
    const void *sym = leakgate_profile__mallctl();
    Dl_info info;
    const char *path = env && *env ? env : NULL;

    *out = NULL;
    if (!path && sym && dladdr(sym, &info) && info.dli_fname &&
        strstr(info.dli_fname, ".so"))
        path = info.dli_fname;
    if (!path)
        path = LEAKGATE_JEMALLOC_PATH;
    if (access(path, R_OK) != 0)
        return leakgate_error__set(LEAKGATE_ENOTFOUND,
                                   "cannot preload jemalloc: %s: %s (set "
                                   "LEAKGATE_JEMALLOC to the path of "
                                   "libjemalloc.so.2)",
                                   path, strerror(errno));
    /* ld.so preloads only a shared object: the replays would fail on
     * anything else. */
    if (!leakgate_run__elf_shared(path))
        return leakgate_error__set(LEAKGATE_ENOTFOUND,
                                   "cannot preload jemalloc: %s cannot be "
                                   "preloaded: it is not a shared library "
                                   "(set LEAKGATE_JEMALLOC to the "
                                   "path of libjemalloc.so.2)",
                                   path);
    *out = leakgate_util__strdup(path);
    return *out ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "path");
}

static const char *const replaced[] = {
    "LD_PRELOAD=",          "LEAKGATE_RUN_",
    "LEAKGATE_THRESHOLDS=", "LEAKGATE_FILTER=",
    "LEAKGATE_REPORT_DIR=", "LEAKGATE_JUNIT=",
    "LEAKGATE_JSON=",       "LEAKGATE_SLACK=",
    "LEAKGATE_TIGHTEN=",    "LEAKGATE_EXACT=",
    "LEAKGATE_REPLAY=",     "LEAKGATE_PEAK_LIMIT=",
    "LEAKGATE_JEMALLOC=",   LEAKGATE_JESIZE_LIVE_MAP_ENV "=",
};

/* --replay-timeout's twin: the program's replays read it; and
 * --test-timeout's: the program's run reads it. */
#define REPLAY_TIMEOUT_ENV "LEAKGATE_REPLAY_TIMEOUT="
#define TEST_TIMEOUT_ENV "LEAKGATE_TEST_TIMEOUT="

static bool
is_replaced(const char *kv)
{
    if (strncmp(kv, REPLAY_TIMEOUT_ENV, strlen(REPLAY_TIMEOUT_ENV)) == 0 ||
        strncmp(kv, TEST_TIMEOUT_ENV, strlen(TEST_TIMEOUT_ENV)) == 0)
        return true;
    for (size_t i = 0; i < sizeof replaced / sizeof replaced[0]; i++) {
        if (strncmp(kv, replaced[i], strlen(replaced[i])) == 0)
            return true;
    }
    return false;
}

static void
env_add(struct leakgate_run_envp *e, const char *name, const char *value)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    if (!value || e->failed)
        return;
    if (e->n + 2 > e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 64;
        char **v = leakgate_util__realloc(e->v, cap * sizeof *v);

        if (!v) {
            e->failed = true;
            return;
        }
        e->v = v;
        e->cap = cap;
    }
    leakgate_buf__printf(&b, "%s%s", name, value);
    e->v[e->n] = leakgate_buf__take(&b);
    e->failed |= !e->v[e->n];
    e->n += e->v[e->n] != NULL;
    e->v[e->n] = NULL;
}

int
leakgate_run__env_put(struct leakgate_run_envp *e, const char *kv)
{
    env_add(e, "", kv);
    return e->failed ? leakgate_error__set(LEAKGATE_ENOMEM, "environment") : 0;
}

void
leakgate_run__env_free(struct leakgate_run_envp *e)
{
    for (size_t i = 0; i < e->n; i++)
        leakgate_util__free(e->v[i]);
    leakgate_util__free(e->v);
}

static void
env_gate(struct leakgate_run_envp *e,
         const struct leakgate_gate_options *o,
         int fd,
         int bell,
         int ring)
{
    char num[32];

    /* No channel: a replay the parent runs (run_replay.c). */
    if (fd >= 0) {
        snprintf(num, sizeof num, "%d", fd);
        env_add(e, LEAKGATE_RUN_ENV_FD "=", num);
        snprintf(num, sizeof num, "%d", bell);
        env_add(e, LEAKGATE_RUN_ENV_BELL "=", num);
    }
    if (ring >= 0) {
        snprintf(num, sizeof num, "%d", ring);
        env_add(e, LEAKGATE_RUN_ENV_RING "=", num);
    }
    env_add(e, "LEAKGATE_THRESHOLDS=", o->thresholds_path);
    env_add(e, "LEAKGATE_FILTER=", o->filter);
    env_add(e, "LEAKGATE_REPORT_DIR=", o->report_dir);
    env_add(e, "LEAKGATE_SLACK=", o->slack);
    env_add(e, "LEAKGATE_PEAK_LIMIT=", o->peak_limit);
    env_add(e, REPLAY_TIMEOUT_ENV, o->replay_timeout);
    env_add(e, TEST_TIMEOUT_ENV, o->test_timeout);
    if (o->tighten)
        env_add(e, "LEAKGATE_TIGHTEN=", "1");
    if (o->exact)
        env_add(e, "LEAKGATE_EXACT=", "1");
    if (o->junit_path || o->json_path || o->report_dir)
        env_add(e, LEAKGATE_RUN_ENV_PIECES "=", "1");
    if (o->list)
        env_add(e, LEAKGATE_RUN_ENV_LIST "=", "1");
    if (o->color >= 0)
        env_add(e, LEAKGATE_RUN_ENV_COLOR "=", o->color ? "1" : "0");
}

/* Whether an entry asks for exact windows from the start. */
static bool
entry_exact(const struct leakgate_config_entry *c)
{
    return (c->has_rerun && !c->rerun) || (c->has_repeat && c->repeat > 1);
}

/* Whether the program must run on jemalloc from its first test: --exact,
 * or a thresholds entry with `rerun: false` or `repeat:` (a lean program
 * would start again for such a test, and one started by `leakgate run`
 * cannot).  A file that does not load is the program's to report. */
static bool
exact_from_start(const struct leakgate_gate_options *o)
{
    struct leakgate_config *cfg = NULL;
    const char *path = leakgate_config__path(o->thresholds_path);
    bool exact = o->exact;

    if (exact || !path || leakgate_config__load(&cfg, path, NULL) < 0) {
        leakgate_error__clear();
        return exact;
    }
    exact = entry_exact(&cfg->defaults);
    for (size_t i = 0; !exact && i < cfg->nsuites; i++)
        exact = entry_exact(&cfg->suites[i]);
    for (size_t i = 0; !exact && i < cfg->ntests; i++)
        exact = entry_exact(&cfg->tests[i]);
    leakgate_config__free(cfg);
    return exact;
}

int
leakgate_run__build_env(struct leakgate_run_envp *e,
                        const struct leakgate_gate_options *o,
                        const char *preload,
                        const char *jemalloc,
                        int fd,
                        int bell,
                        int ring,
                        const char *replay_list)
{
    const char *user = getenv("LD_PRELOAD");
    struct leakgate_buf ld = LEAKGATE_BUF_INIT;
    bool exact;

    memset(e, 0, sizeof *e);
    /* The program's jemalloc reads MALLOC_CONF after the interposer's
     * malloc_conf: sampled counts would be refused in every test. */
    if (leakgate_profile__check_conf() < 0)
        return LEAKGATE_ENOPROF;
    if (strpbrk(preload, ": ") || strpbrk(jemalloc, ": "))
        return leakgate_error__set(LEAKGATE_ENOTFOUND,
                                   "cannot preload %s and %s: LD_PRELOAD "
                                   "paths cannot contain ':' or ' '",
                                   preload, jemalloc);
    /* A replay runs on jemalloc from the start, as the program's own. */
    exact = replay_list || exact_from_start(o);
    for (char **kv = environ; kv && *kv; kv++) {
        if (!is_replaced(*kv) &&
            !(exact && strncmp(*kv, "MALLOC_CONF=", 12) == 0))
            env_add(e, "", *kv);
    }
    leakgate_buf__printf(&ld, "%s%s%s%s%s", preload, exact ? ":" : "",
                         exact ? jemalloc : "", user && *user ? ":" : "",
                         user ? user : "");
    env_add(e, "LD_PRELOAD=", ld.ptr ? ld.ptr : "");
    if (exact) {
        /* profile.h: before the user's keys, which still win. */
        const char *conf = getenv("MALLOC_CONF");

        ld.len = 0;
        leakgate_buf__printf(&ld, "%s%s%s", LEAKGATE_PROFILE__EXACT_CONF_EXTRA,
                             conf && *conf ? "," : "", conf ? conf : "");
        env_add(e, "MALLOC_CONF=", ld.ptr ? ld.ptr : "");
    }
    env_add(e, "LEAKGATE_JEMALLOC=", jemalloc);
    /* On jemalloc for exact windows: their scans need the live map from
     * the program's first object (alloc/jesize.h). */
    if (exact)
        env_add(e, LEAKGATE_JESIZE_LIVE_MAP_ENV "=", "1");
    env_add(e, LEAKGATE_RUN_ENV_SAVED_PRELOAD "=", user);
    env_gate(e, o, fd, bell, ring);
    env_add(e, LEAKGATE_REPLAY_ENV "=", replay_list);
    e->failed |= ld.failed;
    leakgate_buf__dispose(&ld);
    if (e->failed) {
        leakgate_run__env_free(e);
        return leakgate_error__set(LEAKGATE_ENOMEM, "environment");
    }
    return 0;
}
