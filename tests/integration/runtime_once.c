/* SPDX-License-Identifier: MIT */
/*
 * runtime_once: the evidence behind each entry of the built-in ignore list
 * (harness/policy.c).  For every C runtime call in the table it opens two
 * windows with the core API and calls it in both.  It checks that:
 *   - the first window grows, and only by stacks a built-in entry ignores
 *     (so with `builtin_ignore: true` the window passes);
 *   - the second window retains nothing more (its stacks sum to <= 0 B:
 *     the runtime keeps one copy, replacing rather than adding).
 * Run with `--off FILE.yaml` (builtin_ignore: false) it checks instead that
 * the first window fails: the built-in list is what makes it pass.
 * Either way, the callers' leaks that pass through the runtime (a library
 * constructor dlopen runs, a function of the program named like a runtime
 * entry point) must fail: the list matches the runtime's own allocations
 * only.
 * Prints one line per case and "N passed, N failed"; exit 0 when all pass.
 */
#include <dlfcn.h>
#include <locale.h>
#include <pthread.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leakgate/leakgate.h"
#include "verdict.h"

struct once_case {
    const char *name;
    void (*call)(void);
};

static void *volatile sink;

static void
first_output(void)
{
    /* Nothing has been written to stdout before the first window. */
    fputs("", stdout);
    printf("runtime_once: stdout buffer\n");
}

static void
time_zone(void)
{
    time_t t = 86400;
    struct tm *tm = localtime(&t);

    sink = tm;
}

static void *
nothing(void *arg)
{
    return arg;
}

static void
thread_create(void)
{
    pthread_t t;

    if (pthread_create(&t, NULL, nothing, NULL) == 0)
        pthread_join(t, NULL);
}

static void
locale_load(void)
{
    sink = setlocale(LC_ALL, "C.UTF-8");
}

static void
dl_error(void)
{
    sink = dlopen("libleakgate-no-such-library.so", RTLD_NOW);
    sink = dlerror();
}

static void
passwd_lookup(void)
{
    sink = getpwnam("root");
}

/* The process's first dlopen of a library (nothing else has loaded one:
 * this is the first case, and leakgate loads libdw only when the first
 * window ends). */
static void
first_dlopen(void)
{
    void *h = dlopen(CORPUS_EMPTY_LIB, RTLD_NOW);

    if (h)
        dlclose(h);
}

static void
ctor_dlclose(void)
{
    void *h = dlopen(CORPUS_CTOR_LIB, RTLD_NOW);

    if (h)
        dlclose(h);
}

static void
ctor_kept(void)
{
    sink = dlopen(CORPUS_CTOR_LIB, RTLD_NOW);
}

/* A function of the program whose name a built-in glob (*localtime*)
 * would match. */
__attribute__((noinline)) static void *
format_localtime(void)
{
    return malloc(24);
}

static void
named_like_runtime(void)
{
    sink = format_localtime();
}

/* Callers' leaks: each must fail, with this function in its stacks. */
static const struct caller_case {
    const char *name;
    void (*call)(void);
    const char *function;
} callers[] = {
    /* unloaded before the report: its own frame has no name, the
     * dynamic linker's call_init that ran it has */
    {"a library constructor run by dlopen, then dlclose", ctor_dlclose,
     "call_init"},
    {"a library constructor run by dlopen, library kept", ctor_kept,
     "corpus_ctor_leak"},
    {"a program function named like a runtime entry point", named_like_runtime,
     "format_localtime"},
};

static const struct once_case cases[] = {
    {"dlopen's object table (first dlopen + dlclose)", first_dlopen},
    {"stdio buffer (first output to stdout)", first_output},
    {"time-zone data (localtime)", time_zone},
    {"thread descriptor (pthread_create + join)", thread_create},
    {"locale data (setlocale)", locale_load},
    {"dlerror state (failed dlopen + dlerror)", dl_error},
    {"NSS (getpwnam)", passwd_lookup},
};

#define NCASES (sizeof cases / sizeof cases[0])

/* Grown stacks of v: how many, and how many of them a built-in ignores;
 * the net bytes over every stack. */
static int64_t
count_grown(const leakgate_verdict *v, size_t *grown, size_t *builtin)
{
    int64_t net = 0;

    *grown = *builtin = 0;
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        net += s->bytes;
        if (s->bytes <= 0)
            continue;
        (*grown)++;
        if (s->judgement.ignored && s->judgement.ignore &&
            s->judgement.ignore->line == 0)
            (*builtin)++;
    }
    return net;
}

static void
print_grown(const leakgate_verdict *v)
{
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        if (s->bytes <= 0)
            continue;
        fprintf(stderr, "  grew %lld B:", (long long)s->bytes);
        for (size_t k = 0; k < s->nframes && k < 8; k++)
            fprintf(stderr, " %s",
                    s->frames[k].function ? s->frames[k].function : "??");
        fputc('\n', stderr);
    }
}

static int
window(leakgate_gate *gate,
       const struct once_case *c,
       const char *test,
       const leakgate_verdict **out)
{
    if (leakgate_gate_begin(gate, "runtime_once", test) < 0)
        return -1;
    c->call();
    return leakgate_gate_end(gate, 1, out);
}

static int
check_case(leakgate_gate *gate,
           const struct once_case *c,
           int off,
           char *why,
           size_t whysz)
{
    const leakgate_verdict *first, *second;
    size_t grown, builtin, grown2, builtin2;
    int64_t net2;

    if (window(gate, c, "first", &first) < 0 ||
        window(gate, c, "second", &second) < 0) {
        snprintf(why, whysz, "gate: %s", leakgate_error_last());
        return -1;
    }
    count_grown(first, &grown, &builtin);
    net2 = count_grown(second, &grown2, &builtin2);
    if (grown == 0)
        snprintf(why, whysz, "the first call allocated nothing that stayed");
    else if (net2 > 0 || (!off && builtin2 != grown2)) {
        snprintf(why, whysz, "the second call retained %lld B more",
                 (long long)net2);
        print_grown(second);
    } else if (!off && builtin != grown)
        snprintf(why, whysz, "%zu of %zu grown stacks not built-in ignored",
                 grown - builtin, grown);
    else if (!off && leakgate_verdict_status(first) != LEAKGATE_STATUS_PASS)
        snprintf(why, whysz, "the first window did not pass");
    else if (off && leakgate_verdict_status(first) != LEAKGATE_STATUS_FAIL)
        snprintf(why, whysz, "with builtin_ignore: false it did not fail");
    else
        return 0;
    fputs(leakgate_verdict_report(first), stderr);
    return -1;
}

static bool
has_function(const leakgate_verdict *v, const char *fn)
{
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        for (size_t k = 0;
             s->bytes > 0 && !s->judgement.ignored && k < s->nframes; k++) {
            if (s->frames[k].function && strcmp(s->frames[k].function, fn) == 0)
                return true;
        }
    }
    return false;
}

static int
check_caller(leakgate_gate *gate,
             const struct caller_case *c,
             char *why,
             size_t whysz)
{
    const leakgate_verdict *v;

    if (leakgate_gate_begin(gate, "runtime_once", c->name) < 0)
        goto gate_error;
    c->call();
    if (leakgate_gate_end(gate, 1, &v) < 0)
        goto gate_error;
    if (leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL &&
        has_function(v, c->function))
        return 0;
    snprintf(why, whysz, "did not fail on a stack through %s", c->function);
    print_grown(v);
    return -1;
gate_error:
    snprintf(why, whysz, "gate: %s", leakgate_error_last());
    return -1;
}

int
main(int argc, char **argv)
{
    struct leakgate_gate_options opts = LEAKGATE_GATE_OPTIONS_INIT;
    leakgate_gate *gate;
    int off = argc == 3 && strcmp(argv[1], "--off") == 0;
    size_t passed = 0, failed = 0;
    char why[256], lines[NCASES][320];

    opts.thresholds_path = off ? argv[2] : NULL;
    opts.color = 0;
    if (leakgate_gate_new(&gate, &opts) < 0) {
        fprintf(stderr, "runtime_once: %s\n", leakgate_error_last());
        return 3;
    }
    /* The lines are printed after every case ran: nothing may reach
     * stdout before the stdio case's window. */
    for (size_t i = 0; i < NCASES; i++) {
        int rc = check_case(gate, &cases[i], off, why, sizeof why);

        snprintf(lines[i], sizeof lines[i], "%s: %s%s%s",
                 rc == 0 ? "ok" : "FAIL", cases[i].name, rc == 0 ? "" : ": ",
                 rc == 0 ? "" : why);
        rc == 0 ? passed++ : failed++;
    }
    for (size_t i = 0; i < NCASES; i++)
        printf("%s\n", lines[i]);
    for (size_t i = 0; i < sizeof callers / sizeof callers[0]; i++) {
        int rc = check_caller(gate, &callers[i], why, sizeof why);

        printf("%s: %s fails%s%s\n", rc == 0 ? "ok" : "FAIL", callers[i].name,
               rc == 0 ? "" : ": ", rc == 0 ? "" : why);
        rc == 0 ? passed++ : failed++;
    }
    printf("%zu passed, %zu failed\n", passed, failed);
    leakgate_gate_free(gate);
    return failed ? 1 : 0;
}
