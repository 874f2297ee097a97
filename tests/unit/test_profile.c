/* SPDX-License-Identifier: MIT */
/*
 * test_profile: the part of profile.c that reads no jemalloc: which
 * MALLOC_CONF settings keep jemalloc from counting every allocation
 * (leakgate refuses them, exit 3), and the message that names them.
 */
#include "profile.h"

#include <stdlib.h>
#include <string.h>

#include "leakgate/leakgate.h"
#include "unit.h"

static bool
inexact(const char *conf, const char *want)
{
    char out[80] = "";
    bool got = leakgate_profile__conf_inexact(out, sizeof out, conf);

    return want ? got && strcmp(out, want) == 0 : !got && out[0] == '\0';
}

static void
test_profile__conf_inexact(void)
{
    CU_ASSERT(inexact("lg_prof_sample:19", "lg_prof_sample:19"));
    CU_ASSERT(inexact("narenas:2,prof_unbias:true", "prof_unbias:true"));
    CU_ASSERT(inexact("prof:false", "prof:false"));
    CU_ASSERT(inexact("lg_prof_sample:0,lg_prof_sample:4", "lg_prof_sample:4"));
    /* must stay quiet: exact settings, other keys, the last one wins */
    CU_ASSERT(inexact(NULL, NULL));
    CU_ASSERT(inexact("", NULL));
    CU_ASSERT(inexact("narenas:2,tcache:false", NULL));
    CU_ASSERT(inexact("prof:true,lg_prof_sample:0,prof_unbias:false", NULL));
    CU_ASSERT(inexact("lg_prof_sample:19,lg_prof_sample:0", NULL));
    /* jemalloc reads numbers in any C base: these are 0 */
    CU_ASSERT(inexact("lg_prof_sample:00", NULL));
    CU_ASSERT(inexact("lg_prof_sample:0x0", NULL));
    CU_ASSERT(inexact("lg_prof_sample:0x13", "lg_prof_sample:0x13"));
    CU_ASSERT(inexact("lg_prof_sample:", "lg_prof_sample:"));
    /* a key that only starts like one of them */
    CU_ASSERT(inexact("prof_active:false,prof_accum:true", NULL));
    CU_ASSERT(inexact("lg_prof_sample_x:3", NULL));
}

static void
test_profile__inexact_error_names_the_setting(void)
{
    setenv("MALLOC_CONF", "narenas:2,lg_prof_sample:19", 1);
    CU_ASSERT_EQUAL(leakgate_profile__inexact_error("lg_prof_sample:19"),
                    LEAKGATE_ENOPROF);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(),
                                  "remove lg_prof_sample:19 from MALLOC_CONF"));
    unsetenv("MALLOC_CONF");
    CU_ASSERT_EQUAL(leakgate_profile__inexact_error("lg_prof_sample:19"),
                    LEAKGATE_ENOPROF);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "malloc_conf"));
}

const char *const unit_suite = "profile";
const struct unit_case unit_cases[] = {
    {"conf_inexact", test_profile__conf_inexact},
    {"inexact_error_names_the_setting",
     test_profile__inexact_error_names_the_setting},
    {NULL, NULL}};
