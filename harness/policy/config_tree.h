/* SPDX-License-Identifier: MIT */
/*
 * config_tree: the thresholds file's first pass (config.c is the second).
 * libyaml's event stream becomes a small tree of nodes that remember their
 * 1-based line and column; this pass enforces the structural limits
 * (nesting depth) and rejects what the format never uses (anchors,
 * aliases, tags, several documents).  The only file that includes yaml.h.
 */
#ifndef LEAKGATE_CONFIG_TREE_H
#define LEAKGATE_CONFIG_TREE_H

#include <stdbool.h>
#include <stddef.h>

enum node_kind { NODE_SCALAR, NODE_SEQ, NODE_MAP };

/* One YAML node.  A mapping keeps keys and values alternately in items. */
struct node {
    enum node_kind kind;
    unsigned int line, col; /* 1-based */
    char *text;             /* scalars: the value, NUL-terminated */
    bool plain;             /* scalars: plain style, so `~` means null */
    struct node *items;     /* collections: children */
    size_t n, cap;          /* children used / allocated */
    struct node *parent;    /* valid only while the node is open */
};

struct loader {
    const char *name;  /* FILE in messages */
    const char *text;  /* the input */
    size_t len;        /* its bytes */
    size_t max_depth;  /* collections open at once */
    size_t depth;      /* collections open now */
    size_t ndocs;      /* documents seen */
    struct node root;  /* a sequence holding the document's root node */
    struct node *open; /* innermost open collection */
};

/*
 * Parse ld->text into ld->root (a sequence holding the document's root
 * node).  Returns 0, LEAKGATE_ECONFIG (a YAML error or a construct the
 * format never uses, at its line:column), LEAKGATE_ETOOBIG (deeper than
 * ld->max_depth) or LEAKGATE_ENOMEM.  The tree is safe to dispose of
 * either way.
 */
int leakgate_config__tree(struct loader *ld);

/* Free nd's children and text (not nd itself).  Cannot fail. */
void leakgate_config__tree_dispose(struct node *nd);

/* LEAKGATE_ECONFIG with "FILE:LINE:COLUMN: message" at a node. */
int leakgate_config__fail_node(const struct loader *ld,
                               const struct node *nd,
                               const char *fmt,
                               ...) __attribute__((format(printf, 3, 4)));

/* `code` with "FILE:LINE:COLUMN: message", 1-based line and column. */
int leakgate_config__fail_at(const struct loader *ld,
                             unsigned int line,
                             unsigned int col,
                             int code,
                             const char *fmt,
                             ...) __attribute__((format(printf, 5, 6)));

/* LEAKGATE_ENOMEM naming the file. */
int leakgate_config__no_memory(const struct loader *ld);

#endif
