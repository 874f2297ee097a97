/* SPDX-License-Identifier: MIT */
/*
 * render: draw DOT text with Graphviz's `dot` (SVG for the browser, PDF
 * for the archive).  Adapter: the only module that runs another program.
 * `dot` is looked up on PATH and is optional at run time: without it the
 * callers keep the DOT text and say so.
 *
 * dot runs as a child process (posix_spawnp: no fork of a large test
 * process) with stdin and stdout on /dev/null and stderr captured for the
 * error message; it is killed when it outlives the timeout, so a broken
 * or hanging Graphviz never hangs a test run.  Call it with recording
 * inactive: it allocates.
 */
#ifndef LEAKGATE_RENDER_H
#define LEAKGATE_RENDER_H

#include <stddef.h>

#include "leakgate/leakgate.h"

/* How long dot may take by default, in milliseconds. */
#define LEAKGATE_RENDER_TIMEOUT_MS 30000u

/*
 * Run `dot -T<format> -o out_path in_path` (format "svg" or "pdf"; any
 * format dot knows is passed through).  out_path is written by dot
 * itself; on failure it may be left partial, the caller owns it.
 * Returns 0; LEAKGATE_ENOTFOUND when there is no `dot` on PATH;
 * LEAKGATE_ERROR when dot failed, was killed or timed out (the detail
 * says which, with the first line dot printed on stderr); LEAKGATE_EIO
 * when it could not be started.
 */
int leakgate_render__file(const char *in_path,
                          const char *out_path,
                          const char *format,
                          unsigned int timeout_ms);

/*
 * Draw `len` bytes of DOT text into *out (*len_out bytes, NUL-terminated
 * for convenience; a PDF is binary), through two temporary files in
 * $TMPDIR (or /tmp) that are removed afterwards.  Returns what
 * leakgate_render__file() returns, or LEAKGATE_ENOMEM; *out is the
 * caller's (leakgate_util__free), NULL on failure.
 */
int leakgate_render__text(char **out,
                          size_t *len_out,
                          const char *dot,
                          size_t len,
                          const char *format,
                          unsigned int timeout_ms);

/* leakgate_render__text() for n formats (at most LEAKGATE_RENDER_MAX) of
 * the same DOT text, their dot processes run side by side: outs[i],
 * lens[i] for formats[i].  On failure every outs[i] is NULL. */
#define LEAKGATE_RENDER_MAX 4
int leakgate_render__texts(char **outs,
                           size_t *lens,
                           const char *dot,
                           size_t len,
                           const char *const *formats,
                           size_t n,
                           unsigned int timeout_ms);

/*
 * Read a whole file into *out (NUL-terminated, *len_out bytes without the
 * NUL), refusing files over max_bytes.  Returns 0, LEAKGATE_EIO naming the
 * path and the cause, LEAKGATE_ETOOBIG or LEAKGATE_ENOMEM.
 */
int leakgate_render__read_file(char **out,
                               size_t *len_out,
                               const char *path,
                               size_t max_bytes);

#endif
