/* SPDX-License-Identifier: MIT */
/*
 * graph: the call graph of memory growth as Graphviz DOT text, drawn the
 * way jeprof --pdf draws a heap profile, so that people who know jeprof's
 * pictures can read it at once.  Core (stage 5, beside report): in-memory,
 * no I/O, no globals; running `dot` is render.c's job.
 *
 * Nodes are functions (inlined ones too), labelled with their source
 * file:line(s) and "FLAT B (p%)" (bytes allocated directly there) "of CUM B
 * (q%)" (bytes retained by every stack through them); a node's font grows
 * with its flat bytes.  Edges go from caller to callee and carry the bytes
 * of the stacks that pass through them.  Only stacks that grew are drawn.
 * Like jeprof's --nodefraction / --edgefraction, nodes retaining less than
 * nodefraction of the total and edges carrying less than edgefraction of it
 * are folded away (and at most max_nodes nodes are kept, the largest); a
 * caller and callee that were joined only through folded nodes get a
 * dashed edge, so the picture stays connected.  A legend node names the
 * picture, the total and what was folded.
 *
 * Invariant: the output is deterministic (nodes by retained bytes, then
 * name) and every string from a symbol or path is escaped for DOT.
 */
#ifndef LEAKGATE_GRAPH_H
#define LEAKGATE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "leakgate/leakgate.h"
#include "symbolize.h"

/* One stack to draw. */
struct leakgate_graph_stack {
    const struct leakgate_frame *frames; /* innermost first (borrowed) */
    size_t nframes;
    int64_t bytes; /* retained; stacks with bytes <= 0 are skipped */
    int64_t objs;
};

struct leakgate_graph_opts {
    double nodefraction;      /* fold nodes below this share; < 0: 0.005 */
    double edgefraction;      /* fold edges below this share; < 0: 0.001 */
    size_t max_nodes;         /* keep at most this many; 0: 80 */
    const char *title;        /* first legend line; NULL: "leakgate" */
    const char *const *notes; /* more legend lines (borrowed) */
    size_t nnotes;
};

#define LEAKGATE_GRAPH_OPTS_INIT                                               \
    {                                                                          \
        -1.0, -1.0, 0, NULL, NULL, 0                                           \
    }

/* What was drawn and what was folded away. */
struct leakgate_graph_stats {
    uint64_t total_bytes; /* sum over the stacks that grew */
    uint64_t total_objs;
    size_t nodes;       /* distinct functions */
    size_t nodes_shown; /* after folding */
    size_t edges;       /* distinct caller -> callee pairs */
    size_t edges_shown;
};

/*
 * The DOT text of the growth of n stacks.  opts may be NULL (defaults);
 * stats_out may be NULL.  Returns 0 or LEAKGATE_ENOMEM; *out is the
 * caller's (leakgate_util__free), NULL on failure.
 */
int leakgate_graph__dot(char **out,
                        struct leakgate_graph_stats *stats_out,
                        const struct leakgate_graph_stack *stacks,
                        size_t n,
                        const struct leakgate_graph_opts *opts);

#endif
