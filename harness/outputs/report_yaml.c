/* SPDX-License-Identifier: MIT */
/*
 * report_yaml: the YAML that accepts a window's growth, alone (exact
 * names, glob-escaped, quoted where YAML would misread them): a window's
 * entry (leakgate_report__yaml()), the stacks rules to raise instead
 * (leakgate_report__raises(), the same values as --update-thresholds:
 * thresholds_rules.c), and one run's snippets as one that applies as a
 * whole (leakgate_report__run_yaml()).  Above report.c (report_parts.h),
 * below report_text.c, which ends each report with it.
 */
#include "report.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "report_parts.h"
#include "thresholds_rules.h"
#include "util.h"
#include "yamledit.h"

/* The YAML suggestion names the largest offending stacks, that many. */
#define MAX_YAML_STACKS 50

/* s inside a YAML comment: a line break would end the comment. */
static void
put_comment(struct leakgate_buf *b, const char *s)
{
    for (const char *p = s; *p; p++)
        leakgate_buf__put(b, (unsigned char)*p < 0x20 ? "?" : p, 1);
}

/* What the suggestion has to say: computed by thresholds_rules.c, as
 * `--update-thresholds` and `thresholds merge` compute it. */
struct suggestion {
    bool suite;       /* under `suites:` (a suite window) */
    const char *name; /* the window's entry name (suite or suite/test) */
    /* The winning entry of the same section.  When it does not name the
     * window exactly, the new entry replaces it for this window (only the
     * most specific entry applies), so its settings are repeated. */
    const struct leakgate_config_entry *winner;
    bool shadowed;
    struct leakgate_tneed need;
};

/* Fill sg; false on ENOMEM. */
static bool
suggestion_init(struct suggestion *sg, const struct leakgate_verdict *v)
{
    struct leakgate_policy_stack_verdict *per;
    bool own, ok;

    memset(sg, 0, sizeof *sg);
    sg->suite = leakgate_report__suite_window(v);
    sg->name = sg->suite ? v->suite : v->name;
    sg->winner = sg->suite ? v->settings.suite_entry : v->settings.test_entry;
    own = leakgate_thresholds__exclusive(sg->winner, sg->name);
    sg->shadowed = sg->winner && !own;
    per = leakgate_util__calloc(v->nstacks ? v->nstacks : 1, sizeof *per);
    ok = per &&
         leakgate_thresholds__need_init(&sg->need, own ? sg->winner : NULL);
    /* Lost objects are a leak to fix: no rule accepts their stack (an
     * explicit --update-thresholds or thresholds merge still writes one). */
    for (size_t i = 0; ok && i < v->nstacks; i++) {
        per[i] = v->stacks[i].judgement;
        if (leakgate_report__lost_stack(&v->stacks[i]))
            per[i].over = false;
    }
    ok = ok &&
         leakgate_thresholds__need_window(&sg->need, v, per, &v->policy, NULL);
    if (ok && v->peak_over)
        leakgate_thresholds__need_peak(&sg->need, v->peak_bytes);
    leakgate_util__free(per);
    return ok;
}

static bool
need_adds(const struct suggestion *sg)
{
    return sg->need.nrules > 0 || sg->need.set_stack || sg->need.set_total ||
           sg->need.set_peak;
}

static void
yaml_size(struct leakgate_buf *b, const char *key, uint64_t bytes)
{
    leakgate_buf__printf(b, "    %s: ", key);
    leakgate_yamledit__put_size(b, bytes);
    leakgate_buf__puts(b, "\n");
}

/* A new rule, as the ratchet writes it. */
static void
yaml_rule(struct leakgate_buf *b, const struct leakgate_trule *r)
{
    char human[32];

    leakgate_buf__puts(b, "      - frames: [");
    for (size_t k = 0; k < r->nnames; k++) {
        leakgate_buf__puts(b, k ? ", " : "");
        leakgate_thresholds__put_glob(b, r->names[k]);
    }
    leakgate_buf__puts(b, "]\n        exact: true\n        limit: ");
    leakgate_yamledit__put_size(b, r->limit);
    if (r->nstacks > 1)
        leakgate_buf__printf(
            b,
            "   # covers %zu stacks: each may retain up "
            "to %s",
            r->nstacks,
            leakgate_util__human_bytes(human, sizeof human, r->limit));
    leakgate_buf__puts(b, "\n");
}

/* Rules carried over from a shadowed entry, after the new ones (a new
 * rule with the same frames takes the larger limit instead). */
static void
yaml_carried_rules(struct leakgate_buf *b, const struct suggestion *sg)
{
    for (size_t i = 0; sg->shadowed && i < sg->winner->nstacks; i++) {
        const struct leakgate_config_stack_rule *r = &sg->winner->stacks[i];

        leakgate_buf__puts(b, "      - frames: [");
        for (size_t k = 0; k < r->nframes; k++) {
            leakgate_buf__puts(b, k ? ", " : "");
            leakgate_yamledit__put_scalar(b, r->frames[k]);
        }
        leakgate_buf__printf(b, "]  # from line %u\n", r->line);
        if (r->exact)
            leakgate_buf__puts(b, "        exact: true\n");
        leakgate_buf__puts(b, "        limit: ");
        leakgate_yamledit__put_size(b, r->limit);
        leakgate_buf__puts(b, "\n");
    }
}

static void
yaml_rules(struct leakgate_buf *b, const struct suggestion *sg)
{
    const struct leakgate_tneed *nd = &sg->need;

    if (nd->nrules == 0 && !(sg->shadowed && sg->winner->nstacks > 0))
        return;
    leakgate_buf__puts(b, "    stacks:\n");
    for (size_t i = 0; i < nd->nrules; i++) {
        if (i == MAX_YAML_STACKS) {
            leakgate_buf__printf(b,
                                 "      # %zu more rules are not listed: "
                                 "with this many, a stack_limit or "
                                 "total_limit fits better\n",
                                 nd->nrules - MAX_YAML_STACKS);
            break;
        }
        yaml_rule(b, &nd->rules[i]);
    }
    yaml_carried_rules(b, sg);
}

/* The peak_limit that accepts the peak (the ratchet's: the peak plus
 * headroom), else what a shadowed entry set. */
static void
yaml_peak(struct leakgate_buf *b, const struct suggestion *sg)
{
    const struct leakgate_config_entry *w = sg->shadowed ? sg->winner : NULL;
    char num[32];

    if (sg->need.set_peak) {
        leakgate_buf__puts(b, "    peak_limit: ");
        leakgate_yamledit__put_size(
            b, leakgate_thresholds__peak_allowance(sg->need.peak_bytes));
        leakgate_buf__printf(
            b, "   # peak %s B + headroom\n",
            leakgate_report__group_u(num, sg->need.peak_bytes, false));
    } else if (w && w->has_peak_limit && w->peak_unlimited) {
        leakgate_buf__puts(b, "    peak_limit: ~\n");
    } else if (w && w->has_peak_limit) {
        yaml_size(b, "peak_limit", w->peak_limit);
    }
}

/* The limits of the entry: the measured growth where it was over, else
 * what a shadowed entry set. */
static void
yaml_limits(struct leakgate_buf *b, const struct suggestion *sg)
{
    const struct leakgate_config_entry *w = sg->shadowed ? sg->winner : NULL;
    uint64_t stack_limit = sg->need.stack_limit;

    if (sg->need.set_total)
        yaml_size(b, "total_limit", sg->need.total_limit);
    else if (w && w->has_total_limit && w->total_unlimited)
        leakgate_buf__puts(b, "    total_limit: ~\n");
    else if (w && w->has_total_limit)
        yaml_size(b, "total_limit", w->total_limit);
    if (w && w->has_stack_limit && w->stack_limit > stack_limit)
        stack_limit = w->stack_limit;
    if (sg->need.set_stack)
        leakgate_buf__puts(b, "    # a stack without function names "
                              "cannot have a rule\n");
    if (sg->need.set_stack || (w && w->has_stack_limit))
        yaml_size(b, "stack_limit", stack_limit);
    yaml_peak(b, sg);
    if (w && w->has_warmup)
        leakgate_buf__printf(b, "    warmup: %u\n", w->warmup);
    if (w && w->scope != LEAKGATE_CONFIG_SCOPE_UNSET)
        leakgate_buf__printf(b, "    scope: %s\n",
                             w->scope == LEAKGATE_CONFIG_SCOPE_SUITE ? "suite"
                                                                     : "test");
}

static void
yaml_entry(struct leakgate_buf *b, const struct suggestion *sg)
{
    const struct leakgate_config_entry *w = sg->winner;

    leakgate_buf__puts(b, sg->suite ? "suites:\n  " : "tests:\n  ");
    leakgate_thresholds__put_key(b, sg->name);
    leakgate_buf__puts(b, ":\n");
    if (sg->shadowed) {
        leakgate_buf__printf(b, "    # replaces %s \"",
                             sg->suite ? "suites" : "tests");
        put_comment(b, w->pattern);
        leakgate_buf__printf(b,
                             "\" (line %u) here: its settings are "
                             "repeated\n",
                             w->line);
    } else if (w && w->pattern) {
        leakgate_buf__printf(b,
                             "    # merge into the entry at line %u: these "
                             "values replace its own, these rules go "
                             "after its rules\n",
                             w->line);
    }
    yaml_limits(b, sg);
    yaml_rules(b, sg);
}

char *
leakgate_report__yaml(const struct leakgate_verdict *v)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    struct suggestion sg;

    if (!suggestion_init(&sg, v))
        b.failed = true;
    else if (need_adds(&sg))
        yaml_entry(&b, &sg);
    leakgate_thresholds__need_dispose(&sg.need);
    return leakgate_buf__take(&b);
}

char *
leakgate_report__raises(const struct leakgate_verdict *v)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    struct suggestion sg;

    if (!suggestion_init(&sg, v))
        b.failed = true;
    for (size_t j = 0; !b.failed && sg.need.raise && j < sg.winner->nstacks;
         j++) {
        const struct leakgate_config_stack_rule *r = &sg.winner->stacks[j];
        char human[32];

        if (sg.need.raise[j] <= r->limit)
            continue;
        leakgate_buf__printf(&b, "the limit of the stacks rule at line %u [",
                             r->line);
        for (size_t k = 0; k < r->nframes; k++)
            leakgate_buf__printf(&b, "%s%s", k ? ", " : "", r->frames[k]);
        leakgate_buf__puts(&b, "] to ");
        leakgate_yamledit__put_size(&b, sg.need.raise[j]);
        leakgate_buf__printf(
            &b, " (now %s)\n",
            leakgate_util__human_bytes(human, sizeof human, r->limit));
    }
    leakgate_thresholds__need_dispose(&sg.need);
    return leakgate_buf__take(&b);
}

/* ---- one run's YAML ---------------------------------------------------- */

/* The window prints YAML of its own (text_yaml); *yaml_out and
 * *raises_out are the caller's.  False when it prints none (or ENOMEM:
 * *failed). */
static bool
window_yaml(char **yaml_out,
            char **raises_out,
            const struct leakgate_verdict *v,
            bool *failed)
{
    *yaml_out = NULL;
    *raises_out = NULL;
    if (!leakgate_report__gate_failed(v) || v->shared_fixture)
        return false;
    *yaml_out = leakgate_report__yaml(v);
    *raises_out = leakgate_report__raises(v);
    if (!*yaml_out || !*raises_out) {
        *failed = true;
        return false;
    }
    return **yaml_out || **raises_out;
}

static bool
listed(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++) {
        if (strcmp(names[i], name) == 0)
            return true;
    }
    return false;
}

/* The entries of one section ("tests:" or "suites:"), each line indented
 * by `indent`; a suite that also gets `scope: suite` gets it inside its own
 * entry. */
struct run_section {
    struct leakgate_buf entries; /* YAML at the section's entry level */
    struct leakgate_buf raises;
    size_t count;
};

static void
put_lines(struct leakgate_buf *b, const char *text, const char *indent)
{
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");

        leakgate_buf__printf(b, "%s%.*s\n", indent, (int)len, line);
        line += len + (line[len] == '\n');
    }
}

static void
run_collect(struct run_section *sec,
            const struct leakgate_verdict *const *v,
            size_t n,
            const char *const *suites,
            size_t nsuites,
            bool *failed)
{
    for (size_t i = 0; i < n; i++) {
        char *yaml, *raises;
        bool suite = leakgate_report__suite_window(v[i]);

        /* A test that passes with one unmeasured run first: its NOTE's
         * `warmup: 1` (replay.c), not an entry accepting its growth. */
        if (!suite && leakgate_report__gate_failed(v[i]) && v[i]->hint &&
            strstr(v[i]->hint, "`warmup: 1`")) {
            sec[0].count++;
            leakgate_buf__puts(&sec[0].entries, "  ");
            leakgate_thresholds__put_key(&sec[0].entries, v[i]->name);
            leakgate_buf__puts(&sec[0].entries, ":\n    warmup: 1\n");
            continue;
        }
        if (window_yaml(&yaml, &raises, v[i], failed)) {
            sec[suite].count++;
            /* The entry without its section line. */
            leakgate_buf__puts(&sec[suite].entries,
                               yaml + strcspn(yaml, "\n") + (*yaml != '\0'));
            if (*yaml && suite && listed(suites, nsuites, v[i]->suite))
                leakgate_buf__puts(&sec[suite].entries, "    scope: suite\n");
            leakgate_buf__puts(&sec[suite].raises, raises);
        }
        leakgate_util__free(yaml);
        leakgate_util__free(raises);
    }
    for (size_t i = 0; i < nsuites; i++) {
        bool own = false;

        /* Given inside the suite window's own entry above. */
        for (size_t k = 0; k < n && !own; k++) {
            char *yaml = NULL, *raises = NULL;

            if (leakgate_report__suite_window(v[k]) && v[k]->suite &&
                strcmp(v[k]->suite, suites[i]) == 0)
                own = window_yaml(&yaml, &raises, v[k], failed) && *yaml;
            leakgate_util__free(yaml);
            leakgate_util__free(raises);
        }
        sec[1].count++;
        if (own)
            continue;
        /* As the suite's own NOTE writes it (gate.c). */
        leakgate_buf__puts(&sec[1].entries, "  '");
        for (const char *c = suites[i]; *c; c++)
            leakgate_buf__put(&sec[1].entries, *c == '\'' ? "''" : c,
                              *c == '\'' ? 2 : 1);
        leakgate_buf__puts(&sec[1].entries, "':\n    scope: suite\n");
    }
}

/* Where each section goes, and its entries, into b. */
static void
run_place(struct leakgate_buf *b,
          const struct run_section *sec,
          const struct leakgate_report_env *env)
{
    static const char *const key[2] = {"tests:", "suites:"};
    const bool has[2] = {env->has_tests, env->has_suites};
    const char *sep = "";

    if (!env->thresholds_path)
        leakgate_buf__puts(b, "create leakgate.yaml with:\n  version: 1\n");
    /* Sections the file lacks: one block at its end. */
    for (int k = 0; k < 2; k++) {
        if (!sec[k].entries.len || (env->thresholds_path && has[k]))
            continue;
        if (env->thresholds_path && !*sep)
            leakgate_buf__printf(b, "add to %s:\n", env->thresholds_path);
        sep = "and ";
        leakgate_buf__printf(b, "  %s\n", key[k]);
        put_lines(b, sec[k].entries.ptr, "  ");
    }
    /* Sections it has: under them (a second one is a duplicate key). */
    for (int k = 0; k < 2 && env->thresholds_path; k++) {
        if (!sec[k].entries.len || !has[k])
            continue;
        leakgate_buf__printf(b, "%sadd under `%s` in %s:\n", sep, key[k],
                             env->thresholds_path);
        sep = "and ";
        put_lines(b, sec[k].entries.ptr, "  ");
    }
    for (int k = 0; k < 2; k++) {
        if (!sec[k].raises.len)
            continue;
        leakgate_buf__printf(b, "%sraise in %s:\n", sep,
                             env->thresholds_path ? env->thresholds_path
                                                  : "leakgate.yaml");
        sep = "and ";
        put_lines(b, sec[k].raises.ptr, "    ");
    }
}

char *
leakgate_report__run_yaml(size_t *count_out,
                          const struct leakgate_verdict *const *v,
                          size_t n,
                          const char *const *suites,
                          size_t nsuites,
                          const struct leakgate_report_env *env)
{
    struct run_section sec[2] = {{LEAKGATE_BUF_INIT, LEAKGATE_BUF_INIT, 0},
                                 {LEAKGATE_BUF_INIT, LEAKGATE_BUF_INIT, 0}};
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    bool failed = false;

    run_collect(sec, v, n, suites, nsuites, &failed);
    *count_out = sec[0].count + sec[1].count;
    run_place(&b, sec, env);
    for (int k = 0; k < 2; k++) {
        failed |= sec[k].entries.failed || sec[k].raises.failed;
        leakgate_buf__dispose(&sec[k].entries);
        leakgate_buf__dispose(&sec[k].raises);
    }
    if (failed)
        b.failed = true;
    return leakgate_buf__take(&b);
}

char *
leakgate_report__run_document(const struct leakgate_verdict *const *v,
                              size_t n,
                              const char *const *suites,
                              size_t nsuites,
                              const struct leakgate_report_env *env)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    size_t count = 0;
    char *yaml = leakgate_report__run_yaml(&count, v, n, suites, nsuites, env);

    if (!yaml)
        return NULL;
    if (count > 0 && count == nsuites)
        leakgate_buf__printf(&b,
                             "the thresholds document of this run: to judge "
                             "the tests of the suite%s with shared fixtures "
                             "(the NOTEs above) at their suite's end, %s",
                             nsuites == 1 ? "" : "s", yaml);
    else if (count > 0)
        leakgate_buf__printf(&b,
                             "the thresholds document of this run (%s): to "
                             "accept %s growth, %s",
                             count == 1 ? "the entry of the window above"
                                        : "the entries of the windows above",
                             count == 1 ? "its" : "their", yaml);
    else
        leakgate_buf__puts(&b, "");
    leakgate_util__free(yaml);
    return leakgate_buf__take(&b);
}
