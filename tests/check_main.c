/* Runs every suite in one process that has the recording runtime
 * installed. Check's fork mode is on by default, so each test runs in a
 * child of this process; CK_FORK=no runs them in-process (for gdb), and
 * CK_RUN_SUITE / CK_RUN_CASE pick one suite or test case. */

#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

int
main(void)
{
    SRunner *sr;
    int failed, err = test_rt_install();

    if (err != CLGC_OK) {
        fprintf(stderr, "installing the test runtime: %s\n",
                clgc_strerror(err));
        return EXIT_FAILURE;
    }
    sr = srunner_create(clgc_make_runtime_suite());
    srunner_add_suite(sr, clgc_make_commands_suite());
    srunner_add_suite(sr, clgc_make_names_suite());
    srunner_add_suite(sr, clgc_make_pocl_suite());
    srunner_add_suite(sr, clgc_make_forward_suite());
    srunner_add_suite(sr, clgc_make_threads_suite());
    srunner_add_suite(sr, clgc_make_wait_suite());
    srunner_add_suite(sr, clgc_make_notify_suite());
    srunner_add_suite(sr, clgc_make_queue_suite());
    srunner_add_suite(sr, clgc_make_queue_threads_suite());
    srunner_add_suite(sr, clgc_make_callback_suite());
    srunner_add_suite(sr, clgc_make_callback_threads_suite());
    srunner_add_suite(sr, clgc_make_ffi_suite());
    srunner_add_suite(sr, clgc_make_ffi_threads_suite());
    srunner_add_suite(sr, clgc_make_binding_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
