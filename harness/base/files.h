/* SPDX-License-Identifier: MIT */
/*
 * files: the file-system operations of the ratchet -- bounded reads,
 * atomic writes, and a lock that serialises leakgate processes updating
 * files in one directory.  Adapter over POSIX; depends on util and error.
 *
 * Atomic write: the data goes to "PATH.tmp.PID" in the same directory,
 * is fsync'ed, then renamed over PATH (or, without clobbering, to the
 * first free name), and the directory is fsync'ed.  Readers therefore see
 * the old file or the new one, never a mix, even when the writer is
 * killed with SIGKILL; a killed writer can only leave its PATH.tmp.PID
 * behind, which leakgate_files__clean_temps() removes once that process is
 * gone.
 */
#ifndef LEAKGATE_FILES_H
#define LEAKGATE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "util.h"

/*
 * Read all of path into out (appended), at most max bytes; `what` names
 * the kind of file in messages ("results file").  Returns 0;
 * LEAKGATE_ENOTFOUND ("PATH: no such WHAT"); LEAKGATE_ETOOBIG;
 * LEAKGATE_EIO ("PATH: is a directory" or the errno text);
 * LEAKGATE_ENOMEM.
 */
/*
 * The directory for leakgate's temporary files: $TMPDIR when it names a
 * directory this process can write to, else /tmp.  When $TMPDIR is set but
 * not usable, *note_out (when not NULL) says so in a line naming it and
 * why (static storage, overwritten by the next call); else it is "".
 * Cannot fail.
 */
const char *leakgate_files__tmpdir(const char **note_out);

int leakgate_files__read(struct leakgate_buf *out,
                         const char *path,
                         size_t max,
                         const char *what);

/* Flags of leakgate_files__write. */
#define LEAKGATE_FILES_KEEP_MODE 1u /* the new file gets the old one's mode */
#define LEAKGATE_FILES_NOCLOBBER                                               \
    2u /* never replace: PATH, else PATH with                                  \
          ".1", ".2"... before its extension */
#define LEAKGATE_FILES_MKDIRS                                                  \
    4u /* create PATH's missing parent directories (mkdir -p) */
#define LEAKGATE_FILES_NOSYNC                                                  \
    8u /* no fsync: still atomic for readers and against a killed writer,      \
          but a machine crash may lose it (a file rewritten often) */
#define LEAKGATE_FILES_FOLLOW                                                  \
    16u /* PATH may be a symbolic link: the file behind it is replaced and     \
           the link kept (the thresholds file, the user's own) */

/*
 * Write len bytes to path atomically (see above), inside PATH's
 * directory opened once (files_safe.c): a symbolic link (without
 * LEAKGATE_FILES_FOLLOW), a FIFO, a socket, a device, a directory or
 * another user's file at PATH is refused; the null device discards the
 * data; /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are
 * written as streams.  *written_out (may be NULL) receives the path
 * actually written, the caller's.  Returns 0; LEAKGATE_EUSAGE naming
 * PATH and what it is; LEAKGATE_EIO ("cannot write PATH: why");
 * LEAKGATE_ENOMEM.
 */
int leakgate_files__write(char **written_out,
                          const char *path,
                          const char *data,
                          size_t len,
                          unsigned int flags);

/* leakgate_files__write() of the entry base of the directory dirfd
 * (display: its path in messages); no NOCLOBBER, MKDIRS or FOLLOW. */
int leakgate_files__write_at(int dirfd,
                             const char *base,
                             const char *display,
                             const char *data,
                             size_t len,
                             unsigned int flags);

/*
 * Take an exclusive flock(2) on the directory holding path, waiting for
 * other holders.  *fd_out is the lock; release it with
 * leakgate_files__unlock().  Returns 0 or LEAKGATE_EIO.
 */
int leakgate_files__lock_dir(int *fd_out, const char *path);
void leakgate_files__unlock(int fd);

/* Remove PATH.tmp.PID files whose process no longer exists.  Best
 * effort: cannot fail. */
void leakgate_files__clean_temps(const char *path);

/* mkdir -p.  Returns 0, LEAKGATE_ENOMEM, or LEAKGATE_EIO "cannot create
 * WHAT DIR: why" (errno kept). */
int leakgate_files__mkdirs(const char *dir, const char *what);

/* ---- files_safe.c ------------------------------------------------------ */

/* What an output path names (leakgate_files__target()). */
#define LEAKGATE_FILES_ABSENT 0  /* nothing yet: created */
#define LEAKGATE_FILES_REGULAR 1 /* a regular file of this user: replaced */
#define LEAKGATE_FILES_DISCARD 2 /* the null device: nothing is written */
#define LEAKGATE_FILES_STREAM 3  /* a descriptor's name: written to it */

/* The descriptor /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N
 * names; -1 for other paths.  Cannot fail. */
int leakgate_files__stream_fd(const char *path);

/* Whether st is the null device (char 1:3).  Cannot fail. */
bool leakgate_files__is_null(const struct stat *st);

/* One of LEAKGATE_FILES_ABSENT..STREAM for path as an output, or
 * LEAKGATE_EUSAGE naming it (a link, FIFO, socket, other device,
 * directory, another user's file), LEAKGATE_EIO, LEAKGATE_ENOMEM. */
int leakgate_files__target(const char *path);

/* The same for the entry base of the directory dirfd (display: path):
 * *kind_out ABSENT, REGULAR or DISCARD, *st_out (may be NULL) its
 * lstat.  Returns 0, LEAKGATE_EUSAGE or LEAKGATE_EIO. */
int leakgate_files__check_entry(int *kind_out,
                                struct stat *st_out,
                                int dirfd,
                                const char *base,
                                const char *path);

/* LEAKGATE_EUSAGE saying why an entry of this lstat is not written. */
int leakgate_files__refuse(const char *path, const struct stat *st);

/* Write all of data to fd (a stream output named path).  Returns 0 or
 * LEAKGATE_EIO with the errno text. */
int leakgate_files__write_stream(const char *path,
                                 int fd,
                                 const char *data,
                                 size_t len);

/* Open the directory name under at (a descriptor or AT_FDCWD), never
 * through a symbolic link, and check that it belongs to this user;
 * make_own_dir creates it first when missing.  display names it.
 * Returns 0; LEAKGATE_EUSAGE (a link, not a directory, another user's);
 * LEAKGATE_ENOTFOUND; LEAKGATE_EIO with the errno text. */
int leakgate_files__open_own_dir(int *fd_out,
                                 int at,
                                 const char *name,
                                 const char *display);
int leakgate_files__make_own_dir(int *fd_out,
                                 int at,
                                 const char *name,
                                 const char *display);

/* openat(at, name, flags | O_NOFOLLOW | O_CLOEXEC, 0666), kept only when
 * it is a regular file of this user.  Returns 0, or -1 with errno (EPERM
 * for another kind or owner). */
int leakgate_files__open_at(int *fd_out, int at, const char *name, int flags);

/* Unlink the entries of directory name under at for which ours() holds
 * (never a directory; a link as a link), then remove it: only when it is
 * a directory of this user.  Best effort: cannot fail. */
void leakgate_files__empty_own_dir(int at,
                                   const char *name,
                                   bool (*ours)(const char *name));

/* Remove this user's replay scratch directories (tmp/leakgate-replay.*)
 * older than max_age_s seconds, and in them only a replay's own files (a
 * failed replay keeps its directory for its log).  Best effort: cannot
 * fail. */
#define LEAKGATE_FILES_STALE_REPLAY_S (24u * 3600u)
void leakgate_files__clean_stale_replays(const char *tmp,
                                         unsigned int max_age_s);

/* path made absolute against the working directory now (the caller's,
 * *out).  Returns 0, LEAKGATE_EIO or LEAKGATE_ENOMEM. */
int leakgate_files__absolute(char **out, const char *path);

/* Read the regular file name under dirfd (never through a link) as
 * leakgate_files__read() does; display names it. */
int leakgate_files__read_at(struct leakgate_buf *out,
                            int dirfd,
                            const char *name,
                            const char *display,
                            size_t max,
                            const char *what);

#endif
