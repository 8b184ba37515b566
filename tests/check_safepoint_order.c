/* check_safepoint, order: a collection completes while a thread builds
 * in a clgc_cl* wrapper and waits for one in the raw call; leaving a
 * region during a collection parks the thread exactly once; a ticker
 * thread collects during a cooperative wait and not during a raw one. */

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "safepoint.h"
#include "slow.h"

/* A global clock of events: a test compares the ticks two threads took. */
static atomic_int clock_now;

static int
tick(void)
{
    return atomic_fetch_add(&clock_now, 1) + 1;
}

/* Test a: thread A builds a program while thread B collects. */
struct build_race {
    struct pocl cl;
    int wrapped; /* A calls clgc_clBuildProgram, else clBuildProgram */
    atomic_int about_to_build;
    struct refvm_stats before;
    cl_int built;
    int returned, collected; /* ticks */
    int notify_calls, notify_in_region, notify_word;
    pthread_t a, notify_thread;
};

static void
race_on_stopped(void *arg)
{
    struct build_race *r = arg;

    r->collected = tick();
}

/* Waits until B's collection is done or B is waiting for A, so that B's
 * request always falls inside the build, however slow B is to start. */
static void *
race_hold(void *arg)
{
    struct build_race *r = arg;
    struct refvm_stats s = vm_stats();

    while (s.collections == r->before.collections &&
           s.stalls == r->before.stalls) {
        sched_yield();
        s = vm_stats();
    }
    return NULL;
}

/* PoCL calls it on A's thread before the build returns, and it holds the
 * build open. Through the wrapper it runs with the VM active (clgc's
 * trampoline leaves the wrapper's region for it), so it holds the build in
 * a safe region of its own, as a callback that blocks should. */
static void CL_CALLBACK
race_notify(cl_program program, void *arg)
{
    struct build_race *r = arg;

    r->notify_calls++;
    r->notify_thread = pthread_self();
    r->notify_in_region = clgc_thread_in_region();
    r->notify_word = word_of(refvm_state_word());
    if (r->wrapped)
        clgc_call_safe(race_hold, r);
    else
        race_hold(r);
}

static void *
race_builder(void *arg)
{
    struct build_race *r = arg;
    char src[1024];
    const char *p = src;
    cl_program program;
    cl_int err;

    refvm_register();
    slow_source(src, sizeof(src), 5);
    program = clCreateProgramWithSource(r->cl.context, 1, &p, NULL, &err);
    atomic_store(&r->about_to_build, 1);
    if (r->wrapped)
        r->built =
            clgc_clBuildProgram(program, 1, &r->cl.device, "", race_notify, r);
    else
        r->built =
            clBuildProgram(program, 1, &r->cl.device, "", race_notify, r);
    r->returned = tick();
    refvm_poll(); /* where a raw-call VM thread lets B's collection run */
    clReleaseProgram(program);
    refvm_unregister();
    return NULL;
}

static void *
race_collector(void *arg)
{
    struct build_race *r = arg;

    refvm_register();
    while (!atomic_load(&r->about_to_build)) {
        refvm_poll();
        sched_yield();
    }
    refvm_collect();
    refvm_unregister();
    return NULL;
}

static void
build_race_run(struct build_race *r, int wrapped)
{
    pthread_t b;

    memset(r, 0, sizeof(*r));
    vm_setup();
    pocl_open(&r->cl);
    r->wrapped = wrapped;
    r->before = vm_stats();
    refvm_on_stopped(race_on_stopped, r);
    ck_assert_int_eq(pthread_create(&r->a, NULL, race_builder, r), 0);
    ck_assert_int_eq(pthread_create(&b, NULL, race_collector, r), 0);
    ck_assert_int_eq(pthread_join(r->a, NULL), 0);
    ck_assert_int_eq(pthread_join(b, NULL), 0);
    refvm_on_stopped(NULL, NULL);
    clReleaseContext(r->cl.context);

    ck_assert_int_eq(r->built, CL_SUCCESS);
    ck_assert_int_eq(r->notify_calls, 1);
    ck_assert(pthread_equal(r->notify_thread, r->a));
    ck_assert_uint_eq(vm_stats().collections - r->before.collections, 1);
    ck_assert_uint_eq(vm_stats().violations, 0);
}

START_TEST(collection_completes_during_wrapped_build)
{
    struct build_race r;

    build_race_run(&r, 1);
    ck_assert_int_lt(r.collected, r.returned);
    ck_assert_int_eq(r.notify_in_region, 0);
    ck_assert_int_eq(r.notify_word, CLGC_STATE_RUNNING);
}
END_TEST

START_TEST(collection_waits_for_raw_build)
{
    struct build_race r;

    build_race_run(&r, 0);
    ck_assert_int_lt(r.returned, r.collected);
    ck_assert_int_eq(r.notify_in_region, 0);
    ck_assert_int_eq(r.notify_word, CLGC_STATE_RUNNING);
    ck_assert_uint_ge(vm_stats().stalls - r.before.stalls, 1);
}
END_TEST

/* Test b: A leaves a region while B's collection is in progress. */
struct park {
    sem_t inside, go;
    const int *a_word;
    struct refvm_stats before;
    int a_word_parked, collected, resumed; /* ticks but the word */
};

static void *
park_region(void *arg)
{
    struct park *k = arg;

    sem_post(&k->inside);
    sem_wait(&k->go);
    return NULL;
}

static void *
park_mutator(void *arg)
{
    struct park *k = arg;

    refvm_register();
    k->a_word = refvm_state_word();
    clgc_call_safe(park_region, k);
    k->resumed = tick();
    refvm_unregister();
    return NULL;
}

/* In B's collection, with the world stopped: let A leave its region, and
 * end the collection only once A has parked. */
static void
park_on_stopped(void *arg)
{
    struct park *k = arg;

    sem_post(&k->go);
    while (vm_stats().parks == k->before.parks)
        sched_yield();
    k->a_word_parked = word_of(k->a_word);
    k->collected = tick();
}

START_TEST(leaving_during_collection_parks_once)
{
    struct refvm_stats after;
    struct park k;
    pthread_t a;

    memset(&k, 0, sizeof(k));
    vm_setup();
    ck_assert_int_eq(sem_init(&k.inside, 0, 0), 0);
    ck_assert_int_eq(sem_init(&k.go, 0, 0), 0);
    ck_assert_int_eq(pthread_create(&a, NULL, park_mutator, &k), 0);
    sem_wait(&k.inside);
    /* B is this thread, which the VM does not know: it only collects. */
    k.before = vm_stats();
    refvm_on_stopped(park_on_stopped, &k);
    refvm_collect();
    refvm_on_stopped(NULL, NULL);
    ck_assert_int_eq(pthread_join(a, NULL), 0);
    after = vm_stats();

    ck_assert_uint_eq(after.safepoint_calls - k.before.safepoint_calls, 1);
    ck_assert_uint_eq(after.parks - k.before.parks, 1);
    ck_assert_uint_eq(after.collections - k.before.collections, 1);
    ck_assert_int_eq(k.a_word_parked, CLGC_STATE_SAFE);
    ck_assert_int_lt(k.collected, k.resumed);
    ck_assert_uint_eq(after.violations, 0);
    sem_destroy(&k.inside);
    sem_destroy(&k.go);
}
END_TEST

/* The ticker: while VM thread A waits for a kernel, VM thread B collects
 * and counts its collections until A is done. Through
 * clgc_wait_for_events A sleeps in a safe region and B keeps ticking; in
 * a raw clWaitForEvents, outside any region, A reaches no safepoint until
 * the kernel is over, and B's first collection waits for all of it. The
 * kernel waits for a gate, opened by B after TICKS collections when A
 * cooperates, else by a third thread once B's collection is stalled on
 * A: what is counted does not depend on how long the kernel runs. */

#define TICKS 3

struct ticker {
    atomic_int waiting, done;
    int cooperative;
    cl_event gate;
    unsigned long ticks;
    struct refvm_stats before; /* taken before B starts */
};

static void *
ticker_run(void *arg)
{
    struct ticker *t = arg;

    refvm_register();
    while (!atomic_load(&t->waiting))
        refvm_poll();
    while (!atomic_load(&t->done)) {
        refvm_collect();
        if (++t->ticks == TICKS && t->cooperative)
            ck_assert_int_eq(clSetUserEventStatus(t->gate, CL_COMPLETE),
                             CL_SUCCESS);
    }
    refvm_unregister();
    return NULL;
}

/* Opens the gate once a collection has stalled on a RUNNING thread: B's,
 * on A in its raw wait. The count it compares with was taken before B
 * started: this thread may first run after B has stalled. */
static void *
open_when_stalled(void *arg)
{
    struct ticker *t = arg;
    struct test_await w = test_await_start();
    struct refvm_stats now;

    for (refvm_stats(&now); now.stalls == t->before.stalls; refvm_stats(&now))
        test_await_nap(&w, "B's collection to stall on A");
    ck_assert_int_eq(clSetUserEventStatus(t->gate, CL_COMPLETE), CL_SUCCESS);
    return NULL;
}

static unsigned long
ticks_during_wait(int cooperative)
{
    struct ticker t = {.cooperative = cooperative};
    size_t global = 1024;
    int n = 1000;
    struct pocl p;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_mem buf;
    cl_event done;
    pthread_t b, opener;
    cl_int err;

    pocl_open(&p);
    queue = test_queue_create(p.context, p.device);
    program =
        clCreateProgramWithSource(p.context, 1, &test_spin_src, NULL, &err);
    test_assert_built(clBuildProgram(program, 1, &p.device, "", NULL, NULL),
                      program, p.device);
    kernel = clCreateKernel(program, "spin", &err);
    buf = clCreateBuffer(p.context, CL_MEM_READ_WRITE, global * sizeof(float),
                         NULL, &err);
    ck_assert_int_eq(clSetKernelArg(kernel, 0, sizeof(buf), &buf), 0);
    ck_assert_int_eq(clSetKernelArg(kernel, 1, sizeof(n), &n), 0);
    t.gate = clCreateUserEvent(p.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);

    refvm_register();
    ck_assert_int_eq(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global,
                                            NULL, 1, &t.gate, &done),
                     CL_SUCCESS);
    ck_assert_int_eq(clFlush(queue), CL_SUCCESS);
    refvm_stats(&t.before);
    if (!cooperative)
        ck_assert_int_eq(pthread_create(&opener, NULL, open_when_stalled, &t),
                         0);
    ck_assert_int_eq(pthread_create(&b, NULL, ticker_run, &t), 0);
    atomic_store(&t.waiting, 1);
    if (cooperative)
        ck_assert_int_eq(clgc_wait_for_events(1, &done), CL_SUCCESS);
    else
        ck_assert_int_eq(clWaitForEvents(1, &done), CL_SUCCESS);
    atomic_store(&t.done, 1);
    refvm_poll(); /* where the raw waiter lets B's collection through */
    refvm_unregister();
    ck_assert_int_eq(pthread_join(b, NULL), 0);
    if (!cooperative)
        ck_assert_int_eq(pthread_join(opener, NULL), 0);

    clReleaseEvent(done);
    clReleaseEvent(t.gate);
    clReleaseMemObject(buf);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(p.context);
    return t.ticks;
}

START_TEST(ticker_runs_during_cooperative_wait)
{
    unsigned long cooperative, raw;

    vm_setup();
    cooperative = ticks_during_wait(1);
    raw = ticks_during_wait(0);
    ck_assert_uint_ge(cooperative, TICKS);
    ck_assert_uint_le(raw, 1);
}
END_TEST

Suite *
clgc_make_safepoint_order_suite(void)
{
    Suite *s = suite_create("safepoint");
    TCase *tc = test_case("order");

    test_add_pocl_test(tc, collection_completes_during_wrapped_build,
                       "PoCL builds on the calling thread");
    test_add_pocl_test(tc, collection_waits_for_raw_build,
                       "PoCL builds on the calling thread");
    tcase_add_test(tc, leaving_during_collection_parks_once);
    test_add_premised_test(tc, ticker_runs_during_cooperative_wait,
                           TEST_DRIVER_THREADS,
                           "the ticker runs while the driver runs the "
                           "kernel");
    suite_add_tcase(s, tc);
    return s;
}
