/* Asynchronous waits on the real PoCL device: each handler runs exactly
 * once with the event's real status, on the thread its mode says,
 * failures included (PoCL 3.1 never calls back for a failed user event:
 * clgc's watcher does). Completion queues: check_queue.c. */

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
    test_sem_wait(&s->ran, "a handler to run");
}

START_TEST(raw_handler_runs_once_with_the_status)
{
    cl_context context = test_pocl_context();
    cl_event ev = user_event(context), done = user_event(context);
    struct test_setter set = {ev, CL_COMPLETE};
    struct seen s, done_s;
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

    /* Already complete: PoCL runs the handler before notify returns,
     * NVIDIA later on its own thread. */
    seen_init(&done_s);
    ck_assert_int_eq(clSetUserEventStatus(done, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clgc_event_notify(done, CLGC_NOTIFY_RAW, record, &done_s),
                     CL_SUCCESS);
    wait_ran(&done_s);
    ck_assert_int_eq(done_s.calls, 1);
    ck_assert_int_eq(done_s.status, CL_COMPLETE);
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

static cl_uint
refcount_of(cl_event ev)
{
    cl_uint n = 0;

    ck_assert_int_eq(
        clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof(n), &n, NULL),
        CL_SUCCESS);
    return n;
}

/* Until clgc has let go of every reference to ev but the test's own. The
 * watcher drops its reference just after the handler returns; a record
 * that is never reclaimed keeps one for good, and the test times out. */
static void
wait_let_go(cl_event ev)
{
    struct test_await w = test_await_start();

    while (refcount_of(ev) != 1)
        test_await_nap(&w, "the driver to let go of an event (%u references)",
                       (unsigned)refcount_of(ev));
}

/* A notification whose callback never comes (a failed user event) is
 * reclaimed, with its reference to the event, once the watcher has
 * delivered it: for a failure set through clgc (which kicks the watcher)
 * and one set with the raw call (its slow scan). */
START_TEST(delivered_failure_lets_go_of_its_event)
{
    cl_context context = test_pocl_context();
    cl_event kicked = user_event(context), raw = user_event(context);
    struct seen s1, s2;

    seen_init(&s1);
    seen_init(&s2);
    ck_assert_int_eq(clgc_event_notify(kicked, CLGC_NOTIFY_RAW, record, &s1),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_event_notify(raw, CLGC_NOTIFY_ACTIVE, record, &s2),
                     CL_SUCCESS);
    ck_assert_uint_gt(refcount_of(kicked), 1);
    ck_assert_int_eq(clgc_clSetUserEventStatus(kicked, -5), CL_SUCCESS);
    wait_ran(&s1);
    ck_assert_int_eq(s1.status, -5);
    wait_let_go(kicked);
    ck_assert_int_eq(clSetUserEventStatus(raw, -6), CL_SUCCESS);
    wait_ran(&s2);
    ck_assert_int_eq(s2.status, -6);
    ck_assert_int_eq(s2.in_region, 0);
    wait_let_go(raw);
    ck_assert_int_eq(s1.calls + s2.calls, 2);
    clReleaseEvent(kicked);
    clReleaseEvent(raw);
    clReleaseContext(context);
}
END_TEST

/* What a failing handler saw. */
struct failing {
    struct seen seen;
    int result; /* clgc_callback_fail's */
    int tag;    /* its error: &tag */
};

static void
fail_handler(cl_event event, cl_int status, void *data)
{
    struct failing *f = data;

    f->result = clgc_callback_fail(&f->tag);
    record(event, status, &f->seen);
}

/* The failures recorded so far reach the runtime's callback_failed hook
 * at the end of a wait: one, from command, with error. */
static void
expect_handed_over(cl_event done, unsigned long *count, const char *command,
                   void *error)
{
    clgc_callback_error_t last;

    ck_assert_int_eq(clgc_wait_for_events(1, &done), CL_SUCCESS);
    ck_assert_uint_eq(test_rt_failures(&last), *count + 1);
    ck_assert_str_eq(last.command, command);
    ck_assert_ptr_eq(last.error, error);
    ck_assert_int_eq(last.code, CLGC_ECALLBACK);
    *count += 1;
}

/* clgc_callback_fail works in every kind of handler clgc runs for a
 * notification: RAW and ACTIVE (on the thread that delivers a complete
 * event's notification, and on the watcher's) and posted ones, in a
 * drain. */
START_TEST(handlers_may_report_failures)
{
    cl_context context = test_pocl_context();
    cl_event done = user_event(context), later = user_event(context),
             posted = user_event(context);
    clgc_queue_t *q;
    struct pollfd p = {-1, POLLIN, 0};
    struct failing f[4];
    unsigned long count;

    ck_assert_int_eq(clgc_queue_create(&q), CLGC_OK);
    p.fd = clgc_queue_fd(q);
    memset(f, 0, sizeof(f));
    for (int i = 0; i < 4; i++)
        seen_init(&f[i].seen);
    ck_assert_int_eq(clSetUserEventStatus(done, CL_COMPLETE), CL_SUCCESS);
    count = test_rt_failures(NULL);

    ck_assert_int_eq(
        clgc_event_notify(done, CLGC_NOTIFY_RAW, fail_handler, &f[0]),
        CL_SUCCESS);
    wait_ran(&f[0].seen);
    ck_assert_int_eq(f[0].result, CLGC_OK);
    expect_handed_over(done, &count, "clgc_event_notify", &f[0].tag);

    ck_assert_int_eq(
        clgc_event_notify(done, CLGC_NOTIFY_ACTIVE, fail_handler, &f[1]),
        CL_SUCCESS);
    wait_ran(&f[1].seen);
    ck_assert_int_eq(f[1].result, CLGC_OK);
    expect_handed_over(done, &count, "clgc_event_notify", &f[1].tag);

    /* On the watcher's thread where the driver never calls back for a
     * failed user event (PoCL); Oclgrind calls back inline. */
    ck_assert_int_eq(
        clgc_event_notify(later, CLGC_NOTIFY_ACTIVE, fail_handler, &f[2]),
        CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetUserEventStatus(later, -3), CL_SUCCESS);
    wait_ran(&f[2].seen);
    ck_assert_int_eq(f[2].result, CLGC_OK);
    if (test_elsewhere() == NULL)
        ck_assert(!pthread_equal(f[2].seen.thread, pthread_self()));
    expect_handed_over(done, &count, "clgc_event_notify", &f[2].tag);

    ck_assert_int_eq(clgc_event_post(posted, q, fail_handler, &f[3]),
                     CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(posted, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(test_poll(&p, "the queue's fd to be readable"), 1);
    ck_assert_int_eq(clgc_queue_drain(q, 0), 1);
    ck_assert_int_eq(f[3].result, CLGC_OK);
    expect_handed_over(done, &count, "clgc_event_post", &f[3].tag);

    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    clReleaseEvent(done);
    clReleaseEvent(later);
    clReleaseEvent(posted);
    clReleaseContext(context);
}
END_TEST

static void CL_CALLBACK
on_event(cl_event event, cl_int status, void *data)
{
    record(event, status, data);
}

/* A callback registered through clgc on an event that fails runs once,
 * with the negative status, though PoCL never calls it: deferred, it
 * reaches its queue, which can then close; not deferred, it runs on the
 * watcher's thread. CL_COMPLETE callbacks on user events, and a
 * CL_RUNNING one on a command behind a user event that fails; and one
 * that the driver does call, saying CL_COMPLETE. */
START_TEST(callbacks_on_failed_events_end)
{
    cl_context context = test_pocl_context();
    cl_event deferred = user_event(context), raw_failed = user_event(context),
             direct = user_event(context), gate = user_event(context), marker;
    clgc_queue_t *q;
    struct pollfd p = {-1, POLLIN, 0};
    cl_command_queue queue;
    cl_device_id device;
    struct seen s[5];

    ck_assert_int_eq(clgc_queue_create(&q), CLGC_OK);
    p.fd = clgc_queue_fd(q);
    for (int i = 0; i < 5; i++)
        seen_init(&s[i]);
    ck_assert_int_eq(clGetContextInfo(context, CL_CONTEXT_DEVICES,
                                      sizeof(device), &device, NULL),
                     CL_SUCCESS);
    queue = test_queue_create(context, device);
    ck_assert_int_eq(clEnqueueMarkerWithWaitList(queue, 1, &gate, &marker),
                     CL_SUCCESS);
    ck_assert_int_eq(clFlush(queue), CL_SUCCESS);
    ck_assert_int_eq(clgc_callbacks_defer(q), CLGC_OK);
    ck_assert_int_eq(
        clgc_clSetEventCallback(marker, CL_RUNNING, on_event, &s[3]),
        CL_SUCCESS);
    ck_assert_int_eq(
        clgc_clSetEventCallback(deferred, CL_COMPLETE, on_event, &s[0]),
        CL_SUCCESS);
    ck_assert_int_eq(
        clgc_clSetEventCallback(raw_failed, CL_COMPLETE, on_event, &s[1]),
        CL_SUCCESS);
    ck_assert_int_eq(clgc_callbacks_defer(NULL), CLGC_OK);
    ck_assert_int_eq(
        clgc_clSetEventCallback(direct, CL_COMPLETE, on_event, &s[2]),
        CL_SUCCESS);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_EBUSY);

    ck_assert_int_eq(clgc_clSetUserEventStatus(deferred, -5), CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(raw_failed, -6), CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetUserEventStatus(direct, -7), CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetUserEventStatus(gate, -9), CL_SUCCESS);
    wait_ran(&s[2]);
    ck_assert_int_eq(s[2].status, -7);
    ck_assert(!pthread_equal(s[2].thread, pthread_self()));
    while (s[0].calls + s[1].calls + s[3].calls < 3) {
        ck_assert_int_eq(test_poll(&p, "the queue's fd to be readable"), 1);
        ck_assert_int_ge(clgc_queue_drain(q, 0), 0);
    }
    ck_assert_int_eq(s[0].status, -5);
    ck_assert_int_eq(s[1].status, -6);
    ck_assert_int_lt(s[3].status, 0);
    ck_assert(pthread_equal(s[0].thread, pthread_self()));
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    ck_assert_int_eq(s[0].calls + s[1].calls + s[2].calls + s[3].calls, 4);

    /* A driver that calls back for a failed command may say CL_COMPLETE:
     * PoCL does for this marker, at once, NVIDIA for a failed user event.
     * The callback gets the failure. */
    ck_assert_int_lt(test_event_status(marker), 0);
    ck_assert_int_eq(
        clgc_clSetEventCallback(marker, CL_COMPLETE, on_event, &s[4]),
        CL_SUCCESS);
    wait_ran(&s[4]);
    ck_assert_int_eq(s[4].status, test_event_status(marker));
    clReleaseEvent(marker);
    clReleaseCommandQueue(queue);
    clReleaseEvent(gate);
    clReleaseEvent(deferred);
    clReleaseEvent(raw_failed);
    clReleaseEvent(direct);
    clReleaseContext(context);
}
END_TEST

/* What a forked child may do (docs/wait.md): user events, notifications
 * and waits on them, with a watcher of its own. The child reports by its
 * exit status; alarm() ends one that would hang. */
static int
child_work(cl_context context)
{
    cl_event failed = user_event(context), ok = user_event(context);
    struct test_setter set = {ok, CL_COMPLETE};
    struct seen s;
    pthread_t t;

    alarm(60);
    seen_init(&s);
    if (clgc_event_notify(failed, CLGC_NOTIFY_RAW, record, &s) != CL_SUCCESS)
        return 2;
    if (clgc_clSetUserEventStatus(failed, -4) != CL_SUCCESS)
        return 3;
    wait_ran(&s);
    if (s.calls != 1 || s.status != -4)
        return 4;
    if (clgc_wait_set_poll_ns(0) != CLGC_OK ||
        pthread_create(&t, NULL, test_set_status, &set) != 0)
        return 5;
    if (clgc_wait_for_events(1, &ok) != CL_SUCCESS)
        return 6;
    pthread_join(t, NULL);
    return 0;
}

START_TEST(a_forked_child_has_a_watcher_of_its_own)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    /* The sanitizers cannot start threads in the child of a threaded
     * process: ThreadSanitizer refuses, and GCC 12's ASan runtime does not
     * take its allocator's lock around fork(), so the child's new thread
     * hangs at times on a lock a thread of the parent held (seen here in
     * the child's watcher, in ASan's free() under pthread_getattr_np).
     * The plain and valgrind runs cover this test. */
    return;
#endif
    cl_context context = test_pocl_context();
    cl_event pending = user_event(context), later = user_event(context);
    struct seen parent_s, later_s;
    int status;
    pid_t pid;

    /* The parent's watcher is running, with a notification pending. */
    seen_init(&parent_s);
    seen_init(&later_s);
    ck_assert_int_eq(
        clgc_event_notify(pending, CLGC_NOTIFY_RAW, record, &parent_s),
        CL_SUCCESS);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(child_work(context));
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the child failed: status %d", status);

    /* The parent is undisturbed: its notification is still pending and is
     * delivered once, and its watcher still delivers failures. */
    ck_assert_int_eq(parent_s.calls, 0);
    ck_assert_int_eq(clgc_clSetUserEventStatus(pending, CL_COMPLETE),
                     CL_SUCCESS);
    wait_ran(&parent_s);
    ck_assert_int_eq(parent_s.status, CL_COMPLETE);
    ck_assert_int_eq(
        clgc_event_notify(later, CLGC_NOTIFY_RAW, record, &later_s),
        CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetUserEventStatus(later, -2), CL_SUCCESS);
    wait_ran(&later_s);
    ck_assert_int_eq(later_s.status, -2);
    ck_assert_int_eq(parent_s.calls + later_s.calls, 2);
    clReleaseEvent(pending);
    clReleaseEvent(later);
    clReleaseContext(context);
}
END_TEST

/* Failures racing completions, thousands pending, and handlers that
 * release the event: two threads race to end each of many user events,
 * one completing it with the raw call, the other failing it through clgc
 * (which kicks the watcher). Every handler runs exactly once, with the
 * status that won, whichever of the driver's callback and the watcher
 * delivers it; each releases a reference to its event, so that clgc's
 * are the last. (PoCL refuses the second status set on a user event;
 * NVIDIA accepts a failure after CL_COMPLETE, so there both setters may
 * win, and the handler sees either status.) */
enum { RACE_N = 2000 };

static struct {
    cl_event ev[RACE_N];
    cl_int won[RACE_N][2]; /* each setter's result */
    cl_int seen[RACE_N];
    atomic_int calls[RACE_N];
    atomic_int total;
    sem_t done;
} race;

static void
race_handler(cl_event event, cl_int status, void *data)
{
    int i = (int)(intptr_t)data;

    race.seen[i] = status;
    atomic_fetch_add(&race.calls[i], 1);
    clReleaseEvent(event);
    if (atomic_fetch_add(&race.total, 1) + 1 == RACE_N)
        sem_post(&race.done);
}

static void *
race_complete(void *unused)
{
    for (int i = 0; i < RACE_N; i++)
        race.won[i][0] = clSetUserEventStatus(race.ev[i], CL_COMPLETE);
    return NULL;
}

static void *
race_fail(void *unused)
{
    for (int i = 0; i < RACE_N; i++)
        race.won[i][1] = clgc_clSetUserEventStatus(race.ev[i], -8);
    return NULL;
}

START_TEST(failures_race_completions)
{
    cl_context context = test_pocl_context();
    pthread_t t[2];

    sem_init(&race.done, 0, 0);
    for (int i = 0; i < RACE_N; i++) {
        race.ev[i] = user_event(context);
        /* One reference for the handler to release, while the losing
         * setter may still use the event. */
        ck_assert_int_eq(clRetainEvent(race.ev[i]), CL_SUCCESS);
        race.seen[i] = 1;
        ck_assert_int_eq(
            clgc_event_notify(race.ev[i],
                              i % 2 ? CLGC_NOTIFY_RAW : CLGC_NOTIFY_ACTIVE,
                              race_handler, (void *)(intptr_t)i),
            CL_SUCCESS);
    }
    ck_assert_int_eq(pthread_create(&t[0], NULL, race_complete, NULL), 0);
    ck_assert_int_eq(pthread_create(&t[1], NULL, race_fail, NULL), 0);
    ck_assert_int_eq(pthread_join(t[0], NULL), 0);
    ck_assert_int_eq(pthread_join(t[1], NULL), 0);
    test_sem_wait(&race.done, "the raced handler to run");
    for (int i = 0; i < RACE_N; i++) {
        int completed = race.won[i][0] == CL_SUCCESS,
            failed = race.won[i][1] == CL_SUCCESS;

        ck_assert(completed || failed);
        ck_assert_int_eq(atomic_load(&race.calls[i]), 1);
        if (completed != failed)
            ck_assert_int_eq(race.seen[i], completed ? CL_COMPLETE : -8);
        else
            ck_assert(race.seen[i] == CL_COMPLETE || race.seen[i] == -8);
        clReleaseEvent(race.ev[i]);
    }
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
    /* NVIDIA's clReleaseContext waits for a user event never set. */
    ck_assert_int_eq(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    clReleaseEvent(ev);
    clReleaseContext(context);
}
END_TEST

Suite *
clgc_make_notify_suite(void)
{
    Suite *s = suite_create("notify");
    TCase *tc = test_case("async");

    tcase_set_tags(tc, TEST_TAG_THREADED);
    tcase_add_test(tc, raw_handler_runs_once_with_the_status);
    tcase_add_test(tc, failure_is_delivered_by_the_watcher);
    /* PoCL calls back inside the registration, which is what it checks;
     * NVIDIA calls back later, on its own thread. */
    test_add_pocl_test(tc, active_handler_runs_with_the_runtime_active,
                       "a callback inline in its registration");
    tcase_add_test(tc, bad_input_is_refused);
    tcase_add_test(tc, delivered_failure_lets_go_of_its_event);
    tcase_add_test(tc, handlers_may_report_failures);
    test_add_premised_test(
        tc, callbacks_on_failed_events_end, TEST_DRIVER_THREADS,
        "it flushes a marker behind a user event it sets later");
    test_add_pocl_test(tc, a_forked_child_has_a_watcher_of_its_own,
                       "a forked child runs OpenCL: PoCL allows it, CUDA "
                       "does not");
    tcase_add_test(tc, failures_race_completions);
    suite_add_tcase(s, tc);
    return s;
}
