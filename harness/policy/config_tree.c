/* SPDX-License-Identifier: MIT */
/*
 * config_tree: the thresholds file's first pass, the libyaml adapter (see
 * config_tree.h).  Translates libyaml's convention (1 on success, 0-based
 * problem marks) at each call site.
 */
#include "config_tree.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "error.h"
#include "heap.h"
#include "util.h"

static int fail_mark(const struct loader *ld,
                     const yaml_mark_t *mark,
                     int code,
                     const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));

int
leakgate_config__fail_node(const struct loader *ld,
                           const struct node *nd,
                           const char *fmt,
                           ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = leakgate_error__set_at(LEAKGATE_ECONFIG, ld->name, nd->line, nd->col,
                                fmt, ap);
    va_end(ap);
    return rc;
}

/* `code` at a libyaml mark (0-based line and column). */
static int
fail_mark(const struct loader *ld,
          const yaml_mark_t *mark,
          int code,
          const char *fmt,
          ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = leakgate_error__set_at(code, ld->name, (unsigned int)mark->line + 1,
                                (unsigned int)mark->column + 1, fmt, ap);
    va_end(ap);
    return rc;
}

int
leakgate_config__fail_at(const struct loader *ld,
                         unsigned int line,
                         unsigned int col,
                         int code,
                         const char *fmt,
                         ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = leakgate_error__set_at(code, ld->name, line, col, fmt, ap);
    va_end(ap);
    return rc;
}

int
leakgate_config__no_memory(const struct loader *ld)
{
    return leakgate_error__set(LEAKGATE_ENOMEM, "%s: out of memory", ld->name);
}

void
leakgate_config__tree_dispose(struct node *nd)
{
    for (size_t i = 0; i < nd->n; i++)
        leakgate_config__tree_dispose(&nd->items[i]);
    leakgate_util__free(nd->items);
    leakgate_util__free(nd->text);
}

/* Append a child to the open collection; NULL on ENOMEM.  Siblings are
 * appended only after the previous child closed, so pointers to open
 * nodes stay valid although items may move. */
static struct node *
append(struct loader *ld, enum node_kind kind, const yaml_mark_t *mark)
{
    struct node *p = ld->open, *nd;

    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 4;
        struct node *items =
            leakgate_util__realloc(p->items, cap * sizeof *items);

        if (!items)
            return NULL;
        p->items = items;
        p->cap = cap;
    }
    nd = &p->items[p->n++];
    memset(nd, 0, sizeof *nd);
    nd->kind = kind;
    nd->line = (unsigned int)mark->line + 1;
    nd->col = (unsigned int)mark->column + 1;
    nd->parent = p;
    return nd;
}

/* Anchors and tags would be silently meaningless here: reject them. */
static int
check_props(const struct loader *ld,
            const yaml_event_t *ev,
            const yaml_char_t *anchor,
            const yaml_char_t *tag)
{
    if (anchor)
        return fail_mark(ld, &ev->start_mark, LEAKGATE_ECONFIG,
                         "anchors and aliases are not supported (&%s)",
                         (const char *)anchor);
    if (tag)
        return fail_mark(ld, &ev->start_mark, LEAKGATE_ECONFIG,
                         "tags are not supported (%s)", (const char *)tag);
    return 0;
}

static int
on_scalar(struct loader *ld, const yaml_event_t *ev)
{
    const char *value = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    struct node *nd;
    int rc;

    rc = check_props(ld, ev, ev->data.scalar.anchor, ev->data.scalar.tag);
    if (rc < 0)
        return rc;
    if (memchr(value, '\0', len))
        return fail_mark(ld, &ev->start_mark, LEAKGATE_ECONFIG,
                         "NUL characters are not allowed");
    nd = append(ld, NODE_SCALAR, &ev->start_mark);
    if (!nd)
        return leakgate_config__no_memory(ld);
    nd->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    nd->text = leakgate_util__strndup(value, len);
    return nd->text ? 0 : leakgate_config__no_memory(ld);
}

static int
on_open(struct loader *ld, const yaml_event_t *ev)
{
    bool is_map = ev->type == YAML_MAPPING_START_EVENT;
    struct node *nd;
    int rc;

    if (is_map)
        rc = check_props(ld, ev, ev->data.mapping_start.anchor,
                         ev->data.mapping_start.tag);
    else
        rc = check_props(ld, ev, ev->data.sequence_start.anchor,
                         ev->data.sequence_start.tag);
    if (rc < 0)
        return rc;
    if (ld->depth >= ld->max_depth)
        return fail_mark(ld, &ev->start_mark, LEAKGATE_ETOOBIG,
                         "nesting deeper than %zu levels", ld->max_depth);
    nd = append(ld, is_map ? NODE_MAP : NODE_SEQ, &ev->start_mark);
    if (!nd)
        return leakgate_config__no_memory(ld);
    ld->open = nd;
    ld->depth++;
    return 0;
}

static int
on_event(struct loader *ld, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        ld->ndocs++;
        if (ld->ndocs > 1)
            return fail_mark(ld, &ev->start_mark, LEAKGATE_ECONFIG,
                             "multiple documents are not supported");
        return 0;
    case YAML_ALIAS_EVENT:
        return fail_mark(ld, &ev->start_mark, LEAKGATE_ECONFIG,
                         "aliases are not supported (*%s)",
                         (const char *)ev->data.alias.anchor);
    case YAML_SCALAR_EVENT: return on_scalar(ld, ev);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: return on_open(ld, ev);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        /* libyaml balances start and end events. */
        assert(ld->open && ld->open->parent);
        ld->open = ld->open->parent;
        ld->depth--;
        return 0;
    default: return 0;
    }
}

/* libyaml's reader reports a byte offset, not a mark: count lines and
 * characters (UTF-8 lead bytes) up to it. */
static yaml_mark_t
offset_mark(const char *text, size_t len, size_t offset)
{
    yaml_mark_t m = {offset, 0, 0};

    for (size_t i = 0; i < offset && i < len; i++) {
        unsigned char c = (unsigned char)text[i];

        if (c == '\n' || (c == '\r' && (i + 1 == len || text[i + 1] != '\n'))) {
            m.line++;
            m.column = 0;
        } else if ((c & 0xC0) != 0x80 && c != '\r') {
            m.column++;
        }
    }
    return m;
}

static int
yaml_failure(const struct loader *ld, const yaml_parser_t *p)
{
    const char *problem = p->problem ? p->problem : "unknown problem";
    yaml_mark_t m;

    if (p->error == YAML_MEMORY_ERROR)
        return leakgate_config__no_memory(ld);
    if (p->error == YAML_READER_ERROR) {
        m = offset_mark(ld->text, ld->len, p->problem_offset);
        if (p->problem_value == -1) /* no offending value to show */
            return fail_mark(ld, &m, LEAKGATE_ECONFIG,
                             "not valid UTF-8 text: %s", problem);
        return fail_mark(ld, &m, LEAKGATE_ECONFIG,
                         "not valid UTF-8 text: %s (#x%X)", problem,
                         (unsigned int)p->problem_value);
    }
    if (p->context)
        return fail_mark(ld, &p->problem_mark, LEAKGATE_ECONFIG,
                         "YAML syntax error: %s (%s at line %zu)", problem,
                         p->context, p->context_mark.line + 1);
    return fail_mark(ld, &p->problem_mark, LEAKGATE_ECONFIG,
                     "YAML syntax error: %s", problem);
}

int
leakgate_config__tree(struct loader *ld)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    bool done = false;
    int rc = 0;

    /* libyaml allocates on leakgate's heap (heap.h, "Diverted"). */
    leakgate_heap__divert(true);
    if (!yaml_parser_initialize(&parser)) {
        leakgate_heap__divert(false);
        return leakgate_config__no_memory(ld);
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)ld->text,
                                 ld->len);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    while (rc == 0 && !done) {
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = yaml_failure(ld, &parser);
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(ld, &ev);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    leakgate_heap__divert(false);
    return rc;
}
