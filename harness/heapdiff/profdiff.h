/* SPDX-License-Identifier: MIT */
/*
 * profdiff: the symbolized growth between two heap profiles of any
 * program, and its renderings for `leakgate diff` (text, JSON
 * "leakgate-diff" version 1, DOT).  Core (beside report): in-memory data,
 * no I/O; diff_profiles.c reads the files, diffs, symbolizes and fills it.
 *
 * nodefraction folds whole stacks in text and JSON (a stack retaining less
 * than that share of the growth is summarized, not listed) and graph
 * nodes in DOT (graph.c).
 */
#ifndef LEAKGATE_PROFDIFF_H
#define LEAKGATE_PROFDIFF_H

#include <stddef.h>
#include <stdint.h>

#include "verdict.h"

struct leakgate_profdiff {
    const char *before_name; /* NULL: one profile, no base */
    const char *after_name;
    uint64_t sample_period; /* heap_v2/N of the after profile, 1 = exact */
    const char *binary;     /* main executable symbolized from, "" unknown */
    const char *build_id;   /* its GNU build-id in hex, "" unknown */
    const char *focus;      /* the --focus regex, NULL: none */
    double nodefraction;    /* resolved for the format */
    double edgefraction;
    /* Stacks whose live bytes changed and that the focus kept, bytes
     * descending; frames and shown range as in a verdict, judgement
     * unused.  Owned (free with leakgate_profdiff__free). */
    struct leakgate_vstack *stacks;
    size_t nstacks;
    size_t unfocused_stacks; /* growing stacks the focus left out */
    int64_t unfocused_bytes;
    char **notes; /* warnings for the reader (owned) */
    size_t nnotes;
};

/* The text rendering: header with the growth, each stack (largest first)
 * as "function  file:line" lines, then what was freed, focused out or
 * folded, and how it was measured.  NULL on ENOMEM.  Caller frees. */
char *leakgate_profdiff__text(const struct leakgate_profdiff *d);

/* JSON, "format": "leakgate-diff", "version": 1 (docs/cli.md).  NULL on
 * ENOMEM.  Caller frees. */
char *leakgate_profdiff__json(const struct leakgate_profdiff *d);

/* The call graph of the growth as DOT (graph.c).  Returns 0 or
 * LEAKGATE_ENOMEM; *out is the caller's. */
int leakgate_profdiff__dot(char **out, const struct leakgate_profdiff *d);

/* Add a note (printf-style).  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_profdiff__note(struct leakgate_profdiff *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Free d (allocated with leakgate_util__calloc), its stacks and notes;
 * the name strings are borrowed.  NULL is a no-op. */
void leakgate_profdiff__free(struct leakgate_profdiff *d);

#endif
