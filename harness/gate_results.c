/* SPDX-License-Identifier: MIT */
/*
 * gate_results: the files a run leaves behind.  Per failing window under
 * --report-dir: SUITE/TEST.before.heap and .after.heap (jeprof-readable),
 * SUITE/TEST.txt (the report) and SUITE/TEST.json; for the run: --junit and
 * --json.  Every file is written to a temporary name and renamed, so a
 * crash never leaves a half-written file.  Names are sanitized with
 * leakgate_util__sanitize_name().
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "gate.h"
#include "report.h"
#include "util.h"

int
leakgate_gate__write_file(const char *path, const char *data, size_t len)
{
    struct leakgate_buf tmp = LEAKGATE_BUF_INIT;
    FILE *f = NULL;
    int rc = 0;

    leakgate_buf__printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
    if (tmp.failed)
        return leakgate_error__set(LEAKGATE_ENOMEM, "path");
    f = fopen(tmp.ptr, "wb");
    if (!f) {
        rc = leakgate_error__set(LEAKGATE_EIO, "cannot write %s: %s", path,
                                 strerror(errno));
        goto cleanup;
    }
    if (fwrite(data, 1, len, f) != len || fflush(f) != 0 ||
        fsync(fileno(f)) != 0) {
        rc = leakgate_error__set(LEAKGATE_EIO, "cannot write %s: %s", path,
                                 strerror(errno));
        goto cleanup;
    }
    if (fclose(f) != 0) {
        f = NULL;
        rc = leakgate_error__set(LEAKGATE_EIO, "cannot write %s: %s", path,
                                 strerror(errno));
        goto cleanup;
    }
    f = NULL;
    if (rename(tmp.ptr, path) != 0)
        rc = leakgate_error__set(LEAKGATE_EIO, "cannot rename to %s: %s", path,
                                 strerror(errno));
cleanup:
    if (f)
        fclose(f);
    if (rc < 0)
        unlink(tmp.ptr);
    leakgate_buf__dispose(&tmp);
    return rc;
}

/* mkdir -p for the report directory and one level below it. */
static int
make_dirs(const char *dir)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    int rc = 0;

    leakgate_buf__puts(&b, dir);
    if (b.failed)
        return leakgate_error__set(LEAKGATE_ENOMEM, "path");
    for (char *p = b.ptr + 1; *p && rc == 0; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(b.ptr, 0777) != 0 && errno != EEXIST)
            rc = -1;
        *p = '/';
    }
    if (rc == 0 && mkdir(b.ptr, 0777) != 0 && errno != EEXIST)
        rc = -1;
    if (rc < 0)
        rc = leakgate_error__set(LEAKGATE_EIO,
                                 "cannot create report directory %s: %s", dir,
                                 strerror(errno));
    leakgate_buf__dispose(&b);
    return rc;
}

static char *
artifact_path(const char *dir, const char *test, const char *ext)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char *safe = leakgate_util__sanitize_name(test);

    if (!safe)
        return NULL;
    leakgate_buf__printf(&b, "%s/%s%s", dir, safe, ext);
    leakgate_util__free(safe);
    return leakgate_buf__take(&b);
}

static int
write_text(const char *path, const char *text)
{
    return leakgate_gate__write_file(path, text, strlen(text));
}

static int
write_heaps(struct leakgate_gate *gate, struct leakgate_verdict *v)
{
    const char *before = gate->cur.first_before;
    size_t before_len = gate->cur.first_before_len;
    int rc;

    if (!before) {
        before = gate->before.text;
        before_len = gate->before.len;
    }
    rc = leakgate_gate__write_file(v->heap_before, before, before_len);
    if (rc == 0)
        rc = leakgate_gate__write_file(v->heap_after, gate->after.text,
                                       gate->after.len);
    return rc;
}

int
leakgate_gate__write_artifacts(struct leakgate_gate *gate,
                               struct leakgate_verdict *v)
{
    struct leakgate_buf dir = LEAKGATE_BUF_INIT;
    char *safe_suite = leakgate_util__sanitize_name(v->suite);
    const struct leakgate_verdict *one[1] = {v};
    char *txt = NULL, *json = NULL;
    int rc;

    if (safe_suite)
        leakgate_buf__printf(&dir, "%s/%s", gate->opts.report_dir, safe_suite);
    leakgate_util__free(safe_suite);
    v->artifact_dir = leakgate_buf__take(&dir);
    if (!v->artifact_dir)
        return leakgate_error__set(LEAKGATE_ENOMEM, "artifact path");
    v->heap_before = artifact_path(v->artifact_dir, v->test, ".before.heap");
    v->heap_after = artifact_path(v->artifact_dir, v->test, ".after.heap");
    v->json_path = artifact_path(v->artifact_dir, v->test, ".json");
    txt = artifact_path(v->artifact_dir, v->test, ".txt");
    if (!v->heap_before || !v->heap_after || !v->json_path || !txt) {
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "artifact path");
        goto cleanup;
    }
    rc = make_dirs(v->artifact_dir);
    if (rc == 0)
        rc = write_heaps(gate, v);
    /* The report names the artifacts: render it again now they exist. */
    if (rc == 0) {
        leakgate_util__free(v->report);
        v->report = leakgate_report__text(v, &gate->env, false);
        json = leakgate_report__json(one, 1, &gate->env);
        if (!v->report || !json)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "report");
    }
    if (rc == 0)
        rc = write_text(txt, v->report);
    if (rc == 0)
        rc = write_text(v->json_path, json);
cleanup:
    leakgate_util__free(json);
    leakgate_util__free(txt);
    return rc;
}

int
leakgate_gate_write_results(leakgate_gate *gate)
{
    const struct leakgate_verdict *const *all =
        (const struct leakgate_verdict *const *)gate->verdicts;
    char *text;
    int rc = 0;

    if (gate->opts.junit_path) {
        text = leakgate_report__junit(all, gate->nverdicts, &gate->env);
        rc = text ? write_text(gate->opts.junit_path, text)
                  : leakgate_error__set(LEAKGATE_ENOMEM, "JUnit");
        leakgate_util__free(text);
    }
    if (rc == 0 && gate->opts.json_path) {
        text = leakgate_report__json(all, gate->nverdicts, &gate->env);
        rc = text ? write_text(gate->opts.json_path, text)
                  : leakgate_error__set(LEAKGATE_ENOMEM, "JSON");
        leakgate_util__free(text);
    }
    return rc;
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
