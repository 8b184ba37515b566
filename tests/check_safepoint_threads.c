/* check_safepoint, threads: mutators, a collector, and threads waiting in
 * and completing user events through clgc's wrappers, all at once (suite
 * "threads", which the TSan build runs). */

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "safepoint.h"

/* Test e: mutators, a collector and wrapper calls at once. */
#define MUTATORS 2
#define ALLOCS 3000
#define COLLECTIONS 1000
#define EVENTS 40

struct world {
    cl_platform_id platform;
    cl_event events[EVENTS];
    atomic_ulong allocs;
    atomic_int failures, stopped_allocs, collector_done;
};

/* Let the other threads run a little. A short sleep, not sched_yield():
 * on a loaded machine each yield can hand a whole time slice to another
 * process, and the test's thousands of them then take minutes. */
static void
give_way(void)
{
    struct timespec ts = {0, 20000};

    nanosleep(&ts, NULL);
}

/* Holds the world stopped a while, giving the other threads the CPU: a
 * thread that should be stopped but is not allocates meanwhile. */
static void
world_on_stopped(void *arg)
{
    struct world *w = arg;
    unsigned long before = vm_stats().allocated;

    for (int i = 0; i < 5; i++)
        give_way();
    if (vm_stats().allocated != before)
        atomic_fetch_add(&w->stopped_allocs, 1);
}

/* What root slot `slot` of thread `id` holds after its allocations
 * 0 .. n-1: allocation k went into slot k % REFVM_ROOTS. */
static long
churn_held(long id, long n, int slot)
{
    if (n <= slot)
        return -1;
    return id * 1000000 + (n - 1) - (n - 1 - slot) % REFVM_ROOTS;
}

/* Allocation number i of thread id. Before it, the thread reads its roots
 * for a while without polling, as VM code runs between safepoints: each
 * object must have survived every collection with its value intact, and
 * each read checks that no collection is running (refvm_load). */
static void
churn(struct world *w, long id, long i)
{
    for (int k = 0; k < 32 * REFVM_ROOTS; k++)
        if (refvm_load(k % REFVM_ROOTS) != churn_held(id, i, k % REFVM_ROOTS))
            atomic_fetch_add(&w->failures, 1);
    refvm_alloc((int)(i % REFVM_ROOTS), id * 1000000 + i);
    atomic_fetch_add(&w->allocs, 1);
}

static void *
mutator(void *arg)
{
    struct world *w = arg;
    static atomic_long ids = 1;
    long id = atomic_fetch_add(&ids, 1);

    refvm_register();
    /* Until the collector is done, so that every collection meets them. */
    for (long i = 0; i < ALLOCS || !atomic_load(&w->collector_done); i++) {
        churn(w, id, i);
        if (i % 64 == 0 && platform_name(w->platform) != CL_SUCCESS)
            atomic_fetch_add(&w->failures, 1);
        refvm_poll();
    }
    refvm_unregister();
    return NULL;
}

static void *
collector(void *arg)
{
    struct world *w = arg;

    refvm_register();
    for (long i = 0; i < COLLECTIONS; i++) {
        unsigned long allocs = atomic_load(&w->allocs);

        /* Let the others run between collections: each collection then
         * meets threads in the middle of their work. */
        churn(w, 0, i);
        while (atomic_load(&w->allocs) < allocs + 2 * MUTATORS + 1) {
            refvm_poll();
            give_way();
        }
        refvm_collect();
    }
    atomic_store(&w->collector_done, 1);
    refvm_unregister();
    return NULL;
}

/* Waits in a wrapper for each user event in turn, which completer() sets. */
static void *
waiter(void *arg)
{
    struct world *w = arg;

    refvm_register();
    for (long i = 0; i < EVENTS; i++) {
        churn(w, 100, i);
        if (clgc_clWaitForEvents(1, &w->events[i]) != CL_SUCCESS)
            atomic_fetch_add(&w->failures, 1);
    }
    refvm_unregister();
    return NULL;
}

static void *
completer(void *arg)
{
    struct world *w = arg;

    refvm_register();
    for (long i = 0; i < EVENTS; i++) {
        churn(w, 200, i);
        if (clgc_clSetUserEventStatus(w->events[i], CL_COMPLETE) != CL_SUCCESS)
            atomic_fetch_add(&w->failures, 1);
        refvm_poll();
    }
    refvm_unregister();
    return NULL;
}

START_TEST(mutators_collector_and_wrappers_at_once)
{
    static void *(*const roles[])(void *) = {mutator, mutator, collector,
                                             waiter, completer};
    enum { NROLES = sizeof(roles) / sizeof(roles[0]) };
    struct refvm_stats before, after;
    struct world w;
    struct pocl cl;
    pthread_t t[NROLES];
    unsigned long allocs;
    int failures, stopped_allocs;
    cl_int err;

    memset(&w, 0, sizeof(w));
    vm_setup();
    pocl_open(&cl);
    w.platform = test_platform(POCL);
    for (int i = 0; i < EVENTS; i++) {
        w.events[i] = clCreateUserEvent(cl.context, &err);
        ck_assert_int_eq(err, CL_SUCCESS);
    }
    before = vm_stats();
    refvm_on_stopped(world_on_stopped, &w);
    for (int i = 0; i < NROLES; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, roles[i], &w), 0);
    for (int i = 0; i < NROLES; i++)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    refvm_on_stopped(NULL, NULL);
    /* Every thread has unregistered: all that is left is garbage. */
    refvm_collect();
    after = vm_stats();
    allocs = atomic_load(&w.allocs);
    for (int i = 0; i < EVENTS; i++)
        clReleaseEvent(w.events[i]);
    clReleaseContext(cl.context);

    failures = atomic_load(&w.failures);
    stopped_allocs = atomic_load(&w.stopped_allocs);
    ck_assert_int_eq(failures, 0);
    ck_assert_int_eq(stopped_allocs, 0);
    ck_assert_uint_eq(after.violations, 0);
    ck_assert_uint_eq(after.collections - before.collections, COLLECTIONS + 1);
    ck_assert_uint_ge(after.allocated - before.allocated,
                      MUTATORS * ALLOCS + COLLECTIONS + 2 * EVENTS);
    ck_assert_uint_eq(after.allocated - before.allocated, allocs);
    ck_assert_uint_eq(after.freed, after.allocated);
    ck_assert_uint_eq(after.threads, 0);
}
END_TEST

Suite *
clgc_make_safepoint_threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = test_case("threads");

    tcase_set_tags(tc, TEST_TAG_THREADED);
    tcase_add_test(tc, mutators_collector_and_wrappers_at_once);
    suite_add_tcase(s, tc);
    return s;
}
