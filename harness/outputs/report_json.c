/* SPDX-License-Identifier: MIT */
/*
 * report_json: one window as a JSON test object of the results format
 * (leakgate_report__json_test(): status, limits, peak, every stack with
 * its frames, notes), the run's environment object, and the
 * `leakgate-results` document around such pieces
 * (leakgate_report__json_doc()).  docs/results-format.md.  A
 * pretty-printing writer, one member per line; every string through
 * report.c's JSON escaper.  Above report.c (report_parts.h).
 */
#include "report.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "leakgate/version.h"
#include "report_parts.h"
#include "util.h"

/* Nesting of the JSON document (root, tests, test, stacks, stack, frames,
 * frame) plus room. */
#define JSON_DEPTH_MAX 12

/* A pretty-printing writer: one member per line, two-space indent. */
struct json {
    struct leakgate_buf *b;
    int depth;
    bool fresh[JSON_DEPTH_MAX]; /* nothing written yet at this depth */
};

/* A new line indented to the depth (puts, not printf: a window's object
 * is a hundred lines). */
static void
json_line(struct json *j)
{
    static const char spaces[2 * JSON_DEPTH_MAX + 1] = "                  "
                                                       "      ";
    int depth = j->depth > 0 ? j->depth : 0;

    leakgate_buf__puts(j->b, "\n");
    leakgate_buf__put(j->b, spaces, (size_t)depth * 2);
}

static void
json_key(struct json *j, const char *key)
{
    if (!j->fresh[j->depth])
        leakgate_buf__puts(j->b, ",");
    json_line(j);
    j->fresh[j->depth] = false;
    if (key) {
        leakgate_buf__puts(j->b, "\"");
        leakgate_buf__puts(j->b, key);
        leakgate_buf__puts(j->b, "\": ");
    }
}

static void
json_open(struct json *j, const char *key, const char *bracket)
{
    json_key(j, key);
    leakgate_buf__puts(j->b, bracket);
    if (j->depth + 1 >= JSON_DEPTH_MAX) {
        j->b->failed = true; /* a bug: the document is deeper than planned */
        return;
    }
    j->fresh[++j->depth] = true;
}

static void
json_close(struct json *j, const char *bracket)
{
    bool empty = j->fresh[j->depth];

    j->depth--;
    if (!empty)
        json_line(j);
    leakgate_buf__puts(j->b, bracket);
}

static void
json_str(struct json *j, const char *key, const char *s)
{
    json_key(j, key);
    if (!s) {
        leakgate_buf__puts(j->b, "null");
        return;
    }
    leakgate_buf__puts(j->b, "\"");
    leakgate_report__put_escaped(j->b, s, LEAKGATE_REPORT_ESC_JSON);
    leakgate_buf__puts(j->b, "\"");
}

static void
json_int(struct json *j, const char *key, int64_t n)
{
    json_key(j, key);
    leakgate_buf__printf(j->b, "%" PRId64, n);
}

static void
json_uint(struct json *j, const char *key, uint64_t n)
{
    json_key(j, key);
    leakgate_buf__printf(j->b, "%" PRIu64, n);
}

/* An unsigned number, or null when !present. */
static void
json_opt(struct json *j, const char *key, bool present, uint64_t n)
{
    json_key(j, key);
    if (present)
        leakgate_buf__printf(j->b, "%" PRIu64, n);
    else
        leakgate_buf__puts(j->b, "null");
}

/* "requested_bytes" of s: the bytes the program asked for, null when the
 * allocation wrappers did not see the requests. */
static void
json_requested(struct json *j, const struct leakgate_vstack *s)
{
    json_opt(j, "requested_bytes", s->requested_known && s->requested >= 0,
             (uint64_t)s->requested);
}

static void
json_bool(struct json *j, const char *key, bool value)
{
    json_key(j, key);
    leakgate_buf__puts(j->b, value ? "true" : "false");
}

/* "reachability" of s (alloc/reach.h): null when not known. */
static void
json_reach(struct json *j, const struct leakgate_vstack *s)
{
    const struct leakgate_reach_counts *r = &s->reach;
    const char *kind = leakgate_report__reach_kind(s);

    if (!kind) {
        json_str(j, "reachability", NULL);
        return;
    }
    json_open(j, "reachability", "{");
    json_str(j, "kind", kind);
    json_int(j, "lost_bytes", r->lost_bytes);
    json_int(j, "lost_objects", r->lost_objs);
    json_int(j, "indirect_bytes", r->indirect_bytes);
    json_int(j, "indirect_objects", r->indirect_objs);
    json_int(j, "reachable_bytes", leakgate_report__reachable_bytes(s));
    json_int(j, "reachable_objects", leakgate_report__reachable_objs(s));
    json_int(j, "lost_later_bytes", r->later_bytes);
    json_int(j, "lost_later_objects", r->later_objs);
    json_open(j, "roots", "[");
    for (unsigned int k = 0; k < 3; k++)
        if (r->roots & (1u << k))
            json_str(j, NULL, leakgate_report__root_keys[k]);
    json_close(j, "]");
    json_close(j, "}");
}

/* Addresses are strings: JSON readers lose precision above 2^53. */
static void
json_hex(struct json *j, const char *key, uintptr_t value)
{
    json_key(j, key);
    leakgate_buf__printf(j->b, "\"0x%" PRIxPTR "\"", value);
}

static void
json_env(struct json *j, const struct leakgate_report_env *env)
{
    json_open(j, "environment", "{");
    json_str(j, "sampling", env->sampling);
    json_str(j, "jemalloc_version", env->jemalloc_version);
    json_str(j, "binary", env->binary);
    json_str(j, "build_id", env->build_id);
    json_str(j, "thresholds", env->thresholds_path);
    json_str(j, "report_dir", env->report_dir);
    json_str(j, "filter", env->filter);
    json_close(j, "}");
}

static void
json_frame(struct json *j, const struct leakgate_frame *f, bool shown)
{
    json_open(j, NULL, "{");
    json_str(j, "function", f->function);
    json_str(j, "file", f->file);
    json_opt(j, "line", f->line != 0, f->line);
    json_str(j, "module", f->module);
    if (f->module)
        json_hex(j, "offset", f->module_offset);
    else
        json_str(j, "offset", NULL);
    json_bool(j, "inlined", f->inlined);
    json_hex(j, "pc", f->pc);
    json_bool(j, "shown", shown);
    json_close(j, "}");
}

static void
json_stack_lists(struct json *j, const struct leakgate_vstack *s)
{
    size_t begin, end;

    json_open(j, "threads", "[");
    for (size_t i = 0; i < s->nthreads; i++) {
        json_open(j, NULL, "{");
        json_uint(j, "tid", s->threads[i].tid);
        json_int(j, "bytes", s->threads[i].delta_bytes);
        json_int(j, "objects", s->threads[i].delta_objs);
        json_close(j, "}");
    }
    json_close(j, "]");
    json_open(j, "pcs", "[");
    for (size_t i = 0; i < s->npcs; i++)
        json_hex(j, NULL, s->pcs[i]);
    json_close(j, "]");
    if (!s->frames) {
        json_str(j, "frames", NULL);
        return;
    }
    leakgate_report__shown_range(s, &begin, &end);
    json_open(j, "frames", "[");
    for (size_t k = 0; k < s->nframes; k++)
        json_frame(j, &s->frames[k], k >= begin && k < end);
    json_close(j, "]");
}

static void
json_stack(struct json *j,
           const struct leakgate_verdict *v,
           const struct leakgate_vstack *s)
{
    static const char *const sources[] = {NULL, "stack_rule", "test_entry",
                                          "suite_entry", "defaults"};
    const struct leakgate_policy_stack_verdict *jg = &s->judgement;
    enum leakgate_report_source src = leakgate_report__limit_source(v, s);
    bool ignored = s->bytes > 0 && jg->ignored;

    json_open(j, NULL, "{");
    json_int(j, "bytes", s->bytes);
    json_requested(j, s);
    json_int(j, "objects", s->objs);
    json_reach(j, s);
    json_bool(j, "judged", s->bytes > 0);
    json_bool(j, "counted", leakgate_report__counted(s));
    json_opt(j, "limit", src != LEAKGATE_REPORT_SOURCE_NONE, jg->limit);
    json_str(j, "limit_source", sources[src]);
    json_opt(j, "rule_line", src == LEAKGATE_REPORT_SOURCE_RULE,
             jg->rule ? jg->rule->line : 0);
    json_bool(j, "over", jg->over);
    json_bool(j, "ignored", ignored);
    json_opt(j, "ignore_line", ignored && jg->ignore,
             jg->ignore ? jg->ignore->line : 0);
    json_str(j, "ignore_reason",
             ignored && jg->ignore ? jg->ignore->reason : NULL);
    json_stack_lists(j, s);
    json_close(j, "}");
}

static void
json_entry(struct json *j,
           const char *key,
           const struct leakgate_config_entry *e)
{
    if (!e) {
        json_str(j, key, NULL);
        return;
    }
    json_open(j, key, "{");
    json_str(j, "pattern", e->pattern);
    json_uint(j, "line", e->line);
    json_close(j, "}");
}

static void
json_limits(struct json *j, const struct leakgate_verdict *v)
{
    const struct leakgate_policy_settings *st = &v->settings;

    json_uint(j, "stack_limit", st->stack_limit);
    json_opt(j, "total_limit", !st->total_unlimited, st->total_limit);
    json_opt(j, "lost_limit", st->lost_limited, st->lost_limit);
    json_uint(j, "warmup", st->warmup);
    json_bool(j, "suite_scope", st->suite_scope);
    json_entry(j, "test_entry", st->test_entry);
    json_entry(j, "suite_entry", st->suite_entry);
    json_uint(j, "stacks_over", v->policy.nover);
    json_bool(j, "total_over", v->policy.total_over);
    json_bool(j, "lost_over", v->policy.lost_over);
}

/* The peak meter's figures and, over the limit, what held the peak. */
static void
json_peak(struct json *j, const struct leakgate_verdict *v)
{
    const struct leakgate_policy_settings *st = &v->settings;
    const struct leakgate_config_entry *e = st->peak_entry;
    const char *from = leakgate_verdict__peak_from(v);

    json_opt(j, "peak_bytes", v->peak_known, v->peak_bytes);
    json_opt(j, "allocations", v->peak_known, v->allocations);
    json_opt(j, "peak_limit", st->peak_limited, st->peak_limit);
    json_str(j, "peak_limit_from", from);
    json_opt(j, "peak_limit_line", e && st->peak_limited, e ? e->line : 0);
    json_bool(j, "peak_over", v->peak_over);
    json_opt(j, "peak_level", v->npeak_stacks > 0, v->peak_level);
    json_open(j, "peak_stacks", "[");
    for (size_t i = 0; i < v->npeak_stacks; i++) {
        json_open(j, NULL, "{");
        json_int(j, "bytes", v->peak_stacks[i].bytes);
        json_int(j, "objects", v->peak_stacks[i].objs);
        json_stack_lists(j, &v->peak_stacks[i]);
        json_close(j, "}");
    }
    json_close(j, "]");
}

static void
json_notes(struct json *j, const struct leakgate_verdict *v)
{
    json_open(j, "notes", "[");
    for (size_t i = 0; i < v->nnotes; i++) {
        json_open(j, NULL, "{");
        json_str(j, "file", v->notes[i].file);
        json_uint(j, "line", v->notes[i].line);
        json_str(j, "message", v->notes[i].message);
        json_close(j, "}");
    }
    json_close(j, "]");
}

static void
json_test(struct json *j, const struct leakgate_verdict *v)
{
    static const char *const status[] = {"pass", "fail", "not_judged"};
    struct leakgate_report_tally n;

    leakgate_report__tally(&n, v);
    json_open(j, NULL, "{");
    json_str(j, "suite", v->suite);
    json_str(j, "test", v->test);
    json_str(j, "name", v->name);
    if (v->origin)
        json_str(j, "origin", v->origin);
    json_str(j, "status",
             (unsigned int)v->status < 3 ? status[v->status] : "unknown");
    json_bool(j, "measured", v->measured);
    json_str(j, "measured_by", leakgate_verdict__measured_by(v->how));
    if (v->first_objs > 0 || v->how == LEAKGATE_MEASURED_RERUN ||
        v->how == LEAKGATE_MEASURED_REPLAY) {
        json_open(j, "first_pass", "{");
        json_uint(j, "bytes", v->first_bytes);
        json_uint(j, "objects", v->first_objs);
        json_close(j, "}");
    } else {
        json_str(j, "first_pass", NULL);
    }
    if (v->how == LEAKGATE_MEASURED_SUITE_END) {
        json_open(j, "held_by_fixture", "{");
        json_uint(j, "bytes", v->held_bytes);
        json_uint(j, "objects", v->held_objs);
        json_close(j, "}");
    }
    json_key(j, "seconds");
    leakgate_buf__printf(j->b, "%.6f", leakgate_report__seconds_of(v));
    json_int(j, "retained_bytes", n.bytes);
    json_opt(j, "requested_bytes", n.requested_known && n.requested >= 0,
             (uint64_t)n.requested);
    json_int(j, "retained_objects", n.objs);
    json_uint(j, "counted_stacks", n.ncounted);
    json_int(j, "excluded_bytes", v->excluded_bytes);
    json_limits(j, v);
    json_peak(j, v);
    json_str(j, "not_judged_why", v->not_judged_why);
    if (v->ended)
        json_str(j, "ended", v->ended);
    json_notes(j, v);
    json_open(j, "artifacts", "{");
    json_str(j, "dir", v->artifact_dir);
    if (v->artifacts_binary)
        json_str(j, "binary", v->artifacts_binary);
    json_str(j, "heap_before", v->heap_before);
    json_str(j, "heap_after", v->heap_after);
    json_str(j, "json", v->json_path);
    json_str(j, "text", v->text_path);
    json_str(j, "dot", v->dot_path);
    json_str(j, "svg", v->svg_path);
    json_str(j, "pdf", v->pdf_path);
    if (v->picture_note)
        json_str(j, "picture_note", v->picture_note);
    if (v->artifacts_note)
        json_str(j, "not_written", v->artifacts_note);
    json_close(j, "}");
    json_str(j, "report", v->report);
    json_open(j, "stacks", "[");
    for (size_t i = 0; i < v->nstacks; i++)
        json_stack(j, v, &v->stacks[i]);
    json_close(j, "]");
    json_close(j, "}");
}

/* Render into b what `fill` writes at depth 1 (after a first member),
 * from the first character of the value on: one member's value, or one
 * array item, as it appears in the document. */
static void
json_value(struct leakgate_buf *b,
           int depth,
           void (*fill)(struct json *, const void *),
           const void *arg)
{
    struct leakgate_buf tmp = LEAKGATE_BUF_INIT;
    struct json j;
    const char *at;

    memset(&j, 0, sizeof j);
    j.b = &tmp;
    j.depth = depth;
    j.fresh[depth] = true;
    fill(&j, arg);
    at = tmp.ptr ? tmp.ptr + strspn(tmp.ptr, "\n") : NULL;
    if (at && depth == 1)
        at = strchr(at, '{'); /* after the key */
    if (tmp.failed || !at)
        b->failed = true;
    else
        leakgate_buf__puts(b, at);
    leakgate_buf__dispose(&tmp);
}

static void
fill_test(struct json *j, const void *v)
{
    json_test(j, v);
}

static void
fill_env(struct json *j, const void *env)
{
    json_env(j, env);
}

void
leakgate_report__json_test(struct leakgate_buf *b,
                           const struct leakgate_verdict *v)
{
    json_value(b, 2, fill_test, v);
}

void
leakgate_report__json_env(struct leakgate_buf *b,
                          const struct leakgate_report_env *env)
{
    json_value(b, 1, fill_env, env);
}

char *
leakgate_report__json_doc(const struct leakgate_report_piece *p,
                          size_t n,
                          const char *env)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    size_t count[3] = {0, 0, 0};

    for (size_t i = 0; i < n; i++) {
        if ((unsigned int)p[i].status < 3)
            count[p[i].status]++;
    }
    leakgate_buf__printf(&b,
                         "{\n  \"format\": \"leakgate-results\",\n"
                         "  \"version\": 2,\n"
                         "  \"leakgate_version\": \"%s\",\n"
                         "  \"environment\": %s,\n"
                         "  \"summary\": {\n    \"tests\": %zu,\n"
                         "    \"passed\": %zu,\n    \"failed\": %zu,\n"
                         "    \"not_judged\": %zu\n  },\n  \"tests\": [",
                         LEAKGATE_VERSION, env, n, count[LEAKGATE_STATUS_PASS],
                         count[LEAKGATE_STATUS_FAIL],
                         count[LEAKGATE_STATUS_NOT_JUDGED]);
    for (size_t i = 0; i < n; i++) {
        leakgate_buf__puts(&b, i ? ",\n" : "\n");
        leakgate_buf__puts(&b, p[i].json_test);
    }
    leakgate_buf__puts(&b, n ? "\n  ]\n}\n" : "]\n}\n");
    return leakgate_buf__take(&b);
}
