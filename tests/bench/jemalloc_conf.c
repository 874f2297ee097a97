/* SPDX-License-Identifier: MIT */
/*
 * bench_<suite>_jemalloc: the plain runner allocating with jemalloc in the
 * configuration a gated binary has (harness/profile.c), without leakgate:
 * what a process pays for the allocator and its profiler alone (Debian's
 * libjemalloc also loads libstdc++).  ci/bench's ctest and one suites show
 * it beside plain and gated.
 */
const char *malloc_conf =
    "prof:true,prof_active:false,lg_prof_sample:0,prof_unbias:false";
