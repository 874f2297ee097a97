/* SPDX-License-Identifier: MIT */
/* options: flags, values in both spellings, env twins, errors. */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "leakgate/leakgate.h"

const char *const unit_suite = "options";

static void
test_options__defaults(void)
{
    struct leakgate_gate_options o;
    char *argv[] = {(char[]){"prog"}, NULL};

    unsetenv("LEAKGATE_THRESHOLDS");
    unsetenv("LEAKGATE_FILTER");
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 1, argv), 0);
    CU_ASSERT_PTR_NULL(o.thresholds_path);
    CU_ASSERT_PTR_NULL(o.filter);
    CU_ASSERT_EQUAL(o.list, 0);
    CU_ASSERT_EQUAL(o.version, LEAKGATE_GATE_OPTIONS_VERSION);
}

static void
test_options__values_and_flags(void)
{
    struct leakgate_gate_options o;
    char *argv[] = {(char[]){"prog"},       (char[]){"--thresholds"},
                    (char[]){"t.yaml"},     (char[]){"--filter=a/*"},
                    (char[]){"--list"},     (char[]){"--report-dir"},
                    (char[]){"out"},        (char[]){"--junit=j.xml"},
                    (char[]){"--json"},     (char[]){"r.json"},
                    (char[]){"--no-color"}, (char[]){"--update-thresholds"}};

    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 12, argv), 0);
    CU_ASSERT_STRING_EQUAL(o.thresholds_path, "t.yaml");
    CU_ASSERT_STRING_EQUAL(o.filter, "a/*");
    CU_ASSERT_STRING_EQUAL(o.report_dir, "out");
    CU_ASSERT_STRING_EQUAL(o.junit_path, "j.xml");
    CU_ASSERT_STRING_EQUAL(o.json_path, "r.json");
    CU_ASSERT_EQUAL(o.list, 1);
    CU_ASSERT_EQUAL(o.color, 0);
    CU_ASSERT_EQUAL(o.update_thresholds, 1);
}

static void
test_options__env_twins_lose_to_flags(void)
{
    struct leakgate_gate_options o;
    char *argv[] = {(char[]){"prog"}, (char[]){"--filter"}, (char[]){"flag/*"}};

    setenv("LEAKGATE_FILTER", "env/*", 1);
    setenv("LEAKGATE_JUNIT", "env.xml", 1);
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 3, argv), 0);
    CU_ASSERT_STRING_EQUAL(o.filter, "flag/*");
    CU_ASSERT_STRING_EQUAL(o.junit_path, "env.xml");
    unsetenv("LEAKGATE_FILTER");
    unsetenv("LEAKGATE_JUNIT");
}

static void
test_options__errors_name_the_option(void)
{
    struct leakgate_gate_options o;
    char *unknown[] = {(char[]){"prog"}, (char[]){"--bogus"}};
    char *missing[] = {(char[]){"prog"}, (char[]){"--thresholds"}};
    char *empty[] = {(char[]){"prog"}, (char[]){"--json="}};

    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 2, unknown),
                    LEAKGATE_EUSAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "--bogus"));
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 2, missing),
                    LEAKGATE_EUSAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "--thresholds"));
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 2, empty), LEAKGATE_EUSAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "--json"));
}

static void
test_options__usage_and_strerror(void)
{
    CU_ASSERT_PTR_NOT_NULL(
        strstr(leakgate_gate_options_usage(), "--thresholds FILE"));
    CU_ASSERT_STRING_EQUAL(leakgate_strerror(LEAKGATE_ECONFIG),
                           "invalid thresholds file");
    CU_ASSERT_STRING_EQUAL(leakgate_strerror(-999), "unknown error");
}

static void
test_options__ratchet_flags_and_twins(void)
{
    struct leakgate_gate_options o;
    char *argv[] = {(char[]){"prog"}, (char[]){"--tighten"},
                    (char[]){"--slack=4 KiB"}};
    char *plain[] = {(char[]){"prog"}};
    char *bad[] = {(char[]){"prog"}, (char[]){"--slack"}, (char[]){"lots"}};

    unsetenv("LEAKGATE_UPDATE_THRESHOLDS");
    unsetenv("LEAKGATE_TIGHTEN");
    unsetenv("LEAKGATE_SLACK");
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 3, argv), 0);
    CU_ASSERT_EQUAL(o.tighten, 1);
    CU_ASSERT_EQUAL(o.update_thresholds, 0);
    CU_ASSERT_STRING_EQUAL(o.slack, "4 KiB");
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 1, plain), 0);
    CU_ASSERT_EQUAL(o.tighten, 0);
    CU_ASSERT_PTR_NULL(o.slack);
    setenv("LEAKGATE_UPDATE_THRESHOLDS", "1", 1);
    setenv("LEAKGATE_TIGHTEN", "0", 1);
    setenv("LEAKGATE_SLACK", "10%", 1);
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 1, plain), 0);
    CU_ASSERT_EQUAL(o.update_thresholds, 1);
    CU_ASSERT_EQUAL(o.tighten, 0); /* "0" is off */
    CU_ASSERT_STRING_EQUAL(o.slack, "10%");
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 3, argv), 0);
    CU_ASSERT_STRING_EQUAL(o.slack, "4 KiB"); /* the flag wins */
    setenv("LEAKGATE_SLACK", "lots", 1);
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 1, plain), LEAKGATE_EUSAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "LEAKGATE_SLACK: "));
    unsetenv("LEAKGATE_UPDATE_THRESHOLDS");
    unsetenv("LEAKGATE_TIGHTEN");
    unsetenv("LEAKGATE_SLACK");
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 3, bad), LEAKGATE_EUSAGE);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           "option '--slack': invalid slack 'lots' (expected "
                           "a percentage from 0% to 10000%, such as 25%, or "
                           "a size such as 4 KiB)");
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_gate_options_usage(), "--tighten"));
}

/* --replay-timeout: whole seconds (an "s" allowed), 1 and up, the env
 * twin losing to the flag; anything else names the option. */
static void
test_options__replay_timeout(void)
{
    struct leakgate_gate_options o;
    char *ok[] = {(char[]){"prog"}, (char[]){"--replay-timeout=45s"}};
    char *zero[] = {(char[]){"prog"}, (char[]){"--replay-timeout"},
                    (char[]){"0"}};
    char *word[] = {(char[]){"prog"}, (char[]){"--replay-timeout=soon"}};
    char *big[] = {(char[]){"prog"},
                   (char[]){"--replay-timeout=99999999999999999999"}};
    char *none[] = {(char[]){"prog"}, NULL};

    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 2, ok), 0);
    CU_ASSERT_STRING_EQUAL(o.replay_timeout, "45s");
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 3, zero), LEAKGATE_EUSAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(),
                                  "option '--replay-timeout': invalid timeout "
                                  "'0'"));
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 2, word), LEAKGATE_EUSAGE);
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 2, big), LEAKGATE_EUSAGE);
    setenv("LEAKGATE_REPLAY_TIMEOUT", "12", 1);
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 1, none), 0);
    CU_ASSERT_STRING_EQUAL(o.replay_timeout, "12");
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 2, ok), 0);
    CU_ASSERT_STRING_EQUAL(o.replay_timeout, "45s");
    setenv("LEAKGATE_REPLAY_TIMEOUT", "1h", 1);
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 1, none), LEAKGATE_EUSAGE);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(leakgate_error_last(), "LEAKGATE_REPLAY_TIMEOUT: invalid"));
    unsetenv("LEAKGATE_REPLAY_TIMEOUT");
}

/* The program's own arguments: from the first other argument or after
 * "--", never read as leakgate's; LEAKGATE_LIST is --list's twin. */
static void
test_options__program_arguments(void)
{
    struct leakgate_gate_options o;
    char *positional[] = {(char[]){"prog"},   (char[]){"--filter"},
                          (char[]){"a/*"},    (char[]){"data.txt"},
                          (char[]){"--list"}, (char[]){"-v"}};
    char *separated[] = {(char[]){"prog"}, (char[]){"--"}, (char[]){"--junit"},
                         (char[]){"x.xml"}};
    char *dash[] = {(char[]){"prog"}, (char[]){"-"}, (char[]){"--bogus"}};
    char *none[] = {(char[]){"prog"}, NULL};
    int at = -1;

    unsetenv("LEAKGATE_LIST");
    unsetenv("LEAKGATE_JUNIT");
    CU_ASSERT_EQUAL(leakgate_gate_options_parse_args(&o, 6, positional, &at),
                    0);
    CU_ASSERT_EQUAL(at, 3);
    CU_ASSERT_STRING_EQUAL(o.filter, "a/*");
    CU_ASSERT_EQUAL(o.list, 0);
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 6, positional), 0);
    CU_ASSERT_EQUAL(leakgate_gate_options_parse_args(&o, 4, separated, &at), 0);
    CU_ASSERT_EQUAL(at, 2);
    CU_ASSERT_PTR_NULL(o.junit_path);
    CU_ASSERT_EQUAL(leakgate_gate_options_parse_args(&o, 3, dash, &at), 0);
    CU_ASSERT_EQUAL(at, 1);
    CU_ASSERT_EQUAL(leakgate_gate_options_parse_args(&o, 1, none, &at), 0);
    CU_ASSERT_EQUAL(at, 1);
    CU_ASSERT_EQUAL(o.list, 0);
    setenv("LEAKGATE_LIST", "1", 1);
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 1, none), 0);
    CU_ASSERT_EQUAL(o.list, 1);
    setenv("LEAKGATE_LIST", "0", 1);
    CU_ASSERT_EQUAL(leakgate_gate_options_parse(&o, 1, none), 0);
    CU_ASSERT_EQUAL(o.list, 0);
    unsetenv("LEAKGATE_LIST");
}

const struct unit_case unit_cases[] = {
    {"test_options__program_arguments", test_options__program_arguments},
    {"test_options__replay_timeout", test_options__replay_timeout},
    {"test_options__defaults", test_options__defaults},
    {"test_options__values_and_flags", test_options__values_and_flags},
    {"test_options__env_twins_lose_to_flags",
     test_options__env_twins_lose_to_flags},
    {"test_options__errors_name_the_option",
     test_options__errors_name_the_option},
    {"test_options__usage_and_strerror", test_options__usage_and_strerror},
    {"test_options__ratchet_flags_and_twins",
     test_options__ratchet_flags_and_twins},
    {NULL, NULL},
};
