/* Asynchronous waits on the real PoCL device: each handler runs exactly
 * once with the event's real status, on the thread its mode says,
 * failures included (PoCL 3.1 never calls back for a failed user event:
 * clgc's watcher does). Completion queues: check_queue.c. */

#include <pthread.h>
#include <semaphore.h>

#include "testutil.h"

static cl_event
user_event(cl_context context)
{
    cl_int err;
    cl_event ev = clCreateUserEvent(context, &err);

    ck_assert_int_eq(err, CL_SUCCESS);
    return ev;
}

/* What a handler saw. */
struct seen {
    sem_t ran;
    int calls;
    cl_int status;
    pthread_t thread;
    int in_region;
};

static void
record(cl_event event, cl_int status, void *data)
{
    struct seen *s = data;

    s->calls++;
    s->status = status;
    s->thread = pthread_self();
    s->in_region = clgc_thread_in_region();
    sem_post(&s->ran);
}

static void
seen_init(struct seen *s)
{
    *s = (struct seen){.status = 1};
    sem_init(&s->ran, 0, 0);
}

static void
wait_ran(struct seen *s)
{
    while (sem_wait(&s->ran) != 0)
        ;
}

START_TEST(raw_handler_runs_once_with_the_status)
{
    cl_context context = test_pocl_context();
    cl_event ev = user_event(context), done = user_event(context);
    struct test_setter set = {ev, CL_COMPLETE};
    struct seen s, inline_s;
    pthread_t t;

    seen_init(&s);
    ck_assert_int_eq(clgc_event_notify(ev, CLGC_NOTIFY_RAW, record, &s),
                     CL_SUCCESS);
    ck_assert_int_eq(s.calls, 0);
    ck_assert_int_eq(pthread_create(&t, NULL, test_set_status, &set), 0);
    wait_ran(&s);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(s.calls, 1);
    ck_assert_int_eq(s.status, CL_COMPLETE);
    ck_assert(!pthread_equal(s.thread, pthread_self()));

    /* Already complete: the handler runs before notify returns. */
    seen_init(&inline_s);
    ck_assert_int_eq(clSetUserEventStatus(done, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(
        clgc_event_notify(done, CLGC_NOTIFY_RAW, record, &inline_s),
        CL_SUCCESS);
    ck_assert_int_eq(inline_s.calls, 1);
    ck_assert_int_eq(inline_s.status, CL_COMPLETE);
    clReleaseEvent(ev);
    clReleaseEvent(done);
    clReleaseContext(context);
}
END_TEST

/* A failed user event: PoCL never calls back, clgc's watcher delivers. */
START_TEST(failure_is_delivered_by_the_watcher)
{
    cl_context context = test_pocl_context();
    cl_event ev = user_event(context);
    struct seen s;

    seen_init(&s);
    ck_assert_int_eq(clgc_event_notify(ev, CLGC_NOTIFY_RAW, record, &s),
                     CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(ev, -5), CL_SUCCESS);
    wait_ran(&s);
    ck_assert_int_eq(s.calls, 1);
    ck_assert_int_eq(s.status, -5);
    clReleaseEvent(ev);
    clReleaseContext(context);
}
END_TEST

/* An event that is already complete is delivered inside clgc_event_notify,
 * which registers inside a safe region: a RAW handler runs in it, an
 * ACTIVE one with the runtime active again, through its hook. */
START_TEST(active_handler_runs_with_the_runtime_active)
{
    cl_context context = test_pocl_context();
    cl_event ev = user_event(context);
    unsigned long active0;
    struct seen raw, active;

    ck_assert_int_eq(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    seen_init(&raw);
    seen_init(&active);
    active0 = test_rt_active_calls();
    ck_assert_int_eq(clgc_event_notify(ev, CLGC_NOTIFY_RAW, record, &raw),
                     CL_SUCCESS);
    ck_assert_int_eq(raw.calls, 1);
    ck_assert_int_eq(raw.in_region, 1);
    ck_assert_uint_eq(test_rt_active_calls(), active0);
    ck_assert_int_eq(clgc_event_notify(ev, CLGC_NOTIFY_ACTIVE, record, &active),
                     CL_SUCCESS);
    ck_assert_int_eq(active.calls, 1);
    ck_assert_int_eq(active.in_region, 0);
    ck_assert_uint_eq(test_rt_active_calls() - active0, 1);
    ck_assert_uint_eq(clgc_thread_region_depth(), 0);
    clReleaseEvent(ev);
    clReleaseContext(context);
}
END_TEST

START_TEST(bad_input_is_refused)
{
    cl_context context = test_pocl_context();
    cl_event ev = user_event(context);
    struct seen s;

    seen_init(&s);
    ck_assert_int_eq(clgc_event_notify(NULL, CLGC_NOTIFY_RAW, record, &s),
                     CL_INVALID_EVENT);
    ck_assert_int_eq(clgc_event_notify(ev, CLGC_NOTIFY_RAW, NULL, &s),
                     CL_INVALID_VALUE);
    ck_assert_int_eq(clgc_event_notify(ev, (clgc_notify_mode_t)9, record, &s),
                     CL_INVALID_VALUE);
    ck_assert_int_eq(clgc_event_post(ev, NULL, record, &s), CL_INVALID_VALUE);
    ck_assert_int_eq(s.calls, 0);
    clReleaseEvent(ev);
    clReleaseContext(context);
}
END_TEST

Suite *
clgc_make_notify_suite(void)
{
    Suite *s = suite_create("notify");
    TCase *tc = tcase_create("async");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, raw_handler_runs_once_with_the_status);
    tcase_add_test(tc, failure_is_delivered_by_the_watcher);
    tcase_add_test(tc, active_handler_runs_with_the_runtime_active);
    tcase_add_test(tc, bad_input_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
