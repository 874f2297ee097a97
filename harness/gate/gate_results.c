/* SPDX-License-Identifier: MIT */
/*
 * gate_results: the files a run leaves behind.  Per failing window under
 * --report-dir: SUITE/TEST.before.heap and .after.heap (jeprof-readable),
 * SUITE/TEST.txt (the report), SUITE/TEST.json, and the call graph of the
 * growth: SUITE/TEST.dot always, SUITE/TEST.svg and .pdf when Graphviz's
 * `dot` is on PATH (render.c; without it the report says so, once).  For
 * the run: --junit, --json and, with --report-dir, DIR/index.html
 * (html.c).  Every file is written to a temporary name and renamed, so a
 * crash never leaves a half-written file; a link, a device or another
 * user's file in an artifact's place is refused (files.c).  A window's
 * artifacts are written by a descriptor of DIR/SUITE, opened once without
 * following a link; artifacts that cannot be written cost no verdict and
 * no other output (the report says why).  Names are sanitized
 * with leakgate_util__sanitize_name(), and a hash of the name added where
 * that changed or shortened it (name_component()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "gate.h"
#include "graph.h"
#include "html.h"
#include "profile.h"
#include "outputs.h"
#include "render.h"
#include "report.h"
#include "results.h"
#include "symbolize.h"
#include "replay.h"
#include "util.h"

/* The largest SVG read back to be inlined into index.html. */

int
leakgate_gate__write_file(const char *path, const char *data, size_t len)
{
    /* A temporary name renamed over path, inside its directory: a link
     * or a device there is refused, never written through (files.c). */
    return leakgate_files__write(NULL, path, data, len, 0);
}

/* The longest path component an artifact's name gives (NAME_MAX is 255,
 * and ".before.heap" follows). */
#define COMPONENT_MAX 200

/*
 * The file name component of a suite or test name: the name sanitized
 * (util.c), and when sanitizing changed it or it is longer than
 * COMPONENT_MAX, cut to fit and followed by '~' and 12 hex digits of a
 * hash of the name itself.  '~' is never left by sanitizing: a name kept
 * as it is cannot meet one with a hash, and two names that sanitize alike
 * ("a b", "a_b", "a:b") get files of their own.  NULL: out of memory.
 */
static char *
name_component(const char *name)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char *safe = leakgate_util__sanitize_name(name);
    uint64_t h = leakgate_util__fnv1a(LEAKGATE_UTIL_FNV_BASIS, name);

    if (!safe)
        return NULL;
    if (strcmp(safe, name) == 0 && strlen(safe) <= COMPONENT_MAX)
        return safe;
    if (strlen(safe) > COMPONENT_MAX - 13)
        safe[COMPONENT_MAX - 13] = '\0';
    leakgate_buf__printf(&b, "%s~%012llx", safe,
                         (unsigned long long)(h & 0xffffffffffffull));
    leakgate_util__free(safe);
    return leakgate_buf__take(&b);
}

static char *
artifact_path(const char *dir, const char *stem, const char *ext)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__printf(&b, "%s/%s%s", dir, stem, ext);
    return leakgate_buf__take(&b);
}

/* The entry of path in its directory (artifact paths always hold a
 * '/'). */
static const char *
base_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

/* An artifact written into the window's own directory, by descriptor:
 * never through a link planted since it was checked. */
static int
put_artifact(int dir_fd, const char *path, const char *data, size_t len)
{
    return leakgate_files__write_at(dir_fd, base_of(path), path, data, len,
                                    LEAKGATE_FILES_NOSYNC);
}

/* The heap pair of a window measured without dumps (the fast pass, a
 * lean process, a replay by allocation order): its growth as the stacks
 * of an "after" profile over an empty "before" (profile.h). */
static int
write_synthesized_heaps(int dir_fd, const struct leakgate_verdict *v)
{
    struct leakgate_buf before = LEAKGATE_BUF_INIT, after = LEAKGATE_BUF_INIT;
    struct leakgate_profile_stack *g =
        leakgate_util__calloc(v->nstacks + 1, sizeof *g);
    size_t n = 0;
    int rc = g ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "heap profile");

    for (size_t i = 0; rc == 0 && i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        if (s->bytes <= 0 || s->objs <= 0)
            continue;
        g[n].pcs = s->pcs;
        g[n].npcs = s->npcs;
        g[n].objs = (uint64_t)s->objs;
        g[n++].bytes = (uint64_t)s->bytes;
    }
    if (rc == 0)
        rc = leakgate_profile__synthesize_pair(&before, &after, g, n);
    if (rc == 0)
        rc = put_artifact(dir_fd, v->heap_before, before.ptr, before.len);
    if (rc == 0)
        rc = put_artifact(dir_fd, v->heap_after, after.ptr, after.len);
    leakgate_buf__dispose(&before);
    leakgate_buf__dispose(&after);
    leakgate_util__free(g);
    return rc;
}

static int
write_heaps(int dir_fd, struct leakgate_gate *gate, struct leakgate_verdict *v)
{
    const char *before = gate->cur.first_before;
    size_t before_len = gate->cur.first_before_len;
    int rc;

    if (gate->cur.fast || gate->cur.lean || gate->cur.ordinals)
        return write_synthesized_heaps(dir_fd, v);
    if (!before) {
        before = gate->before.text;
        before_len = gate->before.len;
    }
    rc = put_artifact(dir_fd, v->heap_before, before, before_len);
    if (rc == 0)
        rc = put_artifact(dir_fd, v->heap_after, gate->after.text,
                          gate->after.len);
    return rc;
}

/* The DOT text of v's counted growth (shown frames only). */
static int
verdict_dot(char **out,
            const struct leakgate_verdict *v,
            const struct leakgate_report_env *env)
{
    struct leakgate_graph_opts o = LEAKGATE_GRAPH_OPTS_INIT;
    struct leakgate_graph_stack *gs =
        leakgate_util__calloc(v->nstacks ? v->nstacks : 1, sizeof *gs);
    struct leakgate_buf title = LEAKGATE_BUF_INIT, note = LEAKGATE_BUF_INIT;
    const char *notes[1];
    size_t n = 0;
    int rc;

    *out = NULL;
    for (size_t i = 0; gs && i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];
        size_t begin = s->shown_begin;

        if (s->bytes <= 0 || !s->frames || s->judgement.ignored)
            continue;
        /* Drawn from the user's frames down: the C library's innermost
         * frames (__strdup) are folded into their caller, whose box then
         * holds the bytes the report's first line is about. */
        while (begin + 1 < s->shown_end &&
               leakgate_symbolize__system_frame(&s->frames[begin]))
            begin++;
        gs[n++] = (struct leakgate_graph_stack){
            s->frames + begin, s->shown_end - begin, s->bytes, s->objs};
    }
    leakgate_buf__printf(
        &title, "leakgate: %s %s",
        v->status == LEAKGATE_STATUS_FAIL ? "FAIL" : "growth of", v->name);
    leakgate_buf__printf(&note, "binary %s",
                         env->binary && *env->binary ? env->binary : "unknown");
    notes[0] = note.ptr;
    o.title = title.ptr;
    o.notes = notes;
    o.nnotes = 1;
    if (!gs || title.failed || note.failed) {
        leakgate_error__set(LEAKGATE_ENOMEM, "call graph");
        rc = LEAKGATE_ENOMEM;
    } else {
        rc = leakgate_graph__dot(out, NULL, gs, n, &o);
    }
    leakgate_buf__dispose(&title);
    leakgate_buf__dispose(&note);
    leakgate_util__free(gs);
    return rc;
}

/* What to tell once when dot cannot draw. */
static int
picture_failed(struct leakgate_gate *gate, struct leakgate_verdict *v, int rc)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    if (rc == LEAKGATE_ENOMEM)
        return rc;
    if (rc == LEAKGATE_ENOTFOUND) {
        gate->pictures = -1;
        leakgate_buf__printf(&b,
                             "Graphviz's dot is not on PATH: only the DOT "
                             "text was written (%s); install graphviz for "
                             "SVG and PDF call graphs",
                             v->dot_path);
    } else {
        gate->pictures = -2;
        leakgate_buf__printf(&b, "dot could not draw the call graph: %s",
                             leakgate_error_last());
    }
    v->picture_note = leakgate_buf__take(&b);
    return v->picture_note ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "note");
}

/* Draw v's DOT text as SVG and PDF next to it (the two dot processes
 * side by side).  Without dot (or after it failed once) the gate does not
 * try again: one note per run.  A file that cannot be written is an
 * artifact's failure (the caller's). */
static int
draw(int dir_fd,
     struct leakgate_gate *gate,
     struct leakgate_verdict *v,
     const char *stem,
     const char *dot)
{
    static const char *const formats[] = {"svg", "pdf"};
    static const char *const exts[] = {".svg", ".pdf"};
    char **paths[] = {&v->svg_path, &v->pdf_path};
    char *drawn[2] = {NULL, NULL};
    size_t lens[2] = {0, 0};
    int rc;

    if (gate->pictures < 0)
        return 0;
    rc = leakgate_render__texts(drawn, lens, dot, strlen(dot), formats, 2,
                                LEAKGATE_RENDER_TIMEOUT_MS);
    if (rc < 0)
        return picture_failed(gate, v, rc);
    for (size_t i = 0; i < 2 && rc == 0; i++) {
        char *path = artifact_path(v->artifact_dir, stem, exts[i]);

        rc = path ? put_artifact(dir_fd, path, drawn[i], lens[i])
                  : leakgate_error__set(LEAKGATE_ENOMEM, "picture path");
        if (rc == 0) {
            *paths[i] = path;
            path = NULL;
            gate->pictures = 1;
        }
        leakgate_util__free(path);
    }
    leakgate_util__free(drawn[0]);
    leakgate_util__free(drawn[1]);
    return rc;
}

static int
write_picture(int dir_fd,
              struct leakgate_gate *gate,
              struct leakgate_verdict *v,
              const char *stem)
{
    char *dot = NULL;
    int rc = verdict_dot(&dot, v, &gate->env);

    if (rc == 0)
        rc = put_artifact(dir_fd, v->dot_path, dot, strlen(dot));
    if (rc == 0)
        rc = draw(dir_fd, gate, v, stem, dot);
    leakgate_util__free(dot);
    return rc;
}

/* v's artifact directory: DIR/SUITE (its display name). */
static int
name_dir(struct leakgate_verdict *v, const char *report_dir)
{
    struct leakgate_buf dir = LEAKGATE_BUF_INIT;
    char *safe_suite = name_component(v->suite);

    if (safe_suite)
        leakgate_buf__printf(&dir, "%s/%s", report_dir, safe_suite);
    leakgate_util__free(safe_suite);
    leakgate_util__free(v->artifact_dir);
    v->artifact_dir = leakgate_buf__take(&dir);
    return v->artifact_dir
               ? 0
               : leakgate_error__set(LEAKGATE_ENOMEM, "artifact path");
}

/* v's artifact paths in its directory: STEM.* (display names). */
static int
name_artifacts(struct leakgate_verdict *v, const char *stem)
{
    v->heap_before = artifact_path(v->artifact_dir, stem, ".before.heap");
    v->heap_after = artifact_path(v->artifact_dir, stem, ".after.heap");
    v->json_path = artifact_path(v->artifact_dir, stem, ".json");
    v->text_path = artifact_path(v->artifact_dir, stem, ".txt");
    v->dot_path = artifact_path(v->artifact_dir, stem, ".dot");
    if (!v->heap_before || !v->heap_after || !v->json_path || !v->text_path ||
        !v->dot_path)
        return leakgate_error__set(LEAKGATE_ENOMEM, "artifact path");
    return 0;
}

/* What tells this process's windows from another binary's, or another
 * ctest prefix's, under one report dir: the binary's path and the
 * prefix ("BINARY\tPREFIX\n").  NULL: out of memory. */
static char *
artifact_origin(const char **label_out)
{
    static char exe[4096]; /* the process's: read once */
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    const char *prefix = getenv(LEAKGATE_OUTPUTS_PREFIX_ENV);

    if (!exe[0]) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

        exe[n > 0 ? n : 0] = '\0';
    }
    prefix = prefix ? prefix : "";
    leakgate_buf__printf(&b, "%s\t%s\n", exe, prefix);
    *label_out = *prefix ? prefix : leakgate_util__base_name(exe);
    return leakgate_buf__take(&b);
}

/* The stem of a window's files when another origin holds its plain name:
 * "TEST@LABEL~HASH" (label: the prefix, else the binary's name; the hash
 * of the name and the whole origin).  Sanitizing never leaves '~' or
 * '@' next to it this way, so it meets no plain name. */
static char *
qualified_stem(const char *test, const char *label, const char *origin)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char *safe = leakgate_util__sanitize_name(test);
    char *lab = leakgate_util__sanitize_name(*label ? label : "unknown");
    uint64_t h = leakgate_util__fnv1a(
        leakgate_util__fnv1a(LEAKGATE_UTIL_FNV_BASIS, test), origin);
    if (safe && lab) {
        if (strlen(safe) > 120)
            safe[120] = '\0';
        if (strlen(lab) > 48)
            lab[48] = '\0';
        leakgate_buf__printf(&b, "%s@%s~%012llx", safe, lab,
                             (unsigned long long)(h & 0xffffffffffffull));
    }
    leakgate_util__free(safe);
    leakgate_util__free(lab);
    return leakgate_buf__take(&b);
}

/*
 * The stem of the window's files in its directory dir_fd.  The first
 * origin (binary and ctest prefix) to write a test's files there holds
 * the plain name, SUITE/TEST.*, recorded in the hidden ".TEST.origin"
 * beside them (under the directory's flock: processes that finish at
 * once agree); a window of another origin gets TEST@LABEL~HASH.*, so
 * that binaries sharing a report dir never replace each other's files.
 * The same binary and prefix keep their name from run to run.
 */
static int
claim_stem(char **stem_out,
           struct leakgate_verdict *v,
           int dir_fd,
           const char *display)
{
    const char *label = "", *test = v->test;
    char *origin = artifact_origin(&label);
    char *plain = name_component(test);
    struct leakgate_buf claim = LEAKGATE_BUF_INIT, held = LEAKGATE_BUF_INIT;
    struct leakgate_buf shown = LEAKGATE_BUF_INIT;
    int rc = 0;

    *stem_out = NULL;
    if (!origin || !plain)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "artifact name");
    else
        leakgate_buf__printf(&claim, ".%s.origin", plain);
    leakgate_buf__printf(&shown, "%s/%s", display, claim.ptr ? claim.ptr : "");
    if (rc == 0 && (claim.failed || shown.failed))
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "artifact name");
    while (rc == 0 && flock(dir_fd, LOCK_EX) != 0) {
        if (errno != EINTR)
            rc = leakgate_error__set(LEAKGATE_EIO, "cannot lock %s: %s",
                                     display, strerror(errno));
    }
    if (rc == 0) {
        rc = leakgate_files__read_at(&held, dir_fd, claim.ptr, shown.ptr, 4096,
                                     "file");
        if (rc == LEAKGATE_ENOTFOUND) {
            rc =
                leakgate_files__write_at(dir_fd, claim.ptr, shown.ptr, origin,
                                         strlen(origin), LEAKGATE_FILES_NOSYNC);
        } else if (rc != LEAKGATE_ENOMEM &&
                   (rc < 0 || !held.ptr || strcmp(held.ptr, origin) != 0)) {
            /* Another origin's, or a record that is not one: the plain
             * name is not this origin's. */
            rc = 0;
            *stem_out = qualified_stem(test, label, origin);
        }
        (void)flock(dir_fd, LOCK_UN);
    }
    if (rc == 0 && !*stem_out) {
        *stem_out = plain;
        plain = NULL;
    }
    if (rc == 0 && !*stem_out)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "artifact name");
    if (rc == 0) { /* the binary is origin's first field */
        leakgate_util__free(v->artifacts_binary);
        v->artifacts_binary =
            leakgate_util__strndup(origin, strcspn(origin, "\t"));
        if (!v->artifacts_binary)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "artifact name");
    }
    leakgate_util__free(origin);
    leakgate_util__free(plain);
    leakgate_buf__dispose(&claim);
    leakgate_buf__dispose(&held);
    leakgate_buf__dispose(&shown);
    return rc;
}

/*
 * The window's artifact directory, REPORT_DIR/SUITE, made if missing and
 * opened as a descriptor: a directory of this user, never a link (a link
 * planted there, or swapped in later, is never written through: every
 * artifact is written by this descriptor).
 */
static int
open_artifact_dir(int *fd_out, const char *report_dir, const char *suite)
{
    char *entry = name_component(suite);
    int top = -1, rc;

    *fd_out = -1;
    rc = entry ? leakgate_files__mkdirs(report_dir, "report directory")
               : leakgate_error__set(LEAKGATE_ENOMEM, "artifact path");
    if (rc == 0) {
        top = open(report_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (top < 0)
            rc = leakgate_error__set(LEAKGATE_EIO,
                                     "cannot open the report directory %s: %s",
                                     report_dir, strerror(errno));
    }
    if (rc == 0) {
        struct leakgate_buf b = LEAKGATE_BUF_INIT;

        leakgate_buf__printf(&b, "%s/%s", report_dir, entry);
        rc = b.failed ? leakgate_error__set(LEAKGATE_ENOMEM, "artifact path")
                      : leakgate_files__make_own_dir(fd_out, top, entry, b.ptr);
        leakgate_buf__dispose(&b);
    }
    if (top >= 0)
        close(top);
    leakgate_util__free(entry);
    return rc;
}

/* The artifacts could not be written (why: the error set): the verdict
 * stands, its report says which path and why, and the files this window
 * did write are removed, so that nothing half a set is left. */
static int
not_written(struct leakgate_verdict *v, int dir_fd)
{
    char **paths[] = {&v->heap_before, &v->heap_after, &v->json_path,
                      &v->text_path,   &v->dot_path,   &v->svg_path,
                      &v->pdf_path};

    leakgate_util__free(v->artifacts_note);
    v->artifacts_note = leakgate_util__strdup(leakgate_error_last());
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        if (*paths[i] && dir_fd >= 0)
            (void)unlinkat(dir_fd, base_of(*paths[i]), 0);
        leakgate_util__free(*paths[i]);
        *paths[i] = NULL;
    }
    leakgate_util__free(v->artifact_dir);
    v->artifact_dir = NULL;
    leakgate_util__free(v->artifacts_binary);
    v->artifacts_binary = NULL;
    leakgate_util__free(v->picture_note);
    v->picture_note = NULL;
    return v->artifacts_note ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "note");
}

int
leakgate_gate__write_artifacts(struct leakgate_gate *gate,
                               struct leakgate_verdict *v)
{
    const struct leakgate_verdict *one[1] = {v};
    char *json = NULL, *stem = NULL;
    int dir_fd = -1;
    int rc = name_dir(v, gate->opts.report_dir);

    if (rc < 0)
        return rc;
    rc = open_artifact_dir(&dir_fd, gate->opts.report_dir, v->suite);
    if (rc == 0)
        rc = claim_stem(&stem, v, dir_fd, v->artifact_dir);
    if (rc == 0)
        rc = name_artifacts(v, stem);
    if (rc == 0 && (v->how == LEAKGATE_MEASURED_SUITE_END || v->orphans)) {
        /* Judged object by object (at its suite's end, or with what its
         * threads kept after it): no heap pair shows what it lost, and a
         * pair its window wrote before would show part of it. */
        (void)unlinkat(dir_fd, base_of(v->heap_before), 0);
        (void)unlinkat(dir_fd, base_of(v->heap_after), 0);
        leakgate_util__free(v->heap_before);
        leakgate_util__free(v->heap_after);
        v->heap_before = v->heap_after = NULL;
    } else if (rc == 0) {
        rc = write_heaps(dir_fd, gate, v);
    }
    if (rc == 0)
        rc = write_picture(dir_fd, gate, v, stem);
    /* The report names the artifacts: render it again now they exist. */
    if (rc == 0) {
        leakgate_util__free(v->report);
        v->report = leakgate_report__text(v, &gate->env, false);
        json = leakgate_report__json(one, 1, &gate->env);
        if (!v->report || !json)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "report");
    }
    if (rc == 0)
        rc = put_artifact(dir_fd, v->text_path, v->report, strlen(v->report));
    if (rc == 0)
        rc = put_artifact(dir_fd, v->json_path, json, strlen(json));
    leakgate_util__free(json);
    /* A full disk, a name too long, a link planted: the verdict, the
     * JUnit and the JSON do not depend on the artifacts. */
    if (rc < 0 && rc != LEAKGATE_ENOMEM) {
        rc = not_written(v, dir_fd);
        if (rc == 0) {
            leakgate_util__free(v->report);
            v->report = leakgate_report__text(v, &gate->env, false);
            if (!v->report)
                rc = leakgate_error__set(LEAKGATE_ENOMEM, "report");
        }
    }
    if (dir_fd >= 0)
        close(dir_fd);
    leakgate_util__free(stem);
    return rc;
}

int
leakgate_gate__rewrite_artifact_text(struct leakgate_gate *gate,
                                     const struct leakgate_verdict *v)
{
    int dir_fd = -1;
    int rc;

    if (!v->text_path || !v->report || !gate->opts.report_dir)
        return 0;
    rc = open_artifact_dir(&dir_fd, gate->opts.report_dir, v->suite);
    if (rc == 0)
        rc = put_artifact(dir_fd, v->text_path, v->report, strlen(v->report));
    if (dir_fd >= 0)
        close(dir_fd);
    return rc;
}

/* What this process said about call graphs (NULL: nothing, none was
 * drawn). */
static const char *
pictures_said(const struct leakgate_gate *gate)
{
    switch (gate->pictures) {
    case 1: return "call graphs drawn by Graphviz dot (SVG, PDF; DOT kept)";
    case -1:
        return "Graphviz dot not found on PATH: call graphs as DOT "
               "text only (install graphviz)";
    case -2:
        return "Graphviz dot failed: call graphs as DOT text only (see "
               "the failure's note)";
    default: return NULL;
    }
}

int
leakgate_gate_outputs_finish(const struct leakgate_gate_options *opts)
{
    int rc;

    if (!leakgate_outputs__finishing())
        return 0;
    rc = leakgate_outputs__finish(opts->junit_path, opts->json_path,
                                  opts->report_dir);
    return rc < 0 ? rc : 1;
}

int
leakgate_gate_outputs_open(leakgate_gate *gate)
{
    /* A replay's results go to its own file, for the process that
     * started it. */
    if (gate->outputs || gate->replay.child)
        return 0;
    return leakgate_outputs__open(&gate->outputs, gate->opts.junit_path,
                                  gate->opts.json_path, gate->opts.report_dir);
}

void
leakgate_gate_outputs_started(leakgate_gate *gate,
                              const char *suite,
                              const char *test,
                              const char *phase)
{
    leakgate_outputs__started(gate->outputs, suite, test, phase);
}

static int
journal_env(struct leakgate_gate *gate)
{
    struct leakgate_buf env = LEAKGATE_BUF_INIT, props = LEAKGATE_BUF_INIT;
    int rc;

    leakgate_report__json_env(&env, &gate->env);
    leakgate_report__junit_env(&props, &gate->env);
    rc = env.failed || !env.ptr || props.failed || !props.ptr
             ? leakgate_error__set(LEAKGATE_ENOMEM, "environment")
             : leakgate_outputs__env(gate->outputs, env.ptr, props.ptr);
    leakgate_buf__dispose(&env);
    leakgate_buf__dispose(&props);
    return rc;
}

static int
journal_verdict(struct leakgate_gate *gate, const struct leakgate_verdict *v)
{
    struct leakgate_buf json = LEAKGATE_BUF_INIT, junit = LEAKGATE_BUF_INIT;
    struct leakgate_report_piece piece;
    int rc;

    rc = leakgate_report__render_piece(&piece, &json, &junit, v, &gate->env)
             ? leakgate_outputs__window(gate->outputs, v->suite, v->test,
                                        &piece, leakgate_results__rank(v))
             : leakgate_error__set(LEAKGATE_ENOMEM, "record");
    leakgate_buf__dispose(&json);
    leakgate_buf__dispose(&junit);
    return rc;
}

int
leakgate_gate_outputs_finished(leakgate_gate *gate,
                               const char *suite,
                               const char *test)
{
    const struct leakgate_verdict *v;
    int rc = 0;

    if (!gate->outputs)
        return 0;
    v = leakgate_gate__find_verdict(gate, suite, test);
    if (!v)
        return 0;
    /* The environment first: a killed process's windows need one. */
    if (!leakgate_outputs__has_env(gate->outputs))
        rc = journal_env(gate);
    return rc == 0 ? journal_verdict(gate, v) : rc;
}

/* Every window of this process into the shared outputs' journals, then
 * each shared output merged from the whole run's. */
static int
write_shared(struct leakgate_gate *gate)
{
    int rc = leakgate_gate_outputs_open(gate);

    if (rc == 0 && gate->outputs)
        rc = journal_env(gate);
    for (size_t i = 0; rc == 0 && gate->outputs && i < gate->nverdicts; i++)
        rc = journal_verdict(gate, gate->verdicts[i]);
    if (rc == 0 && gate->outputs)
        rc = leakgate_outputs__merge(gate->outputs, pictures_said(gate));
    return rc;
}

int
leakgate_gate_write_results(leakgate_gate *gate)
{
    const struct leakgate_verdict *const *all =
        (const struct leakgate_verdict *const *)gate->verdicts;
    struct leakgate_symbolizer *sym;
    const char *junit = gate->opts.junit_path, *json = gate->opts.json_path;
    char said[1024];
    int rc = 0;

    leakgate_gate__go_home(gate); /* and the thresholds file after it */
    /* The results name the binary and its build-id even when no window
     * needed symbols (every test passed); without them, they stay
     * unknown.  Without a symbolizer yet, they are read without one:
     * making it would load libdw and its four libraries (~0.5 ms of a
     * one-test process's outputs) only for these two strings. */
    if ((gate->opts.report_dir || junit || json) &&
        (!gate->env.binary || !*gate->env.binary)) {
        if (gate->sym)
            (void)leakgate_gate__symbolizer(&sym, gate);
        else if (leakgate_symbolize__self_main(&gate->env.binary,
                                               &gate->env.build_id) < 0)
            gate->env.binary = gate->env.build_id = "";
    }
    leakgate_replay__cap_stacks(gate);
    if (gate->replay.child) {
        /* A replay writes its results file only (index.html and the
         * run's files are the first process's). */
        return json ? leakgate_results__write_rendered(
                          json, "json",
                          leakgate_report__json(all, gate->nverdicts,
                                                &gate->env),
                          "JSON")
                    : 0;
    }
    /* A DIR/ or %p spec is this process's own file.  Each output on its
     * own: one that cannot be written costs no other. */
    said[0] = '\0';
    if (junit && !leakgate_outputs__is_shared(junit))
        rc = leakgate_error__gather(
            rc, said,
            leakgate_results__write_rendered(
                junit, "xml",
                leakgate_report__junit(all, gate->nverdicts, &gate->env),
                "JUnit"));
    if (json && !leakgate_outputs__is_shared(json))
        rc = leakgate_error__gather(
            rc, said,
            leakgate_results__write_rendered(
                json, "json",
                leakgate_report__json(all, gate->nverdicts, &gate->env),
                "JSON"));
    return leakgate_error__gather(rc, said, write_shared(gate));
}

int
leakgate_gate_print_verdict(const leakgate_gate *gate,
                            const leakgate_verdict *v,
                            FILE *f)
{
    char *text;
    int rc = 0;

    if (!v->report || !*v->report)
        return 0;
    if (!gate->color)
        return fputs(v->report, f) < 0 ? LEAKGATE_EIO : 0;
    text = leakgate_report__text(v, &gate->env, true);
    if (!text)
        return leakgate_error__set(LEAKGATE_ENOMEM, "report");
    if (fputs(text, f) < 0)
        rc = LEAKGATE_EIO;
    leakgate_util__free(text);
    return rc;
}

int
leakgate_gate__finish_late(struct leakgate_gate *gate,
                           struct leakgate_verdict *v,
                           bool report)
{
    int rc = 0;

    if (report) {
        leakgate_util__free(v->report);
        v->report = v->status == LEAKGATE_STATUS_FAIL
                        ? leakgate_report__text(v, &gate->env, false)
                        : leakgate_util__strdup("");
        if (!v->report)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "report");
    }
    if (rc == 0 && v->status == LEAKGATE_STATUS_FAIL && gate->opts.report_dir)
        rc = leakgate_gate__write_artifacts(gate, v);
    leakgate_verdict__fail_unjoined(v);
    return rc;
}

void
leakgate_gate__replace_verdict(struct leakgate_gate *gate,
                               struct leakgate_verdict *w,
                               struct leakgate_verdict *v)
{
    for (size_t k = 0; k < gate->nverdicts; k++) {
        if (gate->verdicts[k] == w)
            gate->verdicts[k] = v;
    }
    leakgate_verdict__free(w);
}
