/* SPDX-License-Identifier: MIT */
/*
 * atomic_kill: a thresholds file rewritten by a process that is killed
 * with SIGKILL mid-write is always the old file or the new one, never a
 * mix or a truncation.
 *
 * A child rewrites a 1 MB thresholds file over and over through the
 * public API (leakgate_results_update_thresholds), flipping one limit
 * between 10 and 1000 (accept, then tighten).  The parent kills it:
 * half of the time at a random moment, half of the time right after the
 * child creates its temporary file (inotify), plus a random delay of up
 * to 3 ms, so the kill lands inside the write, the fsync or just before
 * the rename.  After each kill the file must be byte-identical to one of
 * the two versions.  A kill that left the child's temporary file behind
 * interrupted a write; the test demands some, or it proved nothing.
 *
 * usage: atomic_kill WORKDIR [ITERATIONS]; exit 0 when every check held.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "leakgate/thresholds.h"

#define PADDING_LINES 10000

static char yaml_path[4096], big_path[4096], small_path[4096];
static char *version_a, *version_b; /* limit 10, limit 1000 */
static size_t len_a, len_b;

static char *
build_yaml(const char *limit, size_t *len_out)
{
    const char *head = "# atomic_kill: padding makes every write long\n"
                       "version: 1\n";
    const char *pad = "# 0123456789 0123456789 0123456789 0123456789 "
                      "0123456789 0123456789 0123456789 0123456\n";
    char tail[256];
    size_t n = strlen(head) + PADDING_LINES * strlen(pad) + sizeof tail;
    char *s = malloc(n), *p = s;

    if (!s)
        return NULL;
    p += snprintf(p, n, "%s", head);
    for (int i = 0; i < PADDING_LINES; i++)
        p += snprintf(p, n - (size_t)(p - s), "%s", pad);
    snprintf(tail, sizeof tail,
             "tests:\n  \"k/big\":\n    stacks:\n      - frames: [test_k, "
             "grow]\n        limit: %s\n",
             limit);
    p += snprintf(p, n - (size_t)(p - s), "%s", tail);
    *len_out = (size_t)(p - s);
    return s;
}

static int
write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    int rc = f && fwrite(text, 1, len, f) == len ? 0 : -1;

    if (f && fclose(f) != 0)
        rc = -1;
    return rc;
}

/* One window k/big whose stack [test_k, grow] retained `bytes`. */
static int
write_results(const char *path, int bytes)
{
    char doc[2048];
    int n = snprintf(
        doc, sizeof doc,
        "{\"format\": \"leakgate-results\", \"version\": 1, \"tests\": [\n"
        " {\"suite\": \"k\", \"test\": \"big\", \"status\": \"%s\",\n"
        "  \"measured\": true, \"stacks\": [{\"bytes\": %d, \"objects\": 1,\n"
        "  \"pcs\": [\"0x10\", \"0x20\"], \"frames\": [\n"
        "   {\"function\": \"grow\", \"module\": \"/bin/k\", \"pc\": "
        "\"0x10\", \"shown\": true},\n"
        "   {\"function\": \"test_k\", \"module\": \"/bin/k\", \"pc\": "
        "\"0x20\", \"shown\": true}]}]}]}\n",
        bytes > 10 ? "fail" : "pass", bytes);

    return write_file(path, doc, (size_t)n);
}

static int
update(leakgate_results *r, int tighten)
{
    struct leakgate_thresholds_options o = LEAKGATE_THRESHOLDS_OPTIONS_INIT;
    leakgate_thresholds_outcome *out = NULL;
    int rc;

    o.tighten = tighten;
    o.slack = "0%";
    rc = leakgate_results_update_thresholds(r, yaml_path, &o, &out);
    leakgate_thresholds_outcome_free(out);
    return rc;
}

static void
child(void)
{
    leakgate_results *big = NULL, *small = NULL;

    if (leakgate_results_new(&big) < 0 || leakgate_results_new(&small) < 0 ||
        leakgate_results_load(big, big_path) < 0 ||
        leakgate_results_load(small, small_path) < 0) {
        fprintf(stderr, "atomic_kill: child: %s\n", leakgate_error_last());
        _exit(3);
    }
    for (;;) {
        if (update(big, 0) < 0 || update(small, 1) < 0) {
            fprintf(stderr, "atomic_kill: child: %s\n", leakgate_error_last());
            _exit(3);
        }
    }
}

/* Wait for the child's temporary file to appear (true), or time out. */
static bool
await_temp(int ino, pid_t pid)
{
    char want[64], buf[8192];
    struct pollfd pfd = {ino, POLLIN, 0};

    snprintf(want, sizeof want, "leakgate.yaml.tmp.%ld", (long)pid);
    while (poll(&pfd, 1, 5000) == 1) {
        ssize_t n = read(ino, buf, sizeof buf);

        for (ssize_t off = 0; n > 0 && off < n;) {
            const struct inotify_event *ev =
                (const struct inotify_event *)(const void *)(buf + off);

            if (ev->len && strcmp(ev->name, want) == 0)
                return true;
            off += (ssize_t)(sizeof *ev + ev->len);
        }
    }
    return false;
}

/* Kill one child; 1 if the kill interrupted a write, 0 if not, -1 when
 * the file was neither version. */
static int
one_kill(int ino, bool on_temp)
{
    pid_t pid = fork();
    char tmp[4200];
    struct stat st;
    int status;

    if (pid == 0)
        child();
    if (pid < 0)
        return -1;
    if (on_temp && await_temp(ino, pid))
        usleep((useconds_t)(rand() % 3000));
    else
        usleep((useconds_t)(1000 + rand() % 60000));
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", yaml_path, (long)pid);
    {
        FILE *f = fopen(yaml_path, "rb");
        static char got[4 << 20];
        size_t n = f ? fread(got, 1, sizeof got, f) : 0;
        bool same_a = n == len_a && memcmp(got, version_a, n) == 0;
        bool same_b = n == len_b && memcmp(got, version_b, n) == 0;

        if (f)
            fclose(f);
        if (!same_a && !same_b) {
            fprintf(stderr,
                    "atomic_kill: after a kill the file is neither "
                    "version (%zu bytes)\n",
                    n);
            return -1;
        }
    }
    if (stat(tmp, &st) != 0)
        return 0;
    unlink(tmp);
    return 1;
}

int
main(int argc, char **argv)
{
    int iterations = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 120;
    int ino, mid = 0, kills = 0;

    if (argc < 2)
        return 2;
    snprintf(yaml_path, sizeof yaml_path, "%s/leakgate.yaml", argv[1]);
    snprintf(big_path, sizeof big_path, "%s/big.json", argv[1]);
    snprintf(small_path, sizeof small_path, "%s/small.json", argv[1]);
    version_a = build_yaml("10", &len_a);
    version_b = build_yaml("1000", &len_b);
    srand((unsigned int)time(NULL));
    if (!version_a || !version_b || write_file(yaml_path, version_a, len_a) ||
        write_results(big_path, 1000) || write_results(small_path, 10))
        return 3;
    ino = inotify_init1(IN_CLOEXEC);
    if (ino < 0 || inotify_add_watch(ino, argv[1], IN_CREATE) < 0)
        return 3;
    for (int i = 0; i < iterations; i++) {
        int r = one_kill(ino, i % 2 == 0);

        if (r < 0)
            return 1;
        mid += r;
        kills++;
    }
    printf("atomic_kill: %d kills, %d of them during a write (temporary file "
           "left behind); the file was always the old or the new version\n",
           kills, mid);
    free(version_a);
    free(version_b);
    close(ino);
    return mid > 0 ? 0 : 1;
}
