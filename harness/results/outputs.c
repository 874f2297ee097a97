/* SPDX-License-Identifier: MIT */
/*
 * outputs: one --junit FILE, --json FILE and index.html for all the
 * processes of a run (see outputs.h).  This file: this process's lines
 * in the run's journals (outputs_store.c: the stores, run directories
 * and run keys); outputs_merge.c reads a run's journal back and writes
 * the files.  Each line is appended with one writev(2) on an O_APPEND
 * descriptor, whole, and read back only up to the last newline and when
 * as long as it says, so a record torn by SIGKILL, or one being written
 * while another process merges, is never half-read.  Every store is
 * changed (journal created, stale runs removed, outputs written) under
 * its directory's flock.
 */
#include "outputs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "report.h"
#include "results.h"
#include "records.h"
#include "util.h"

static int append_buf(struct leakgate_outputs *os, struct leakgate_buf *b);

/* ---- names -------------------------------------------------------------- */

bool
leakgate_outputs__is_shared(const char *spec)
{
    int kind;

    if (!spec || !*spec || leakgate_results__per_process(spec))
        return false;
    /* The null device and a descriptor's name are written (or not) by
     * each process as a stream: no store beside them. */
    kind = leakgate_files__target(spec);
    return kind != LEAKGATE_FILES_DISCARD && kind != LEAKGATE_FILES_STREAM &&
           kind != LEAKGATE_EUSAGE;
}

/* o's journal failed (the error set says why): this output is left
 * alone, the others go on.  Returns 0, or LEAKGATE_ENOMEM. */
static int
broken(struct leakgate_outputs_file *o, int rc)
{
    if (rc != LEAKGATE_EIO)
        return rc;
    if (!o->broken)
        o->broken = leakgate_util__strdup(leakgate_error_last());
    if (o->fd >= 0 && leakgate_outputs__journal_ok(o))
        close(o->fd);
    o->fd = -1;
    return o->broken ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "journal");
}

static int
add_output(struct leakgate_outputs *os,
           enum leakgate_outputs_kind kind,
           const char *spec,
           const char *key)
{
    struct leakgate_outputs_file *o = &os->out[os->n++];
    int rc;

    o->kind = kind;
    o->fd = -1;
    o->spec = leakgate_util__strdup(spec);
    rc = o->spec ? leakgate_outputs__set_store(o, key)
                 : leakgate_error__set(LEAKGATE_ENOMEM, "store");
    if (rc < 0)
        return rc;
    rc = leakgate_outputs__open_journal(o, os->key, true);
    if (rc == LEAKGATE_EIO)
        leakgate_outputs__hold(o, os->key, "H\n", 2);
    return broken(o, rc);
}

int
leakgate_outputs__open(struct leakgate_outputs **out,
                       const char *junit,
                       const char *json,
                       const char *report_dir)
{
    struct leakgate_outputs *os;
    unsigned long long start = 0;
    char *key;
    int rc = 0;

    *out = NULL;
    junit = leakgate_outputs__is_shared(junit) ? junit : NULL;
    json = leakgate_outputs__is_shared(json) ? json : NULL;
    if (!junit && !json && !report_dir)
        return 0;
    os = leakgate_util__calloc(1, sizeof *os);
    key = leakgate_outputs__run_key();
    if (!os || !key) {
        leakgate_util__free(os);
        leakgate_util__free(key);
        return leakgate_error__set(LEAKGATE_ENOMEM, "outputs");
    }
    (void)leakgate_outputs__proc_start(&start, (long)getpid());
    snprintf(os->key, sizeof os->key, "%020llu-%ld", start, (long)getpid());
    if (junit)
        rc = add_output(os, LEAKGATE_OUTPUTS_JUNIT, junit, key);
    if (rc == 0 && json)
        rc = add_output(os, LEAKGATE_OUTPUTS_JSON, json, key);
    if (rc == 0 && report_dir)
        rc = add_output(os, LEAKGATE_OUTPUTS_INDEX, report_dir, key);
    leakgate_util__free(key);
    if (rc == 0)
        rc = leakgate_outputs__set_binary(os, NULL);
    if (rc < 0)
        leakgate_outputs__free(os);
    else
        *out = os;
    return rc;
}

int
leakgate_outputs__set_binary(struct leakgate_outputs *os, const char *binary)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    const char *prefix;
    char exe[4096];
    ssize_t n;

    if (!os)
        return 0;
    if (!binary) {
        n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        binary = exe;
    }
    prefix = getenv(LEAKGATE_OUTPUTS_PREFIX_ENV);
    leakgate_buf__puts(&b, "B\t");
    leakgate_records__put_field(&b, binary);
    leakgate_buf__puts(&b, "\t");
    leakgate_records__put_field(&b, prefix ? prefix : "");
    return append_buf(os, &b);
}

void
leakgate_outputs__free(struct leakgate_outputs *os)
{
    if (!os)
        return;
    for (size_t i = 0; i < os->n; i++) {
        if (os->out[i].fd >= 0)
            close(os->out[i].fd);
        leakgate_util__free(os->out[i].spec);
        leakgate_util__free(os->out[i].store);
        leakgate_util__free(os->out[i].rundir);
        leakgate_util__free(os->out[i].parent);
        leakgate_util__free(os->out[i].broken);
        leakgate_buf__dispose(&os->out[i].held);
    }
    leakgate_util__free(os->sent);
    leakgate_util__free(os);
}

/* ---- writing records ---------------------------------------------------- */

int
leakgate_outputs__append(struct leakgate_outputs *os,
                         const char *line,
                         size_t len)
{
    int rc = 0;

    for (size_t i = 0; os && i < os->n; i++) {
        struct leakgate_outputs_file *o = &os->out[i];
        int one =
            o->broken ? 0 : leakgate_outputs__append_to(o, os->key, line, len);

        /* A journal that failed keeps none of this process's later lines:
         * they are held, and the output written from them at the end. */
        if (o->broken || one == LEAKGATE_EIO)
            leakgate_outputs__hold(o, os->key, line, len);
        one = broken(o, one);
        rc = rc == 0 ? one : rc;
    }
    return rc;
}

int
leakgate_outputs__revive(struct leakgate_outputs *os,
                         const char *suite,
                         const char *test)
{
    int rc = 0;

    for (size_t i = 0; os && i < os->n && rc == 0; i++) {
        struct leakgate_outputs_file *o = &os->out[i];

        if (!o->opened || o->broken || leakgate_outputs__journal_ok(o))
            continue;
        o->fd = -1;
        rc = leakgate_outputs__open_journal(o, os->key, false);
        if (rc < 0 && suite) {
            char why[1024];

            snprintf(why, sizeof why, "%s", leakgate_error_last());
            rc = leakgate_error__set(
                rc, "%s (its descriptor was closed during %s/%s)", why, suite,
                test);
        }
    }
    return rc;
}

void
leakgate_outputs__started(struct leakgate_outputs *os,
                          const char *suite,
                          const char *test,
                          const char *phase)
{
    const char *fields[3] = {suite, test, phase};
    char line[4096];
    size_t len = 0;

    if (!os)
        return;
    line[len++] = 'S';
    for (size_t i = 0; i < 3; i++) {
        if (len + 3 >= sizeof line)
            return; /* names this long are not journaled */
        line[len++] = '\t';
        leakgate_records__put_field_fixed(line, sizeof line, &len, fields[i]);
    }
    line[len++] = '\n';
    (void)leakgate_outputs__append(os, line, len);
}

static int
append_buf(struct leakgate_outputs *os, struct leakgate_buf *b)
{
    int rc;

    leakgate_buf__puts(b, "\n");
    rc = b->failed ? leakgate_error__set(LEAKGATE_ENOMEM, "journal")
                   : leakgate_outputs__append(os, b->ptr, b->len);
    leakgate_buf__dispose(b);
    return rc;
}

int
leakgate_outputs__env(struct leakgate_outputs *os,
                      const char *json_env,
                      const char *junit_env)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__puts(&b, "N\t");
    leakgate_records__put_field(&b, json_env);
    leakgate_buf__puts(&b, "\t");
    leakgate_records__put_field(&b, junit_env);
    os->has_env = true;
    return append_buf(os, &b);
}

bool
leakgate_outputs__has_env(const struct leakgate_outputs *os)
{
    return os && os->has_env;
}

/* Whether this V record was journaled already; else remember it. */
static bool
sent_before(struct leakgate_outputs *os,
            const char *suite,
            const char *test,
            const char *json)
{
    uint64_t name = leakgate_util__fnv1a(
        leakgate_util__fnv1a(
            leakgate_util__fnv1a(LEAKGATE_UTIL_FNV_BASIS, suite), "\t"),
        test);
    uint64_t text = leakgate_util__hash_bytes(0, json, strlen(json));
    size_t at;

    name += name == 0; /* 0 marks an empty slot */
    if (2 * (os->nsent + 1) > os->nslots) {
        size_t nslots = os->nslots ? os->nslots * 2 : 256;
        struct sent *table = leakgate_util__calloc(nslots, sizeof *table);

        if (!table)
            return false; /* journaled again: the merge keeps the last */
        for (size_t i = 0; i < os->nslots; i++) {
            if (os->sent[i].name_hash == 0)
                continue;
            at = (size_t)os->sent[i].name_hash & (nslots - 1);
            while (table[at].name_hash != 0)
                at = (at + 1) & (nslots - 1);
            table[at] = os->sent[i];
        }
        leakgate_util__free(os->sent);
        os->sent = table;
        os->nslots = nslots;
    }
    at = (size_t)name & (os->nslots - 1);
    while (os->sent[at].name_hash != 0 && os->sent[at].name_hash != name)
        at = (at + 1) & (os->nslots - 1);
    if (os->sent[at].name_hash == name) {
        if (os->sent[at].json_hash == text)
            return true;
        os->sent[at].json_hash = text;
        return false;
    }
    os->sent[at] = (struct sent){name, text};
    os->nsent++;
    return false;
}

int
leakgate_outputs__window(struct leakgate_outputs *os,
                         const char *suite,
                         const char *test,
                         const struct leakgate_report_piece *piece,
                         int rank)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    int rc = leakgate_outputs__revive(os, suite, test);

    if (rc < 0 || sent_before(os, suite, test, piece->json_test))
        return rc;
    /* Room for the pieces (a kilobyte and more) and their escapes at
     * once, not by doubling from 256 bytes. */
    (void)leakgate_buf__reserve(&b, strlen(piece->json_test) +
                                        strlen(piece->junit_case) +
                                        strlen(suite) + strlen(test) + 256);
    leakgate_buf__puts(&b, "V\t");
    leakgate_records__put_field(&b, suite);
    leakgate_buf__puts(&b, "\t");
    leakgate_records__put_field(&b, test);
    /* %.17g: the merge sums the same doubles report.c would. */
    leakgate_buf__printf(&b, "\t%s\t%d\t%d\t%d\t%.17g\t",
                         leakgate_records__status_name(piece->status), rank,
                         piece->failed ? 1 : 0, piece->error ? 1 : 0,
                         piece->seconds > 0 ? piece->seconds : 0.0);
    leakgate_records__put_field(&b, piece->json_test);
    leakgate_buf__puts(&b, "\t");
    leakgate_records__put_field(&b, piece->junit_case);
    return append_buf(os, &b);
}
