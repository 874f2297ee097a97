/* SPDX-License-Identifier: MIT */
/*
 * config: the thresholds file (docs/thresholds.md) read with libyaml.  The
 * adapter between YAML text and struct leakgate_config: its first pass
 * (config_tree.c) is the only file that includes yaml.h; policy consumes
 * its result.
 *
 * Two passes.  First, config_tree.c turns libyaml's event stream into a
 * small tree of nodes that remember their 1-based line and column, within
 * the structural limits (file size here, nesting depth there).  Second,
 * this file checks the tree against the version-1 schema and copies it
 * into the config.  Invariants: every failure leaves a "FILE:LINE:COLUMN: what"
 * detail (whole-file problems omit LINE:COLUMN), nothing unknown is
 * ignored, and a partly built config is always safe to free.
 */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_tree.h"
#include "error.h"
#include "files.h"
#include "util.h"

#define DEFAULT_MAX_SIZE ((size_t)4 << 20)
#define DEFAULT_MAX_DEPTH ((size_t)32)
#define MAX_WARMUP 1000u
#define MAX_REPEAT 100u
#define MAX_SETTLE_MS 60000u
#define MAX_SUGGEST_LEN 64 /* longer keys get no "did you mean" */
#define MAX_FRACTION_DIGITS 10

/* Where each key is valid, for "did you mean" and misplaced-key hints. */
static const char *const top_keys[] = {
    "version", "defaults",       "suites",     "tests",
    "ignore",  "builtin_ignore", "allocators", NULL};
static const char *const defaults_keys[] = {
    "scope",  "stack_limit", "total_limit", "lost_limit", "peak_limit",
    "warmup", "repeat",      "settle",      "rerun",      NULL};
static const char *const suite_keys[] = {
    "scope",      "stack_limit", "total_limit", "lost_limit",
    "peak_limit", "warmup",      "repeat",      "settle",
    "rerun",      "stacks",      NULL};
static const char *const test_keys[] = {
    "stack_limit", "total_limit", "lost_limit", "peak_limit", "warmup",
    "repeat",      "settle",      "rerun",      "stacks",     NULL};
static const char *const rule_keys[] = {"frames", "limit", "exact", NULL};
static const char *const ignore_keys[] = {"frames", "reason", NULL};

struct place {
    const char *what; /* "a tests entry" */
    const char *const *keys;
};

static const struct place places[] = {
    {"the top level", top_keys},    {"defaults", defaults_keys},
    {"a suites entry", suite_keys}, {"a tests entry", test_keys},
    {"a stacks rule", rule_keys},   {"an ignore rule", ignore_keys},
};

enum place_id { AT_TOP, AT_DEFAULTS, AT_SUITE, AT_TEST, AT_RULE, AT_IGNORE };

/* ---- pass 2: helpers ------------------------------------------------- */

static bool
is_null(const struct node *nd)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};

    if (nd->kind != NODE_SCALAR || !nd->plain)
        return false;
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++) {
        if (strcmp(nd->text, nulls[i]) == 0)
            return true;
    }
    return false;
}

static const char *
kind_name(const struct node *nd)
{
    if (is_null(nd))
        return "null";
    if (nd->kind == NODE_MAP)
        return "a mapping";
    return nd->kind == NODE_SEQ ? "a sequence" : "a scalar";
}

static bool
in_list(const char *const *list, const char *s)
{
    for (; *list; list++) {
        if (strcmp(*list, s) == 0)
            return true;
    }
    return false;
}

static size_t
min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;

    return m < c ? m : c;
}

/* Optimal string alignment distance (a transposition costs 1), kept in
 * three rows; SIZE_MAX for strings longer than MAX_SUGGEST_LEN. */
static size_t
edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t d[3][MAX_SUGGEST_LEN + 1];

    if (la > MAX_SUGGEST_LEN || lb > MAX_SUGGEST_LEN)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t *cur = d[i % 3], *prev = d[(i - 1) % 3], *pp = d[(i + 1) % 3];

        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];

            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && pp[j - 2] + 1 < cur[j])
                cur[j] = pp[j - 2] + 1;
        }
    }
    return d[la % 3][lb];
}

/* The valid key closest to `key`, if close enough to be a likely typo. */
static const char *
suggest(const char *const *valid, const char *key)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;

    for (; *valid; valid++) {
        size_t d = edit_distance(key, *valid);
        size_t allowed = strlen(*valid) / 3;

        if (d <= (allowed ? allowed : 1) && d < best_d) {
            best = *valid;
            best_d = d;
        }
    }
    return best;
}

static int
unknown_key(const struct loader *ld, const struct node *key, enum place_id at)
{
    const struct place *here = &places[at];
    const char *near = suggest(here->keys, key->text);
    struct leakgate_buf valid = LEAKGATE_BUF_INIT;
    int rc;

    if (near)
        return leakgate_config__fail_node(
            ld, key, "unknown key '%s' in %s (did you mean '%s'?)", key->text,
            here->what, near);
    const char *where[sizeof places / sizeof places[0]];
    size_t nwhere = 0;

    for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
        if (in_list(places[i].keys, key->text))
            where[nwhere++] = places[i].what;
    }
    /* "defaults, a suites entry or a tests entry" */
    for (size_t i = 0; i < nwhere; i++)
        leakgate_buf__printf(&valid, "%s%s",
                             i == 0            ? ""
                             : i + 1 == nwhere ? " or "
                                               : ", ",
                             where[i]);
    if (valid.len > 0 && !valid.failed) {
        rc = leakgate_config__fail_node(
            ld, key, "unknown key '%s' in %s (it belongs in %s)", key->text,
            here->what, valid.ptr);
        leakgate_buf__dispose(&valid);
        return rc;
    }
    leakgate_buf__dispose(&valid);
    for (const char *const *k = here->keys; *k; k++)
        leakgate_buf__printf(&valid, "%s%s", k == here->keys ? "" : ", ", *k);
    if (valid.failed)
        return leakgate_config__no_memory(ld);
    rc = leakgate_config__fail_node(ld, key,
                                    "unknown key '%s' in %s (valid keys: %s)",
                                    key->text, here->what, valid.ptr);
    leakgate_buf__dispose(&valid);
    return rc;
}

/* A key to sort; the wrapper keeps sizeof on a struct, not a pointer. */
struct key_ref {
    const struct node *key;
};

static int
cmp_keys(const void *a, const void *b)
{
    const struct node *x = ((const struct key_ref *)a)->key;
    const struct node *y = ((const struct key_ref *)b)->key;
    int c = strcmp(x->text, y->text);

    if (c != 0)
        return c;
    return (x > y) - (x < y); /* same array: file order */
}

/* Duplicate keys, in O(n log n) since pattern maps may be long.  Reports
 * the earliest second occurrence. */
static int
check_duplicates(const struct loader *ld, const struct node *map)
{
    size_t n = map->n / 2;
    struct key_ref *keys;
    const struct node *dup = NULL, *first = NULL;

    if (n < 2)
        return 0;
    keys = leakgate_util__calloc(n, sizeof *keys);
    if (!keys)
        return leakgate_config__no_memory(ld);
    for (size_t i = 0; i < n; i++)
        keys[i].key = &map->items[2 * i];
    qsort(keys, n, sizeof *keys, cmp_keys);
    for (size_t i = 1; i < n; i++) {
        const struct node *prev = keys[i - 1].key, *k = keys[i].key;

        if (strcmp(prev->text, k->text) == 0 && (!dup || k < dup)) {
            dup = k;
            first = prev;
        }
    }
    leakgate_util__free(keys);
    if (dup)
        return leakgate_config__fail_node(
            ld, dup, "duplicate key '%s' (first at line %u)", dup->text,
            first->line);
    return 0;
}

/* Every key a non-null scalar, in `at`'s list when it has one (pattern
 * maps pass AT_TOP with check_names false), no duplicates. */
static int
check_keys(const struct loader *ld,
           const struct node *map,
           enum place_id at,
           bool check_names)
{
    for (size_t i = 0; i < map->n; i += 2) {
        const struct node *k = &map->items[i];

        if (k->kind != NODE_SCALAR || is_null(k))
            return leakgate_config__fail_node(ld, k, "expected a key, got %s",
                                              kind_name(k));
        if (check_names && !in_list(places[at].keys, k->text))
            return unknown_key(ld, k, at);
    }
    return check_duplicates(ld, map);
}

/* The value of `key` in a checked mapping, or NULL. */
static struct node *
get(const struct node *map, const char *key)
{
    for (size_t i = 0; i < map->n; i += 2) {
        const char *text = map->items[i].text; /* NULL: not a scalar */

        if (text && strcmp(text, key) == 0)
            return &map->items[i + 1];
    }
    return NULL;
}

/* Move a scalar's text out of the tree. */
static char *
take_text(struct node *nd)
{
    char *s = nd->text;

    nd->text = NULL;
    return s;
}

/* ---- pass 2: values -------------------------------------------------- */

enum size_status { SIZE_OK, SIZE_BAD, SIZE_OVERFLOW };

static const struct {
    const char *name;
    uint64_t mult;
} units[] = {
    {"B", 1},     {"KiB", 1024},   {"MiB", 1048576},   {"GiB", 1073741824},
    {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000},
};

/* Digits into *out; returns how many; sets *overflow past UINT64_MAX. */
static size_t
scan_digits(uint64_t *out, bool *overflow, const char **p)
{
    size_t n = 0;

    for (; **p >= '0' && **p <= '9'; (*p)++, n++) {
        unsigned int d = (unsigned int)(**p - '0');

        if (*out > (UINT64_MAX - d) / 10)
            *overflow = true;
        else
            *out = *out * 10 + d;
    }
    return n;
}

/* The digits after a '.': frac / denom, trailing zeros dropped; false
 * when there is none or more than MAX_FRACTION_DIGITS significant ones. */
static bool
scan_fraction(uint64_t *frac, uint64_t *denom, const char **p)
{
    const char *start = *p, *end;

    while (**p >= '0' && **p <= '9')
        (*p)++;
    end = *p;
    if (end == start)
        return false;
    while (end > start && end[-1] == '0')
        end--;
    if (end - start > MAX_FRACTION_DIGITS)
        return false;
    for (const char *q = start; q < end; q++) {
        *frac = *frac * 10 + (uint64_t)(*q - '0');
        *denom *= 10;
    }
    return true;
}

static bool
find_unit(uint64_t *mult, const char *s)
{
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(s, units[i].name) == 0) {
            *mult = units[i].mult;
            return true;
        }
    }
    return false;
}

static enum size_status
parse_size(uint64_t *out, const char *s)
{
    uint64_t whole = 0, frac = 0, denom = 1, mult = 1, part;
    bool overflow = false, dot = false;
    const char *p = s, *num_end;

    if (scan_digits(&whole, &overflow, &p) == 0)
        return SIZE_BAD;
    if (*p == '.') {
        p++;
        dot = true;
        if (!scan_fraction(&frac, &denom, &p))
            return SIZE_BAD;
    }
    num_end = p;
    p += strspn(p, " ");
    if (*p == '\0' ? dot || p != num_end : !find_unit(&mult, p))
        return SIZE_BAD; /* a fraction needs a unit; no trailing blanks */
    if (overflow)
        return SIZE_OVERFLOW;
    /* frac < 10^10 and mult <= 2^30: frac * mult < 1.1e19 < 2^64. */
    if ((frac * mult) % denom != 0)
        return SIZE_BAD; /* not a whole number of bytes */
    part = frac * mult / denom;
    if (whole > (UINT64_MAX - part) / mult)
        return SIZE_OVERFLOW;
    *out = whole * mult + part;
    return SIZE_OK;
}

bool
leakgate_config__parse_size(uint64_t *out, const char *text)
{
    uint64_t v = 0;

    if (parse_size(&v, text) != SIZE_OK)
        return false;
    *out = v;
    return true;
}

static int
size_value(uint64_t *out,
           const struct loader *ld,
           const struct node *v,
           const char *key)
{
    if (v->kind != NODE_SCALAR || is_null(v))
        return leakgate_config__fail_node(
            ld, v, "expected a size for '%s', got %s%s", key, kind_name(v),
            is_null(v) && strcmp(key, "total_limit") != 0 &&
                    strcmp(key, "peak_limit") != 0 &&
                    strcmp(key, "lost_limit") != 0
                ? " (only total_limit, lost_limit and peak_limit may be ~)"
                : "");
    switch (parse_size(out, v->text)) {
    case SIZE_OK: return 0;
    case SIZE_OVERFLOW:
        return leakgate_config__fail_node(
            ld, v, "size '%s' for '%s' is too large", v->text, key);
    default:
        return leakgate_config__fail_node(
            ld, v,
            "invalid size '%s' for '%s' (expected bytes, or a "
            "number and one of B, KiB, MiB, GiB, KB, MB, GB)",
            v->text, key);
    }
}

/* A whole number from `min` to `max` for `key` (runs or milliseconds). */
static int
count_value(unsigned int *out,
            const struct loader *ld,
            const struct node *v,
            const char *key,
            unsigned int min,
            unsigned int max)
{
    const char *unit = strcmp(key, "settle") == 0 ? "milliseconds" : "runs";
    uint64_t n = 0;
    bool overflow = false;
    const char *p;

    if (v->kind != NODE_SCALAR || is_null(v))
        return leakgate_config__fail_node(
            ld, v, "expected a number of %s for '%s', got %s", unit, key,
            kind_name(v));
    p = v->text;
    if (scan_digits(&n, &overflow, &p) == 0 || *p != '\0')
        return leakgate_config__fail_node(
            ld, v,
            "invalid %s '%s' (expected a whole number of %s "
            "from %u to %u)",
            key, v->text, unit, min, max);
    if (overflow || n > max || n < min)
        return leakgate_config__fail_node(
            ld, v, "%s %s is out of range (%u to %u)", key, v->text, min, max);
    *out = (unsigned int)n;
    return 0;
}

static int
scope_value(enum leakgate_config_scope *out,
            const struct loader *ld,
            const struct node *v)
{
    if (v->kind == NODE_SCALAR && strcmp(v->text, "test") == 0)
        *out = LEAKGATE_CONFIG_SCOPE_TEST;
    else if (v->kind == NODE_SCALAR && strcmp(v->text, "suite") == 0)
        *out = LEAKGATE_CONFIG_SCOPE_SUITE;
    else if (v->kind == NODE_SCALAR && !is_null(v))
        return leakgate_config__fail_node(
            ld, v, "invalid scope '%s' (expected test or suite)", v->text);
    else
        return leakgate_config__fail_node(
            ld, v, "expected test or suite for 'scope', got %s", kind_name(v));
    return 0;
}

static int
glob_value(const struct loader *ld, const struct node *v, const char *what)
{
    if (v->kind != NODE_SCALAR || is_null(v))
        return leakgate_config__fail_node(ld, v, "expected %s, got %s", what,
                                          kind_name(v));
    if (!leakgate_util__glob_valid(v->text))
        return leakgate_config__fail_node(
            ld, v,
            "invalid glob '%s' (empty, unclosed '[' or "
            "trailing '\\')",
            v->text);
    return 0;
}

/* ---- pass 2: schema -------------------------------------------------- */

static int
frames_value(char ***out,
             size_t *n_out,
             const struct loader *ld,
             struct node *v)
{
    char **frames;
    int rc;

    if (v->kind != NODE_SEQ)
        return leakgate_config__fail_node(
            ld, v,
            "expected a list of function globs for 'frames', "
            "got %s",
            kind_name(v));
    if (v->n == 0)
        return leakgate_config__fail_node(
            ld, v,
            "empty 'frames' list (a rule needs at least "
            "one function glob)");
    for (size_t i = 0; i < v->n; i++) {
        rc = glob_value(ld, &v->items[i], "a function glob");
        if (rc < 0)
            return rc;
    }
    frames = leakgate_util__calloc(v->n, sizeof *frames);
    if (!frames)
        return leakgate_config__no_memory(ld);
    for (size_t i = 0; i < v->n; i++)
        frames[i] = take_text(&v->items[i]);
    *out = frames;
    *n_out = v->n;
    return 0;
}

/* One parsed rule's frames, for finding duplicates by sorting. */
struct frames_ref {
    char *const *frames;
    size_t nframes;
    bool exact;        /* `exact: true`: a different rule than without */
    size_t index;      /* in the rules sequence */
    unsigned int line; /* of the rule */
};

static int
cmp_frames(const struct frames_ref *x, const struct frames_ref *y)
{
    size_t n = x->nframes < y->nframes ? x->nframes : y->nframes;

    for (size_t i = 0; i < n; i++) {
        int c = strcmp(x->frames[i], y->frames[i]);

        if (c)
            return c;
    }
    if (x->nframes != y->nframes)
        return (x->nframes > y->nframes) - (x->nframes < y->nframes);
    return (int)x->exact - (int)y->exact;
}

/* By frames, then file order. */
static int
cmp_frames_refs(const void *a, const void *b)
{
    const struct frames_ref *x = a, *y = b;
    int c = cmp_frames(x, y);

    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Fail at the earliest rule of seq (file order) whose frames an earlier
 * rule has, naming the first such rule's line.  Sorting keeps this
 * O(n log n): a file within the size limit may hold 100,000 rules, and
 * comparing every pair took minutes.  refs are reordered. */
static int
check_unique_frames(const struct loader *ld,
                    struct frames_ref *refs,
                    size_t n,
                    const struct node *seq,
                    const char *what)
{
    size_t start = 0, first = 0, second = SIZE_MAX;

    qsort(refs, n, sizeof *refs, cmp_frames_refs);
    for (size_t i = 1; i < n; i++) {
        if (cmp_frames(&refs[start], &refs[i]) != 0) {
            start = i;
        } else if (i == start + 1 && refs[i].index < second) {
            first = start;
            second = refs[i].index;
        }
    }
    if (second == SIZE_MAX)
        return 0;
    return leakgate_config__fail_node(
        ld, &seq->items[second],
        "duplicate %s rule: same frames as the rule at line %u", what,
        refs[first].line);
}

/* The value of a key the rule must have. */
static int
require(struct node **out,
        const struct loader *ld,
        const struct node *map,
        const char *key,
        enum place_id at)
{
    *out = get(map, key);
    if (!*out)
        return leakgate_config__fail_node(ld, map, "%s needs '%s'",
                                          places[at].what, key);
    return 0;
}

static int bool_value(bool *out,
                      const struct loader *ld,
                      const struct node *v,
                      const char *key);

static int
parse_rule(struct leakgate_config_stack_rule *r,
           const struct loader *ld,
           struct node *v)
{
    struct node *frames = NULL, *limit = NULL, *exact;
    int rc;

    if (v->kind != NODE_MAP)
        return leakgate_config__fail_node(
            ld, v, "expected a stacks rule (frames and limit), got %s",
            kind_name(v));
    r->line = v->line;
    exact = get(v, "exact");
    rc = check_keys(ld, v, AT_RULE, true);
    if (rc == 0)
        rc = require(&frames, ld, v, "frames", AT_RULE);
    if (rc == 0)
        rc = require(&limit, ld, v, "limit", AT_RULE);
    if (rc == 0)
        rc = size_value(&r->limit, ld, limit, "limit");
    if (rc == 0)
        rc = frames_value(&r->frames, &r->nframes, ld, frames);
    if (rc == 0 && exact)
        rc = bool_value(&r->exact, ld, exact, "exact");
    return rc;
}

static int
parse_rules(struct leakgate_config_entry *e,
            const struct loader *ld,
            struct node *v)
{
    struct frames_ref *refs;
    size_t nrefs = 0;
    int rc = 0, dup;

    if (v->kind != NODE_SEQ)
        return leakgate_config__fail_node(
            ld, v, "expected a list of rules for 'stacks', got %s",
            kind_name(v));
    if (v->n == 0)
        return 0;
    e->stacks = leakgate_util__calloc(v->n, sizeof *e->stacks);
    refs = leakgate_util__calloc(v->n, sizeof *refs);
    if (!e->stacks || !refs) {
        leakgate_util__free(refs);
        return leakgate_config__no_memory(ld);
    }
    for (size_t i = 0; rc == 0 && i < v->n; i++) {
        struct leakgate_config_stack_rule *r = &e->stacks[i];

        e->nstacks = i + 1;
        rc = parse_rule(r, ld, &v->items[i]);
        if (rc == 0)
            refs[nrefs++] = (struct frames_ref){r->frames, r->nframes, r->exact,
                                                i, r->line};
    }
    /* A duplicate before the first bad rule is reported first. */
    dup = check_unique_frames(ld, refs, nrefs, v, "stacks");
    leakgate_util__free(refs);
    return dup ? dup : rc;
}

static int
bool_value(bool *out,
           const struct loader *ld,
           const struct node *v,
           const char *key)
{
    if (v->kind == NODE_SCALAR && !is_null(v) && strcmp(v->text, "true") == 0)
        *out = true;
    else if (v->kind == NODE_SCALAR && !is_null(v) &&
             strcmp(v->text, "false") == 0)
        *out = false;
    else
        return leakgate_config__fail_node(
            ld, v, "expected true or false for '%s', got %s", key,
            v->kind == NODE_SCALAR ? v->text : kind_name(v));
    return 0;
}

/* A size or `~` under key, when map has it: *has, *unlimited (`~`) or
 * *bytes. */
static int
optional_size(bool *has,
              bool *unlimited,
              uint64_t *bytes,
              const struct loader *ld,
              const struct node *map,
              const char *key)
{
    const struct node *v = get(map, key);

    if (!v)
        return 0;
    *has = true;
    *unlimited = is_null(v);
    return *unlimited ? 0 : size_value(bytes, ld, v, key);
}

static int
entry_limits(struct leakgate_config_entry *e,
             const struct loader *ld,
             const struct node *map)
{
    const struct node *v;
    int rc = 0;

    v = get(map, "stack_limit");
    if (v) {
        e->has_stack_limit = true;
        rc = size_value(&e->stack_limit, ld, v, "stack_limit");
    }
    if (rc == 0)
        rc = optional_size(&e->has_peak_limit, &e->peak_unlimited,
                           &e->peak_limit, ld, map, "peak_limit");
    if (rc == 0)
        rc = optional_size(&e->has_total_limit, &e->total_unlimited,
                           &e->total_limit, ld, map, "total_limit");
    if (rc == 0)
        rc = optional_size(&e->has_lost_limit, &e->lost_unlimited,
                           &e->lost_limit, ld, map, "lost_limit");
    v = get(map, "warmup");
    if (rc == 0 && v) {
        e->has_warmup = true;
        rc = count_value(&e->warmup, ld, v, "warmup", 0, MAX_WARMUP);
    }
    v = get(map, "repeat");
    if (rc == 0 && v) {
        e->has_repeat = true;
        rc = count_value(&e->repeat, ld, v, "repeat", 1, MAX_REPEAT);
    }
    v = get(map, "settle");
    if (rc == 0 && v) {
        e->has_settle = true;
        rc = count_value(&e->settle_ms, ld, v, "settle", 0, MAX_SETTLE_MS);
    }
    v = get(map, "rerun");
    if (rc == 0 && v) {
        e->has_rerun = true;
        rc = bool_value(&e->rerun, ld, v, "rerun");
    }
    return rc;
}

/* defaults, a suites entry or a tests entry; check_keys keeps `scope` and
 * `stacks` out of the places that do not allow them. */
static int
parse_entry(struct leakgate_config_entry *e,
            const struct loader *ld,
            struct node *v,
            enum place_id at)
{
    struct node *x;
    int rc;

    if (v->kind != NODE_MAP)
        return leakgate_config__fail_node(ld, v,
                                          "expected a mapping for %s, got %s",
                                          places[at].what, kind_name(v));
    rc = check_keys(ld, v, at, true);
    if (rc == 0)
        rc = entry_limits(e, ld, v);
    x = get(v, "scope");
    if (rc == 0 && x)
        rc = scope_value(&e->scope, ld, x);
    x = get(v, "stacks");
    if (rc == 0 && x)
        rc = parse_rules(e, ld, x);
    return rc;
}

static int
parse_pattern_entry(struct leakgate_config_entry *e,
                    const struct loader *ld,
                    struct node *key,
                    enum place_id at)
{
    int rc = glob_value(ld, key, "a pattern");

    /* Shell braces are not glob syntax: '{a,b}_*' would silently match
     * nothing.  (Frame globs may hold braces: C++ lambdas.) */
    if (rc == 0 && strchr(key->text, '{') && strchr(key->text, '}'))
        rc = leakgate_config__fail_node(
            ld, key,
            "'%s': braces are not supported in globs (only '*', "
            "'?', '[...]'): write one entry per alternative",
            key->text);
    if (rc == 0 && at == AT_TEST && !strchr(key->text, '/') &&
        leakgate_util__glob_specificity(key->text) == SIZE_MAX)
        rc = leakgate_config__fail_node(
            ld, key,
            "tests pattern '%s' matches no test: tests are "
            "named 'suite/test' (suite settings go under "
            "'suites')",
            key->text);
    if (rc < 0)
        return rc;
    e->line = key->line;
    e->pattern = take_text(key);
    return parse_entry(e, ld, key + 1, at);
}

/* `suites:` or `tests:`: patterns mapped to entries; null = none. */
static int
parse_patterns(struct leakgate_config_entry **out,
               size_t *n_out,
               const struct loader *ld,
               struct node *v,
               enum place_id at)
{
    const char *section = at == AT_SUITE ? "suites" : "tests";
    int rc;

    if (is_null(v))
        return 0;
    if (v->kind != NODE_MAP)
        return leakgate_config__fail_node(
            ld, v,
            "expected a mapping of patterns for '%s', "
            "got %s",
            section, kind_name(v));
    rc = check_keys(ld, v, at, false);
    if (rc < 0 || v->n == 0)
        return rc;
    *out = leakgate_util__calloc(v->n / 2, sizeof **out);
    if (!*out)
        return leakgate_config__no_memory(ld);
    for (size_t i = 0; rc == 0 && i < v->n; i += 2) {
        struct leakgate_config_entry *e = &(*out)[(*n_out)++];

        rc = parse_pattern_entry(e, ld, &v->items[i], at);
    }
    return rc;
}

static int
parse_ignore(struct leakgate_config_ignore *ig,
             const struct loader *ld,
             struct node *v)
{
    struct node *frames = NULL, *reason;
    int rc;

    if (v->kind != NODE_MAP)
        return leakgate_config__fail_node(
            ld, v, "expected an ignore rule (frames and reason), got %s",
            kind_name(v));
    ig->line = v->line;
    rc = check_keys(ld, v, AT_IGNORE, true);
    if (rc == 0)
        rc = require(&frames, ld, v, "frames", AT_IGNORE);
    reason = get(v, "reason");
    if (rc == 0 && reason && (reason->kind != NODE_SCALAR || is_null(reason)))
        rc = leakgate_config__fail_node(ld, reason,
                                        "expected text for 'reason', got %s",
                                        kind_name(reason));
    if (rc == 0)
        rc = frames_value(&ig->frames, &ig->nframes, ld, frames);
    if (rc == 0 && reason)
        ig->reason = take_text(reason);
    return rc;
}

static int
parse_ignores(struct leakgate_config *cfg,
              const struct loader *ld,
              struct node *v)
{
    struct frames_ref *refs;
    size_t nrefs = 0;
    int rc = 0, dup;

    if (is_null(v))
        return 0;
    if (v->kind != NODE_SEQ)
        return leakgate_config__fail_node(
            ld, v, "expected a list of rules for 'ignore', got %s",
            kind_name(v));
    if (v->n == 0)
        return 0;
    cfg->ignores = leakgate_util__calloc(v->n, sizeof *cfg->ignores);
    refs = leakgate_util__calloc(v->n, sizeof *refs);
    if (!cfg->ignores || !refs) {
        leakgate_util__free(refs);
        return leakgate_config__no_memory(ld);
    }
    for (size_t i = 0; rc == 0 && i < v->n; i++) {
        struct leakgate_config_ignore *ig = &cfg->ignores[i];

        cfg->nignores = i + 1;
        rc = parse_ignore(ig, ld, &v->items[i]);
        if (rc == 0)
            refs[nrefs++] = (struct frames_ref){ig->frames, ig->nframes, false,
                                                i, ig->line};
    }
    /* A duplicate before the first bad rule is reported first. */
    dup = check_unique_frames(ld, refs, nrefs, v, "ignore");
    leakgate_util__free(refs);
    return dup ? dup : rc;
}

static int
check_version(const struct loader *ld, const struct node *top)
{
    const struct node *v = get(top, "version");

    if (!v)
        return leakgate_config__fail_node(ld, top, "missing 'version: 1'");
    if (v->kind != NODE_SCALAR || is_null(v))
        return leakgate_config__fail_node(
            ld, v, "expected 'version: 1', got %s", kind_name(v));
    if (strcmp(v->text, "1") != 0)
        return leakgate_config__fail_node(
            ld, v,
            "unsupported version '%s' (this leakgate reads "
            "version 1)",
            v->text);
    return 0;
}

/* `allocators: [glob, ...]`: the project's allocation wrappers (an empty
 * list is the same as none). */
static int
parse_allocators(struct leakgate_config *cfg,
                 const struct loader *ld,
                 struct node *v)
{
    if (v->kind == NODE_SEQ && v->n == 0)
        return 0;
    if (v->kind != NODE_SEQ)
        return leakgate_config__fail_node(
            ld, v,
            "expected a list of function globs for "
            "'allocators', got %s",
            kind_name(v));
    return frames_value(&cfg->allocators, &cfg->nallocators, ld, v);
}

static int
parse_top(struct leakgate_config *cfg,
          const struct loader *ld,
          struct node *top)
{
    struct node *v;
    int rc;

    if (top->kind != NODE_MAP)
        return leakgate_config__fail_node(
            ld, top, "expected a mapping at the top level, got %s",
            kind_name(top));
    rc = check_keys(ld, top, AT_TOP, true);
    if (rc == 0)
        rc = check_version(ld, top);
    v = get(top, "defaults");
    if (rc == 0 && v && !is_null(v)) {
        cfg->defaults.line = v[-1].line; /* the key precedes its value */
        rc = parse_entry(&cfg->defaults, ld, v, AT_DEFAULTS);
    }
    v = get(top, "suites");
    if (rc == 0 && v)
        rc = parse_patterns(&cfg->suites, &cfg->nsuites, ld, v, AT_SUITE);
    v = get(top, "tests");
    if (rc == 0 && v)
        rc = parse_patterns(&cfg->tests, &cfg->ntests, ld, v, AT_TEST);
    v = get(top, "ignore");
    if (rc == 0 && v)
        rc = parse_ignores(cfg, ld, v);
    v = get(top, "builtin_ignore");
    if (rc == 0 && v)
        rc = bool_value(&cfg->builtin_ignore, ld, v, "builtin_ignore");
    v = get(top, "allocators");
    if (rc == 0 && v && !is_null(v))
        rc = parse_allocators(cfg, ld, v);
    return rc;
}

/* ---- API ------------------------------------------------------------- */

static void
free_frames(char **frames, size_t n)
{
    for (size_t i = 0; frames && i < n; i++)
        leakgate_util__free(frames[i]);
    leakgate_util__free(frames);
}

static void
free_entry(struct leakgate_config_entry *e)
{
    for (size_t i = 0; i < e->nstacks; i++)
        free_frames(e->stacks[i].frames, e->stacks[i].nframes);
    leakgate_util__free(e->stacks);
    leakgate_util__free(e->pattern);
}

void
leakgate_config__free(struct leakgate_config *cfg)
{
    if (!cfg)
        return;
    free_entry(&cfg->defaults);
    for (size_t i = 0; i < cfg->nsuites; i++)
        free_entry(&cfg->suites[i]);
    leakgate_util__free(cfg->suites);
    for (size_t i = 0; i < cfg->ntests; i++)
        free_entry(&cfg->tests[i]);
    leakgate_util__free(cfg->tests);
    for (size_t i = 0; i < cfg->nignores; i++) {
        free_frames(cfg->ignores[i].frames, cfg->ignores[i].nframes);
        leakgate_util__free(cfg->ignores[i].reason);
    }
    leakgate_util__free(cfg->ignores);
    free_frames(cfg->allocators, cfg->nallocators);
    leakgate_util__free(cfg->path);
    leakgate_util__free(cfg);
}

int
leakgate_config__new_default(struct leakgate_config **out)
{
    *out = leakgate_util__calloc(1, sizeof **out);
    if (!*out)
        return leakgate_error__set(LEAKGATE_ENOMEM, "default thresholds");
    (*out)->builtin_ignore = true;
    return 0;
}

/* The document: empty (no node, or only a bare `---`) or a top mapping. */
static int
parse_document(struct leakgate_config **out, const struct loader *ld)
{
    struct node *top = ld->root.n ? &ld->root.items[0] : NULL;
    struct leakgate_config *cfg;
    int rc;

    if (!top || (is_null(top) && top->text[0] == '\0'))
        return leakgate_config__fail_at(
            ld, 1, 1, LEAKGATE_ECONFIG,
            "empty thresholds file, expected 'version: 1'");
    cfg = leakgate_util__calloc(1, sizeof *cfg);
    if (!cfg)
        return leakgate_config__no_memory(ld);
    cfg->builtin_ignore = true;
    cfg->path = leakgate_util__strdup(ld->name);
    rc = cfg->path ? parse_top(cfg, ld, top) : leakgate_config__no_memory(ld);
    if (rc < 0) {
        leakgate_config__free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

int
leakgate_config__parse(struct leakgate_config **out,
                       const char *text,
                       size_t len,
                       const char *name,
                       const struct leakgate_config_limits *limits)
{
    struct loader ld;
    size_t max_size = DEFAULT_MAX_SIZE;
    int rc;

    assert(out && name && (text || len == 0));
    *out = NULL;
    memset(&ld, 0, sizeof ld);
    ld.name = name;
    ld.text = text ? text : "";
    ld.len = len;
    ld.max_depth = DEFAULT_MAX_DEPTH;
    if (limits && limits->max_size)
        max_size = limits->max_size;
    if (limits && limits->max_depth)
        ld.max_depth = limits->max_depth;
    if (len > max_size)
        return leakgate_error__set(LEAKGATE_ETOOBIG,
                                   "%s: %zu bytes, more than the limit of %zu",
                                   name, len, max_size);
    ld.root.kind = NODE_SEQ;
    ld.open = &ld.root;
    rc = leakgate_config__tree(&ld);
    if (rc == 0)
        rc = parse_document(out, &ld);
    leakgate_config__tree_dispose(&ld.root);
    return rc;
}

const char *
leakgate_config__path(const char *given)
{
    if (given)
        return given;
    return access("leakgate.yaml", F_OK) == 0 ? "leakgate.yaml" : NULL;
}

int
leakgate_config__load(struct leakgate_config **out,
                      const char *path,
                      const struct leakgate_config_limits *limits)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    size_t max = DEFAULT_MAX_SIZE;
    int rc;

    assert(out && path);
    *out = NULL;
    if (limits && limits->max_size)
        max = limits->max_size;
    rc = leakgate_files__read(&b, path, max, "thresholds file");
    if (rc == 0)
        rc = leakgate_config__parse(out, b.ptr, b.len, path, limits);
    leakgate_buf__dispose(&b);
    return rc;
}
