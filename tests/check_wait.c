/* The cooperative wait on the real PoCL device: it returns once the
 * events are done, inside exactly one safe region, reports failed
 * commands, takes the path it is set to, and refuses bad input. */

#define _GNU_SOURCE /* gettid */
#include <errno.h>  /* program_invocation_name */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* Enqueue the kernel behind `gate` (may be NULL); returns its event. The
 * enqueue is raw and unflushed: the wait must flush. */
static cl_event
enqueue_spin(struct test_device *d, int n, cl_event gate)
{
    size_t global = 1024;
    cl_event done;

    ck_assert_int_eq(clSetKernelArg(d->kernel, 0, sizeof(d->buf), &d->buf), 0);
    ck_assert_int_eq(clSetKernelArg(d->kernel, 1, sizeof(n), &n), 0);
    ck_assert_int_eq(clEnqueueNDRangeKernel(d->queue, d->kernel, 1, NULL,
                                            &global, NULL, gate ? 1 : 0,
                                            gate ? &gate : NULL, &done),
                     CL_SUCCESS);
    return done;
}

/* Sets a user event once thread `tid` sleeps in a timed futex(2): the
 * wait's own sleep (the locks on its way there have no timeout), so that
 * the event completes after the wait's look at it however the machine
 * schedules the two threads. */
struct sleep_setter {
    struct test_setter set;
    pid_t tid;
};

static void *
set_when_asleep(void *arg)
{
    struct sleep_setter *s = arg;
    struct test_await w = test_await_start();

    while (!test_sleeps_timed(s->tid))
        test_await_nap(&w, "the waiter to sleep in the wait's timed sleep");
    return test_set_status(&s->set);
}

START_TEST(wait_sleeps_until_the_callback)
{
    struct test_device d;
    cl_event gate, done;
    struct sleep_setter s;
    pthread_t t;
    unsigned long safe0;
    cl_int err;

    test_device_open(&d, 1024);
    ck_assert_int_eq(clgc_wait_set_poll_ns(0), CLGC_OK);
    /* The callback path, whatever clgc would learn of PoCL. */
    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_CALLBACK), CLGC_OK);
    gate = clCreateUserEvent(d.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    done = enqueue_spin(&d, 1000, gate);
    s = (struct sleep_setter){{gate, CL_COMPLETE}, gettid()};
    ck_assert_int_eq(pthread_create(&t, NULL, set_when_asleep, &s), 0);

    safe0 = test_rt_safe_calls();
    ck_assert_int_eq(clgc_wait_for_events(1, &done), CL_SUCCESS);
    ck_assert_uint_eq(test_rt_safe_calls() - safe0, 1);
    ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_CALLBACK);
    ck_assert_int_eq(test_event_status(done), CL_COMPLETE);
    ck_assert_uint_eq(clgc_thread_region_depth(), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    test_device_close(&d);
}
END_TEST

START_TEST(wait_for_a_done_event_polls)
{
    struct test_device d;
    cl_event done;

    test_device_open(&d, 1024);
    done = enqueue_spin(&d, 1, NULL);
    ck_assert_int_eq(clFinish(d.queue), CL_SUCCESS);
    /* A second is far beyond what a finished event needs. */
    ck_assert_int_eq(clgc_wait_set_poll_ns(1000000000L), CLGC_OK);
    ck_assert_int_eq(clgc_wait_for_events(1, &done), CL_SUCCESS);
    ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_POLL);
    clReleaseEvent(done);
    test_device_close(&d);
}
END_TEST

/* PoCL tells callbacks CL_COMPLETE even for failed commands, and never
 * calls back for a user event set to an error: the wait must still return,
 * with the error. */
START_TEST(failed_commands_report_their_error)
{
    struct test_device d;
    cl_event gate, done, lone;
    struct test_setter s1, s2;
    pthread_t t1, t2;
    cl_int err;

    test_device_open(&d, 1024);
    ck_assert_int_eq(clgc_wait_set_poll_ns(0), CLGC_OK);
    gate = clCreateUserEvent(d.context, &err);
    lone = clCreateUserEvent(d.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    done = enqueue_spin(&d, 10, gate);
    s1 = (struct test_setter){gate, -5};
    s2 = (struct test_setter){lone, -7};
    ck_assert_int_eq(pthread_create(&t1, NULL, test_set_status, &s1), 0);
    ck_assert_int_eq(pthread_create(&t2, NULL, test_set_status, &s2), 0);

    ck_assert_int_eq(clgc_wait_for_events(1, &lone),
                     CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    ck_assert_int_eq(clgc_wait_for_events(1, &done),
                     CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    ck_assert_int_lt(test_event_status(done), 0);
    ck_assert_int_eq(test_event_status(lone), -7);
    ck_assert_int_eq(pthread_join(t1, NULL), 0);
    ck_assert_int_eq(pthread_join(t2, NULL), 0);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    clReleaseEvent(lone);
    test_device_close(&d);
}
END_TEST

START_TEST(blocking_mode_waits_in_the_driver)
{
    struct test_device d;
    cl_event done[2];

    test_device_open(&d, 1024);
    ck_assert_int_eq(clgc_wait_set_mode(CLGC_WAIT_BLOCKING), CLGC_OK);
    done[0] = enqueue_spin(&d, 1000, NULL);
    done[1] = enqueue_spin(&d, 1000, NULL);
    ck_assert_int_eq(clgc_wait_for_events(2, done), CL_SUCCESS);
    ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_BLOCKING);
    ck_assert_int_eq(test_event_status(done[0]), CL_COMPLETE);
    ck_assert_int_eq(test_event_status(done[1]), CL_COMPLETE);
    ck_assert_int_eq(clgc_wait_set_mode(CLGC_WAIT_COOPERATIVE), CLGC_OK);
    clReleaseEvent(done[0]);
    clReleaseEvent(done[1]);
    test_device_close(&d);
}
END_TEST

/* A signal to a waiting thread (a runtime's interrupt) does not abandon
 * the wait: the handler runs, the wait goes on until the event is done,
 * and the runtime finds its flag when the wait returns. */
/* Read by the main thread while the waiter's handler sets it: an atomic
 * (lock-free, so a handler may store to it), as docs/wait.md says. */
static atomic_int interrupted;

static void
on_interrupt(int sig)
{
    interrupted = 1;
}

struct interrupted_wait {
    cl_event event;
    cl_int ret;
    cl_int status_after;
    int flag_after;
};

static void *
wait_for_it(void *arg)
{
    struct interrupted_wait *w = arg;

    w->ret = clgc_wait_for_events(1, &w->event);
    w->flag_after = interrupted;
    clGetEventInfo(w->event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                   sizeof(w->status_after), &w->status_after, NULL);
    return NULL;
}

START_TEST(a_signal_does_not_abandon_the_wait)
{
    struct sigaction sa = {.sa_handler = on_interrupt};
    cl_context context = test_pocl_context();
    struct interrupted_wait w = {NULL, 1, 1, 0};
    cl_int err;
    pthread_t t;

    ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
    ck_assert_int_eq(clgc_wait_set_poll_ns(0), CLGC_OK);
    w.event = clCreateUserEvent(context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(pthread_create(&t, NULL, wait_for_it, &w), 0);
    /* Interrupt until the handler has run on the waiter, then finish. */
    while (!interrupted) {
        pthread_kill(t, SIGUSR1);
        sched_yield();
    }
    ck_assert_int_eq(clSetUserEventStatus(w.event, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(w.ret, CL_SUCCESS);
    ck_assert_int_eq(w.status_after, CL_COMPLETE);
    ck_assert_int_eq(w.flag_after, 1);
    clReleaseEvent(w.event);
    clReleaseContext(context);
}
END_TEST

/* clWaitForEvents' contract in every mode: events of two contexts get
 * CL_INVALID_CONTEXT, a NULL event CL_INVALID_EVENT and an empty list
 * CL_INVALID_VALUE, as the specification says. Done events, so that a
 * wait that ignored the contexts would return at once. PoCL's
 * clWaitForEvents checks the contexts too; NVIDIA's and Oclgrind's do not
 * (they return CL_SUCCESS), and clgc_clWaitForEvents, a plain wrapper,
 * answers as the driver does. The raw call is not given the NULL event:
 * PoCL answers CL_INVALID_EVENT, Oclgrind dereferences it. */
START_TEST(two_contexts_are_refused_in_every_mode)
{
    cl_context c1 = test_pocl_context(), c2 = test_pocl_context();
    cl_event ev[2], with_null[2];
    cl_int raw, err;
    struct {
        clgc_wait_mode_t mode;
        long poll_ns;
    } modes[] = {{CLGC_WAIT_COOPERATIVE, 0},
                 {CLGC_WAIT_COOPERATIVE, 1000000},
                 {CLGC_WAIT_BLOCKING, 0}};

    ev[0] = clCreateUserEvent(c1, &err);
    ev[1] = clCreateUserEvent(c2, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(ev[0], CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(ev[1], CL_COMPLETE), CL_SUCCESS);
    with_null[0] = ev[0];
    with_null[1] = NULL;
    raw = clWaitForEvents(2, ev);
    for (unsigned i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        ck_assert_int_eq(clgc_wait_set_mode(modes[i].mode), CLGC_OK);
        ck_assert_int_eq(clgc_wait_set_poll_ns(modes[i].poll_ns), CLGC_OK);
        ck_assert_int_eq(clgc_wait_for_events(2, ev), CL_INVALID_CONTEXT);
        ck_assert_int_eq(clgc_clWaitForEvents(2, ev), raw);
        ck_assert_int_eq(clgc_wait_for_events(2, with_null), CL_INVALID_EVENT);
        ck_assert_int_eq(clgc_wait_for_events(0, ev), CL_INVALID_VALUE);
        /* Each alone is fine. */
        ck_assert_int_eq(clgc_wait_for_events(1, &ev[1]), CL_SUCCESS);
    }
    ck_assert_int_eq(clgc_wait_set_mode(CLGC_WAIT_COOPERATIVE), CLGC_OK);
    clReleaseEvent(ev[0]);
    clReleaseEvent(ev[1]);
    clReleaseContext(c1);
    clReleaseContext(c2);
}
END_TEST

/* Events of one context on two queues, and a user event beside them:
 * the context check does not refuse what clWaitForEvents accepts. */
START_TEST(one_context_on_two_queues_is_accepted)
{
    struct test_device d;
    cl_command_queue q2;
    cl_device_id device;
    cl_event ev[3];
    cl_int err;

    test_device_open(&d, 1024);
    ck_assert_int_eq(clGetCommandQueueInfo(d.queue, CL_QUEUE_DEVICE,
                                           sizeof(device), &device, NULL),
                     CL_SUCCESS);
    q2 = test_queue_create(d.context, device);
    ev[0] = enqueue_spin(&d, 10, NULL);
    ck_assert_int_eq(clEnqueueMarkerWithWaitList(q2, 0, NULL, &ev[1]),
                     CL_SUCCESS);
    ev[2] = clCreateUserEvent(d.context, &err);
    ck_assert_int_eq(clSetUserEventStatus(ev[2], CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clgc_wait_set_poll_ns(0), CLGC_OK);
    ck_assert_int_eq(clgc_wait_for_events(3, ev), CL_SUCCESS);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(test_event_status(ev[i]), CL_COMPLETE);
        clReleaseEvent(ev[i]);
    }
    clReleaseCommandQueue(q2);
    test_device_close(&d);
}
END_TEST

/* A budget past the documented maximum is refused (it used to overflow
 * the deadline's arithmetic, and then poll not at all), and the one in
 * force stays; the maximum itself is accepted. */
START_TEST(huge_poll_budget_is_refused)
{
    cl_context context = test_pocl_context();
    cl_event ev;
    cl_int err;

    ck_assert_int_eq(clgc_wait_set_poll_ns(12345), CLGC_OK);
    ck_assert_int_eq(clgc_wait_set_poll_ns(LONG_MAX), CLGC_EINVAL);
    ck_assert_int_eq(clgc_wait_set_poll_ns(CLGC_WAIT_POLL_MAX_NS + 1),
                     CLGC_EINVAL);
    ck_assert_int_eq(clgc_wait_get_poll_ns(), 12345);
    ck_assert_int_eq(clgc_wait_set_poll_ns(CLGC_WAIT_POLL_MAX_NS), CLGC_OK);
    ck_assert_int_eq(clgc_wait_get_poll_ns(), CLGC_WAIT_POLL_MAX_NS);
    ev = clCreateUserEvent(context, &err);
    ck_assert_int_eq(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
    ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_POLL);
    clReleaseEvent(ev);
    clReleaseContext(context);
}
END_TEST

/* CLGC_WAIT_POLL_NS is read once, at the first wait: each value is tried
 * in a fresh process (this program again, running only the case below,
 * natively even under valgrind), which reports by its exit status. */
static const char *budget_expected = "CLGC_TEST_POLL_EXPECTED";

START_TEST(poll_budget_from_the_environment)
{
    static const struct {
        const char *value, *expected;
    } cases[] = {{"2500", "2500"},
                 {"1000000000", "1000000000"},
                 {"1000000001", "0"},
                 {"99999999999999999999", "0"}, /* strtol saturates */
                 {"-5", "0"},
                 {"12ms", "0"},
                 /* strtol skips leading space and takes a sign: neither
                  * is a decimal integer (issue 25, item 8). */
                 {" 5", "0"},
                 {"\t\n7", "0"},
                 {"+5", "0"},
                 {"", "0"}};
    const char *expected = getenv(budget_expected);

    if (expected != NULL) {
        /* The child: the budget in force, and a wait that uses it. */
        cl_context context = test_pocl_context();
        cl_event ev;
        cl_int err;

        ck_assert_int_eq(clgc_wait_get_poll_ns(), atol(expected));
        ev = clCreateUserEvent(context, &err);
        ck_assert_int_eq(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
        ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
        clReleaseEvent(ev);
        clReleaseContext(context);
        return;
    }
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int status;
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            setenv("CLGC_WAIT_POLL_NS", cases[i].value, 1);
            setenv(budget_expected, cases[i].expected, 1);
            setenv("CK_RUN_SUITE", "wait", 1);
            setenv("CK_RUN_CASE", "environment", 1);
            setenv("CK_VERBOSITY", "silent", 1);
            /* argv[0], not /proc/self/exe: under valgrind that is
             * valgrind's own tool. */
            execlp(program_invocation_name, program_invocation_name,
                   (char *)NULL);
            _exit(127);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "CLGC_WAIT_POLL_NS=%s: the child failed (status %d)",
                      cases[i].value, status);
    }
}
END_TEST

/* Sets a user event to an error, through clgc, each time the waiter
 * sleeps: PoCL never calls back for it. */
struct failing_setter {
    pid_t tid;
    cl_event *events;
    int n;
    atomic_int next; /* the waiter's turn: the event it waits on now */
};

static void *
fail_each_when_asleep(void *arg)
{
    struct failing_setter *f = arg;

    for (int i = 0; i < f->n; i++) {
        struct test_await w = test_await_start();

        while (atomic_load(&f->next) != i || !test_sleeps_timed(f->tid))
            test_await_nap(&w, "the waiter to sleep in its wait for event %d",
                           i);
        clgc_clSetUserEventStatus(f->events[i], -5);
    }
    return NULL;
}

/* Waits on events that fail while they sleep used to keep their record
 * for good: after 512 of them every wait fell back to blocking. Each
 * returns with the error (a failure set through clgc wakes it), and a
 * wait after 2000 of them still sleeps until its callback. */
START_TEST(failed_user_events_leave_no_damage)
{
    enum { N = 2000 };
    cl_context context = test_pocl_context();
    static cl_event events[N];
    struct failing_setter f = {gettid(), events, N, 0};
    struct sleep_setter s;
    cl_event ok;
    pthread_t t;
    cl_int err;

    for (int i = 0; i < N; i++) {
        events[i] = clCreateUserEvent(context, &err);
        ck_assert_int_eq(err, CL_SUCCESS);
    }
    ck_assert_int_eq(clgc_wait_set_poll_ns(0), CLGC_OK);
    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_CALLBACK), CLGC_OK);
    ck_assert_int_eq(pthread_create(&t, NULL, fail_each_when_asleep, &f), 0);
    for (int i = 0; i < N; i++) {
        atomic_store(&f.next, i);
        ck_assert_int_eq(clgc_wait_for_events(1, &events[i]),
                         CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_CALLBACK);
    }
    ck_assert_int_eq(pthread_join(t, NULL), 0);

    ok = clCreateUserEvent(context, &err);
    s = (struct sleep_setter){{ok, CL_COMPLETE}, gettid()};
    ck_assert_int_eq(pthread_create(&t, NULL, set_when_asleep, &s), 0);
    ck_assert_int_eq(clgc_wait_for_events(1, &ok), CL_SUCCESS);
    ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_CALLBACK);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    clReleaseEvent(ok);
    for (int i = 0; i < N; i++)
        clReleaseEvent(events[i]);
    clReleaseContext(context);
}
END_TEST

START_TEST(bad_input_is_refused)
{
    cl_event none = NULL;

    ck_assert_int_eq(clgc_wait_for_events(0, NULL), CL_INVALID_VALUE);
    ck_assert_int_eq(clgc_wait_for_events(1, NULL), CL_INVALID_VALUE);
    ck_assert_int_eq(clgc_wait_for_events(1, &none), CL_INVALID_EVENT);
    ck_assert_int_eq(clgc_wait_set_mode((clgc_wait_mode_t)7), CLGC_EINVAL);
    ck_assert_int_eq(clgc_wait_set_poll_ns(-1), CLGC_EINVAL);
}
END_TEST

Suite *
clgc_make_wait_suite(void)
{
    Suite *s = suite_create("wait");
    TCase *tc = test_case("cooperative");

    tcase_set_tags(tc, TEST_TAG_THREADED);
    test_add_premised_test(tc, wait_sleeps_until_the_callback,
                           TEST_DRIVER_THREADS,
                           "its gate is set once the waiter sleeps, after "
                           "the wait's flush");
    tcase_add_test(tc, wait_for_a_done_event_polls);
    tcase_add_test(tc, failed_commands_report_their_error);
    tcase_add_test(tc, blocking_mode_waits_in_the_driver);
    tcase_add_test(tc, a_signal_does_not_abandon_the_wait);
    tcase_add_test(tc, bad_input_is_refused);
    tcase_add_test(tc, two_contexts_are_refused_in_every_mode);
    tcase_add_test(tc, one_context_on_two_queues_is_accepted);
    tcase_add_test(tc, huge_poll_budget_is_refused);
    tcase_add_test(tc, failed_user_events_leave_no_damage);
    suite_add_tcase(s, tc);
    tc = test_case("environment");
    tcase_set_tags(tc, TEST_TAG_THREADED);
    tcase_add_test(tc, poll_budget_from_the_environment);
    suite_add_tcase(s, tc);
    return s;
}
