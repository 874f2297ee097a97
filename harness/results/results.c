/* SPDX-License-Identifier: MIT */
/*
 * results: read "leakgate-results" version-1 JSON back into verdicts (see
 * results.h).  Core apart from the file reading in results_api.c: works
 * on a parsed json.c tree.
 *
 * Strict on what it uses, tolerant of what it does not: a key this reader
 * needs must be present with its documented type (else "FILE:LINE:COL:
 * 'key' must be ..."), keys it does not know are ignored as the format
 * requires of readers.  A file is loaded completely or not at all.
 */
#include "results.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "report_parts.h"
#include "util.h"

#define RESULTS_FORMAT "leakgate-results"
/* Version 2 added the peak meter's keys (peak_bytes, allocations,
 * peak_limit, peak_over, peak_stacks...); version 1 files still load,
 * their peaks unknown. */
#define RESULTS_VERSION 2

/* One file being loaded: its verdicts and records, committed at the end. */
struct loader {
    const char *name;
    struct leakgate_verdict **v;
    size_t n, cap;
    void **owned;
    size_t nowned, cap_owned;
    struct leakgate_report_env env;
    int version; /* the document's "version" */
};

static int fail(const struct loader *ld,
                const struct leakgate_json *at,
                const char *fmt,
                ...) __attribute__((format(printf, 3, 4)));

static int
fail(const struct loader *ld,
     const struct leakgate_json *at,
     const char *fmt,
     ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = leakgate_error__set_at(LEAKGATE_EFORMAT, ld->name, at->line, at->col,
                                fmt, ap);
    va_end(ap);
    return rc;
}

static int
no_memory(const struct loader *ld)
{
    return leakgate_error__set(LEAKGATE_ENOMEM, "%s: out of memory", ld->name);
}

/* Keep p until the results are freed; false on ENOMEM (p is freed). */
static bool
own(struct loader *ld, void *p)
{
    if (!p)
        return false;
    if (ld->nowned == ld->cap_owned) {
        size_t cap = ld->cap_owned ? ld->cap_owned * 2 : 64;
        void **owned = leakgate_util__realloc(ld->owned, cap * sizeof *owned);

        if (!owned) {
            leakgate_util__free(p);
            return false;
        }
        ld->owned = owned;
        ld->cap_owned = cap;
    }
    ld->owned[ld->nowned++] = p;
    return true;
}

/* ---- typed members --------------------------------------------------- */

/* The member `key` of obj, which must be there. */
static int
member(const struct leakgate_json **out,
       const struct loader *ld,
       const struct leakgate_json *obj,
       const char *key)
{
    *out = leakgate_json__get(obj, key);
    if (!*out)
        return fail(ld, obj, "missing '%s'", key);
    return 0;
}

static int
wrong_type(const struct loader *ld,
           const struct leakgate_json *v,
           const char *key,
           const char *expected)
{
    return fail(ld, v, "'%s' must be %s, got %s", key, expected,
                leakgate_json__type_name(v));
}

/* A string or null; absent counts as null.  *out is a copy held by ld. */
static int
opt_string(char **out,
           struct loader *ld,
           const struct leakgate_json *obj,
           const char *key)
{
    const struct leakgate_json *v = leakgate_json__get(obj, key);

    *out = NULL;
    if (!v || v->type == LEAKGATE_JSON_NULL)
        return 0;
    if (v->type != LEAKGATE_JSON_STRING)
        return wrong_type(ld, v, key, "a string or null");
    *out = leakgate_util__strdup(v->text);
    return *out ? 0 : no_memory(ld);
}

/* A string that must be present; *out is the caller's. */
static int
req_string(char **out,
           const struct loader *ld,
           const struct leakgate_json *obj,
           const char *key)
{
    const struct leakgate_json *v;
    int rc = member(&v, ld, obj, key);

    *out = NULL;
    if (rc < 0)
        return rc;
    if (v->type != LEAKGATE_JSON_STRING)
        return wrong_type(ld, v, key, "a string");
    *out = leakgate_util__strdup(v->text);
    return *out ? 0 : no_memory(ld);
}

/* An integer; absent or null gives *is_null (when allowed). */
static int
get_int(int64_t *out,
        bool *is_null,
        const struct loader *ld,
        const struct leakgate_json *obj,
        const char *key)
{
    const struct leakgate_json *v = leakgate_json__get(obj, key);

    *out = 0;
    if (is_null)
        *is_null = !v || v->type == LEAKGATE_JSON_NULL;
    if (!v && !is_null)
        return fail(ld, obj, "missing '%s'", key);
    if (!v || (is_null && *is_null))
        return 0;
    if (!leakgate_json__int(out, v))
        return wrong_type(ld, v, key, "an integer");
    return 0;
}

static int
get_bool(bool *out,
         const struct loader *ld,
         const struct leakgate_json *obj,
         const char *key,
         bool required)
{
    const struct leakgate_json *v = leakgate_json__get(obj, key);

    *out = false;
    if (!v && required)
        return fail(ld, obj, "missing '%s'", key);
    if (!v)
        return 0;
    if (v->type != LEAKGATE_JSON_BOOL)
        return wrong_type(ld, v, key, "true or false");
    *out = v->boolean;
    return 0;
}

/* An array member (absent allowed when !required: *out NULL). */
static int
get_array(const struct leakgate_json **out,
          const struct loader *ld,
          const struct leakgate_json *obj,
          const char *key,
          bool required)
{
    *out = leakgate_json__get(obj, key);
    if (!*out && required)
        return fail(ld, obj, "missing '%s'", key);
    if (!*out || (*out)->type == LEAKGATE_JSON_NULL) {
        *out = NULL;
        return 0;
    }
    if ((*out)->type != LEAKGATE_JSON_ARRAY)
        return wrong_type(ld, *out, key, "an array");
    return 0;
}

static int
want_object(const struct loader *ld,
            const struct leakgate_json *v,
            const char *what)
{
    if (v->type != LEAKGATE_JSON_OBJECT)
        return fail(ld, v, "%s must be an object, got %s", what,
                    leakgate_json__type_name(v));
    return 0;
}

/* "0x1a2b" */
static int
get_address(uintptr_t *out,
            const struct loader *ld,
            const struct leakgate_json *v,
            const char *key)
{
    uintptr_t a = 0;
    const char *p;

    if (v->type != LEAKGATE_JSON_STRING)
        return wrong_type(ld, v, key, "a hex string");
    p = v->text;
    if (strncmp(p, "0x", 2) != 0 || !p[2] || strlen(p) > 2 + 2 * sizeof a)
        return fail(ld, v, "invalid address '%.40s' in '%s'", v->text, key);
    for (p += 2; *p; p++) {
        int d = *p >= '0' && *p <= '9'   ? *p - '0'
                : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                         : -1;

        if (d < 0)
            return fail(ld, v, "invalid address '%.40s' in '%s'", v->text, key);
        a = a * 16 + (uintptr_t)d;
    }
    *out = a;
    return 0;
}

/* ---- stacks ---------------------------------------------------------- */

/* A string member kept alive by ld (frames point to it). */
static int
held_string(const char **out,
            struct loader *ld,
            const struct leakgate_json *obj,
            const char *key)
{
    char *s = NULL;
    int rc = opt_string(&s, ld, obj, key);

    *out = NULL;
    if (rc < 0 || !s)
        return rc;
    if (!own(ld, s))
        return no_memory(ld);
    *out = s;
    return 0;
}

static int
load_frame(struct leakgate_frame *f,
           bool *shown,
           struct loader *ld,
           const struct leakgate_json *o)
{
    const struct leakgate_json *pc, *offset;
    int64_t line = 0;
    bool line_null;
    int rc = want_object(ld, o, "a frame");

    if (rc == 0)
        rc = held_string(&f->function, ld, o, "function");
    if (rc == 0)
        rc = held_string(&f->file, ld, o, "file");
    if (rc == 0)
        rc = held_string(&f->module, ld, o, "module");
    if (rc == 0)
        rc = get_int(&line, &line_null, ld, o, "line");
    if (rc == 0)
        rc = get_bool(&f->inlined, ld, o, "inlined", false);
    if (rc == 0)
        rc = get_bool(shown, ld, o, "shown", true);
    if (rc == 0)
        rc = member(&pc, ld, o, "pc");
    if (rc == 0)
        rc = get_address(&f->pc, ld, pc, "pc");
    /* A frame in a module without symbols is shown as module+offset. */
    offset = rc == 0 && f->module ? leakgate_json__get(o, "offset") : NULL;
    if (offset && offset->type == LEAKGATE_JSON_STRING)
        rc = get_address(&f->module_offset, ld, offset, "offset");
    f->line = line > 0 && line <= UINT32_MAX ? (unsigned int)line : 0;
    return rc;
}

/* frames[] and the shown range (the first to the last shown frame). */
static int
load_frames(struct leakgate_vstack *s,
            struct loader *ld,
            const struct leakgate_json *arr)
{
    size_t first = SIZE_MAX, last = 0;
    int rc = 0;

    if (!arr)
        return 0;
    s->frames = leakgate_util__calloc(arr->n, sizeof *s->frames);
    if (!s->frames)
        return no_memory(ld);
    s->nframes = arr->n;
    for (size_t k = 0; k < arr->n && rc == 0; k++) {
        bool shown = false;

        rc = load_frame(&s->frames[k], &shown, ld, &arr->items[k]);
        if (shown && first == SIZE_MAX)
            first = k;
        if (shown)
            last = k + 1;
    }
    s->shown_begin = first == SIZE_MAX ? 0 : first;
    s->shown_end = first == SIZE_MAX ? arr->n : last;
    return rc;
}

static int
load_pcs(struct leakgate_vstack *s,
         const struct loader *ld,
         const struct leakgate_json *arr)
{
    int rc = 0;

    if (!arr || arr->n == 0)
        return 0;
    s->pcs = leakgate_util__calloc(arr->n, sizeof *s->pcs);
    if (!s->pcs)
        return no_memory(ld);
    s->npcs = arr->n;
    for (size_t k = 0; k < arr->n && rc == 0; k++)
        rc = get_address(&s->pcs[k], ld, &arr->items[k], "pcs");
    return rc;
}

static int
load_threads(struct leakgate_vstack *s,
             const struct loader *ld,
             const struct leakgate_json *arr)
{
    int rc = 0;

    if (!arr || arr->n == 0)
        return 0;
    s->threads = leakgate_util__calloc(arr->n, sizeof *s->threads);
    if (!s->threads)
        return no_memory(ld);
    s->nthreads = arr->n;
    for (size_t k = 0; k < arr->n && rc == 0; k++) {
        const struct leakgate_json *t = &arr->items[k];
        struct leakgate_diff_thread *d = &s->threads[k];
        int64_t tid = 0;

        rc = want_object(ld, t, "a thread");
        if (rc == 0)
            rc = get_int(&tid, NULL, ld, t, "tid");
        if (rc == 0)
            rc = get_int(&d->delta_bytes, NULL, ld, t, "bytes");
        if (rc == 0)
            rc = get_int(&d->delta_objs, NULL, ld, t, "objects");
        d->tid = (uint64_t)tid;
    }
    return rc;
}

/* The rule or ignore record a judgement points to. */
static int
judgement_refs(struct leakgate_policy_stack_verdict *j,
               struct loader *ld,
               const struct leakgate_json *o)
{
    int64_t rule_line = 0, ignore_line = 0;
    bool no_rule, no_ignore;
    int rc = get_int(&rule_line, &no_rule, ld, o, "rule_line");

    if (rc == 0)
        rc = get_int(&ignore_line, &no_ignore, ld, o, "ignore_line");
    if (rc == 0 && !no_rule) {
        struct leakgate_config_stack_rule *r =
            leakgate_util__calloc(1, sizeof *r);

        if (!own(ld, r))
            return no_memory(ld);
        r->line = (unsigned int)rule_line;
        r->limit = j->limit;
        j->rule = r;
    }
    if (rc == 0 && j->ignored) {
        struct leakgate_config_ignore *ig =
            leakgate_util__calloc(1, sizeof *ig);

        if (!own(ld, ig))
            return no_memory(ld);
        ig->line = no_ignore ? 0 : (unsigned int)ignore_line;
        j->ignore = ig;
        rc = opt_string(&ig->reason, ld, o, "ignore_reason");
        if (rc == 0 && ig->reason && !own(ld, ig->reason))
            rc = no_memory(ld);
    }
    return rc;
}

static int
load_judgement(struct leakgate_policy_stack_verdict *j,
               struct loader *ld,
               const struct leakgate_json *o)
{
    int64_t limit = 0;
    bool no_limit;
    int rc = get_bool(&j->judged, ld, o, "judged", false);

    if (rc == 0)
        rc = get_bool(&j->ignored, ld, o, "ignored", false);
    if (rc == 0)
        rc = get_bool(&j->over, ld, o, "over", false);
    if (rc == 0)
        rc = get_int(&limit, &no_limit, ld, o, "limit");
    j->limit = limit > 0 ? (uint64_t)limit : 0;
    if (rc == 0)
        rc = judgement_refs(j, ld, o);
    return rc;
}

/* A stack's "requested_bytes": absent (an earlier leakgate's file) or null
 * when the requests were not seen. */
static int
load_requested(struct leakgate_vstack *s,
               struct loader *ld,
               const struct leakgate_json *o)
{
    bool unknown;
    int rc = get_int(&s->requested, &unknown, ld, o, "requested_bytes");

    if (rc == 0 && !unknown && s->requested < 0)
        return fail(ld, o, "negative 'requested_bytes'");
    s->requested_known = rc == 0 && !unknown;
    return rc;
}

/* A stack's "reachability": absent (an earlier leakgate's file) or null
 * when the window was not scanned; else the lost and indirectly lost
 * bytes and objects and the roots of the rest. */
static int
load_reach(struct leakgate_vstack *s,
           struct loader *ld,
           const struct leakgate_json *o)
{
    const struct leakgate_json *r = leakgate_json__get(o, "reachability");
    const struct leakgate_json *roots = NULL;
    struct leakgate_reach_counts *c = &s->reach;
    int rc;

    memset(c, 0, sizeof *c);
    if (!r || r->type == LEAKGATE_JSON_NULL)
        return 0;
    rc = want_object(ld, r, "'reachability'");
    if (rc == 0)
        rc = get_int(&c->lost_bytes, NULL, ld, r, "lost_bytes");
    if (rc == 0)
        rc = get_int(&c->lost_objs, NULL, ld, r, "lost_objects");
    if (rc == 0)
        rc = get_int(&c->indirect_bytes, NULL, ld, r, "indirect_bytes");
    if (rc == 0)
        rc = get_int(&c->indirect_objs, NULL, ld, r, "indirect_objects");
    if (rc == 0)
        rc = get_array(&roots, ld, r, "roots", false);
    /* Lost later (absent before leakgate knew it: none). */
    if (rc == 0 && leakgate_json__get(r, "lost_later_bytes"))
        rc = get_int(&c->later_bytes, NULL, ld, r, "lost_later_bytes");
    if (rc == 0 && leakgate_json__get(r, "lost_later_objects"))
        rc = get_int(&c->later_objs, NULL, ld, r, "lost_later_objects");
    if (rc < 0)
        return rc;
    if (c->lost_bytes < 0 || c->lost_objs < 0 || c->indirect_bytes < 0 ||
        c->indirect_objs < 0 || c->later_bytes < 0 || c->later_objs < 0)
        return fail(ld, r, "negative count in 'reachability'");
    if (c->later_bytes > c->lost_bytes + c->indirect_bytes ||
        c->later_objs > c->lost_objs + c->indirect_objs)
        return fail(ld, r,
                    "'lost_later_bytes' or 'lost_later_objects' above the "
                    "lost and indirectly lost");
    for (size_t i = 0; roots && i < roots->n; i++) {
        const struct leakgate_json *v = &roots->items[i];
        unsigned int k = 0;

        while (k < 3 && (v->type != LEAKGATE_JSON_STRING ||
                         strcmp(v->text, leakgate_report__root_keys[k]) != 0))
            k++;
        if (k == 3)
            return fail(ld, v,
                        "a root must be \"global\", \"tls\" or "
                        "\"stack\"");
        c->roots |= 1u << k;
    }
    c->known = true;
    return 0;
}

static int
load_stack(struct leakgate_vstack *s,
           struct loader *ld,
           const struct leakgate_json *o)
{
    const struct leakgate_json *pcs = NULL, *frames = NULL, *threads = NULL;
    int rc = want_object(ld, o, "a stack");

    if (rc == 0)
        rc = get_int(&s->bytes, NULL, ld, o, "bytes");
    if (rc == 0)
        rc = load_requested(s, ld, o);
    if (rc == 0)
        rc = get_int(&s->objs, NULL, ld, o, "objects");
    if (rc == 0)
        rc = load_reach(s, ld, o);
    if (rc == 0)
        rc = get_array(&pcs, ld, o, "pcs", true);
    if (rc == 0)
        rc = get_array(&frames, ld, o, "frames", true);
    if (rc == 0)
        rc = get_array(&threads, ld, o, "threads", false);
    if (rc == 0)
        rc = load_pcs(s, ld, pcs);
    if (rc == 0)
        rc = load_frames(s, ld, frames);
    if (rc == 0)
        rc = load_threads(s, ld, threads);
    if (rc == 0)
        rc = load_judgement(&s->judgement, ld, o);
    return rc;
}

/* The array `key` of stacks into *out (the verdict's: freed with it). */
static int
load_stacks(struct leakgate_vstack **out,
            size_t *n,
            struct loader *ld,
            const struct leakgate_json *rec,
            const char *key,
            bool required)
{
    const struct leakgate_json *arr;
    int rc = get_array(&arr, ld, rec, key, required);

    if (rc < 0 || !arr || arr->n == 0)
        return rc;
    *out = leakgate_util__calloc(arr->n, sizeof **out);
    if (!*out)
        return no_memory(ld);
    for (size_t i = 0; i < arr->n && rc == 0; i++) {
        *n = i + 1;
        rc = load_stack(&(*out)[i], ld, &arr->items[i]);
    }
    return rc;
}

/* ---- one test record ------------------------------------------------- */

static int
load_status(struct leakgate_verdict *v,
            const struct loader *ld,
            const struct leakgate_json *rec)
{
    static const char *const names[] = {"pass", "fail", "not_judged"};
    const struct leakgate_json *s;
    int rc = member(&s, ld, rec, "status");

    if (rc < 0)
        return rc;
    if (s->type != LEAKGATE_JSON_STRING)
        return wrong_type(ld, s, "status", "a string");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(s->text, names[i]) == 0) {
            v->status = (leakgate_status)i;
            return 0;
        }
    }
    return fail(ld, s,
                "unknown status '%.40s' (expected pass, fail or not_judged)",
                s->text);
}

/* {"bytes": N, "objects": M} of `name`, or null (0, 0). */
static int
load_counts(uint64_t *bytes_out,
            uint64_t *objs_out,
            struct loader *ld,
            const struct leakgate_json *o,
            const char *name)
{
    int64_t bytes = 0, objs = 0;
    bool null;
    int rc;

    *bytes_out = *objs_out = 0;
    if (!o || o->type == LEAKGATE_JSON_NULL)
        return 0;
    rc = want_object(ld, o, name);
    if (rc == 0)
        rc = get_int(&bytes, &null, ld, o, "bytes");
    if (rc == 0)
        rc = get_int(&objs, &null, ld, o, "objects");
    if (rc == 0 && (bytes < 0 || objs < 0))
        rc = fail(ld, o, "%s counts must not be negative", name);
    *bytes_out = (uint64_t)(bytes > 0 ? bytes : 0);
    *objs_out = (uint64_t)(objs > 0 ? objs : 0);
    return rc;
}

/* "measured_by" and "first_pass" (optional: absent means exact). */
static int
load_measured_by(struct leakgate_verdict *v,
                 struct loader *ld,
                 const struct leakgate_json *rec)
{
    const struct leakgate_json *how = leakgate_json__get(rec, "measured_by");
    const struct leakgate_json *first = leakgate_json__get(rec, "first_pass");

    if (how && how->type != LEAKGATE_JSON_NULL) {
        if (how->type != LEAKGATE_JSON_STRING)
            return wrong_type(ld, how, "measured_by", "a string");
        if (!leakgate_verdict__measured_parse(&v->how, how->text))
            return fail(ld, how,
                        "unknown measured_by '%.40s' (expected exact, fast "
                        "pass, exact re-run, exact replay, suite window or "
                        "suite end)",
                        how->text);
    }
    return load_counts(&v->first_bytes, &v->first_objs, ld, first,
                       "first_pass");
}

/* "held_by_fixture" (optional, `scope: suite` tests). */
static int
load_held(struct leakgate_verdict *v,
          struct loader *ld,
          const struct leakgate_json *rec)
{
    return load_counts(&v->held_bytes, &v->held_objs, ld,
                       leakgate_json__get(rec, "held_by_fixture"),
                       "held_by_fixture");
}

/* {"pattern", "line"} or null: the entry that applied. */
static int
load_entry_ref(const struct leakgate_config_entry **out,
               struct loader *ld,
               const struct leakgate_json *rec,
               const char *key)
{
    const struct leakgate_json *o = leakgate_json__get(rec, key);
    struct leakgate_config_entry *e;
    int64_t line = 0;
    int rc;

    *out = NULL;
    if (!o || o->type == LEAKGATE_JSON_NULL)
        return 0;
    if (o->type != LEAKGATE_JSON_OBJECT)
        return wrong_type(ld, o, key, "an object or null");
    e = leakgate_util__calloc(1, sizeof *e);
    if (!own(ld, e))
        return no_memory(ld);
    rc = req_string(&e->pattern, ld, o, "pattern");
    if (e->pattern && !own(ld, e->pattern))
        return no_memory(ld);
    if (rc == 0)
        rc = get_int(&line, NULL, ld, o, "line");
    e->line = line > 0 && line <= UINT32_MAX ? (unsigned int)line : 0;
    *out = e;
    return rc;
}

static int
load_settings(struct leakgate_verdict *v,
              struct loader *ld,
              const struct leakgate_json *rec)
{
    struct leakgate_policy_settings *s = &v->settings;
    int64_t stack = 0, total = 0, lost = 0, warmup = 0;
    bool no_total = true, no_lost = true;
    int rc = get_int(&stack, &(bool){false}, ld, rec, "stack_limit");

    if (rc == 0)
        rc = get_int(&total, &no_total, ld, rec, "total_limit");
    if (rc == 0)
        rc = get_int(&lost, &no_lost, ld, rec, "lost_limit");
    if (rc == 0)
        rc = get_int(&warmup, &(bool){false}, ld, rec, "warmup");
    if (rc == 0)
        rc = get_bool(&s->suite_scope, ld, rec, "suite_scope", false);
    if (rc == 0)
        rc = load_entry_ref(&s->test_entry, ld, rec, "test_entry");
    if (rc == 0)
        rc = load_entry_ref(&s->suite_entry, ld, rec, "suite_entry");
    s->stack_limit = stack > 0 ? (uint64_t)stack : 0;
    s->total_unlimited = no_total;
    s->total_limit = total > 0 ? (uint64_t)total : 0;
    s->lost_limited = !no_lost;
    s->lost_limit = lost > 0 ? (uint64_t)lost : 0;
    s->warmup = warmup > 0 && warmup < 100000 ? (unsigned int)warmup : 0;
    return rc;
}

/* Version 2's peak keys (absent: not measured, no limit). */
static int
load_peak(struct leakgate_verdict *v,
          struct loader *ld,
          const struct leakgate_json *rec)
{
    struct leakgate_policy_settings *s = &v->settings;
    int64_t peak = 0, allocs = 0, limit = 0, line = 0, level = 0;
    bool no_peak = true, no_limit = true;
    const char *from = NULL;
    int rc = get_int(&peak, &no_peak, ld, rec, "peak_bytes");

    if (rc == 0)
        rc = get_int(&allocs, &(bool){false}, ld, rec, "allocations");
    if (rc == 0)
        rc = get_int(&limit, &no_limit, ld, rec, "peak_limit");
    if (rc == 0)
        rc = get_int(&line, &(bool){false}, ld, rec, "peak_limit_line");
    if (rc == 0)
        rc = get_int(&level, &(bool){false}, ld, rec, "peak_level");
    if (rc == 0)
        rc = get_bool(&v->peak_over, ld, rec, "peak_over", false);
    if (rc == 0) {
        const struct leakgate_json *f =
            leakgate_json__get(rec, "peak_limit_from");

        if (f && f->type == LEAKGATE_JSON_STRING)
            from = f->text;
        else if (f && f->type != LEAKGATE_JSON_NULL)
            rc = wrong_type(ld, f, "peak_limit_from", "a string or null");
    }
    v->peak_known = !no_peak;
    v->peak_bytes = peak > 0 ? (uint64_t)peak : 0;
    v->allocations = allocs > 0 ? (uint64_t)allocs : 0;
    v->peak_level = level > 0 ? (uint64_t)level : 0;
    s->peak_limited = !no_limit;
    s->peak_limit = limit > 0 ? (uint64_t)limit : 0;
    s->peak_entry = NULL;
    if (rc == 0 && from && strcmp(from, "tests") == 0)
        s->peak_entry = s->test_entry;
    else if (rc == 0 && from && strcmp(from, "suites") == 0)
        s->peak_entry = s->suite_entry;
    else if (rc == 0 && from && strcmp(from, "defaults") == 0) {
        struct leakgate_config_entry *e = leakgate_util__calloc(1, sizeof *e);

        if (!own(ld, e))
            return no_memory(ld);
        e->line = line > 0 && line <= UINT32_MAX ? (unsigned int)line : 0;
        s->peak_entry = e;
    }
    if (rc == 0)
        rc = load_stacks(&v->peak_stacks, &v->npeak_stacks, ld, rec,
                         "peak_stacks", false);
    return rc;
}

static int
load_policy(struct leakgate_verdict *v,
            const struct loader *ld,
            const struct leakgate_json *rec)
{
    struct leakgate_policy_verdict *p = &v->policy;
    int64_t bytes = 0, objs = 0, over = 0, excluded = 0;
    bool absent;
    int rc = get_int(&bytes, &absent, ld, rec, "retained_bytes");

    if (rc == 0)
        rc = get_int(&objs, &absent, ld, rec, "retained_objects");
    if (rc == 0)
        rc = get_int(&over, &absent, ld, rec, "stacks_over");
    if (rc == 0)
        rc = get_int(&excluded, &absent, ld, rec, "excluded_bytes");
    if (rc == 0)
        rc = get_bool(&p->total_over, ld, rec, "total_over", false);
    if (rc == 0)
        rc = get_bool(&p->lost_over, ld, rec, "lost_over", false);
    p->total_bytes = bytes > 0 ? (uint64_t)bytes : 0;
    p->total_objs = objs > 0 ? (uint64_t)objs : 0;
    p->nover = over > 0 ? (size_t)over : 0;
    p->failed = v->status == LEAKGATE_STATUS_FAIL;
    v->excluded_bytes = excluded;
    return rc;
}

/* A record whose totals count more stacks than it lists (a replay's cap):
 * what the list leaves out, kept so that every total still counts it. */
static int
load_omitted(struct leakgate_verdict *v,
             const struct loader *ld,
             const struct leakgate_json *rec)
{
    struct leakgate_report_tally t;
    int64_t counted = 0;
    bool absent;
    int rc = get_int(&counted, &absent, ld, rec, "counted_stacks");

    if (rc < 0)
        return rc;
    leakgate_report__tally(&t, v);
    if (counted > (int64_t)t.ncounted) {
        v->omitted_stacks = (size_t)counted - t.ncounted;
        if ((int64_t)v->policy.total_bytes > t.bytes)
            v->omitted_bytes = v->policy.total_bytes - (uint64_t)t.bytes;
        if ((int64_t)v->policy.total_objs > t.objs)
            v->omitted_objs = v->policy.total_objs - (uint64_t)t.objs;
    }
    return 0;
}

static int
load_notes(struct leakgate_verdict *v,
           struct loader *ld,
           const struct leakgate_json *rec)
{
    const struct leakgate_json *arr;
    int rc = get_array(&arr, ld, rec, "notes", false);

    if (rc < 0 || !arr || arr->n == 0)
        return rc;
    v->notes = leakgate_util__calloc(arr->n, sizeof *v->notes);
    if (!v->notes)
        return no_memory(ld);
    for (size_t i = 0; i < arr->n && rc == 0; i++) {
        struct leakgate_note *note = &v->notes[i];
        const struct leakgate_json *o = &arr->items[i];
        int64_t line = 0;

        v->nnotes = i + 1;
        rc = want_object(ld, o, "a note");
        if (rc == 0)
            rc = opt_string(&note->file, ld, o, "file");
        if (rc == 0)
            rc = get_int(&line, &(bool){false}, ld, o, "line");
        if (rc == 0)
            rc = opt_string(&note->message, ld, o, "message");
        if (rc == 0 && !note->message)
            note->message = leakgate_util__strdup("");
        if (rc == 0 && !note->message)
            rc = no_memory(ld);
        note->line = line > 0 && line <= UINT32_MAX ? (unsigned int)line : 0;
    }
    return rc;
}

static int
load_artifacts(struct leakgate_verdict *v,
               struct loader *ld,
               const struct leakgate_json *rec)
{
    const struct leakgate_json *a = leakgate_json__get(rec, "artifacts");
    int rc = 0;

    if (!a || a->type == LEAKGATE_JSON_NULL)
        return 0;
    if (a->type != LEAKGATE_JSON_OBJECT)
        return wrong_type(ld, a, "artifacts", "an object");
    rc = opt_string(&v->artifact_dir, ld, a, "dir");
    if (rc == 0)
        rc = opt_string(&v->heap_before, ld, a, "heap_before");
    if (rc == 0)
        rc = opt_string(&v->heap_after, ld, a, "heap_after");
    if (rc == 0)
        rc = opt_string(&v->json_path, ld, a, "json");
    if (rc == 0)
        rc = opt_string(&v->text_path, ld, a, "text");
    if (rc == 0)
        rc = opt_string(&v->dot_path, ld, a, "dot");
    if (rc == 0)
        rc = opt_string(&v->svg_path, ld, a, "svg");
    if (rc == 0)
        rc = opt_string(&v->pdf_path, ld, a, "pdf");
    if (rc == 0)
        rc = opt_string(&v->picture_note, ld, a, "picture_note");
    if (rc == 0)
        rc = opt_string(&v->artifacts_note, ld, a, "not_written");
    if (rc == 0)
        rc = opt_string(&v->artifacts_binary, ld, a, "binary");
    return rc;
}

static int
load_names(struct leakgate_verdict *v,
           struct loader *ld,
           const struct leakgate_json *rec)
{
    struct leakgate_buf name = LEAKGATE_BUF_INIT;
    int rc = req_string(&v->suite, ld, rec, "suite");

    if (rc == 0)
        rc = req_string(&v->test, ld, rec, "test");
    if (rc == 0)
        rc = opt_string(&v->origin, ld, rec, "origin");
    if (rc < 0)
        return rc;
    leakgate_buf__printf(&name, "%s/%s", v->suite, v->test);
    v->name = leakgate_buf__take(&name);
    return v->name ? 0 : no_memory(ld);
}

static int
load_record(struct leakgate_verdict *v,
            struct loader *ld,
            const struct leakgate_json *rec)
{
    double seconds = 0;
    const struct leakgate_json *secs;
    int rc = want_object(ld, rec, "a tests record");

    if (rc == 0)
        rc = load_names(v, ld, rec);
    if (rc == 0)
        rc = load_status(v, ld, rec);
    if (rc == 0)
        rc = get_bool(&v->measured, ld, rec, "measured", true);
    if (rc == 0)
        rc = load_measured_by(v, ld, rec);
    if (rc == 0)
        rc = load_held(v, ld, rec);
    secs = leakgate_json__get(rec, "seconds");
    if (rc == 0 && secs && !leakgate_json__double(&seconds, secs))
        rc = wrong_type(ld, secs, "seconds", "a number");
    v->seconds = seconds;
    if (rc == 0)
        rc = load_settings(v, ld, rec);
    if (rc == 0)
        rc = load_policy(v, ld, rec);
    if (rc == 0)
        rc = load_peak(v, ld, rec);
    if (rc == 0)
        rc = opt_string(&v->not_judged_why, ld, rec, "not_judged_why");
    if (rc == 0)
        rc = opt_string(&v->ended, ld, rec, "ended");
    if (rc == 0)
        rc = opt_string(&v->report, ld, rec, "report");
    if (rc == 0)
        rc = load_notes(v, ld, rec);
    if (rc == 0)
        rc = load_artifacts(v, ld, rec);
    if (rc == 0)
        rc = load_stacks(&v->stacks, &v->nstacks, ld, rec, "stacks", true);
    if (rc == 0)
        rc = load_omitted(v, ld, rec);
    return rc;
}

/* ---- the document ---------------------------------------------------- */

static int
check_header(struct loader *ld, const struct leakgate_json *root)
{
    const struct leakgate_json *f = leakgate_json__get(root, "format");
    const struct leakgate_json *ver = leakgate_json__get(root, "version");
    int64_t version;

    if (root->type != LEAKGATE_JSON_OBJECT)
        return fail(ld, root,
                    "not leakgate results: expected an object with "
                    "\"format\": \"" RESULTS_FORMAT "\", got %s",
                    leakgate_json__type_name(root));
    if (!f)
        return fail(ld, root, "not leakgate results: no 'format' key");
    if (f->type != LEAKGATE_JSON_STRING || strcmp(f->text, RESULTS_FORMAT))
        return fail(ld, f, "not leakgate results: 'format' is not \"%s\"",
                    RESULTS_FORMAT);
    if (!ver)
        return fail(ld, root, "missing 'version'");
    if (!leakgate_json__int(&version, ver))
        return wrong_type(ld, ver, "version", "an integer");
    if (version < 1 || version > RESULTS_VERSION)
        return fail(ld, ver,
                    "unsupported results version %" PRId64
                    " (this leakgate reads versions 1 to %d)",
                    version, RESULTS_VERSION);
    ld->version = (int)version;
    return 0;
}

static int
load_env(struct loader *ld, const struct leakgate_json *root)
{
    const struct leakgate_json *e = leakgate_json__get(root, "environment");
    struct leakgate_report_env *env = &ld->env;
    const char **fields[] = {&env->sampling,        &env->jemalloc_version,
                             &env->binary,          &env->build_id,
                             &env->thresholds_path, &env->report_dir,
                             &env->filter};
    static const char *const keys[] = {
        "sampling",   "jemalloc_version", "binary", "build_id",
        "thresholds", "report_dir",       "filter"};
    int rc = 0;

    if (!e || e->type == LEAKGATE_JSON_NULL)
        return 0;
    if (e->type != LEAKGATE_JSON_OBJECT)
        return wrong_type(ld, e, "environment", "an object");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0] && rc == 0; i++)
        rc = held_string(fields[i], ld, e, keys[i]);
    return rc;
}

static int
push_verdict(struct loader *ld, struct leakgate_verdict *v)
{
    if (ld->n == ld->cap) {
        size_t cap = ld->cap ? ld->cap * 2 : 16;
        struct leakgate_verdict **all =
            leakgate_util__realloc(ld->v, cap * sizeof *all);

        if (!all)
            return no_memory(ld);
        ld->v = all;
        ld->cap = cap;
    }
    ld->v[ld->n++] = v;
    return 0;
}

static int
load_document(struct loader *ld, const struct leakgate_json *root)
{
    const struct leakgate_json *tests;
    int rc = check_header(ld, root);

    if (rc == 0)
        rc = load_env(ld, root);
    if (rc == 0)
        rc = get_array(&tests, ld, root, "tests", true);
    for (size_t i = 0; rc == 0 && tests && i < tests->n; i++) {
        struct leakgate_verdict *v = leakgate_util__calloc(1, sizeof *v);

        if (!v)
            return no_memory(ld);
        rc = push_verdict(ld, v);
        if (rc < 0) {
            leakgate_verdict__free(v);
            return rc;
        }
        rc = load_record(v, ld, &tests->items[i]);
    }
    return rc;
}

static void
loader_dispose(struct loader *ld)
{
    for (size_t i = 0; i < ld->n; i++)
        leakgate_verdict__free(ld->v[i]);
    for (size_t i = 0; i < ld->nowned; i++)
        leakgate_util__free(ld->owned[i]);
    leakgate_util__free(ld->v);
    leakgate_util__free(ld->owned);
}

/* Note the version of the file being committed: the first file's, or
 * the first file of another version; false on ENOMEM. */
static bool
note_version(struct leakgate_results *r, const struct loader *ld)
{
    if (r->nfiles == 0) {
        r->version = ld->version;
        r->version_file = leakgate_util__strdup(ld->name);
        return r->version_file != NULL;
    }
    if (ld->version == r->version || r->other_version_file)
        return true;
    r->other_version = ld->version;
    r->other_version_file = leakgate_util__strdup(ld->name);
    return r->other_version_file != NULL;
}

/* Move the loaded windows and records into r; false on ENOMEM. */
static bool
commit(struct leakgate_results *r, struct loader *ld)
{
    size_t nv = r->n + ld->n, no = r->nowned + ld->nowned;
    struct leakgate_verdict **v = r->v;
    void **owned = r->owned;

    if (!note_version(r, ld))
        return false;

    if (nv > r->cap) {
        v = leakgate_util__realloc(r->v, (nv + 16) * sizeof *v);
        if (!v)
            return false;
        r->v = v;
        r->cap = nv + 16;
    }
    if (no > r->capowned) {
        owned = leakgate_util__realloc(r->owned, (no + 64) * sizeof *owned);
        if (!owned)
            return false;
        r->owned = owned;
        r->capowned = no + 64;
    }
    /* Nothing loaded (a document without tests or strings) leaves the
     * arrays NULL: no pointer arithmetic on them. */
    if (ld->n > 0)
        memcpy(r->v + r->n, ld->v, ld->n * sizeof *v);
    if (ld->nowned > 0)
        memcpy(r->owned + r->nowned, ld->owned, ld->nowned * sizeof *owned);
    r->n = nv;
    r->nowned = no;
    if (!r->has_env) {
        r->env = ld->env;
        r->has_env = true;
    }
    /* Files of one --filter run (one filter, one or more processes) see
     * some tests only; the per-test processes of a whole ctest run have
     * as many filters as tests. */
    if (r->nfiles == 0 || !ld->env.filter)
        r->filtered = ld->env.filter != NULL;
    else if (r->filtered && strcmp(r->env.filter, ld->env.filter) != 0)
        r->filtered = false;
    r->nfiles++;
    ld->n = ld->nowned = 0;
    return true;
}

int
leakgate_results__load_text(struct leakgate_results *r,
                            const char *text,
                            size_t len,
                            const char *name)
{
    struct leakgate_json *root = NULL;
    struct loader ld;
    int rc;

    memset(&ld, 0, sizeof ld);
    ld.name = name;
    rc = leakgate_json__parse(&root, text, len, name, NULL);
    if (rc == 0)
        rc = load_document(&ld, root);
    if (rc == 0 && !commit(r, &ld))
        rc = no_memory(&ld);
    loader_dispose(&ld);
    leakgate_json__free(root);
    return rc;
}
