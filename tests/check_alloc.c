/* clgc_wait_for_events allocates nothing on the heap, on any path
 * (the driver's own wait on a late platform too, with the late-callback
 * vehicle linked in; it passes everything through until a test sets it).
 *
 * The program counts the allocations made by code in libclgc, by defining
 * malloc, calloc and realloc here and looking at their caller. A positive
 * control (clgc_event_notify, which allocates one record) shows that the
 * counter sees clgc's allocations at all. Sanitizer builds own malloc, so
 * there the program says so and exits as skipped; the plain build of
 * ./run test is the one that counts. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latecb.h"
#include "testutil.h"

static atomic_int counting;
static atomic_long clgc_allocations;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
/* The sanitizers own malloc, and GCC 12's have no working allocation
 * hook: the count needs the plain build, which ./run test runs. */
#define CLGC_COUNTS 0
#else
#define CLGC_COUNTS 1
/* Whether addr is code of libclgc. */
static int
in_clgc(void *addr)
{
    Dl_info info;

    return dladdr(addr, &info) != 0 && info.dli_fname != NULL &&
           strstr(info.dli_fname, "libclgc") != NULL;
}

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);

static void
count_caller(void *caller)
{
    if (atomic_load(&counting) && in_clgc(caller))
        atomic_fetch_add(&clgc_allocations, 1);
}

void *
malloc(size_t size)
{
    count_caller(__builtin_return_address(0));
    return __libc_malloc(size);
}

void *
calloc(size_t n, size_t size)
{
    count_caller(__builtin_return_address(0));
    return __libc_calloc(n, size);
}

void *
realloc(void *ptr, size_t size)
{
    count_caller(__builtin_return_address(0));
    return __libc_realloc(ptr, size);
}

#endif

static void
noop(cl_event event, cl_int status, void *data)
{
}

START_TEST(waits_allocate_nothing)
{
    cl_context context = test_pocl_context();
    cl_int err;

    for (int i = 0; i < 200; i++) {
        cl_event ev = clCreateUserEvent(context, &err);
        struct test_setter s = {ev, CL_COMPLETE};
        pthread_t t;

        /* Alternate the paths: callback or backoff (another thread
         * completes the event), poll (complete already), and the blocking
         * mode. */
        ck_assert_int_eq(clgc_wait_set_poll_ns(i % 2 ? 1000000000L : 0), 0);
        ck_assert_int_eq(clgc_wait_set_mode(i % 5 == 4 ? CLGC_WAIT_BLOCKING
                                                       : CLGC_WAIT_COOPERATIVE),
                         CLGC_OK);
        /* The callback path, the polled one, and learning. */
        ck_assert_int_eq(clgc_wait_set_strategy((clgc_wait_strategy_t)(i % 3)),
                         CLGC_OK);
        if (i % 2)
            clSetUserEventStatus(ev, CL_COMPLETE);
        else
            ck_assert_int_eq(pthread_create(&t, NULL, test_set_status, &s), 0);
        atomic_store(&counting, 1);
        ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
        atomic_store(&counting, 0);
        if (!(i % 2))
            ck_assert_int_eq(pthread_join(t, NULL), 0);
        clReleaseEvent(ev);
    }
    ck_assert_int_eq(atomic_load(&clgc_allocations), 0);

    /* The control: a notification record is one allocation of clgc's. */
    {
        cl_event ev = clCreateUserEvent(context, &err);

        clSetUserEventStatus(ev, CL_COMPLETE);
        atomic_store(&counting, 1);
        ck_assert_int_eq(clgc_event_notify(ev, CLGC_NOTIFY_RAW, noop, NULL),
                         CL_SUCCESS);
        atomic_store(&counting, 0);
        ck_assert_int_ge(atomic_load(&clgc_allocations), 1);
        clReleaseEvent(ev);
    }
    clReleaseContext(context);
}
END_TEST

/* The driver's own wait, on a late platform where it sleeps, allocates
 * nothing of clgc's either: PoCL under the late-callback vehicle
 * (tests/latecb.c, linked in) is learned late and its own wait used,
 * then 200 waits end in it. */
START_TEST(own_waits_allocate_nothing)
{
    struct test_device d;
    int own = 0;

    latecb_set_ms(20);
    test_device_open(&d, 64);
    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_LEARN), CLGC_OK);
    test_learn_driver(&d);
    test_learn_own_wait(&d);
    ck_assert_int_eq(test_driver_info(&d).own, CLGC_WAIT_OWN_USED);
    for (int i = 0; i < 200; i++) {
        cl_event ev = test_launch(&d, 2000);

        atomic_store(&counting, 1);
        ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
        atomic_store(&counting, 0);
        own += clgc_wait_last_path() == CLGC_WAIT_PATH_OWN;
        clReleaseEvent(ev);
    }
    ck_assert_int_gt(own, 0);
    ck_assert_int_eq(atomic_load(&clgc_allocations), 0);
    test_device_close(&d);
}
END_TEST

int
main(void)
{
    Suite *s;
    TCase *tc;
    SRunner *sr;
    int failed;

    if (!CLGC_COUNTS) {
        fputs("check_alloc: counts allocations in plain builds only\n", stderr);
        return 77; /* automake's "skipped" */
    }
    s = suite_create("alloc");
    tc = test_case("wait");
    tcase_add_test(tc, waits_allocate_nothing);
    test_add_pocl_test(tc, own_waits_allocate_nothing,
                       "a clWaitForEvents that sleeps, as PoCL's does");
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
