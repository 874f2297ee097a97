/* SPDX-License-Identifier: MIT */
/*
 * profdiff: render the growth between two heap profiles (see profdiff.h).
 * Core: builds strings in memory.  The text mirrors the gate's report
 * (SPEC §7) without limits: a header, each listed stack with an aligned
 * "function  file:line" column, then what else changed and how it was
 * measured.  Every string from a symbol or path goes through the JSON
 * escaper in JSON; the DOT goes through graph.c.
 */
#include "profdiff.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "graph.h"
#include "leakgate/version.h"
#include "report.h"
#include "util.h"

/* Widest function column that locations still line up after. */
#define NAME_COLUMN_MAX 40

/* What the stacks add up to. */
struct sums {
    int64_t grown_bytes, grown_objs;
    size_t grown;
    int64_t freed_bytes, freed_objs;
    size_t freed;
    size_t listed; /* growing stacks at or above fold_min */
    size_t folded;
    int64_t folded_bytes;
    double fold_min; /* nodefraction of grown_bytes */
};

static void
sum_up(struct sums *s, const struct leakgate_profdiff *d)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < d->nstacks; i++) {
        const struct leakgate_vstack *st = &d->stacks[i];

        if (st->bytes > 0) {
            s->grown++;
            s->grown_bytes += st->bytes;
            s->grown_objs += st->objs;
        } else {
            s->freed++;
            s->freed_bytes += st->bytes;
            s->freed_objs += st->objs;
        }
    }
    s->fold_min = d->nodefraction * (double)s->grown_bytes;
    for (size_t i = 0; i < d->nstacks; i++) {
        const struct leakgate_vstack *st = &d->stacks[i];

        if (st->bytes <= 0)
            continue;
        if ((double)st->bytes >= s->fold_min) {
            s->listed++;
        } else {
            s->folded++;
            s->folded_bytes += st->bytes;
        }
    }
}

static bool
listed(const struct sums *s, const struct leakgate_vstack *st)
{
    return st->bytes > 0 && (double)st->bytes >= s->fold_min;
}

static const char *
plural(int64_t n, const char *one, const char *many)
{
    return n == 1 || n == -1 ? one : many;
}

/* ---- text --------------------------------------------------------------- */

static int
name_width(const struct leakgate_frame *f)
{
    size_t n = strlen(f->function ? f->function : "??") +
               (f->inlined ? strlen(" (inlined)") : 0);

    return n > NAME_COLUMN_MAX ? NAME_COLUMN_MAX : (int)n;
}

static void
text_frame(struct leakgate_buf *b, const struct leakgate_frame *f, int width)
{
    int used = (int)strlen(f->function ? f->function : "??") +
               (f->inlined ? (int)strlen(" (inlined)") : 0);

    leakgate_buf__printf(b, "      %s%s%*s  ", f->function ? f->function : "??",
                         f->inlined ? " (inlined)" : "",
                         used < width ? width - used : 0, "");
    if (f->file)
        leakgate_buf__printf(b, "%s:%u\n", f->file, f->line);
    else if (f->module)
        leakgate_buf__printf(b, "%s+0x%" PRIxPTR "\n", f->module,
                             f->module_offset);
    else
        leakgate_buf__printf(b, "0x%" PRIxPTR "\n", f->pc);
}

static void
text_stack(struct leakgate_buf *b,
           const struct leakgate_vstack *st,
           size_t nth,
           size_t of)
{
    char num[32], objs[32];
    int width = 0;

    leakgate_buf__printf(b, "  stack %zu of %zu: %s B in %s %s\n", nth, of,
                         leakgate_util__group_signed(num, st->bytes),
                         leakgate_util__group_signed(objs, st->objs),
                         plural(st->objs, "object", "objects"));
    if (!st->frames) {
        for (size_t k = 0; k < st->npcs; k++)
            leakgate_buf__printf(b, "      0x%" PRIxPTR "\n", st->pcs[k]);
        if (st->npcs == 0)
            leakgate_buf__puts(b, "      (every frame was in the "
                                  "allocator)\n");
        return;
    }
    for (size_t k = st->shown_begin; k < st->shown_end; k++) {
        int w = name_width(&st->frames[k]);

        width = w > width ? w : width;
    }
    for (size_t k = st->shown_begin; k < st->shown_end; k++)
        text_frame(b, &st->frames[k], width);
}

static void
text_header(struct leakgate_buf *b,
            const struct leakgate_profdiff *d,
            const struct sums *s)
{
    char num[32], objs[32];

    if (s->grown == 0)
        leakgate_buf__puts(b, "leakgate diff: no stack grew\n");
    else
        leakgate_buf__printf(b, "leakgate diff: %s B %s in %s %s by %zu %s\n",
                             leakgate_util__group_signed(num, s->grown_bytes),
                             d->before_name ? "retained" : "live",
                             leakgate_util__group_signed(objs, s->grown_objs),
                             plural(s->grown_objs, "object", "objects"),
                             s->grown, s->grown == 1 ? "stack" : "stacks");
    if (d->before_name)
        leakgate_buf__printf(b, "  from %s\n  to   %s\n", d->before_name,
                             d->after_name);
    else
        leakgate_buf__printf(b,
                             "  profile: %s (no base: every live stack "
                             "counts)\n",
                             d->after_name);
}

static void
text_measured(struct leakgate_buf *b, const struct leakgate_profdiff *d)
{
    char num[32];

    if (d->sample_period <= 1)
        leakgate_buf__puts(b, "  measured: exact (heap_v2/1: every "
                              "allocation sampled)\n");
    else
        leakgate_buf__printf(
            b,
            "  measured: sampled (heap_v2/%" PRIu64
            ": one sample per %s bytes allocated on "
            "average); numbers are estimates scaled as "
            "jeprof does, small leaks can be missed\n",
            d->sample_period,
            leakgate_util__group_signed(num, (int64_t)d->sample_period));
    if (d->binary && *d->binary)
        leakgate_buf__printf(b, "  binary: %s (%s%s)\n", d->binary,
                             d->build_id && *d->build_id ? "build-id "
                                                         : "no build-id",
                             d->build_id ? d->build_id : "");
}

static void
text_trailer(struct leakgate_buf *b,
             const struct leakgate_profdiff *d,
             const struct sums *s)
{
    char num[32], objs[32];

    if (s->freed)
        leakgate_buf__printf(b,
                             "  also changed: %s B in %s %s freed by %zu %s "
                             "(allocated before the first profile)\n",
                             leakgate_util__group_signed(num, -s->freed_bytes),
                             leakgate_util__group_signed(objs, -s->freed_objs),
                             plural(s->freed_objs, "object", "objects"),
                             s->freed, s->freed == 1 ? "stack" : "stacks");
    if (d->focus)
        leakgate_buf__printf(
            b,
            "  focus /%s/: %zu growing %s (%s B) did not "
            "match\n",
            d->focus, d->unfocused_stacks,
            d->unfocused_stacks == 1 ? "stack" : "stacks",
            leakgate_util__group_signed(num, d->unfocused_bytes));
    if (s->folded)
        leakgate_buf__printf(b,
                             "  folded: %zu %s under %g of the growth (%s B "
                             "in all); lower --nodefraction to list %s\n",
                             s->folded, s->folded == 1 ? "stack" : "stacks",
                             d->nodefraction,
                             leakgate_util__group_signed(num, s->folded_bytes),
                             s->folded == 1 ? "it" : "them");
    for (size_t i = 0; i < d->nnotes; i++)
        leakgate_buf__printf(b, "  note: %s\n", d->notes[i]);
    text_measured(b, d);
}

char *
leakgate_profdiff__text(const struct leakgate_profdiff *d)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    struct sums s;
    size_t nth = 0;

    sum_up(&s, d);
    text_header(&b, d, &s);
    for (size_t i = 0; i < d->nstacks; i++) {
        if (listed(&s, &d->stacks[i]))
            text_stack(&b, &d->stacks[i], ++nth, s.listed);
    }
    text_trailer(&b, d, &s);
    return leakgate_buf__take(&b);
}

/* ---- JSON --------------------------------------------------------------- */

static void
jstr(struct leakgate_buf *b, const char *key, const char *s)
{
    leakgate_buf__printf(b, "\"%s\": ", key);
    if (!s) {
        leakgate_buf__puts(b, "null");
        return;
    }
    leakgate_buf__puts(b, "\"");
    leakgate_report__put_escaped(b, s, LEAKGATE_REPORT_ESC_JSON);
    leakgate_buf__puts(b, "\"");
}

static void
json_frame(struct leakgate_buf *b,
           const struct leakgate_frame *f,
           bool shown,
           bool last)
{
    leakgate_buf__puts(b, "        {");
    jstr(b, "function", f->function);
    leakgate_buf__puts(b, ", ");
    jstr(b, "file", f->file);
    if (f->line)
        leakgate_buf__printf(b, ", \"line\": %u, ", f->line);
    else
        leakgate_buf__puts(b, ", \"line\": null, ");
    jstr(b, "module", f->module);
    if (f->module)
        leakgate_buf__printf(b, ", \"offset\": \"0x%" PRIxPTR "\"",
                             f->module_offset);
    else
        leakgate_buf__puts(b, ", \"offset\": null");
    leakgate_buf__printf(
        b, ", \"inlined\": %s, \"pc\": \"0x%" PRIxPTR "\", \"shown\": %s}%s\n",
        f->inlined ? "true" : "false", f->pc, shown ? "true" : "false",
        last ? "" : ",");
}

static void
json_stack(struct leakgate_buf *b,
           const struct leakgate_vstack *st,
           bool is_listed,
           bool last)
{
    leakgate_buf__printf(b,
                         "    {\"bytes\": %" PRId64 ", \"objects\": %" PRId64
                         ", \"listed\": %s,\n     \"pcs\": [",
                         st->bytes, st->objs, is_listed ? "true" : "false");
    for (size_t k = 0; k < st->npcs; k++)
        leakgate_buf__printf(b, "%s\"0x%" PRIxPTR "\"", k ? ", " : "",
                             st->pcs[k]);
    if (!st->frames) {
        leakgate_buf__printf(b, "],\n     \"frames\": null}%s\n",
                             last ? "" : ",");
        return;
    }
    leakgate_buf__puts(b, "],\n     \"frames\": [\n");
    for (size_t k = 0; k < st->nframes; k++)
        json_frame(b, &st->frames[k], k >= st->shown_begin && k < st->shown_end,
                   k + 1 == st->nframes);
    leakgate_buf__printf(b, "     ]}%s\n", last ? "" : ",");
}

static void
json_summary(struct leakgate_buf *b,
             const struct leakgate_profdiff *d,
             const struct sums *s)
{
    leakgate_buf__printf(
        b,
        "  \"summary\": {\"grown_bytes\": %" PRId64
        ", \"grown_objects\": %" PRId64 ", \"grown_stacks\": %zu, "
        "\"listed_stacks\": %zu, \"folded_stacks\": %zu, "
        "\"folded_bytes\": %" PRId64
        ",\n              \"freed_bytes\": %" PRId64
        ", \"freed_objects\": %" PRId64 ", \"freed_stacks\": %zu, "
        "\"unfocused_stacks\": %zu, \"unfocused_bytes\": %" PRId64 "},\n",
        s->grown_bytes, s->grown_objs, s->grown, s->listed, s->folded,
        s->folded_bytes, s->freed_bytes, s->freed_objs, s->freed,
        d->unfocused_stacks, d->unfocused_bytes);
}

static void
json_head(struct leakgate_buf *b, const struct leakgate_profdiff *d)
{
    leakgate_buf__puts(b, "{\n  \"format\": \"leakgate-diff\",\n  "
                          "\"version\": 1,\n  ");
    jstr(b, "leakgate_version", LEAKGATE_VERSION);
    leakgate_buf__puts(b, ",\n  ");
    jstr(b, "before", d->before_name);
    leakgate_buf__puts(b, ",\n  ");
    jstr(b, "after", d->after_name);
    leakgate_buf__printf(
        b, ",\n  \"sample_period\": %" PRIu64 ",\n  \"exact\": %s,\n  ",
        d->sample_period, d->sample_period <= 1 ? "true" : "false");
    jstr(b, "binary", d->binary);
    leakgate_buf__puts(b, ",\n  ");
    jstr(b, "build_id", d->build_id);
    leakgate_buf__puts(b, ",\n  ");
    jstr(b, "focus", d->focus);
    leakgate_buf__printf(b, ",\n  \"nodefraction\": %g,\n", d->nodefraction);
}

char *
leakgate_profdiff__json(const struct leakgate_profdiff *d)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    struct sums s;

    sum_up(&s, d);
    json_head(&b, d);
    json_summary(&b, d, &s);
    leakgate_buf__puts(&b, "  \"notes\": [");
    for (size_t i = 0; i < d->nnotes; i++) {
        leakgate_buf__puts(&b, i ? ", \"" : "\"");
        leakgate_report__put_escaped(&b, d->notes[i], LEAKGATE_REPORT_ESC_JSON);
        leakgate_buf__puts(&b, "\"");
    }
    leakgate_buf__puts(&b, "],\n  \"stacks\": [\n");
    for (size_t i = 0; i < d->nstacks; i++)
        json_stack(&b, &d->stacks[i], listed(&s, &d->stacks[i]),
                   i + 1 == d->nstacks);
    leakgate_buf__puts(&b, "  ]\n}\n");
    return leakgate_buf__take(&b);
}

/* ---- DOT ---------------------------------------------------------------- */

static int
dot_title(struct leakgate_buf *title,
          struct leakgate_buf *focus,
          const struct leakgate_profdiff *d)
{
    if (d->before_name)
        leakgate_buf__printf(title, "leakgate diff: growth from %s to %s",
                             leakgate_util__base_name(d->before_name),
                             leakgate_util__base_name(d->after_name));
    else
        leakgate_buf__printf(title, "leakgate diff: live in %s",
                             leakgate_util__base_name(d->after_name));
    if (d->sample_period > 1)
        leakgate_buf__printf(title, " (sampled: estimates)");
    if (d->focus)
        leakgate_buf__printf(focus, "focus: /%s/", d->focus);
    else
        leakgate_buf__puts(focus, "");
    if (title->failed || focus->failed)
        return leakgate_error__set(LEAKGATE_ENOMEM, "graph title");
    return 0;
}

int
leakgate_profdiff__dot(char **out, const struct leakgate_profdiff *d)
{
    struct leakgate_graph_opts o = LEAKGATE_GRAPH_OPTS_INIT;
    struct leakgate_buf title = LEAKGATE_BUF_INIT, focus = LEAKGATE_BUF_INIT;
    struct leakgate_graph_stack *gs;
    const char *notes[1];
    size_t n = 0;
    int rc;

    *out = NULL;
    gs = leakgate_util__calloc(d->nstacks ? d->nstacks : 1, sizeof *gs);
    rc = gs ? dot_title(&title, &focus, d)
            : leakgate_error__set(LEAKGATE_ENOMEM, "graph stacks");
    for (size_t i = 0; gs && rc == 0 && i < d->nstacks; i++) {
        const struct leakgate_vstack *st = &d->stacks[i];

        /* A stack without frames adds to the total, not to the nodes. */
        if (st->bytes <= 0)
            continue;
        gs[n++] = (struct leakgate_graph_stack){
            st->frames ? st->frames + st->shown_begin : NULL,
            st->frames ? st->shown_end - st->shown_begin : 0, st->bytes,
            st->objs};
    }
    if (rc == 0) {
        notes[0] = focus.ptr;
        o.nodefraction = d->nodefraction;
        o.edgefraction = d->edgefraction;
        o.title = title.ptr;
        o.notes = notes;
        o.nnotes = d->focus ? 1 : 0;
        rc = leakgate_graph__dot(out, NULL, gs, n, &o);
    }
    leakgate_buf__dispose(&title);
    leakgate_buf__dispose(&focus);
    leakgate_util__free(gs);
    return rc;
}

/* ---- lifetime ----------------------------------------------------------- */

int
leakgate_profdiff__note(struct leakgate_profdiff *d, const char *fmt, ...)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char **notes;
    va_list ap;

    va_start(ap, fmt);
    leakgate_buf__vprintf(&b, fmt, ap);
    va_end(ap);
    notes = leakgate_util__realloc(d->notes, (d->nnotes + 1) * sizeof *notes);
    if (notes)
        d->notes = notes;
    notes = notes ? &d->notes[d->nnotes] : NULL;
    if (notes)
        *notes = leakgate_buf__take(&b);
    leakgate_buf__dispose(&b);
    if (!notes || !*notes)
        return leakgate_error__set(LEAKGATE_ENOMEM, "note");
    d->nnotes++;
    return 0;
}

void
leakgate_profdiff__free(struct leakgate_profdiff *d)
{
    if (!d)
        return;
    for (size_t i = 0; d->stacks && i < d->nstacks; i++) {
        leakgate_util__free(d->stacks[i].pcs);
        leakgate_util__free(d->stacks[i].frames);
        leakgate_util__free(d->stacks[i].threads);
    }
    leakgate_util__free(d->stacks);
    for (size_t i = 0; i < d->nnotes; i++)
        leakgate_util__free(d->notes[i]);
    leakgate_util__free(d->notes);
    leakgate_util__free(d);
}
