/* check_safepoint, pocl callback: a callback clgc_clSetEventCallback
 * delivers on PoCL's own thread parks for collections while it runs and
 * delays none once it has returned (suite "threads", which the TSan build
 * runs). */

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "safepoint.h"

/* Test f: a callback clgc_clSetEventCallback delivers on PoCL's own
 * thread. clgc attaches that thread to the VM, so while the callback runs
 * it is a mutator like any other and must stop at its safepoints for
 * every collection; once it has returned, the thread is back in PoCL,
 * where it may block for as long as it likes, and no collection may wait
 * for it.
 *
 * Three callbacks on one kernel's completion event, which PoCL calls in
 * the order they were set, one after the other, on the thread that
 * completes the kernel: a long one through the wrapper, which allocates
 * and polls while this thread collects; a short one through the wrapper,
 * which finds the thread attached already; and a raw one, which holds
 * the thread in PoCL (outside any VM code) while this thread collects
 * again. The kernel waits for a user event, so the callbacks are all set
 * before it can complete. */
#define CB_COLLECTIONS 16
#define CB_IDLE_COLLECTIONS 8
#define CB_VALUE 4242

static const char *nop_src = "__kernel void nop(void)\n"
                             "{\n"
                             "}\n";

/* What a callback saw of its thread on entry. */
struct cb_seen {
    int step; /* its place among the callbacks, from 1 */
    pthread_t thread;
    int attached, registered, in_region, word;
};

struct pocl_cb {
    sem_t entered, idle, release;
    atomic_int steps, inside, collector_done;
    atomic_ulong stopped_inside, stopped_running;
    const int *_Atomic word; /* the callback thread's state word */
    struct cb_seen seen[3];
    long bad_loads, carried;
    struct refvm_stats before, during, idle_before, idle_after, after;
};

static void
cb_observe(struct pocl_cb *c, struct cb_seen *s)
{
    s->step = atomic_fetch_add(&c->steps, 1) + 1;
    s->thread = pthread_self();
    s->attached = clgc_thread_attached();
    s->registered = refvm_registered();
    s->in_region = clgc_thread_in_region();
    s->word = word_of(refvm_state_word());
}

/* The long callback: VM code, with a root of its own, polling as VM code
 * does until this thread's collections are over. */
static void CL_CALLBACK
cb_mutator(cl_event event, cl_int status, void *arg)
{
    struct pocl_cb *c = arg;

    (void)event;
    (void)status;
    cb_observe(c, &c->seen[0]);
    atomic_store(&c->word, refvm_state_word());
    refvm_alloc(0, CB_VALUE);
    atomic_store(&c->inside, 1);
    sem_post(&c->entered);
    while (!atomic_load(&c->collector_done)) {
        if (refvm_load(0) != CB_VALUE)
            c->bad_loads++;
        refvm_poll();
    }
    atomic_store(&c->inside, 0);
}

/* The short callback: the thread is the VM's still, roots and all. */
static void CL_CALLBACK
cb_visitor(cl_event event, cl_int status, void *arg)
{
    struct pocl_cb *c = arg;

    (void)event;
    (void)status;
    cb_observe(c, &c->seen[1]);
    c->carried = refvm_load(0);
}

/* The raw callback: PoCL's thread, attached, in PoCL and not in VM code.
 * It stays here until the test has collected, if it is the last of the
 * three (else the order is wrong, which the test reports). */
static void CL_CALLBACK
cb_idle(cl_event event, cl_int status, void *arg)
{
    struct pocl_cb *c = arg;

    (void)event;
    (void)status;
    cb_observe(c, &c->seen[2]);
    sem_post(&c->idle);
    if (c->seen[2].step == 3)
        while (sem_wait(&c->release) != 0)
            continue;
}

/* Every collection, with the world stopped: was the long callback inside
 * its loop, and what did its word say? */
static void
cb_on_stopped(void *arg)
{
    struct pocl_cb *c = arg;
    const int *word = atomic_load(&c->word);

    if (atomic_load(&c->inside))
        atomic_fetch_add(&c->stopped_inside, 1);
    if (word != NULL && word_of(word) != CLGC_STATE_SAFE)
        atomic_fetch_add(&c->stopped_running, 1);
}

static void *
cb_sem_wait(void *sem)
{
    while (sem_wait(sem) != 0)
        continue;
    return NULL;
}

/* A VM thread waits in a safe region, as it would in any blocking call. */
static void
vm_sem_wait(sem_t *sem)
{
    clgc_call_safe(cb_sem_wait, sem);
}

static void
pocl_cb_run(struct pocl_cb *c)
{
    size_t one = 1;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_event gate, done;
    struct pocl cl;
    cl_int err;

    memset(c, 0, sizeof(*c));
    ck_assert_int_eq(sem_init(&c->entered, 0, 0), 0);
    ck_assert_int_eq(sem_init(&c->idle, 0, 0), 0);
    ck_assert_int_eq(sem_init(&c->release, 0, 0), 0);
    vm_setup();
    pocl_open(&cl);
    queue = test_queue_create(cl.context, cl.device);
    program = clCreateProgramWithSource(cl.context, 1, &nop_src, NULL, &err);
    test_assert_built(clBuildProgram(program, 1, &cl.device, "", NULL, NULL),
                      program, cl.device);
    kernel = clCreateKernel(program, "nop", &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    gate = clCreateUserEvent(cl.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &one, NULL,
                                            1, &gate, &done),
                     CL_SUCCESS);
    ck_assert_int_eq(clFlush(queue), CL_SUCCESS);

    /* This thread is the VM's collector from here on. */
    refvm_register();
    c->before = vm_stats();
    refvm_on_stopped(cb_on_stopped, c);
    ck_assert_int_eq(clgc_clSetEventCallback(done, CL_COMPLETE, cb_mutator, c),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetEventCallback(done, CL_COMPLETE, cb_visitor, c),
                     CL_SUCCESS);
    ck_assert_int_eq(clSetEventCallback(done, CL_COMPLETE, cb_idle, c),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);

    vm_sem_wait(&c->entered);
    /* The long callback loops until these are over: each one meets it. */
    for (int i = 0; i < CB_COLLECTIONS; i++)
        refvm_collect();
    c->during = vm_stats();
    atomic_store(&c->collector_done, 1);

    vm_sem_wait(&c->idle);
    /* Had clgc left the word RUNNING, the collections below would wait
     * for PoCL's thread for ever: fail now instead. */
    ck_assert_int_eq(c->seen[2].word, CLGC_STATE_SAFE);
    c->idle_before = vm_stats();
    for (int i = 0; i < CB_IDLE_COLLECTIONS; i++)
        refvm_collect();
    c->idle_after = vm_stats();
    sem_post(&c->release);

    ck_assert_int_eq(clgc_clWaitForEvents(1, &done), CL_SUCCESS);
    /* Wherever PoCL's thread is now, it runs no VM code. */
    for (int i = 0; i < CB_IDLE_COLLECTIONS; i++)
        refvm_collect();
    c->after = vm_stats();
    refvm_on_stopped(NULL, NULL);
    refvm_unregister();
    test_event_let_go(done);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(cl.context);
    sem_destroy(&c->entered);
    sem_destroy(&c->idle);
    sem_destroy(&c->release);

    /* The three callbacks ran in order, on one thread of PoCL's. */
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(c->seen[i].step, i + 1);
        ck_assert(pthread_equal(c->seen[i].thread, c->seen[0].thread));
        ck_assert_int_eq(c->seen[i].attached, 1);
        ck_assert_int_eq(c->seen[i].registered, 1);
        ck_assert_int_eq(c->seen[i].in_region, 0);
    }
    ck_assert_msg(!pthread_equal(c->seen[0].thread, pthread_self()),
                  "PoCL ran the completion callbacks on the test's thread");
    ck_assert_uint_eq(vm_stats().violations, 0);
}

START_TEST(callback_on_pocl_thread_parks_for_collections)
{
    struct pocl_cb c;

    pocl_cb_run(&c);
    ck_assert_int_eq(c.seen[0].word, CLGC_STATE_RUNNING);
    /* Every collection stopped the world while the callback was inside
     * its loop, with its thread parked, and its object survived them. */
    ck_assert_uint_eq(c.during.collections - c.before.collections,
                      CB_COLLECTIONS);
    ck_assert_uint_eq(atomic_load(&c.stopped_inside), CB_COLLECTIONS);
    ck_assert_uint_eq(atomic_load(&c.stopped_running), 0);
    ck_assert_uint_ge(c.during.parks - c.before.parks, 1);
    ck_assert_int_eq(c.bad_loads, 0);
    /* Attached once, and still the VM's in the next callback. */
    ck_assert_uint_eq(c.idle_after.attaches - c.before.attaches, 1);
    ck_assert_uint_eq(c.idle_after.detaches - c.before.detaches, 0);
    ck_assert_int_eq(c.seen[1].word, CLGC_STATE_RUNNING);
    ck_assert_int_eq(c.carried, CB_VALUE);
}
END_TEST

START_TEST(pocl_thread_after_callback_never_delays_collections)
{
    struct pocl_cb c;

    pocl_cb_run(&c);
    /* Back in PoCL, still attached, but in native code. */
    ck_assert_int_eq(c.seen[2].word, CLGC_STATE_SAFE);
    ck_assert_uint_eq(c.idle_after.threads, c.before.threads + 1);
    ck_assert_uint_eq(c.idle_after.collections - c.idle_before.collections,
                      CB_IDLE_COLLECTIONS);
    ck_assert_uint_eq(c.idle_after.stalls, c.idle_before.stalls);
    /* And once its callbacks are all over. */
    ck_assert_uint_eq(c.after.collections - c.idle_after.collections,
                      CB_IDLE_COLLECTIONS);
    ck_assert_uint_eq(c.after.stalls, c.idle_before.stalls);
    /* Each collection found the thread's word SAFE. */
    ck_assert_uint_eq(atomic_load(&c.stopped_running), 0);
}
END_TEST

Suite *
clgc_make_safepoint_callbacks_suite(void)
{
    Suite *s = suite_create("threads");
    /* After the "threads" case (check_safepoint_threads.c), which counts
     * every registered thread: the PoCL thread these attach stays
     * attached until it exits. */
    TCase *tc = test_case("pocl callback");

    tcase_set_tags(tc, TEST_TAG_THREADED);
    test_add_pocl_test(tc, callback_on_pocl_thread_parks_for_collections,
                       "PoCL calls one event's callbacks in order on one "
                       "thread");
    test_add_pocl_test(tc, pocl_thread_after_callback_never_delays_collections,
                       "PoCL calls one event's callbacks in order on one "
                       "thread");
    suite_add_tcase(s, tc);
    return s;
}
