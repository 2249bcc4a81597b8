/* Unit tests of the options table and the logger: what each variable
 * accepts, what an invalid value does, and what a log line looks like. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "engine.h"
#include "explain.h"

/* Run fn with stderr captured; returns what it wrote. */
static const char *capture_stderr(void (*fn)(void))
{
    static char buf[4096];
    fflush(stderr);
    FILE *f = tmpfile();
    assert_non_null(f);
    int saved = dup(STDERR_FILENO);
    dup2(fileno(f), STDERR_FILENO);
    fn();
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void parse(void)
{
    rp__options_reset();
    rp__options_parse();
}

static int clean_env(void **state)
{
    (void)state;
    unsetenv("REPRISE");
    unsetenv("REPRISE_STATS");
    unsetenv("REPRISE_LOG");
    unsetenv("REPRISE_DRIVER");
    unsetenv("REPRISE_WARMUP");
    unsetenv("REPRISE_MAX_OPS");
    unsetenv("REPRISE_MAX_GRAPHS");
    unsetenv("REPRISE_CONFIG");
    unsetenv("REPRISE_EXCLUDE");
    unsetenv("REPRISE_INCLUDE");
    return 0;
}

/* Write `text` to a fresh config file and point REPRISE_CONFIG at it. */
static void config(const char *text)
{
    static char path[] = "/tmp/reprise-test-XXXXXX";
    strcpy(path, "/tmp/reprise-test-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    setenv("REPRISE_CONFIG", path, 1);
}

static void unset_variables_give_the_documented_defaults(void **state)
{
    (void)state;
    const char *err = capture_stderr(parse);
    assert_string_equal(err, "");
    assert_false(rp__option(RP_OPTION_ENABLE).b);
    assert_string_equal(rp__option(RP_OPTION_STATS).path, "");
    assert_int_equal(rp__option(RP_OPTION_LOG).level, RP_LOG_WARN);
    assert_string_equal(rp__option(RP_OPTION_DRIVER).path, "libcuda.so.1");
}

static void booleans_accept_1_on_yes_true_and_0_off_no_false_in_any_case(void **state)
{
    (void)state;
    static const char *const yes[] = {"1", "on", "YES", "True"};
    static const char *const no[] = {"0", "OFF", "no", "false"};
    for (int i = 0; i < 4; i++) {
        setenv("REPRISE", yes[i], 1);
        parse();
        assert_true(rp__option(RP_OPTION_ENABLE).b);
        setenv("REPRISE", no[i], 1);
        parse();
        assert_false(rp__option(RP_OPTION_ENABLE).b);
    }
}

/* A typo must not silently enable or disable anything: say which variable,
 * which value, and what is used instead, once. */
static void an_invalid_value_warns_once_naming_the_variable_value_and_default(void **state)
{
    (void)state;
    setenv("REPRISE", "maybe", 1);
    const char *err = capture_stderr(parse);
    assert_string_equal(err, "reprise: invalid REPRISE=maybe (expected 0 or 1, or off/on, "
                             "no/yes, false/true); using the default 0\n");
    assert_false(rp__option(RP_OPTION_ENABLE).b);
    setenv("REPRISE", "1", 1);
    setenv("REPRISE_LOG", "loud", 1);
    err = capture_stderr(parse);
    assert_string_equal(err, "reprise: invalid REPRISE_LOG=loud (expected error, warn, info, "
                             "debug or trace); using the default warn\n");
    assert_int_equal(rp__option(RP_OPTION_LOG).level, RP_LOG_WARN);
    assert_true(rp__option(RP_OPTION_ENABLE).b);
}

/* Counts take decimal digits and one K/M/G suffix, within the option's
 * range; anything else (a sign, a fraction, trailing text, out of range, an
 * overflow) is refused with the range named and the default used. */
static void counts_accept_a_suffix_and_refuse_values_outside_their_range(void **state)
{
    (void)state;
    setenv("REPRISE_MAX_OPS", "2K", 1);
    assert_string_equal(capture_stderr(parse), "");
    assert_int_equal(rp__option(RP_OPTION_MAX_OPS).count, 2048);
    setenv("REPRISE_WARMUP", "7", 1);
    parse();
    assert_int_equal(rp__option(RP_OPTION_WARMUP).count, 7);
    static const char *const bad[] = {"0", "-3", "2.5", "5x", "1G", "99999999999999999999", "k"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("REPRISE_WARMUP", bad[i], 1);
        char want[160];
        snprintf(want, sizeof want,
                 "reprise: invalid REPRISE_WARMUP=%s (expected a count in 1..1000000; K, M "
                 "and G multiply by 1024); using the default 2\n", bad[i]);
        assert_string_equal(capture_stderr(parse), want);
        assert_int_equal(rp__option(RP_OPTION_WARMUP).count, 2);
    }
}

/* A config file sets options by key; the environment wins over it. */
static void a_config_file_sets_options_and_the_environment_wins(void **state)
{
    (void)state;
    config("# tuned for this app\nwarmup = 5\n  MAX_OPS=2K  # a comment\nmax_graphs = 7\n");
    setenv("REPRISE_MAX_GRAPHS", "9", 1);
    assert_string_equal(capture_stderr(parse), "");
    assert_int_equal(rp__option(RP_OPTION_WARMUP).count, 5);
    assert_int_equal(rp__option(RP_OPTION_MAX_OPS).count, 2048);
    assert_int_equal(rp__option(RP_OPTION_MAX_GRAPHS).count, 9);
}

/* Each kind of config error is one line naming the file and line; the
 * option concerned keeps its default and the rest of the file still
 * applies. */
static void config_errors_name_the_file_and_line_and_keep_the_defaults(void **state)
{
    (void)state;
    config("warmup = 3\nbogus = 1\nmax_ops 5\nmax_graphs = lots\ntable =\n");
    const char *path = getenv("REPRISE_CONFIG");
    char want[1024];
    snprintf(want, sizeof want,
             "reprise: %s:2: unknown key 'bogus' (reprise help config lists the keys); ignored\n"
             "reprise: %s:3: malformed line (expected key = value); ignored\n"
             "reprise: %s:4: invalid value 'lots' for max_graphs (expected a count in 1..64K; "
             "K, M and G multiply by 1024); using the default 256\n"
             "reprise: %s:5: no value for 'table' (expected a count in 16..1M; K, M and G "
             "multiply by 1024); using the default 1024\n",
             path, path, path, path);
    assert_string_equal(capture_stderr(parse), want);
    assert_int_equal(rp__option(RP_OPTION_WARMUP).count, 3);
    assert_int_equal(rp__option(RP_OPTION_MAX_OPS).count, 4096);
    assert_int_equal(rp__option(RP_OPTION_MAX_GRAPHS).count, 256);
}

/* The documented example (config/reprise.conf) holds every key at its
 * default: it must parse without a word and change nothing. */
static void the_example_config_parses_cleanly_and_holds_the_defaults(void **state)
{
    (void)state;
    parse();
    union rp__option_value before[RP_OPTION_COUNT];
    for (int id = 0; id < RP_OPTION_COUNT; id++)
        before[id] = rp__option(id);
    setenv("REPRISE_CONFIG", REPRISE_EXAMPLE_CONFIG, 1);
    assert_string_equal(capture_stderr(parse), "");
    for (int id = 0; id < RP_OPTION_COUNT; id++)
        if (id != RP_OPTION_CONFIG && id != RP_OPTION_STATS && id != RP_OPTION_DRIVER &&
            id != RP_OPTION_EXCLUDE && id != RP_OPTION_INCLUDE)
        {
            union rp__option_value now = rp__option(id);
            assert_memory_equal(&before[id], &now, sizeof now);
        }
    assert_string_equal(rp__option(RP_OPTION_DRIVER).path, "libcuda.so.1");
}

/* An unreadable config file is one error; every option keeps its default. */
static void an_unreadable_config_file_leaves_the_defaults(void **state)
{
    (void)state;
    setenv("REPRISE_CONFIG", "/nonexistent/reprise.conf", 1);
    const char *err = capture_stderr(parse);
    assert_non_null(strstr(err, "cannot read the config file /nonexistent/reprise.conf"));
    assert_non_null(strstr(err, "using the defaults"));
    assert_int_equal(rp__option(RP_OPTION_WARMUP).count, 2);
}

/* Kernel rules: excludes always win; with includes, only matches are
 * captured; the file's lines add up, the environment replaces them. */
static void kernel_rules_exclude_and_include_by_glob(void **state)
{
    (void)state;
    config("exclude = attn_*\nexclude = *_backward\ninclude = gemm*, attn*, softmax\n");
    parse();
    assert_false(rp__option_kernel_allowed("attn_fwd"));
    assert_false(rp__option_kernel_allowed("gemm_backward"));
    assert_true(rp__option_kernel_allowed("gemm_f16"));
    assert_true(rp__option_kernel_allowed("softmax"));
    assert_false(rp__option_kernel_allowed("layernorm"));
    setenv("REPRISE_EXCLUDE", "gemm*", 1);
    parse();
    assert_true(rp__option_kernel_allowed("attn_fwd"));
    assert_false(rp__option_kernel_allowed("gemm_f16"));
}

/* %h and %r give each host and each rank of a job its own report. */
static void stats_paths_expand_host_and_rank(void **state)
{
    (void)state;
    char out[256], host[128];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMI_RANK");
    unsetenv("SLURM_PROCID");
    unsetenv("RANK");
    assert_true(rp__stats_path("s-%h-%r.json", out, sizeof out));
    char want[256];
    snprintf(want, sizeof want, "s-%s-0.json", host);
    assert_string_equal(out, want);
    setenv("SLURM_PROCID", "7", 1);
    assert_true(rp__stats_path("r%r", out, sizeof out));
    assert_string_equal(out, "r7");
    setenv("OMPI_COMM_WORLD_RANK", "3", 1); /* MPI's own first */
    assert_true(rp__stats_path("r%r", out, sizeof out));
    assert_string_equal(out, "r3");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("SLURM_PROCID");
}

/* REPRISE_LOG=error silences the warning about another variable. */
static void the_log_level_applies_to_warnings_about_other_options(void **state)
{
    (void)state;
    setenv("REPRISE_LOG", "error", 1);
    setenv("REPRISE", "maybe", 1);
    assert_string_equal(capture_stderr(parse), "");
}

static void debug_prints_the_version_and_every_effective_option(void **state)
{
    (void)state;
    setenv("REPRISE_LOG", "debug", 1);
    setenv("REPRISE_STATS", "/tmp/r-%p.json", 1);
    parse();
    const char *err = capture_stderr(rp__options_log);
    assert_non_null(strstr(err, "reprise: version 0."));
    assert_non_null(strstr(err, "reprise: option REPRISE=0\n"));
    assert_non_null(strstr(err, "reprise: option REPRISE_STATS=/tmp/r-%p.json\n"));
    assert_non_null(strstr(err, "reprise: option REPRISE_LOG=debug\n"));
    assert_non_null(strstr(err, "reprise: option REPRISE_DRIVER=libcuda.so.1\n"));
}

static void long_message(void)
{
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    rp__warn("%s", big);
}

/* Logging runs where allocation is unsafe: a fixed buffer cuts long lines,
 * and every line still ends with a newline. */
static void a_log_line_is_prefixed_one_line_and_cut_to_the_buffer(void **state)
{
    (void)state;
    rp__log_level = RP_LOG_WARN;
    const char *err = capture_stderr(long_message);
    assert_true(strncmp(err, "reprise: xxx", 12) == 0);
    size_t n = strlen(err);
    assert_true(n <= 512);
    assert_int_equal(err[n - 1], '\n');
    assert_null(strchr(err, '\n') + 1 == err + n ? NULL : "more than one line");
}


/* The example is called "an example with every key": a key added to the
 * options table without a line there (set, or commented out) breaks that. */
static void the_example_config_has_a_line_for_every_key_of_the_options_table(void **state)
{
    (void)state;
    FILE *f = fopen(REPRISE_EXAMPLE_CONFIG, "r");
    assert_non_null(f);
    static char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    for (int id = 0; id < RP_OPTION_COUNT; id++) {
        const char *env = rp__option_descs[id].env;
        if (id == RP_OPTION_CONFIG || strncmp(env, "REPRISE_", 8) != 0)
            continue; /* a config file names no other; REPRISE itself is no key */
        char name[48], key[64];
        snprintf(key, sizeof key, "\n%s = ", rp__option_key(id, name, sizeof name));
        char commented[72];
        snprintf(commented, sizeof commented, "\n# %s", key + 1);
        if (!strstr(text, key) && !strstr(text, commented))
            fail_msg("config/reprise.conf has no line for the key %s", key + 1);
    }
}

/* REPRISE_COSTS is checked with the others: a typo is warned about with
 * what is accepted, never left for the engine to guess at. */
static void a_costs_setting_is_measure_off_or_three_counts(void **state)
{
    (void)state;
    unsigned long long ns[3] = {0, 0, 0};
    assert_int_equal(rp__option_costs("measure", ns), 0);
    assert_int_equal(rp__option_costs("off", ns), 1);
    assert_int_equal(rp__option_costs("3500,600,7000", ns), 2);
    assert_true(ns[0] == 3500 && ns[1] == 600 && ns[2] == 7000);
    static const char *const bad[] = {"cheap", "1,2", "1,2,3,4", "0,1,1", "1,2,3x", ",1,2", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(rp__option_costs(bad[i], ns), -1);
    setenv("REPRISE_COSTS", "cheap", 1);
    const char *err = capture_stderr(parse);
    assert_non_null(strstr(err, "reprise: invalid REPRISE_COSTS=cheap (expected measure, off, or "
                                "E,U,L"));
    assert_non_null(strstr(err, "using the default measure"));
    assert_string_equal(rp__option(RP_OPTION_COSTS).path, "measure");
    unsetenv("REPRISE_COSTS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(unset_variables_give_the_documented_defaults, clean_env),
        cmocka_unit_test_setup(booleans_accept_1_on_yes_true_and_0_off_no_false_in_any_case,
                               clean_env),
        cmocka_unit_test_setup(an_invalid_value_warns_once_naming_the_variable_value_and_default,
                               clean_env),
        cmocka_unit_test_setup(the_log_level_applies_to_warnings_about_other_options, clean_env),
        cmocka_unit_test_setup(counts_accept_a_suffix_and_refuse_values_outside_their_range,
                               clean_env),
        cmocka_unit_test_setup(a_config_file_sets_options_and_the_environment_wins, clean_env),
        cmocka_unit_test_setup(config_errors_name_the_file_and_line_and_keep_the_defaults,
                               clean_env),
        cmocka_unit_test_setup(an_unreadable_config_file_leaves_the_defaults, clean_env),
        cmocka_unit_test_setup(the_example_config_parses_cleanly_and_holds_the_defaults, clean_env),
        cmocka_unit_test_setup(kernel_rules_exclude_and_include_by_glob, clean_env),
        cmocka_unit_test_setup(stats_paths_expand_host_and_rank, clean_env),
        cmocka_unit_test_setup(debug_prints_the_version_and_every_effective_option, clean_env),
        cmocka_unit_test(a_log_line_is_prefixed_one_line_and_cut_to_the_buffer),
        cmocka_unit_test(the_example_config_has_a_line_for_every_key_of_the_options_table),
        cmocka_unit_test_setup(a_costs_setting_is_measure_off_or_three_counts, clean_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
