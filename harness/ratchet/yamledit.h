/* SPDX-License-Identifier: MIT */
/*
 * yamledit: surgical edits of a YAML text.  Adapter (libyaml) under the
 * thresholds writer: it parses the text once more to learn where every
 * node lies (byte offsets), and turns "set this value", "add this key",
 * "append this item", "remove this item" into byte-range edits that are
 * applied in one pass.  Everything outside the edited ranges -- comments,
 * blank lines, quoting, key order, unrelated entries -- is copied byte for
 * byte.  Added text follows the file's conventions: the indentation of the
 * collection it joins (the file's indentation step for new levels), block
 * or flow style as the collection is written, and CRLF line ends when the
 * file uses them.
 *
 * The caller validates the document first (config.c); this module assumes
 * a well-formed file without anchors or tags.
 */
#ifndef LEAKGATE_YAMLEDIT_H
#define LEAKGATE_YAMLEDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

enum leakgate_ynode_kind {
    LEAKGATE_YNODE_SCALAR,
    LEAKGATE_YNODE_SEQ,
    LEAKGATE_YNODE_MAP,
};

/* A node of a parsed layout, or of a fragment to insert.  A mapping keeps
 * keys and values alternately in items. */
struct leakgate_ynode {
    enum leakgate_ynode_kind kind;
    bool flow;    /* a flow collection ([...], {...}); fragments: render
                     so even in block context */
    bool plain;   /* scalar in plain style */
    size_t start; /* layout: byte offset where the node starts (a block
                     sequence: its first '-') */
    size_t end;   /* layout: byte offset just past its last character */
    size_t col;   /* layout: byte column of start within its line */
    char *text;   /* layout scalar: its value; fragment scalar: YAML source */
    struct leakgate_ynode *items;
    size_t n, cap;
    struct leakgate_ynode *parent; /* layout: valid while parsing */
    bool failed;                   /* fragment: an allocation failed */
};

/* Where everything lies in one YAML text (borrowed, must outlive it). */
struct leakgate_ylayout {
    const char *text;
    size_t len;
    struct leakgate_ynode root; /* a sequence holding the document node */
    bool crlf;                  /* the file's first line ends in CRLF */
    size_t step;                /* indentation step of the file [2] */
};

/*
 * Parse text into a layout.  Returns 0, LEAKGATE_ECONFIG ("NAME:L:C:
 * YAML syntax error ...") or LEAKGATE_ENOMEM.  Free with
 * leakgate_yamledit__layout_free (also after a failure).
 */
int leakgate_yamledit__layout(struct leakgate_ylayout *out,
                              const char *text,
                              size_t len,
                              const char *name);
void leakgate_yamledit__layout_free(struct leakgate_ylayout *lay);

/* The document's top node, or NULL for an empty document.  Cannot fail. */
const struct leakgate_ynode *
leakgate_yamledit__top(const struct leakgate_ylayout *lay);

/* The value of `key` in a mapping (NULL when absent or map is not a
 * mapping); *pair_out (may be NULL) gets the pair's index.  Cannot fail. */
const struct leakgate_ynode *leakgate_yamledit__get(
    const struct leakgate_ynode *map, const char *key, size_t *pair_out);

/* ---- edits ----------------------------------------------------------- */

struct leakgate_yedit {
    size_t at;  /* byte offset */
    size_t del; /* bytes removed from at */
    char *text; /* inserted at at (owned; "\n" line ends) */
    size_t seq; /* order of creation, for insertions at one offset */
};

/* A set of edits on one layout.  A failed allocation sets `failed`, an
 * inconsistency `broken`; apply reports them. */
struct leakgate_yedits {
    const struct leakgate_ylayout *lay;
    struct leakgate_yedit *v;
    size_t n, cap;
    bool failed;        /* an allocation failed */
    const char *broken; /* the caller found the layout inconsistent */
    bool eof_nl;        /* a line break was added after the last line */
};

void leakgate_yamledit__edits_init(struct leakgate_yedits *e,
                                   const struct leakgate_ylayout *lay);
void leakgate_yamledit__edits_dispose(struct leakgate_yedits *e);

/* Replace a scalar's source with `source` (YAML text). */
void leakgate_yamledit__set_scalar(struct leakgate_yedits *e,
                                   const struct leakgate_ynode *scalar,
                                   const char *source);

/* Add `key_source: value` at the end of a mapping (fragment value; it is
 * consumed). */
void leakgate_yamledit__map_add(struct leakgate_yedits *e,
                                const struct leakgate_ynode *map,
                                const char *key_source,
                                struct leakgate_ynode *value);

/* Append an item (fragment, consumed) to a sequence. */
void leakgate_yamledit__seq_add(struct leakgate_yedits *e,
                                const struct leakgate_ynode *seq,
                                struct leakgate_ynode *item);

/* Replace the null value of pair `pair` of `map` (`key:` or `key: ~`)
 * with a collection (fragment, consumed). */
void leakgate_yamledit__set_null(struct leakgate_yedits *e,
                                 const struct leakgate_ynode *map,
                                 size_t pair,
                                 struct leakgate_ynode *value);

/* Remove pair `index` of a mapping, or item `index` of a sequence, with
 * its lines (block style) or its separator (flow style).  To remove
 * several elements of one collection, use leakgate_yamledit__remove_many. */
void leakgate_yamledit__remove(struct leakgate_yedits *e,
                               const struct leakgate_ynode *coll,
                               size_t index);

/* Remove every element i of a collection with drop[i] set (one call per
 * collection: in flow style the separators of neighbouring elements are
 * shared).  Kept elements are not touched, so they may be edited too. */
void leakgate_yamledit__remove_many(struct leakgate_yedits *e,
                                    const struct leakgate_ynode *coll,
                                    const bool *drop);

/*
 * Apply the edits to the layout's text.  *out (NUL-terminated, the
 * caller's) and *len_out receive the new text.  Returns 0,
 * LEAKGATE_ENOMEM, or LEAKGATE_ERROR when two edits overlap or `broken`
 * is set (a bug in the caller).
 */
int leakgate_yamledit__apply(char **out,
                             size_t *len_out,
                             const struct leakgate_yedits *e);

/* ---- fragments --------------------------------------------------------- */

/* New fragment nodes; NULL on ENOMEM.  A scalar's source is copied. */
struct leakgate_ynode *leakgate_yamledit__frag(enum leakgate_ynode_kind kind,
                                               const char *source);
/* Add `key: value` to a fragment map / `item` to a fragment sequence; the
 * child is consumed (NULL children mark the parent failed). */
void leakgate_yamledit__frag_put(struct leakgate_ynode *map,
                                 const char *key_source,
                                 struct leakgate_ynode *value);
void leakgate_yamledit__frag_push(struct leakgate_ynode *seq,
                                  struct leakgate_ynode *item);
void leakgate_yamledit__frag_free(struct leakgate_ynode *frag);

/* Append s as a YAML scalar: plain when that reads back as the same
 * string, else double- or single-quoted. */
void leakgate_yamledit__put_scalar(struct leakgate_buf *b, const char *s);

/* Append a size: whole KiB/MiB/GiB with the unit ("4 KiB"), else bytes. */
void leakgate_yamledit__put_size(struct leakgate_buf *b, uint64_t bytes);

#endif
