/* The default runtime, in a process that never installs one: every hook
 * is the no-op, the thread state is still tracked, and the first crossing
 * fixes the default so that a later install is refused. Misuse that debug
 * builds catch is here too: each test runs in a child of its own (Check's
 * fork mode), so a test may install a runtime without disturbing the
 * others; with CK_FORK=no, run one test at a time (CK_RUN_CASE). */

#include "config.h"

#include <signal.h>
#include <stdlib.h>

#include <check.h>

#include "clgc.h"

static void *
report_state(void *arg)
{
    unsigned *depth = arg;

    *depth =
        clgc_thread_region_depth() * 10 + (unsigned)clgc_thread_in_region();
    return arg;
}

START_TEST(default_runtime_tracks_regions)
{
    unsigned depth = 0;

    ck_assert_ptr_eq(clgc_call_safe(report_state, &depth), &depth);
    ck_assert_uint_eq(depth, 11);
    ck_assert_uint_eq(clgc_thread_region_depth(), 0);
    ck_assert_str_eq(clgc_runtime_current()->name, "none");
    ck_assert_ptr_null(clgc_runtime_data());
    ck_assert_int_eq(clgc_thread_attach(), CLGC_OK);
    ck_assert_int_eq(clgc_thread_detach(), CLGC_OK);
}
END_TEST

START_TEST(install_after_first_use_is_refused)
{
    clgc_runtime_t rt = {.version = CLGC_RUNTIME_VERSION, .name = "late"};
    cl_uint n = 0;

    /* Any wrapper counts as a use, whatever OpenCL answers. */
    clgc_clGetPlatformIDs(0, NULL, &n);
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EINUSE);
    ck_assert_str_eq(clgc_runtime_current()->name, "none");
}
END_TEST

#ifdef CLGC_DEBUG
static void *
skip_fn(clgc_fn_t fn, void *arg)
{
    return arg;
}

static void *
twice(clgc_fn_t fn, void *arg)
{
    fn(arg);
    return fn(arg);
}

static void *
nothing(void *arg)
{
    return arg;
}

/* A safe_region hook that does not run fn exactly once leaves the thread's
 * regions unbalanced: debug builds abort with a message. */
START_TEST(hook_that_skips_fn_aborts)
{
    clgc_runtime_t rt = {.version = CLGC_RUNTIME_VERSION,
                         .safe_region = skip_fn};

    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_OK);
    clgc_call_safe(nothing, NULL);
}
END_TEST

START_TEST(hook_that_runs_fn_twice_aborts)
{
    clgc_runtime_t rt = {.version = CLGC_RUNTIME_VERSION, .safe_region = twice};

    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_OK);
    clgc_call_safe(nothing, NULL);
}
END_TEST
#endif

int
main(void)
{
    Suite *s = suite_create("default");
    TCase *tc = tcase_create("none");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, default_runtime_tracks_regions);
    tcase_add_test(tc, install_after_first_use_is_refused);
    suite_add_tcase(s, tc);
#ifdef CLGC_DEBUG
    tc = tcase_create("unbalanced");
    tcase_add_test_raise_signal(tc, hook_that_skips_fn_aborts, SIGABRT);
    tcase_add_test_raise_signal(tc, hook_that_runs_fn_twice_aborts, SIGABRT);
    suite_add_tcase(s, tc);
#endif
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
