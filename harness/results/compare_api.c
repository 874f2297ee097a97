/* SPDX-License-Identifier: MIT */
/*
 * compare_api: the public side of `leakgate compare` (leakgate/compare.h):
 * checks that the two sets of results can be compared (one results
 * version on both sides), builds the comparison from one record per
 * window of each (results__view, as `leakgate report` counts them), and
 * writes SARIF files atomically.  The comparing and rendering are the
 * core's (compare.c, compare_render.c, sarif.c).
 */
#include "compare.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "files.h"
#include "results.h"
#include "sarif.h"
#include "util.h"

/* A side whose files are not all of one results version. */
static int
mixed(const struct leakgate_results *r, const char *side)
{
    return leakgate_error__set(
        LEAKGATE_EFORMAT,
        "%s: %s is results version %d but %s is version %d: the results of "
        "one side must come from one leakgate release",
        side, r->other_version_file, r->other_version, r->version_file,
        r->version);
}

/* Results of different versions measure different things (version 1 has
 * no peaks): refused, naming both. */
static int
check_versions(const struct leakgate_results *base,
               const struct leakgate_results *head)
{
    if (base->other_version_file)
        return mixed(base, "BASE");
    if (head->other_version_file)
        return mixed(head, "HEAD");
    if (base->nfiles == 0 || head->nfiles == 0)
        return leakgate_error__set(LEAKGATE_EUSAGE, "%s has no results loaded",
                                   base->nfiles == 0 ? "BASE" : "HEAD");
    if (base->n == 0 || head->n == 0)
        return leakgate_error__set(
            LEAKGATE_EFORMAT,
            "%s %s holds no windows (no test ran?): nothing to compare",
            base->n == 0 ? "BASE" : "HEAD",
            base->n == 0 ? base->version_file : head->version_file);
    if (base->version != head->version)
        return leakgate_error__set(
            LEAKGATE_EFORMAT,
            "BASE %s is results version %d, HEAD %s is version %d: compare "
            "results of one leakgate release (measure the base again with "
            "this leakgate, version %s)",
            base->version_file, base->version, head->version_file,
            head->version, leakgate_version());
    return 0;
}

/* Runs measured in different sampling modes (exact against sampled) differ
 * by sampling alone: said, not refused (a sampled run is an estimate). */
static int
sampling_warning(struct leakgate_compare *c,
                 const struct leakgate_results *base,
                 const struct leakgate_results *head)
{
    const char *b = base->env.sampling, *h = head->env.sampling;
    struct leakgate_buf w = LEAKGATE_BUF_INIT;

    if (!b || !h || strcmp(b, h) == 0)
        return 0;
    leakgate_buf__printf(&w,
                         "BASE was measured with sampling '%s', HEAD with "
                         "'%s': figures may differ by sampling alone",
                         b, h);
    c->warning = leakgate_buf__take(&w);
    return c->warning ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "compare");
}

static int
names(struct leakgate_compare *c, const struct leakgate_compare_options *o)
{
    c->base_name =
        leakgate_util__strdup(o && o->base_name ? o->base_name : "BASE");
    c->head_name =
        leakgate_util__strdup(o && o->head_name ? o->head_name : "HEAD");
    if (!c->base_name || !c->head_name)
        return leakgate_error__set(LEAKGATE_ENOMEM, "compare");
    return 0;
}

int
leakgate_compare_new(leakgate_compare **out,
                     leakgate_results *base,
                     leakgate_results *head,
                     const struct leakgate_compare_options *opts)
{
    leakgate_compare *c = NULL;
    int rc;

    *out = NULL;
    rc = check_versions(base, head);
    if (rc < 0)
        return rc;
    c = leakgate_util__calloc(1, sizeof *c);
    if (!c)
        return leakgate_error__set(LEAKGATE_ENOMEM, "compare");
    rc = leakgate_compare__limits(&c->lim, opts);
    if (rc == 0)
        rc = names(c, opts);
    if (rc == 0)
        rc = sampling_warning(c, base, head);
    if (rc == 0 && head->env.thresholds_path) {
        c->head_thresholds = leakgate_util__strdup(head->env.thresholds_path);
        if (!c->head_thresholds)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "compare");
    }
    if (rc == 0)
        rc = leakgate_results__view(base);
    if (rc == 0)
        rc = leakgate_results__view(head);
    if (rc == 0) {
        c->base_windows = base->nview;
        c->head_windows = head->nview;
        c->base_files = base->nfiles;
        c->head_files = head->nfiles;
        rc = leakgate_compare__build(
            c, (const struct leakgate_verdict *const *)base->view, base->nview,
            (const struct leakgate_verdict *const *)head->view, head->nview);
    }
    if (rc < 0) {
        leakgate_compare_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void
leakgate_compare_free(leakgate_compare *c)
{
    if (!c)
        return;
    leakgate_compare__dispose(c);
    leakgate_util__free(c);
}

size_t
leakgate_compare_regressions(const leakgate_compare *c)
{
    return c->nregressions;
}

int
leakgate_compare_render(char **out,
                        const leakgate_compare *c,
                        leakgate_compare_format fmt)
{
    *out = fmt == LEAKGATE_COMPARE_MARKDOWN ? leakgate_compare__markdown(c)
           : fmt == LEAKGATE_COMPARE_JSON   ? leakgate_compare__json(c)
                                            : leakgate_compare__text(c);
    return *out ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "compare output");
}

void
leakgate_compare_output_free(char *out)
{
    leakgate_util__free(out);
}

static int
write_text(const char *path, char *text, const char *what)
{
    int rc;

    if (!text)
        return leakgate_error__set(LEAKGATE_ENOMEM, "%s", what);
    rc = leakgate_files__write(NULL, path, text, strlen(text),
                               LEAKGATE_FILES_MKDIRS);
    leakgate_util__free(text);
    return rc;
}

int
leakgate_compare_write(const leakgate_compare *c,
                       leakgate_compare_format fmt,
                       const char *path)
{
    char *text = NULL;

    if (leakgate_compare_render(&text, c, fmt) < 0)
        return LEAKGATE_ENOMEM;
    return write_text(path, text, "compare output");
}

/* source_root without symbolic links, into real (PATH_MAX bytes); NULL
 * when it is the same or cannot be resolved. */
static const char *
real_root(char *real, const char *source_root)
{
    if (!source_root || source_root[0] != '/' || !realpath(source_root, real))
        return NULL;
    return strcmp(real, source_root) == 0 ? NULL : real;
}

int
leakgate_compare_write_sarif(const leakgate_compare *c,
                             const char *path,
                             const char *source_root)
{
    char real[PATH_MAX];

    return write_text(path,
                      leakgate_sarif__compare(c, source_root,
                                              real_root(real, source_root),
                                              c->head_thresholds),
                      "SARIF");
}

int
leakgate_results_write_sarif(leakgate_results *r,
                             const char *path,
                             const char *source_root)
{
    char real[PATH_MAX];
    int rc = leakgate_results__view(r);

    if (rc < 0)
        return rc;
    return write_text(path,
                      leakgate_sarif__results(
                          (const struct leakgate_verdict *const *)r->view,
                          r->nview, source_root, real_root(real, source_root),
                          r->env.thresholds_path),
                      "SARIF");
}
