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
read_fd(
    struct leakgate_buf *out, int fd, const char *path, size_t max, size_t size)
{
    size_t start = out->len;

    /* Read into the text itself, sized by fstat() (one byte more to see
     * the end), growing only for a file that grew since: no copy, and no
     * large buffer on the stack (its pages are a fault each). */
    if (!leakgate_buf__reserve(out, size + 1))
        return leakgate_error__set(LEAKGATE_ENOMEM, "%s: out of memory", path);
    out->ptr[out->len] = '\0';
    for (;;) {
        ssize_t n;

        if (out->cap - out->len == 1 && !leakgate_buf__reserve(out, 65536))
            return leakgate_error__set(LEAKGATE_ENOMEM, "%s: out of memory",
                                       path);
        n = read(fd, out->ptr + out->len, out->cap - out->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return leakgate_error__set(LEAKGATE_EIO, "%s: %s", path,
                                       strerror(errno));
        if (n == 0)
            return 0;
        out->len += (size_t)n;
        out->ptr[out->len] = '\0';
        if (out->len - start > max)
            return leakgate_error__set(LEAKGATE_ETOOBIG,
                                       "%s: larger than the limit of %zu "
                                       "bytes",
                                       path, max);
    }
}

/* Read the open fd (closed here): regular files only, so that a FIFO
 * or a device never blocks or streams forever. */
static int
read_open(struct leakgate_buf *out,
          int fd,
          const char *path,
          size_t max,
          const char *what)
{
    struct stat st;
    int rc;

    if (fstat(fd, &st) != 0)
        rc = leakgate_error__set(LEAKGATE_EIO, "%s: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        rc = leakgate_error__set(LEAKGATE_EIO, "%s: is a directory, not a %s",
                                 path, what);
    else if (!S_ISREG(st.st_mode))
        rc = leakgate_error__set(LEAKGATE_EIO,
                                 "%s: is a %s, not a regular file: a %s is "
                                 "read only from a regular file",
                                 path,
                                 S_ISFIFO(st.st_mode)   ? "FIFO"
                                 : S_ISSOCK(st.st_mode) ? "socket"
                                 : S_ISBLK(st.st_mode)  ? "block device"
                                                        : "character device",
                                 what);
    else if ((uintmax_t)st.st_size > max)
        rc = leakgate_error__set(LEAKGATE_ETOOBIG,
                                 "%s: %jd bytes, more than the limit of %zu",
                                 path, (intmax_t)st.st_size, max);
    else if (fcntl(fd, F_SETFL, 0) != 0)
        rc =
            leakgate_error__set(LEAKGATE_EIO, "%s: cannot clear O_NONBLOCK: %s",
                                path, strerror(errno));
    else
        rc = read_fd(out, fd, path, max, (size_t)st.st_size);
    close(fd);
    return rc;
}

static int
read_failed(const char *path, const char *what)
{
    if (errno == ENOENT || errno == ENOTDIR)
        return leakgate_error__set(LEAKGATE_ENOTFOUND, "%s: no such %s", path,
                                   what);
    return leakgate_error__set(LEAKGATE_EIO, "%s: %s", path, strerror(errno));
}

const char *
leakgate_files__tmpdir(const char **note_out)
{
    static char note[512];
    const char *dir = getenv("TMPDIR");
    struct stat st;
    const char *why = NULL;

    note[0] = '\0';
    if (note_out)
        *note_out = note;
    if (!dir || !*dir)
        return "/tmp";
    if (stat(dir, &st) != 0)
        why = strerror(errno);
    else if (!S_ISDIR(st.st_mode))
        why = "not a directory";
    else if (access(dir, W_OK | X_OK) != 0)
        why = strerror(errno);
    if (!why)
        return dir;
    snprintf(note, sizeof note,
             "TMPDIR=%s cannot hold temporary files (%s): leakgate uses /tmp",
             dir, why);
    return "/tmp";
}

int
leakgate_files__read(struct leakgate_buf *out,
                     const char *path,
                     size_t max,
                     const char *what)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

    return fd < 0 ? read_failed(path, what)
                  : read_open(out, fd, path, max, what);
}

int
leakgate_files__read_at(struct leakgate_buf *out,
                        int dirfd,
                        const char *name,
                        const char *display,
                        size_t max,
                        const char *what)
{
    int fd =
        openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);

    return fd < 0 ? read_failed(display, what)
                  : read_open(out, fd, display, max, what);
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

/* Create "BASE.tmp.PID" in dirfd with the data, fsync'ed.  A file of
 * that name can only be left by an earlier process with this pid, which
 * is gone (or planted: O_NOFOLLOW and O_EXCL never write through it). */
static int
write_temp(int dirfd,
           const char *tmp,
           const char *path,
           const char *data,
           size_t len,
           const mode_t *mode,
           bool sync)
{
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(dirfd, tmp, flags, 0666);
    int rc = 0;

    if (fd < 0 && errno == EEXIST && unlinkat(dirfd, tmp, 0) == 0)
        fd = openat(dirfd, tmp, flags, 0666);
    if (fd < 0)
        return io_error(path, strerror(errno));
    if ((mode && fchmod(fd, *mode) != 0) || write_all(fd, data, len) != 0 ||
        (sync && fsync(fd) != 0))
        rc = io_error(path, strerror(errno));
    if (close(fd) != 0 && rc == 0)
        rc = io_error(path, strerror(errno));
    if (rc < 0)
        unlinkat(dirfd, tmp, 0);
    return rc;
}

/* BASE, or BASE with ".N" before its extension. */
static char *
candidate(const char *base, unsigned int n)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    const char *dot = strrchr(base, '.');

    if (n == 0)
        leakgate_buf__puts(&b, base);
    else if (!dot || dot == base)
        leakgate_buf__printf(&b, "%s.%u", base, n);
    else
        leakgate_buf__printf(&b, "%.*s.%u%s", (int)(dot - base), base, n, dot);
    return leakgate_buf__take(&b);
}

/* Move tmp to the first free candidate name in dirfd; never replaces a
 * file. */
static int
place_noclobber(char **final_out,
                int dirfd,
                const char *tmp,
                const char *base,
                const char *path)
{
    for (unsigned int n = 0; n < MAX_SUFFIX; n++) {
        char *name = candidate(base, n);
        int r;

        if (!name)
            return leakgate_error__set(LEAKGATE_ENOMEM, "path");
        r = renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE);
        if (r != 0 && (errno == EINVAL || errno == ENOSYS)) {
            /* A file system without RENAME_NOREPLACE: link(2) never
             * replaces either. */
            r = linkat(dirfd, tmp, dirfd, name, 0);
            if (r == 0)
                unlinkat(dirfd, tmp, 0);
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

/* The path written: DIR/NAME for the final name in path's directory. */
static char *
written_name(const char *path, const char *name)
{
    const char *slash = strrchr(path, '/');
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    if (slash)
        leakgate_buf__put(&b, path, (size_t)(slash - path) + 1);
    leakgate_buf__puts(&b, name);
    return leakgate_buf__take(&b);
}

/* Replace (or place) base in dirfd: check what is there, write the
 * temporary file, rename it.  *final_out: the name used (NOCLOBBER). */
static int
write_in(char **final_out,
         int dirfd,
         const char *base,
         const char *path,
         const char *data,
         size_t len,
         unsigned int flags)
{
    struct leakgate_buf tmp = LEAKGATE_BUF_INIT;
    struct stat st;
    mode_t mode = 0;
    int kind = LEAKGATE_FILES_ABSENT;
    int rc = 0;

    *final_out = NULL;
    if (!(flags & LEAKGATE_FILES_NOCLOBBER))
        rc = leakgate_files__check_entry(&kind, &st, dirfd, base, path);
    if (rc < 0 || kind == LEAKGATE_FILES_DISCARD)
        return rc;
    if (kind == LEAKGATE_FILES_REGULAR)
        mode = st.st_mode & 07777;
    leakgate_buf__printf(&tmp, "%s.tmp.%ld", base, (long)getpid());
    if (tmp.failed)
        return leakgate_error__set(LEAKGATE_ENOMEM, "path");
    rc = write_temp(dirfd, tmp.ptr, path, data, len,
                    (flags & LEAKGATE_FILES_KEEP_MODE) &&
                            kind == LEAKGATE_FILES_REGULAR
                        ? &mode
                        : NULL,
                    !(flags & LEAKGATE_FILES_NOSYNC));
    if (rc == 0 && (flags & LEAKGATE_FILES_NOCLOBBER))
        rc = place_noclobber(final_out, dirfd, tmp.ptr, base, path);
    else if (rc == 0 && renameat(dirfd, tmp.ptr, dirfd, base) != 0)
        rc = io_error(path, strerror(errno));
    if (rc == 0 && !(flags & LEAKGATE_FILES_NOSYNC))
        (void)fsync(dirfd); /* best effort: the rename is already atomic */
    if (rc < 0)
        unlinkat(dirfd, tmp.ptr, 0);
    leakgate_buf__dispose(&tmp);
    return rc;
}

int
leakgate_files__write_at(int dirfd,
                         const char *base,
                         const char *display,
                         const char *data,
                         size_t len,
                         unsigned int flags)
{
    char *final = NULL;
    int rc = write_in(&final, dirfd, base, display, data, len,
                      flags & ~LEAKGATE_FILES_NOCLOBBER);

    leakgate_util__free(final);
    return rc;
}

/* The missing parent directories of path (several processes may create
 * them at once: an existing one is fine).  Returns 0, LEAKGATE_EIO or
 * LEAKGATE_ENOMEM. */
static int
mkdirs_of(const char *path)
{
    char *dir = dir_of(path);
    int rc = dir ? leakgate_files__mkdirs(dir, "directory")
                 : leakgate_error__set(LEAKGATE_ENOMEM, "path");

    leakgate_util__free(dir);
    return rc;
}

static int
open_dir_of(int *fd_out, const char *path)
{
    char *dir = dir_of(path);
    int rc = 0;

    *fd_out = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (!dir)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "path");
    else if (*fd_out < 0)
        rc = io_error(path, strerror(errno));
    leakgate_util__free(dir);
    return rc;
}

/* path replaced in its directory; *final_out: the path written when
 * NOCLOBBER chose another name (else NULL). */
static int
write_file(char **final_out,
           const char *path,
           const char *data,
           size_t len,
           unsigned int flags)
{
    char *target = (flags & LEAKGATE_FILES_FOLLOW)
                       ? target_of(path)
                       : leakgate_util__strdup(path);
    const char *slash = target ? strrchr(target, '/') : NULL;
    char *name = NULL;
    int dirfd = -1, rc;

    *final_out = NULL;
    if (!target)
        return leakgate_error__set(LEAKGATE_ENOMEM, "path");
    rc = (flags & LEAKGATE_FILES_MKDIRS) ? mkdirs_of(target) : 0;
    if (rc == 0)
        rc = open_dir_of(&dirfd, target);
    if (rc == 0)
        rc = write_in(&name, dirfd, slash ? slash + 1 : target, path, data, len,
                      flags);
    if (dirfd >= 0)
        close(dirfd);
    if (rc == 0 && name) {
        *final_out = written_name(target, name);
        if (!*final_out)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "path");
    }
    leakgate_util__free(name);
    leakgate_util__free(target);
    return rc;
}

int
leakgate_files__write(char **written_out,
                      const char *path,
                      const char *data,
                      size_t len,
                      unsigned int flags)
{
    int stream = leakgate_files__stream_fd(path);
    char *final = NULL;
    int rc = stream >= 0 ? leakgate_files__write_stream(path, stream, data, len)
                         : write_file(&final, path, data, len, flags);

    if (written_out)
        *written_out = NULL;
    if (rc == 0 && written_out) {
        *written_out = final ? final : leakgate_util__strdup(path);
        final = NULL;
        if (!*written_out)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "path");
    }
    leakgate_util__free(final);
    return rc;
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
leakgate_files__mkdirs(const char *dir, const char *what)
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
    if (rc < 0) {
        int err = errno; /* kept for the caller's own message */

        rc = leakgate_error__set(LEAKGATE_EIO, "cannot create %s %s: %s", what,
                                 dir, strerror(err));
        errno = err;
    }
    leakgate_buf__dispose(&b);
    return rc;
}
