/* SPDX-License-Identifier: MIT */
/*
 * options: the command-line options shared by linked test binaries and
 * `leakgate run` (SPEC §5), with their LEAKGATE_* environment twins.  The
 * flag wins over the environment.  Pure parsing: no I/O besides getenv.
 * The flags --update-thresholds and --tighten have environment twins too
 * (LEAKGATE_UPDATE_THRESHOLDS=1 ctest -j8 updates the file from every
 * test process: ctest passes no arguments to the tests).
 *
 * The thresholds file: --thresholds, else LEAKGATE_THRESHOLDS, else the
 * file the build named (leakgate_thresholds_file() in CMake defines
 * leakgate_options_build_thresholds in the test binary), else config's
 * ./leakgate.yaml if present.  A NULL argv (`leakgate_cunit_main(0, NULL)`
 * from a `main(void)`) means the process's own command line, read once
 * from /proc/self/cmdline and kept for the life of the process.
 */
#include "options.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "config.h"
#include "files.h"
#include "leakgate/leakgate.h"
#include "thresholds.h"

/* Defined by the test binary when its build named a thresholds file (the
 * source CMake's leakgate_thresholds_file() generates); weak, so NULL
 * everywhere else.  Default visibility: with BUILD_SHARED_LIBS the
 * definition is in the executable, outside this library. */
extern const char leakgate_options_build_thresholds[]
    __attribute__((weak, visibility("default")));

const char *
leakgate_options__build_thresholds(void)
{
    return leakgate_options_build_thresholds &&
                   *leakgate_options_build_thresholds
               ? leakgate_options_build_thresholds
               : NULL;
}

/* /proc/self/cmdline is at most ARG_MAX (2 MiB on Linux) long. */
#define CMDLINE_MAX ((size_t)4 << 20)

struct value_option {
    const char *flag; /* "--thresholds" */
    const char *env;  /* "LEAKGATE_THRESHOLDS" */
    size_t offset;    /* of the const char * field */
};

static const struct value_option value_options[] = {
    {"--thresholds", "LEAKGATE_THRESHOLDS",
     offsetof(struct leakgate_gate_options, thresholds_path)},
    {"--filter", "LEAKGATE_FILTER",
     offsetof(struct leakgate_gate_options, filter)},
    {"--report-dir", "LEAKGATE_REPORT_DIR",
     offsetof(struct leakgate_gate_options, report_dir)},
    {"--junit", "LEAKGATE_JUNIT",
     offsetof(struct leakgate_gate_options, junit_path)},
    {"--json", "LEAKGATE_JSON",
     offsetof(struct leakgate_gate_options, json_path)},
    {"--slack", "LEAKGATE_SLACK",
     offsetof(struct leakgate_gate_options, slack)},
    {"--peak-limit", "LEAKGATE_PEAK_LIMIT",
     offsetof(struct leakgate_gate_options, peak_limit)},
    {"--replay-timeout", "LEAKGATE_REPLAY_TIMEOUT",
     offsetof(struct leakgate_gate_options, replay_timeout)},
    {"--test-timeout", "LEAKGATE_TEST_TIMEOUT",
     offsetof(struct leakgate_gate_options, test_timeout)},
};

/* Flags with an environment twin: on when set to anything but "" or "0"
 * (the flag cannot be turned off from the command line). */
struct flag_env {
    const char *env;
    size_t offset; /* of the int field */
};

static const struct flag_env flag_envs[] = {
    {"LEAKGATE_UPDATE_THRESHOLDS",
     offsetof(struct leakgate_gate_options, update_thresholds)},
    {"LEAKGATE_TIGHTEN", offsetof(struct leakgate_gate_options, tighten)},
    {"LEAKGATE_EXACT", offsetof(struct leakgate_gate_options, exact)},
    /* --list's twin: what leakgate_discover_tests() sets, so that a
     * runner that parses its own arguments is listed unchanged. */
    {"LEAKGATE_LIST", offsetof(struct leakgate_gate_options, list)},
};

#define NVALUE (sizeof value_options / sizeof value_options[0])
#define NFLAG_ENV (sizeof flag_envs / sizeof flag_envs[0])

const char *const *
leakgate_options__env_names(void)
{
    static const char *names[NVALUE + NFLAG_ENV + 1];

    if (!names[0]) {
        for (size_t k = 0; k < NVALUE; k++)
            names[k] = value_options[k].env;
        for (size_t k = 0; k < NFLAG_ENV; k++)
            names[NVALUE + k] = flag_envs[k].env;
    }
    return names;
}

static const char **
field(struct leakgate_gate_options *opts, const struct value_option *o)
{
    return (const char **)(void *)((char *)opts + o->offset);
}

/* Match "--flag VALUE" or "--flag=VALUE"; returns how many argv entries
 * were used (0 = not this option), -1 when the value is missing. */
static int
match_value(const struct value_option *o,
            int argc,
            char *const *argv,
            int i,
            const char **value_out)
{
    size_t n = strlen(o->flag);
    const char *arg = argv[i];

    if (strncmp(arg, o->flag, n) != 0)
        return 0;
    if (arg[n] == '=') {
        *value_out = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0')
        return 0;
    if (i + 1 >= argc)
        return -1;
    *value_out = argv[i + 1];
    return 2;
}

static int
parse_flag(struct leakgate_gate_options *opts, const char *arg)
{
    if (strcmp(arg, "--list") == 0)
        opts->list = 1;
    else if (strcmp(arg, "--update-thresholds") == 0)
        opts->update_thresholds = 1;
    else if (strcmp(arg, "--tighten") == 0)
        opts->tighten = 1;
    else if (strcmp(arg, "--exact") == 0)
        opts->exact = 1;
    else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
        opts->help = 1;
    else if (strcmp(arg, "--version") == 0)
        opts->show_version = 1;
    else if (strcmp(arg, "--color") == 0)
        opts->color = 1;
    else if (strcmp(arg, "--no-color") == 0)
        opts->color = 0;
    else
        return leakgate_error__set(
            LEAKGATE_EUSAGE,
            "unknown option '%s' (see --help); a program's own options go "
            "after its first other argument or after '--', or leave argv "
            "to the program (leakgate_cunit_main(1, argv)) and give "
            "leakgate's options as LEAKGATE_* variables",
            arg);
    return 0;
}

static int
parse_value(struct leakgate_gate_options *opts,
            int argc,
            char *const *argv,
            int *i,
            bool *matched)
{
    *matched = false;
    for (size_t k = 0; k < NVALUE; k++) {
        const char *value = NULL;
        int used = match_value(&value_options[k], argc, argv, *i, &value);

        if (used == 0)
            continue;
        if (used < 0 || !*value)
            return leakgate_error__set(LEAKGATE_EUSAGE,
                                       "option '%s' needs a value",
                                       value_options[k].flag);
        *field(opts, &value_options[k]) = value;
        *i += used - 1;
        *matched = true;
        return 0;
    }
    return 0;
}

/* --slack is checked now, so a typo fails before any test runs. */
static int
check_slack(const struct leakgate_gate_options *opts)
{
    struct leakgate_thresholds_opts o;
    char why[512];

    if (!opts->slack || leakgate_thresholds__parse_slack(&o, opts->slack) == 0)
        return 0;
    snprintf(why, sizeof why, "%s", leakgate_error_last());
    if (opts->slack == getenv("LEAKGATE_SLACK"))
        return leakgate_error__set(LEAKGATE_EUSAGE, "LEAKGATE_SLACK: %s", why);
    return leakgate_error__set(LEAKGATE_EUSAGE, "option '--slack': %s", why);
}

/* --peak-limit is checked now too. */
static int
check_peak_limit(const struct leakgate_gate_options *opts)
{
    uint64_t bytes;

    if (!opts->peak_limit ||
        leakgate_config__parse_size(&bytes, opts->peak_limit))
        return 0;
    return leakgate_error__set(
        LEAKGATE_EUSAGE,
        "%s: invalid size '%s' (expected bytes, or a number and one of B, "
        "KiB, MiB, GiB, KB, MB, GB)",
        opts->peak_limit == getenv("LEAKGATE_PEAK_LIMIT")
            ? "LEAKGATE_PEAK_LIMIT"
            : "option '--peak-limit'",
        opts->peak_limit);
}

/* Whole seconds (an optional "s") from `least` to the largest value, or
 * the default for NULL; the error names the option or its variable. */
static int
parse_seconds(unsigned int *seconds_out,
              const char *text,
              unsigned int dflt,
              unsigned long least,
              const char *flag,
              const char *env)
{
    unsigned long n = 0;
    const char *p = text;

    *seconds_out = dflt;
    if (!text)
        return 0;
    for (; *p >= '0' && *p <= '9' && n <= LEAKGATE_REPLAY_TIMEOUT_MAX; p++)
        n = n * 10 + (unsigned long)(*p - '0');
    if (p[0] == 's' && p[1] == '\0' && p != text)
        p++;
    if (*p || p == text || n < least || n > LEAKGATE_REPLAY_TIMEOUT_MAX)
        return leakgate_error__set(
            LEAKGATE_EUSAGE,
            "%s: invalid timeout '%s' (expected whole seconds from %lu to "
            "%u, e.g. 300 or 300s)",
            text == getenv(env) ? env : flag, text, least,
            LEAKGATE_REPLAY_TIMEOUT_MAX);
    *seconds_out = (unsigned int)n;
    return 0;
}

int
leakgate_options__replay_timeout(unsigned int *seconds_out, const char *text)
{
    return parse_seconds(seconds_out, text, LEAKGATE_REPLAY_TIMEOUT_DEFAULT, 1,
                         "option '--replay-timeout'",
                         "LEAKGATE_REPLAY_TIMEOUT");
}

int
leakgate_options__test_timeout(unsigned int *seconds_out, const char *text)
{
    return parse_seconds(seconds_out, text, LEAKGATE_TEST_TIMEOUT_DEFAULT, 0,
                         "option '--test-timeout'", "LEAKGATE_TEST_TIMEOUT");
}

int
leakgate_options__own_argv(int *argc_out, char *const **argv_out)
{
    static struct leakgate_buf text = LEAKGATE_BUF_INIT;
    static char **argv;
    static int argc;
    size_t n = 0;
    int rc;

    if (!argv) {
        rc = leakgate_files__read(&text, "/proc/self/cmdline", CMDLINE_MAX,
                                  "command line");
        for (size_t i = 0; rc == 0 && i < text.len; i++)
            n += text.ptr[i] == '\0';
        argv = rc == 0 ? leakgate_util__calloc(n + 1, sizeof *argv) : NULL;
        if (!argv) {
            /* The next call starts afresh (the read appends). */
            leakgate_buf__dispose(&text);
            return rc < 0
                       ? rc
                       : leakgate_error__set(LEAKGATE_ENOMEM, "command line");
        }
        for (size_t i = 0; i < text.len && (size_t)argc < n;
             i += strlen(text.ptr + i) + 1)
            argv[argc++] = text.ptr + i;
    }
    *argc_out = argc;
    *argv_out = argv;
    return 0;
}

int
leakgate_gate_options_parse(struct leakgate_gate_options *opts,
                            int argc,
                            char *const *argv)
{
    int program_at;

    return leakgate_gate_options_parse_args(opts, argc, argv, &program_at);
}

int
leakgate_gate_options_parse_args(struct leakgate_gate_options *opts,
                                 int argc,
                                 char *const *argv,
                                 int *program_at)
{
    const struct leakgate_gate_options init = LEAKGATE_GATE_OPTIONS_INIT;
    int rc;

    *opts = init;
    *program_at = argc;
    if (!argv) {
        rc = leakgate_options__own_argv(&argc, &argv);
        if (rc < 0)
            return rc;
    }
    if (!argv) /* cannot happen: leakgate_options__own_argv() fills it (for the
                  analyzer) */
        return leakgate_error__set(LEAKGATE_ERROR, "no command line");
    *program_at = argc;
    for (int i = 1; i < argc; i++) {
        bool matched;

        /* leakgate's options come first: "--" or the first argument that
         * is not an option ("data.txt") starts the program's own. */
        if (strcmp(argv[i], "--") == 0 || argv[i][0] != '-' ||
            argv[i][1] == '\0') {
            *program_at = i + (strcmp(argv[i], "--") == 0);
            break;
        }
        rc = parse_value(opts, argc, argv, &i, &matched);
        if (rc < 0)
            return rc;
        if (!matched) {
            rc = parse_flag(opts, argv[i]);
            if (rc < 0)
                return rc;
        }
    }
    for (size_t k = 0; k < NVALUE; k++) {
        const char *env = getenv(value_options[k].env);

        if (!*field(opts, &value_options[k]) && env && *env)
            *field(opts, &value_options[k]) = env;
    }
    if (!opts->thresholds_path)
        opts->thresholds_path = leakgate_options__build_thresholds();
    for (size_t k = 0; k < sizeof flag_envs / sizeof flag_envs[0]; k++) {
        const char *env = getenv(flag_envs[k].env);
        int *flag = (int *)(void *)((char *)opts + flag_envs[k].offset);

        if (env && *env && strcmp(env, "0") != 0)
            *flag = 1;
    }
    if (opts->color < 0 && getenv("NO_COLOR"))
        opts->color = 0;
    rc = check_slack(opts);
    if (rc == 0)
        rc = check_peak_limit(opts);
    if (rc == 0) {
        unsigned int seconds;

        rc = leakgate_options__replay_timeout(&seconds, opts->replay_timeout);
        if (rc == 0)
            rc = leakgate_options__test_timeout(&seconds, opts->test_timeout);
    }
    return rc;
}

const char *
leakgate_gate_options_usage(void)
{
    return "usage: TEST_BINARY [options]\n"
           "\n"
           "Runs every test under the leakgate gate: a test fails when an\n"
           "allocation stack retains more bytes than leakgate.yaml allows.\n"
           "\n"
           "options (environment twin in brackets; the option wins):\n"
           "  --thresholds FILE    thresholds YAML [LEAKGATE_THRESHOLDS]\n"
           "                       (default: the file the build named,\n"
           "                       else ./leakgate.yaml if present, else\n"
           "                       every limit is 0)\n"
           "  --filter GLOB        run only tests whose suite/test matches\n"
           "                       [LEAKGATE_FILTER]\n"
           "  --list               print suite/test lines and exit 0\n"
           "                       [LEAKGATE_LIST]\n"
           "  --report-dir DIR     write artifacts for failing tests\n"
           "                       [LEAKGATE_REPORT_DIR]\n"
           "  --junit FILE         write JUnit XML [LEAKGATE_JUNIT]\n"
           "  --json FILE          write every test's measurements as JSON\n"
           "                       [LEAKGATE_JSON]; for --json and --junit,\n"
           "                       a directory (DIR/) or %p (the pid) in\n"
           "                       FILE gives each process its own file;\n"
           "                       a plain FILE and DIR/index.html hold\n"
           "                       every process of the run (ctest -j;\n"
           "                       LEAKGATE_RUN_ID names a run)\n"
           "  --update-thresholds  write what was measured into the\n"
           "                       thresholds file\n"
           "                       [LEAKGATE_UPDATE_THRESHOLDS]\n"
           "  --tighten            report limits far above what was measured\n"
           "                       and stack rules that matched nothing; with\n"
           "                       --update-thresholds, lower and remove them\n"
           "                       [LEAKGATE_TIGHTEN]\n"
           "  --slack SLACK        how far above the measurement a limit may\n"
           "                       stay: 25% (default) or a size\n"
           "                       [LEAKGATE_SLACK]\n"
           "  --peak-limit SIZE    fail a test whose heap grew more than\n"
           "                       SIZE above its start at any moment (the\n"
           "                       defaults' peak_limit; the file's suites\n"
           "                       and tests entries win)\n"
           "                       [LEAKGATE_PEAK_LIMIT]\n"
           "  --replay-timeout SECONDS\n"
           "                       how long one test may run in a replay\n"
           "                       (default 300); a test still running\n"
           "                       then is not judged (exit 3)\n"
           "                       [LEAKGATE_REPLAY_TIMEOUT]\n"
           "  --test-timeout SECONDS\n"
           "                       how long one test may run (default\n"
           "                       1800, 0: no limit); a test still\n"
           "                       running then is named, the verdicts\n"
           "                       reached are kept and the run stops\n"
           "                       (exit 3) [LEAKGATE_TEST_TIMEOUT]\n"
           "  --exact              measure every test in an exact window\n"
           "                       from the start: no fast first pass, so\n"
           "                       no test runs twice [LEAKGATE_EXACT]\n"
           "  --color, --no-color  colour on stderr (default: if a "
           "terminal)\n"
           "  --help, --version\n"
           "\n"
           "leakgate reads its options up to the first other argument or\n"
           "up to --; what follows is the program's own.\n"
           "\n"
           "exit status: 0 all tests passed; 1 a test failed (assertion or\n"
           "gate); 2 usage or configuration error; 3 the gate could not "
           "run.\n";
}
