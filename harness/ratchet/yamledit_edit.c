/* SPDX-License-Identifier: MIT */
/*
 * yamledit_edit: the edit half of yamledit (see yamledit.h): fragments of
 * new YAML, how they are rendered where they go (block lines at the
 * indentation of the collection they join, or flow text before its
 * closing bracket), and applying a set of byte-range edits in one pass.
 * No libyaml here: it works on the layout yamledit.c produced.
 */
#include "yamledit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"

/* ---- scalars --------------------------------------------------------- */

static bool
plain_ok(const char *s)
{
    static const char *const words[] = {"y",   "n",    "yes",   "no",  "on",
                                        "off", "true", "false", "null"};

    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (const char *p = s; *p; p++) {
        char c = *p;

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' ||
              c == '-'))
            return false;
    }
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strcasecmp(s, words[i]) == 0)
            return false;
    }
    return true;
}

void
leakgate_yamledit__put_scalar(struct leakgate_buf *b, const char *s)
{
    bool control = false, special = false;

    if (plain_ok(s)) {
        leakgate_buf__puts(b, s);
        return;
    }
    for (const char *p = s; *p; p++) {
        control |= (unsigned char)*p < 0x20 || *p == 0x7f;
        special |= *p == '\\' || *p == '"';
    }
    if (!control && special) {
        leakgate_buf__puts(b, "'");
        for (const char *p = s; *p; p++)
            leakgate_buf__puts(b, *p == '\'' ? "''" : (char[]){*p, '\0'});
        leakgate_buf__puts(b, "'");
        return;
    }
    leakgate_buf__puts(b, "\"");
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;

        if (c == '"' || c == '\\')
            leakgate_buf__printf(b, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            leakgate_buf__printf(b, "\\x%02x", c);
        else
            leakgate_buf__put(b, p, 1);
    }
    leakgate_buf__puts(b, "\"");
}

void
leakgate_yamledit__put_size(struct leakgate_buf *b, uint64_t bytes)
{
    static const struct {
        uint64_t mult;
        const char *unit;
    } units[] = {{(uint64_t)1 << 30, "GiB"},
                 {(uint64_t)1 << 20, "MiB"},
                 {(uint64_t)1 << 10, "KiB"}};

    for (size_t i = 0; bytes > 0 && i < sizeof units / sizeof units[0]; i++) {
        if (bytes % units[i].mult == 0) {
            leakgate_buf__printf(b, "%llu %s",
                                 (unsigned long long)(bytes / units[i].mult),
                                 units[i].unit);
            return;
        }
    }
    leakgate_buf__printf(b, "%llu", (unsigned long long)bytes);
}

/* ---- fragments ------------------------------------------------------- */

struct leakgate_ynode *
leakgate_yamledit__frag(enum leakgate_ynode_kind kind, const char *source)
{
    struct leakgate_ynode *nd = leakgate_util__calloc(1, sizeof *nd);

    if (!nd)
        return NULL;
    nd->kind = kind;
    if (kind == LEAKGATE_YNODE_SCALAR) {
        nd->text = leakgate_util__strdup(source ? source : "");
        if (!nd->text) {
            leakgate_util__free(nd);
            return NULL;
        }
    }
    return nd;
}

static void
frag_dispose(struct leakgate_ynode *nd)
{
    for (size_t i = 0; i < nd->n; i++)
        frag_dispose(&nd->items[i]);
    leakgate_util__free(nd->items);
    leakgate_util__free(nd->text);
}

void
leakgate_yamledit__frag_free(struct leakgate_ynode *frag)
{
    if (!frag)
        return;
    frag_dispose(frag);
    leakgate_util__free(frag);
}

/* Move *child into parent's items (the shell is freed). */
static void
adopt(struct leakgate_ynode *parent, struct leakgate_ynode *child)
{
    if (!child || parent->failed) {
        parent->failed = true;
        leakgate_yamledit__frag_free(child);
        return;
    }
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? parent->cap * 2 : 4;
        struct leakgate_ynode *items =
            leakgate_util__realloc(parent->items, cap * sizeof *items);

        if (!items) {
            parent->failed = true;
            leakgate_yamledit__frag_free(child);
            return;
        }
        parent->items = items;
        parent->cap = cap;
    }
    parent->failed |= child->failed;
    parent->items[parent->n++] = *child;
    leakgate_util__free(child);
}

void
leakgate_yamledit__frag_put(struct leakgate_ynode *map,
                            const char *key_source,
                            struct leakgate_ynode *value)
{
    struct leakgate_ynode *key =
        leakgate_yamledit__frag(LEAKGATE_YNODE_SCALAR, key_source);

    if (!key || !value) {
        map->failed = true;
        leakgate_yamledit__frag_free(key);
        leakgate_yamledit__frag_free(value);
        return;
    }
    adopt(map, key);
    adopt(map, value);
}

void
leakgate_yamledit__frag_push(struct leakgate_ynode *seq,
                             struct leakgate_ynode *item)
{
    adopt(seq, item);
}

/* ---- rendering ------------------------------------------------------- */

static void
emit_flow(struct leakgate_buf *b, const struct leakgate_ynode *nd)
{
    bool map = nd->kind == LEAKGATE_YNODE_MAP;

    if (nd->kind == LEAKGATE_YNODE_SCALAR) {
        leakgate_buf__puts(b, nd->text);
        return;
    }
    leakgate_buf__puts(b, map ? "{" : "[");
    for (size_t i = 0; i < nd->n; i += map ? 2 : 1) {
        leakgate_buf__puts(b, i ? ", " : "");
        emit_flow(b, &nd->items[i]);
        if (map) {
            leakgate_buf__puts(b, ": ");
            emit_flow(b, &nd->items[i + 1]);
        }
    }
    leakgate_buf__puts(b, map ? "}" : "]");
}

static bool
inline_form(const struct leakgate_ynode *nd)
{
    return nd->kind == LEAKGATE_YNODE_SCALAR || nd->flow || nd->n == 0;
}

static void emit_block(struct leakgate_buf *b,
                       const struct leakgate_ynode *nd,
                       size_t indent,
                       size_t step,
                       bool first_inline);

/* "key: value" or "key:" and the nested block, at indent. */
static void
emit_pair(struct leakgate_buf *b,
          const char *key,
          const struct leakgate_ynode *value,
          size_t indent,
          size_t step)
{
    leakgate_buf__puts(b, key);
    leakgate_buf__puts(b, ":");
    if (inline_form(value)) {
        leakgate_buf__puts(b, " ");
        emit_flow(b, value);
        leakgate_buf__puts(b, "\n");
        return;
    }
    leakgate_buf__puts(b, "\n");
    emit_block(b, value, indent + step, step, false);
}

/* A block collection at indent; with first_inline the first line's
 * indentation is already written (after "- "). */
static void
emit_block(struct leakgate_buf *b,
           const struct leakgate_ynode *nd,
           size_t indent,
           size_t step,
           bool first_inline)
{
    bool map = nd->kind == LEAKGATE_YNODE_MAP;

    for (size_t i = 0; i < nd->n; i += map ? 2 : 1) {
        if (i > 0 || !first_inline)
            leakgate_buf__printf(b, "%*s", (int)indent, "");
        if (map) {
            emit_pair(b, nd->items[i].text, &nd->items[i + 1], indent, step);
            continue;
        }
        leakgate_buf__puts(b, "- ");
        if (inline_form(&nd->items[i]) ||
            nd->items[i].kind == LEAKGATE_YNODE_SEQ) {
            emit_flow(b, &nd->items[i]);
            leakgate_buf__puts(b, "\n");
        } else {
            emit_block(b, &nd->items[i], indent + 2, step, true);
        }
    }
}

/* ---- edits ----------------------------------------------------------- */

void
leakgate_yamledit__edits_init(struct leakgate_yedits *e,
                              const struct leakgate_ylayout *lay)
{
    memset(e, 0, sizeof *e);
    e->lay = lay;
}

void
leakgate_yamledit__edits_dispose(struct leakgate_yedits *e)
{
    for (size_t i = 0; i < e->n; i++)
        leakgate_util__free(e->v[i].text);
    leakgate_util__free(e->v);
    e->v = NULL;
    e->n = e->cap = 0;
}

/* Record an edit; the text is taken from b (NULL b: no insertion). */
static void
add_edit(struct leakgate_yedits *e,
         size_t at,
         size_t del,
         struct leakgate_buf *b)
{
    char *text = b ? leakgate_buf__take(b) : NULL;

    if ((b && !text) || e->failed) {
        e->failed = true;
        leakgate_util__free(text);
        return;
    }
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 8;
        struct leakgate_yedit *v =
            leakgate_util__realloc(e->v, cap * sizeof *v);

        if (!v) {
            e->failed = true;
            leakgate_util__free(text);
            return;
        }
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n] = (struct leakgate_yedit){at, del, text, e->n};
    e->n++;
}

/* The offset just past the line holding the byte before pos (pos itself
 * when that byte ends a line). */
static size_t
line_after(const struct leakgate_ylayout *lay, size_t pos)
{
    const char *nl;

    if (pos > 0 && lay->text[pos - 1] == '\n')
        return pos;
    nl = pos < lay->len ? memchr(lay->text + pos, '\n', lay->len - pos) : NULL;
    return nl ? (size_t)(nl - lay->text) + 1 : lay->len;
}

static size_t
line_start(const struct leakgate_ylayout *lay, size_t pos)
{
    while (pos > 0 && lay->text[pos - 1] != '\n')
        pos--;
    return pos;
}

/* Insert block lines after the line ending at or after pos. */
static void
insert_lines(struct leakgate_yedits *e, size_t pos, struct leakgate_buf *b)
{
    const struct leakgate_ylayout *lay = e->lay;
    size_t at = line_after(lay, pos);
    struct leakgate_buf nl = LEAKGATE_BUF_INIT;

    if (at == lay->len && lay->len > 0 && lay->text[lay->len - 1] != '\n' &&
        !e->eof_nl) {
        /* The last line has no line break: give it one first. */
        leakgate_buf__puts(&nl, "\n");
        leakgate_buf__put(&nl, b->ptr ? b->ptr : "", b->len);
        nl.failed |= b->failed;
        leakgate_buf__dispose(b);
        add_edit(e, at, 0, &nl);
        e->eof_nl = true;
        return;
    }
    add_edit(e, at, 0, b);
}

void
leakgate_yamledit__set_scalar(struct leakgate_yedits *e,
                              const struct leakgate_ynode *scalar,
                              const char *source)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__puts(&b, source);
    add_edit(e, scalar->start, scalar->end - scalar->start, &b);
}

/* Flow collection: "[, ]item" just before its closing bracket. */
static void
flow_add(struct leakgate_yedits *e,
         const struct leakgate_ynode *coll,
         const char *key_source,
         const struct leakgate_ynode *value)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__puts(&b, coll->n ? ", " : "");
    if (key_source) {
        leakgate_buf__puts(&b, key_source);
        leakgate_buf__puts(&b, ": ");
    }
    emit_flow(&b, value);
    add_edit(e, coll->end - 1, 0, &b);
}

void
leakgate_yamledit__map_add(struct leakgate_yedits *e,
                           const struct leakgate_ynode *map,
                           const char *key_source,
                           struct leakgate_ynode *value)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    if (!value || value->failed) {
        e->failed = true;
    } else if (map->flow) {
        flow_add(e, map, key_source, value);
    } else {
        leakgate_buf__printf(&b, "%*s", (int)map->col, "");
        emit_pair(&b, key_source, value, map->col, e->lay->step);
        insert_lines(e, map->end, &b);
    }
    leakgate_yamledit__frag_free(value);
}

void
leakgate_yamledit__seq_add(struct leakgate_yedits *e,
                           const struct leakgate_ynode *seq,
                           struct leakgate_ynode *item)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    struct leakgate_ynode one = {.kind = LEAKGATE_YNODE_SEQ, .n = 1};

    if (!item || item->failed) {
        e->failed = true;
    } else if (seq->flow) {
        flow_add(e, seq, NULL, item);
    } else {
        one.items = item;
        emit_block(&b, &one, seq->col, e->lay->step, false);
        insert_lines(e, seq->end, &b);
    }
    leakgate_yamledit__frag_free(item);
}

void
leakgate_yamledit__set_null(struct leakgate_yedits *e,
                            const struct leakgate_ynode *map,
                            size_t pair,
                            struct leakgate_ynode *value)
{
    const struct leakgate_ynode *key = &map->items[2 * pair];
    const struct leakgate_ynode *val = &map->items[2 * pair + 1];
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    const char *colon;

    if (!value || value->failed) {
        e->failed = true;
    } else if (map->flow || value->flow) {
        emit_flow(&b, value);
        add_edit(e, val->start, val->end - val->start, &b);
    } else {
        /* "key: ~  # c" becomes "key:  # c", then the block below it. */
        colon = memchr(e->lay->text + key->end, ':', val->start - key->end);
        if (val->end > val->start && colon)
            add_edit(e, (size_t)(colon - e->lay->text) + 1,
                     val->end - (size_t)(colon - e->lay->text) - 1, NULL);
        emit_block(&b, value, key->col + e->lay->step, e->lay->step, false);
        insert_lines(e, val->end > key->end ? val->end : key->end, &b);
    }
    leakgate_yamledit__frag_free(value);
}

/* Start of item i of a block sequence: its '-'. */
static size_t
dash_of(const struct leakgate_ylayout *lay,
        const struct leakgate_ynode *seq,
        size_t i)
{
    size_t p = seq->items[i].start;

    if (i == 0)
        return seq->start;
    while (p > 0 && strchr(" \t\r\n", lay->text[p - 1]))
        p--;
    return p > 0 && lay->text[p - 1] == '-' ? p - 1 : seq->items[i].start;
}

/* [first, last) of element i: a pair (key to value) or an item. */
static void
element_span(const struct leakgate_ynode *coll,
             size_t i,
             size_t *first,
             size_t *last)
{
    if (coll->kind == LEAKGATE_YNODE_MAP) {
        *first = coll->items[2 * i].start;
        *last = coll->items[2 * i + 1].end;
    } else {
        *first = coll->items[i].start;
        *last = coll->items[i].end;
    }
}

void
leakgate_yamledit__remove(struct leakgate_yedits *e,
                          const struct leakgate_ynode *coll,
                          size_t index)
{
    const struct leakgate_ylayout *lay = e->lay;
    size_t count = coll->kind == LEAKGATE_YNODE_MAP ? coll->n / 2 : coll->n;
    size_t first, last, from, to;

    element_span(coll, index, &first, &last);
    if (coll->flow) {
        /* Take the separator after it, or else the one before it. */
        from = first;
        to = last;
        if (index + 1 < count)
            element_span(coll, index + 1, &to, &last);
        else if (index > 0)
            element_span(coll, index - 1, &first, &from);
        add_edit(e, from, to - from, NULL);
        return;
    }
    if (coll->kind == LEAKGATE_YNODE_SEQ)
        first = dash_of(lay, coll, index);
    from = line_start(lay, first);
    for (size_t p = from; p < first; p++) {
        if (lay->text[p] != ' ')
            from = first; /* something else shares the line: keep it */
    }
    add_edit(e, from, line_after(lay, last) - from, NULL);
}

static size_t
count_of(const struct leakgate_ynode *coll)
{
    return coll->kind == LEAKGATE_YNODE_MAP ? coll->n / 2 : coll->n;
}

/* Flow: one deletion per run of dropped elements, with the separator
 * after the run (or, for a run at the end, before it), so that the
 * deletions never touch a kept element (which may be edited too). */
static void
remove_flow_runs(struct leakgate_yedits *e,
                 const struct leakgate_ynode *coll,
                 const bool *drop)
{
    size_t n = count_of(coll), a = 0, from, to, skip;

    while (a < n) {
        size_t b = a;

        if (!drop[a]) {
            a++;
            continue;
        }
        while (b + 1 < n && drop[b + 1])
            b++;
        element_span(coll, a, &from, &skip);
        element_span(coll, b, &skip, &to);
        if (b + 1 < n)
            element_span(coll, b + 1, &to, &skip);
        else if (a > 0)
            element_span(coll, a - 1, &skip, &from);
        add_edit(e, from, to - from, NULL);
        a = b + 1;
    }
}

void
leakgate_yamledit__remove_many(struct leakgate_yedits *e,
                               const struct leakgate_ynode *coll,
                               const bool *drop)
{
    if (coll->flow) {
        remove_flow_runs(e, coll, drop);
        return;
    }
    for (size_t i = 0; i < count_of(coll); i++) {
        if (drop[i])
            leakgate_yamledit__remove(e, coll, i);
    }
}

static int
cmp_edit(const void *a, const void *b)
{
    const struct leakgate_yedit *x = a, *y = b;

    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Inserted text with the file's line ends. */
static void
put_text(struct leakgate_buf *b, const char *s, bool crlf)
{
    for (; s && *s; s++)
        leakgate_buf__puts(b, *s == '\n' && crlf ? "\r\n" : (char[]){*s, 0});
}

int
leakgate_yamledit__apply(char **out,
                         size_t *len_out,
                         const struct leakgate_yedits *e)
{
    const struct leakgate_ylayout *lay = e->lay;
    struct leakgate_yedit *v = NULL;
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    size_t cursor = 0;
    int rc = 0;

    *out = NULL;
    if (e->broken)
        return leakgate_error__set(LEAKGATE_ERROR, "%s", e->broken);
    if (e->failed)
        return leakgate_error__set(LEAKGATE_ENOMEM, "YAML edits");
    v = leakgate_util__calloc(e->n ? e->n : 1, sizeof *v);
    if (!v)
        return leakgate_error__set(LEAKGATE_ENOMEM, "YAML edits");
    memcpy(v, e->v, e->n * sizeof *v);
    qsort(v, e->n, sizeof *v, cmp_edit);
    for (size_t i = 0; i < e->n && rc == 0; i++) {
        if (v[i].at < cursor || v[i].at + v[i].del > lay->len) {
            rc = leakgate_error__set(
                LEAKGATE_ERROR, "overlapping YAML edits at byte %zu", v[i].at);
            break;
        }
        leakgate_buf__put(&b, lay->text + cursor, v[i].at - cursor);
        put_text(&b, v[i].text, lay->crlf);
        cursor = v[i].at + v[i].del;
    }
    leakgate_buf__put(&b, lay->text + cursor, lay->len - cursor);
    leakgate_util__free(v);
    if (rc == 0 && b.failed)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "YAML edits");
    *len_out = b.len;
    *out = rc == 0 ? leakgate_buf__take(&b) : NULL;
    leakgate_buf__dispose(&b);
    return rc == 0 && !*out ? leakgate_error__set(LEAKGATE_ENOMEM, "YAML") : rc;
}
