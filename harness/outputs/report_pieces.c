/* SPDX-License-Identifier: MIT */
/*
 * report_pieces: the documents of a run from its verdicts.  Each window
 * is rendered into its pieces (report_junit.c's testcase, report_json.c's
 * test object, the counts: leakgate_report__render_piece(),
 * leakgate_report__piece_of()), and the pieces into the JUnit and JSON
 * documents (leakgate_report__junit(), leakgate_report__json()): a linked
 * run, `leakgate run` and the shared outputs compose the same pieces, so
 * the three write the same bytes for the same window.  The top of the
 * report files.
 */
#include "report.h"

#include <string.h>

#include "report_parts.h"
#include "util.h"

static void
dispose_pieces(struct leakgate_report_piece *p,
               struct leakgate_buf *bufs,
               size_t n)
{
    for (size_t i = 0; bufs && i < n; i++)
        leakgate_buf__dispose(&bufs[i]);
    leakgate_util__free(bufs);
    leakgate_util__free(p);
}

/* The pieces of n verdicts (strings owned by *bufs, n of them). */
static struct leakgate_report_piece *
render_pieces(struct leakgate_buf **bufs_out,
              const struct leakgate_verdict *const *v,
              size_t n,
              const struct leakgate_report_env *env,
              bool junit)
{
    struct leakgate_report_piece *p =
        leakgate_util__calloc(n ? n : 1, sizeof *p);
    struct leakgate_buf *bufs = leakgate_util__calloc(n ? n : 1, sizeof *bufs);
    bool failed = !p || !bufs;

    for (size_t i = 0; !failed && i < n; i++) {
        if (junit)
            leakgate_report__junit_case(&bufs[i], v[i], env);
        else
            leakgate_report__json_test(&bufs[i], v[i]);
        failed = bufs[i].failed || !bufs[i].ptr;
        leakgate_report__piece_of(&p[i], v[i]);
        p[i].junit_case = p[i].json_test = bufs[i].ptr;
    }
    if (failed) {
        dispose_pieces(p, bufs, n);
        bufs = NULL;
        p = NULL;
    }
    *bufs_out = bufs;
    return p;
}

bool
leakgate_report__render_piece(struct leakgate_report_piece *out,
                              struct leakgate_buf *json,
                              struct leakgate_buf *junit,
                              const struct leakgate_verdict *v,
                              const struct leakgate_report_env *env)
{
    leakgate_report__json_test(json, v);
    leakgate_report__junit_case(junit, v, env);
    leakgate_report__piece_of(out, v);
    out->json_test = json->ptr;
    out->junit_case = junit->ptr;
    return !json->failed && json->ptr && !junit->failed && junit->ptr;
}

void
leakgate_report__piece_of(struct leakgate_report_piece *out,
                          const struct leakgate_verdict *v)
{
    memset(out, 0, sizeof *out);
    out->suite = leakgate_report__suite_of(v);
    out->status = v->status;
    out->failed = leakgate_report__is_failure(v);
    out->error = v->ended != NULL || leakgate_verdict__unjudged(v);
    out->skipped = !out->error && leakgate_verdict__skipped(v);
    out->seconds = leakgate_report__seconds_of(v);
}

char *
leakgate_report__junit(const struct leakgate_verdict *const *v,
                       size_t n,
                       const struct leakgate_report_env *env)
{
    struct leakgate_buf envb = LEAKGATE_BUF_INIT, *bufs = NULL;
    struct leakgate_report_piece *p = render_pieces(&bufs, v, n, env, true);
    char *doc = NULL;

    leakgate_report__junit_env(&envb, env);
    if (p && !envb.failed)
        doc = leakgate_report__junit_doc(p, n, envb.ptr);
    dispose_pieces(p, bufs, n);
    leakgate_buf__dispose(&envb);
    return doc;
}

char *
leakgate_report__json(const struct leakgate_verdict *const *v,
                      size_t n,
                      const struct leakgate_report_env *env)
{
    struct leakgate_buf envb = LEAKGATE_BUF_INIT, *bufs = NULL;
    struct leakgate_report_piece *p = render_pieces(&bufs, v, n, env, false);
    char *doc = NULL;

    leakgate_report__json_env(&envb, env);
    if (p && !envb.failed && envb.ptr)
        doc = leakgate_report__json_doc(p, n, envb.ptr);
    dispose_pieces(p, bufs, n);
    leakgate_buf__dispose(&envb);
    return doc;
}
