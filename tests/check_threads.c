/* Many threads at once: the per-thread state stays per thread, the
 * platform list and the extension cache fill in safely on first use, and
 * threads that exit attached are detached. The TSan build runs this suite
 * (CK_RUN_SUITE=threads). */

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>

#include "testutil.h"

#define THREADS 4
#define CALLS 2000

struct worker {
    cl_platform_id platform;
    cl_mem buf, size_buf;
    int failures;
    unsigned max_depth_after;
};

static void *
call_many(void *arg)
{
    struct worker *w = arg;
    char profile[64];

    for (int i = 0; i < CALLS; i++) {
        /* A core command, and an extension one resolved for PoCL: the
         * first calls of all threads race to fill the cache. */
        if (clgc_clGetPlatformInfo(w->platform, CL_PLATFORM_PROFILE,
                                   sizeof(profile), profile, NULL) != 0 ||
            clgc_clSetContentSizeBufferPoCL(w->buf, w->size_buf) != 0)
            w->failures++;
        if (clgc_thread_region_depth() > w->max_depth_after)
            w->max_depth_after = clgc_thread_region_depth();
    }
    return NULL;
}

START_TEST(wrappers_from_many_threads)
{
    cl_platform_id platform = test_platform("Portable Computing Language");
    unsigned long safe0;
    struct worker w[THREADS];
    pthread_t t[THREADS];
    cl_device_id device;
    cl_context context;
    cl_mem buf, size_buf;
    cl_int err;

    ck_assert_int_eq(
        clGetDeviceIDs(platform, test_device_type(), 1, &device, NULL),
        CL_SUCCESS);
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    buf = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    size_buf = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(cl_ulong),
                              NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);

    safe0 = test_rt_safe_calls();
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){platform, buf, size_buf, 0, 0};
        ck_assert_int_eq(pthread_create(&t[i], NULL, call_many, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
        ck_assert_int_eq(w[i].failures, 0);
        ck_assert_uint_eq(w[i].max_depth_after, 0);
    }
    ck_assert_uint_eq(test_rt_safe_calls() - safe0, 2UL * THREADS * CALLS);

    clReleaseMemObject(size_buf);
    clReleaseMemObject(buf);
    clReleaseContext(context);
}
END_TEST

static void *
attach_call_exit(void *arg)
{
    cl_uint n = 0;

    *(int *)arg = clgc_thread_attach();
    if (clgc_clGetPlatformIDs(0, NULL, &n) != CL_SUCCESS || n == 0)
        *(int *)arg = -100;
    return NULL;
}

START_TEST(threads_exiting_attached_are_detached)
{
    unsigned long a0 = test_rt_attach_calls(), d0 = test_rt_detach_calls();
    int result[8];
    pthread_t t[8];

    /* ocl-icd 2.3.1 loads its ICDs on the first call without a lock: with
     * two ICDs, first calls racing on several threads crash at thread exit
     * (seen under ASan). Load them here, on one thread. */
    test_platform("clgc stub");
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(
            pthread_create(&t[i], NULL, attach_call_exit, &result[i]), 0);
    for (int i = 0; i < 8; i++) {
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
        ck_assert_int_eq(result[i], CLGC_OK);
    }
    ck_assert_uint_eq(test_rt_attach_calls() - a0, 8);
    ck_assert_uint_eq(test_rt_detach_calls() - d0, 8);
}
END_TEST

/* Issue 25, item 6: an attached thread that exits inside a safe region,
 * or inside an active region entered from one, is detached at exit, and
 * the detach_thread hook finds it outside any region, as when a thread
 * detaches itself. */
struct exiting {
    int active;
    int attach;
    unsigned depth_inside;
};

static void *
exit_now(void *arg)
{
    struct exiting *e = arg;

    e->depth_inside = clgc_thread_region_depth();
    pthread_exit(NULL);
}

static void *
exit_active(void *arg)
{
    clgc_call_active(exit_now, arg, NULL);
    return NULL;
}

static void *
attach_exit_in_region(void *arg)
{
    struct exiting *e = arg;

    e->attach = clgc_thread_attach();
    clgc_call_safe(e->active ? exit_active : exit_now, e);
    return NULL; /* never reached */
}

START_TEST(threads_exiting_inside_a_region_are_detached)
{
    for (int active = 0; active < 2; active++) {
        struct exiting e = {.active = active, .attach = -1};
        unsigned long d0 = test_rt_detach_calls();
        pthread_t t;

        ck_assert_int_eq(pthread_create(&t, NULL, attach_exit_in_region, &e),
                         0);
        ck_assert_int_eq(pthread_join(t, NULL), 0);
        ck_assert_int_eq(e.attach, CLGC_OK);
        ck_assert_uint_eq(e.depth_inside, 1);
        ck_assert_uint_eq(test_rt_detach_calls() - d0, 1);
        ck_assert_msg(test_rt_detach_depth() == 0,
                      "detach_thread ran %u regions deep (active: %d)",
                      test_rt_detach_depth(), active);
    }
}
END_TEST

/* One waiter and its completer: the waiter makes a user event, hands it
 * over and waits for it; the completer completes it and says when it is
 * done with it, so that the waiter releases it only then. */
#define WAITS 25000 /* 100,000 waits in all */

struct pair {
    cl_context context;
    cl_event event;
    sem_t handed, taken;
    int failures, waited;
};

static void *
completer(void *arg)
{
    struct pair *p = arg;

    for (int i = 0; i < WAITS; i++) {
        test_sem_wait(&p->handed, "the other thread to hand over an event");
        if (clSetUserEventStatus(p->event, CL_COMPLETE) != CL_SUCCESS)
            p->failures++;
        sem_post(&p->taken);
    }
    return NULL;
}

static void *
waiter(void *arg)
{
    struct pair *p = arg;
    cl_int err;

    for (int i = 0; i < WAITS; i++) {
        cl_event ev = clCreateUserEvent(p->context, &err);

        p->event = ev;
        sem_post(&p->handed);
        if (clgc_wait_for_events(1, &ev) != CL_SUCCESS)
            p->failures++;
        /* Every wait by clgc's own paths, none by the fallback to the
         * driver's wait (no slot): the learned late plan's hand-over to
         * the driver's wait (OWN) is one of them. Four waiters crowding
         * two cores under TSan can delay the completer between the status
         * and its callbacks long enough for the platform to be learned
         * late (CI, once: 32 of 100,000 waits). */
        p->waited += clgc_wait_last_path() == CLGC_WAIT_PATH_CALLBACK ||
                     clgc_wait_last_path() == CLGC_WAIT_PATH_BACKOFF ||
                     clgc_wait_last_path() == CLGC_WAIT_PATH_POLL ||
                     clgc_wait_last_path() == CLGC_WAIT_PATH_OWN;
        test_sem_wait(&p->taken, "the other thread to take the event");
        clReleaseEvent(ev);
    }
    return NULL;
}

START_TEST(many_waits_lose_no_completion)
{
    cl_platform_id platform = test_platform("Portable Computing Language");
    struct pair p[THREADS];
    pthread_t w[THREADS], c[THREADS];
    cl_device_id device;
    cl_context context;
    int waited = 0;
    cl_int err;

    ck_assert_int_eq(
        clGetDeviceIDs(platform, test_device_type(), 1, &device, NULL), 0);
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    /* Straight to the callback unless the event is done already. */
    ck_assert_int_eq(clgc_wait_set_poll_ns(0), CLGC_OK);
    for (int i = 0; i < THREADS; i++) {
        p[i] = (struct pair){.context = context};
        sem_init(&p[i].handed, 0, 0);
        sem_init(&p[i].taken, 0, 0);
        ck_assert_int_eq(pthread_create(&c[i], NULL, completer, &p[i]), 0);
        ck_assert_int_eq(pthread_create(&w[i], NULL, waiter, &p[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        ck_assert_int_eq(pthread_join(w[i], NULL), 0);
        ck_assert_int_eq(pthread_join(c[i], NULL), 0);
        ck_assert_int_eq(p[i].failures, 0);
        waited += p[i].waited;
        sem_destroy(&p[i].handed);
        sem_destroy(&p[i].taken);
    }
    ck_assert_int_eq(waited, THREADS * WAITS);
    clReleaseContext(context);
}
END_TEST

/* Four producers complete user events posted to one queue; the owner
 * drains it whenever its fd is readable. Every handler runs exactly once,
 * on the owner. */
#define POSTS 2500

struct producer {
    cl_event ev[POSTS];
    int failures;
};

static void *
produce(void *arg)
{
    struct producer *p = arg;

    for (int i = 0; i < POSTS; i++)
        if (clSetUserEventStatus(p->ev[i], CL_COMPLETE) != CL_SUCCESS)
            p->failures++;
    return NULL;
}

static pthread_t owner;
static int delivered_off_owner;

static void
count_run(cl_event event, cl_int status, void *data)
{
    int *runs = data;

    (*runs)++;
    if (status != CL_COMPLETE || !pthread_equal(pthread_self(), owner))
        delivered_off_owner++;
}

START_TEST(queue_delivers_every_completion_once)
{
    cl_platform_id platform = test_platform("Portable Computing Language");
    static struct producer p[THREADS];
    static int runs[THREADS][POSTS];
    clgc_queue_t *q;
    struct pollfd fd = {-1, POLLIN, 0};
    unsigned total = 0;
    pthread_t t[THREADS];
    cl_device_id device;
    cl_context context;
    cl_int err;

    owner = pthread_self();
    ck_assert_int_eq(clgc_queue_create(&q), CLGC_OK);
    fd.fd = clgc_queue_fd(q);
    ck_assert_int_eq(
        clGetDeviceIDs(platform, test_device_type(), 1, &device, NULL), 0);
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    for (int i = 0; i < THREADS; i++)
        for (int k = 0; k < POSTS; k++) {
            p[i].ev[k] = clCreateUserEvent(context, &err);
            ck_assert_int_eq(err, CL_SUCCESS);
            ck_assert_int_eq(
                clgc_event_post(p[i].ev[k], q, count_run, &runs[i][k]),
                CL_SUCCESS);
        }
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, produce, &p[i]), 0);
    while (total < THREADS * POSTS) {
        int ran;

        ck_assert_int_eq(test_poll(&fd, "the queue's fd to be readable"), 1);
        ran = clgc_queue_drain(q, 0);
        ck_assert_int_ge(ran, 0);
        total += (unsigned)ran;
    }
    for (int i = 0; i < THREADS; i++) {
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
        ck_assert_int_eq(p[i].failures, 0);
    }
    ck_assert_uint_eq(total, THREADS * POSTS);
    ck_assert_int_eq(clgc_queue_drain(q, 0), 0);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    ck_assert_int_eq(delivered_off_owner, 0);
    for (int i = 0; i < THREADS; i++)
        for (int k = 0; k < POSTS; k++) {
            ck_assert_int_eq(runs[i][k], 1);
            clReleaseEvent(p[i].ev[k]);
        }
    clReleaseContext(context);
}
END_TEST

Suite *
clgc_make_threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = test_case("concurrent");

    tcase_set_tags(tc, TEST_TAG_THREADED);
    test_add_pocl_test(tc, wrappers_from_many_threads,
                       "PoCL's own extension clSetContentSizeBufferPoCL");
    tcase_add_test(tc, threads_exiting_attached_are_detached);
    tcase_add_test(tc, threads_exiting_inside_a_region_are_detached);
    tcase_add_test(tc, many_waits_lose_no_completion);
    tcase_add_test(tc, queue_delivers_every_completion_once);
    suite_add_tcase(s, tc);
    return s;
}
