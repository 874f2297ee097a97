/* SPDX-License-Identifier: MIT */
/*
 * replay: run the program again to measure one-time growth exactly
 * (replay.h).  The first process makes a private directory (mkdtemp, mode
 * 0700), writes the names to replay into DIR/list, starts /proc/self/exe
 * with its own arguments and $LEAKGATE_REPLAY=DIR/list, waits, and reads
 * DIR/list.json back with results.c.  The replay's output goes to
 * DIR/replay.log.  The directory is removed afterwards, and kept (named in
 * the error) only when the replay failed.  The list has one "SUITE\tTEST"
 * line per test with each name as leakgate prints it (a newline in a name
 * cannot cut its line); the replay's verdicts are matched back by name as
 * JSON has them (leakgate_names_same()).  Starting the replay and waiting
 * for it, with its timeout, is replay_run.c's.
 */
#include "replay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "leakgate/thresholds.h"
#include "options.h"
#include "policy.h"
#include "report.h"
#include "results.h"
#include "track.h"
#include "util.h"

/* The longest list file a replay reads. */
#define LIST_MAX ((size_t)16 << 20)

/* One line of the list, "SUITE\tTEST" with each name printed
 * (leakgate_util__name_escape), kept as "SUITE\tTEST" with the names as
 * they are (a name may hold a tab: the suite is compared first, by its
 * length). */
static int
add_name(struct leakgate_gate *gate, const char *line, size_t len)
{
    struct leakgate_buf name = LEAKGATE_BUF_INIT;
    size_t tab = strcspn(line, "\t");
    char **names;

    bool ok = tab < len && leakgate_util__name_unescape(&name, line, tab);

    if (ok) {
        leakgate_buf__puts(&name, "\t");
        ok = leakgate_util__name_unescape(&name, line + tab + 1, len - tab - 1);
    }
    if (!ok) {
        leakgate_buf__dispose(&name);
        return leakgate_error__set(LEAKGATE_EUSAGE,
                                   "replay list: malformed line '%.*s'",
                                   (int)(len < 200 ? len : 200), line);
    }
    names = leakgate_util__realloc(gate->replay.names,
                                   (gate->replay.n + 1) * sizeof *names);
    if (!names || name.failed) {
        leakgate_buf__dispose(&name);
        return leakgate_error__set(LEAKGATE_ENOMEM, "replay list");
    }
    gate->replay.names = names;
    names[gate->replay.n++] = leakgate_buf__take(&name);
    return 0;
}

int
leakgate_replay__child_setup(struct leakgate_gate *gate)
{
    const char *list = getenv(LEAKGATE_REPLAY_ENV);
    struct leakgate_buf text = LEAKGATE_BUF_INIT, out = LEAKGATE_BUF_INIT;
    int rc = leakgate_options__replay_timeout(&gate->replay.timeout_s,
                                              gate->opts.replay_timeout);

    if (rc == 0)
        rc = leakgate_replay__save_env(gate);
    if (rc < 0 || !list || !*list)
        return rc;
    leakgate_replay__take_beat(gate);
    rc = leakgate_files__read(&text, list, LIST_MAX, "replay list");
    if (rc < 0) {
        leakgate_buf__dispose(&text);
        return rc;
    }
    for (const char *p = text.ptr; rc == 0 && p && *p;) {
        size_t len = strcspn(p, "\n");

        if (len > 0)
            rc = add_name(gate, p, len);
        p += len + (p[len] == '\n');
    }
    leakgate_buf__dispose(&text);
    leakgate_buf__printf(&out, "%s.json", list);
    gate->replay.json_path = leakgate_buf__take(&out);
    leakgate_buf__printf(&out, "%s.exact", list);
    gate->replay.deferred_path = leakgate_buf__take(&out);
    leakgate_buf__printf(&out, "%s.probe", list);
    gate->replay.probe_path = leakgate_buf__take(&out);
    /* What the first pass left, by ordinals (gate_fork.c). */
    leakgate_buf__printf(&out, "%s.first", list);
    if (!out.failed)
        leakgate_gate__fork_first_read(gate, out.ptr);
    leakgate_buf__dispose(&out);
    if (rc == 0 && (!gate->replay.json_path || !gate->replay.deferred_path ||
                    !gate->replay.probe_path))
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "replay list");
    if (rc < 0)
        return rc;
    gate->replay.child = true;
    /* The tracker watches the replayed windows (not needed to measure
     * them: to tell the first process what they left). */
    (void)leakgate_track__install();
    /* A probe: the listed tests run once unmeasured first (warmup 1). */
    gate->replay.warmup = getenv(LEAKGATE_REPLAY_WARMUP_ENV) != NULL;
    gate->replay.all_exact = getenv(LEAKGATE_REPLAY_EXACT_ENV) != NULL;
    gate->replay.lean_ok = getenv(LEAKGATE_REPLAY_LEAN_ENV) != NULL;
    /* Programs the tests start are not replays. */
    unsetenv(LEAKGATE_REPLAY_ENV);
    unsetenv(LEAKGATE_REPLAY_WARMUP_ENV);
    unsetenv(LEAKGATE_REPLAY_EXACT_ENV);
    unsetenv(LEAKGATE_REPLAY_LEAN_ENV);
    gate->opts.json_path = gate->replay.json_path;
    gate->opts.junit_path = NULL;
    gate->opts.update_thresholds = 0;
    gate->opts.tighten = 0;
    gate->opts.exact = 1;
    return 0;
}

int
leakgate_gate_in_replay(const leakgate_gate *gate)
{
    return gate->replay.child ? 1 : 0;
}

int
leakgate_gate_replay_done(const leakgate_gate *gate)
{
    /* Reachable growth kept for the run's end (gate_late.c) waits. */
    return gate->replay.child && gate->replay.measured >= gate->replay.n &&
           !leakgate_gate__late_pending(gate);
}

size_t
leakgate_gate_replays_pending(const leakgate_gate *gate)
{
    size_t n = 0;

    for (size_t i = 0; i < gate->nverdicts; i++)
        n += gate->verdicts[i]->needs_replay;
    return n;
}

static bool
waits(const struct leakgate_verdict *v)
{
    return v->needs_replay;
}

/* A failing test whose growth may be made once: would `warmup: 1` make it
 * pass?  (leakgate_gate_probe_warmup) */
static bool
may_warm_up(const struct leakgate_verdict *v)
{
    return v->status == LEAKGATE_STATUS_FAIL && v->measured && v->nstacks > 0 &&
           !v->shared_fixture && strcmp(v->test, "[suite]") != 0 &&
           v->settings.warmup == 0 && v->settings.repeat <= 1 &&
           v->how != LEAKGATE_MEASURED_SUITE_END && !v->orphans &&
           !leakgate_verdict__grew_loading(v);
}

/* The list: "SUITE\tTEST\n" per verdict `pick` chooses, each name as
 * leakgate_util__name_escape() prints it. */
static int
write_list(const struct leakgate_gate *gate,
           const char *path,
           bool (*pick)(const struct leakgate_verdict *))
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    int rc;

    for (size_t i = 0; i < gate->nverdicts; i++) {
        const struct leakgate_verdict *v = gate->verdicts[i];

        if (!pick(v))
            continue;
        /* Printed: a newline or a tab in a name cannot cut its line. */
        leakgate_util__name_escape(&b, v->suite);
        leakgate_buf__puts(&b, "\t");
        leakgate_util__name_escape(&b, v->test);
        leakgate_buf__puts(&b, "\n");
    }
    rc = b.failed ? leakgate_error__set(LEAKGATE_ENOMEM, "replay list")
                  : leakgate_gate__write_file(path, b.ptr ? b.ptr : "", b.len);
    leakgate_buf__dispose(&b);
    return rc;
}

/* v's verdict in the replay's results r, a measured one, or (measured
 * false) any, e.g. the test the replay was stopped in; NULL when none. */
static struct leakgate_verdict *
find_loaded(struct leakgate_results *r,
            const struct leakgate_verdict *v,
            bool measured)
{
    for (size_t i = 0; i < r->n; i++) {
        struct leakgate_verdict *x = r->v[i];

        /* The replay's JSON has U+FFFD for a byte that is not UTF-8. */
        if (x && (x->measured || !measured) &&
            leakgate_names_same(x->suite, v->suite) &&
            leakgate_names_same(x->test, v->test))
            return x;
    }
    return NULL;
}

static struct leakgate_verdict *
loaded_verdict(struct leakgate_results *r, const struct leakgate_verdict *v)
{
    return find_loaded(r, v, true);
}

/* The replay could not judge v either (it was stopped in it, or the test
 * died): v stays not judged, with the replay's reason.  False when x is
 * no such verdict. */
static bool
replay_could_not(struct leakgate_verdict *v, const struct leakgate_verdict *x)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char *why;

    if (!x || x->status != LEAKGATE_STATUS_NOT_JUDGED || !x->not_judged_why ||
        x->measured)
        return false;
    leakgate_buf__printf(&b, "%s%s",
                         strncmp(x->not_judged_why, "in the replay", 13) == 0
                             ? ""
                             : "in the replay: ",
                         x->not_judged_why);
    why = leakgate_buf__take(&b);
    if (!why)
        return false;
    leakgate_util__free(v->not_judged_why);
    v->not_judged_why = why;
    v->needs_replay = false;
    v->peak_replay = false;
    v->status = LEAKGATE_STATUS_NOT_JUDGED;
    return true;
}

/*
 * The replay measured less than the first run's fast pass left (what its
 * exact window left, counted by the tracker as in the fast pass): the test
 * does not allocate the same way each run, so a passing exact verdict
 * says nothing about the first run.  It fails, and says why and what to
 * do: measure the test exactly in its own run.
 */
static void
not_reproduced(struct leakgate_verdict *x, uint64_t bytes, uint64_t objs)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char n[4][32];

    leakgate_buf__printf(
        &b,
        "leakgate: FAIL %s: the replay did not reproduce the first run: its "
        "fast first pass left %s B in %s object%s, the exact replay "
        "%s B in %s object%s (a test that allocates differently from "
        "run to run)\n"
        "  leakgate cannot vouch for what the first run left: measure this "
        "test exactly in its own run with\n"
        "    tests:\n      '%s':\n        rerun: false\n",
        x->name,
        leakgate_util__group_digits(n[0], sizeof n[0], x->first_bytes, false),
        leakgate_util__group_digits(n[1], sizeof n[1], x->first_objs, false),
        x->first_objs == 1 ? "" : "s",
        leakgate_util__group_digits(n[2], sizeof n[2], bytes, false),
        leakgate_util__group_digits(n[3], sizeof n[3], objs, false),
        objs == 1 ? "" : "s", x->name);
    x->status = LEAKGATE_STATUS_FAIL; /* even without the text */
    if (b.failed)
        return;
    leakgate_util__free(x->report);
    x->report = leakgate_buf__take(&b);
}

struct bias_lookup {
    const char *module; /* path, as symbolize.c names modules */
    const char *exe;    /* this executable's path (dl_iterate_phdr: "") */
    uintptr_t bias;
    bool found;
};

static int
find_bias(struct dl_phdr_info *info, size_t size, void *payload)
{
    struct bias_lookup *b = payload;
    const char *name =
        info->dlpi_name && *info->dlpi_name ? info->dlpi_name : b->exe;

    (void)size;
    if (!name || strcmp(name, b->module) != 0)
        return 0;
    b->bias = info->dlpi_addr;
    b->found = true;
    return 1;
}

/*
 * The replay ran in another process, where address-space randomisation
 * loaded every module elsewhere: its return addresses become this
 * process's (each frame's module offset plus the module's load bias here),
 * so that they compare with the stacks this process measured (the suite
 * window's hints).  A frame whose module is not loaded here keeps its pc.
 */
static void
relocate_stacks(struct leakgate_vstack *stacks, size_t nstacks)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    struct bias_lookup b = {NULL, exe, 0, false};

    exe[n > 0 ? n : 0] = '\0';
    for (size_t i = 0; i < nstacks; i++) {
        struct leakgate_vstack *s = &stacks[i];

        for (size_t k = 0; k < s->nframes; k++) {
            struct leakgate_frame *f = &s->frames[k];
            uintptr_t old = f->pc;

            if (!f->module)
                continue;
            if (!b.module || strcmp(b.module, f->module) != 0) {
                b.module = f->module;
                b.found = false;
                dl_iterate_phdr(find_bias, &b);
            }
            if (!b.found)
                continue;
            f->pc = b.bias + f->module_offset;
            for (size_t j = 0; j < s->npcs; j++) {
                if (s->pcs[j] == old) {
                    s->pcs[j] = f->pc;
                    break;
                }
            }
        }
    }
}

static void
relocate(struct leakgate_verdict *x)
{
    relocate_stacks(x->stacks, x->nstacks);
    relocate_stacks(x->peak_stacks, x->npeak_stacks);
}

/* The replay measured a `scope: suite` test for the stacks of its peak:
 * they join the verdict, which its suite's end gave (or will give). */
static void
take_peak_stacks(struct leakgate_gate *gate,
                 struct leakgate_verdict *v,
                 struct leakgate_verdict *x)
{
    char *text;

    v->needs_replay = false;
    v->peak_replay = false;
    if (x->npeak_stacks == 0)
        return;
    relocate(x);
    leakgate_verdict__move_peak_stacks(v, x);
    if (v->status != LEAKGATE_STATUS_FAIL)
        return;
    text = leakgate_report__text(v, &gate->env, false);
    if (text) {
        leakgate_util__free(v->report);
        v->report = text;
    }
}

/* x takes v's names: the replay's JSON may have U+FFFD for a byte of a
 * name that is not UTF-8, and the gate finds verdicts by the names as
 * they are. */
static void
swap_names(struct leakgate_verdict *x, struct leakgate_verdict *v)
{
    char *suite = x->suite, *test = x->test, *name = x->name;

    x->suite = v->suite;
    x->test = v->test;
    x->name = v->name;
    v->suite = suite;
    v->test = test;
    v->name = name;
}

/* Swap the replay's verdict into the gate; the gate's own notes (the
 * assertions of the first run) stay with the test. */
static void
take_verdict(struct leakgate_gate *gate,
             size_t i,
             struct leakgate_results *r,
             struct leakgate_verdict *x)
{
    struct leakgate_verdict *v = gate->verdicts[i];
    struct leakgate_note *notes = x->notes;
    size_t nnotes = x->nnotes;
    struct leakgate_policy_settings set;
    uint64_t bytes, objs;
    bool watched, failed_on_peak = false;

    for (size_t k = 0; k < r->n; k++) {
        if (r->v[k] == x)
            r->v[k] = v; /* freed with the results */
    }
    x->notes = v->notes;
    x->nnotes = v->nnotes;
    v->notes = notes;
    v->nnotes = nnotes;
    swap_names(x, v);
    relocate(x);
    watched = x->how == LEAKGATE_MEASURED_REPLAY;
    bytes = x->first_bytes;
    objs = x->first_objs;
    x->how = LEAKGATE_MEASURED_REPLAY;
    x->first_bytes = v->first_bytes;
    x->first_objs = v->first_objs;
    x->needs_replay = false;
    /* The settings are this process's, resolved from the same file: the
     * entries they name are this process's configuration's (the
     * replay's JSON names an entry, not what it sets). */
    x->settings = v->settings;
    x->rerun_declined = v->rerun_declined;
    x->watch_id = v->watch_id;
    x->unjoined = v->unjoined;
    leakgate_verdict__fail_unjoined(x);
    /* The peak is the first run's (the meter counts exactly in every
     * mode); the replay's exact window gives the stacks that held it. */
    if (v->peak_known) {
        bool passed = x->status == LEAKGATE_STATUS_PASS;

        leakgate_verdict__set_peak(x, true, v->peak_bytes, v->allocations);
        /* its report is written below */
        failed_on_peak = passed && x->status == LEAKGATE_STATUS_FAIL;
    }
    gate->verdicts[i] = x;
    if (x->picture_note && gate->pictures < 0) {
        /* This run has said why there are no pictures already. */
        leakgate_util__free(x->picture_note);
        x->picture_note = NULL;
    } else if (x->picture_note) {
        gate->pictures = -1;
    }
    /* With `settle:` the fast pass counted objects a deferred free was
     * about to release: it may have left more than the replay. */
    leakgate_policy__resolve(&set, gate->config, x->suite, x->test);
    if (watched && x->status == LEAKGATE_STATUS_PASS && set.settle_ms == 0 &&
        (bytes < x->first_bytes || objs < x->first_objs)) {
        not_reproduced(x, bytes, objs);
        return;
    }
    /* A window the replay cut to its largest stacks keeps the replay's
     * own report, which counted them all. */
    if ((failed_on_peak || (x->report && *x->report)) &&
        x->nstacks < LEAKGATE_REPLAY_MAX_STACKS) {
        struct leakgate_symbolizer *sym;
        char *text;

        /* The report names this binary, as the gate's symbolizer knows. */
        (void)leakgate_gate__symbolizer(&sym, gate);
        text = leakgate_report__text(x, &gate->env, false);

        if (text) { /* else the replay's own text stays */
            leakgate_util__free(x->report);
            x->report = text;
            /* the artifact says the same */
            (void)leakgate_gate__rewrite_artifact_text(gate, x);
        }
    }
}

static int
take_results(struct leakgate_gate *gate,
             const char *json,
             const char *log,
             const char *exact,
             int status)
{
    struct leakgate_results *r = NULL, **loaded;
    struct leakgate_buf name = LEAKGATE_BUF_INIT;
    size_t missing = 0, stopped = 0;
    const char *first = NULL;
    int rc;

    /* A test the replay could not measure by ordinals (gate_fork.c): it
     * stopped there, and an exact replay of the whole list measures
     * every test, as the state it needs includes what the tests before
     * it left, recorded. */
    gate->replay.exact_pending = 0;
    if (exact && access(exact, F_OK) == 0) {
        gate->replay.exact_pending = leakgate_gate_replays_pending(gate);
        return 0;
    }
    rc = leakgate_results_new(&r);
    /* Room to keep these results first: verdicts will point into them. */
    loaded = rc == 0 ? leakgate_util__realloc(gate->replay.loaded,
                                              (gate->replay.nloaded + 1) *
                                                  sizeof *loaded)
                     : NULL;
    if (rc == 0 && !loaded)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "replay results");
    if (loaded)
        gate->replay.loaded = loaded;
    if (rc == 0)
        rc = leakgate_results_load(r, json);
    if (rc < 0) {
        leakgate_results_free(r);
        return leakgate_error__set(
            LEAKGATE_EIO,
            "the replay (exit status %d%s) left no results: %s; its output "
            "is in %s",
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
            gate->replay.timed_out ? ", killed: a test ran longer than the "
                                     "replay timeout and did not stop"
                                   : "",
            leakgate_error_last(), log);
    }
    for (size_t i = 0; i < gate->nverdicts; i++) {
        struct leakgate_verdict *x;

        if (!gate->verdicts[i]->needs_replay)
            continue;
        x = loaded_verdict(r, gate->verdicts[i]);
        if (x && gate->verdicts[i]->peak_replay) {
            take_peak_stacks(gate, gate->verdicts[i], x);
        } else if (x) {
            take_verdict(gate, i, r, x);
        } else if (replay_could_not(gate->verdicts[i],
                                    find_loaded(r, gate->verdicts[i], false))) {
            stopped++;
        } else if (missing++ == 0) {
            first = gate->verdicts[i]->name;
        }
    }
    gate->replay.loaded[gate->replay.nloaded++] = r;
    if (missing > 0) {
        leakgate_util__name_escape(&name, first);
        rc = leakgate_error__set(
            LEAKGATE_EIO,
            "the replay did not measure %s%s%s; its "
            "output is in %s",
            name.ptr ? name.ptr : "a test", missing > 1 ? " and others" : "",
            gate->replay.timed_out ? " (it was stopped: a test ran longer "
                                     "than the replay timeout)"
                                   : "",
            log);
    } else if (stopped > 0) {
        rc = leakgate_error__set(LEAKGATE_EIO,
                                 "the replay could not judge %zu test%s "
                                 "(the JUnit <error> of each says why); its "
                                 "output is in %s",
                                 stopped, stopped == 1 ? "" : "s", log);
    }
    leakgate_buf__dispose(&name);
    return rc;
}

/* A private directory for the replay's files (mode 0700, a name no other
 * user can plant a file or link in): $TMPDIR or /tmp. */
/* Why the replays' scratch directory is not in $TMPDIR, or "". */
static char tmp_note[512];

const char *
leakgate_gate_replay_note(const leakgate_gate *gate)
{
    (void)gate;
    return tmp_note;
}

int
leakgate_replay__make_scratch(struct leakgate_buf *dir)
{
    const char *note;
    const char *tmp = leakgate_files__tmpdir(&note);

    /* An unusable $TMPDIR: the replay runs in /tmp, and the run says so
     * (leakgate_gate_replay_note()). */
    if (*note)
        snprintf(tmp_note, sizeof tmp_note, "%s", note);
    leakgate_files__clean_stale_replays(tmp, LEAKGATE_FILES_STALE_REPLAY_S);
    leakgate_buf__printf(dir, "%s/leakgate-replay.XXXXXX", tmp);
    if (dir->failed)
        return leakgate_error__set(LEAKGATE_ENOMEM, "replay");
    if (!mkdtemp(dir->ptr))
        return leakgate_error__set(LEAKGATE_EIO,
                                   "cannot make a directory for the replay "
                                   "(%s): %s",
                                   dir->ptr, strerror(errno));
    return 0;
}

/* The last line of the replay's log that leakgate wrote ("leakgate: the
 * gate could not measure: ..."), into out; "" when none. */
static void
last_gate_line(char *out, size_t size, const char *log)
{
    struct leakgate_buf text = LEAKGATE_BUF_INIT;
    const char *p, *best = NULL;

    out[0] = '\0';
    if (!log || leakgate_files__read(&text, log, LIST_MAX, "replay log") < 0 ||
        !text.ptr) {
        leakgate_buf__dispose(&text);
        return;
    }
    for (p = text.ptr; (p = strstr(p, "leakgate: ")) != NULL; p++) {
        if (p == text.ptr || p[-1] == '\n')
            best = p;
    }
    if (best)
        snprintf(out, size, "%.*s", (int)strcspn(best, "\n"), best);
    leakgate_buf__dispose(&text);
}

/* The replay failed: its tests stay not judged, with why (the error, and
 * the replay's own last word), and are not replayed again. */
static void
give_up(struct leakgate_gate *gate, const char *log)
{
    char said[512], error[512];
    struct leakgate_buf why = LEAKGATE_BUF_INIT;

    snprintf(error, sizeof error, "%s", leakgate_error_last());
    last_gate_line(said, sizeof said, log);
    leakgate_buf__printf(&why, "the replay that measures it failed: %s%s%s",
                         error, *said ? "; the replay said: " : "", said);
    for (size_t i = 0; i < gate->nverdicts; i++) {
        struct leakgate_verdict *v = gate->verdicts[i];
        char *text;

        if (!v->needs_replay)
            continue;
        v->needs_replay = false;
        text = why.failed ? NULL : leakgate_util__strdup(why.ptr);
        if (text) {
            leakgate_util__free(v->not_judged_why);
            v->not_judged_why = text;
        }
    }
    /* Reading the log may have replaced the error: say it again. */
    if (*said)
        leakgate_error__set(LEAKGATE_EIO, "%s; the replay said: %s", error,
                            said);
    else
        leakgate_error__set(LEAKGATE_EIO, "%s", error);
    leakgate_buf__dispose(&why);
}

/* The files of one child run. */
struct child_files {
    struct leakgate_buf dir, list, json, log, exact, probe, first;
};

static int
child_files(struct child_files *f)
{
    int rc;

    memset(f, 0, sizeof *f);
    rc = leakgate_replay__make_scratch(&f->dir);
    if (rc == 0) {
        leakgate_buf__printf(&f->list, "%s/list", f->dir.ptr);
        leakgate_buf__printf(&f->json, "%s/list.json", f->dir.ptr);
        leakgate_buf__printf(&f->log, "%s/replay.log", f->dir.ptr);
        leakgate_buf__printf(&f->exact, "%s/list.exact", f->dir.ptr);
        leakgate_buf__printf(&f->probe, "%s/list.probe", f->dir.ptr);
        leakgate_buf__printf(&f->first, "%s/list.first", f->dir.ptr);
        if (f->list.failed || f->json.failed || f->log.failed ||
            f->exact.failed || f->probe.failed || f->first.failed)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "replay");
    }
    return rc;
}

/* Remove the files; kept, and named in the error, when keep. */
static void
child_files_done(struct child_files *f, bool keep)
{
    if (!keep || !f->log.ptr || access(f->log.ptr, F_OK) != 0) {
        if (f->list.ptr)
            unlink(f->list.ptr);
        if (f->json.ptr)
            unlink(f->json.ptr);
        if (f->log.ptr)
            unlink(f->log.ptr);
        if (f->exact.ptr)
            unlink(f->exact.ptr);
        if (f->probe.ptr)
            unlink(f->probe.ptr);
        if (f->first.ptr)
            unlink(f->first.ptr);
        if (f->dir.ptr)
            rmdir(f->dir.ptr);
    }
    leakgate_buf__dispose(&f->dir);
    leakgate_buf__dispose(&f->list);
    leakgate_buf__dispose(&f->json);
    leakgate_buf__dispose(&f->log);
    leakgate_buf__dispose(&f->exact);
    leakgate_buf__dispose(&f->probe);
    leakgate_buf__dispose(&f->first);
}

/* The warm-up probe's answers the replay found (gate_fork.c): lines
 * "0|1\tSUITE\tTEST" in its list's ".probe" twin, each name printed as
 * write_list() prints it.  A verdict named there is probe_known; none is
 * when the file cannot be read (the probe then runs as it would). */
static void
take_probes(struct leakgate_gate *gate, const char *path)
{
    struct leakgate_buf text = LEAKGATE_BUF_INIT, line = LEAKGATE_BUF_INIT;

    if (!path || access(path, F_OK) != 0)
        return;
    leakgate_buf__puts(&text, "\n");
    if (leakgate_files__read(&text, path, LIST_MAX, "replay probes") < 0) {
        leakgate_error__clear();
        leakgate_buf__dispose(&text);
        return;
    }
    for (size_t i = 0; !text.failed && i < gate->nverdicts; i++) {
        struct leakgate_verdict *v = gate->verdicts[i];

        for (int once = 0; once < 2; once++) {
            line.len = 0;
            leakgate_buf__puts(&line, once ? "\n1\t" : "\n0\t");
            leakgate_util__name_escape(&line, v->suite);
            leakgate_buf__puts(&line, "\t");
            leakgate_util__name_escape(&line, v->test);
            leakgate_buf__puts(&line, "\n");
            if (!line.failed && strstr(text.ptr, line.ptr)) {
                v->probe_known = true;
                v->made_once = once == 1;
            }
        }
    }
    leakgate_buf__dispose(&line);
    leakgate_buf__dispose(&text);
}

/*
 * A lean process's replay can itself be lean (no jemalloc preloaded: the
 * program runs as its first run did, its libraries loaded alike) when
 * every test it measures can be measured by allocation order
 * (gate_fork.c): no suite window, no peak stacks, no settings that need
 * an exact window (--report-dir's heap pairs do not: gate_results.c).
 * What such a replay still cannot measure goes to an exact replay, with
 * jemalloc.
 */
static bool
replay_lean(const struct leakgate_gate *gate,
            bool (*pick)(const struct leakgate_verdict *))
{
    if (!gate->lean || gate->replay.exact_pending)
        return false;
    for (size_t i = 0; i < gate->nverdicts; i++) {
        const struct leakgate_verdict *v = gate->verdicts[i];
        const struct leakgate_policy_settings *set = &v->settings;

        if (pick(v) && (v->peak_replay || strcmp(v->test, "[suite]") == 0 ||
                        set->peak_limited || set->repeat > 1 ||
                        set->settle_ms || set->suite_scope))
            return false;
    }
    return true;
}

/* Start this program again for the verdicts `pick` chooses, and wait. */
static int
run_child(struct leakgate_gate *gate,
          struct child_files *f,
          const char *preload,
          bool (*pick)(const struct leakgate_verdict *),
          int *status)
{
    bool lean = replay_lean(gate, pick);
    char *const *argv = NULL;
    int argc = 0;
    int rc = child_files(f);

    if (rc == 0)
        rc = write_list(gate, f->list.ptr, pick);
    /* The replay of the waiting tests selects by their first pass's
     * ordinals (gate_fork.c); without the file it runs logging copies. */
    if (rc == 0 && pick == waits && !gate->replay.exact_pending &&
        leakgate_gate__fork_first_write(gate, f->first.ptr) < 0)
        leakgate_error__clear();
    if (rc == 0)
        rc = leakgate_options__own_argv(&argc, &argv);
    if (rc == 0 && argc == 0)
        rc = leakgate_error__set(LEAKGATE_EIO, "/proc/self/cmdline is empty");
    /* A lean process's replay runs with jemalloc (gate_lean.c), unless
     * it measures by allocation order alone. */
    if (rc == 0 && lean && setenv(LEAKGATE_REPLAY_LEAN_ENV, "1", 1) != 0)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "environment");
    if (rc == 0)
        rc = leakgate_replay__start_and_wait(
            gate, argv, f->list.ptr, f->log.ptr,
            lean ? preload : leakgate_gate__lean_preload(gate, preload),
            pick == may_warm_up, status);
    unsetenv(LEAKGATE_REPLAY_LEAN_ENV);
    return rc;
}

int
leakgate_gate_replay(leakgate_gate *gate, const char *preload)
{
    struct child_files f;
    int status = 0, rc;

    if (leakgate_gate_replays_pending(gate) == 0)
        return 0;
    leakgate_gate__go_home(gate); /* relative paths mean what they did */
    /* The tests the last replay left to an exact one (gate_fork.c). */
    if (gate->replay.exact_pending > 0)
        setenv(LEAKGATE_REPLAY_EXACT_ENV, "1", 1);
    rc = run_child(gate, &f, preload, waits, &status);
    unsetenv(LEAKGATE_REPLAY_EXACT_ENV);
    if (rc == 0)
        rc = take_results(gate, f.json.ptr, f.log.ptr, f.exact.ptr, status);
    if (rc == 0)
        take_probes(gate, f.probe.ptr);
    if (rc < 0)
        give_up(gate, f.log.ptr);
    child_files_done(&f, rc < 0);
    return rc;
}

/* The hint of a failing test that passed with one unmeasured run first. */
static int
warmup_hint(struct leakgate_gate *gate, struct leakgate_verdict *v)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__puts(&b, "its growth is made once (a lazy initialisation, a "
                           "cache filled on first use): run once unmeasured "
                           "first, the test retains nothing over its limits. "
                           "To do that, give it `warmup: 1` (the thresholds "
                           "document at the end of the run holds it, instead "
                           "of the entry its report gives)");
    leakgate_util__free(v->hint);
    v->hint = leakgate_buf__take(&b);
    if (!v->hint)
        return leakgate_error__set(LEAKGATE_ENOMEM, "warmup hint");
    leakgate_util__free(v->report);
    v->report = leakgate_report__text(v, &gate->env, false);
    return v->report ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "report");
}

int
leakgate_gate_probe_warmup(leakgate_gate *gate,
                           const char *preload,
                           size_t *hinted_out)
{
    struct leakgate_results *r = NULL;
    struct child_files f;
    size_t n = 0;
    int status = 0, rc = 0;

    *hinted_out = 0;
    if (gate->replay.child)
        return 0;
    for (size_t i = 0; i < gate->nverdicts; i++)
        n += may_warm_up(gate->verdicts[i]) && !gate->verdicts[i]->probe_known;
    /* The replay answered for every one (gate_fork.c): no probe runs. */
    for (size_t i = 0; n == 0 && rc == 0 && i < gate->nverdicts; i++) {
        struct leakgate_verdict *v = gate->verdicts[i];

        if (may_warm_up(v) && v->made_once) {
            rc = warmup_hint(gate, v);
            (*hinted_out)++;
        }
    }
    if (n == 0)
        return rc;
    rc = run_child(gate, &f, preload, may_warm_up, &status);
    if (rc == 0)
        rc = leakgate_results_new(&r);
    if (rc == 0)
        rc = leakgate_results_load(r, f.json.ptr);
    for (size_t i = 0; rc == 0 && i < gate->nverdicts; i++) {
        struct leakgate_verdict *v = gate->verdicts[i];
        const struct leakgate_verdict *x;

        if (!may_warm_up(v))
            continue;
        x = loaded_verdict(r, v);
        if (x && x->status == LEAKGATE_STATUS_PASS && x->measured) {
            rc = warmup_hint(gate, v);
            (*hinted_out)++;
        }
    }
    leakgate_results_free(r);
    child_files_done(&f, false);
    return rc;
}

void
leakgate_replay__dispose(struct leakgate_gate *gate)
{
    for (size_t i = 0; i < gate->replay.n; i++)
        leakgate_util__free(gate->replay.names[i]);
    leakgate_util__free(gate->replay.names);
    leakgate_util__free(gate->replay.json_path);
    leakgate_util__free(gate->replay.deferred_path);
    leakgate_util__free(gate->replay.probe_path);
    leakgate_gate__fork_first_free(gate);
    leakgate_gate__late_free(gate);
    for (size_t i = 0; i < gate->replay.nloaded; i++)
        leakgate_results_free(gate->replay.loaded[i]);
    leakgate_util__free(gate->replay.loaded);
    for (size_t k = 0; gate->replay.env && leakgate_options__env_names()[k];
         k++)
        leakgate_util__free(gate->replay.env[k]);
    leakgate_util__free(gate->replay.env);
    memset(&gate->replay, 0, sizeof gate->replay);
}

int
leakgate_verdict_waits_for_replay(const leakgate_verdict *v)
{
    return v && v->needs_replay ? 1 : 0;
}
