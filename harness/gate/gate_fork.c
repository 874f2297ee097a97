/* SPDX-License-Identifier: MIT */
/*
 * gate_fork: a replay measures its listed tests by ordinals, at about a
 * plain run's cost, instead of in exact windows (every allocation
 * profiled: 20-100 times a plain run for a test that allocates much).
 *
 * At a listed test's window the replay forks.  The copy runs the test in
 * a logging window (track.h, "Ordinals"): the address of every
 * allocation, in order, no stack; at its end it names the ordinals of the
 * objects the test left, writes them to a pipe and ends.  The replay,
 * still at the window's start (the copy changed nothing of it), then runs
 * the test in a selecting window: the stacks of those ordinals only.
 * From one state the test allocates in one order, so it leaves the same
 * objects, now each with its stack: the groups of what it left are the
 * exact window's growth per stack (exact mode's diff subtracts objects
 * from before the window that it frees, and those are only ever objects
 * left by an earlier measured window of the replay: the ledger, below,
 * says whether the test freed one).
 *
 * What cannot be measured this way is measured in an exact window while
 * no window of the replay was measured by ordinals; after one, the replay
 * stops there and an exact replay of the whole list follows (replay.c
 * runs it, and the glue says so: the state a test needs includes what the
 * listed tests before it left, recorded by jemalloc).  That is: a
 * process with threads (ordinals are one thread's order), settings that
 * need the exact window (a peak limit: its stacks at the peak; repeat;
 * settle; --report-dir: a failing window's artifacts are its two heap
 * profiles), a copy that did not finish (it died, exit()ed, or its log
 * overflowed), a test that freed what an earlier measured window left
 * (the ledger: those windows' objects, watched), and a selecting run that
 * did not leave what the logging run left.  Until the first window by
 * ordinals, such a window is simply measured exactly, as before.
 *
 * The copy is the replay's child (it dies with it: PR_SET_PDEATHSIG) and
 * runs the test once, as the replay does: effects outside the process (a
 * file, a port) happen once more, as with any replay (docs/cli.md).  Its
 * output goes where the replay's goes (replay.log, not shown).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "gate.h"
#include "policy.h"
#include "replay.h"
#include "track.h"
#include "track_hot.h"
#include "util.h"

/* What the logging copy hands over. */
struct logged {
    uint64_t magic;     /* LOGGED_MAGIC: a whole record */
    uint64_t ok;        /* 1: the ordinals follow */
    uint64_t live_objs; /* what it left (the tracker's counts) */
    uint64_t live_bytes;
    uint64_t ledger_freed; /* ledger objects freed, counted at its end */
    uint64_t n;            /* ordinals */
};
#define LOGGED_MAGIC UINT64_C(0x6c67666f726b0001)

/* Whether a window of this test can be measured by ordinals at all. */
static bool
eligible(const struct leakgate_gate *gate, const char *suite, const char *test)
{
    struct leakgate_policy_settings set;

    /* Its artifacts do not need an exact window: their heap pair is
     * written from its stacks (gate_results.c). */
    if (gate->replay.all_exact || !leakgate_track__installed() ||
        !leakgate_track__alone())
        return false;
    leakgate_gate__resolve_window(&set, gate, suite, test);
    return !set.peak_limited && set.repeat <= 1 && set.settle_ms == 0 &&
           !set.suite_scope;
}

static int
write_all(int fd, const void *p, size_t n)
{
    const char *c = p;

    while (n > 0) {
        ssize_t w = write(fd, c, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static ssize_t
read_all(int fd, void *p, size_t n)
{
    char *c = p;
    size_t got = 0;

    while (got < n) {
        ssize_t r = read(fd, c + got, n - got);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

_Noreturn void
leakgate_gate__fork_child_end(struct leakgate_gate *gate)
{
    struct logged h = {LOGGED_MAGIC, 0, 0, 0, 0, 0};
    struct leakgate_track_result r;
    uint64_t *ords = NULL;
    size_t n = 0;
    int fd = gate->replay.log_fd - 1;

    leakgate_gate__meter_stop(gate);
    /* A thread the test started allocates in no fixed order, and exact
     * windows say which thread allocated what: an exact replay. */
    if (leakgate_track__end(&r) == 0 && r.foreign_allocs == 0 &&
        leakgate_track__alone() &&
        leakgate_track__left_ordinals(&ords, &n) == 0) {
        h.ok = 1;
        h.live_objs = r.live_objs;
        h.live_bytes = r.live_bytes;
        h.ledger_freed = leakgate_gate__ledger_freed(gate);
        h.n = n;
    }
    if (write_all(fd, &h, sizeof h) == 0 && h.ok)
        (void)write_all(fd, ords, n * sizeof *ords);
    _exit(0);
}

/* The logging copy's answer: its record and ordinals (*ords_out:
 * leakgate_util__free()), or false when it has none. */
static bool
take_logged(int fd, pid_t pid, struct logged *h, uint64_t **ords_out)
{
    uint64_t *ords = NULL;
    int status = 0;
    bool ok = read_all(fd, h, sizeof *h) == (ssize_t)sizeof *h &&
              h->magic == LOGGED_MAGIC && h->ok == 1 && h->n == h->live_objs &&
              h->n < ((size_t)1 << 40);

    if (ok) {
        ords = leakgate_util__calloc(h->n ? h->n : 1, sizeof *ords);
        ok = ords && read_all(fd, ords, h->n * sizeof *ords) ==
                         (ssize_t)(h->n * sizeof *ords);
    }
    close(fd);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        leakgate_util__free(ords);
        return false;
    }
    *ords_out = ords;
    return true;
}

/* ---- Ordinals from the first pass ----
 *
 * The replay is a fresh process that runs the same tests in the same
 * order, so a listed test starts its window from the state it had in the
 * first process, and allocates in the same order there: the ordinals of
 * what its first pass left (the first pass's allocation log, track.h)
 * are the ones its selecting window needs, with no logging copy.  The
 * selecting window checks it as it checks a copy's ordinals (gate_fast.c,
 * faithful()): what it left must be what the first pass left, every
 * object with its stack, no ledger object freed; a test whose allocations
 * depend on something else (the time, a file an earlier run wrote) fails
 * that check and goes to the exact replay, as a copy that disagreed did.
 *
 * The file: FIRST_MAGIC, then per window its sizes (suite, test, live
 * objects, live bytes, ordinals), the two names and the ordinals. */
#define FIRST_MAGIC UINT64_C(0x6c67666972737401)

void
leakgate_gate__fork_first_note(struct leakgate_gate *gate,
                               const char *suite,
                               const char *test,
                               const struct leakgate_track_result *r)
{
    struct gate_first *f = NULL, *grown;
    uint64_t *ords = NULL;
    size_t n = 0;

    if (gate->replay.child || !leakgate_track__alone() ||
        r->foreign_allocs != 0 || r->live_objs == 0)
        return;
    for (size_t i = 0; i < gate->replay.nfirst; i++) {
        f = &gate->replay.first[i];
        if (strcmp(f->suite, suite) == 0 && strcmp(f->test, test) == 0) {
            f->twice = true; /* which window the replay's is: unknown */
            return;
        }
    }
    if (leakgate_track__first_left_ordinals(&ords, &n) != 0 ||
        n != r->live_objs) {
        leakgate_error__clear();
        leakgate_util__free(ords);
        return;
    }
    grown = leakgate_util__realloc(gate->replay.first,
                                   (gate->replay.nfirst + 1) * sizeof *grown);
    if (!grown) {
        leakgate_util__free(ords);
        return;
    }
    gate->replay.first = grown;
    f = &grown[gate->replay.nfirst];
    memset(f, 0, sizeof *f);
    f->suite = leakgate_util__strdup(suite);
    f->test = leakgate_util__strdup(test);
    f->ords = ords;
    f->n = n;
    f->live_objs = r->live_objs;
    f->live_bytes = r->live_bytes;
    if (!f->suite || !f->test) {
        leakgate_util__free(f->suite);
        leakgate_util__free(f->test);
        leakgate_util__free(ords);
        return;
    }
    gate->replay.nfirst++;
}

int
leakgate_gate__fork_first_write(const struct leakgate_gate *gate,
                                const char *path)
{
    uint64_t magic = FIRST_MAGIC;
    int fd, rc = 0;

    if (gate->replay.nfirst == 0)
        return 0;
    fd =
        open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || write_all(fd, &magic, sizeof magic) != 0)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < gate->replay.nfirst; i++) {
        const struct gate_first *f = &gate->replay.first[i];
        uint64_t h[5] = {strlen(f->suite), strlen(f->test), f->live_objs,
                         f->live_bytes, f->n};

        if (f->twice)
            continue;
        if (write_all(fd, h, sizeof h) != 0 ||
            write_all(fd, f->suite, h[0]) != 0 ||
            write_all(fd, f->test, h[1]) != 0 ||
            write_all(fd, f->ords, f->n * sizeof *f->ords) != 0)
            rc = -1;
    }
    if (fd >= 0 && close(fd) != 0)
        rc = -1;
    if (rc < 0) {
        (void)unlink(path); /* the replay runs logging copies */
        return leakgate_error__set(LEAKGATE_EIO, "replay: %s: %s", path,
                                   strerror(errno));
    }
    return 0;
}

/* One window's entry of the file at fd into *f; false at its end or on a
 * malformed entry. */
static bool
read_first(int fd, struct gate_first *f)
{
    uint64_t h[5];

    memset(f, 0, sizeof *f);
    if (read_all(fd, h, sizeof h) != (ssize_t)sizeof h || h[0] > 65536 ||
        h[1] > 65536 || h[4] != h[2] || h[4] == 0 ||
        h[4] >= (UINT64_C(1) << 32))
        return false;
    f->suite = leakgate_util__calloc(1, (size_t)h[0] + 1);
    f->test = leakgate_util__calloc(1, (size_t)h[1] + 1);
    f->ords = leakgate_util__calloc((size_t)h[4], sizeof *f->ords);
    f->n = (size_t)h[4];
    f->live_objs = h[2];
    f->live_bytes = h[3];
    if (f->suite && f->test && f->ords &&
        read_all(fd, f->suite, (size_t)h[0]) == (ssize_t)h[0] &&
        read_all(fd, f->test, (size_t)h[1]) == (ssize_t)h[1] &&
        read_all(fd, f->ords, f->n * sizeof *f->ords) ==
            (ssize_t)(f->n * sizeof *f->ords))
        return true;
    leakgate_util__free(f->suite);
    leakgate_util__free(f->test);
    leakgate_util__free(f->ords);
    return false;
}

void
leakgate_gate__fork_first_read(struct leakgate_gate *gate, const char *path)
{
    uint64_t magic = 0;
    struct gate_first f, *grown;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

    if (fd < 0)
        return;
    if (read_all(fd, &magic, sizeof magic) == (ssize_t)sizeof magic &&
        magic == FIRST_MAGIC) {
        while (read_first(fd, &f)) {
            grown = leakgate_util__realloc(
                gate->replay.first, (gate->replay.nfirst + 1) * sizeof *grown);
            if (!grown) {
                leakgate_util__free(f.suite);
                leakgate_util__free(f.test);
                leakgate_util__free(f.ords);
                break;
            }
            gate->replay.first = grown;
            grown[gate->replay.nfirst++] = f;
        }
    }
    close(fd);
}

void
leakgate_gate__fork_first_free(struct leakgate_gate *gate)
{
    for (size_t i = 0; i < gate->replay.nfirst; i++) {
        leakgate_util__free(gate->replay.first[i].suite);
        leakgate_util__free(gate->replay.first[i].test);
        leakgate_util__free(gate->replay.first[i].ords);
    }
    leakgate_util__free(gate->replay.first);
    gate->replay.first = NULL;
    gate->replay.nfirst = 0;
}

/* The first pass's ordinals of suite/test, taken (used once), or NULL. */
static struct gate_first *
first_of(struct leakgate_gate *gate, const char *suite, const char *test)
{
    for (size_t i = 0; i < gate->replay.nfirst; i++) {
        struct gate_first *f = &gate->replay.first[i];

        if (f->ords && !f->twice && strcmp(f->suite, suite) == 0 &&
            strcmp(f->test, test) == 0)
            return f;
    }
    return NULL;
}

/* In the copy: its window logs (the caller opens it). */
static int
plan_logging(struct leakgate_gate *gate, int fd)
{
    /* It must not outlive the replay, nor write the replay's results. */
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        _exit(1);
    gate->replay.log_fd = fd + 1;
    if (leakgate_track__stacks_log() < 0)
        _exit(1);
    return LEAKGATE_GATE__FORK_LOGGING;
}

/* A window deferred to the exact replay: a tracker window with no
 * stacks, so that the test's glue opens and closes it as any other. */
static int
plan_deferred(void)
{
    int rc = leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE);

    return rc < 0 ? rc : LEAKGATE_GATE__FORK_DEFERRED;
}

int
leakgate_gate__fork_plan(struct leakgate_gate *gate,
                         const char *suite,
                         const char *test)
{
    struct logged h;
    struct gate_first *first;
    uint64_t *ords = NULL;
    uint64_t freed0 = leakgate_gate__ledger_freed(gate);
    int fds[2], rc;
    pid_t pid;

    if (!eligible(gate, suite, test) || freed0 == UINT64_MAX)
        goto not_here;
    first = gate->replay.warmup ? NULL : first_of(gate, suite, test);
    if (first) {
        /* Its first pass's ordinals: no logging copy (above). */
        rc = leakgate_track__stacks_select(first->ords, first->n);
        leakgate_util__free(first->ords);
        first->ords = NULL;
        if (rc < 0)
            return rc;
        gate->replay.plan.live_objs = first->live_objs;
        gate->replay.plan.live_bytes = first->live_bytes;
        gate->replay.plan_ledger = freed0;
        gate->replay.by_ordinals = true;
        return LEAKGATE_GATE__FORK_ORDINALS;
    }
    if (pipe(fds) != 0)
        goto not_here;
    /* Nothing buffered is written twice. */
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        goto not_here;
    }
    if (pid == 0) {
        close(fds[0]);
        return plan_logging(gate, fds[1]);
    }
    close(fds[1]);
    /* Nothing left (another allocator served the test: the tracker saw
     * no size), or freed what an earlier measured window left (exact
     * mode subtracts it from that window's stacks, this window cannot). */
    if (!take_logged(fds[0], pid, &h, &ords) || h.live_objs == 0 ||
        h.ledger_freed != freed0) {
        leakgate_util__free(ords);
        goto not_here;
    }
    rc = leakgate_track__stacks_select(ords, h.n);
    leakgate_util__free(ords);
    if (rc < 0)
        return rc;
    gate->replay.plan.live_objs = h.live_objs;
    gate->replay.plan.live_bytes = h.live_bytes;
    gate->replay.plan_ledger = freed0;
    gate->replay.by_ordinals = true;
    return LEAKGATE_GATE__FORK_ORDINALS;
not_here:
    /* Measured exactly, as before, until a window was measured by
     * ordinals: the exact window could not subtract what it frees of
     * theirs (jemalloc never recorded it).  A lean replay has no exact
     * window. */
    return gate->replay.by_ordinals || gate->lean ? plan_deferred()
                                                  : LEAKGATE_GATE__FORK_EXACT;
}

int
leakgate_gate__fork_defer(struct leakgate_gate *gate)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    int fd, rc = 0;

    /* The replay stops here (leakgate_gate_replay_done()): an exact one
     * measures the whole list again, and nothing waits for the run's end
     * (gate_late.c). */
    gate->replay.measured = gate->replay.n;
    leakgate_gate__late_free(gate);
    if (!gate->replay.deferred_path)
        return leakgate_error__set(LEAKGATE_EIO, "replay: no deferred list");
    leakgate_util__name_escape(&b, gate->cur.suite);
    leakgate_buf__puts(&b, "\t");
    leakgate_util__name_escape(&b, gate->cur.test);
    leakgate_buf__puts(&b, "\n");
    fd = open(gate->replay.deferred_path,
              O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (b.failed || fd < 0 || write_all(fd, b.ptr, b.len) != 0)
        rc = leakgate_error__set(LEAKGATE_EIO, "replay: %s: %s",
                                 gate->replay.deferred_path, strerror(errno));
    if (fd >= 0)
        close(fd);
    leakgate_buf__dispose(&b);
    return rc;
}

void
leakgate_gate__fork_ledger(struct leakgate_gate *gate)
{
    /* The last listed test's objects matter to no later window. */
    if (!gate->replay.child || gate->replay.all_exact ||
        gate->replay.measured + 1 >= gate->replay.n)
        return;
    if (leakgate_track__watch_left(LEAKGATE_GATE__LEDGER) == 0)
        gate->replay.ledger = true;
}

/* ---- The warm-up probe's question, answered by a copy ----
 *
 * Would one unmeasured run first make a failing test pass (its growth
 * made once)?  The probe (replay.c) answers it in a replay of its own;
 * here a copy of the replay, forked when the test's window has closed,
 * runs the test once more from that state, in a fast window (the state
 * the probe's measured run starts from: the test ran once).  It left
 * nothing, or only stacks within its limits: made once.  The answer, one
 * line "0|1\tSUITE\tTEST" per test, goes to the list's ".probe" twin,
 * which the first process reads with the results (replay.c).
 *
 * A failing window whose stacks over their limits are those of an earlier
 * window of this replay, frame for frame (but for the test's own
 * function), with the same bytes and objects (tests that fail through one
 * shared helper), takes that window's answer when its copy found the
 * growth made again: the same code left the same objects, and a second
 * run of the test is not spent on advice.  An answer "made once" is
 * never taken from another test: each such test is asked itself. */

/* The probe's question applies (replay.c's may_warm_up() says the
 * rest, in the first process). */
static bool
probe_wanted(const struct leakgate_gate *gate, const struct leakgate_verdict *v)
{
    return gate->replay.child && !gate->replay.warmup && !gate->replay.log_fd &&
           !gate->replay.probe_fd && gate->replay.probe_path && v &&
           v->status == LEAKGATE_STATUS_FAIL && v->nstacks > 0 &&
           strcmp(v->test, "[suite]") != 0 && v->settings.warmup == 0 &&
           v->settings.repeat <= 1 && !v->settings.suite_scope &&
           !v->settings.peak_limited && leakgate_track__installed() &&
           leakgate_track__alone();
}

/* The frames of s at pc (innermost first: the functions inlined there,
 * then the one the pc is in), *n of them; NULL when s has none. */
static const struct leakgate_frame *
frames_at(const struct leakgate_vstack *s, uintptr_t pc, size_t *n)
{
    size_t k = 0;

    while (k < s->nframes && s->frames[k].pc != pc)
        k++;
    *n = 0;
    while (k + *n < s->nframes && s->frames[k + *n].pc == pc)
        (*n)++;
    return *n ? &s->frames[k] : NULL;
}

static bool
same_text(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* The frames two tests' own functions show at their call into the helper
 * (pcs pa and pb) are the same but for the functions themselves: the
 * same functions inlined there, at the same lines; *inlined_out: how
 * many. */
static bool
same_inlined(const struct leakgate_vstack *a,
             uintptr_t pa,
             const struct leakgate_vstack *b,
             uintptr_t pb,
             size_t *inlined_out)
{
    size_t na, nb;
    const struct leakgate_frame *fa = frames_at(a, pa, &na);
    const struct leakgate_frame *fb = frames_at(b, pb, &nb);

    *inlined_out = 0;
    if (!fa || !fb || na != nb)
        return false;
    for (size_t k = 0; k + 1 < na; k++) {
        if (!same_text(fa[k].function, fb[k].function) ||
            !same_text(fa[k].file, fb[k].file) || fa[k].line != fb[k].line)
            return false;
    }
    *inlined_out = na - 1;
    return true;
}

/* Stacks a and b are one path into a shared helper: the same bytes and
 * objects, the same frames but for the test's own function.  A stack
 * ends at the runner's frame, the same in every test; the test's own
 * function is the frame the runner called (gone where the test
 * tail-called the helper), and may differ when at least two frames below
 * it are the same (one, the allocating function, would match any two
 * tests that call a project's allocation wrapper themselves): other
 * functions' frames, or functions inlined into the test's at its call. */
static bool
same_stack(const struct leakgate_vstack *a, const struct leakgate_vstack *b)
{
    size_t n = a->npcs, inlined = 0;

    if (n == 0 || n != b->npcs || a->bytes != b->bytes || a->objs != b->objs)
        return false;
    for (size_t k = 0; k < n; k++) {
        if (a->pcs[k] != b->pcs[k] && (n < 3 || k != n - 2))
            return false;
    }
    if (n < 3 || a->pcs[n - 2] == b->pcs[n - 2])
        return true;
    if (!a->frames || !b->frames) /* not symbolized: the pcs alone */
        return n >= 4;
    return same_inlined(a, a->pcs[n - 2], b, b->pcs[n - 2], &inlined) &&
           (n - 2) + inlined >= 2;
}

/* The stacks over their limits in u are those of v (none left out). */
static bool
same_failure(const struct leakgate_verdict *u, const struct leakgate_verdict *v)
{
    size_t nu = 0, nv = 0;

    if (u->omitted_stacks > 0 || v->omitted_stacks > 0)
        return false;
    for (size_t i = 0; i < v->nstacks; i++) {
        bool found = false;

        if (!v->stacks[i].judgement.over)
            continue;
        nv++;
        for (size_t k = 0; !found && k < u->nstacks; k++)
            found = u->stacks[k].judgement.over &&
                    same_stack(&u->stacks[k], &v->stacks[i]);
        if (!found)
            return false;
    }
    for (size_t k = 0; k < u->nstacks; k++)
        nu += u->stacks[k].judgement.over;
    return nv > 0 && nu == nv;
}

/* An earlier window of this replay whose copy found its growth made
 * again, failing as v does (the comment above). */
static bool
made_again_before(const struct leakgate_gate *gate,
                  const struct leakgate_verdict *v)
{
    for (size_t i = 0; i < gate->nverdicts; i++) {
        const struct leakgate_verdict *u = gate->verdicts[i];

        if (u != v && u->probe_known && !u->made_once && same_failure(u, v))
            return true;
    }
    return false;
}

/* The replay's record of v's answer, for made_again_before(). */
static void
remember_answer(struct leakgate_gate *gate,
                const struct leakgate_verdict *v,
                bool once)
{
    struct leakgate_verdict *w =
        leakgate_gate__find_verdict(gate, v->suite, v->test);

    if (w) {
        w->probe_known = true;
        w->made_once = once;
    }
}

/* Append the answer for suite/test to the ".probe" twin. */
static void
note_probe(const struct leakgate_gate *gate,
           const struct leakgate_verdict *v,
           bool once)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    int fd;

    leakgate_buf__puts(&b, once ? "1\t" : "0\t");
    leakgate_util__name_escape(&b, v->suite);
    leakgate_buf__puts(&b, "\t");
    leakgate_util__name_escape(&b, v->test);
    leakgate_buf__puts(&b, "\n");
    fd = open(gate->replay.probe_path,
              O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0 && !b.failed)
        (void)write_all(fd, b.ptr, b.len);
    if (fd >= 0)
        close(fd);
    leakgate_buf__dispose(&b);
}

int
leakgate_gate_probe_copy(leakgate_gate *gate, const leakgate_verdict *v)
{
    int fds[2], rc;
    char answer = 0;
    pid_t pid;

    if (!probe_wanted(gate, v))
        return 0;
    if (made_again_before(gate, v)) {
        note_probe(gate, v, false);
        remember_answer(gate, v, false);
        return 0;
    }
    if (pipe(fds) != 0)
        return 0;
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1)
            _exit(1);
        gate->replay.probe_fd = fds[1] + 1;
        rc = leakgate_gate__fast_open(gate, v->suite, v->test, false);
        if (rc < 0)
            _exit(1);
        return 1;
    }
    close(fds[1]);
    rc = read_all(fds[0], &answer, 1) == 1;
    close(fds[0]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    /* No answer (the copy died): the first process probes. */
    if (rc) {
        note_probe(gate, v, answer == '1');
        remember_answer(gate, v, answer == '1');
    }
    return 0;
}

_Noreturn void
leakgate_gate__probe_answer(struct leakgate_gate *gate, bool once)
{
    char answer = once ? '1' : '0';

    if (gate->replay.probe_fd > 0)
        (void)write_all(gate->replay.probe_fd - 1, &answer, 1);
    _exit(0);
}
