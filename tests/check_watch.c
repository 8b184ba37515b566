/* What clgc asks OpenCL, seen from the program: the watcher's cost, and
 * callbacks that come after their wait or notification is over.
 *
 * The program defines clGetEventInfo and clSetEventCallback itself, so
 * that libclgc's calls reach these (the dynamic linker binds them to the
 * executable's definitions) before the real ones, found with
 * dlsym(RTLD_NEXT). The first counts the status queries made on threads
 * other than the test's: the watcher's. The second keeps the function and
 * user_data of the last registration, so that the test can call it again
 * after the fact, as a driver that calls back late would. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

typedef void(CL_CALLBACK *event_fn)(cl_event, cl_int, void *);

static pthread_t test_thread;
static atomic_long watcher_queries;
static _Atomic(event_fn) last_fn;
static _Atomic(void *) last_data;

cl_int CL_API_CALL
clGetEventInfo(cl_event event, cl_event_info name, size_t size, void *value,
               size_t *size_ret)
{
    static cl_int(CL_API_CALL * real)(cl_event, cl_event_info, size_t, void *,
                                      size_t *);

    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "clGetEventInfo");
    if (name == CL_EVENT_COMMAND_EXECUTION_STATUS &&
        !pthread_equal(pthread_self(), test_thread))
        atomic_fetch_add(&watcher_queries, 1);
    return real(event, name, size, value, size_ret);
}

cl_int CL_API_CALL
clSetEventCallback(cl_event event, cl_int type, event_fn fn, void *data)
{
    static cl_int(CL_API_CALL * real)(cl_event, cl_int, event_fn, void *);

    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "clSetEventCallback");
    if (pthread_equal(pthread_self(), test_thread)) {
        atomic_store(&last_fn, fn);
        atomic_store(&last_data, data);
    }
    return real(event, type, fn, data);
}

static cl_event
user_event(cl_context context)
{
    cl_int err;
    cl_event ev = clCreateUserEvent(context, &err);

    ck_assert_int_eq(err, CL_SUCCESS);
    return ev;
}

/* Let the watcher run for a while (not a measurement: see the test). */
static void
let_time_pass(void)
{
    struct timespec ts = {0, 300000000L};

    while (nanosleep(&ts, &ts) != 0)
        ;
}

static atomic_int handled;
static sem_t handled_sem;

static void
count(cl_event event, cl_int status, void *data)
{
    *(cl_int *)data = status;
    atomic_fetch_add(&handled, 1);
    sem_post(&handled_sem);
}

/* The watcher used to look at every pending notification every 10 ms, for
 * as long as any was pending: 30 looks at all of them in the 300 ms below.
 * Now it looks once a second (a third of that time has no look at all; a
 * machine that stalls for over a second makes one), sleeps while nothing
 * is pending, and looks at once when a failure is set through clgc. */
START_TEST(the_watcher_costs_little)
{
    enum { N = 1000 };
    cl_context context = test_pocl_context();
    static cl_event ev[N];
    static cl_int status[N];
    cl_event failing;
    cl_int failed_status = 1;
    long queries;

    /* The slow scan of a platform whose callbacks are prompt (the fast
     * looks of other platforms are check_late's). */
    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_CALLBACK), CLGC_OK);
    test_thread = pthread_self();
    sem_init(&handled_sem, 0, 0);
    for (int i = 0; i < N; i++) {
        ev[i] = user_event(context);
        status[i] = 1;
        ck_assert_int_eq(
            clgc_event_notify(ev[i], CLGC_NOTIFY_RAW, count, &status[i]),
            CL_SUCCESS);
    }
    atomic_store(&watcher_queries, 0);
    let_time_pass();
    queries = atomic_load(&watcher_queries);
    ck_assert_int_le(queries, 2 * N);

    /* Nothing pending: no looks at all. */
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(clSetUserEventStatus(ev[i], CL_COMPLETE), CL_SUCCESS);
    while (atomic_load(&handled) != N) /* inline on PoCL */
        sem_wait(&handled_sem);
    atomic_store(&watcher_queries, 0);
    let_time_pass();
    queries = atomic_load(&watcher_queries);
    ck_assert_int_eq(queries, 0);

    /* A failure set through clgc is delivered by the watcher. */
    failing = user_event(context);
    ck_assert_int_eq(
        clgc_event_notify(failing, CLGC_NOTIFY_RAW, count, &failed_status),
        CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetUserEventStatus(failing, -5), CL_SUCCESS);
    while (atomic_load(&handled) != N + 1)
        sem_wait(&handled_sem);
    ck_assert_int_eq(failed_status, -5);
    /* PoCL never calls back for a failed user event: the watcher looked.
     * A driver that does call back (Oclgrind) needs no look. */
    queries = atomic_load(&watcher_queries);
    if (test_elsewhere() == NULL)
        ck_assert_int_ge(queries, 1);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(status[i], CL_COMPLETE);
        clReleaseEvent(ev[i]);
    }
    clReleaseEvent(failing);
    clReleaseContext(context);
}
END_TEST

/* Once the waiter sleeps in its wait (a timed futex sleep: not a lock on
 * its way there, where under TSan it had slept once): call the old
 * wait's callback (fn, data) again, give the waiter every chance to
 * return, then complete the event. */
struct late {
    pid_t tid;
    event_fn fn;
    void *data;
    cl_event old, event;
    atomic_int returned;
};

static void *
call_late_then_complete(void *arg)
{
    struct late *l = arg;

    while (!test_sleeps_timed(l->tid))
        sched_yield();
    l->fn(l->old, CL_COMPLETE, l->data);
    for (int i = 0; i < 1000 && !atomic_load(&l->returned); i++)
        sched_yield();
    clSetUserEventStatus(l->event, CL_COMPLETE);
    return NULL;
}

static void *
complete_when_asleep(void *arg)
{
    struct late *l = arg;

    while (!test_sleeps_timed(l->tid))
        sched_yield();
    clSetUserEventStatus(l->old, CL_COMPLETE);
    return NULL;
}

/* A wait's callback that comes after its wait has returned (a driver that
 * calls back late) touches nothing: the next wait on this thread, in the
 * same slot, sleeps on until its own event completes. */
START_TEST(a_late_wait_callback_is_harmless)
{
    cl_context context = test_pocl_context();
    struct late l = {
        gettid(), NULL, NULL, user_event(context), user_event(context), 0};
    cl_int status = 1;
    pthread_t t;

    test_thread = pthread_self();
    ck_assert_int_eq(clgc_wait_set_poll_ns(0), CLGC_OK);
    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_CALLBACK), CLGC_OK);
    ck_assert_int_eq(pthread_create(&t, NULL, complete_when_asleep, &l), 0);
    ck_assert_int_eq(clgc_wait_for_events(1, &l.old), CL_SUCCESS);
    ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_CALLBACK);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    l.fn = atomic_load(&last_fn);
    l.data = atomic_load(&last_data);
    ck_assert_ptr_nonnull(l.fn);

    ck_assert_int_eq(pthread_create(&t, NULL, call_late_then_complete, &l), 0);
    ck_assert_int_eq(clgc_wait_for_events(1, &l.event), CL_SUCCESS);
    ck_assert_int_eq(clGetEventInfo(l.event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                    sizeof(status), &status, NULL),
                     CL_SUCCESS);
    atomic_store(&l.returned, 1);
    ck_assert_int_eq(status, CL_COMPLETE);
    ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_CALLBACK);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    clReleaseEvent(l.old);
    clReleaseEvent(l.event);
    clReleaseContext(context);
}
END_TEST

static cl_uint
refcount_of(cl_event ev)
{
    cl_uint n = 0;

    ck_assert_int_eq(
        clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof(n), &n, NULL),
        CL_SUCCESS);
    return n;
}

/* A notification's callback that comes after the watcher delivered it
 * (and its record was reclaimed) runs nothing, and does not disturb the
 * notification that took its place. */
START_TEST(a_late_notification_callback_is_harmless)
{
    cl_context context = test_pocl_context();
    cl_event first = user_event(context), second = user_event(context);
    cl_int s1 = 1, s2 = 1;
    event_fn fn;
    void *data;

    test_thread = pthread_self();
    sem_init(&handled_sem, 0, 0);
    atomic_store(&handled, 0);
    ck_assert_int_eq(clgc_event_notify(first, CLGC_NOTIFY_RAW, count, &s1),
                     CL_SUCCESS);
    fn = atomic_load(&last_fn);
    data = atomic_load(&last_data);
    ck_assert_int_eq(clgc_clSetUserEventStatus(first, -5), CL_SUCCESS);
    sem_wait(&handled_sem);
    ck_assert_int_eq(s1, -5);
    while (refcount_of(first) != 1) /* reclaimed */
        sched_yield();

    ck_assert_int_eq(clgc_event_notify(second, CLGC_NOTIFY_RAW, count, &s2),
                     CL_SUCCESS);
    fn(first, CL_COMPLETE, data);
    ck_assert_int_eq(atomic_load(&handled), 1);
    ck_assert_int_eq(s2, 1);
    ck_assert_int_eq(clSetUserEventStatus(second, CL_COMPLETE), CL_SUCCESS);
    while (atomic_load(&handled) != 2) /* inline on PoCL */
        sem_wait(&handled_sem);
    ck_assert_int_eq(s2, CL_COMPLETE);
    ck_assert_int_eq(s1, -5);
    clReleaseEvent(first);
    clReleaseEvent(second);
    clReleaseContext(context);
}
END_TEST

/* Once nothing is pending, the watcher wakes on its slow period for two
 * seconds, looking at nothing, then sleeps until a notification signals
 * it; one made while it lingers does not signal it (that wake was most
 * of what a post cost its caller). Either way the notification is looked
 * at: each here is a user event failed with the raw clSetUserEventStatus,
 * which PoCL never calls back for, so only the watcher's look delivers
 * it. The test follows the watcher's state as /proc shows it (asleep
 * with no timeout), not the time. */
START_TEST(notifications_reach_an_idle_watcher)
{
    cl_context context = test_pocl_context();
    cl_event first = user_event(context), lingering = user_event(context),
             asleep = user_event(context);
    cl_int s1 = 1, s2 = 1, s3 = 1;
    pid_t watcher;

    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_CALLBACK), CLGC_OK);
    test_thread = pthread_self();
    sem_init(&handled_sem, 0, 0);
    atomic_store(&handled, 0);
    ck_assert_int_eq(clgc_event_notify(first, CLGC_NOTIFY_RAW, count, &s1),
                     CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(first, CL_COMPLETE), CL_SUCCESS);
    while (atomic_load(&handled) != 1) /* inline on PoCL */
        sem_wait(&handled_sem);
    while ((watcher = test_thread_named("clgc-watcher")) == 0)
        sched_yield();

    /* Nothing pending, the watcher awake on its period: no signal. */
    ck_assert_int_eq(clgc_event_notify(lingering, CLGC_NOTIFY_RAW, count, &s2),
                     CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(lingering, -5), CL_SUCCESS);
    while (atomic_load(&handled) != 2)
        sem_wait(&handled_sem);
    ck_assert_int_eq(s2, -5);

    /* Nothing pending again: it lingers, looking at nothing, then
     * sleeps until signalled. */
    atomic_store(&watcher_queries, 0);
    while (!test_sleeps_untimed(watcher))
        let_time_pass();
    ck_assert_int_eq(atomic_load(&watcher_queries), 0);
    ck_assert_int_eq(clgc_event_notify(asleep, CLGC_NOTIFY_RAW, count, &s3),
                     CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(asleep, -6), CL_SUCCESS);
    while (atomic_load(&handled) != 3)
        sem_wait(&handled_sem);
    ck_assert_int_eq(s3, -6);
    ck_assert_int_eq(s1, CL_COMPLETE);
    clReleaseEvent(first);
    clReleaseEvent(lingering);
    clReleaseEvent(asleep);
    clReleaseContext(context);
}
END_TEST

/* Once the last pending notification is delivered, the watcher wakes on
 * its slow period until two seconds have passed since that delivery,
 * looking at nothing, then sleeps until signalled: three wakeups at most
 * (at its period's next two ends, and the two seconds' end), however
 * long the test takes to see it asleep. */
START_TEST(an_idle_watcher_wakes_three_times_at_most)
{
    cl_context context = test_pocl_context();
    cl_event ev = user_event(context);
    cl_int status = 1;
    long before, after;
    pid_t watcher;

    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_CALLBACK), CLGC_OK);
    test_thread = pthread_self();
    sem_init(&handled_sem, 0, 0);
    atomic_store(&handled, 0);
    ck_assert_int_eq(clgc_event_notify(ev, CLGC_NOTIFY_RAW, count, &status),
                     CL_SUCCESS);
    while ((watcher = test_thread_named("clgc-watcher")) == 0)
        sched_yield();
    /* Counted from its first sleep: a watcher that has just started
     * blocks on its way there too. */
    while (!test_sleeps_timed(watcher))
        sched_yield();
    before = test_thread_wakeups(watcher);
    ck_assert_int_ge(before, 0);
    ck_assert_int_eq(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    while (atomic_load(&handled) != 1) /* inline on PoCL */
        sem_wait(&handled_sem);
    atomic_store(&watcher_queries, 0);
    while (!test_sleeps_untimed(watcher))
        let_time_pass();
    after = test_thread_wakeups(watcher);
    ck_assert_int_le(after - before, 3);
    ck_assert_int_eq(atomic_load(&watcher_queries), 0);
    ck_assert_int_eq(status, CL_COMPLETE);
    clReleaseEvent(ev);
    clReleaseContext(context);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("watch");
    TCase *tc = test_case("watch");
    SRunner *sr;
    int failed, err = test_rt_install();

    if (err != CLGC_OK) {
        fprintf(stderr, "installing the test runtime: %s\n",
                clgc_strerror(err));
        return EXIT_FAILURE;
    }
    tcase_set_tags(tc, TEST_TAG_THREADED);
    tcase_add_test(tc, the_watcher_costs_little);
    tcase_add_test(tc, a_late_wait_callback_is_harmless);
    tcase_add_test(tc, a_late_notification_callback_is_harmless);
    tcase_add_test(tc, notifications_reach_an_idle_watcher);
    tcase_add_test(tc, an_idle_watcher_wakes_three_times_at_most);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
