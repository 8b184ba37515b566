/* The default runtime, in a process that never installs one: every hook
 * is the no-op, the thread state is still tracked, and the first crossing
 * fixes the default so that a later install is refused. */

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
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
