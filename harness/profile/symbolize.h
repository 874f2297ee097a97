/* SPDX-License-Identifier: MIT */
/*
 * symbolize: turn return addresses into frames (function, file:line,
 * inlined frames) with elfutils' libdwfl.  Adapter stage 3; the only module
 * that includes elfutils headers.
 *
 * Every lookup uses pc - 1 (a return address points after the call), so
 * lines name the call and inlined frames are found.  A pc without debug
 * information becomes one frame with function (from the ELF symbol table)
 * or NULL, file NULL, and module + offset.  All strings returned are owned
 * by the symbolizer and valid until it is freed.
 *
 * libdw is loaded with dlopen when the first symbolizer is made, never
 * linked; when it cannot be loaded, symbolizers still work and every frame
 * is a module + offset (leakgate_symbolize__no_libdw() says why).
 *
 * Not thread-safe: one symbolizer per thread.  Call it with this thread's
 * jemalloc profiling inactive (FACTS trap 1); the gate does.
 */
#ifndef LEAKGATE_SYMBOLIZE_H
#define LEAKGATE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapfile.h"

struct leakgate_frame {
    uintptr_t pc;            /* the return address this frame came from */
    const char *function;    /* demangled if C++; NULL when unknown */
    const char *file;        /* source path as in DWARF; NULL when unknown */
    unsigned int line;       /* 0 when unknown */
    const char *module;      /* path of the ELF object; NULL when unknown */
    uintptr_t module_offset; /* pc - the module's load bias */
    bool inlined;            /* inlined into the next (outer) frame */
};

struct leakgate_symbolizer;

/*
 * A symbolizer for this process (modules from /proc/self/maps, reported
 * lazily on first use and again when a pc falls outside every known module,
 * e.g. after dlopen).  Returns 0, LEAKGATE_ENOMEM or LEAKGATE_ESYMBOL.
 */
int leakgate_symbolize__new_self(struct leakgate_symbolizer **out);

/*
 * A symbolizer for another process's addresses, from the MAPPED_LIBRARIES
 * of a heap profile (offline, `leakgate diff`): each mapped ELF file is
 * reported at the address its executable mapping implies.  `exe`, when not
 * NULL, replaces the path of the main executable.  Returns 0,
 * LEAKGATE_ENOMEM or LEAKGATE_ESYMBOL.
 */
int leakgate_symbolize__new_maps(struct leakgate_symbolizer **out,
                                 const struct leakgate_heap_mapping *maps,
                                 size_t nmaps,
                                 const char *exe);

/*
 * Symbolize npcs return addresses (innermost first) into frames, innermost
 * first; a pc with inlined calls expands to several frames (the inlined
 * ones first, `inlined` set).  *frames_out is the caller's (free with
 * leakgate_util__free); its strings belong to the symbolizer.
 * Returns 0 or LEAKGATE_ENOMEM.  Unknown addresses are not errors.
 */
int leakgate_symbolize__frames(struct leakgate_symbolizer *sym,
                               struct leakgate_frame **frames_out,
                               size_t *nframes_out,
                               const uintptr_t *pcs,
                               size_t npcs);

/*
 * The main executable's path and GNU build-id as lowercase hex (both owned
 * by the symbolizer; build-id "" when the binary has none).
 * Returns 0 or LEAKGATE_ESYMBOL.
 */
int leakgate_symbolize__main_module(struct leakgate_symbolizer *sym,
                                    const char **path_out,
                                    const char **build_id_out);

/*
 * This process's executable (as /proc/self/exe names it) and GNU build-id
 * as lowercase hex ("" when it has none), what
 * leakgate_symbolize__main_module() says of a self symbolizer, without
 * making one (no libdw is loaded): static text, read once.
 * Returns 0 or LEAKGATE_ESYMBOL (no /proc).
 */
int leakgate_symbolize__self_main(const char **path_out,
                                  const char **build_id_out);

/*
 * Why sym has no function names from debug information nor file:line:
 * "<soname> could not be loaded (<dlerror>)" when libdw is missing (every
 * frame is module + offset, function names only where the dynamic symbol
 * table has them); NULL when libdw is loaded.  The text is static.
 * Cannot fail.
 */
const char *leakgate_symbolize__no_libdw(const struct leakgate_symbolizer *sym);

/*
 * The SONAME the symbolizer dlopens libdw by (default "libdw.so.1", or
 * LEAKGATE_LIBDW_SONAME at build time).  Read once, when the first
 * symbolizer is made: tests set it first to see a missing libdw.
 */
extern const char *leakgate_symbolize__libdw_soname;

void leakgate_symbolize__free(struct leakgate_symbolizer *sym);

/* True when the frame's module is a system library (under /lib, /usr/lib,
 * /lib64 or /usr/lib64): libc, ld.so and friends, never the user's code.
 * Cannot fail. */
bool leakgate_symbolize__system_frame(const struct leakgate_frame *f);

#endif
