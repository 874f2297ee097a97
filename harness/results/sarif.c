/* SPDX-License-Identifier: MIT */
/*
 * sarif: the SARIF 2.1.0 renderer (see sarif.h).  One run, tool driver
 * "leakgate" with a fixed rule table; each result names its test, its
 * bytes and its stack.  Core: strings in memory only.
 */
#include "sarif.h"

#include <inttypes.h>
#include <string.h>

#include "report.h"
#include "thresholds.h"
#include "util.h"

/* The rules, in the order of the driver's `rules` array. */
enum rule { LEAK, PEAK, RETAINED, NEW_STACK, PEAK_GROWTH, ALLOC_GROWTH };

static const struct {
    const char *id, *name, *text;
} rules[] = {
    {"leakgate/leak", "RetainedOverLimit",
     "A test retained more memory than its thresholds allow"},
    {"leakgate/peak", "PeakOverLimit",
     "A test's peak heap rose above its peak_limit"},
    {"leakgate/retained-growth", "RetainedGrowth",
     "A test retains more memory than on the base branch"},
    {"leakgate/new-stack", "NewRetainedStack",
     "A test retains memory from a stack it did not retain on the base "
     "branch"},
    {"leakgate/peak-growth", "PeakGrowth",
     "A test's peak heap grew beyond the allowed growth over the base "
     "branch"},
    {"leakgate/alloc-growth", "AllocationGrowth",
     "A test makes more allocations than the allowed growth over the base "
     "branch"},
};

/* One result before rendering. */
struct item {
    const struct leakgate_verdict *v;
    enum rule rule;
    const struct leakgate_vstack *stack;    /* where it points, or NULL */
    const char *why;                        /* the message's end, or NULL */
    const struct leakgate_compare_row *row; /* a regression's, or NULL */
};

/* The line of the thresholds file that speaks for v: its tests entry,
 * else its suites entry, else the peak limit's entry, else 1. */
static unsigned int
entry_line(const struct leakgate_verdict *v)
{
    const struct leakgate_policy_settings *st = &v->settings;

    if (st->test_entry && st->test_entry->line)
        return st->test_entry->line;
    if (st->suite_entry && st->suite_entry->line)
        return st->suite_entry->line;
    if (st->peak_entry && st->peak_entry->line)
        return st->peak_entry->line;
    return 1;
}

const char *
leakgate_sarif__relative(const char *path, const char *root)
{
    size_t n;

    if (!path || !root || !*root || path[0] != '/')
        return NULL;
    n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (strncmp(path, root, n) != 0 || (path[n] != '/' && n > 1))
        return NULL;
    return path + n + (path[n] == '/');
}

/* The source root as given (SRCROOT) and, when it differs, the same
 * directory without symbolic links: frames recorded through either
 * spelling lie under the root. */
struct root {
    const char *dir;  /* absolute, or NULL: none */
    const char *real; /* or NULL */
};

static const char *
relative(const char *path, const struct root *root)
{
    const char *rel = leakgate_sarif__relative(path, root->dir);

    return rel ? rel : leakgate_sarif__relative(path, root->real);
}

static void
put_json(struct leakgate_buf *b, const char *s)
{
    leakgate_buf__puts(b, "\"");
    leakgate_report__put_escaped(b, s, LEAKGATE_REPORT_ESC_JSON);
    leakgate_buf__puts(b, "\"");
}

/* s percent-encoded as a URI path (unreserved characters and '/' kept). */
static void
put_uri_path(struct leakgate_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || strchr("-._~/", *p)) {
            leakgate_buf__put(b, (const char *)p, 1);
        } else {
            char enc[3] = {'%', hex[*p >> 4], hex[*p & 15]};

            leakgate_buf__put(b, enc, 3);
        }
    }
}

/* "physicalLocation": {...} of a frame with a file. */
static void
put_physical(struct leakgate_buf *b,
             const struct leakgate_frame *f,
             const struct root *root)
{
    const char *rel = relative(f->file, root);
    struct leakgate_buf uri = LEAKGATE_BUF_INIT;

    if (rel)
        put_uri_path(&uri, rel);
    else if (f->file[0] == '/') {
        leakgate_buf__puts(&uri, "file://");
        put_uri_path(&uri, f->file);
    } else
        put_uri_path(&uri, f->file);
    leakgate_buf__puts(b, "\"physicalLocation\": {\"artifactLocation\": "
                          "{\"uri\": ");
    put_json(b, uri.ptr ? uri.ptr : "");
    b->failed |= uri.failed;
    leakgate_buf__dispose(&uri);
    if (rel || (f->file[0] != '/' && root->dir && *root->dir))
        leakgate_buf__puts(b, ", \"uriBaseId\": \"SRCROOT\"");
    leakgate_buf__puts(b, "}");
    if (f->line)
        leakgate_buf__printf(b, ", \"region\": {\"startLine\": %u}", f->line);
    leakgate_buf__puts(b, "}");
}

/* The frame results point at: the innermost shown frame under root with
 * a line, else the innermost shown frame with a file; NULL: none. */
static const struct leakgate_frame *
primary_frame(const struct leakgate_vstack *s, const struct root *root)
{
    const struct leakgate_frame *any = NULL;

    if (!s || !s->frames)
        return NULL;
    for (size_t k = s->shown_begin; k < s->shown_end; k++) {
        const struct leakgate_frame *f = &s->frames[k];

        if (!f->file)
            continue;
        if (f->line && relative(f->file, root))
            return f;
        if (!any)
            any = f;
    }
    return any;
}

static void
put_message(struct leakgate_buf *b,
            const struct item *it,
            const struct leakgate_frame *at)
{
    struct leakgate_buf m = LEAKGATE_BUF_INIT;
    const struct leakgate_vstack *s = it->stack;
    char num[32], req[LEAKGATE_REPORT_REQUESTED_SIZE];
    char reach[LEAKGATE_REPORT_REACH_SIZE];

    leakgate_buf__printf(&m, "%s%s: %s", leakgate_verdict__origin(it->v),
                         it->v->name, it->why ? it->why : "");
    if (it->row) {
        leakgate_buf__puts(&m, " (");
        leakgate_compare__reasons(&m, it->row);
        leakgate_buf__puts(&m, ")");
    }
    if (s)
        leakgate_buf__printf(
            &m, "; %s%s in %" PRId64 " %s %s here",
            leakgate_thresholds__bytes(num, sizeof num,
                                       s->bytes > 0 ? (uint64_t)s->bytes : 0),
            leakgate_report__requested(req, s->requested, s->requested_known),
            s->objs, s->objs == 1 ? "object" : "objects",
            it->rule == PEAK || it->rule == PEAK_GROWTH ? "held at the peak"
                                                        : "allocated");
    if (s && *leakgate_report__reach(reach, s))
        leakgate_buf__printf(&m, ", %s", reach);
    if (at && at->function)
        leakgate_buf__printf(&m, " (in %s)", at->function);
    if (!s && it->rule == ALLOC_GROWTH)
        leakgate_buf__puts(&m, "; allocation counts keep no stack: this is "
                               "the thresholds entry of the test");
    else if (!s)
        leakgate_buf__puts(&m, "; no stack was taken (peak stacks are "
                               "taken over a peak_limit): this is the "
                               "thresholds entry of the test");
    leakgate_buf__puts(b, "\"message\": {\"text\": ");
    put_json(b, m.ptr ? m.ptr : "");
    leakgate_buf__puts(b, "}");
    b->failed |= m.failed;
    leakgate_buf__dispose(&m);
}

/* The stack's frames with a file, innermost first, as relatedLocations. */
static void
put_related(struct leakgate_buf *b,
            const struct leakgate_vstack *s,
            const struct root *root)
{
    int id = 0;

    leakgate_buf__puts(b, ",\n       \"relatedLocations\": [");
    for (size_t k = s->shown_begin; k < s->shown_end; k++) {
        const struct leakgate_frame *f = &s->frames[k];
        struct leakgate_buf m = LEAKGATE_BUF_INIT;

        if (!f->file)
            continue;
        leakgate_buf__printf(b, "%s\n        {\"id\": %d, ", id ? "," : "",
                             id + 1);
        put_physical(b, f, root);
        leakgate_buf__printf(&m, "frame %d%s: %s", id + 1,
                             f->inlined ? " (inlined)" : "",
                             f->function ? f->function : "??");
        leakgate_buf__puts(b, ", \"message\": {\"text\": ");
        put_json(b, m.ptr ? m.ptr : "");
        leakgate_buf__puts(b, "}}");
        b->failed |= m.failed;
        leakgate_buf__dispose(&m);
        id++;
    }
    leakgate_buf__puts(b, "]");
}

static void
put_properties(struct leakgate_buf *b, const struct item *it)
{
    const struct leakgate_verdict *v = it->v;

    leakgate_buf__puts(b, ",\n       \"properties\": {\"test\": ");
    put_json(b, v->name);
    if (v->origin && *v->origin) {
        leakgate_buf__puts(b, ", \"origin\": ");
        put_json(b, v->origin);
    }
    leakgate_buf__printf(b, ", \"retained_bytes\": %" PRIu64,
                         v->policy.total_bytes);
    if (it->stack)
        leakgate_buf__printf(
            b, ", \"stack_bytes\": %" PRId64 ", \"stack_objects\": %" PRId64,
            it->stack->bytes, it->stack->objs);
    if (it->stack && it->stack->requested_known)
        leakgate_buf__printf(b, ", \"stack_requested_bytes\": %" PRId64,
                             it->stack->requested);
    if (it->stack && leakgate_report__reach_kind(it->stack))
        leakgate_buf__printf(b,
                             ", \"stack_reachability\": \"%s\", "
                             "\"stack_lost_bytes\": %" PRId64,
                             leakgate_report__reach_kind(it->stack),
                             it->stack->reach.lost_bytes +
                                 it->stack->reach.indirect_bytes);
    if (v->peak_known)
        leakgate_buf__printf(
            b, ", \"peak_bytes\": %" PRIu64 ", \"allocations\": %" PRIu64,
            v->peak_bytes, v->allocations);
    leakgate_buf__puts(b, "}");
}

/* Where a result without a stack points: the thresholds file at the
 * entry that speaks for the test (where a peak_limit would take its
 * stacks); false when the file is unknown or not an absolute path. */
static bool
thresholds_frame(struct leakgate_frame *out,
                 const struct item *it,
                 const char *thresholds)
{
    if (!thresholds || thresholds[0] != '/')
        return false;
    memset(out, 0, sizeof *out);
    out->file = thresholds;
    out->line = entry_line(it->v);
    return true;
}

static void
put_result(struct leakgate_buf *b,
           const struct item *it,
           const struct root *root,
           const char *thresholds)
{
    const struct leakgate_frame *at = primary_frame(it->stack, root);
    struct leakgate_frame in_file;
    struct leakgate_buf fp = LEAKGATE_BUF_INIT;

    if (!at && thresholds_frame(&in_file, it, thresholds))
        at = &in_file;
    if (!at)
        return; /* not locatable(): render() left it out */
    leakgate_buf__printf(b,
                         "      {\"ruleId\": \"%s\", \"ruleIndex\": %d, "
                         "\"level\": \"error\",\n       ",
                         rules[it->rule].id, (int)it->rule);
    put_message(b, it, at);
    leakgate_buf__puts(b, ",\n       \"locations\": [{");
    put_physical(b, at, root);
    leakgate_buf__puts(b, ", \"logicalLocations\": [{\"fullyQualifiedName\": ");
    put_json(b, at->function ? at->function : it->v->name);
    leakgate_buf__printf(b, ", \"kind\": \"%s\"}]}]",
                         at->function ? "function" : "test");
    if (it->stack && at != &in_file)
        put_related(b, it->stack, root);
    /* Stable across builds: the test and the functions of its stack. */
    leakgate_buf__printf(&fp, "%s%s:%s", leakgate_verdict__origin(it->v),
                         it->v->name, rules[it->rule].id);
    if (it->stack) {
        leakgate_buf__puts(&fp, ":");
        leakgate_compare__stack_key(&fp, it->stack);
    }
    leakgate_buf__puts(b, ",\n       \"partialFingerprints\": "
                          "{\"leakgateStack/v1\": ");
    put_json(b, fp.ptr ? fp.ptr : "");
    b->failed |= fp.failed;
    leakgate_buf__dispose(&fp);
    leakgate_buf__puts(b, "}");
    put_properties(b, it);
    leakgate_buf__puts(b, "}");
}

static void
put_driver(struct leakgate_buf *b)
{
    leakgate_buf__printf(b,
                         "      \"tool\": {\"driver\": {\"name\": "
                         "\"leakgate\", \"version\": \"%s\", "
                         "\"semanticVersion\": \"%s\", \"rules\": [",
                         leakgate_version(), leakgate_version());
    for (size_t k = 0; k < sizeof rules / sizeof rules[0]; k++) {
        leakgate_buf__printf(b,
                             "%s\n        {\"id\": \"%s\", \"name\": \"%s\", "
                             "\"shortDescription\": {\"text\": ",
                             k ? "," : "", rules[k].id, rules[k].name);
        put_json(b, rules[k].text);
        leakgate_buf__puts(b, "}, \"defaultConfiguration\": {\"level\": "
                              "\"error\"}}");
    }
    leakgate_buf__puts(b, "]}},\n");
}

/* Code scanning refuses a whole log that has a result without a
 * physical location: such a result (no stack with a file, no absolute
 * thresholds file) is left out. */
static bool
locatable(const struct item *it,
          const struct root *root,
          const char *thresholds)
{
    struct leakgate_frame f;

    return primary_frame(it->stack, root) ||
           thresholds_frame(&f, it, thresholds);
}

static char *
render(const struct item *items,
       size_t n,
       const struct root *root,
       const char *thresholds)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    const char *dir = root->dir;
    size_t shown = 0;

    leakgate_buf__puts(&b,
                       "{\n  \"$schema\": "
                       "\"https://json.schemastore.org/sarif-2.1.0.json\",\n"
                       "  \"version\": \"2.1.0\",\n  \"runs\": [\n    {\n");
    put_driver(&b);
    if (dir && dir[0] == '/') {
        leakgate_buf__puts(&b, "      \"originalUriBaseIds\": {\"SRCROOT\": "
                               "{\"uri\": \"file://");
        put_uri_path(&b, dir);
        leakgate_buf__puts(&b, dir[strlen(dir) - 1] == '/' ? "\"}},\n"
                                                           : "/\"}},\n");
    }
    leakgate_buf__puts(&b, "      \"results\": [");
    for (size_t i = 0; i < n; i++) {
        if (!locatable(&items[i], root, thresholds))
            continue;
        leakgate_buf__puts(&b, shown++ ? ",\n" : "\n");
        put_result(&b, &items[i], root, thresholds);
    }
    leakgate_buf__puts(&b, shown ? "\n      ]\n    }\n  ]\n}\n"
                                 : "]\n    }\n  ]\n}\n");
    return leakgate_buf__take(&b);
}

/* The largest stack over its limit, else the largest counted one. */
static const struct leakgate_vstack *
leak_stack(const struct leakgate_verdict *v)
{
    for (size_t i = 0; i < v->nstacks; i++)
        if (v->stacks[i].judgement.over)
            return &v->stacks[i];
    for (size_t i = 0; i < v->nstacks; i++)
        if (leakgate_compare__counted(&v->stacks[i]))
            return &v->stacks[i];
    return NULL;
}

static const struct leakgate_vstack *
peak_stack(const struct leakgate_verdict *v)
{
    return v->npeak_stacks > 0 ? &v->peak_stacks[0] : NULL;
}

char *
leakgate_sarif__results(const struct leakgate_verdict *const *v,
                        size_t n,
                        const char *root,
                        const char *root_real,
                        const char *thresholds)
{
    struct item *items = leakgate_util__calloc(n ? n : 1, sizeof *items);
    struct root r = {root, root_real};
    size_t m = 0;
    char *out;

    if (!items)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        bool peak_only = leakgate_verdict__peak_only(v[i]);

        if (v[i]->status != LEAKGATE_STATUS_FAIL)
            continue;
        items[m++] = (struct item){
            v[i], peak_only ? PEAK : LEAK,
            peak_only ? peak_stack(v[i]) : leak_stack(v[i]),
            peak_only ? "peak over its limit" : "retained over its limit",
            NULL};
    }
    out = render(items, m, &r, thresholds);
    leakgate_util__free(items);
    return out;
}

static enum rule
regression_rule(unsigned int why)
{
    return why & LEAKGATE_COMPARE_WHY_RETAINED    ? RETAINED
           : why & LEAKGATE_COMPARE_WHY_NEW_STACK ? NEW_STACK
           : why & LEAKGATE_COMPARE_WHY_PEAK      ? PEAK_GROWTH
                                                  : ALLOC_GROWTH;
}

static const char *
regression_why(enum rule r)
{
    return r == RETAINED    ? "retains more than on the base branch"
           : r == NEW_STACK ? "retains a stack the base branch did not"
           : r == PEAK_GROWTH
               ? "peak heap grew beyond the allowed growth over the base branch"
               : "allocations grew beyond the allowed growth over the base "
                 "branch";
}

char *
leakgate_sarif__compare(const struct leakgate_compare *c,
                        const char *root,
                        const char *root_real,
                        const char *thresholds)
{
    struct item *items = leakgate_util__calloc(c->n ? c->n : 1, sizeof *items);
    struct root rt = {root, root_real};
    size_t m = 0;
    char *out;

    if (!items)
        return NULL;
    for (size_t i = 0; i < c->n; i++) {
        const struct leakgate_compare_row *r = &c->rows[i];
        enum rule rule = regression_rule(r->why);
        const struct leakgate_vstack *s = NULL;

        if (!r->why)
            continue;
        if (r->nnew_stacks > 0)
            s = r->new_stacks[0];
        else if (rule == RETAINED)
            s = leak_stack(r->head);
        else if (rule == PEAK_GROWTH)
            s = peak_stack(r->head);
        items[m++] = (struct item){r->head, rule, s, regression_why(rule), r};
    }
    out = render(items, m, &rt, thresholds);
    leakgate_util__free(items);
    return out;
}
