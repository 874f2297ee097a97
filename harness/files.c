/* SPDX-License-Identifier: MIT */
/*
 * files: bounded reads, atomic writes and a directory lock (see files.h).
 * Adapter over POSIX for the ratchet (thresholds rewrites, per-process
 * result files).  Every failure names the path and the reason.
 */
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

/* Names tried by LEAKGATE_FILES_NOCLOBBER before giving up. */
#define MAX_SUFFIX 10000

static int
read_fd(struct leakgate_buf *out, int fd, const char *path, size_t max)
{
    char chunk[65536];
    size_t start = out->len;

    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return leakgate_error__set(LEAKGATE_EIO, "%s: %s", path,
                                       strerror(errno));
        if (n == 0)
            break;
        leakgate_buf__put(out, chunk, (size_t)n);
        if (out->len - start > max)
            return leakgate_error__set(LEAKGATE_ETOOBIG,
                                       "%s: larger than the limit of %zu "
                                       "bytes",
                                       path, max);
    }
    if (out->failed)
        return leakgate_error__set(LEAKGATE_ENOMEM, "%s: out of memory", path);
    if (!out->ptr)
        leakgate_buf__put(out, "", 0);
    return out->failed ? leakgate_error__set(LEAKGATE_ENOMEM, "%s", path) : 0;
}

int
leakgate_files__read(struct leakgate_buf *out,
                     const char *path,
                     size_t max,
                     const char *what)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc;

    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
        return leakgate_error__set(LEAKGATE_ENOTFOUND, "%s: no such %s", path,
                                   what);
    if (fd < 0)
        return leakgate_error__set(LEAKGATE_EIO, "%s: %s", path,
                                   strerror(errno));
    if (fstat(fd, &st) != 0)
        rc = leakgate_error__set(LEAKGATE_EIO, "%s: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        rc = leakgate_error__set(LEAKGATE_EIO, "%s: is a directory, not a %s",
                                 path, what);
    else if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > max)
        rc = leakgate_error__set(LEAKGATE_ETOOBIG,
                                 "%s: %jd bytes, more than the limit of %zu",
                                 path, (intmax_t)st.st_size, max);
    else
        rc = read_fd(out, fd, path, max);
    close(fd);
    return rc;
}

static int
io_error(const char *path, const char *why)
{
    return leakgate_error__set(LEAKGATE_EIO, "cannot write %s: %s", path, why);
}

static int
write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Create "path.tmp.PID" with the data, fsync'ed.  A file of that name can
 * only be left by an earlier process with this pid, which is gone. */
static int
write_temp(const char *tmp,
           const char *path,
           const char *data,
           size_t len,
           const mode_t *mode,
           bool sync)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    int rc = 0;

    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return io_error(path, strerror(errno));
    if ((mode && fchmod(fd, *mode) != 0) || write_all(fd, data, len) != 0 ||
        (sync && fsync(fd) != 0))
        rc = io_error(path, strerror(errno));
    if (close(fd) != 0 && rc == 0)
        rc = io_error(path, strerror(errno));
    if (rc < 0)
        unlink(tmp);
    return rc;
}

static void
sync_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    struct leakgate_buf dir = LEAKGATE_BUF_INIT;
    int fd;

    if (slash)
        leakgate_buf__put(&dir, path,
                          slash == path ? 1 : (size_t)(slash - path));
    else
        leakgate_buf__puts(&dir, ".");
    fd = dir.ptr ? open(dir.ptr, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        fsync(fd); /* best effort: the rename is already atomic */
        close(fd);
    }
    leakgate_buf__dispose(&dir);
}

/* PATH, or PATH with ".N" before its extension (after the last '/'). */
static char *
candidate(const char *path, unsigned int n)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');

    if (n == 0)
        leakgate_buf__puts(&b, path);
    else if (!dot || dot == (slash ? slash + 1 : path))
        leakgate_buf__printf(&b, "%s.%u", path, n);
    else
        leakgate_buf__printf(&b, "%.*s.%u%s", (int)(dot - path), path, n, dot);
    return leakgate_buf__take(&b);
}

/* Move tmp to the first free candidate name; never replaces a file. */
static int
place_noclobber(char **final_out, const char *tmp, const char *path)
{
    for (unsigned int n = 0; n < MAX_SUFFIX; n++) {
        char *name = candidate(path, n);
        int r;

        if (!name)
            return leakgate_error__set(LEAKGATE_ENOMEM, "path");
        r = renameat2(AT_FDCWD, tmp, AT_FDCWD, name, RENAME_NOREPLACE);
        if (r != 0 && (errno == EINVAL || errno == ENOSYS)) {
            /* A file system without RENAME_NOREPLACE: link(2) never
             * replaces either. */
            r = link(tmp, name);
            if (r == 0)
                unlink(tmp);
        }
        if (r == 0) {
            *final_out = name;
            return 0;
        }
        leakgate_util__free(name);
        if (errno != EEXIST)
            return io_error(path, strerror(errno));
    }
    return io_error(path, "every candidate name is taken");
}

/* The file behind a symbolic link, so that the link survives. */
static char *
target_of(const char *path)
{
    struct stat st;
    char *real;
    char *copy;

    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return leakgate_util__strdup(path);
    real = realpath(path, NULL);
    if (!real)
        return leakgate_util__strdup(path);
    copy = leakgate_util__strdup(real);
    free(real); /* realpath's memory comes from libc */
    return copy;
}

static char *
dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        return leakgate_util__strdup(".");
    return leakgate_util__strndup(path,
                                  slash == path ? 1 : (size_t)(slash - path));
}

/* The missing parent directories of path (several processes may create
 * them at once: an existing one is fine).  Returns 0, LEAKGATE_EIO or
 * LEAKGATE_ENOMEM. */
static int
mkdirs_of(const char *path)
{
    char *dir = dir_of(path);
    int rc = dir ? leakgate_files__mkdirs(dir)
                 : leakgate_error__set(LEAKGATE_ENOMEM, "path");

    leakgate_util__free(dir);
    return rc;
}

int
leakgate_files__write(char **written_out,
                      const char *path,
                      const char *data,
                      size_t len,
                      unsigned int flags)
{
    struct leakgate_buf tmp = LEAKGATE_BUF_INIT;
    char *target = target_of(path), *final = NULL;
    struct stat st;
    mode_t mode = 0;
    bool keep = false;
    int rc;

    if (written_out)
        *written_out = NULL;
    if (target)
        leakgate_buf__printf(&tmp, "%s.tmp.%ld", target, (long)getpid());
    if (!target || tmp.failed) {
        leakgate_util__free(target);
        leakgate_buf__dispose(&tmp);
        return leakgate_error__set(LEAKGATE_ENOMEM, "path");
    }
    if ((flags & LEAKGATE_FILES_KEEP_MODE) && stat(target, &st) == 0) {
        mode = st.st_mode & 07777;
        keep = true;
    }
    rc = (flags & LEAKGATE_FILES_MKDIRS) ? mkdirs_of(target) : 0;
    if (rc == 0)
        rc = write_temp(tmp.ptr, path, data, len, keep ? &mode : NULL,
                        !(flags & LEAKGATE_FILES_NOSYNC));
    if (rc == 0 && (flags & LEAKGATE_FILES_NOCLOBBER))
        rc = place_noclobber(&final, tmp.ptr, target);
    else if (rc == 0 && rename(tmp.ptr, target) != 0)
        rc = io_error(path, strerror(errno));
    if (rc == 0 && !(flags & LEAKGATE_FILES_NOSYNC))
        sync_dir_of(target);
    if (rc < 0)
        unlink(tmp.ptr);
    if (rc == 0 && written_out)
        *written_out = final ? final : leakgate_util__strdup(target);
    else
        leakgate_util__free(final);
    leakgate_buf__dispose(&tmp);
    leakgate_util__free(target);
    return rc == 0 && written_out && !*written_out
               ? leakgate_error__set(LEAKGATE_ENOMEM, "path")
               : rc;
}

int
leakgate_files__lock_dir(int *fd_out, const char *path)
{
    char *dir = dir_of(path);
    int fd, rc = 0;

    *fd_out = -1;
    if (!dir)
        return leakgate_error__set(LEAKGATE_ENOMEM, "path");
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        rc = leakgate_error__set(LEAKGATE_EIO, "%s: %s", dir, strerror(errno));
    while (rc == 0 && flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR)
            rc = leakgate_error__set(LEAKGATE_EIO, "cannot lock %s: %s", dir,
                                     strerror(errno));
    }
    if (rc < 0 && fd >= 0)
        close(fd);
    else
        *fd_out = fd;
    leakgate_util__free(dir);
    return rc;
}

void
leakgate_files__unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* closing the last descriptor releases the flock */
}

/* The pid of "BASE.tmp.PID", or 0 when name is not one. */
static long
temp_pid(const char *name, const char *base)
{
    size_t n = strlen(base);
    long pid = 0;
    const char *p;

    if (strncmp(name, base, n) != 0 || strncmp(name + n, ".tmp.", 5) != 0)
        return 0;
    for (p = name + n + 5; *p >= '0' && *p <= '9' && pid < 100000000; p++)
        pid = pid * 10 + (*p - '0');
    return *p == '\0' && p > name + n + 5 ? pid : 0;
}

void
leakgate_files__clean_temps(const char *path)
{
    char *dir = dir_of(path);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    DIR *d = dir ? opendir(dir) : NULL;

    for (struct dirent *de = d ? readdir(d) : NULL; de; de = readdir(d)) {
        long pid = temp_pid(de->d_name, base);
        struct leakgate_buf full = LEAKGATE_BUF_INIT;

        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 ||
            errno != ESRCH)
            continue;
        leakgate_buf__printf(&full, "%s/%s", dir, de->d_name);
        if (full.ptr)
            unlink(full.ptr);
        leakgate_buf__dispose(&full);
    }
    if (d)
        closedir(d);
    leakgate_util__free(dir);
}

int
leakgate_files__mkdirs(const char *dir)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    int rc = 0;

    leakgate_buf__puts(&b, dir);
    if (b.failed || !b.ptr)
        return leakgate_error__set(LEAKGATE_ENOMEM, "path");
    for (char *p = b.ptr + 1; *p && rc == 0; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(b.ptr, 0777) != 0 && errno != EEXIST)
            rc = -1;
        *p = '/';
    }
    if (rc == 0 && mkdir(b.ptr, 0777) != 0 && errno != EEXIST)
        rc = -1;
    if (rc < 0)
        rc = leakgate_error__set(LEAKGATE_EIO, "cannot create directory %s: %s",
                                 dir, strerror(errno));
    leakgate_buf__dispose(&b);
    return rc;
}
