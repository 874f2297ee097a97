/* SPDX-License-Identifier: MIT */
/*
 * outputs: the run's shared result files.  When several processes of one
 * run (the processes ctest starts, one per test) write the same --junit
 * FILE, --json FILE or --report-dir DIR, each output is one document for
 * the whole run: every window of every process once, written atomically
 * under a lock from the records of all of them, by whichever process
 * finishes or, under leakgate_discover_tests(), once by the run's
 * [outputs] tests (LEAKGATE_OUTPUTS_RENDER_ENV below).  Adapter over
 * POSIX (files, /proc), between the gate and the renderers (report, html
 * through gate_results.c, results).
 *
 * Beside each shared output is its store: ".NAME.leakgate/" next to FILE,
 * ".leakgate/" inside DIR.  A run keeps its records in one directory of
 * the store, "run-KEY": KEY is $LEAKGATE_RUN_ID when set, else the
 * process that started the run (its pid and start time): the nearest
 * ctest among this process's ancestors, for every test of one ctest run
 * whatever wraps the test's command, else the parent process.  All the
 * processes of a run append to one journal there, "journal" (created by
 * the run's first process), each record one write(2) of one line,
 * O_APPEND: the kernel appends each write whole to a regular file, so
 * records of concurrent processes never interleave, and no process
 * creates a file of its own.  A line is
 *
 *   "\n" KEY "\t" LEN "\t" RECORD "\n"
 *
 * KEY is the writer, "START-PID" (its start time in clock ticks, 20
 * digits, and pid: whether it still runs), LEN the bytes of RECORD; a
 * line whose RECORD is not LEN bytes long (torn by SIGKILL in the middle
 * of a write) is ignored, and the leading newline ends such a fragment
 * before the next writer's line.  RECORD is one letter and fields,
 * escaped as in run_proto.h:
 *
 *   B binary prefix    the executable whose windows follow (its path)
 *                      and $LEAKGATE_TEST_PREFIX ("" when unset)
 *   N env junit_env    the process's environment (JSON value, JUnit
 *                      properties)
 *   S suite test phase a window opens (the test or suite init/cleanup)
 *   V suite test status rank failed error seconds json junit
 *                      a window's record: what chooses and counts it,
 *                      and report.c's JSON test object and JUnit
 *                      testcase (the last V of a name by one writer is
 *                      the one kept)
 *   H                  the process opened the journal (its first line)
 *   D                  the process wrote its results and ended normally
 *
 * Merging reads the run's journal, takes each writer's lines in its
 * order and the writers in start order, keeps each
 * writer's last record per window, adds for a writer without D an
 * error record for the window that was running (killed, when its process
 * is gone: SIGKILL from ctest's TIMEOUT or the OOM killer; unfinished,
 * when it still runs: the files are a snapshot, which its own merge
 * replaces), chooses one record per window name, ctest prefix and
 * binary (a test's later record; a suite window's failure over a pass;
 * a window with a prefix, or whose name and prefix several binaries
 * have, gets an origin: "PREFIX" and/or "BINARY:" before its JUnit
 * classname and as its JSON "origin"), and writes the output.  A run starts
 * fresh: records of other runs are never read, and a run directory whose
 * starter (or, for $LEAKGATE_RUN_ID, every writer) has ended is removed when
 * another run opens the store.
 */
#ifndef LEAKGATE_OUTPUTS_H
#define LEAKGATE_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

/* The run's name when $LEAKGATE_RUN_ID is unset: its starter's. */
#define LEAKGATE_OUTPUTS_RUN_ID_ENV "LEAKGATE_RUN_ID"

/* The ctest test name's prefix (leakgate_discover_tests()' TEST_PREFIX,
 * which sets it): part of a window's key and of its JUnit classname. */
#define LEAKGATE_OUTPUTS_PREFIX_ENV "LEAKGATE_TEST_PREFIX"

/* When the shared outputs are written.  leakgate_discover_tests() sets
 * LEAKGATE_OUTPUTS_RENDER=end on its tests: each process only appends
 * its journal (O(its records)), and the run's "[outputs]" tests, ctest
 * fixture cleanups that run after every other test of the run, killed
 * ones included, set LEAKGATE_OUTPUTS_FINISH=1 and write the files once
 * from all the journals.  Unset: every process writes them when it ends
 * (a run started by hand, a shell loop). */
#define LEAKGATE_OUTPUTS_RENDER_ENV "LEAKGATE_OUTPUTS_RENDER"
#define LEAKGATE_OUTPUTS_FINISH_ENV "LEAKGATE_OUTPUTS_FINISH"

/* Which document a shared output is. */
enum leakgate_outputs_kind {
    LEAKGATE_OUTPUTS_JUNIT,
    LEAKGATE_OUTPUTS_JSON,
    LEAKGATE_OUTPUTS_INDEX /* DIR/index.html */
};

struct leakgate_outputs;

/*
 * True when spec names one file that several processes share (a plain
 * FILE): not a directory ("DIR/" or an existing directory) and without
 * %p or %h, which already give each process its own file.  Cannot fail.
 */
bool leakgate_outputs__is_shared(const char *spec);

/*
 * Check an output before the run: LEAKGATE_EUSAGE naming spec (or
 * DIR/index.html) when it is a symbolic link, a FIFO, a socket, a device
 * other than the null device, a directory or another user's file, or
 * naming its store when that is not a directory of this user; else 0
 * (what cannot be created is said when it is written).
 */
int leakgate_outputs__check(const char *spec, enum leakgate_outputs_kind kind);

/*
 * Open this process's journals for the shared outputs among junit, json
 * (per leakgate_outputs__is_shared) and report_dir (always shared; each
 * may be NULL).  *out is NULL when none is shared.  Returns 0;
 * LEAKGATE_EIO naming the store; LEAKGATE_ENOMEM.
 */
int leakgate_outputs__open(struct leakgate_outputs **out,
                           const char *junit,
                           const char *json,
                           const char *report_dir);

/* Journal the binary this process's windows belong to (NULL: this
 * process's executable, which leakgate_outputs__open() already wrote;
 * `leakgate run` names its program): windows of different binaries are
 * different windows, even with the same name.  Returns 0 or
 * LEAKGATE_EIO / LEAKGATE_ENOMEM.  o may be NULL. */
int leakgate_outputs__set_binary(struct leakgate_outputs *o,
                                 const char *binary);

/* A window opens.  Never allocates (it may run while a window records);
 * best effort.  o may be NULL. */
void leakgate_outputs__started(struct leakgate_outputs *o,
                               const char *suite,
                               const char *test,
                               const char *phase);

/* Append an N record (report.c's environment: json_env, the JSON value;
 * junit_env, the JUnit <properties>) or a V record: the window's piece
 * (report.c's JSON test object and JUnit testcase with its counts; the
 * merged files are composed of them) and its rank among records of the
 * same window (leakgate_results__rank()).  Returns 0 or LEAKGATE_EIO /
 * LEAKGATE_ENOMEM naming the journal. */
int leakgate_outputs__env(struct leakgate_outputs *o,
                          const char *json_env,
                          const char *junit_env);
struct leakgate_report_piece;
int leakgate_outputs__window(struct leakgate_outputs *o,
                             const char *suite,
                             const char *test,
                             const struct leakgate_report_piece *piece,
                             int rank);

/*
 * Append D, then merge each shared output: lock its store, read the run's
 * journals, write the document atomically (index.html through
 * leakgate_results__write_index(), saying `pictures` of the call graphs, or
 * nothing when NULL).  Returns 0 or the first error
 * (LEAKGATE_EIO, LEAKGATE_EFORMAT naming a journal, LEAKGATE_ENOMEM);
 * every output is tried.
 */
int leakgate_outputs__merge(struct leakgate_outputs *o, const char *pictures);

/* Whether this process is a run's "[outputs]" test
 * ($LEAKGATE_OUTPUTS_FINISH is 1): it runs no test and only writes the
 * shared outputs.  Cannot fail. */
bool leakgate_outputs__finishing(void);

/* Write the run's shared outputs among junit, json and report_dir (as
 * leakgate_outputs__open() takes them) from every journal of the run,
 * as the last process of a run does.  Returns 0 (also when none is
 * shared) or the first error of leakgate_outputs__open() and
 * leakgate_outputs__merge(). */
int leakgate_outputs__finish(const char *junit,
                             const char *json,
                             const char *report_dir);

/* Whether an N record was written.  Cannot fail. */
bool leakgate_outputs__has_env(const struct leakgate_outputs *o);

/* Close the journals.  NULL is a no-op. */
void leakgate_outputs__free(struct leakgate_outputs *o);

/* ---- internal to outputs.c and outputs_merge.c ------------------------- */

/* A run's journal holds every window of every process of the run, up to
 * this bound: a line that would pass it is not written (the output is
 * then written from this process's held lines, as for a full disk). */
#define LEAKGATE_OUTPUTS_JOURNAL_MAX ((size_t)1 << 30)
/* Its name in the run directory, and "merged": how many of its bytes the
 * last merge read. */
#define LEAKGATE_OUTPUTS_JOURNAL "journal"
/* A writer's KEY, "START-PID": 20 digits, '-', a pid, NUL. */
#define LEAKGATE_OUTPUTS_KEY_MAX 48
#define LEAKGATE_OUTPUTS_MAX 3

struct leakgate_outputs_file {
    enum leakgate_outputs_kind kind;
    char *spec;   /* FILE, or DIR for index.html */
    char *store;  /* .NAME.leakgate/ or DIR/.leakgate/ */
    char *rundir; /* store/run-KEY */
    char *parent; /* the directory that holds the store */
    int fd;       /* the run's journal, -1 when none */
    bool opened;  /* it was opened once (revive() reopens it) */
    dev_t dev;    /* the journal's file: a test that closed fd (another */
    ino_t ino;    /* file may have its number now) is noticed */
    char *broken; /* why its journal could not be written (a full disk, a
                     name too long, its bound), or NULL: this output
                     alone is then written from what the journal holds
                     and this process's lines kept in `held`, never the
                     others (outputs.c) */
    struct leakgate_buf held; /* the lines the journal could not take */
    bool held_lost; /* more than LEAKGATE_OUTPUTS_HELD_MAX: not written */
};

/* The most lines of a broken journal one process keeps in memory. */
#define LEAKGATE_OUTPUTS_HELD_MAX ((size_t)256 << 20)

/* Keep a line o's journal could not take (its "\nKEY\tLEN\t" head
 * first, as journaled) in o->held, or mark it lost past
 * LEAKGATE_OUTPUTS_HELD_MAX.  Cannot fail. */
void leakgate_outputs__hold(struct leakgate_outputs_file *o,
                            const char *key,
                            const char *line,
                            size_t len);

/* A V record already journaled: the same one is not written twice (an
 * open-addressing table by name_hash; name_hash 0 is an empty slot). */
struct sent {
    uint64_t name_hash, json_hash;
};

struct leakgate_outputs {
    struct leakgate_outputs_file out[LEAKGATE_OUTPUTS_MAX];
    size_t n;
    char key[LEAKGATE_OUTPUTS_KEY_MAX]; /* this process's KEY */
    bool has_env;                       /* an N record was written */
    struct sent *sent;
    size_t nsent;  /* used slots */
    size_t nslots; /* a power of two, more than 2 * nsent, or 0 */
};

/* Whether process pid, started at `start` (clock ticks after boot), still
 * runs (a zombie does not).  Cannot fail. */
bool leakgate_outputs__alive(long pid, unsigned long long start);

/* Process pid's start time (clock ticks after boot) into *out.
 * Returns 0, or -1 when the process is gone or a zombie. */
int leakgate_outputs__proc_start(unsigned long long *out, long pid);

/* Fill o->store, o->rundir ("store/KEY") and o->parent from o->spec.
 * Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_outputs__set_store(struct leakgate_outputs_file *o,
                                const char *key);

/* Open (creating it when this process is the run's first; fresh false:
 * reopen) the run's journal in o's run directory, under the store's
 * lock; the process that creates the run directory first removes the
 * store's stale runs.  Its first line, an H record of key (this
 * process), is written under the lock.  Returns 0, LEAKGATE_EUSAGE or
 * LEAKGATE_EIO naming the store or journal, LEAKGATE_ENOMEM. */
int leakgate_outputs__open_journal(struct leakgate_outputs_file *o,
                                   const char *key,
                                   bool fresh);

/* The run's key, the name of its directory in a store: "run-id-ID" for
 * $LEAKGATE_RUN_ID, else "run-p<starter>-<its start>" (the nearest ctest
 * among this process's ancestors, else the parent).  The caller frees;
 * NULL when out of memory. */
char *leakgate_outputs__run_key(void);

/* A writer's KEY "START-PID" (key_len bytes): its process; false for
 * anything else. */
bool leakgate_outputs__key_owner(const char *key,
                                 size_t key_len,
                                 unsigned long long *start,
                                 long *pid);

/* Open the store of o (created when missing, with its parents; a
 * directory of this user, never through a link) and flock it: *store_fd
 * is the lock, released with leakgate_files__unlock().  Returns 0;
 * LEAKGATE_EUSAGE (a link, another user's) or LEAKGATE_EIO naming it. */
int leakgate_outputs__lock(int *store_fd,
                           const struct leakgate_outputs_file *o);

/* Open (creating it) o's run directory in the store store_fd, checked
 * as the store is.  Returns 0, LEAKGATE_EUSAGE or LEAKGATE_EIO. */
int leakgate_outputs__run_dir(int *run_fd,
                              int store_fd,
                              const struct leakgate_outputs_file *o);

/* Reopen every journal whose descriptor is not its journal any more (a
 * test closed it: suite/test, which the error names; NULL when not
 * known).  Returns 0, LEAKGATE_EIO, LEAKGATE_EUSAGE or LEAKGATE_ENOMEM. */
int leakgate_outputs__revive(struct leakgate_outputs *os,
                             const char *suite,
                             const char *test);

/* Append the record line (len bytes, its newline last) to every journal
 * of os as one line of this process (one write(2) each; skipping one
 * whose descriptor is not its journal any more).  Never allocates.
 * Returns 0 or LEAKGATE_EIO. */
int leakgate_outputs__append(struct leakgate_outputs *os,
                             const char *line,
                             size_t len);
/* Whether o's descriptor is still its journal (a test may have closed it,
 * and another file may have its number now).  Never allocates. */
bool leakgate_outputs__journal_ok(const struct leakgate_outputs_file *o);

/* The same for one journal, o's, as writer key. */
int leakgate_outputs__append_to(struct leakgate_outputs_file *o,
                                const char *key,
                                const char *line,
                                size_t len);

#endif
