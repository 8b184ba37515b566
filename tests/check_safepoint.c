/* The safepoint form, with the reference VM (refvm.c) on the real PoCL:
 * a thread blocked in a clgc_cl* wrapper does not delay a collection
 * while one in the raw call does; leaving a region during a collection
 * parks the thread exactly once; regions nest; misuse is refused;
 * mutators, a collector and wrapper calls run together; and a callback
 * on PoCL's own thread stops for collections while it runs and delays
 * none once it has returned (suite "threads", which the TSan build
 * runs).
 *
 * The tests, by area (suite "safepoint" unless said):
 *   check_safepoint_install.c    install and misuse; foreign threads attach
 *   check_safepoint_order.c      builds and waits during collections, parks
 *   check_safepoint_regions.c    nesting, call_active, a thread that detaches
 *   check_safepoint_threads.c    mutators, a collector and wrappers at once
 *                                (suite "threads")
 *   check_safepoint_callbacks.c  a callback on PoCL's own thread (suite
 *                                "threads")
 *   safepoint.h, safepoint.c     what they share
 *
 * Every assertion is about the order of events, never about durations:
 * each test forces the interleaving it checks.
 *
 * A runtime can be installed once per process. In Check's fork mode (the
 * default) each test runs in a child of main, which never touches clgc,
 * so each test installs the VM itself (vm_setup). With CK_FORK=no all the
 * tests share one process: they still pass when run in the order they are
 * listed (the "install" case first, since one of its tests needs a clgc
 * never used; it forks for that), or pick one case with CK_RUN_CASE. */

#include "safepoint.h"

int
main(void)
{
    SRunner *sr = srunner_create(clgc_make_safepoint_install_suite());
    int failed;

    srunner_add_suite(sr, clgc_make_safepoint_order_suite());
    srunner_add_suite(sr, clgc_make_safepoint_regions_suite());
    srunner_add_suite(sr, clgc_make_safepoint_threads_suite());
    srunner_add_suite(sr, clgc_make_safepoint_callbacks_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed; /* far below 77, which automake takes for "skipped" */
}
