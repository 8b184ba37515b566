/* check_boehm, threads: threads bdwgc does not know (PoCL's, plain
 * pthreads) enter it through clgc_call_active or a clgc closure, once per
 * thread, and leave it when they exit; clgc_thread_attach registers only
 * those; a wrapper called on such a thread runs outside any region and
 * registers nothing. */

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "boehm.h"

/* ------------------------------------------------------------------------
 * Threads bdwgc does not know enter it through clgc_call_active: once
 * per thread, and they leave it when they exit.
 */

/* The objects the foreign threads allocate: reachable from these static
 * roots only, which bdwgc scans. The links are cleared by bdwgc if it
 * ever finds an object unreachable. */
static unsigned *boehm_roots[3];
static void *boehm_links[3];

/* What a foreign thread saw on entering clgc_call_active, and inside. */
struct boehm_seen {
    unsigned index; /* which root it fills */
    pthread_t thread;
    int registered_before, attached_before;
    int call_result;
    int registered_inside, attached_inside, in_region_inside;
    unsigned depth_inside;
    int link_result;
};

/* Runs through clgc_call_active on a foreign thread: bdwgc must know the
 * thread now, so it may allocate. */
static void *
boehm_allocate(void *arg)
{
    struct boehm_seen *seen = arg;
    unsigned *obj;

    seen->registered_inside = GC_thread_is_registered();
    seen->attached_inside = clgc_thread_attached();
    seen->in_region_inside = clgc_thread_in_region();
    seen->depth_inside = clgc_thread_region_depth();
    obj = boehm_new_object(seen->index);
    boehm_roots[seen->index] = obj;
    seen->link_result = boehm_link(&boehm_links[seen->index], obj);
    return obj;
}

static void
boehm_enter_active(struct boehm_seen *seen)
{
    seen->thread = pthread_self();
    seen->registered_before = GC_thread_is_registered();
    seen->attached_before = clgc_thread_attached();
    seen->call_result = clgc_call_active(boehm_allocate, seen, NULL);
}

/* A foreign thread's first entry: registered by it, allocated. */
static void
boehm_check_first_entry(const struct boehm_seen *seen)
{
    ck_assert_int_eq(seen->registered_before, 0);
    ck_assert_int_eq(seen->attached_before, 0);
    ck_assert_int_eq(seen->call_result, CLGC_OK);
    ck_assert_int_eq(seen->registered_inside, 1);
    ck_assert_int_eq(seen->attached_inside, 1);
    ck_assert_int_eq(seen->in_region_inside, 0);
    ck_assert_uint_eq(seen->depth_inside, 0);
    ck_assert_int_eq(seen->link_result, GC_SUCCESS);
}

/* Two callbacks on one kernel's completion event. */
struct boehm_callbacks {
    atomic_uint started;
    struct boehm_seen seen[2];
    sem_t done;
};

static void CL_CALLBACK
boehm_on_complete(cl_event event, cl_int status, void *data)
{
    struct boehm_callbacks *cbs = data;
    unsigned i = atomic_fetch_add(&cbs->started, 1);

    if (i < 2)
        boehm_enter_active(&cbs->seen[i]);
    sem_post(&cbs->done);
}

/* Enqueue the kernel behind a user event, hang the callback on its event
 * twice, then release it: the event cannot complete before the callbacks
 * are set, so PoCL runs them where it completes kernels, not inline. The
 * callback is registered raw: it enters bdwgc by itself (through
 * clgc_call_active, or as a closure); clgc_clSetEventCallback's
 * trampoline would do that for it (check_boehm_callbacks.c shows that). */
static void
boehm_run_kernel(struct boehm_cl *cl, cl_kernel kernel,
                 void(CL_CALLBACK *notify)(cl_event, cl_int, void *),
                 struct boehm_callbacks *cbs)
{
    size_t one = 1;
    cl_event gate, done;
    cl_int err;

    gate = clgc_clCreateUserEvent(cl->context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clgc_clEnqueueNDRangeKernel(cl->queue, kernel, 1, NULL,
                                                 &one, NULL, 1, &gate, &done),
                     CL_SUCCESS);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(clSetEventCallback(done, CL_COMPLETE, notify, cbs),
                         CL_SUCCESS);
    ck_assert_int_eq(clgc_clFlush(cl->queue), CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    boehm_sem_wait(&cbs->done);
    boehm_sem_wait(&cbs->done);
    ck_assert_int_eq(clgc_clWaitForEvents(1, &done), CL_SUCCESS);
    test_event_let_go(done);
    ck_assert_int_eq(clgc_clReleaseEvent(done), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseEvent(gate), CL_SUCCESS);
}

START_TEST(test_pocl_callback_thread_is_registered_once)
{
    struct boehm_callbacks cbs = {0};
    struct boehm_cl cl;
    cl_program program;
    cl_kernel kernel;

    boehm_setup(0);
    boehm_cl_open(&cl);
    program = boehm_program(&cl);
    kernel = boehm_nop_kernel(&cl, program);
    cbs.seen[0].index = 0;
    cbs.seen[1].index = 1;
    ck_assert_int_eq(sem_init(&cbs.done, 0, 0), 0);
    boehm_run_kernel(&cl, kernel, boehm_on_complete, &cbs);

    ck_assert_uint_eq(atomic_load(&cbs.started), 2);
    ck_assert_msg(!pthread_equal(cbs.seen[0].thread, pthread_self()),
                  "PoCL ran the completion callback on the test's thread");
    ck_assert_msg(pthread_equal(cbs.seen[1].thread, cbs.seen[0].thread),
                  "PoCL ran the two callbacks on different threads");
    boehm_check_first_entry(&cbs.seen[0]);
    /* The second callback found the thread attached and registered by the
     * first: clgc did not register it again. */
    ck_assert_int_eq(cbs.seen[1].registered_before, 1);
    ck_assert_int_eq(cbs.seen[1].attached_before, 1);
    ck_assert_int_eq(cbs.seen[1].call_result, CLGC_OK);
    ck_assert_int_eq(cbs.seen[1].registered_inside, 1);
    ck_assert_int_eq(cbs.seen[1].link_result, GC_SUCCESS);

    boehm_collect(4);
    boehm_check_object(boehm_roots[0], &boehm_links[0], 0);
    boehm_check_object(boehm_roots[1], &boehm_links[1], 1);

    ck_assert_int_eq(clgc_clReleaseKernel(kernel), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseProgram(program), CL_SUCCESS);
    boehm_cl_close(&cl);
    sem_destroy(&cbs.done);
}
END_TEST

/* The same callback as a clgc closure ("v(pip)"), which is how a binding
 * hands PoCL a callback of its own: PoCL's thread reaches the handler
 * registered and active, so the handler may allocate. */
static void
boehm_closure_complete(void *result, void *const *args, void *data)
{
    struct boehm_callbacks *cbs = data;
    unsigned i = atomic_fetch_add(&cbs->started, 1);

    if (i < 2) {
        cbs->seen[i].thread = pthread_self();
        boehm_allocate(&cbs->seen[i]);
    }
    sem_post(&cbs->done);
}

START_TEST(test_closure_on_pocl_thread_is_active)
{
    struct boehm_callbacks cbs = {0};
    struct boehm_cl cl;
    clgc_closure_t *closure;
    clgc_function_t code;
    cl_program program;
    cl_kernel kernel;

    boehm_setup(0);
    boehm_cl_open(&cl);
    program = boehm_program(&cl);
    kernel = boehm_nop_kernel(&cl, program);
    cbs.seen[0].index = 0;
    cbs.seen[1].index = 1;
    ck_assert_int_eq(sem_init(&cbs.done, 0, 0), 0);
    ck_assert_int_eq(clgc_closure_create("v(pip)", boehm_closure_complete, &cbs,
                                         &closure, &code),
                     CLGC_OK);
    boehm_run_kernel(&cl, kernel,
                     (void(CL_CALLBACK *)(cl_event, cl_int, void *))code, &cbs);

    ck_assert_uint_eq(atomic_load(&cbs.started), 2);
    ck_assert_msg(!pthread_equal(cbs.seen[0].thread, pthread_self()),
                  "PoCL ran the completion callback on the test's thread");
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(cbs.seen[i].registered_inside, 1);
        ck_assert_int_eq(cbs.seen[i].attached_inside, 1);
        ck_assert_int_eq(cbs.seen[i].in_region_inside, 0);
        ck_assert_int_eq(cbs.seen[i].link_result, GC_SUCCESS);
    }

    boehm_collect(4);
    boehm_check_object(boehm_roots[0], &boehm_links[0], 0);
    boehm_check_object(boehm_roots[1], &boehm_links[1], 1);

    ck_assert_int_eq(clgc_closure_free(closure), CLGC_OK);
    ck_assert_int_eq(clgc_clReleaseKernel(kernel), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseProgram(program), CL_SUCCESS);
    boehm_cl_close(&cl);
    sem_destroy(&cbs.done);
}
END_TEST

/* A plain pthread that enters through clgc_call_active and exits without
 * clgc_thread_detach. */
struct boehm_plain {
    struct boehm_seen seen;
    sem_t entered, go;
    int rounds;
    int registered_at_exit, attached_at_exit;
};

static pthread_key_t boehm_exit_key;

/* A thread-exit destructor that looks at bdwgc's view of the thread once
 * clgc's own exit hook has run. Destructors run in an unspecified order,
 * so while clgc's has not run yet this one asks to be called again in the
 * next round (glibc runs up to PTHREAD_DESTRUCTOR_ITERATIONS rounds). */
static void
boehm_exit_probe(void *arg)
{
    struct boehm_plain *p = arg;

    if (clgc_thread_attached() && p->rounds++ < 8) {
        pthread_setspecific(boehm_exit_key, p);
        return;
    }
    p->attached_at_exit = clgc_thread_attached();
    p->registered_at_exit = GC_thread_is_registered();
}

static void *
boehm_plain_main(void *arg)
{
    struct boehm_plain *p = arg;

    pthread_setspecific(boehm_exit_key, p);
    boehm_enter_active(&p->seen);
    sem_post(&p->entered);
    boehm_sem_wait(&p->go);
    return NULL;
}

START_TEST(test_plain_thread_is_unregistered_at_exit)
{
    struct boehm_plain p = {
        .seen.index = 2, .registered_at_exit = -1, .attached_at_exit = -1};
    unsigned long while_alive;
    pthread_t thread;

    boehm_setup(0);
    ck_assert_int_eq(pthread_key_create(&boehm_exit_key, boehm_exit_probe), 0);
    ck_assert_int_eq(sem_init(&p.entered, 0, 0), 0);
    ck_assert_int_eq(sem_init(&p.go, 0, 0), 0);
    thread = boehm_plain_thread(boehm_plain_main, &p);
    boehm_sem_wait(&p.entered);
    /* Registered: collections stop it. */
    boehm_watch(thread);
    boehm_collect(BOEHM_COLLECTIONS);
    while_alive = boehm_suspended();
    sem_post(&p.go);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    boehm_check_first_entry(&p.seen);
    ck_assert_uint_ge(while_alive, BOEHM_COLLECTIONS);
    /* On its way out, after clgc's exit hook, bdwgc no longer knew it. */
    ck_assert_int_eq(p.attached_at_exit, 0);
    ck_assert_int_eq(p.registered_at_exit, 0);
    /* Gone from bdwgc's table: collections neither fail nor signal it. */
    boehm_watch(thread);
    boehm_collect(BOEHM_COLLECTIONS);
    ck_assert_uint_eq(boehm_suspended(), 0);
    boehm_unwatch();
    boehm_check_object(boehm_roots[2], &boehm_links[2], 2);
    pthread_key_delete(boehm_exit_key);
    sem_destroy(&p.entered);
    sem_destroy(&p.go);
}
END_TEST

/* What clgc_thread_attach and clgc_thread_detach do to bdwgc's table. */
struct boehm_attach {
    int attach, attached, registered;
    int again, registered_again;
    int detach, attached_after, registered_after;
};

static void *
boehm_attach_main(void *arg)
{
    struct boehm_attach *a = arg;

    a->attach = clgc_thread_attach();
    a->attached = clgc_thread_attached();
    a->registered = GC_thread_is_registered();
    a->again = clgc_thread_attach();
    a->registered_again = GC_thread_is_registered();
    a->detach = clgc_thread_detach();
    a->attached_after = clgc_thread_attached();
    a->registered_after = GC_thread_is_registered();
    return NULL;
}

START_TEST(test_attach_registers_only_unknown_threads)
{
    struct boehm_attach known = {0}, plain = {0};

    boehm_setup(0);
    /* The main thread and GC_pthread_create's threads are bdwgc's own:
     * attaching them is a no-op that clgc never undoes. */
    ck_assert_int_eq(clgc_thread_attach(), CLGC_KNOWN);
    ck_assert_int_eq(clgc_thread_attached(), 0);
    ck_assert_int_eq(clgc_thread_detach(), CLGC_ENOTATTACHED);
    ck_assert_int_eq(GC_thread_is_registered(), 1);
    boehm_gc_join(boehm_gc_thread(boehm_attach_main, &known));
    ck_assert_int_eq(known.attach, CLGC_KNOWN);
    ck_assert_int_eq(known.attached, 0);
    ck_assert_int_eq(known.registered, 1);
    ck_assert_int_eq(known.detach, CLGC_ENOTATTACHED);
    ck_assert_int_eq(known.registered_after, 1);

    ck_assert_int_eq(
        pthread_join(boehm_plain_thread(boehm_attach_main, &plain), NULL), 0);
    ck_assert_int_eq(plain.attach, CLGC_OK);
    ck_assert_int_eq(plain.attached, 1);
    ck_assert_int_eq(plain.registered, 1);
    ck_assert_int_eq(plain.again, CLGC_OK);
    ck_assert_int_eq(plain.registered_again, 1);
    ck_assert_int_eq(plain.detach, CLGC_OK);
    ck_assert_int_eq(plain.attached_after, 0);
    ck_assert_int_eq(plain.registered_after, 0);
    boehm_collect(2);
}
END_TEST

/* A wrapper called on a thread bdwgc does not know cannot enter
 * GC_do_blocking (bdwgc would look the thread up and find nothing): it
 * runs the call outside any region and registers nothing. */
struct boehm_unknown {
    int depth;
    int registered_after;
    cl_int result;
};

static void *
boehm_unknown_main(void *arg)
{
    struct boehm_unknown *u = arg;

    u->result = clgc_clFinish(boehm_stub->object(boehm_stub_platform, 1));
    u->registered_after = GC_thread_is_registered();
    return NULL;
}

START_TEST(test_wrapper_on_unknown_thread_runs_outside)
{
    struct boehm_unknown u = {.registered_after = -1};

    boehm_setup(0);
    boehm_stub_open();
    boehm_stub->reset();
    ck_assert_int_eq(
        pthread_join(boehm_plain_thread(boehm_unknown_main, &u), NULL), 0);
    u.depth =
        boehm_stub_depth(boehm_stub->object(boehm_stub_platform, 1), u.result);
    ck_assert_int_eq(u.depth, 0);
    ck_assert_int_eq(u.registered_after, 0);
    boehm_stub->probe = NULL;
}
END_TEST

/* ------------------------------------------------------------------------
 * Issue 25, item 6: a thread bdwgc did not know, attached by clgc, exits
 * inside a safe region (in GC_do_blocking), or inside an active region
 * entered from one, after allocating there. clgc's exit destructor leaves
 * its regions and unregisters the thread: bdwgc forgets it, collections
 * neither fail nor signal it, and what it linked from a root survives.
 */
struct boehm_exiting {
    int active; /* exit from an active region inside the safe one */
    int attach;
    unsigned depth_inside;
    int registered_inside;
    int rounds;
    int attached_at_exit, registered_at_exit;
    unsigned depth_at_exit;
};

static pthread_key_t boehm_exiting_key;

/* As boehm_exit_probe: once clgc's own exit hook has run. */
static void
boehm_exiting_probe(void *arg)
{
    struct boehm_exiting *e = arg;

    if (clgc_thread_attached() && e->rounds++ < 8) {
        pthread_setspecific(boehm_exiting_key, e);
        return;
    }
    e->attached_at_exit = clgc_thread_attached();
    e->registered_at_exit = GC_thread_is_registered();
    e->depth_at_exit = clgc_thread_region_depth();
}

static void *
boehm_exit_here(void *arg)
{
    struct boehm_exiting *e = arg;

    e->depth_inside = clgc_thread_region_depth();
    e->registered_inside = GC_thread_is_registered();
    if (e->active) {
        boehm_roots[0] = boehm_new_object(0);
        boehm_link(&boehm_links[0], boehm_roots[0]);
    }
    pthread_exit(NULL);
}

static void *
boehm_exit_from_active(void *arg)
{
    clgc_call_active(boehm_exit_here, arg, NULL);
    return NULL;
}

static void *
boehm_exiting_main(void *arg)
{
    struct boehm_exiting *e = arg;

    pthread_setspecific(boehm_exiting_key, e);
    e->attach = clgc_thread_attach();
    clgc_call_safe(e->active ? boehm_exit_from_active : boehm_exit_here, e);
    return NULL; /* never reached */
}

static void
boehm_exit_inside(int active)
{
    struct boehm_exiting e = {.active = active,
                              .attach = -1,
                              .attached_at_exit = -1,
                              .registered_at_exit = -1};
    pthread_t thread;

    boehm_setup(0);
    ck_assert_int_eq(
        pthread_key_create(&boehm_exiting_key, boehm_exiting_probe), 0);
    thread = boehm_plain_thread(boehm_exiting_main, &e);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_int_eq(e.attach, CLGC_OK);
    ck_assert_uint_eq(e.depth_inside, 1);
    ck_assert_int_eq(e.registered_inside, 1);
    ck_assert_int_eq(e.attached_at_exit, 0);
    ck_assert_int_eq(e.registered_at_exit, 0);
    ck_assert_uint_eq(e.depth_at_exit, 0);
    /* Gone from bdwgc's table: collections neither fail nor signal it. */
    boehm_watch(thread);
    boehm_collect(BOEHM_COLLECTIONS);
    ck_assert_uint_eq(boehm_suspended(), 0);
    boehm_unwatch();
    if (active)
        boehm_check_object(boehm_roots[0], &boehm_links[0], 0);
    pthread_key_delete(boehm_exiting_key);
}

START_TEST(test_thread_exiting_in_a_region_is_unregistered)
{
    boehm_exit_inside(0);
}
END_TEST

START_TEST(test_thread_exiting_in_an_active_region_is_unregistered)
{
    boehm_exit_inside(1);
}
END_TEST

/* ------------------------------------------------------------------------ */

Suite *
clgc_make_boehm_threads_suite(void)
{
    Suite *s = suite_create("boehm");

    boehm_add_pocl(s, "pocl callback thread",
                   test_pocl_callback_thread_is_registered_once,
                   "PoCL calls one event's callbacks on one thread");
    boehm_add_premised(s, "closure on pocl thread",
                       test_closure_on_pocl_thread_is_active,
                       TEST_DRIVER_THREADS,
                       "it flushes a kernel behind a user event it sets "
                       "afterwards, and wants the callbacks on the "
                       "driver's thread");
    boehm_add(s, "plain thread exit",
              test_plain_thread_is_unregistered_at_exit);
    boehm_add(s, "attach", test_attach_registers_only_unknown_threads);
    boehm_add(s, "exit in a region",
              test_thread_exiting_in_a_region_is_unregistered);
    boehm_add(s, "exit in an active region",
              test_thread_exiting_in_an_active_region_is_unregistered);
    boehm_add(s, "unknown thread", test_wrapper_on_unknown_thread_runs_outside);
    return s;
}
