/* SPDX-License-Identifier: MIT */
/*
 * graph: the call graph of memory growth as Graphviz DOT text (see
 * graph.h).  Three passes over the stacks: count (nodes with their flat
 * and cumulative bytes and source lines), keep (the largest nodes above
 * nodefraction, at most max_nodes), link (caller -> callee edges between
 * kept nodes, dashed where folded nodes were skipped), then print.  Each
 * stack counts once per node and once per edge however often a function
 * recurses in it (per-stack stamps), as jeprof counts.  Core: no I/O.
 */
#include "graph.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

#define DEFAULT_NODEFRACTION 0.005
#define DEFAULT_EDGEFRACTION 0.001
#define DEFAULT_MAX_NODES 80
/* Source lines printed in one node's label before "+N more". */
#define LINES_SHOWN 3
/* Distinct source lines remembered per node; more are only flagged. */
#define LINES_KEPT 32
/* Longest function name printed in a label; the tooltip has it whole. */
#define NAME_SHOWN 60

struct gline {
    const char *file; /* borrowed from a frame */
    unsigned int line;
    uint64_t bytes; /* retained by the stacks through this line */
    size_t stamp;   /* 1 + index of the last stack counted */
};

struct gnode {
    const struct leakgate_frame *frame; /* first seen: name, file, module */
    uint64_t flat;                      /* bytes allocated directly here */
    uint64_t cum;                       /* bytes retained through here */
    size_t stamp;
    struct gline *lines; /* LINES_KEPT entries at most */
    size_t nlines;
    bool more_lines; /* distinct lines beyond LINES_KEPT were seen */
    bool inlined;    /* seen as an inlined frame */
    bool outlined;   /* seen as a real frame */
    long id;         /* DOT id when kept, -1 when folded */
};

struct gedge {
    size_t src; /* caller node */
    size_t dst; /* callee node */
    uint64_t bytes;
    size_t stamp;
    bool direct; /* some stack calls src -> dst with nothing folded between */
};

/* Open-addressing index: slots hold item index + 1, 0 = empty. */
struct gindex {
    size_t *slots;
    size_t cap; /* a power of two, or 0 */
};

struct graph {
    struct gnode *nodes;
    size_t nnodes, capnodes;
    struct gindex node_index;
    struct gedge *edges;
    size_t nedges, capedges;
    struct gindex edge_index;
    struct gnode **order; /* nodes by cum descending, then name */
    uint64_t total_bytes;
    uint64_t total_objs;
    double node_min; /* bytes a node needs to be kept */
    size_t capped;   /* nodes above node_min folded by max_nodes */
    double edge_min; /* bytes an edge needs to be drawn */
};

/* ---- keys --------------------------------------------------------------- */

static uint64_t
fnv(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (h ^ (s ? 0xffu : 0xfeu)) * 1099511628211u;
}

static bool
str_eq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Frames of one node: same function in the same module and source file;
 * an unknown function is identified by its address in its module. */
static bool
same_node(const struct leakgate_frame *a, const struct leakgate_frame *b)
{
    if (!str_eq(a->function, b->function) || !str_eq(a->module, b->module))
        return false;
    return a->function ? str_eq(a->file, b->file)
                       : a->module_offset == b->module_offset;
}

static size_t
node_hash(const struct leakgate_frame *f)
{
    uint64_t h = fnv(fnv(14695981039346656037u, f->function), f->module);

    if (f->function)
        h = fnv(h, f->file);
    else
        h = (h ^ f->module_offset) * 1099511628211u;
    return (size_t)h;
}

static size_t
edge_hash(size_t src, size_t dst)
{
    uint64_t h = ((uint64_t)src * 0x9e3779b97f4a7c15u) ^ (uint64_t)dst;

    return (size_t)(h ^ (h >> 29));
}

/* ---- the two indexes ---------------------------------------------------- */

static size_t
slot_of_node(const struct graph *g, const struct leakgate_frame *f)
{
    size_t i = node_hash(f) & (g->node_index.cap - 1);

    while (g->node_index.slots[i] &&
           !same_node(g->nodes[g->node_index.slots[i] - 1].frame, f))
        i = (i + 1) & (g->node_index.cap - 1);
    return i;
}

static size_t
slot_of_edge(const struct graph *g, size_t src, size_t dst)
{
    size_t i = edge_hash(src, dst) & (g->edge_index.cap - 1);

    while (g->edge_index.slots[i]) {
        const struct gedge *e = &g->edges[g->edge_index.slots[i] - 1];

        if (e->src == src && e->dst == dst)
            break;
        i = (i + 1) & (g->edge_index.cap - 1);
    }
    return i;
}

/* Double the index for `count` items when it would be over half full. */
static int
index_reserve(struct graph *g, bool edges)
{
    struct gindex *ix = edges ? &g->edge_index : &g->node_index;
    size_t count = edges ? g->nedges : g->nnodes;
    struct gindex old = *ix;

    if (ix->cap && count + 1 <= ix->cap / 2)
        return 0;
    ix->cap = old.cap ? old.cap * 2 : 64;
    ix->slots = leakgate_util__calloc(ix->cap, sizeof *ix->slots);
    if (!ix->slots) {
        *ix = old;
        /* (Not `return leakgate_error__set(...)`: the analyzer cannot see
         * that it returns its code, and follows a "success" with NULL.) */
        leakgate_error__set(LEAKGATE_ENOMEM, "call graph");
        return LEAKGATE_ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        size_t s = edges ? slot_of_edge(g, g->edges[i].src, g->edges[i].dst)
                         : slot_of_node(g, g->nodes[i].frame);

        ix->slots[s] = i + 1;
    }
    leakgate_util__free(old.slots);
    return 0;
}

/* Make room for one more element of size `size` in *array. */
static int
reserve(void **array, size_t *cap, size_t used, size_t size)
{
    size_t bigger = *cap ? *cap * 2 : 64;
    void *p;

    if (used < *cap)
        return 0;
    p = leakgate_util__realloc(*array, bigger * size);
    if (!p) {
        leakgate_error__set(LEAKGATE_ENOMEM, "call graph");
        return LEAKGATE_ENOMEM;
    }
    *array = p;
    *cap = bigger;
    return 0;
}

/* *out = the node of frame f, created if new.  Returns 0 or ENOMEM. */
static int
node_of(size_t *out, struct graph *g, const struct leakgate_frame *f)
{
    size_t slot;
    int rc = index_reserve(g, false);

    if (rc == 0)
        rc = reserve((void **)&g->nodes, &g->capnodes, g->nnodes,
                     sizeof *g->nodes);
    if (rc < 0)
        return rc;
    slot = slot_of_node(g, f);
    if (!g->node_index.slots[slot]) {
        memset(&g->nodes[g->nnodes], 0, sizeof g->nodes[g->nnodes]);
        g->nodes[g->nnodes].frame = f;
        g->node_index.slots[slot] = ++g->nnodes;
    }
    *out = g->node_index.slots[slot] - 1;
    return 0;
}

/* ---- pass 1: count ------------------------------------------------------ */

static int
add_line(struct gnode *node,
         const struct leakgate_frame *f,
         uint64_t bytes,
         size_t stamp)
{
    struct gline *l = NULL;

    if (!f->file)
        return 0;
    for (size_t i = 0; i < node->nlines && !l; i++) {
        if (node->lines[i].line == f->line &&
            str_eq(node->lines[i].file, f->file))
            l = &node->lines[i];
    }
    if (!l && node->nlines == LINES_KEPT) {
        node->more_lines = true;
        return 0;
    }
    if (!l) {
        if (!node->lines) {
            node->lines = leakgate_util__calloc(LINES_KEPT, sizeof *l);
            if (!node->lines)
                return leakgate_error__set(LEAKGATE_ENOMEM, "call graph");
        }
        l = &node->lines[node->nlines++];
        *l = (struct gline){f->file, f->line, 0, 0};
    }
    if (l->stamp != stamp)
        l->bytes += bytes;
    l->stamp = stamp;
    return 0;
}

static int
count_stack(struct graph *g, const struct leakgate_graph_stack *s, size_t stamp)
{
    uint64_t bytes = (uint64_t)s->bytes;
    size_t ni;
    int rc = 0;

    for (size_t k = 0; k < s->nframes && rc == 0; k++) {
        struct gnode *node;

        rc = node_of(&ni, g, &s->frames[k]);
        if (rc < 0)
            break;
        node = &g->nodes[ni];
        if (node->stamp != stamp)
            node->cum += bytes;
        node->stamp = stamp;
        node->inlined |= s->frames[k].inlined;
        node->outlined |= !s->frames[k].inlined;
        if (k == 0)
            node->flat += bytes;
        rc = add_line(node, &s->frames[k], bytes, stamp);
    }
    g->total_bytes += bytes;
    g->total_objs += s->objs > 0 ? (uint64_t)s->objs : 0;
    return rc;
}

/* ---- pass 2: keep ------------------------------------------------------- */

static const char *
node_name(const struct gnode *n)
{
    return n->frame->function ? n->frame->function : "";
}

static int
by_cum_then_name(const void *pa, const void *pb)
{
    const struct gnode *a = *(const struct gnode *const *)pa;
    const struct gnode *b = *(const struct gnode *const *)pb;
    int c;

    if (a->cum != b->cum)
        return a->cum > b->cum ? -1 : 1;
    c = strcmp(node_name(a), node_name(b));
    if (c != 0)
        return c;
    if (a->frame->module_offset != b->frame->module_offset)
        return a->frame->module_offset < b->frame->module_offset ? -1 : 1;
    return a->flat > b->flat ? -1 : a->flat < b->flat;
}

static int
keep_nodes(struct graph *g, size_t max_nodes)
{
    long next = 0;

    g->order = leakgate_util__calloc(g->nnodes ? g->nnodes : 1,
                                     sizeof(struct gnode *));
    if (!g->order)
        return leakgate_error__set(LEAKGATE_ENOMEM, "call graph");
    for (size_t i = 0; i < g->nnodes; i++)
        g->order[i] = &g->nodes[i];
    qsort(g->order, g->nnodes, sizeof(struct gnode *), by_cum_then_name);
    for (size_t r = 0; r < g->nnodes; r++) {
        struct gnode *n = g->order[r];
        bool keep =
            r < max_nodes && n->cum > 0 && (double)n->cum >= g->node_min;

        n->id = keep ? next++ : -1;
        g->capped += !keep && n->cum > 0 && (double)n->cum >= g->node_min;
    }
    return 0;
}

/* ---- pass 3: link ------------------------------------------------------- */

static int
add_edge(struct graph *g,
         size_t src,
         size_t dst,
         const struct leakgate_graph_stack *s,
         size_t stamp,
         bool through_folded)
{
    struct gedge *e;
    size_t slot;
    int rc = index_reserve(g, true);

    if (rc == 0)
        rc = reserve((void **)&g->edges, &g->capedges, g->nedges,
                     sizeof *g->edges);
    if (rc < 0)
        return rc;
    slot = slot_of_edge(g, src, dst);
    if (!g->edge_index.slots[slot]) {
        g->edges[g->nedges] = (struct gedge){src, dst, 0, 0, false};
        g->edge_index.slots[slot] = ++g->nedges;
    }
    e = &g->edges[g->edge_index.slots[slot] - 1];
    if (e->stamp != stamp)
        e->bytes += (uint64_t)s->bytes;
    e->stamp = stamp;
    e->direct |= !through_folded;
    return 0;
}

/* Edges between the kept nodes of one stack, outer to inner. */
static int
link_stack(struct graph *g, const struct leakgate_graph_stack *s, size_t stamp)
{
    size_t prev = SIZE_MAX;
    bool skipped = false;
    int rc = 0;

    for (size_t k = s->nframes; k-- > 0 && rc == 0;) {
        size_t ni = g->node_index.slots[slot_of_node(g, &s->frames[k])] - 1;

        if (g->nodes[ni].id < 0) {
            skipped = prev != SIZE_MAX;
            continue;
        }
        if (prev != SIZE_MAX && prev != ni)
            rc = add_edge(g, prev, ni, s, stamp, skipped);
        prev = ni;
        skipped = false;
    }
    return rc;
}

/* ---- printing ----------------------------------------------------------- */

/* Square root of x in [0, 1] by Newton's method: no libm for one font
 * size. */
static double
root(double x)
{
    double r = 1.0;

    if (x <= 0.0)
        return 0.0;
    for (int i = 0; i < 30; i++)
        r = 0.5 * (r + x / r);
    return r;
}

static unsigned int
channel(double from, double to, double t)
{
    return (unsigned int)(from + (to - from) * t + 0.5);
}

static uint64_t
round_up(double x)
{
    uint64_t n = (uint64_t)x;

    return (double)n < x ? n + 1 : n;
}

/* Length of the well-formed UTF-8 sequence at p (at most avail bytes), 0
 * when p does not start one. */
static size_t
utf8_len(const unsigned char *p, size_t avail)
{
    size_t len = p[0] < 0x80                    ? 1
                 : p[0] >= 0xc2 && p[0] <= 0xdf ? 2
                 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
                 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                                : 0;

    if (len > avail)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    }
    /* Overlong 3- and 4-byte forms, surrogates and > U+10FFFF. */
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
        (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
        return 0;
    return len;
}

/* Append at most max bytes of s inside a DOT string: '"' and '\' escaped,
 * control characters and malformed UTF-8 as '?', "..." when cut. */
static void
put_dot_n(struct leakgate_buf *b, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t left = strlen((const char *)p), used = 0;

    while (left > 0) {
        size_t len = utf8_len(p, left);

        if (used + (len ? len : 1) > max) {
            leakgate_buf__puts(b, "...");
            return;
        }
        if (len == 0 || *p < 0x20 || *p == 0x7f)
            leakgate_buf__puts(b, "?");
        else if (*p == '"' || *p == '\\')
            leakgate_buf__printf(b, "\\%c", *p);
        else
            leakgate_buf__put(b, (const char *)p, len);
        len = len ? len : 1;
        p += len;
        left -= len;
        used += len;
    }
}

static void
put_dot(struct leakgate_buf *b, const char *s)
{
    put_dot_n(b, s, SIZE_MAX);
}

/* "7,176 B" below 1 MiB, else "1.5 MiB". */
static void
put_bytes(struct leakgate_buf *b, uint64_t n)
{
    char digits[32], human[32];

    if (n >= (uint64_t)1024 * 1024) {
        leakgate_buf__puts(b,
                           leakgate_util__human_bytes(human, sizeof human, n));
        return;
    }
    leakgate_buf__puts(
        b, leakgate_util__group_digits(digits, sizeof digits, n, false));
    leakgate_buf__puts(b, " B");
}

static void
put_share(struct leakgate_buf *b, uint64_t n, uint64_t total)
{
    put_bytes(b, n);
    leakgate_buf__printf(b, " (%.1f%%)",
                         total ? 100.0 * (double)n / (double)total : 0.0);
}

/* The node's name: its function, else module+offset, else its address. */
static void
put_node_name(struct leakgate_buf *b, const struct gnode *n, size_t max)
{
    const struct leakgate_frame *f = n->frame;

    if (f->function) {
        put_dot_n(b, f->function, max);
        return;
    }
    if (f->module) {
        put_dot(b, leakgate_util__base_name(f->module));
        leakgate_buf__printf(b, "+0x%" PRIxPTR, f->module_offset);
    } else {
        leakgate_buf__printf(b, "0x%" PRIxPTR, f->pc);
    }
}

static int
by_line_bytes(const void *pa, const void *pb)
{
    const struct gline *a = pa, *b = pb;

    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* "file.c:12, :30, other.h:4 +2 more" (the busiest lines first). */
static void
put_lines(struct leakgate_buf *b, struct gnode *n, bool full_paths)
{
    const char *last = NULL;
    size_t shown = full_paths ? n->nlines : LINES_SHOWN;

    qsort(n->lines, n->nlines, sizeof *n->lines, by_line_bytes);
    for (size_t i = 0; i < n->nlines && i < shown; i++) {
        const struct gline *l = &n->lines[i];
        bool same = last && str_eq(last, l->file);

        leakgate_buf__puts(b, i ? ", " : "");
        if (!same)
            put_dot(b,
                    full_paths ? l->file : leakgate_util__base_name(l->file));
        leakgate_buf__printf(b, ":%u", l->line);
        last = l->file;
    }
    if (n->more_lines)
        leakgate_buf__puts(b, " +many more");
    else if (n->nlines > shown)
        leakgate_buf__printf(b, " +%zu more", n->nlines - shown);
}

static void
put_fill(struct leakgate_buf *b, uint64_t cum, uint64_t total)
{
    /* From #fff7ec (nothing) to #fb8a6a (everything): the eye finds the
     * heavy paths first, and black text stays readable on all of it. */
    double t = total ? (double)cum / (double)total : 0.0;

    leakgate_buf__printf(b, ", fillcolor=\"#%02x%02x%02x\"",
                         channel(255, 251, t), channel(247, 138, t),
                         channel(236, 106, t));
}

static void
print_node(struct leakgate_buf *b, struct gnode *n, uint64_t total)
{
    double share = total ? (double)n->flat / (double)total : 0.0;

    leakgate_buf__printf(b, "  N%ld [label=\"", n->id);
    put_node_name(b, n, NAME_SHOWN);
    if (n->inlined && !n->outlined)
        leakgate_buf__puts(b, " (inlined)");
    if (n->nlines) {
        leakgate_buf__puts(b, "\\n");
        put_lines(b, n, false);
    } else if (n->frame->function && n->frame->module) {
        leakgate_buf__puts(b, "\\n");
        put_dot(b, leakgate_util__base_name(n->frame->module));
    }
    leakgate_buf__puts(b, "\\n");
    put_share(b, n->flat, total);
    if (n->cum != n->flat) {
        leakgate_buf__puts(b, "\\nof ");
        put_share(b, n->cum, total);
    }
    leakgate_buf__printf(b, "\", fontsize=%.1f", 12.0 + 22.0 * root(share));
    put_fill(b, n->cum, total);
    leakgate_buf__puts(b, ", tooltip=\"");
    put_node_name(b, n, SIZE_MAX);
    if (n->nlines) {
        leakgate_buf__puts(b, " at ");
        put_lines(b, n, true);
    }
    if (n->frame->module) {
        leakgate_buf__puts(b, " in ");
        put_dot(b, n->frame->module);
    }
    leakgate_buf__puts(b, "\"];\n");
}

static void
print_edge(struct leakgate_buf *b, const struct graph *g, const struct gedge *e)
{
    double share =
        g->total_bytes ? (double)e->bytes / (double)g->total_bytes : 0.0;

    leakgate_buf__printf(b, "  N%ld -> N%ld [label=\" ", g->nodes[e->src].id,
                         g->nodes[e->dst].id);
    put_bytes(b, e->bytes);
    leakgate_buf__printf(b, "\", penwidth=%.2f, weight=%d", 1.0 + 5.0 * share,
                         1 + (int)(100.0 * share));
    if (!e->direct)
        leakgate_buf__puts(b, ", style=dashed");
    leakgate_buf__puts(b, ", tooltip=\"");
    put_node_name(b, &g->nodes[e->src], SIZE_MAX);
    leakgate_buf__puts(b, " -> ");
    put_node_name(b, &g->nodes[e->dst], SIZE_MAX);
    leakgate_buf__puts(b, ": ");
    put_bytes(b, e->bytes);
    leakgate_buf__puts(b, "\"];\n");
}

static void
print_folding(struct leakgate_buf *b,
              const struct graph *g,
              const struct leakgate_graph_stats *st)
{
    if (st->nodes_shown == st->nodes && st->edges_shown == st->edges) {
        leakgate_buf__printf(b, "showing all %zu function%s and %zu call%s\\l",
                             st->nodes, st->nodes == 1 ? "" : "s", st->edges,
                             st->edges == 1 ? "" : "s");
        return;
    }
    leakgate_buf__printf(b, "showing %zu of %zu functions", st->nodes_shown,
                         st->nodes);
    if (st->nodes_shown + g->capped < st->nodes) {
        leakgate_buf__puts(b, " (folded: under ");
        put_bytes(b, round_up(g->node_min));
        leakgate_buf__puts(b, g->capped ? ", and" : ")");
    } else if (g->capped) {
        leakgate_buf__puts(b, " (folded:");
    }
    if (g->capped)
        leakgate_buf__printf(b, " %zu beyond the largest %zu)", g->capped,
                             st->nodes_shown);
    leakgate_buf__printf(b, ", %zu of %zu call%s", st->edges_shown, st->edges,
                         st->edges == 1 ? "" : "s");
    if (st->edges_shown < st->edges) {
        leakgate_buf__puts(b, " (folded: under ");
        put_bytes(b, round_up(g->edge_min));
        leakgate_buf__puts(b, ")");
    }
    leakgate_buf__puts(b, "\\l");
}

static void
print_legend(struct leakgate_buf *b,
             const struct graph *g,
             const struct leakgate_graph_stats *st,
             const struct leakgate_graph_opts *o)
{
    leakgate_buf__puts(b, "  legend [shape=note, style=filled, "
                          "fillcolor=\"#f4f4f4\", color=\"#999999\", "
                          "fontsize=13, tooltip=\"legend\", label=\"");
    put_dot(b, o->title ? o->title : "leakgate");
    leakgate_buf__puts(b, "\\l");
    if (g->total_bytes) {
        leakgate_buf__puts(b, "growth: ");
        put_bytes(b, g->total_bytes);
        leakgate_buf__printf(b, " in %" PRIu64 " object%s\\l", g->total_objs,
                             g->total_objs == 1 ? "" : "s");
    } else {
        leakgate_buf__puts(b, "no growth\\l");
    }
    for (size_t i = 0; i < o->nnotes; i++) {
        put_dot(b, o->notes[i]);
        leakgate_buf__puts(b, "\\l");
    }
    print_folding(b, g, st);
    leakgate_buf__puts(b, "box: bytes allocated there (of bytes retained "
                          "through it)\\larrow: bytes passed from caller to "
                          "callee; dashed: through folded functions\\l\"];\n");
}

static void
print_graph(struct leakgate_buf *b,
            struct graph *g,
            struct leakgate_graph_stats *st,
            const struct leakgate_graph_opts *o)
{
    leakgate_buf__puts(
        b, "digraph \"leakgate\" {\n"
           "  graph [fontname=\"Helvetica,Arial,sans-serif\", nodesep=0.3, "
           "ranksep=0.4, tooltip=\"leakgate: call graph of the growth\"];\n"
           "  node [fontname=\"Helvetica,Arial,sans-serif\", shape=box, "
           "style=\"rounded,filled\", color=\"#b30000\", penwidth=1.2];\n"
           "  edge [fontname=\"Helvetica,Arial,sans-serif\", "
           "color=\"#b30000\", fontcolor=\"#5a0000\", arrowsize=0.7];\n");
    print_legend(b, g, st, o);
    for (size_t r = 0; r < g->nnodes; r++) {
        if (g->order[r]->id >= 0)
            print_node(b, g->order[r], g->total_bytes);
    }
    for (size_t i = 0; i < g->nedges; i++) {
        if ((double)g->edges[i].bytes >= g->edge_min)
            print_edge(b, g, &g->edges[i]);
    }
    leakgate_buf__puts(b, "}\n");
}

/* ---- entry point -------------------------------------------------------- */

static void
graph_dispose(struct graph *g)
{
    for (size_t i = 0; i < g->nnodes; i++)
        leakgate_util__free(g->nodes[i].lines);
    leakgate_util__free(g->nodes);
    leakgate_util__free(g->node_index.slots);
    leakgate_util__free(g->edges);
    leakgate_util__free(g->edge_index.slots);
    leakgate_util__free(g->order);
}

static void
fill_stats(struct leakgate_graph_stats *st, const struct graph *g)
{
    memset(st, 0, sizeof *st);
    st->total_bytes = g->total_bytes;
    st->total_objs = g->total_objs;
    st->nodes = g->nnodes;
    st->edges = g->nedges;
    for (size_t i = 0; i < g->nnodes; i++)
        st->nodes_shown += g->nodes[i].id >= 0;
    for (size_t i = 0; i < g->nedges; i++)
        st->edges_shown += (double)g->edges[i].bytes >= g->edge_min;
}

/* Counting, keeping and linking; everything but the printing. */
static int
build(struct graph *g,
      const struct leakgate_graph_stack *stacks,
      size_t n,
      const struct leakgate_graph_opts *o)
{
    double nodefraction =
        o->nodefraction < 0 ? DEFAULT_NODEFRACTION : o->nodefraction;
    double edgefraction =
        o->edgefraction < 0 ? DEFAULT_EDGEFRACTION : o->edgefraction;
    int rc = 0;

    for (size_t i = 0; i < n && rc == 0; i++) {
        if (stacks[i].bytes > 0)
            rc = count_stack(g, &stacks[i], i + 1);
    }
    g->node_min = nodefraction * (double)g->total_bytes;
    g->edge_min = edgefraction * (double)g->total_bytes;
    if (rc == 0)
        rc = keep_nodes(g, o->max_nodes ? o->max_nodes : DEFAULT_MAX_NODES);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (stacks[i].bytes > 0)
            rc = link_stack(g, &stacks[i], i + 1);
    }
    return rc;
}

int
leakgate_graph__dot(char **out,
                    struct leakgate_graph_stats *stats_out,
                    const struct leakgate_graph_stack *stacks,
                    size_t n,
                    const struct leakgate_graph_opts *opts)
{
    static const struct leakgate_graph_opts defaults = LEAKGATE_GRAPH_OPTS_INIT;
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    struct leakgate_graph_stats st;
    struct graph g;
    int rc;

    *out = NULL;
    memset(&g, 0, sizeof g);
    rc = build(&g, stacks, n, opts ? opts : &defaults);
    if (rc == 0) {
        fill_stats(&st, &g);
        print_graph(&b, &g, &st, opts ? opts : &defaults);
        *out = leakgate_buf__take(&b);
        if (!*out)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "call graph");
    }
    if (rc == 0 && stats_out)
        *stats_out = st;
    graph_dispose(&g);
    return rc;
}
