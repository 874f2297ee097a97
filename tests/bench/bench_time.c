/* SPDX-License-Identifier: MIT */
/*
 * bench_time: run one command and measure it, for ci/bench.
 *
 *   bench_time OUTFILE -- COMMAND [ARGS...]
 *
 * The command's stdout and stderr go to OUTFILE.  Prints one line:
 * "<wall seconds> <peak RSS KiB> <exit status> <CPU seconds>" where the
 * peak RSS is the child's own ru_maxrss (wait4), the CPU time is its user
 * plus system time (with the children it waited for), and a child killed
 * by signal N exits 128+N.  Exit status: 0 measured, 2 usage, 3 the command
 * could not run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double
now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void
child(const char *outfile, char **argv)
{
    int fd = open(outfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
        _exit(127);
    close(fd);
    execvp(argv[0], argv);
    _exit(127);
}

int
main(int argc, char **argv)
{
    struct rusage ru;
    double t0, t1;
    pid_t pid;
    int status, code;

    if (argc < 4 || strcmp(argv[2], "--") != 0) {
        fputs("usage: bench_time OUTFILE -- COMMAND [ARGS...]\n", stderr);
        return 2;
    }
    t0 = now();
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "bench_time: fork: %s\n", strerror(errno));
        return 3;
    }
    if (pid == 0)
        child(argv[1], argv + 3);
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "bench_time: wait4: %s\n", strerror(errno));
            return 3;
        }
    }
    t1 = now();
    code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    printf("%.6f %ld %d %.6f\n", t1 - t0, ru.ru_maxrss, code,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
    return 0;
}
