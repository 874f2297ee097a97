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

#include "util.h"

/*
 * Read all of path into out (appended), at most max bytes; `what` names
 * the kind of file in messages ("results file").  Returns 0;
 * LEAKGATE_ENOTFOUND ("PATH: no such WHAT"); LEAKGATE_ETOOBIG;
 * LEAKGATE_EIO ("PATH: is a directory" or the errno text);
 * LEAKGATE_ENOMEM.
 */
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

/*
 * Write len bytes to path atomically (see above).  *written_out (may be
 * NULL) receives the path actually written, the caller's.  Returns 0;
 * LEAKGATE_EIO ("cannot write PATH: why"); LEAKGATE_ENOMEM.
 */
int leakgate_files__write(char **written_out,
                          const char *path,
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

/* mkdir -p.  Returns 0 or LEAKGATE_EIO naming the directory. */
int leakgate_files__mkdirs(const char *dir);

#endif
