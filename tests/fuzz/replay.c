/* SPDX-License-Identifier: MIT */
/*
 * replay: a main() for the fuzz harnesses when libFuzzer is not linked.
 * Every argument is a file or a directory; each regular file (in a
 * directory: each one whose name does not start with '.', in name order)
 * is read whole and passed once to LLVMFuzzerTestOneInput().  A harness
 * that finds a violated property aborts, so ctest reports the input.
 * Exit status: 0 when every input was replayed, 2 when a path cannot be
 * read or no input was found.
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv);

#define REPLAY_MAX_INPUT                                                       \
    ((size_t)64 << 20) /* no seed is anywhere near this                        \
                        */

static int
replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;

    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (;;) {
        size_t n;

        if (len == cap) {
            uint8_t *more;

            cap = cap ? cap * 2 : 4096;
            more = cap <= REPLAY_MAX_INPUT ? realloc(data, cap) : NULL;
            if (!more) {
                fprintf(stderr, "replay: %s: too large\n", path);
                rc = -1;
                break;
            }
            data = more;
        }
        n = fread(data + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "replay: %s: read error\n", path);
        rc = -1;
    }
    fclose(f);
    if (rc == 0)
        LLVMFuzzerTestOneInput(data, len);
    free(data);
    return rc;
}

static int
by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int
skip_hidden(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* Replay every visible regular file of dir; *count grows by their number. */
static int
replay_dir(const char *dir, size_t *count)
{
    struct dirent **list = NULL;
    int n = scandir(dir, &list, skip_hidden, by_name);
    int rc = 0;

    if (n < 0) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;

        snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name);
        if (rc == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            rc = replay_file(path);
            *count += rc == 0;
        }
        free(list[i]);
    }
    free(list);
    return rc;
}

int
main(int argc, char **argv)
{
    size_t count = 0;

    for (int i = 1; i < argc; i++) {
        struct stat st;
        int rc;

        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            return 2;
        }
        if (S_ISDIR(st.st_mode)) {
            rc = replay_dir(argv[i], &count);
        } else {
            rc = replay_file(argv[i]);
            count += rc == 0;
        }
        if (rc != 0)
            return 2;
    }
    printf("replayed %zu inputs\n", count);
    return count ? 0 : 2;
}
