/* SPDX-License-Identifier: MIT */
/*
 * files_safe: the checks that keep leakgate's writes and deletions where
 * they belong (see files.h).  Every output file is replaced inside its
 * directory, opened once as a descriptor: the temporary file is created
 * with O_EXCL | O_NOFOLLOW and renamed with renameat(), so a symbolic
 * link in its place is never written through; a name that is a link, a
 * FIFO, a socket, a device other than the null device, a directory or
 * another user's file is refused (LEAKGATE_EUSAGE, naming it).  The null
 * device discards, and /dev/stdout, /dev/stderr, /dev/fd/N and
 * /proc/self/fd/N are written as streams to that descriptor: neither is
 * ever renamed over or unlinked.  Directories leakgate keeps records in
 * (the stores of outputs.c) are opened with O_NOFOLLOW and must belong
 * to this user; only files in them are unlinked, through their
 * descriptor, so a planted link is removed as a link, never followed.
 */
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

int
leakgate_files__stream_fd(const char *path)
{
    static const char *const prefixes[] = {"/dev/fd/", "/proc/self/fd/"};
    long fd = -1;

    if (strcmp(path, "/dev/stdout") == 0)
        return 1;
    if (strcmp(path, "/dev/stderr") == 0)
        return 2;
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(prefixes[i]);
        const char *p = path + n;

        if (strncmp(path, prefixes[i], n) != 0 || *p < '0' || *p > '9')
            continue;
        for (fd = 0; *p >= '0' && *p <= '9' && fd < 1000000; p++)
            fd = fd * 10 + (*p - '0');
        return *p == '\0' && fd < 1000000 ? (int)fd : -1;
    }
    return -1;
}

bool
leakgate_files__is_null(const struct stat *st)
{
    return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 &&
           minor(st->st_rdev) == 3;
}

static const char *
kind_name(mode_t mode)
{
    if (S_ISLNK(mode))
        return "a symbolic link";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    return "not a regular file";
}

int
leakgate_files__refuse(const char *path, const struct stat *st)
{
    if (S_ISLNK(st->st_mode))
        return leakgate_error__set(
            LEAKGATE_EUSAGE,
            "%s: is a symbolic link: leakgate does not write through one "
            "(its target would be replaced); remove it or name the file "
            "itself",
            path);
    if (!S_ISREG(st->st_mode))
        return leakgate_error__set(
            LEAKGATE_EUSAGE,
            "%s: is %s, not a regular file: leakgate writes its outputs "
            "only as regular files (name a file, or /dev/null to discard)",
            path, kind_name(st->st_mode));
    return leakgate_error__set(
        LEAKGATE_EUSAGE,
        "%s: belongs to uid %ld, not to this user (uid %ld): leakgate does "
        "not replace another user's file",
        path, (long)st->st_uid, (long)geteuid());
}

int
leakgate_files__check_entry(int *kind_out,
                            struct stat *st_out,
                            int dirfd,
                            const char *base,
                            const char *path)
{
    struct stat st;

    *kind_out = LEAKGATE_FILES_ABSENT;
    if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return 0;
        return leakgate_error__set(LEAKGATE_EIO, "cannot write %s: %s", path,
                                   strerror(errno));
    }
    if (st_out)
        *st_out = st;
    if (leakgate_files__is_null(&st)) {
        *kind_out = LEAKGATE_FILES_DISCARD;
        return 0;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
        return leakgate_files__refuse(path, &st);
    *kind_out = LEAKGATE_FILES_REGULAR;
    return 0;
}

int
leakgate_files__target(const char *path)
{
    struct stat st;
    const char *slash = strrchr(path, '/');
    char *dir;
    int fd, kind, rc;

    if (leakgate_files__stream_fd(path) >= 0)
        return LEAKGATE_FILES_STREAM;
    if (lstat(path, &st) == 0 && leakgate_files__is_null(&st))
        return LEAKGATE_FILES_DISCARD;
    dir = slash ? leakgate_util__strndup(
                      path, slash == path ? 1 : (size_t)(slash - path))
                : leakgate_util__strdup(".");
    if (!dir)
        return leakgate_error__set(LEAKGATE_ENOMEM, "path");
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    leakgate_util__free(dir);
    if (fd < 0)
        return LEAKGATE_FILES_ABSENT; /* created (or refused) when written */
    rc = leakgate_files__check_entry(&kind, NULL, fd, slash ? slash + 1 : path,
                                     path);
    close(fd);
    return rc < 0 ? rc : kind;
}

int
leakgate_files__write_stream(const char *path,
                             int fd,
                             const char *data,
                             size_t len)
{
    struct stat st;

    if (fstat(fd, &st) != 0)
        return leakgate_error__set(LEAKGATE_EIO, "cannot write %s: %s", path,
                                   strerror(errno));
    while (len > 0) {
        ssize_t n = write(fd, data, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return leakgate_error__set(LEAKGATE_EIO, "cannot write %s: %s",
                                       path, strerror(errno));
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The directory `name` under at is a directory of this user, opened
 * without following a link.  display names it in messages. */
int
leakgate_files__open_own_dir(int *fd_out,
                             int at,
                             const char *name,
                             const char *display)
{
    struct stat st;
    int fd;

    *fd_out = -1;
    fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
        fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return leakgate_error__set(
            LEAKGATE_EUSAGE,
            "%s: is %s, not a directory leakgate made: it keeps its records "
            "only in a directory of its own; remove it",
            display, kind_name(st.st_mode));
    if (fd < 0)
        return leakgate_error__set(errno == ENOENT ? LEAKGATE_ENOTFOUND
                                                   : LEAKGATE_EIO,
                                   "%s: %s", display, strerror(errno));
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
        int rc = leakgate_error__set(
            LEAKGATE_EUSAGE,
            "%s: belongs to uid %ld, not to this user (uid %ld): leakgate "
            "keeps its records only in a directory of its own; remove it",
            display, (long)st.st_uid, (long)geteuid());

        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

int
leakgate_files__make_own_dir(int *fd_out,
                             int at,
                             const char *name,
                             const char *display)
{
    if (mkdirat(at, name, 0777) != 0 && errno != EEXIST) {
        int err = errno, rc;

        *fd_out = -1;
        rc = leakgate_error__set(LEAKGATE_EIO, "cannot create directory %s: %s",
                                 display, strerror(err));
        errno = err; /* kept for the caller's own message */
        return rc;
    }
    return leakgate_files__open_own_dir(fd_out, at, name, display);
}

int
leakgate_files__open_at(int *fd_out, int at, const char *name, int flags)
{
    struct stat st;
    int fd = openat(at, name, flags | O_NOFOLLOW | O_CLOEXEC, 0666);

    *fd_out = -1;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    *fd_out = fd;
    return 0;
}

/* A directory stream over fd (which it owns from now: closed on failure
 * too), or NULL. */
static DIR *
dir_stream(int fd)
{
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

    if (!d && fd >= 0)
        close(fd);
    return d;
}

void
leakgate_files__empty_own_dir(int at,
                              const char *name,
                              bool (*ours)(const char *name))
{
    struct stat st;
    DIR *d;
    int fd;

    if (leakgate_files__open_own_dir(&fd, at, name, name) < 0 ||
        !(d = dir_stream(fd)))
        return;
    for (struct dirent *de = readdir(d); de; de = readdir(d)) {
        /* A link is removed as a link; a directory is left alone. */
        if (ours(de->d_name) &&
            fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            !S_ISDIR(st.st_mode))
            (void)unlinkat(fd, de->d_name, 0);
    }
    closedir(d);
    (void)unlinkat(at, name, AT_REMOVEDIR);
}

/* A file a replay's scratch directory holds (replay.c, run_replay.c). */
static bool
replay_file(const char *name)
{
    static const char *const names[] = {"list", "list.json", "list.exact",
                                        "list.probe", "replay.log"};

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i]) == 0)
            return true;
    }
    return false;
}

void
leakgate_files__clean_stale_replays(const char *tmp, unsigned int max_age_s)
{
    struct stat st;
    time_t now = time(NULL);
    DIR *d;
    int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (!(d = dir_stream(fd)))
        return;
    for (struct dirent *de = readdir(d); de; de = readdir(d)) {
        /* Only this user's, older than max_age_s: a failed replay's
         * directory is kept for its log, named in the error, a while. */
        if (strncmp(de->d_name, "leakgate-replay.", 16) != 0 ||
            fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
            now - st.st_mtime < (time_t)max_age_s)
            continue;
        leakgate_files__empty_own_dir(fd, de->d_name, replay_file);
    }
    closedir(d);
}

int
leakgate_files__absolute(char **out, const char *path)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char cwd[4096];

    if (path[0] == '/' || leakgate_files__stream_fd(path) >= 0) {
        *out = leakgate_util__strdup(path);
    } else if (!getcwd(cwd, sizeof cwd)) {
        *out = NULL;
        return leakgate_error__set(LEAKGATE_EIO,
                                   "%s: the working directory is unknown: %s",
                                   path, strerror(errno));
    } else {
        /* "./x" and "x" alike: the name stays as written after it. */
        leakgate_buf__printf(&b, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd,
                             strncmp(path, "./", 2) == 0 ? path + 2 : path);
        *out = leakgate_buf__take(&b);
    }
    return *out ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "path");
}
