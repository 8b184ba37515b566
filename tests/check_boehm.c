/* The Boehm GC adapter (libclgc-boehm) with bdwgc 8.2 and the real PoCL
 * through the real ICD loader: a thread inside a safe region is neither
 * stopped nor interrupted by other threads' collections, PoCL's own threads
 * get into the collector through clgc_call_active (or a clgc closure)
 * once and leave it when they exit, regions nest,
 * CLGC_RUNTIME_SKIP_NONBLOCKING takes only the commands that never block
 * out of their regions, and callbacks given to clgc's wrappers allocate
 * and keep what they allocate across collections, on PoCL's thread and
 * inside a build.
 *
 * The tests, by area, each file one suite named "boehm" with a test case
 * per test:
 *   check_boehm_regions.c    suspension and EINTR inside and outside safe
 *                            regions, builds, nesting, skip-nonblocking,
 *                            install
 *   check_boehm_threads.c    threads bdwgc does not know: PoCL's callback
 *                            threads, closures, plain threads, attach
 *   check_boehm_callbacks.c  callbacks that allocate during collections,
 *                            build notifications
 *   check_boehm_records.c    data handed to clgc kept by its records
 *   boehm.h, boehm.c         what they share
 *
 * Nothing here depends on timing. Each test orders its threads with
 * semaphores so that every collection it counts happens while the thread
 * under test is known to be where the test says, and it reads bdwgc's own
 * account of which threads each collection stopped
 * (GC_set_on_thread_event, counted by tests/gcevents.c).
 *
 * A runtime can be installed only once per process, so main() neither
 * calls GC_INIT() nor installs anything: every test does both
 * (boehm_setup) in the child that Check's fork mode runs it in. With
 * CK_FORK=no all tests would share one process and every install but the
 * first would fail, so run a single test then; each has a test case of its
 * own, for example
 *     CK_FORK=no CK_RUN_CASE="poll in a region" ./tests/check_boehm
 *
 * Needs OCL_ICD_VENDORS naming a directory with PoCL's and the stub's .icd
 * files (the build makes tests/vendors/). */

#include "boehm.h"

int
main(void)
{
    SRunner *sr = srunner_create(clgc_make_boehm_regions_suite());
    int failed;

    srunner_add_suite(sr, clgc_make_boehm_threads_suite());
    srunner_add_suite(sr, clgc_make_boehm_callbacks_suite());
    srunner_add_suite(sr, clgc_make_boehm_records_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    /* The number of failures, short of the 77 and 99 that the automake
     * test driver reads as "skipped" and "hard error". */
    return failed < 77 ? failed : 76;
}
