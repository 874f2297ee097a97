/* SPDX-License-Identifier: MIT */
/*
 * thresholds_file: the ratchet's driver and public API (leakgate/
 * thresholds.h).  rewrite() runs acceptance rounds until nothing fails
 * (a new rule can capture stacks that then need a higher limit: the next
 * round raises it), tightens once, accepts again if tightening removed an
 * entry another entry now replaces, and checks the result by judging
 * every window against it.  update_file() wraps that in the directory
 * lock and the atomic write (files.c), so concurrent test processes
 * (`ctest -j`) serialise their read-modify-write and none is lost.
 */
#include "thresholds.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "files.h"

/* Acceptance converges in one or two rounds; more means a bug. */
#define MAX_ROUNDS 8
#define MAX_FILE_SIZE ((size_t)4 << 20)
#define DEFAULT_SLACK_PCT 25u

static const char new_file[] =
    "# leakgate thresholds (docs/thresholds.md), created by leakgate.\n"
    "# Edit freely: updates keep comments, order and quoting.\n"
    "version: 1\n";

struct leakgate_thresholds_outcome {
    char *text;
    size_t changes, stale, loose;
};

int
leakgate_thresholds__parse_slack(struct leakgate_thresholds_opts *o,
                                 const char *slack)
{
    size_t n = slack ? strlen(slack) : 0;
    uint64_t v = 0;

    o->slack_is_bytes = false;
    o->slack_pct = DEFAULT_SLACK_PCT;
    if (!slack)
        return 0;
    if (n > 1 && slack[n - 1] == '%' && strspn(slack, "0123456789") == n - 1 &&
        n <= 6) {
        for (size_t i = 0; i + 1 < n; i++)
            v = v * 10 + (uint64_t)(slack[i] - '0');
        if (v <= 10000) {
            o->slack_pct = (unsigned int)v;
            return 0;
        }
    } else if (leakgate_config__parse_size(&v, slack)) {
        o->slack_is_bytes = true;
        o->slack_bytes = v;
        return 0;
    }
    return leakgate_error__set(LEAKGATE_EUSAGE,
                               "invalid slack '%s' (expected a percentage "
                               "from 0%% to 10000%%, such as 25%%, or a size "
                               "such as 4 KiB)",
                               slack);
}

/* One round: accept (or tighten) against the text in *cur; *changed says
 * whether it edited anything. */
static int
run_round(char **cur,
          size_t *len,
          bool *changed,
          struct leakgate_treport *rep,
          const char *name,
          const struct leakgate_verdict *const *v,
          size_t n,
          const struct leakgate_thresholds_opts *o)
{
    struct leakgate_tstate st;
    struct leakgate_yedits e;
    char *next = NULL;
    size_t next_len = 0;
    int rc = leakgate_thresholds__state(&st, *cur, *len, name, v, n);

    *changed = false;
    leakgate_yamledit__edits_init(&e, &st.lay);
    if (rc == 0 && o)
        leakgate_thresholds__tighten(&e, rep, &st, o, true, true);
    else if (rc == 0)
        leakgate_thresholds__accept(&e, rep, &st);
    if (rc == 0 && (e.n > 0 || e.failed || e.broken))
        rc = leakgate_yamledit__apply(&next, &next_len, &e);
    if (rc == 0 && next) {
        leakgate_util__free(*cur);
        *cur = next;
        *len = next_len;
        *changed = true;
    }
    leakgate_yamledit__edits_dispose(&e);
    leakgate_thresholds__state_dispose(&st);
    return rc;
}

static int
accept_rounds(char **cur,
              size_t *len,
              struct leakgate_treport *rep,
              const char *name,
              const struct leakgate_verdict *const *v,
              size_t n)
{
    bool changed = true;
    int rc = 0;

    for (int round = 0; rc == 0 && changed; round++) {
        if (round == MAX_ROUNDS)
            return leakgate_error__set(LEAKGATE_ERROR,
                                       "%s: the update did not settle after "
                                       "%d rounds (a leakgate bug; the file "
                                       "was not written)",
                                       name, MAX_ROUNDS);
        rc = run_round(cur, len, &changed, rep, name, v, n, NULL);
    }
    return rc;
}

/* Windows that retained memory but are not used: nothing judged them. */
static void
report_skipped(struct leakgate_treport *rep,
               const struct leakgate_tstate *st,
               const struct leakgate_thresholds_opts *o)
{
    for (size_t i = 0; i < st->nw; i++) {
        const struct leakgate_twin *w = &st->w[i];

        /* A filtered run measures the windows it did not select (a
         * suite's own window) without judging them: not worth a line. */
        if (w->name_judged || w->pol.total_bytes == 0 ||
            (o->partial && w->v->nnotes == 0))
            continue;
        leakgate_buf__printf(
            &rep->lines, "  %-9s %s: %s\n", "skipped", w->v->name,
            w->v->nnotes > 0 ? "it failed an assertion, so what it "
                               "retained is not recorded"
                             : "it was measured but not judged, so what "
                               "it retained is not recorded");
    }
}

/* With accept, every judged window must pass under the new text. */
static int
verify(const struct leakgate_tstate *st, const char *name)
{
    for (size_t i = 0; i < st->nw; i++) {
        if (st->w[i].judged && leakgate_thresholds__failed(&st->w[i]))
            return leakgate_error__set(LEAKGATE_ERROR,
                                       "%s: %s would still fail after the "
                                       "update (a leakgate bug; the file was "
                                       "not written)",
                                       name, st->w[i].v->name);
    }
    return 0;
}

/* What is loose or stale in st's text: the new text when it is written
 * (its lines are the ones the user reads next), else the current one; a
 * dry run that tightens already listed the limits and rules it would
 * change. */
static int
report_pass(struct leakgate_tstate *st,
            struct leakgate_treport *rep,
            const struct leakgate_thresholds_opts *o)
{
    struct leakgate_yedits e;
    int rc = 0;

    leakgate_yamledit__edits_init(&e, &st->lay);
    leakgate_thresholds__tighten(&e, rep, st, o, false,
                                 o->write || !o->tighten);
    report_skipped(rep, st, o);
    if (e.failed || rep->lines.failed)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "thresholds report");
    leakgate_yamledit__edits_dispose(&e);
    return rc;
}

/* Verify the new text (with accept) and report on the text the user reads
 * next, building each text's state once. */
static int
check_and_report(const char *cur,
                 size_t cur_len,
                 const char *old,
                 size_t old_len,
                 struct leakgate_treport *rep,
                 const char *name,
                 const struct leakgate_verdict *const *v,
                 size_t n,
                 const struct leakgate_thresholds_opts *o)
{
    struct leakgate_tstate st;
    int rc = 0;

    if (o->accept || o->write) {
        rc = leakgate_thresholds__state(&st, cur, cur_len, name, v, n);
        if (rc == 0 && o->accept)
            rc = verify(&st, name);
        if (rc == 0 && o->write)
            rc = report_pass(&st, rep, o);
        leakgate_thresholds__state_dispose(&st);
    }
    if (rc == 0 && !o->write) {
        rc = leakgate_thresholds__state(&st, old, old_len, name, v, n);
        if (rc == 0)
            rc = report_pass(&st, rep, o);
        leakgate_thresholds__state_dispose(&st);
    }
    return rc;
}

int
leakgate_thresholds__rewrite(char **out,
                             size_t *len_out,
                             struct leakgate_treport *rep,
                             const char *text,
                             size_t len,
                             const char *name,
                             const struct leakgate_verdict *const *v,
                             size_t n,
                             const struct leakgate_thresholds_opts *o)
{
    char *cur = text ? leakgate_util__strndup(text, len)
                     : leakgate_util__strdup(new_file);
    size_t cur_len = text ? len : strlen(new_file);
    bool changed;
    int rc = cur ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "thresholds");

    *out = NULL;
    rep->dry = !o->write;
    if (rc == 0 && text && memchr(text, '\0', len))
        rc = leakgate_error__set(LEAKGATE_ECONFIG,
                                 "%s: NUL characters are not allowed", name);
    if (rc == 0 && o->accept)
        rc = accept_rounds(&cur, &cur_len, rep, name, v, n);
    if (rc == 0 && o->tighten) {
        rc = run_round(&cur, &cur_len, &changed, rep, name, v, n, o);
        if (rc == 0 && changed && o->accept)
            rc = accept_rounds(&cur, &cur_len, rep, name, v, n);
    }
    if (rc == 0)
        rc =
            check_and_report(cur, cur_len, text ? text : new_file,
                             text ? len : strlen(new_file), rep, name, v, n, o);
    if (rc < 0) {
        leakgate_util__free(cur);
        return rc;
    }
    *out = cur;
    *len_out = cur_len;
    return 0;
}

/* ---- the outcome ----------------------------------------------------- */

static const char *
plural(size_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static int
make_outcome(leakgate_thresholds_outcome **out,
             struct leakgate_treport *rep,
             const char *path,
             bool written,
             bool created)
{
    leakgate_thresholds_outcome *o = leakgate_util__calloc(1, sizeof *o);
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    if (!o)
        return leakgate_error__set(LEAKGATE_ENOMEM, "outcome");
    leakgate_buf__printf(&b, "leakgate: thresholds %s:\n", path);
    leakgate_buf__put(&b, rep->lines.ptr ? rep->lines.ptr : "", rep->lines.len);
    if (rep->changes == 0)
        leakgate_buf__printf(&b, "leakgate: %s %s", path,
                             created ? "created: no limit needed"
                                     : "needs no change");
    else
        leakgate_buf__printf(
            &b, "leakgate: %zu %s %s %s%s", rep->changes,
            plural(rep->changes, "change", "changes"),
            written ? (created ? "written to new file" : "written to") : "for",
            path, written ? "" : " (dry run: not written)");
    if (rep->loose > 0)
        leakgate_buf__printf(&b, "; %zu loose %s (--tighten lowers %s)",
                             rep->loose, plural(rep->loose, "limit", "limits"),
                             plural(rep->loose, "it", "them"));
    if (rep->stale > 0)
        leakgate_buf__printf(&b, "; %zu stale", rep->stale);
    leakgate_buf__puts(&b, "\n");
    o->text = leakgate_buf__take(&b);
    o->changes = rep->changes;
    o->stale = rep->stale;
    o->loose = rep->loose;
    if (!o->text) {
        leakgate_util__free(o);
        return leakgate_error__set(LEAKGATE_ENOMEM, "outcome");
    }
    *out = o;
    return 0;
}

static int
convert_options(struct leakgate_thresholds_opts *o,
                const struct leakgate_thresholds_options *opts)
{
    if (opts->version != LEAKGATE_THRESHOLDS_OPTIONS_VERSION)
        return leakgate_error__set(LEAKGATE_EUSAGE,
                                   "leakgate_thresholds_options version %u "
                                   "(this leakgate knows %d)",
                                   opts->version,
                                   LEAKGATE_THRESHOLDS_OPTIONS_VERSION);
    memset(o, 0, sizeof *o);
    o->accept = opts->accept != 0;
    o->tighten = opts->tighten != 0;
    o->partial = opts->partial != 0;
    o->write = opts->write != 0;
    return leakgate_thresholds__parse_slack(o, opts->slack);
}

/* Read (absent: NULL text), rewrite and, if asked, write the file. */
static int
locked_update(struct leakgate_treport *rep,
              bool *written,
              bool *created,
              const char *path,
              const struct leakgate_verdict *const *v,
              size_t n,
              const struct leakgate_thresholds_opts *o,
              bool write)
{
    struct leakgate_buf old = LEAKGATE_BUF_INIT;
    char *text = NULL;
    size_t len = 0;
    int rc = leakgate_files__read(&old, path, MAX_FILE_SIZE, "thresholds file");

    *created = rc == LEAKGATE_ENOTFOUND;
    if (*created)
        rc = 0;
    if (rc == 0)
        rc = leakgate_thresholds__rewrite(&text, &len, rep,
                                          *created ? NULL : old.ptr, old.len,
                                          path, v, n, o);
    if (rc == 0 && write && !*created && access(path, W_OK) != 0)
        rc = leakgate_error__set(LEAKGATE_EIO, "cannot write %s: %s", path,
                                 strerror(errno));
    if (rc == 0 && write &&
        (*created || len != old.len || memcmp(text, old.ptr, len) != 0)) {
        rc = leakgate_files__write(NULL, path, text, len,
                                   LEAKGATE_FILES_KEEP_MODE |
                                       LEAKGATE_FILES_FOLLOW);
        *written = rc == 0;
    }
    leakgate_util__free(text);
    leakgate_buf__dispose(&old);
    return rc;
}

int
leakgate_thresholds__update_file(leakgate_thresholds_outcome **out,
                                 const char *path,
                                 const struct leakgate_verdict *const *v,
                                 size_t n,
                                 const struct leakgate_thresholds_options *opts)
{
    struct leakgate_treport rep = {LEAKGATE_BUF_INIT, 0, 0, 0, false};
    struct leakgate_thresholds_opts o;
    bool written = false, created = false;
    int lock = -1;
    int rc;

    *out = NULL;
    rc = convert_options(&o, opts);
    if (rc == 0)
        rc = leakgate_files__lock_dir(&lock, path);
    if (rc == 0) {
        leakgate_files__clean_temps(path);
        rc = locked_update(&rep, &written, &created, path, v, n, &o,
                           opts->write != 0);
    }
    leakgate_files__unlock(lock);
    if (rc == 0)
        rc = make_outcome(out, &rep, path, written, created && written);
    leakgate_buf__dispose(&rep.lines);
    return rc;
}

/* ---- public API ------------------------------------------------------ */

int
leakgate_thresholds_check(const char *path)
{
    struct leakgate_config *cfg = NULL;
    int rc = leakgate_config__load(&cfg, path, NULL);

    leakgate_config__free(cfg);
    return rc;
}

const char *
leakgate_thresholds_outcome_text(const leakgate_thresholds_outcome *o)
{
    return o->text;
}

size_t
leakgate_thresholds_outcome_changes(const leakgate_thresholds_outcome *o)
{
    return o->changes;
}

size_t
leakgate_thresholds_outcome_stale(const leakgate_thresholds_outcome *o)
{
    return o->stale;
}

size_t
leakgate_thresholds_outcome_loose(const leakgate_thresholds_outcome *o)
{
    return o->loose;
}

void
leakgate_thresholds_outcome_free(leakgate_thresholds_outcome *o)
{
    if (!o)
        return;
    leakgate_util__free(o->text);
    leakgate_util__free(o);
}
