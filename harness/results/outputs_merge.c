/* SPDX-License-Identifier: MIT */
/*
 * outputs_merge: a run's journal read back and merged into the shared
 * outputs (see outputs.h).  The journal is read up to its last newline,
 * its lines split by writer; each writer's last record of each window is
 * kept; an unfinished writer that is gone adds its running window as an
 * error; one record
 * per window name is chosen from the rank each record carries (see
 * choose()).  The JUnit and JSON files
 * are report.c's documents around the chosen records' pieces, with no
 * parsing; index.html loads the chosen records' JSON (results.c) and is
 * drawn by gate_results.c.
 */
#include "outputs.h"

#include <dirent.h>
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
#include "verdict.h"

/* ---- reading a run ------------------------------------------------------ */

struct record {
    const char *suite, *test;           /* into the journal's text */
    const char *binary;                 /* its journal's B ("": none) */
    const char *prefix;                 /* and the B's ctest prefix */
    struct leakgate_report_piece piece; /* counts and report.c's texts */
    int rank;                           /* leakgate_results__rank() */
};

/* One writer's records: what one process journaled. */
struct journal {
    const char *name; /* its KEY, in the run's text */
    long pid;
    unsigned long long start;
    bool done;
    const char *env;       /* JSON "environment" value */
    const char *junit_env; /* JUnit <properties> */
    struct record *recs;
    size_t nrecs, caprecs;
    size_t *slots; /* recs by key: index + 1, 0 empty (nslots a power of
                      two, at least 2 * nrecs) */
    size_t nslots;
    const char *open[3]; /* suite, test, phase of the last S; NULL: none */
    const char *binary;  /* of the last B record; "" before one */
    const char *prefix;  /* its $LEAKGATE_TEST_PREFIX ("" when none) */
};

struct run {
    char *text;    /* the journal, owned; records point into it */
    size_t size;   /* bytes of whole lines read */
    uint64_t hash; /* of its lines, in any order (same_text()) */
    struct journal *j;
    size_t n;
    struct record *tests; /* every journal's records, then the killed */
    size_t ntests, ntests_cap;
    const struct record **chosen; /* one per window name, in order */
    size_t nchosen;
    char **owned; /* the killed windows' rendered pieces */
    size_t nowned;
    const char *env, *junit_env; /* of a process that ended normally */
    bool mixed_env;              /* the processes' environments differ (their
                                    --filter: one per ctest test) */
};

static bool same_key(const struct record *x, const struct record *y);

static size_t
key_hash(const struct record *r)
{
    const char *parts[4] = {r->suite, r->test, r->prefix, r->binary};
    uint64_t h = LEAKGATE_UTIL_FNV_BASIS;

    for (size_t i = 0; i < 4; i++)
        h = leakgate_util__fnv1a(leakgate_util__fnv1a(h, parts[i]), "\t");
    return (size_t)(h ^ (h >> 29));
}

/* The slot of rec's key in j's index: its record's, or the empty one
 * where it goes. */
static size_t *
key_slot(const struct journal *j, const struct record *rec)
{
    size_t at = key_hash(rec) & (j->nslots - 1);

    while (j->slots[at] != 0 && !same_key(&j->recs[j->slots[at] - 1], rec))
        at = (at + 1) & (j->nslots - 1);
    return &j->slots[at];
}

static int
grow_index(struct journal *j)
{
    size_t nslots = j->nslots ? j->nslots * 2 : 64;
    size_t *old = j->slots;

    j->slots = leakgate_util__calloc(nslots, sizeof *j->slots);
    if (!j->slots) {
        j->slots = old;
        return leakgate_error__set(LEAKGATE_ENOMEM, "journal");
    }
    j->nslots = nslots;
    for (size_t i = 0; i < j->nrecs; i++)
        *key_slot(j, &j->recs[i]) = i + 1;
    leakgate_util__free(old);
    return 0;
}

static int
keep_record(struct journal *j, const struct record *rec)
{
    size_t *slot;

    if (2 * (j->nrecs + 1) > j->nslots && grow_index(j) < 0)
        return LEAKGATE_ENOMEM;
    /* The last record of a window is its verdict (a replay revised it). */
    slot = key_slot(j, rec);
    if (*slot != 0) {
        j->recs[*slot - 1] = *rec;
        return 0;
    }
    if (j->nrecs == j->caprecs) {
        size_t cap = j->caprecs ? j->caprecs * 2 : 64;
        struct record *more =
            leakgate_util__realloc(j->recs, cap * sizeof *more);

        if (!more)
            return leakgate_error__set(LEAKGATE_ENOMEM, "journal");
        j->recs = more;
        j->caprecs = cap;
    }
    j->recs[j->nrecs++] = *rec;
    *slot = j->nrecs;
    return 0;
}

/* "V suite test status rank failed error seconds json junit". */
static int
take_window(struct journal *j, char **f)
{
    struct record rec;

    memset(&rec, 0, sizeof rec);
    rec.suite = f[1];
    rec.test = f[2];
    rec.binary = j->binary ? j->binary : "";
    rec.prefix = j->prefix ? j->prefix : "";
    rec.piece.suite = f[1];
    rec.piece.status = leakgate_records__status_parse(f[3]);
    rec.rank = (int)strtol(f[4], NULL, 10);
    rec.piece.failed = strcmp(f[5], "1") == 0;
    rec.piece.error = strcmp(f[6], "1") == 0;
    rec.piece.seconds = strtod(f[7], NULL);
    rec.piece.json_test = f[8];
    rec.piece.junit_case = f[9];
    if (j->open[0] && strcmp(j->open[0], f[1]) == 0 &&
        strcmp(j->open[1], f[2]) == 0)
        j->open[0] = NULL; /* the running window closed */
    return keep_record(j, &rec);
}

/* Take one record line (split in place). */
static int
take_line(struct journal *j, char *line)
{
    char *f[10];
    size_t n = leakgate_records__split(f, 10, line);

    if ((n == 2 || n == 3) && strcmp(f[0], "B") == 0) {
        j->binary = f[1];
        j->prefix = n == 3 ? f[2] : "";
    } else if (n == 3 && strcmp(f[0], "N") == 0) {
        j->env = f[1];
        j->junit_env = f[2];
    } else if (n == 4 && strcmp(f[0], "S") == 0) {
        j->open[0] = f[1];
        j->open[1] = f[2];
        j->open[2] = f[3];
    } else if (n == 10 && strcmp(f[0], "V") == 0) {
        return take_window(j, f);
    } else if (n == 1 && strcmp(f[0], "D") == 0) {
        j->done = true;
    }
    return 0;
}

/* The run's journal into r->text, up to its last newline (the last line
 * may be being written, or torn); r->size and r->hash say what was read.
 * A missing journal is an empty run. */
static int
read_text(struct run *r, int dirfd, const char *dir)
{
    struct leakgate_buf path = LEAKGATE_BUF_INIT, text = LEAKGATE_BUF_INIT;
    const char *last;
    int rc;

    leakgate_buf__printf(&path, "%s/%s", dir, LEAKGATE_OUTPUTS_JOURNAL);
    rc = path.failed
             ? leakgate_error__set(LEAKGATE_ENOMEM, "journal")
             : leakgate_files__read_at(&text, dirfd, LEAKGATE_OUTPUTS_JOURNAL,
                                       path.ptr, LEAKGATE_OUTPUTS_JOURNAL_MAX,
                                       "journal");
    leakgate_buf__dispose(&path);
    if (rc == LEAKGATE_ENOTFOUND)
        rc = 0; /* no process has journaled yet */
    if (rc == 0)
        leakgate_buf__puts(&text, ""); /* a text, also when empty */
    r->text = rc == 0 ? leakgate_buf__take(&text) : NULL;
    leakgate_buf__dispose(&text);
    if (rc < 0 || !r->text)
        return rc < 0 ? rc : leakgate_error__set(LEAKGATE_ENOMEM, "journal");
    last = strrchr(r->text, '\n');
    r->size = last ? (size_t)(last - r->text) + 1 : 0;
    r->text[r->size] = '\0';
    for (const char *p = r->text, *nl; (nl = strchr(p, '\n')); p = nl + 1)
        r->hash += leakgate_util__hash_bytes(0, p, (size_t)(nl - p));
    return 0;
}

/* A line of the journal: "KEY\tLEN\tRECORD" (split in place). */
struct line {
    const char *key;
    char *record;
    size_t seq; /* its place in the journal */
};

/* Split "KEY\tLEN\tRECORD": false for a line that is not one (empty: the
 * newline before each line; torn: its RECORD is not LEN bytes). */
static bool
split_line(struct line *out, char *text, size_t len)
{
    char *tab = memchr(text, '\t', len), *digits, *end;
    unsigned long long start;
    unsigned long want;
    long pid;

    if (!tab ||
        !leakgate_outputs__key_owner(text, (size_t)(tab - text), &start, &pid))
        return false;
    digits = tab + 1;
    if (digits >= text + len || *digits < '0' || *digits > '9')
        return false;
    errno = 0;
    want = strtoul(digits, &end, 10);
    if (errno != 0 || end >= text + len || *end != '\t' ||
        want != (unsigned long)(text + len - end - 1))
        return false;
    *tab = '\0';
    out->key = text;
    out->record = end + 1;
    return true;
}

static int
cmp_lines(const void *a, const void *b)
{
    const struct line *x = a, *y = b;
    int c = strcmp(x->key, y->key);

    return c != 0 ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* The journal's lines, in writer order (writers in start order: KEY
 * begins with the start time), each writer's in its own order. */
static int
split_text(struct line **out, size_t *n_out, struct run *r)
{
    size_t cap = 0, n = 0;
    struct line *lines = NULL;

    for (char *p = r->text, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
        struct line one;

        *nl = '\0';
        if (!split_line(&one, p, (size_t)(nl - p)))
            continue;
        if (n == cap) {
            struct line *more;

            cap = cap ? 2 * cap : 256;
            more = leakgate_util__realloc(lines, cap * sizeof *more);
            if (!more) {
                leakgate_util__free(lines);
                return leakgate_error__set(LEAKGATE_ENOMEM, "journal");
            }
            lines = more;
        }
        one.seq = n;
        lines[n++] = one;
    }
    if (n > 1)
        qsort(lines, n, sizeof *lines, cmp_lines);
    *out = lines;
    *n_out = n;
    return 0;
}

static void
run_dispose(struct run *r)
{
    for (size_t i = 0; i < r->n; i++) {
        leakgate_util__free(r->j[i].recs);
        leakgate_util__free(r->j[i].slots);
    }
    leakgate_util__free(r->j);
    leakgate_util__free(r->text);
    leakgate_util__free(r->tests);
    leakgate_util__free(r->chosen);
    for (size_t i = 0; i < r->nowned; i++)
        leakgate_util__free(r->owned[i]);
    leakgate_util__free(r->owned);
}

/* r->text's records, by writer. */
static int
parse_run(struct run *r)
{
    struct line *lines = NULL;
    size_t n = 0, writers = 0;
    int rc = split_text(&lines, &n, r);

    for (size_t i = 0; rc == 0 && i < n; i++)
        writers += i == 0 || strcmp(lines[i - 1].key, lines[i].key) != 0;
    r->j = rc == 0 ? leakgate_util__calloc(writers ? writers : 1, sizeof *r->j)
                   : NULL;
    if (rc == 0 && !r->j)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "journal");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct journal *j;

        if (i == 0 || strcmp(lines[i - 1].key, lines[i].key) != 0) {
            j = &r->j[r->n++];
            j->name = lines[i].key;
            (void)leakgate_outputs__key_owner(j->name, strlen(j->name),
                                              &j->start, &j->pid);
        }
        rc = take_line(&r->j[r->n - 1], lines[i].record);
    }
    leakgate_util__free(lines);
    return rc;
}

/* ---- choosing one record per window ----------------------------------- */

static void
add_test(struct run *r, const struct record *rec, bool *failed)
{
    if (r->ntests == r->ntests_cap) {
        size_t cap = r->ntests_cap ? 2 * r->ntests_cap : 64;
        struct record *more =
            leakgate_util__realloc(r->tests, cap * sizeof *more);

        if (!more) {
            *failed = true;
            return;
        }
        r->tests = more;
        r->ntests_cap = cap;
    }
    r->tests[r->ntests++] = *rec;
}

/* Keep a rendered piece for the run's lifetime (NULL: no memory). */
static const char *
own(struct run *r, struct leakgate_buf *b)
{
    char **more;
    char *text = leakgate_buf__take(b); /* NULL when b failed */

    more =
        text ? leakgate_util__realloc(r->owned, (r->nowned + 1) * sizeof *more)
             : NULL;
    if (!more) {
        leakgate_util__free(text);
        return NULL;
    }
    r->owned = more;
    r->owned[r->nowned++] = text;
    return text;
}

/* The error record of the window a process was running and recorded
 * no end of: the process is gone (killed), or still runs it (these files
 * are a snapshot; its own merge replaces this, unless it is killed before
 * it can, and nothing merges after it). */
static void
add_unfinished(struct run *r, const struct journal *j, bool *failed)
{
    struct leakgate_verdict v;
    struct leakgate_note note;
    struct leakgate_buf why = LEAKGATE_BUF_INIT, name = LEAKGATE_BUF_INIT,
                        json = LEAKGATE_BUF_INIT, junit = LEAKGATE_BUF_INIT;
    struct leakgate_report_env no_env;
    struct record rec;
    bool suite_phase = strcmp(j->open[2], "test") != 0;
    const char *what = suite_phase ? "suite's init or cleanup" : "test";

    if (!leakgate_outputs__alive(j->pid, j->start))
        leakgate_buf__printf(
            &why,
            "killed: the process (pid %ld) ended while this %s ran, without "
            "leakgate seeing it end: SIGKILL (ctest's TIMEOUT, the OOM "
            "killer) or another signal it cannot catch; no verdict",
            j->pid, what);
    else
        leakgate_buf__printf(
            &why,
            "unfinished: the process (pid %ld) was running this %s when "
            "these files were last written and recorded no end; it was "
            "killed (SIGKILL: ctest's TIMEOUT, the OOM killer) if no later "
            "merge of the run replaced this; no verdict",
            j->pid, what);
    leakgate_buf__printf(&name, "%s/%s", j->open[0], j->open[1]);
    memset(&v, 0, sizeof v);
    memset(&rec, 0, sizeof rec);
    memset(&no_env, 0, sizeof no_env);
    v.suite = (char *)(uintptr_t)j->open[0];
    v.test = (char *)(uintptr_t)j->open[1];
    v.name = name.ptr;
    v.status = LEAKGATE_STATUS_NOT_JUDGED;
    v.not_judged_why = why.ptr;
    v.ended = why.ptr;
    v.report = (char *)(uintptr_t) "";
    note.file = (char *)(uintptr_t) "";
    note.line = 0;
    note.message = why.ptr;
    v.notes = &note;
    v.nnotes = 1;
    v.settings.total_unlimited = true;
    rec.suite = j->open[0];
    rec.test = j->open[1];
    rec.binary = j->binary ? j->binary : "";
    rec.prefix = j->prefix ? j->prefix : "";
    rec.rank = leakgate_results__rank(&v);
    if (why.ptr && name.ptr &&
        leakgate_report__render_piece(&rec.piece, &json, &junit, &v, &no_env)) {
        rec.piece.json_test = own(r, &json);
        rec.piece.junit_case = own(r, &junit);
    }
    if (!why.ptr || !name.ptr || !rec.piece.json_test || !rec.piece.junit_case)
        *failed = true;
    else
        add_test(r, &rec, failed);
    leakgate_buf__dispose(&why);
    leakgate_buf__dispose(&name);
    leakgate_buf__dispose(&json);
    leakgate_buf__dispose(&junit);
}

static void
pick_env(struct run *r)
{
    /* The environment of a process that ended normally (a killed one
     * may not have named its binary yet). */
    for (size_t i = 0; i < r->n && !r->env; i++) {
        if (r->j[i].done && r->j[i].env) {
            r->env = r->j[i].env;
            r->junit_env = r->j[i].junit_env;
        }
    }
    for (size_t i = 0; i < r->n; i++) {
        if (!r->env) {
            r->env = r->j[i].env;
            r->junit_env = r->j[i].junit_env;
        } else if (r->j[i].env && strcmp(r->env, r->j[i].env) != 0) {
            r->mixed_env = true;
        }
    }
}

struct pick {
    const struct record *rec;
    size_t index; /* in r->tests */
    size_t first; /* of the name's first record */
};

static bool
same_name(const struct record *x, const struct record *y)
{
    return strcmp(x->suite, y->suite) == 0 && strcmp(x->test, y->test) == 0;
}

/* The same window: name, ctest prefix and binary. */
static bool
same_key(const struct record *x, const struct record *y)
{
    return same_name(x, y) && strcmp(x->prefix, y->prefix) == 0 &&
           strcmp(x->binary, y->binary) == 0;
}

static int
cmp_name(const void *a, const void *b)
{
    const struct pick *x = a, *y = b;
    int c = strcmp(x->rec->suite, y->rec->suite);

    if (c == 0)
        c = strcmp(x->rec->test, y->rec->test);
    if (c == 0)
        c = strcmp(x->rec->prefix, y->rec->prefix);
    if (c == 0)
        c = strcmp(x->rec->binary, y->rec->binary);
    return c != 0 ? c : (x->index > y->index) - (x->index < y->index);
}

/* Append s to b escaped for an XML attribute (json false) or a JSON
 * string (json true); control characters are left out. */
static void
put_escaped(struct leakgate_buf *b, const char *s, bool json)
{
    for (const char *p = s; *p; p++) {
        if (json && (*p == '"' || *p == '\\')) {
            leakgate_buf__puts(b, "\\");
            leakgate_buf__put(b, p, 1);
        } else if (!json && *p == '&') {
            leakgate_buf__puts(b, "&amp;");
        } else if (!json && *p == '<') {
            leakgate_buf__puts(b, "&lt;");
        } else if (!json && *p == '>') {
            leakgate_buf__puts(b, "&gt;");
        } else if (!json && *p == '"') {
            leakgate_buf__puts(b, "&quot;");
        } else if ((unsigned char)*p >= 0x20) {
            leakgate_buf__put(b, p, 1);
        }
    }
}

/* text with origin inserted after `after` (escaped as json says); text
 * itself when it has no `after`. */
static const char *
insert(struct run *r,
       const char *text,
       const char *after,
       const char *origin,
       bool json,
       bool *failed)
{
    const char *at = strstr(text, after);
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    const char *out;

    if (!at)
        return text;
    at += strlen(after);
    leakgate_buf__put(&b, text, (size_t)(at - text));
    if (json)
        leakgate_buf__puts(&b, "\"origin\": \"");
    put_escaped(&b, origin, json);
    leakgate_buf__puts(&b, json ? "\", " : "");
    leakgate_buf__puts(&b, at);
    out = own(r, &b);
    *failed |= out == NULL;
    return out ? out : text;
}

/* A window with an origin (its ctest prefix, and "BINARY:" when windows
 * of several binaries have its name and prefix): its JUnit testcase's
 * classname becomes ORIGIN + SUITE ("PREFIXSUITE" matches the ctest test
 * "PREFIXSUITE/TEST"), its JSON test object gets "origin" (index.html and
 * leakgate report name it ORIGIN + SUITE/TEST), so that each is a
 * testcase of its own and none replaces another. */
static void
label(struct run *r, struct record *rec, bool with_binary, bool *failed)
{
    const char *base = leakgate_util__base_name(rec->binary);
    struct leakgate_buf origin = LEAKGATE_BUF_INIT;

    leakgate_buf__puts(&origin, rec->prefix);
    if (with_binary)
        leakgate_buf__printf(&origin, "%s:", *base ? base : "unknown");
    if (origin.failed) {
        *failed = true;
    } else if (origin.len > 0) {
        rec->piece.junit_case =
            insert(r, rec->piece.junit_case, "<testcase classname=\"",
                   origin.ptr, false, failed);
        rec->piece.json_test =
            insert(r, rec->piece.json_test, "{", origin.ptr, true, failed);
    }
    leakgate_buf__dispose(&origin);
}

static int
cmp_first(const void *a, const void *b)
{
    const struct pick *x = a, *y = b;

    return (x->first > y->first) - (x->first < y->first);
}

/* One record per window name, prefix and binary, where it first appeared: a
 * test's later record replaces an earlier one of the same binary, a
 * suite window's unless the earlier ranks higher (every process measures
 * it: a failure stays).  The records of different binaries are all kept
 * (label()). */
static int
choose(struct run *r)
{
    struct pick *p =
        leakgate_util__calloc(r->ntests ? r->ntests : 1, sizeof *p);
    size_t n = 0;
    bool failed = false;

    r->chosen =
        leakgate_util__calloc(r->ntests ? r->ntests : 1, sizeof *r->chosen);
    if (!p || !r->chosen) {
        leakgate_util__free(p);
        return leakgate_error__set(LEAKGATE_ENOMEM, "merging");
    }
    for (size_t i = 0; i < r->ntests; i++)
        p[i] = (struct pick){&r->tests[i], i, i};
    qsort(p, r->ntests, sizeof *p, cmp_name);
    for (size_t i = 0; i < r->ntests; i++) {
        struct pick *kept = n > 0 ? &p[n - 1] : NULL;

        if (kept && same_key(kept->rec, p[i].rec)) {
            bool suite_window = strcmp(p[i].rec->test, "[suite]") == 0;

            if (p[i].rec->rank >= kept->rec->rank || !suite_window)
                kept->rec = p[i].rec;
            continue;
        }
        p[n++] = p[i];
    }
    for (size_t i = 0; i < n; i++) {
        const struct record *x = p[i].rec;
        bool shared = (i > 0 && same_name(p[i - 1].rec, x) &&
                       strcmp(p[i - 1].rec->prefix, x->prefix) == 0) ||
                      (i + 1 < n && same_name(p[i + 1].rec, x) &&
                       strcmp(p[i + 1].rec->prefix, x->prefix) == 0);

        label(r, &r->tests[x - r->tests], shared, &failed);
    }
    qsort(p, n, sizeof *p, cmp_first);
    for (size_t i = 0; i < n; i++)
        r->chosen[i] = p[i].rec;
    r->nchosen = n;
    leakgate_util__free(p);
    return failed ? leakgate_error__set(LEAKGATE_ENOMEM, "merging") : 0;
}

/* Every journal's records and the windows of dead processes; one chosen
 * per name. */
static int
compose(struct run *r)
{
    bool failed = false;

    pick_env(r);
    for (size_t i = 0; i < r->n; i++) {
        const struct journal *j = &r->j[i];

        for (size_t k = 0; k < j->nrecs; k++)
            add_test(r, &j->recs[k], &failed);
        if (!j->done && j->open[0])
            add_unfinished(r, j, &failed);
    }
    if (failed)
        return leakgate_error__set(LEAKGATE_ENOMEM, "merging");
    return choose(r);
}

/* ---- the documents ------------------------------------------------------ */

/* The chosen records as a leakgate-results document, loaded. */
static int
load_chosen(struct leakgate_results **out,
            const struct run *r,
            const char *name)
{
    struct leakgate_buf doc = LEAKGATE_BUF_INIT;
    int rc;

    leakgate_buf__printf(&doc,
                         "{\"format\": \"leakgate-results\", \"version\": 2,"
                         "\n\"environment\": %s,\n\"tests\": [",
                         r->env ? r->env : "null");
    for (size_t i = 0; i < r->nchosen; i++) {
        leakgate_buf__puts(&doc, i ? ",\n" : "\n");
        leakgate_buf__puts(&doc, r->chosen[i]->piece.json_test);
    }
    leakgate_buf__puts(&doc, "\n]}\n");
    rc = doc.failed ? leakgate_error__set(LEAKGATE_ENOMEM, "merging")
                    : leakgate_results_new(out);
    if (rc == 0)
        rc = leakgate_results__load_text(*out, doc.ptr, doc.len, name);
    /* Processes with different filters make a whole run, not a
     * filtered one (leakgate report and --update-thresholds read it). */
    if (rc == 0 && r->mixed_env) {
        (*out)->env.filter = NULL;
        (*out)->filtered = false;
    }
    if (rc == 0)
        rc = leakgate_results__view(*out);
    leakgate_buf__dispose(&doc);
    return rc;
}

/* The JSON "environment" value without the filter of one process. */
static char *
whole_run_env(const struct run *r, const char *name)
{
    struct leakgate_results *res = NULL;
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    struct run none = *r;
    int rc;

    none.nchosen = 0;
    rc = load_chosen(&res, &none, name);
    if (rc == 0)
        leakgate_report__json_env(&b, &res->env);
    leakgate_results_free(res);
    return rc == 0 ? leakgate_buf__take(&b) : NULL;
}

static char *
document(const struct leakgate_outputs_file *o, const struct run *r)
{
    struct leakgate_report_piece *p =
        leakgate_util__calloc(r->nchosen ? r->nchosen : 1, sizeof *p);
    char *env = NULL, *text = NULL;

    for (size_t i = 0; p && i < r->nchosen; i++)
        p[i] = r->chosen[i]->piece;
    if (p && o->kind == LEAKGATE_OUTPUTS_JUNIT)
        text = leakgate_report__junit_doc(p, r->nchosen,
                                          r->junit_env ? r->junit_env : "");
    else if (p) {
        env = r->mixed_env || !r->env ? whole_run_env(r, o->rundir)
                                      : leakgate_util__strdup(r->env);
        text = env ? leakgate_report__json_doc(p, r->nchosen, env) : NULL;
    }
    leakgate_util__free(env);
    leakgate_util__free(p);
    return text;
}

static int
render(const struct leakgate_outputs_file *o,
       const struct run *r,
       struct leakgate_results **res,
       const char *pictures)
{
    struct leakgate_report_env env;
    char *text = NULL;
    int rc = 0;

    if (o->kind == LEAKGATE_OUTPUTS_INDEX) {
        if (!*res)
            rc = load_chosen(res, r, o->rundir);
        if (rc < 0)
            return rc;
        env = (*res)->env;
        env.report_dir = o->spec; /* links are relative to the page */
        return leakgate_results__write_index(o->spec, (*res)->view,
                                             (*res)->nview, &env, pictures);
    }
    text = document(o, r);
    /* Atomic, not fsync'ed: every process of the run rewrites it. */
    rc = text ? leakgate_files__write(NULL, o->spec, text, strlen(text),
                                      LEAKGATE_FILES_MKDIRS |
                                          LEAKGATE_FILES_NOSYNC)
              : leakgate_error__set(LEAKGATE_ENOMEM, "%s", o->spec);
    leakgate_util__free(text);
    return rc;
}

/* rundir/merged: how many bytes of the journal the last merge read. */
static char *
stamp_path(const struct leakgate_outputs_file *o)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__printf(&b, "%s/merged", o->rundir);
    return leakgate_buf__take(&b);
}

/* Whether the last merge read every line this process wrote into o's
 * journal (processes that finish together wait for the lock; the first
 * merges for all): O_APPEND left o->fd's offset at the end of its last
 * line, so that merge read at least as far. */
static bool
merged_already(const struct leakgate_outputs_file *o, int run_fd)
{
    struct leakgate_buf text = LEAKGATE_BUF_INIT;
    char *path = stamp_path(o), *end = NULL;
    off_t mine = o->fd >= 0 ? lseek(o->fd, 0, SEEK_CUR) : -1;
    unsigned long long read_to = 0;
    bool done = false;

    if (path && mine > 0 &&
        leakgate_files__read_at(&text, run_fd, "merged", path, 64, "stamp") ==
            0 &&
        text.ptr && text.ptr[0] >= '0' && text.ptr[0] <= '9') {
        errno = 0;
        read_to = strtoull(text.ptr, &end, 10);
        done =
            errno == 0 && *end == '\n' && read_to >= (unsigned long long)mine;
    }
    leakgate_buf__dispose(&text);
    leakgate_util__free(path);
    return done;
}

static void
write_stamp(const struct leakgate_outputs_file *o,
            int run_fd,
            const struct run *r)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char *path = stamp_path(o);

    leakgate_buf__printf(&b, "%zu\n", r->size);
    if (path && !b.failed)
        (void)leakgate_files__write_at(run_fd, "merged", path, b.ptr, b.len,
                                       LEAKGATE_FILES_NOSYNC);
    leakgate_buf__dispose(&b);
    leakgate_util__free(path);
}

/* A run read and loaded, kept for the next output of the same process:
 * its other stores usually hold the same lines. */
struct loaded {
    struct run r;
    bool read;
    struct leakgate_results *res; /* for index.html, loaded when needed */
};

static void
loaded_dispose(struct loaded *l)
{
    leakgate_results_free(l->res);
    run_dispose(&l->r);
    memset(l, 0, sizeof *l);
}

/* The run's journal in o's store, read, split and composed into l --
 * unless it holds the lines l holds already (another store's journal
 * of the same run: each writer writes its lines into every store in
 * the same order, though writers may interleave differently). */
static int
load_run(struct loaded *l, const struct leakgate_outputs_file *o, int run_fd)
{
    struct run fresh;
    int rc;

    memset(&fresh, 0, sizeof fresh);
    rc = read_text(&fresh, run_fd, o->rundir);
    if (rc == 0 && l->read && fresh.size == l->r.size &&
        fresh.hash == l->r.hash) {
        run_dispose(&fresh);
        return 0;
    }
    loaded_dispose(l);
    l->r = fresh;
    l->read = true;
    if (rc == 0)
        rc = parse_run(&l->r);
    return rc == 0 ? compose(&l->r) : rc;
}

static int
merge_one(struct loaded *l,
          const struct leakgate_outputs_file *o,
          const char *pictures)
{
    int lock = -1, run = -1;
    int rc = leakgate_outputs__lock(&lock, o);

    if (rc == 0)
        rc = leakgate_outputs__run_dir(&run, lock, o);
    if (rc == 0 && merged_already(o, run)) {
        close(run);
        leakgate_files__unlock(lock);
        return 0;
    }
    if (rc == 0)
        rc = load_run(l, o, run);
    if (rc == 0)
        rc = render(o, &l->r, &l->res, pictures);
    if (rc == 0)
        write_stamp(o, run, &l->r);
    else
        loaded_dispose(l);
    if (run >= 0)
        close(run);
    leakgate_files__unlock(lock);
    return rc;
}

/*
 * o's journal failed (o->broken says why): o written from what the
 * journal holds (when it can be read) and the lines this process held,
 * as one run's text.  Returns 0 (a note on stderr names the file and the
 * cause) or the error that kept it from being written.
 */
static int
merge_held(const struct leakgate_outputs_file *o, const char *pictures)
{
    struct loaded l;
    const char *name = o->kind == LEAKGATE_OUTPUTS_INDEX ? "/index.html" : "";
    int lock = -1, run = -1, rc;
    bool whole = false;
    char *text;

    memset(&l, 0, sizeof l);
    if (o->held_lost || o->held.failed)
        return leakgate_error__set(LEAKGATE_EIO, "%s%s was not written: %s",
                                   o->spec, name, o->broken);
    if (leakgate_outputs__lock(&lock, o) == 0 &&
        leakgate_outputs__run_dir(&run, lock, o) == 0 &&
        read_text(&l.r, run, o->rundir) == 0)
        whole = true;
    if (run >= 0)
        close(run);
    leakgate_files__unlock(lock);
    if (!whole) {
        run_dispose(&l.r);
        memset(&l.r, 0, sizeof l.r);
    }
    text = leakgate_util__malloc(l.r.size + o->held.len + 1);
    if (!text) {
        loaded_dispose(&l);
        return leakgate_error__set(LEAKGATE_ENOMEM, "journal");
    }
    if (l.r.size > 0)
        memcpy(text, l.r.text, l.r.size);
    if (o->held.len > 0)
        memcpy(text + l.r.size, o->held.ptr, o->held.len);
    text[l.r.size + o->held.len] = '\0';
    leakgate_util__free(l.r.text);
    l.r.text = text;
    l.r.size += o->held.len;
    l.read = true;
    rc = parse_run(&l.r);
    if (rc == 0)
        rc = compose(&l.r);
    if (rc == 0)
        rc = render(o, &l.r, &l.res, pictures);
    loaded_dispose(&l);
    if (rc < 0) {
        char why[1024];

        snprintf(why, sizeof why, "%s", leakgate_error_last());
        return leakgate_error__set(LEAKGATE_EIO,
                                   "%s%s was not written: %s; then: %s",
                                   o->spec, name, o->broken, why);
    }
    fprintf(stderr,
            "leakgate: note: %s%s: %s; it was written from %sthis "
            "process's own results%s\n",
            o->spec, name, o->broken,
            whole ? "what the journal holds and " : "",
            whole ? ""
                  : " (the windows of other processes of this run are "
                    "not in it)");
    return 0;
}

/* $LEAKGATE_OUTPUTS_RENDER is "end": the run's [outputs] tests write. */
static bool
at_end(void)
{
    const char *v = getenv(LEAKGATE_OUTPUTS_RENDER_ENV);

    return v && strcmp(v, "end") == 0;
}

bool
leakgate_outputs__finishing(void)
{
    const char *v = getenv(LEAKGATE_OUTPUTS_FINISH_ENV);

    return v && strcmp(v, "1") == 0;
}

int
leakgate_outputs__finish(const char *junit,
                         const char *json,
                         const char *report_dir)
{
    struct leakgate_outputs *os = NULL;
    int rc = leakgate_outputs__open(&os, junit, json, report_dir);

    if (rc == 0 && os)
        rc = leakgate_outputs__merge(os, NULL);
    leakgate_outputs__free(os);
    return rc;
}

int
leakgate_outputs__merge(struct leakgate_outputs *os, const char *pictures)
{
    int rc = leakgate_outputs__revive(os, NULL, NULL), first;

    if (rc == 0)
        rc = leakgate_outputs__append(os, "D\n", 2);
    first = rc;

    struct loaded l;
    char said[1024];

    memset(&l, 0, sizeof l);
    snprintf(said, sizeof said, "%s", leakgate_error_last());
    if (!leakgate_outputs__finishing() && at_end()) {
        /* The run's [outputs] tests write the files, from the journals:
         * a process whose journal failed is missing there. */
        for (size_t i = 0; os && i < os->n; i++) {
            const struct leakgate_outputs_file *o = &os->out[i];

            if (o->broken)
                first = leakgate_error__gather(
                    first, said,
                    leakgate_error__set(
                        LEAKGATE_EIO,
                        "%s%s will lack this process's windows: %s", o->spec,
                        o->kind == LEAKGATE_OUTPUTS_INDEX ? "/index.html" : "",
                        o->broken));
        }
        return first;
    }
    /* Each output on its own: one that cannot be written costs no other;
     * the error says every one that failed. */
    for (size_t i = 0; os && i < os->n; i++) {
        const struct leakgate_outputs_file *o = &os->out[i];

        rc = o->broken ? merge_held(o, pictures) : merge_one(&l, o, pictures);
        first = leakgate_error__gather(first, said, rc);
    }
    loaded_dispose(&l);
    return first;
}
