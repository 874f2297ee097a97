/* SPDX-License-Identifier: MIT */
/*
 * results_api: the public side of results (leakgate/thresholds.h) and the
 * per-process result files.  Reading: a file, or every *.json of a
 * directory in name order.  Summaries and JUnit see one record per window
 * name, chosen by leakgate_results__view(); the summary ends with the
 * largest peaks when the results carry any (version 2).  Writing:
 * --json/--junit given a directory (or %p/%h in the name) gives each process
 * its own file, written atomically without replacing any other, so `ctest -j`
 * loses none.
 */
#include "results.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "html.h"
#include "render.h"
#include "report.h"
#include "thresholds.h"

/* A results file may be large: every stack of every test of a run. */
#define MAX_RESULTS_SIZE ((size_t)64 << 20)

/* The summary lists this many of the largest peaks. */
#define PEAKS_LISTED 10

int
leakgate_results_new(leakgate_results **out)
{
    *out = leakgate_util__calloc(1, sizeof **out);
    return *out ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "results");
}

void
leakgate_results_free(leakgate_results *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        leakgate_verdict__free(r->v[i]);
    for (size_t i = 0; i < r->nowned; i++)
        leakgate_util__free(r->owned[i]);
    leakgate_util__free(r->v);
    leakgate_util__free(r->owned);
    leakgate_util__free(r->view);
    leakgate_util__free(r->summary);
    leakgate_util__free(r->version_file);
    leakgate_util__free(r->other_version_file);
    leakgate_util__free(r);
}

size_t
leakgate_results_files(const leakgate_results *r)
{
    return r->nfiles;
}

static int
load_file(leakgate_results *r, const char *path)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    int rc = leakgate_files__read(&b, path, MAX_RESULTS_SIZE, "results file");

    if (rc == 0)
        rc = leakgate_results__load_text(r, b.ptr, b.len, path);
    leakgate_buf__dispose(&b);
    return rc;
}

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json names of a directory, sorted. */
static int
list_json(char ***out, size_t *n_out, const char *dir)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    size_t n = 0;

    *out = NULL;
    *n_out = 0;
    if (!d)
        return leakgate_error__set(LEAKGATE_EIO, "%s: %s", dir,
                                   strerror(errno));
    for (struct dirent *de = readdir(d); de; de = readdir(d)) {
        size_t len = strlen(de->d_name);
        char **more;

        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0 ||
            de->d_name[0] == '.')
            continue;
        more = leakgate_util__realloc(names, (n + 1) * sizeof *names);
        if (more) {
            names = more;
            names[n] = leakgate_util__strdup(de->d_name);
        }
        if (!more || !names[n]) {
            closedir(d);
            for (size_t i = 0; i < n; i++)
                leakgate_util__free(names[i]);
            leakgate_util__free(names);
            return leakgate_error__set(LEAKGATE_ENOMEM, "%s", dir);
        }
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_names);
    *out = names;
    *n_out = n;
    return 0;
}

static int
load_dir(leakgate_results *r, const char *dir)
{
    char **names;
    size_t n, before = r->nfiles;
    int rc = list_json(&names, &n, dir);

    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct leakgate_buf path = LEAKGATE_BUF_INIT;

        leakgate_buf__printf(&path, "%s/%s", dir, names[i]);
        rc = path.failed ? leakgate_error__set(LEAKGATE_ENOMEM, "path")
                         : load_file(r, path.ptr);
        leakgate_buf__dispose(&path);
    }
    for (size_t i = 0; i < n; i++)
        leakgate_util__free(names[i]);
    leakgate_util__free(names);
    if (rc == 0 && r->nfiles == before)
        rc = leakgate_error__set(LEAKGATE_ENOTFOUND,
                                 "%s: no results (*.json) in this directory",
                                 dir);
    return rc;
}

int
leakgate_results_load(leakgate_results *r, const char *path)
{
    struct stat st;

    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return load_dir(r, path);
    return load_file(r, path);
}

int
leakgate_results_update_thresholds(
    leakgate_results *r,
    const char *path,
    const struct leakgate_thresholds_options *opts,
    leakgate_thresholds_outcome **out)
{
    struct leakgate_thresholds_options o = *opts;

    /* Results of one --filter run saw some tests only: nothing else is
     * stale, and only what they measured can be tightened. */
    if (r->filtered)
        o.partial = 1;
    return leakgate_thresholds__update_file(
        out, path, (const struct leakgate_verdict *const *)r->v, r->n, &o);
}

/* ---- one record per window
 * --------------------------------------------------- */

int
leakgate_results__rank_of(bool measured, leakgate_status status, bool notes)
{
    if (!measured)
        return 0;
    if (status == LEAKGATE_STATUS_NOT_JUDGED)
        return 1 + notes;
    if (status == LEAKGATE_STATUS_PASS)
        return 3 + notes;
    return 5;
}

int
leakgate_results__rank(const struct leakgate_verdict *v)
{
    return leakgate_results__rank_of(v->measured, v->status, v->nnotes > 0);
}

struct pick {
    const struct leakgate_verdict *v;
    size_t index; /* load order */
};

static int
cmp_pick(const void *a, const void *b)
{
    const struct pick *x = a, *y = b;
    int c =
        strcmp(leakgate_verdict__origin(x->v), leakgate_verdict__origin(y->v));

    if (c == 0)
        c = strcmp(x->v->name, y->v->name);
    if (c != 0)
        return c;
    return (x->index > y->index) - (x->index < y->index);
}

static int
cmp_index(const void *a, const void *b)
{
    const struct pick *x = a, *y = b;

    return (x->index > y->index) - (x->index < y->index);
}

int
leakgate_results__view(struct leakgate_results *r)
{
    struct pick *p = leakgate_util__calloc(r->n ? r->n : 1, sizeof *p);
    const struct leakgate_verdict **view =
        leakgate_util__calloc(r->n ? r->n : 1, sizeof *view);
    size_t n = 0;

    if (!p || !view) {
        leakgate_util__free(p);
        leakgate_util__free(view);
        return leakgate_error__set(LEAKGATE_ENOMEM, "results");
    }
    for (size_t i = 0; i < r->n; i++)
        p[i] = (struct pick){r->v[i], i};
    qsort(p, r->n, sizeof *p, cmp_pick);
    /* Per origin and name: the best record, listed where it first
     * appeared. */
    for (size_t i = 0; i < r->n; i++) {
        if (n > 0 && strcmp(p[n - 1].v->name, p[i].v->name) == 0 &&
            strcmp(leakgate_verdict__origin(p[n - 1].v),
                   leakgate_verdict__origin(p[i].v)) == 0) {
            if (leakgate_results__rank(p[i].v) >
                leakgate_results__rank(p[n - 1].v))
                p[n - 1].v = p[i].v;
            continue;
        }
        p[n++] = p[i];
    }
    qsort(p, n, sizeof *p, cmp_index);
    for (size_t i = 0; i < n; i++)
        view[i] = p[i].v;
    leakgate_util__free(p);
    leakgate_util__free(r->view);
    r->view = view;
    r->nview = n;
    return 0;
}

/* ---- summary and JUnit
 * --------------------------------------------------------- */

static bool
failed(const struct leakgate_verdict *v)
{
    return v->status == LEAKGATE_STATUS_FAIL || v->nnotes > 0;
}

/*
 * Keys of the thresholds file the runs used that match no window of
 * these results: a typo, or a test that is gone (as a run warns).  Only
 * for results of unfiltered runs (or of many --filter runs, as under
 * ctest), and only when the file is here to read.
 */
static void
summary_unmatched(struct leakgate_buf *b, const struct leakgate_results *r)
{
    const char *path = r->env.thresholds_path;
    struct leakgate_config *cfg = NULL;
    char *text;

    if (r->filtered || !path || !*path || access(path, R_OK) != 0)
        return;
    if (leakgate_config__load(&cfg, path, NULL) < 0) {
        leakgate_buf__printf(b,
                             "leakgate: warning: cannot check the keys of "
                             "%s: %s\n",
                             path, leakgate_error_last());
        return;
    }
    text = leakgate_verdict__unmatched_entries(
        cfg, (const struct leakgate_verdict *const *)r->view, r->nview,
        "these results");
    for (const char *p = text ? text : ""; *p; p += strcspn(p, "\n") + 1)
        leakgate_buf__printf(b, "leakgate: warning: %.*s\n",
                             (int)strcspn(p, "\n"), p);
    leakgate_util__free(text);
    leakgate_config__free(cfg);
}

static void
summary_counts(struct leakgate_buf *b, const struct leakgate_results *r)
{
    size_t pass = 0, fail = 0, nj = 0, notes = 0;

    for (size_t i = 0; i < r->nview; i++) {
        const struct leakgate_verdict *v = r->view[i];

        pass += v->status == LEAKGATE_STATUS_PASS;
        fail += v->status == LEAKGATE_STATUS_FAIL;
        nj += v->status == LEAKGATE_STATUS_NOT_JUDGED;
        notes += v->nnotes > 0;
    }
    leakgate_buf__printf(b,
                         "leakgate: %zu result %s, %zu windows: %zu passed "
                         "the gate, %zu failed it, %zu not judged; %zu with "
                         "failed assertions\n",
                         r->nfiles, r->nfiles == 1 ? "file" : "files", r->nview,
                         pass, fail, nj, notes);
}

/* ": peak 2,097,152 B over its limit of 1,048,576 B" (sep first). */
static void
summary_peak_over(struct leakgate_buf *b,
                  const struct leakgate_verdict *v,
                  const char *sep)
{
    char peak[32], limit[32];

    if (!v->peak_over)
        return;
    leakgate_buf__printf(
        b, "%speak %s over its limit of %s", sep,
        leakgate_thresholds__bytes(peak, sizeof peak, v->peak_bytes),
        leakgate_thresholds__bytes(limit, sizeof limit,
                                   v->settings.peak_limit));
}

static void
summary_failure(struct leakgate_buf *b, const struct leakgate_verdict *v)
{
    char human[32], req[LEAKGATE_REPORT_REQUESTED_SIZE];
    bool peak_only = leakgate_verdict__peak_only(v);
    int64_t asked;
    bool known = leakgate_report__requested_total(v, &asked);

    leakgate_buf__printf(b, "  FAIL %s%s", leakgate_verdict__origin(v),
                         v->name);
    if (v->status == LEAKGATE_STATUS_FAIL && peak_only) {
        summary_peak_over(b, v, ": ");
    } else if (v->status == LEAKGATE_STATUS_FAIL) {
        leakgate_buf__printf(
            b, ": %s%s retained, %zu %s over %s limit%s",
            leakgate_thresholds__bytes(human, sizeof human,
                                       v->policy.total_bytes),
            leakgate_report__requested(req, asked, known), v->policy.nover,
            v->policy.nover == 1 ? "stack" : "stacks",
            v->policy.nover == 1 ? "its" : "their",
            v->policy.total_over  ? ", total over its cap"
            : v->policy.lost_over ? ", lost bytes over lost_limit"
                                  : "");
        summary_peak_over(b, v, ", ");
    }
    for (size_t k = 0; k < v->nnotes; k++)
        leakgate_buf__printf(b, "%s assertion %s:%u: %s",
                             k || v->status == LEAKGATE_STATUS_FAIL ? ";" : ":",
                             v->notes[k].file ? v->notes[k].file : "?",
                             v->notes[k].line, v->notes[k].message);
    leakgate_buf__puts(b, "\n");
}

/* Column widths of the peak lines. */
struct peak_widths {
    int name, bytes, allocs;
};

/* Widen w to fit v's line (a name longer than 60 columns overflows). */
static void
widen(struct peak_widths *w, const struct leakgate_verdict *v)
{
    char num[32];
    size_t name = strlen(leakgate_verdict__origin(v)) + strlen(v->name);
    size_t bytes =
        strlen(leakgate_thresholds__bytes(num, sizeof num, v->peak_bytes));
    size_t allocs =
        strlen(leakgate_util__group_signed(num, (int64_t)v->allocations));

    if (name <= 60 && (int)name > w->name)
        w->name = (int)name;
    if ((int)bytes > w->bytes)
        w->bytes = (int)bytes;
    if ((int)allocs > w->allocs)
        w->allocs = (int)allocs;
}

/* "  peak/thread  2,097,472 B  2 allocations  limit 1,048,576 B, over" */
static void
peak_line(struct leakgate_buf *b,
          const struct leakgate_verdict *v,
          const struct peak_widths *w)
{
    char peak[32], num[32], limit[32], shown[1024];
    const struct leakgate_policy_settings *st = &v->settings;

    snprintf(shown, sizeof shown, "%s%s", leakgate_verdict__origin(v), v->name);
    leakgate_buf__printf(
        b, "  %-*s  %*s  %*s %s", w->name, shown, w->bytes,
        leakgate_thresholds__bytes(peak, sizeof peak, v->peak_bytes), w->allocs,
        leakgate_util__group_signed(num, (int64_t)v->allocations),
        v->allocations == 1 ? "allocation " : "allocations");
    if (st->peak_limited)
        leakgate_buf__printf(
            b, "  limit %s, %s\n",
            leakgate_thresholds__bytes(limit, sizeof limit, st->peak_limit),
            v->peak_over ? "over" : "within");
    else
        leakgate_buf__puts(b, "  no limit\n");
}

/*
 * The PEAKS_LISTED largest peaks of the windows, one line each: which
 * tests carry the memory.  Nothing when no window's peak was measured
 * (results version 1, or a harness without the allocation wrappers).
 */
static int
summary_peaks(struct leakgate_buf *b, const struct leakgate_results *r)
{
    struct peak_widths w = {0, 0, 0};
    size_t m, shown,
        *order = leakgate_verdict__peak_order(r->view, r->nview, &m);

    if (!order)
        return LEAKGATE_ENOMEM;
    shown = m < PEAKS_LISTED ? m : PEAKS_LISTED;
    for (size_t k = 0; k < shown; k++)
        widen(&w, r->view[order[k]]);
    if (m > 0)
        leakgate_buf__printf(b,
                             "leakgate: largest peaks (heap above each "
                             "window's start), %zu of %zu measured %s:\n",
                             shown, m, m == 1 ? "window" : "windows");
    for (size_t k = 0; k < shown; k++)
        peak_line(b, r->view[order[k]], &w);
    leakgate_util__free(order);
    return 0;
}

int
leakgate_results_summary(leakgate_results *r,
                         const char **text_out,
                         size_t *failed_out)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    size_t nfailed = 0;
    int rc = leakgate_results__view(r);

    *text_out = NULL;
    *failed_out = 0;
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < r->nview; i++) {
        const struct leakgate_verdict *v = r->view[i];

        if (v->status == LEAKGATE_STATUS_FAIL && v->report && *v->report) {
            leakgate_buf__puts(&b, v->report);
            leakgate_buf__puts(&b, "\n");
        }
    }
    summary_unmatched(&b, r);
    summary_counts(&b, r);
    for (size_t i = 0; i < r->nview; i++) {
        if (failed(r->view[i])) {
            summary_failure(&b, r->view[i]);
            nfailed++;
        }
    }
    rc = summary_peaks(&b, r);
    if (rc < 0) {
        leakgate_buf__dispose(&b);
        return rc;
    }
    leakgate_util__free(r->summary);
    r->summary = leakgate_buf__take(&b);
    if (!r->summary)
        return leakgate_error__set(LEAKGATE_ENOMEM, "summary");
    *text_out = r->summary;
    *failed_out = nfailed;
    return 0;
}

int
leakgate_results_write_junit(leakgate_results *r, const char *path)
{
    char *xml;
    int rc = leakgate_results__view(r);

    if (rc < 0)
        return rc;
    xml = leakgate_report__junit(r->view, r->nview, &r->env);
    if (!xml)
        return leakgate_error__set(LEAKGATE_ENOMEM, "JUnit");
    rc = leakgate_files__write(NULL, path, xml, strlen(xml),
                               LEAKGATE_FILES_MKDIRS);
    leakgate_util__free(xml);
    return rc;
}

/* A picture larger than this is linked from index.html, not inlined. */
#define SVG_INLINE_MAX ((size_t)16 << 20)

/* DIR/index.html (NULL: out of memory). */
static char *
index_path(const char *dir)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__printf(&b, "%s/index.html", dir);
    return leakgate_buf__take(&b);
}

/* "2025-12-02T09:07:46Z" into out (at least 32 bytes). */
static const char *
utc_now(char *out, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;

    if (!gmtime_r(&now, &tm) ||
        strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, size, "unknown");
    return out;
}

/* The SVG text of every failing verdict that has one (NULL elsewhere). */
static int
read_svgs(char ***out, const struct leakgate_verdict *const *v, size_t n)
{
    char **svgs = leakgate_util__calloc(n ? n : 1, sizeof *svgs);
    int rc = 0;

    *out = svgs;
    if (!svgs)
        return leakgate_error__set(LEAKGATE_ENOMEM, "index");
    for (size_t i = 0; i < n && rc != LEAKGATE_ENOMEM; i++) {
        size_t len;

        if (v[i]->status != LEAKGATE_STATUS_FAIL || !v[i]->svg_path)
            continue;
        /* A picture that cannot be read is linked instead of inlined. */
        rc = leakgate_render__read_file(&svgs[i], &len, v[i]->svg_path,
                                        SVG_INLINE_MAX);
    }
    return rc == LEAKGATE_ENOMEM ? rc : 0;
}

int
leakgate_results__write_index(const char *dir,
                              const struct leakgate_verdict *const *v,
                              size_t n,
                              const struct leakgate_report_env *env,
                              const char *pictures)
{
    struct leakgate_html_run run;
    char date[64];
    char **svgs = NULL;
    char *page = NULL, *path = NULL;
    int rc = read_svgs(&svgs, v, n);

    run.title = env->binary && *env->binary
                    ? leakgate_util__base_name(env->binary)
                    : NULL;
    run.date = utc_now(date, sizeof date);
    run.graphviz = pictures;
    if (rc == 0) {
        page = leakgate_html__index(v, (const char *const *)svgs, n, env, &run);
        path = index_path(dir);
        if (!page || !path)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "index.html");
    }
    if (rc == 0)
        rc = leakgate_files__mkdirs(dir, "report directory");
    /* Atomic, not fsync'ed: every process of a run that shares the
     * report directory rewrites it (outputs.c). */
    if (rc == 0 && page && path)
        rc = leakgate_files__write(NULL, path, page, strlen(page),
                                   LEAKGATE_FILES_NOSYNC);
    for (size_t i = 0; svgs && i < n; i++)
        leakgate_util__free(svgs[i]);
    leakgate_util__free(svgs);
    leakgate_util__free(page);
    leakgate_util__free(path);
    return rc;
}

int
leakgate_results_write_html(leakgate_results *r, const char *dir)
{
    struct leakgate_report_env env = r->env;
    int rc = leakgate_results__view(r);

    /* Links on the page are relative to where it is written. */
    env.report_dir = dir;
    if (rc == 0)
        rc = leakgate_results__write_index(dir, r->view, r->nview, &env, NULL);
    return rc;
}

/* ---- per-process result files
 * ------------------------------------------------- */

static bool
is_dir_spec(const char *spec)
{
    struct stat st;
    size_t n = strlen(spec);

    return (n > 0 && spec[n - 1] == '/') ||
           (stat(spec, &st) == 0 && S_ISDIR(st.st_mode));
}

bool
leakgate_results__per_process(const char *spec)
{
    return is_dir_spec(spec) || strstr(spec, "%p") || strstr(spec, "%h");
}

/* "%p" pid, "%h" host, "%%" '%'; other '%' sequences stay as written. */
static void
expand(struct leakgate_buf *b, const char *spec, const char *host)
{
    for (const char *p = spec; *p; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            leakgate_buf__printf(b, "%ld", (long)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == 'h') {
            leakgate_buf__puts(b, host);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            leakgate_buf__puts(b, "%");
            p++;
        } else {
            leakgate_buf__put(b, p, 1);
        }
    }
}

int
leakgate_results__path(char **out,
                       bool *noclobber_out,
                       const char *spec,
                       const char *ext)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char host[256] = "host";
    char *safe_host, *safe_prog;
    size_t n = strlen(spec);

    if (gethostname(host, sizeof host - 1) != 0)
        memcpy(host, "host", 5);
    host[sizeof host - 1] = '\0';
    safe_host = leakgate_util__sanitize_name(host);
    safe_prog = leakgate_util__sanitize_name(program_invocation_short_name);
    *noclobber_out = is_dir_spec(spec);
    if (!*noclobber_out)
        expand(&b, spec, safe_host ? safe_host : "host");
    else {
        while (n > 1 && spec[n - 1] == '/')
            n--;
        leakgate_buf__printf(&b, "%.*s/%s.%s.%ld.%s", (int)n, spec,
                             safe_prog ? safe_prog : "leakgate",
                             safe_host ? safe_host : "host", (long)getpid(),
                             ext);
    }
    b.failed |= !safe_host || !safe_prog;
    leakgate_util__free(safe_host);
    leakgate_util__free(safe_prog);
    *out = leakgate_buf__take(&b);
    return *out ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "results path");
}

int
leakgate_results__write(const char *spec, const char *ext, const char *text)
{
    char *path = NULL;
    bool noclobber = false;
    int rc = leakgate_results__path(&path, &noclobber, spec, ext);

    /* Missing parent directories are created in both forms: under
     * ctest -j, which process writes first is a matter of chance. */
    if (rc == 0) {
        unsigned int flags = LEAKGATE_FILES_MKDIRS;

        if (noclobber)
            flags |= LEAKGATE_FILES_NOCLOBBER;
        rc = leakgate_files__write(NULL, path, text, strlen(text), flags);
    }
    leakgate_util__free(path);
    return rc;
}

int
leakgate_results__write_rendered(const char *spec,
                                 const char *ext,
                                 char *text,
                                 const char *what)
{
    int rc;

    if (!text)
        return leakgate_error__set(LEAKGATE_ENOMEM, "%s", what);
    rc = leakgate_results__write(spec, ext, text);
    leakgate_util__free(text);
    return rc;
}
