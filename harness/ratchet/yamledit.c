/* SPDX-License-Identifier: MIT */
/*
 * yamledit: byte-exact edits of a YAML text (see yamledit.h).  Adapter:
 * the second module, after config.c, that includes yaml.h -- config reads
 * what a thresholds file means, this one where it is written.
 *
 * libyaml marks give lines and columns in characters; the layout turns
 * them into byte offsets with a table of line starts.  A scalar or flow
 * collection ends at its end mark; a block collection ends where its last
 * child does (libyaml puts a block's end mark on the next token, which may
 * be lines further down, past comments that belong to what follows).
 * Edits never overlap by construction; apply() checks it anyway.
 */
#include "yamledit.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "error.h"
#include "heap.h"

struct builder {
    struct leakgate_ylayout *lay;
    const char *name;
    size_t *lines; /* byte offset of each line start */
    size_t nlines;
    struct leakgate_ynode *open; /* innermost open collection */
};

/* ---- layout ---------------------------------------------------------- */

static int
index_lines(struct builder *bd)
{
    const char *t = bd->lay->text;
    size_t n = 1;

    for (size_t i = 0; i < bd->lay->len; i++)
        n += t[i] == '\n';
    bd->lines = leakgate_util__calloc(n, sizeof *bd->lines);
    if (!bd->lines)
        return leakgate_error__set(LEAKGATE_ENOMEM, "%s: out of memory",
                                   bd->name);
    bd->nlines = 1;
    for (size_t i = 0; i < bd->lay->len; i++) {
        if (t[i] == '\n')
            bd->lines[bd->nlines++] = i + 1;
    }
    return 0;
}

/* Byte offset of a libyaml mark (0-based line, column in characters). */
static size_t
offset_of(const struct builder *bd, const yaml_mark_t *m)
{
    const char *t = bd->lay->text;
    size_t off, cols = m->column;

    if (m->line >= bd->nlines)
        return bd->lay->len;
    off = bd->lines[m->line];
    while (cols > 0 && off < bd->lay->len && t[off] != '\n') {
        off++;
        while (off < bd->lay->len && ((unsigned char)t[off] & 0xC0) == 0x80)
            off++;
        cols--;
    }
    return off;
}

static struct leakgate_ynode *
append_child(struct leakgate_ynode *p)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 4;
        struct leakgate_ynode *items =
            leakgate_util__realloc(p->items, cap * sizeof *items);

        if (!items)
            return NULL;
        p->items = items;
        p->cap = cap;
    }
    memset(&p->items[p->n], 0, sizeof p->items[p->n]);
    return &p->items[p->n++];
}

static int
on_node(struct builder *bd, const yaml_event_t *ev)
{
    struct leakgate_ynode *nd = append_child(bd->open);

    if (!nd)
        return leakgate_error__set(LEAKGATE_ENOMEM, "%s: out of memory",
                                   bd->name);
    nd->start = offset_of(bd, &ev->start_mark);
    nd->col = nd->start -
              bd->lines[ev->start_mark.line < bd->nlines ? ev->start_mark.line
                                                         : bd->nlines - 1];
    nd->parent = bd->open;
    if (ev->type == YAML_SCALAR_EVENT) {
        nd->kind = LEAKGATE_YNODE_SCALAR;
        nd->end = offset_of(bd, &ev->end_mark);
        nd->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        nd->text = leakgate_util__strndup((const char *)ev->data.scalar.value,
                                          ev->data.scalar.length);
        return nd->text ? 0
                        : leakgate_error__set(LEAKGATE_ENOMEM,
                                              "%s: out of memory", bd->name);
    }
    if (ev->type == YAML_MAPPING_START_EVENT) {
        nd->kind = LEAKGATE_YNODE_MAP;
        nd->flow = ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
    } else {
        nd->kind = LEAKGATE_YNODE_SEQ;
        nd->flow = ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
    }
    bd->open = nd;
    return 0;
}

static void
on_close(struct builder *bd, const yaml_event_t *ev)
{
    struct leakgate_ynode *nd = bd->open;

    assert(nd && nd->parent);
    if (nd->flow)
        nd->end = offset_of(bd, &ev->end_mark);
    else
        nd->end = nd->n ? nd->items[nd->n - 1].end : nd->start;
    bd->open = nd->parent;
}

static int
on_event(struct builder *bd, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: return on_node(bd, ev);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: on_close(bd, ev); return 0;
    case YAML_ALIAS_EVENT:
        return leakgate_error__set(
            LEAKGATE_ECONFIG, "%s:%zu:%zu: aliases are not supported", bd->name,
            ev->start_mark.line + 1, ev->start_mark.column + 1);
    default: return 0;
    }
}

static int
parse_events(struct builder *bd)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    bool done = false;
    int rc = 0;

    /* libyaml allocates on leakgate's heap (heap.h, "Diverted"). */
    leakgate_heap__divert(true);
    if (!yaml_parser_initialize(&parser)) {
        leakgate_heap__divert(false);
        return leakgate_error__set(LEAKGATE_ENOMEM, "%s: out of memory",
                                   bd->name);
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)bd->lay->text,
                                 bd->lay->len);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    while (rc == 0 && !done) {
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = leakgate_error__set(
                LEAKGATE_ECONFIG, "%s:%zu:%zu: YAML syntax error: %s", bd->name,
                parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                parser.problem ? parser.problem : "unknown problem");
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(bd, &ev);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    leakgate_heap__divert(false);
    return rc;
}

/* The indentation step: how far the first nested block collection of the
 * top mapping is indented. */
static size_t
find_step(const struct leakgate_ylayout *lay)
{
    const struct leakgate_ynode *top = leakgate_yamledit__top(lay);

    for (size_t i = 1; top && top->kind == LEAKGATE_YNODE_MAP && i < top->n;
         i += 2) {
        const struct leakgate_ynode *v = &top->items[i];

        if (v->kind != LEAKGATE_YNODE_SCALAR && !v->flow && v->col > top->col)
            return v->col - top->col;
    }
    return 2;
}

int
leakgate_yamledit__layout(struct leakgate_ylayout *out,
                          const char *text,
                          size_t len,
                          const char *name)
{
    struct builder bd;
    const char *nl;
    int rc;

    memset(out, 0, sizeof *out);
    out->text = text;
    out->len = len;
    out->root.kind = LEAKGATE_YNODE_SEQ;
    memset(&bd, 0, sizeof bd);
    bd.lay = out;
    bd.name = name;
    bd.open = &out->root;
    rc = index_lines(&bd);
    if (rc == 0)
        rc = parse_events(&bd);
    leakgate_util__free(bd.lines);
    nl = len ? memchr(text, '\n', len) : NULL;
    out->crlf = nl && nl > text && nl[-1] == '\r';
    out->step = rc == 0 ? find_step(out) : 2;
    return rc;
}

static void
node_dispose(struct leakgate_ynode *nd)
{
    for (size_t i = 0; i < nd->n; i++)
        node_dispose(&nd->items[i]);
    leakgate_util__free(nd->items);
    leakgate_util__free(nd->text);
}

void
leakgate_yamledit__layout_free(struct leakgate_ylayout *lay)
{
    if (!lay)
        return;
    node_dispose(&lay->root);
    memset(&lay->root, 0, sizeof lay->root);
}

const struct leakgate_ynode *
leakgate_yamledit__top(const struct leakgate_ylayout *lay)
{
    return lay->root.n ? &lay->root.items[0] : NULL;
}

const struct leakgate_ynode *
leakgate_yamledit__get(const struct leakgate_ynode *map,
                       const char *key,
                       size_t *pair_out)
{
    if (!map || map->kind != LEAKGATE_YNODE_MAP)
        return NULL;
    for (size_t i = 0; i + 1 < map->n; i += 2) {
        const struct leakgate_ynode *k = &map->items[i];

        if (k->kind == LEAKGATE_YNODE_SCALAR && strcmp(k->text, key) == 0) {
            if (pair_out)
                *pair_out = i / 2;
            return &map->items[i + 1];
        }
    }
    return NULL;
}
