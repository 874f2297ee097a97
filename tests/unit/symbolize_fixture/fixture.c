/* SPDX-License-Identifier: MIT */
/*
 * symbolize fixture (see fixture.h).  The empty asm statements after each
 * call keep the calls from becoming tail calls, which would change the
 * return addresses recorded.
 */
#include "fixture.h"

__attribute__((noinline)) static void
record(struct lg_fixture_site *site, unsigned int line)
{
    site->pc = (uintptr_t)__builtin_return_address(0);
    site->line = line;
    __asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void
fixture_inner(struct lg_fixture_site *site, unsigned int called_at)
{
    site->inner_call = called_at;
    record(site, __LINE__);
    __asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void
fixture_middle(struct lg_fixture_site *site, unsigned int called_at)
{
    site->middle_call = called_at;
    fixture_inner(site, __LINE__);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void
lg_fixture_plain(struct lg_fixture_site *site)
{
    site->inner_call = 0;
    site->middle_call = 0;
    record(site, __LINE__);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void
lg_fixture_inlined(struct lg_fixture_site *site)
{
    fixture_middle(site, __LINE__);
    __asm__ volatile("" ::: "memory");
}
