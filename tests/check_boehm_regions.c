/* check_boehm, regions: what bdwgc sees of a thread inside clgc's safe
 * regions and outside them. A thread blocked in OpenCL (a wait, a build)
 * inside a region is never suspended by other threads' collections, and
 * is outside one; sleeping calls the kernel never restarts (poll,
 * nanosleep) are not interrupted inside a region, and are outside one;
 * safe and active regions nest; CLGC_RUNTIME_SKIP_NONBLOCKING takes only
 * the commands that never block out of their regions; and installing at
 * the wrong time is refused. */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "boehm.h"

/* How long the sleeping calls of the EINTR tests ask for. Only a call
 * inside a safe region lasts this long; the assertions are on how the
 * call ended, never on how long it took. */
#define BOEHM_SLEEP_MS 2000

/* ------------------------------------------------------------------------
 * A thread blocked in OpenCL inside a safe region is never suspended;
 * the same thread blocked outside one is suspended by every collection.
 */

/* A thread that blocks in a raw clWaitForEvents on a user event that the
 * test completes after its collections. */
struct boehm_waiter {
    int in_safe; /* wait inside clgc_call_safe */
    cl_event event;
    sem_t inside; /* posted just before the wait */
    cl_int result;
    unsigned depth;
    int in_region;
};

static void *
boehm_wait(void *arg)
{
    struct boehm_waiter *w = arg;

    w->depth = clgc_thread_region_depth();
    w->in_region = clgc_thread_in_region();
    boehm_watch(pthread_self());
    sem_post(&w->inside);
    w->result = clWaitForEvents(1, &w->event);
    return NULL;
}

static void *
boehm_waiter_main(void *arg)
{
    struct boehm_waiter *w = arg;

    if (w->in_safe)
        clgc_call_safe(boehm_wait, w);
    else
        boehm_wait(w);
    return NULL;
}

/* Collect while the waiter blocks; returns its suspensions meanwhile. */
static unsigned long
boehm_run_waiter(int in_safe)
{
    struct boehm_waiter w = {.in_safe = in_safe, .result = 1};
    unsigned long suspended;
    struct boehm_cl cl;
    pthread_t thread;
    cl_int err;

    boehm_setup(0);
    boehm_cl_open(&cl);
    w.event = clgc_clCreateUserEvent(cl.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(sem_init(&w.inside, 0, 0), 0);
    thread = boehm_gc_thread(boehm_waiter_main, &w);
    boehm_sem_wait(&w.inside);
    /* The waiter cannot return before the event completes, below: every
     * collection here finds it in clWaitForEvents. */
    boehm_collect(BOEHM_COLLECTIONS);
    suspended = boehm_suspended();
    boehm_unwatch();
    ck_assert_int_eq(clgc_clSetUserEventStatus(w.event, CL_COMPLETE),
                     CL_SUCCESS);
    boehm_gc_join(thread);

    ck_assert_int_eq(w.result, CL_SUCCESS);
    ck_assert_uint_eq(w.depth, in_safe ? 1 : 0);
    ck_assert_int_eq(w.in_region, in_safe ? 1 : 0);
    ck_assert_int_eq(clgc_clReleaseEvent(w.event), CL_SUCCESS);
    boehm_cl_close(&cl);
    sem_destroy(&w.inside);
    return suspended;
}

START_TEST(test_wait_in_safe_region_is_never_suspended)
{
    ck_assert_uint_eq(boehm_run_waiter(1), 0);
}
END_TEST

START_TEST(test_wait_outside_region_is_suspended)
{
    ck_assert_uint_ge(boehm_run_waiter(0), BOEHM_COLLECTIONS);
}
END_TEST

/* A thread that builds a program, through clgc's wrapper or raw. PoCL
 * calls the build notification on the building thread before the build
 * returns. Through the wrapper, clgc's trampoline runs it with bdwgc
 * active again (GC_call_with_gc_active inside the wrapper's
 * GC_do_blocking), and it holds the build open until the test has
 * collected the way a callback that blocks should: in a safe region of its
 * own. Raw, it blocks where it is. */
struct boehm_builder {
    int wrapped; /* clgc_clBuildProgram, not clBuildProgram */
    cl_program program;
    cl_device_id device;
    sem_t inside, collected;
    cl_int result;
    pthread_t thread, notify_thread;
    int notified;
    unsigned depth;
    int in_region;
};

static void *
boehm_hold_build(void *data)
{
    struct boehm_builder *b = data;

    boehm_watch(pthread_self());
    sem_post(&b->inside);
    boehm_sem_wait(&b->collected);
    return NULL;
}

static void CL_CALLBACK
boehm_build_notify(cl_program program, void *data)
{
    struct boehm_builder *b = data;

    b->notified++;
    b->notify_thread = pthread_self();
    b->depth = clgc_thread_region_depth();
    b->in_region = clgc_thread_in_region();
    if (b->wrapped)
        clgc_call_safe(boehm_hold_build, b);
    else
        boehm_hold_build(b);
}

static void *
boehm_builder_main(void *arg)
{
    struct boehm_builder *b = arg;

    b->thread = pthread_self();
    if (b->wrapped)
        b->result = clgc_clBuildProgram(b->program, 1, &b->device, "",
                                        boehm_build_notify, b);
    else
        b->result = clBuildProgram(b->program, 1, &b->device, "",
                                   boehm_build_notify, b);
    return NULL;
}

/* Collect while the builder waits in its notification; returns its
 * suspensions meanwhile. */
static unsigned long
boehm_run_builder(int wrapped)
{
    struct boehm_builder b = {.wrapped = wrapped, .result = 1};
    unsigned long suspended;
    struct boehm_cl cl;
    pthread_t thread;

    boehm_setup(0);
    boehm_cl_open(&cl);
    b.program = boehm_program(&cl);
    b.device = cl.device;
    ck_assert_int_eq(sem_init(&b.inside, 0, 0), 0);
    ck_assert_int_eq(sem_init(&b.collected, 0, 0), 0);
    thread = boehm_gc_thread(boehm_builder_main, &b);
    boehm_sem_wait(&b.inside);
    boehm_collect(BOEHM_COLLECTIONS);
    suspended = boehm_suspended();
    boehm_unwatch();
    sem_post(&b.collected);
    boehm_gc_join(thread);

    ck_assert_int_eq(b.result, CL_SUCCESS);
    ck_assert_int_eq(b.notified, 1);
    ck_assert_msg(pthread_equal(b.notify_thread, b.thread),
                  "PoCL ran the build notification on another thread");
    ck_assert_uint_eq(b.depth, wrapped ? 1 : 0);
    ck_assert_int_eq(b.in_region, 0);
    ck_assert_int_eq(clgc_clReleaseProgram(b.program), CL_SUCCESS);
    boehm_cl_close(&cl);
    sem_destroy(&b.inside);
    sem_destroy(&b.collected);
    return suspended;
}

START_TEST(test_build_in_wrapper_is_never_suspended)
{
    ck_assert_uint_eq(boehm_run_builder(1), 0);
}
END_TEST

START_TEST(test_build_outside_region_is_suspended)
{
    ck_assert_uint_ge(boehm_run_builder(0), BOEHM_COLLECTIONS);
}
END_TEST

/* ------------------------------------------------------------------------
 * A sleeping system call that the kernel never restarts (poll,
 * nanosleep) is not interrupted by collections inside a safe region,
 * and is outside one.
 */

enum boehm_sleep_call { BOEHM_POLL, BOEHM_NANOSLEEP };

struct boehm_sleeper {
    int in_safe;
    enum boehm_sleep_call call;
    sem_t starting;
    atomic_int done;
    int result, error;
};

static void *
boehm_sleep(void *arg)
{
    struct boehm_sleeper *s = arg;
    struct timespec ts = {BOEHM_SLEEP_MS / 1000,
                          (BOEHM_SLEEP_MS % 1000) * 1000000L};

    boehm_watch(pthread_self());
    sem_post(&s->starting);
    if (s->call == BOEHM_POLL)
        s->result = poll(NULL, 0, BOEHM_SLEEP_MS);
    else
        s->result = nanosleep(&ts, NULL);
    s->error = s->result < 0 ? errno : 0;
    /* Stop counting while still inside the region: once out of it, the
     * thread may be suspended by a collection that began before the test
     * saw `done`. */
    boehm_unwatch();
    atomic_store(&s->done, 1);
    return NULL;
}

static void *
boehm_sleeper_main(void *arg)
{
    struct boehm_sleeper *s = arg;

    if (s->in_safe)
        clgc_call_safe(boehm_sleep, s);
    else
        boehm_sleep(s);
    return NULL;
}

/* Collect without pause until the sleeper's call has returned, however it
 * returned; the sleeper's result is in *s. */
static void
boehm_run_sleeper(struct boehm_sleeper *s)
{
    unsigned long collections = 0;
    pthread_t thread;

    boehm_setup(0);
    s->result = 1;
    ck_assert_int_eq(sem_init(&s->starting, 0, 0), 0);
    thread = boehm_gc_thread(boehm_sleeper_main, s);
    boehm_sem_wait(&s->starting);
    while (!atomic_load(&s->done)) {
        GC_gcollect();
        collections++;
    }
    boehm_gc_join(thread);
    sem_destroy(&s->starting);
    ck_assert_uint_ge(collections, 1);
}

START_TEST(test_poll_in_safe_region_is_not_interrupted)
{
    struct boehm_sleeper s = {.in_safe = 1, .call = BOEHM_POLL};

    boehm_run_sleeper(&s);
    ck_assert_int_eq(s.result, 0); /* it timed out: ran to its end */
    ck_assert_uint_eq(boehm_suspended(), 0);
}
END_TEST

START_TEST(test_poll_outside_region_is_interrupted)
{
    struct boehm_sleeper s = {.in_safe = 0, .call = BOEHM_POLL};

    boehm_run_sleeper(&s);
    ck_assert_int_eq(s.result, -1);
    ck_assert_int_eq(s.error, EINTR);
    ck_assert_uint_ge(boehm_suspended(), 1);
}
END_TEST

START_TEST(test_nanosleep_in_safe_region_is_not_interrupted)
{
    struct boehm_sleeper s = {.in_safe = 1, .call = BOEHM_NANOSLEEP};

    boehm_run_sleeper(&s);
    ck_assert_int_eq(s.result, 0);
    ck_assert_uint_eq(boehm_suspended(), 0);
}
END_TEST

START_TEST(test_nanosleep_outside_region_is_interrupted)
{
    struct boehm_sleeper s = {.in_safe = 0, .call = BOEHM_NANOSLEEP};

    boehm_run_sleeper(&s);
    ck_assert_int_eq(s.result, -1);
    ck_assert_int_eq(s.error, EINTR);
    ck_assert_uint_ge(boehm_suspended(), 1);
}
END_TEST

/* ------------------------------------------------------------------------
 * Safe regions and active ones nest: safe, active, safe, active, safe.
 */

#define BOEHM_LEVELS 5

struct boehm_level {
    unsigned depth, depth_after;
    int in_region, in_region_after;
    unsigned long suspended;
    int call_result;
};

struct boehm_nest {
    struct boehm_collector *collector;
    unsigned next;
    struct boehm_level level[BOEHM_LEVELS];
};

static unsigned *boehm_nest_roots[BOEHM_LEVELS];

/* Level i of the nest: even levels are safe regions, odd ones active
 * regions entered from the safe region below them. */
static void *
boehm_nest_step(void *arg)
{
    struct boehm_nest *n = arg;
    unsigned i = n->next++;
    struct boehm_level *l = &n->level[i];

    l->depth = clgc_thread_region_depth();
    l->in_region = clgc_thread_in_region();
    l->suspended = boehm_collect_elsewhere(n->collector);
    if (i % 2 == 1)
        boehm_nest_roots[i] = boehm_new_object(i);
    if (i + 1 < BOEHM_LEVELS) {
        if (i % 2 == 0)
            l->call_result = clgc_call_active(boehm_nest_step, n, NULL);
        else
            clgc_call_safe(boehm_nest_step, n);
    }
    l->depth_after = clgc_thread_region_depth();
    l->in_region_after = clgc_thread_in_region();
    return NULL;
}

START_TEST(test_regions_nest_three_deep)
{
    struct boehm_collector c = {.target = pthread_self()};
    struct boehm_nest n = {.collector = &c};
    pthread_t helper;

    boehm_setup(0);
    ck_assert_int_eq(sem_init(&c.request, 0, 0), 0);
    ck_assert_int_eq(sem_init(&c.reply, 0, 0), 0);
    helper = boehm_gc_thread(boehm_collector_main, &c);
    /* The control: active, as the thread is now, means suspended. */
    ck_assert_uint_ge(boehm_collect_elsewhere(&c), 1);
    clgc_call_safe(boehm_nest_step, &n);
    atomic_store(&c.stop, 1);
    sem_post(&c.request);
    boehm_gc_join(helper);

    ck_assert_uint_eq(n.next, BOEHM_LEVELS);
    for (unsigned i = 0; i < BOEHM_LEVELS; i++) {
        const struct boehm_level *l = &n.level[i];
        int safe = i % 2 == 0;

        ck_assert_uint_eq(l->depth, i / 2 + 1);
        ck_assert_int_eq(l->in_region, safe);
        ck_assert_uint_eq(l->depth_after, l->depth);
        ck_assert_int_eq(l->in_region_after, l->in_region);
        if (safe)
            ck_assert_uint_eq(l->suspended, 0);
        else
            ck_assert_uint_ge(l->suspended, 1);
        if (safe && i + 1 < BOEHM_LEVELS)
            ck_assert_int_eq(l->call_result, CLGC_OK);
    }
    ck_assert_uint_eq(clgc_thread_region_depth(), 0);
    ck_assert_int_eq(clgc_thread_in_region(), 0);
    boehm_collect(2);
    for (unsigned i = 1; i < BOEHM_LEVELS; i += 2)
        for (unsigned k = 0; k < BOEHM_WORDS; k++)
            ck_assert_uint_eq(boehm_nest_roots[i][k], i * 1000u + k);
    sem_destroy(&c.request);
    sem_destroy(&c.reply);
}
END_TEST

/* ------------------------------------------------------------------------
 * CLGC_RUNTIME_SKIP_NONBLOCKING, seen from inside the calls by the stub
 * ICD's probe.
 */

/* The region depths that a non-blocking command (clGetDeviceInfo) and a
 * blocking one (clFinish) run at on the calling thread. */
static void
boehm_policy_depths(int *nonblocking, int *blocking)
{
    void *device = boehm_stub->object(boehm_stub_platform, 0);
    void *queue = boehm_stub->object(boehm_stub_platform, 1);
    size_t size = 0;
    cl_int r;

    ck_assert_uint_eq(clgc_command_find("clGetDeviceInfo")->flags &
                          CLGC_COMMAND_MAY_BLOCK,
                      0);
    ck_assert_uint_ne(
        clgc_command_find("clFinish")->flags & CLGC_COMMAND_MAY_BLOCK, 0);
    boehm_stub->reset();
    r = clgc_clGetDeviceInfo(device, CL_DEVICE_NAME, 0, NULL, &size);
    *nonblocking = boehm_stub_depth(device, r);
    boehm_stub->reset();
    r = clgc_clFinish(queue);
    *blocking = boehm_stub_depth(queue, r);
}

START_TEST(test_skip_nonblocking_skips_only_nonblocking)
{
    int nonblocking = -1, blocking = -1;

    boehm_setup(CLGC_RUNTIME_SKIP_NONBLOCKING);
    ck_assert_uint_eq(clgc_runtime_current()->flags,
                      CLGC_RUNTIME_SKIP_NONBLOCKING);
    boehm_stub_open();
    boehm_policy_depths(&nonblocking, &blocking);
    ck_assert_int_eq(nonblocking, 0);
    ck_assert_int_eq(blocking, 1);
    boehm_stub->probe = NULL;
}
END_TEST

START_TEST(test_without_flag_every_command_in_region)
{
    int nonblocking = -1, blocking = -1;

    boehm_setup(0);
    boehm_stub_open();
    boehm_policy_depths(&nonblocking, &blocking);
    ck_assert_int_eq(nonblocking, 1);
    ck_assert_int_eq(blocking, 1);
    boehm_stub->probe = NULL;
}
END_TEST

/* ------------------------------------------------------------------------
 * Installing at the wrong time.
 */

START_TEST(test_install_twice_is_already)
{
    boehm_setup(CLGC_RUNTIME_SKIP_NONBLOCKING);
    ck_assert_int_eq(clgc_boehm_install(0), CLGC_EALREADY);
    /* The first install stays in force, flags and all. */
    ck_assert_str_eq(clgc_runtime_current()->name, "boehm");
    ck_assert_uint_eq(clgc_runtime_current()->flags,
                      CLGC_RUNTIME_SKIP_NONBLOCKING);
}
END_TEST

START_TEST(test_install_after_use_is_in_use)
{
    cl_uint n = 0;

    GC_INIT();
    /* A first wrapper call fixes the no-op runtime for good. */
    ck_assert_int_eq(clgc_clGetPlatformIDs(0, NULL, &n), CL_SUCCESS);
    ck_assert_uint_ge(n, 1);
    ck_assert_int_eq(clgc_boehm_install(0), CLGC_EINUSE);
    ck_assert_str_eq(clgc_runtime_current()->name, "none");
}
END_TEST

/* ------------------------------------------------------------------------ */

Suite *
clgc_make_boehm_regions_suite(void)
{
    Suite *s = suite_create("boehm");

    /* PoCL's first build in a process compiles with LLVM: slow under
     * ASan. */
    boehm_add(s, "wait in a region",
              test_wait_in_safe_region_is_never_suspended);
    boehm_add(s, "wait outside", test_wait_outside_region_is_suspended);
    boehm_add(s, "build in a wrapper",
              test_build_in_wrapper_is_never_suspended);
    boehm_add(s, "build outside", test_build_outside_region_is_suspended);
    boehm_add(s, "poll in a region",
              test_poll_in_safe_region_is_not_interrupted);
    boehm_add(s, "poll outside", test_poll_outside_region_is_interrupted);
    boehm_add(s, "nanosleep in a region",
              test_nanosleep_in_safe_region_is_not_interrupted);
    boehm_add(s, "nanosleep outside",
              test_nanosleep_outside_region_is_interrupted);
    boehm_add(s, "nesting", test_regions_nest_three_deep);
    boehm_add(s, "skip nonblocking",
              test_skip_nonblocking_skips_only_nonblocking);
    boehm_add(s, "no skip", test_without_flag_every_command_in_region);
    boehm_add(s, "install twice", test_install_twice_is_already);
    boehm_add(s, "install after use", test_install_after_use_is_in_use);
    return s;
}
