/* SPDX-License-Identifier: MIT */
/*
 * corpus_ctor: a library whose constructor leaks 4,321 bytes, dlopen'd by
 * the corpus (leaks/dlopen_constructor) and by runtime_once.  dlopen runs
 * the constructor inside the C runtime (_dlerror_run, _dl_init), yet the
 * allocation is the library's: the built-in ignore list must not hide it.
 */
#include <stdlib.h>

void *corpus_ctor_kept;

__attribute__((constructor)) static void
corpus_ctor_leak(void)
{
    corpus_ctor_kept = malloc(4321); /* MARK:ctor_leak */
    corpus_ctor_kept = NULL;
}
