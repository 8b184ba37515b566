/* clgc-demo shows what it claims. The demo runs once, with --json and a
 * 150 ms kernel, before the tests (an unchecked fixture); each test checks
 * one claim on the lines it printed. As in check_safepoint_order.c's ticker
 * test, the assertions compare counts that the mechanism fixes, never
 * times:
 *
 * - The safepoint VM: the OpenCL thread reads the VM's count of
 *   collections after a safepoint, just before its call, and again just
 *   after the call. A collection completes only once every thread is at a
 *   safepoint or in a safe region: during a raw call none can, and
 *   through clgc the thread is in a safe region, so they go on. The
 *   ticker parks at its first safepoint after the collector's first
 *   request in a raw call, and stays parked until the call returns;
 *   through clgc it ticks throughout the kernel.
 * - Boehm: every collection stops each registered thread outside
 *   GC_do_blocking with a signal: the OpenCL thread throughout its raw
 *   calls, but only between clgc's calls.
 * - No runtime: nothing collects on either side, nothing stalls.
 * - The long kernel's clgc wait takes one look (the default polling
 *   budget) and then sleeps until PoCL's callback: it finishes by
 *   callback. Every short wait is accounted for by how it finished.
 *
 * CLGC_DEMO names the demo in the build tree; the test environment
 * (tests.am) points it at PoCL through OCL_ICD_VENDORS. */

#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bound.h"

#define DEMO "'" CLGC_DEMO "'"

/* The demo's output and exit status. */
static char out[1 << 16];
static int status = -1;

static void
demo_run(void)
{
    FILE *f = popen(DEMO " --json --kernel-ms 150", "r");
    size_t n;

    if (f == NULL)
        return;
    n = fread(out, 1, sizeof(out) - 1, f);
    out[n] = '\0';
    status = pclose(f);
    printf("%s", out); /* into the test's log */
    fflush(stdout);
}

/* The first line that starts with prefix, or NULL. */
static const char *
demo_line(const char *prefix)
{
    for (const char *p = out; *p != '\0';) {
        const char *nl = strchr(p, '\n');

        if (strncmp(p, prefix, strlen(prefix)) == 0)
            return p;
        p = nl != NULL ? nl + 1 : p + strlen(p);
    }
    return NULL;
}

/* A line of type t ("side", "wait") for the adapter, whose third field
 * (side, wait) is `which`. Fails the test if there is none. */
static const char *
demo_find(const char *t, const char *adapter, const char *which)
{
    char prefix[128];
    const char *l;

    snprintf(prefix, sizeof(prefix),
             "{\"type\":\"%s\",\"adapter\":\"%s\",\"%s\":\"%s\"", t, adapter, t,
             which);
    l = demo_line(prefix);
    ck_assert_msg(l != NULL, "no line starting %s in:\n%s", prefix, out);
    return l;
}

/* Where the value of key starts on line l; fails the test if it is not
 * there. */
static const char *
demo_value(const char *l, const char *key)
{
    const char *nl = strchr(l, '\n'), *p;
    char k[64];

    snprintf(k, sizeof(k), "\"%s\":", key);
    p = strstr(l, k);
    ck_assert_msg(p != NULL && (nl == NULL || p < nl), "no %s in: %.300s", key,
                  l);
    return p + strlen(k);
}

/* A number, or -1 for null. */
static double
demo_num(const char *l, const char *key)
{
    const char *v = demo_value(l, key);

    return strncmp(v, "null", 4) == 0 ? -1 : strtod(v, NULL);
}

static int
demo_is(const char *l, const char *key, const char *string)
{
    const char *v = demo_value(l, key);

    return *v == '"' && strncmp(v + 1, string, strlen(string)) == 0 &&
           v[1 + strlen(string)] == '"';
}

START_TEST(demo_runs_and_prints_json_lines)
{

    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "clgc-demo failed (status %d); it printed:\n%s", status, out);
    for (const char *p = out; *p != '\0';) {
        const char *nl = strchr(p, '\n');

        ck_assert_msg(nl != NULL && *p == '{' && nl[-1] == '}',
                      "not a JSON object a line: %.300s", p);
        p = nl + 1;
    }
    ck_assert_ptr_nonnull(demo_line("{\"type\":\"device\""));
}
END_TEST

START_TEST(safepoint_collections_wait_for_raw_calls)
{
    const char *clgc = demo_find("side", "safepoint", "clgc");
    const char *raw = demo_find("side", "safepoint", "raw");
    static const char *const keys[] = {"build_collections",
                                       "kernel_collections"};

    for (int i = 0; i < 2; i++) {
        ck_assert_msg(demo_num(raw, keys[i]) == 0, "raw %s: %.0f", keys[i],
                      demo_num(raw, keys[i]));
        ck_assert_msg(demo_num(clgc, keys[i]) > 0, "clgc %s: %.0f", keys[i],
                      demo_num(clgc, keys[i]));
    }
}
END_TEST

START_TEST(safepoint_ticker_stalls_in_raw_kernel)
{
    const char *clgc = demo_find("side", "safepoint", "clgc");
    const char *raw = demo_find("side", "safepoint", "raw");

    ck_assert_msg(demo_num(clgc, "ticks") > demo_num(raw, "ticks"),
                  "ticks: clgc %.0f, raw %.0f", demo_num(clgc, "ticks"),
                  demo_num(raw, "ticks"));
}
END_TEST

START_TEST(boehm_stops_the_thread_only_in_raw_calls)
{
#ifdef HAVE_BDWGC
    const char *clgc = demo_find("side", "boehm", "clgc");
    const char *raw = demo_find("side", "boehm", "raw");

    ck_assert_msg(demo_num(raw, "suspensions") > demo_num(clgc, "suspensions"),
                  "suspensions: clgc %.0f, raw %.0f",
                  demo_num(clgc, "suspensions"), demo_num(raw, "suspensions"));
    ck_assert_double_ge(demo_num(clgc, "suspensions"), 0);
#else
    ck_assert_ptr_nonnull(
        demo_line("{\"type\":\"skip\",\"adapter\":\"boehm\""));
#endif
}
END_TEST

START_TEST(no_runtime_nothing_collects_or_stalls)
{
    for (int s = 0; s < 2; s++) {
        const char *l = demo_find("side", "none", s ? "raw" : "clgc");

        ck_assert_double_eq(demo_num(l, "build_collections"), -1);
        ck_assert_double_eq(demo_num(l, "kernel_collections"), -1);
        ck_assert_double_eq(demo_num(l, "suspensions"), -1);
        ck_assert_double_gt(demo_num(l, "ticks"), 0);
    }
}
END_TEST

START_TEST(waits_say_how_they_finished)
{
    static const char *const adapters[] = {"none", "safepoint",
#ifdef HAVE_BDWGC
                                           "boehm"
#endif
    };

    for (size_t i = 0; i < sizeof(adapters) / sizeof(adapters[0]); i++) {
        const char *a = adapters[i], *clgc, *raw, *queue, *seed;
        double waits;

        /* A cooperative wait: by the callback, or (one wait in 16, as
         * clgc samples PoCL's callbacks again) by its own looks. */
        ck_assert(demo_is(demo_find("side", a, "clgc"), "wait", "callback") ||
                  demo_is(demo_find("side", a, "clgc"), "wait", "backoff"));
        ck_assert(demo_is(demo_find("side", a, "raw"), "wait", "raw"));
        raw = demo_find("wait", a, "raw");
        clgc = demo_find("wait", a, "clgc");
        queue = demo_find("wait", a, "queue");
        seed = demo_find("wait", a, "seed");
        waits = demo_num(clgc, "waits");
        ck_assert_double_gt(waits, 0);
        ck_assert_double_eq(
            demo_num(clgc, "poll") + demo_num(clgc, "callback") +
                demo_num(clgc, "backoff") + demo_num(clgc, "blocking"),
            waits);
        ck_assert_double_eq(demo_num(queue, "waits"), waits);
        ck_assert_double_eq(demo_num(seed, "waits"), waits);
        ck_assert_double_gt(demo_num(raw, "median_us"), 0);
        ck_assert_double_gt(demo_num(clgc, "median_us"), 0);
        ck_assert_double_gt(demo_num(queue, "median_us"), 0);
        ck_assert_double_gt(demo_num(seed, "median_us"), 0);
    }
}
END_TEST

static int
exit_code(const char *args)
{
    char cmd[1024];
    int st;

    snprintf(cmd, sizeof(cmd), DEMO " %s >/dev/null 2>&1", args);
    st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(bad_options_are_usage_errors)
{
    static const char *const bad[] = {
        "--bogus",     "--kernel-ms 0", "--kernel-ms 10x",
        "--kernel-ms", "--adapter gc",  "--device 1:",
        "--device -1", "--device x",    "--json extra"};

    ck_assert_int_eq(exit_code("--help"), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(exit_code(bad[i]) == 2, "clgc-demo %s", bad[i]);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("demo");
    TCase *tc = test_case("demo");
    SRunner *sr;
    int failed;

    tcase_add_unchecked_fixture(tc, demo_run, NULL);
    tcase_add_test(tc, demo_runs_and_prints_json_lines);
    tcase_add_test(tc, safepoint_collections_wait_for_raw_calls);
    tcase_add_test(tc, safepoint_ticker_stalls_in_raw_kernel);
    tcase_add_test(tc, boehm_stops_the_thread_only_in_raw_calls);
    tcase_add_test(tc, no_runtime_nothing_collects_or_stalls);
    tcase_add_test(tc, waits_say_how_they_finished);
    tcase_add_test(tc, bad_options_are_usage_errors);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
