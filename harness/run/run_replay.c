/* SPDX-License-Identifier: MIT */
/*
 * run_replay: the replay `leakgate run` runs itself (run_proto.h,
 * leakgate_run__replay_waiting()).  The program's interposer replays the
 * tests whose fast first pass left memory at the last suite's cleanup, or
 * when the program dies of a signal it can catch; a program killed by
 * SIGKILL (ctest's TIMEOUT, the OOM killer, a test that kills its own
 * process) never gets there, and the tests before it would stay not
 * judged.  Their records say they wait ("w", run_proto.h): this file
 * writes their names to a list in a scratch directory, starts the program
 * again with the interposer and jemalloc preloaded and $LEAKGATE_REPLAY
 * naming the list (the same replay the program would have started:
 * replay.h, in a scratch directory of leakgate_replay__make_scratch()),
 * with stdout on /dev/null and stderr into the scratch directory's log,
 * waits as the program would (leakgate_replay__wait(): the replay timeout
 * of silence, progress lines), then reads its results file and
 * puts each measured verdict in its record.  The scratch directory is
 * removed, or kept and named when the replay failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "files.h"
#include "options.h"
#include "replay.h"
#include "report.h"
#include "results.h"
#include "run_proto.h"
#include "util.h"

struct scratch {
    struct leakgate_buf dir, list, json, log;
};

static void
scratch_done(struct scratch *s, bool keep)
{
    const char *files[] = {s->list.ptr, s->json.ptr, s->log.ptr};

    for (size_t i = 0; !keep && i < 3; i++) {
        if (files[i])
            unlink(files[i]);
    }
    if (!keep && s->dir.ptr)
        rmdir(s->dir.ptr);
    leakgate_buf__dispose(&s->dir);
    leakgate_buf__dispose(&s->list);
    leakgate_buf__dispose(&s->json);
    leakgate_buf__dispose(&s->log);
}

/* The scratch directory and the list of the waiting tests, one
 * "SUITE\tTEST" line each, names escaped as the replay reads them. */
static int
scratch_make(struct scratch *s, const struct leakgate_run *r)
{
    struct leakgate_buf names = LEAKGATE_BUF_INIT;
    int rc;

    memset(s, 0, sizeof *s);
    rc = leakgate_replay__make_scratch(&s->dir);
    if (rc < 0)
        return rc;
    leakgate_buf__printf(&s->list, "%s/list", s->dir.ptr);
    leakgate_buf__printf(&s->json, "%s/list.json", s->dir.ptr);
    leakgate_buf__printf(&s->log, "%s/replay.log", s->dir.ptr);
    for (size_t i = 0; i < r->ncases; i++) {
        if (!r->cases[i].waiting)
            continue;
        leakgate_util__name_escape(&names, r->cases[i].suite);
        leakgate_buf__puts(&names, "\t");
        leakgate_util__name_escape(&names, r->cases[i].test);
        leakgate_buf__puts(&names, "\n");
    }
    if (s->list.failed || s->json.failed || s->log.failed || names.failed)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "replay");
    else
        rc = leakgate_files__write(NULL, s->list.ptr, names.ptr, names.len, 0);
    leakgate_buf__dispose(&names);
    return rc;
}

/* Start the replay: stdin and stdout on /dev/null, stderr into the log,
 * the beat pipe's write end inherited. */
static int
start(pid_t *pid,
      const struct leakgate_run *r,
      char *const *argv,
      char *const *envp,
      const char *log,
      int beat)
{
    posix_spawn_file_actions_t fa;
    int rc;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(
        &fa, 2, log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    (void)fcntl(beat, F_SETFD, 0);
    rc = posix_spawn(pid, r->program, &fa, NULL, argv, envp);
    (void)fcntl(beat, F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return leakgate_error__set(LEAKGATE_EIO, "cannot start %s: %s",
                                   r->program, strerror(rc));
    return 0;
}

/* The replay's verdict of suite/test, measured (NULL: none). */
static const struct leakgate_verdict *
find(const leakgate_results *res, const char *suite, const char *test)
{
    for (size_t i = 0; i < res->n; i++) {
        const struct leakgate_verdict *v = res->v[i];

        if (v->measured && v->status != LEAKGATE_STATUS_NOT_JUDGED &&
            strcmp(v->suite, suite) == 0 && strcmp(v->test, test) == 0)
            return v;
    }
    return NULL;
}

/* The run's thresholds document for the verdicts the replay gave (the
 * program, dead, printed none): their reports say it holds their
 * entries. */
static int
document(const struct leakgate_verdict **taken,
         size_t n,
         const leakgate_results *res)
{
    char *text = leakgate_report__run_document(
        (const struct leakgate_verdict *const *)taken, n, NULL, 0, &res->env);

    if (!text)
        return leakgate_error__set(LEAKGATE_ENOMEM, "thresholds document");
    if (*text)
        fprintf(stderr, "leakgate: %s", text);
    leakgate_util__free(text);
    return 0;
}

/* Put the replay's verdicts in the waiting records. */
static int
take(struct leakgate_run *r, const leakgate_results *res, size_t *taken)
{
    const struct leakgate_verdict **given =
        leakgate_util__calloc(r->ncases + 1, sizeof *given);

    *taken = 0;
    if (!given)
        return leakgate_error__set(LEAKGATE_ENOMEM, "replay");
    for (size_t i = 0; i < r->ncases; i++) {
        struct leakgate_run_case *c = &r->cases[i];
        const struct leakgate_verdict *v =
            c->waiting ? find(res, c->suite, c->test) : NULL;
        struct leakgate_run_pieces p;

        if (!v)
            continue;
        if (leakgate_run__pieces(&p, v, &res->env) < 0) {
            leakgate_util__free(given);
            return LEAKGATE_ENOMEM;
        }
        leakgate_run__pieces_dispose(&c->pieces);
        c->pieces = p;
        c->status = v->status;
        c->failed = v->status == LEAKGATE_STATUS_FAIL || v->nnotes > 0;
        c->waiting = false;
        if (v->report && *v->report)
            fprintf(stderr, "\n%s", v->report);
        given[(*taken)++] = v;
    }
    {
        int rc = document(given, *taken, res);

        leakgate_util__free(given);
        return rc;
    }
}

int
leakgate_run__replay_waiting(struct leakgate_run *r,
                             char *const *argv,
                             const char *preload,
                             const char *jemalloc)
{
    bool died = WIFSIGNALED(r->wait_status);
    bool early = WIFEXITED(r->wait_status) && r->in_run;
    struct leakgate_run_envp env = {NULL, 0, 0, false};
    struct scratch s;
    leakgate_results *res = NULL;
    unsigned int timeout_s = LEAKGATE_REPLAY_TIMEOUT_DEFAULT;
    size_t waiting = 0, taken = 0;
    int beat[2] = {-1, -1}, status = 0, rc;
    bool timed_out = false;
    pid_t pid;

    for (size_t i = 0; i < r->ncases; i++)
        waiting += r->cases[i].waiting;
    if ((!died && !early) || waiting == 0 || r->error_status)
        return 0;
    (void)leakgate_options__replay_timeout(&timeout_s, r->opts.replay_timeout);
    fprintf(stderr,
            "\nleakgate: the program ended before its replay: replaying the "
            "run in a fresh process to measure the %zu test%s that waited "
            "for it\n",
            waiting, waiting == 1 ? "" : "s");
    rc = scratch_make(&s, r);
    if (rc == 0)
        rc = leakgate_run__build_env(&env, &r->opts, preload, jemalloc, -1, -1,
                                     -1, s.list.ptr);
    if (rc == 0 && pipe2(beat, O_CLOEXEC | O_NONBLOCK) != 0)
        rc = leakgate_error__set(LEAKGATE_EIO, "cannot start the replay: %s",
                                 strerror(errno));
    if (rc == 0) {
        char num[64];

        snprintf(num, sizeof num, "%s=%d", LEAKGATE_REPLAY_BEAT_ENV, beat[1]);
        rc = leakgate_run__env_put(&env, num);
    }
    if (rc == 0)
        rc = start(&pid, r, argv, env.v, s.log.ptr, beat[1]);
    if (beat[1] >= 0)
        close(beat[1]);
    if (rc == 0)
        leakgate_replay__wait(pid, beat[0], timeout_s, waiting, &status,
                              &timed_out);
    if (beat[0] >= 0)
        close(beat[0]);
    if (rc == 0 && timed_out)
        rc = leakgate_error__set(LEAKGATE_EIO,
                                 "it was silent for the replay timeout (%u s) "
                                 "and was killed",
                                 timeout_s);
    if (rc == 0)
        rc = leakgate_results_new(&res);
    if (rc == 0)
        rc = leakgate_results_load(res, s.json.ptr);
    if (rc == 0)
        rc = take(r, res, &taken);
    if (rc == LEAKGATE_ENOMEM) {
        scratch_done(&s, false);
        leakgate_results_free(res);
        leakgate_run__env_free(&env);
        return rc;
    }
    if (rc < 0 || taken < waiting)
        fprintf(stderr,
                "leakgate: the replay measured %zu of the %zu tests that "
                "waited for it%s%s; its output is in %s\n",
                taken, waiting, rc < 0 ? ": " : "",
                rc < 0 ? leakgate_error_last() : "",
                s.log.ptr ? s.log.ptr : "(none)");
    scratch_done(&s, rc < 0 || taken < waiting);
    leakgate_results_free(res);
    leakgate_run__env_free(&env);
    return 0;
}
