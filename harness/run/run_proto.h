/* SPDX-License-Identifier: MIT */
/*
 * run_proto: the channel between `leakgate run` (run.c, the parent) and
 * its interposer in the program (preload.c, the child), and the parent's
 * record of what it heard.
 *
 * The channel is a stream socket inherited by the program; its number is
 * in $LEAKGATE_RUN_FD.  The process that runs the tests writes its records
 * to the ring instead (struct leakgate_run_ring, $LEAKGATE_RUN_RING), the
 * same lines in the same order.  Each record is one line: a one-letter type and
 * fields separated by tabs, every field escaped (backslash, tab and
 * newline as \\, \t, \n), so no record needs a parser beyond split():
 *
 *   H pid                        the interposer loaded in a process
 *   B function                   a CUnit run began (outermost run call)
 *   S suite test phase           a test / suite init / cleanup starts
 *   N junit_env json_env         the report environment (rendered)
 *   V suite test status failed seconds skipped junit_case json_test [r]
 *                                a finished record, rendered by report.c
 *                                (skipped: "s" for a window not judged
 *                                on purpose, measured only; "w" for one
 *                                that waits for a replay, which the
 *                                parent runs if the program dies first;
 *                                else empty);
 *                                with "r", it replaces the earlier record
 *                                of suite/test (a verdict a replay made)
 *   P suite test                 the run will reach this test (told
 *                                before it starts): a program that dies
 *                                has the tests it never reached listed
 *                                as not run
 *   L                            --list printed the tests
 *   E exit_status message        the gate could not run (2 or 3)
 *   D failure_records            the run returned
 *
 * The JUnit and JSON pieces are what report.c's per-window writers
 * render for one verdict, so each testcase and test object is exactly
 * what a linked binary writes; run_results.c composes them with report.c's
 * document writers.
 */
#ifndef LEAKGATE_RUN_PROTO_H
#define LEAKGATE_RUN_PROTO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "leakgate/leakgate.h"
#include "leakgate/run.h"
#include "records.h"
#include "report.h"
#include "util.h"

/* Environment of the program (private to leakgate run). */
#define LEAKGATE_RUN_ENV_FD "LEAKGATE_RUN_FD"
/* The doorbell (an eventfd): rung by the program every few records and
 * when the channel is full, so that leakgate run sleeps through the sends
 * between (see leakgate_run__send()). */
#define LEAKGATE_RUN_ENV_BELL "LEAKGATE_RUN_BELL"
/* The ring (a memfd both sides map): where the process that runs the
 * tests writes its records (see struct leakgate_run_ring). */
#define LEAKGATE_RUN_ENV_RING "LEAKGATE_RUN_RING"
#define LEAKGATE_RUN_ENV_LIST "LEAKGATE_RUN_LIST"
#define LEAKGATE_RUN_ENV_COLOR "LEAKGATE_RUN_COLOR"
#define LEAKGATE_RUN_ENV_SAVED_PRELOAD "LEAKGATE_RUN_SAVED_PRELOAD"
/* "1" when the parent writes --junit or --json: records then carry the
 * JUnit testcase and JSON test pieces (rendering them costs ~50 µs per
 * test, so they are left empty otherwise). */
#define LEAKGATE_RUN_ENV_PIECES "LEAKGATE_RUN_PIECES"

#define LEAKGATE_RUN_FIELDS_MAX 10

/* The pieces of one verdict's JUnit and JSON, each owned. */
struct leakgate_run_pieces {
    char *junit_case; /* `    <testcase ...>...</testcase>\n` */
    char *json_test;  /* `    {...}` (no trailing newline) */
    char *junit_env;  /* `  <properties>...</properties>\n` */
    char *json_env;   /* `{...}` of "environment" */
};

/* One finished record as the parent keeps it (strings owned). */
struct leakgate_run_case {
    char *suite;
    char *test;
    leakgate_status status;
    bool failed;  /* the gate failed it or it carries notes */
    bool skipped; /* not judged on purpose (measured only: --filter) */
    bool waiting; /* not judged yet: a replay measures it (run_replay.c) */
    double seconds;
    struct leakgate_run_pieces pieces;
};

/* What a program is, from its ELF headers (run_elf.c). */
struct leakgate_run_elf {
    bool is_elf;
    bool is_dynamic;        /* has a dynamic section: LD_PRELOAD applies */
    bool is_shared;         /* a shared object (ET_DYN): ld.so can preload it */
    bool needs_cunit;       /* a DT_NEEDED entry names libcunit */
    bool has_cunit_symbols; /* its symbol table defines CU_* functions */
    const char *sanitizer;  /* built with a sanitizer whose allocator
                               replaces malloc (its name and flag), or NULL */
};

struct leakgate_run {
    struct leakgate_gate_options opts;
    char *program;                   /* resolved path */
    struct leakgate_run_case *cases; /* V records, in order */
    size_t ncases;
    size_t cap;
    char *junit_env; /* the last N record */
    char *json_env;
    bool hello;                    /* an H record arrived */
    bool began;                    /* a B record arrived */
    bool listed;                   /* an L record arrived */
    bool in_run;                   /* a B without its D */
    unsigned long failure_records; /* from D records */
    char *running[3]; /* suite, test, phase of the last S; NULL: none */
    int error_status; /* from the first E record, 0 if none */
    char *error_text;
    int wait_status; /* waitpid()'s */
    int status;      /* the outcome, SPEC §5 */
    char **messages;
    size_t nmessages;
    struct leakgate_run_case *crash; /* the test the program died in */
    char **planned;  /* P records: "SUITE", "TEST" pairs, in order */
    size_t nplanned; /* strings in planned (two per test) */
    size_t capplanned;
    struct leakgate_outputs *outputs; /* journals of shared outputs
                                         (outputs.h), or NULL */
};

/* A record's seconds field: s as a C99 hexadecimal floating constant
 * ("0x1.8p-3"), exact, so that strtod() gives back the same double (0 for
 * a negative, infinite or NaN s).  A few dozen instructions where printf's
 * "%a" takes thousands, once per test.  Cannot fail. */
#define LEAKGATE_RUN_SECONDS_MAX 32
void leakgate_run__seconds(char out[LEAKGATE_RUN_SECONDS_MAX], double s);

/* Send len bytes on the channel, never raising SIGPIPE.  With a doorbell
 * (bell >= 0) the sends do not block: leakgate run does not sleep on the
 * channel (a send would wake it: a context switch per record) but on the
 * doorbell, the program's end and a tick, and reads what the kernel holds
 * when one comes; every LEAKGATE_RUN_RING_EVERY sends ring the doorbell
 * (the channel holds ~200 records), and a send that still finds the
 * channel full rings it, then waits for room.  bell < 0: blocking sends.
 * Returns 0 or LEAKGATE_EIO. */
#define LEAKGATE_RUN_RING_EVERY 32
int leakgate_run__send(int fd, int bell, const char *data, size_t len);

/*
 * The ring: shared memory between leakgate run and the process that runs
 * the tests (the one its interposer claimed), which writes its records
 * there instead of sending them: a record costs a copy, no system call
 * (two sends per window were most of what `leakgate run` added to a
 * window), and a record written is leakgate run's even if the program is
 * killed the next instant.  A byte stream like the channel: the program
 * (one writer; a process it forks writes on the channel instead) copies
 * at head and publishes head after the copy, leakgate run reads up to
 * head and publishes tail.  The program rings the doorbell every
 * LEAKGATE_RUN_RING_EVERY records and when the ring is full, then waits
 * for room, giving up when leakgate run is gone (the channel hangs up).
 */
#define LEAKGATE_RUN_RING_BYTES ((size_t)1 << 16)
#define LEAKGATE_RUN_RING_MAGIC 0x6c6b6772u /* "lkgr" */
struct leakgate_run_ring {
    uint32_t magic;          /* LEAKGATE_RUN_RING_MAGIC */
    _Atomic uint32_t writer; /* the pid of the one process that writes */
    _Alignas(64) _Atomic uint64_t head; /* bytes written, ever */
    _Alignas(64) _Atomic uint64_t tail; /* bytes read, ever */
    _Alignas(64) unsigned char data[LEAKGATE_RUN_RING_BYTES];
};

/* A new ring, mapped, and its descriptor (inherited by the program):
 * false when the system has none to give (the records then go on the
 * channel). */
bool leakgate_run__ring_new(struct leakgate_run_ring **ring, int *fd);
/* Map the ring whose descriptor is fd (and close it) as its writer: NULL
 * when it is not one, or another process writes it. */
struct leakgate_run_ring *leakgate_run__ring_map(int fd);
void leakgate_run__ring_unmap(struct leakgate_run_ring *ring);
/* Write len bytes; fd (the channel) and bell as for leakgate_run__send().
 * Returns 0 or LEAKGATE_EIO (leakgate run is gone). */
int leakgate_run__ring_write(struct leakgate_run_ring *ring,
                             int fd,
                             int bell,
                             const char *data,
                             size_t len);
/* Append to out what was written up to head (read by the caller before,
 * see run.c), and give the room back.  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_run__ring_read(struct leakgate_run_ring *ring,
                            uint64_t head,
                            struct leakgate_buf *out);

/* Render v's pieces with report.c's per-window writers (v NULL: only the
 * environment; env may be zeroed when only the testcase and test object
 * are wanted).  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_run__pieces(struct leakgate_run_pieces *out,
                         const struct leakgate_verdict *v,
                         const struct leakgate_report_env *env);
/* The same without the environment (out's junit_env and json_env NULL):
 * v's testcase and test object only. */
int leakgate_run__case_pieces(struct leakgate_run_pieces *out,
                              const struct leakgate_verdict *v,
                              const struct leakgate_report_env *env);

void leakgate_run__pieces_dispose(struct leakgate_run_pieces *p);

/* Inspect the ELF file at path; a file that is not ELF (a script) gives
 * is_elf false.  Cannot fail. */
void leakgate_run__inspect_elf(struct leakgate_run_elf *out, const char *path);
/* The file at path is a native ELF shared object (ET_DYN: ld.so can
 * preload it), from its first 64 bytes.  Cannot fail. */
bool leakgate_run__elf_shared(const char *path);

/* Take one record line (no newline, modified in place) into run.  Returns
 * 0 or LEAKGATE_ENOMEM; unknown or short records are ignored. */
int leakgate_run__take_record(struct leakgate_run *run, char *line);

/* Decide r->status and r->messages once the program has ended (run
 * records taken, r->wait_status set).  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_run__decide(struct leakgate_run *r);

/* Build run->crash for the test that was running when the program died
 * (message: what happened).  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_run__crash_case(struct leakgate_run *run, const char *message);

/* The program ended (why: how) before the planned tests that have no
 * record yet: each becomes a record "not run" (a JUnit <skipped>, with
 * where the run stopped), as a linked binary lists them.  Returns 0 or
 * LEAKGATE_ENOMEM. */
int leakgate_run__not_run_cases(struct leakgate_run *run, const char *why);

void leakgate_run__case_dispose(struct leakgate_run_case *c);

/* Journal c into the shared outputs os (outputs.h), as a linked binary
 * journals its windows.  Returns 0, LEAKGATE_EIO or LEAKGATE_ENOMEM. */
struct leakgate_outputs;
int leakgate_run__journal_case(struct leakgate_outputs *os,
                               const struct leakgate_run_case *c);

/* The JUnit XML / JSON results of the run (run_results.c): the records in
 * order plus the test the program died in, in report.c's layout.  NULL
 * on ENOMEM or when no environment record arrived.  Caller frees. */
char *leakgate_run__junit(const struct leakgate_run *r);
char *leakgate_run__json(const struct leakgate_run *r);

/* ---- run_env.c --------------------------------------------------------- */

/* The program's path, resolved as execvp() would.  Returns 0,
 * LEAKGATE_ENOTFOUND (missing, a directory, not executable: the detail
 * says which) or LEAKGATE_ENOMEM.  *out is the caller's. */
int leakgate_run__find_program(char **out, const char *name);

/* The interposer's path.  Returns 0, LEAKGATE_ENOTFOUND naming every
 * place looked at, or LEAKGATE_ENOMEM. */
int leakgate_run__find_preload(char **out);

/* libjemalloc's path.  Returns 0, LEAKGATE_ENOTFOUND or LEAKGATE_ENOMEM. */
int leakgate_run__find_jemalloc(char **out);

/* A NULL-terminated environment (strings owned). */
struct leakgate_run_envp {
    char **v;
    size_t n;
    size_t cap;
    bool failed;
};

/* This process's environment with LD_PRELOAD, the gate's LEAKGATE_*
 * twins and the channel (fd), its doorbell (bell) and the ring (ring; -1:
 * none) set for the program; with replay_list (fd -1), the environment
 * of a replay of the tests that list names (run_replay.c): jemalloc
 * preloaded, no channel.
 * Returns 0, LEAKGATE_ENOTFOUND (a path LD_PRELOAD cannot carry) or
 * LEAKGATE_ENOMEM. */
int leakgate_run__build_env(struct leakgate_run_envp *e,
                            const struct leakgate_gate_options *o,
                            const char *preload,
                            const char *jemalloc,
                            int fd,
                            int bell,
                            int ring,
                            const char *replay_list);

/* Add "NAME=VALUE" to e.  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_run__env_put(struct leakgate_run_envp *e, const char *kv);

void leakgate_run__env_free(struct leakgate_run_envp *e);

/*
 * run_replay.c: the program died (a signal leakgate's interposer cannot
 * catch, SIGKILL, or a rescue that failed) while tests waited for their
 * replay: run that replay from here, in a fresh process of the program,
 * and put its verdicts in their records (printing their reports).  A
 * replay that cannot run leaves them not judged, with why.  Returns 0 or
 * LEAKGATE_ENOMEM.
 */
int leakgate_run__replay_waiting(struct leakgate_run *r,
                                 char *const *argv,
                                 const char *preload,
                                 const char *jemalloc);

#endif
