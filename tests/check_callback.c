/* OpenCL's callbacks through clgc's wrappers, on the real PoCL device: each
 * runs with the runtime active, on the thread PoCL picks, as often as its
 * lifetime rule says; deferred ones run in the owner's drain; failures
 * reach the runtime's callback_failed hook. The commands PoCL lacks are
 * covered against the stub ICD in check_forward.c. */

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "testutil.h"

/* What a callback saw. */
struct seen {
    sem_t ran;
    atomic_int calls;
    pthread_t thread;
    int in_region;
    int hook_depth;
    unsigned long active_calls; /* the runtime's count when it ran */
    cl_int status;
    void *object;
    int fail; /* report a failure with clgc_callback_fail(&fail) */
    int fail_result;
};

static void
seen_init(struct seen *s)
{
    *s = (struct seen){.status = 1};
    ck_assert_int_eq(sem_init(&s->ran, 0, 0), 0);
}

static void
saw(struct seen *s, void *object)
{
    s->thread = pthread_self();
    s->in_region = clgc_thread_in_region();
    s->hook_depth = test_rt_hook_depth();
    s->active_calls = test_rt_active_calls();
    s->object = object;
    if (s->fail)
        s->fail_result = clgc_callback_fail(&s->fail);
    atomic_fetch_add(&s->calls, 1);
    sem_post(&s->ran);
}

static void CL_CALLBACK
on_event(cl_event event, cl_int status, void *data)
{
    struct seen *s = data;

    s->status = status;
    saw(s, event);
}

static void CL_CALLBACK
on_program(cl_program program, void *data)
{
    saw(data, program);
}

static void CL_CALLBACK
on_mem(cl_mem mem, void *data)
{
    saw(data, mem);
}

static void CL_CALLBACK
on_context(cl_context context, void *data)
{
    saw(data, context);
}

static void CL_CALLBACK
on_context_error(const char *errinfo, const void *private_info, size_t cb,
                 void *data)
{
    saw(data, NULL);
}

static void CL_CALLBACK
on_svm_free(cl_command_queue queue, cl_uint n, void *pointers[], void *data)
{
    struct seen *s = data;

    for (cl_uint i = 0; i < n; i++)
        clSVMFree(s->object, pointers[i]);
    saw(s, pointers[0]);
}

static void
wait_ran(struct seen *s)
{
    test_sem_wait(&s->ran, "a callback to run");
}

/* It ran once, on this thread, from inside the wrapper that registered it:
 * re-entered through the runtime's active hook. */
static void
expect_inline(struct seen *s, unsigned long active_before)
{
    ck_assert_int_eq(atomic_load(&s->calls), 1);
    ck_assert(pthread_equal(s->thread, pthread_self()));
    ck_assert_int_eq(s->in_region, 0);
    ck_assert_int_eq(s->hook_depth, 0);
    ck_assert_uint_eq(s->active_calls - active_before, 1);
}

static cl_device_id
device_of(cl_context context)
{
    cl_device_id device;

    ck_assert_int_eq(clGetContextInfo(context, CL_CONTEXT_DEVICES,
                                      sizeof(device), &device, NULL),
                     CL_SUCCESS);
    return device;
}

static cl_event
user_event(cl_context context)
{
    cl_int err;
    cl_event ev = clgc_clCreateUserEvent(context, &err);

    ck_assert_int_eq(err, CL_SUCCESS);
    return ev;
}

/* A kernel that runs behind a user event: PoCL completes kernels on its
 * worker thread (a marker behind a user event completes inline, in
 * clSetUserEventStatus), so its event's callbacks run there. */
struct gated {
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_mem buffer;
};

static void
gated_open(struct gated *g)
{
    cl_device_id device;
    cl_int err, n = 1;

    g->context = test_pocl_context();
    device = device_of(g->context);
    g->queue = test_queue_create(g->context, device);
    g->program =
        clCreateProgramWithSource(g->context, 1, &test_spin_src, NULL, &err);
    test_assert_built(clBuildProgram(g->program, 1, &device, "", NULL, NULL),
                      g->program, device);
    g->kernel = clCreateKernel(g->program, "spin", &err);
    g->buffer = clCreateBuffer(g->context, CL_MEM_READ_WRITE, sizeof(float),
                               NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    clSetKernelArg(g->kernel, 0, sizeof(g->buffer), &g->buffer);
    clSetKernelArg(g->kernel, 1, sizeof(n), &n);
}

/* Enqueue the kernel behind *gate (a new user event); its event. */
static cl_event
gated_launch(struct gated *g, cl_event *gate)
{
    size_t one = 1;
    cl_event done;

    *gate = user_event(g->context);
    ck_assert_int_eq(clgc_clEnqueueNDRangeKernel(g->queue, g->kernel, 1, NULL,
                                                 &one, NULL, 1, gate, &done),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_clFlush(g->queue), CL_SUCCESS);
    return done;
}

/* n kernels one after the other, each with on_event into s[i] on its
 * event: wait until each callback ran. */
static void
gated_callbacks(struct gated *g, struct seen *s, int n)
{
    for (int i = 0; i < n; i++) {
        cl_event gate, done = gated_launch(g, &gate);

        seen_init(&s[i]);
        ck_assert_int_eq(
            clgc_clSetEventCallback(done, CL_COMPLETE, on_event, &s[i]),
            CL_SUCCESS);
        ck_assert_int_eq(clgc_clSetUserEventStatus(gate, CL_COMPLETE),
                         CL_SUCCESS);
        wait_ran(&s[i]);
        ck_assert_int_eq(clgc_clFinish(g->queue), CL_SUCCESS);
        clReleaseEvent(done);
        clReleaseEvent(gate);
    }
}

static void
gated_close(struct gated *g)
{
    clReleaseMemObject(g->buffer);
    clReleaseKernel(g->kernel);
    clReleaseProgram(g->program);
    clReleaseCommandQueue(g->queue);
    clReleaseContext(g->context);
}

START_TEST(event_callback_on_a_complete_event_runs_inline)
{
    cl_context context = test_pocl_context();
    cl_event ev = user_event(context);
    unsigned long active0;
    struct seen s;

    seen_init(&s);
    ck_assert_int_eq(clgc_clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    active0 = test_rt_active_calls();
    ck_assert_int_eq(clgc_clSetEventCallback(ev, CL_COMPLETE, on_event, &s),
                     CL_SUCCESS);
    expect_inline(&s, active0);
    ck_assert_int_eq(s.status, CL_COMPLETE);
    ck_assert_ptr_eq(s.object, ev);
    clReleaseEvent(ev);
    clReleaseContext(context);
}
END_TEST

/* An event callback that drops the last reference to its own event, as a
 * binding does that hands the event's ownership to its callback; counts
 * its calls in *data. */
static void CL_CALLBACK
release_own(cl_event event, cl_int status, void *data)
{
    (void)status;
    clReleaseEvent(event);
    atomic_fetch_add((atomic_int *)data, 1);
}

/* PoCL calls it inline, inside clSetEventCallback, for an event already
 * complete: the event is gone before the driver's call returns, and
 * clgc's registration must not touch it afterwards. */
START_TEST(inline_callback_may_release_its_own_event)
{
    cl_context context = test_pocl_context();
    atomic_int released = 0;

    for (int i = 0; i < 100; i++) {
        cl_event ev = user_event(context);

        ck_assert_int_eq(clgc_clSetUserEventStatus(ev, CL_COMPLETE),
                         CL_SUCCESS);
        ck_assert_int_eq(
            clgc_clSetEventCallback(ev, CL_COMPLETE, release_own, &released),
            CL_SUCCESS);
        ck_assert_int_eq(atomic_load(&released), i + 1);
    }
    clReleaseContext(context);
}
END_TEST

#define MARKERS 2000

/* Markers whose callbacks, on the driver's thread, release their events,
 * the program holding none of them. */
START_TEST(driver_thread_callback_may_release_its_own_event)
{
    cl_context context = test_pocl_context();
    cl_command_queue queue = test_queue_create(context, device_of(context));
    atomic_int released = 0;

    for (int i = 0; i < MARKERS; i++) {
        cl_event ev;

        ck_assert_int_eq(clEnqueueMarkerWithWaitList(queue, 0, NULL, &ev),
                         CL_SUCCESS);
        ck_assert_int_eq(
            clgc_clSetEventCallback(ev, CL_COMPLETE, release_own, &released),
            CL_SUCCESS);
        if (i % 100 == 0)
            ck_assert_int_eq(clFlush(queue), CL_SUCCESS);
    }
    ck_assert_int_eq(clgc_clFinish(queue), CL_SUCCESS);
    /* Callbacks may come after clFinish returns: wait for them, at most
     * 60 s (the tcase's timeout is longer). */
    for (int i = 0; i < 60000 && atomic_load(&released) < MARKERS; i++)
        usleep(1000);
    ck_assert_msg(atomic_load(&released) == MARKERS,
                  "%d of %d marker callbacks came within 60 s",
                  atomic_load(&released), MARKERS);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
}
END_TEST

/* A kernel behind a user event completes on PoCL's worker thread. (The
 * recording runtime knows every thread; check_boehm and check_safepoint
 * show the attach.) */
START_TEST(event_callback_runs_on_pocl_thread)
{
    struct gated g;
    struct seen s[2];

    gated_open(&g);
    gated_callbacks(&g, s, 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(atomic_load(&s[i].calls), 1);
        ck_assert_int_eq(s[i].in_region, 0);
        ck_assert_int_eq(s[i].status, CL_COMPLETE);
        ck_assert(!pthread_equal(s[i].thread, pthread_self()));
    }
    gated_close(&g);
}
END_TEST

START_TEST(build_compile_and_link_notify_once_each)
{
    static const char *src = "__kernel void k(__global int *x) { x[0] = 1; }";
    cl_context context = test_pocl_context();
    cl_device_id device = device_of(context);
    struct seen built, compiled, linked;
    cl_program p, q, linked_program;
    unsigned long active0;
    cl_int err;

    seen_init(&built);
    seen_init(&compiled);
    seen_init(&linked);
    p = clgc_clCreateProgramWithSource(context, 1, &src, NULL, &err);
    active0 = test_rt_active_calls();
    test_assert_built(
        clgc_clBuildProgram(p, 1, &device, "", on_program, &built), p, device);
    expect_inline(&built, active0);
    ck_assert_ptr_eq(built.object, p);

    q = clgc_clCreateProgramWithSource(context, 1, &src, NULL, &err);
    active0 = test_rt_active_calls();
    ck_assert_int_eq(clgc_clCompileProgram(q, 1, &device, "", 0, NULL, NULL,
                                           on_program, &compiled),
                     CL_SUCCESS);
    expect_inline(&compiled, active0);
    active0 = test_rt_active_calls();
    linked_program = clgc_clLinkProgram(context, 1, &device, "", 1, &q,
                                        on_program, &linked, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    expect_inline(&linked, active0);
    ck_assert_ptr_eq(linked.object, linked_program);
    clReleaseProgram(linked_program);
    clReleaseProgram(q);
    clReleaseProgram(p);
    clReleaseContext(context);
}
END_TEST

/* A build that fails after it started has called its notification. One
 * refused before it starts may never call it (the spec) or call it once
 * all the same (PoCL 3.1, for a device list it refuses); either way the
 * record is freed (LSan). */
START_TEST(failed_builds_notify_as_the_spec_says)
{
    static const char *bad = "__kernel void k(void) { syntax error }";
    cl_context context = test_pocl_context();
    cl_device_id device = device_of(context);
    struct seen failed, refused;
    cl_program p;
    cl_int err;

    seen_init(&failed);
    seen_init(&refused);
    p = clgc_clCreateProgramWithSource(context, 1, &bad, NULL, &err);
    ck_assert_int_eq(
        clgc_clBuildProgram(p, 1, &device, "", on_program, &failed),
        CL_BUILD_PROGRAM_FAILURE);
    ck_assert_int_eq(atomic_load(&failed.calls), 1);
    ck_assert_int_eq(
        clgc_clBuildProgram(p, 0, &device, "", on_program, &refused),
        CL_INVALID_VALUE);
    ck_assert_int_eq(
        clgc_clBuildProgram(NULL, 1, &device, "", on_program, &refused),
        CL_INVALID_PROGRAM);
    ck_assert_int_le(atomic_load(&refused.calls), 2);
    clReleaseProgram(p);
    clReleaseContext(context);
}
END_TEST

START_TEST(destructor_callbacks_run_once_at_the_last_release)
{
    cl_context context = test_pocl_context();
    struct seen mem, ctx;
    unsigned long active0;
    cl_int err;
    cl_mem buffer =
        clgc_clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);

    seen_init(&mem);
    seen_init(&ctx);
    ck_assert_int_eq(
        clgc_clSetMemObjectDestructorCallback(buffer, on_mem, &mem),
        CL_SUCCESS);
    ck_assert_int_eq(
        clgc_clSetContextDestructorCallback(context, on_context, &ctx),
        CL_SUCCESS);
    ck_assert_int_eq(atomic_load(&mem.calls), 0);
    active0 = test_rt_active_calls();
    ck_assert_int_eq(clgc_clReleaseMemObject(buffer), CL_SUCCESS);
    expect_inline(&mem, active0);
    ck_assert_ptr_eq(mem.object, buffer);
    active0 = test_rt_active_calls();
    ck_assert_int_eq(clgc_clReleaseContext(context), CL_SUCCESS);
    expect_inline(&ctx, active0);
    ck_assert_ptr_eq(ctx.object, context);
}
END_TEST

/* PoCL never calls a context's error callback here; what matters is that
 * the record lives until the context goes and is freed then (LSan), and
 * that a failed creation frees it at once. */
START_TEST(context_error_callback_lives_as_long_as_the_context)
{
    cl_platform_id platform = test_platform("Portable Computing Language");
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     (cl_context_properties)platform, 0};
    cl_device_id device;
    cl_context context;
    struct seen s;
    cl_int err;

    seen_init(&s);
    ck_assert_int_eq(
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL),
        CL_SUCCESS);
    context =
        clgc_clCreateContext(props, 1, &device, on_context_error, &s, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseContext(context), CL_SUCCESS);
    context = clgc_clCreateContextFromType(props, CL_DEVICE_TYPE_ALL,
                                           on_context_error, &s, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseContext(context), CL_SUCCESS);
    context = clgc_clCreateContext(props, 0, NULL, on_context_error, &s, &err);
    ck_assert_ptr_null(context);
    ck_assert_int_eq(err, CL_INVALID_VALUE);
    ck_assert_int_eq(atomic_load(&s.calls), 0);
}
END_TEST

START_TEST(svm_free_callback_runs_once_with_the_pointers)
{
    cl_context context = test_pocl_context();
    cl_device_id device = device_of(context);
    cl_device_svm_capabilities caps = 0;
    cl_command_queue queue;
    void *ptr;
    struct seen s;

    ck_assert_int_eq(clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES,
                                     sizeof(caps), &caps, NULL),
                     CL_SUCCESS);
    ck_assert_msg(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER,
                  "PoCL's CPU device has coarse-grained SVM");
    queue =
        clgc_clCreateCommandQueueWithProperties(context, device, NULL, NULL);
    seen_init(&s);
    ptr = clSVMAlloc(context, CL_MEM_READ_WRITE, 256, 0);
    ck_assert_ptr_nonnull(ptr);
    s.object = context; /* on_svm_free frees the pointers in it */
    ck_assert_int_eq(
        clgc_clEnqueueSVMFree(queue, 1, &ptr, on_svm_free, &s, 0, NULL, NULL),
        CL_SUCCESS);
    ck_assert_int_eq(clgc_clFinish(queue), CL_SUCCESS);
    wait_ran(&s);
    ck_assert_int_eq(atomic_load(&s.calls), 1);
    ck_assert_int_eq(s.in_region, 0);
    ck_assert_ptr_eq(s.object, ptr);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
}
END_TEST

/* OpenCL 3.0 deprecates it; PoCL refuses it. Either way the callback runs
 * once or never, and nothing leaks. */
START_TEST(program_release_callback_runs_once_or_is_refused)
{
    static const char *src = "__kernel void k(void) {}";
    cl_context context = test_pocl_context();
    struct seen s;
    cl_program p;
    cl_int err;

    seen_init(&s);
    p = clgc_clCreateProgramWithSource(context, 1, &src, NULL, &err);
    err = clgc_clSetProgramReleaseCallback(p, on_program, &s);
    ck_assert_int_eq(clgc_clReleaseProgram(p), CL_SUCCESS);
    ck_assert_int_eq(atomic_load(&s.calls), err == CL_SUCCESS ? 1 : 0);
    clReleaseContext(context);
}
END_TEST

/* Deferred: the callback of an event that is already complete is not run
 * inline but posted; the owner's drain runs it, active. */
START_TEST(deferred_callback_runs_in_the_drain)
{
    cl_context context = test_pocl_context();
    cl_event ready = user_event(context), later = user_event(context);
    clgc_queue_t *q;
    struct pollfd p = {-1, POLLIN, 0};
    struct seen now, then;

    ck_assert_int_eq(clgc_queue_create(&q), CLGC_OK);
    p.fd = clgc_queue_fd(q);
    seen_init(&now);
    seen_init(&then);
    ck_assert_int_eq(clgc_clSetUserEventStatus(ready, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clgc_callbacks_defer(q), CLGC_OK);
    ck_assert_ptr_eq(clgc_callbacks_deferred_to(), q);
    ck_assert_int_eq(
        clgc_clSetEventCallback(ready, CL_COMPLETE, on_event, &now),
        CL_SUCCESS);
    ck_assert_int_eq(
        clgc_clSetEventCallback(later, CL_COMPLETE, on_event, &then),
        CL_SUCCESS);
    ck_assert_int_eq(clgc_callbacks_defer(NULL), CLGC_OK);
    ck_assert_int_eq(atomic_load(&now.calls), 0);
    ck_assert_int_eq(test_poll(&p, "the queue's fd to be readable"),
                     1); /* at once on PoCL */
    ck_assert_int_eq(clgc_queue_drain(q, 0), 1);
    ck_assert_int_eq(atomic_load(&now.calls), 1);
    ck_assert(pthread_equal(now.thread, pthread_self()));
    ck_assert_int_eq(now.in_region, 0);
    ck_assert_int_eq(now.status, CL_COMPLETE);
    /* later's callback is still to come: the queue stays open. */
    ck_assert_int_eq(clgc_queue_close(q), CLGC_EBUSY);
    ck_assert_int_eq(clgc_clSetUserEventStatus(later, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(atomic_load(&then.calls), 0);
    ck_assert_int_eq(test_poll(&p, "the queue's fd to be readable"),
                     1);                            /* posted */
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK); /* runs it */
    ck_assert_int_eq(atomic_load(&then.calls), 1);
    clReleaseEvent(ready);
    clReleaseEvent(later);
    clReleaseContext(context);
}
END_TEST

/* A failing callback is recorded and handed to the runtime's hook at the
 * next wait, not before; outside a callback clgc_callback_fail refuses. */
START_TEST(failure_reaches_the_runtime_at_the_next_wait)
{
    cl_context context = test_pocl_context();
    cl_event ev = user_event(context);
    clgc_callback_error_t e;
    unsigned long failures0 = test_rt_failures(NULL);
    struct seen s;

    seen_init(&s);
    s.fail = 1;
    ck_assert_int_eq(clgc_callback_fail(&s), CLGC_EINVAL);
    ck_assert_int_eq(clgc_clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetEventCallback(ev, CL_COMPLETE, on_event, &s),
                     CL_SUCCESS);
    wait_ran(&s); /* inline on PoCL; NVIDIA's own thread runs it later */
    ck_assert_int_eq(atomic_load(&s.calls), 1);
    ck_assert_int_eq(s.fail_result, CLGC_OK);
    ck_assert_uint_eq(test_rt_failures(NULL), failures0);
    ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
    ck_assert_uint_eq(test_rt_failures(&e), failures0 + 1);
    ck_assert_str_eq(e.command, "clSetEventCallback");
    ck_assert_int_eq(e.code, CLGC_ECALLBACK);
    ck_assert_ptr_eq(e.error, &s.fail);
    ck_assert_int_eq(clgc_callback_error_take(&e), 0);
    clReleaseEvent(ev);
    clReleaseContext(context);
}
END_TEST

/* The blocking wait (CLGC_WAIT_BLOCKING) hands failures over too. */
START_TEST(failure_reaches_the_runtime_at_a_blocking_wait)
{
    cl_context context = test_pocl_context();
    cl_event ev = user_event(context);
    unsigned long failures0 = test_rt_failures(NULL);
    struct seen s;

    seen_init(&s);
    s.fail = 1;
    ck_assert_int_eq(clgc_wait_set_mode(CLGC_WAIT_BLOCKING), CLGC_OK);
    ck_assert_int_eq(clgc_clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetEventCallback(ev, CL_COMPLETE, on_event, &s),
                     CL_SUCCESS);
    wait_ran(&s);
    ck_assert_uint_eq(test_rt_failures(NULL), failures0);
    ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
    ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_BLOCKING);
    ck_assert_uint_eq(test_rt_failures(NULL), failures0 + 1);
    ck_assert_int_eq(clgc_wait_set_mode(CLGC_WAIT_COOPERATIVE), CLGC_OK);
    clReleaseEvent(ev);
    clReleaseContext(context);
}
END_TEST

/* A foreign thread the runtime refuses to attach does not run the
 * callback; the runtime hears of it at its next drain. (The recording
 * runtime in strict mode knows only the threads it attached.) */
START_TEST(unattachable_thread_is_reported)
{
    unsigned long failures0 = test_rt_failures(NULL);
    clgc_queue_t *q;
    clgc_callback_error_t e;
    cl_event gate, done;
    struct gated g;
    struct seen s;

    ck_assert_int_eq(clgc_queue_create(&q), CLGC_OK);
    test_rt_set_strict(1);
    gated_open(&g);
    seen_init(&s);
    done = gated_launch(&g, &gate);
    ck_assert_int_eq(clgc_clSetEventCallback(done, CL_COMPLETE, on_event, &s),
                     CL_SUCCESS);
    test_rt_set_attach_result(CLGC_EATTACH);
    ck_assert_int_eq(clgc_clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clgc_clFinish(g.queue), CL_SUCCESS);
    /* PoCL may finish the command before it runs the callbacks. */
    while (test_rt_failures(NULL) == failures0) {
        ck_assert_int_eq(clgc_queue_drain(q, 0), 0);
        sched_yield();
    }
    test_rt_set_attach_result(CLGC_OK);
    ck_assert_uint_eq(test_rt_failures(&e), failures0 + 1);
    ck_assert_str_eq(e.command, "clSetEventCallback");
    ck_assert_int_eq(e.code, CLGC_ENOTATTACHED);
    ck_assert_ptr_null(e.error);
    ck_assert_int_eq(atomic_load(&s.calls), 0);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    gated_close(&g);
}
END_TEST

/* PoCL's CPU device runs native kernels: the function, which OpenCL calls
 * without user data, reaches the user through a one-shot closure, once,
 * with the argument block copied, and the runtime active. */
struct native_args {
    struct seen *seen;
    int value;
};

static void CL_CALLBACK
native_kernel(void *p)
{
    struct native_args *a = p;

    saw(a->seen, (void *)(intptr_t)a->value);
}

START_TEST(native_kernel_runs_once_active)
{
    cl_context context = test_pocl_context();
    cl_device_id device = device_of(context);
    cl_device_exec_capabilities caps = 0;
    cl_command_queue queue =
        clgc_clCreateCommandQueueWithProperties(context, device, NULL, NULL);
    struct seen s;
    struct native_args a = {&s, 42};

    ck_assert_int_eq(clGetDeviceInfo(device, CL_DEVICE_EXECUTION_CAPABILITIES,
                                     sizeof(caps), &caps, NULL),
                     CL_SUCCESS);
    ck_assert_msg(caps & CL_EXEC_NATIVE_KERNEL,
                  "PoCL's CPU device runs native kernels");
    seen_init(&s);
    ck_assert_int_eq(clgc_clEnqueueNativeKernel(queue, native_kernel, &a,
                                                sizeof(a), 0, NULL, NULL, 0,
                                                NULL, NULL),
                     CL_SUCCESS);
    a.value = 0; /* OpenCL ran it on its own copy */
    ck_assert_int_eq(clgc_clFinish(queue), CL_SUCCESS);
    wait_ran(&s);
    ck_assert_int_eq(atomic_load(&s.calls), 1);
    ck_assert_int_eq(s.in_region, 0);
    ck_assert_ptr_eq(s.object, (void *)(intptr_t)42);
    ck_assert_int_eq(clgc_clEnqueueNativeKernel(NULL, native_kernel, &a,
                                                sizeof(a), 0, NULL, NULL, 0,
                                                NULL, NULL),
                     CL_INVALID_COMMAND_QUEUE);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
}
END_TEST

/* In strict mode, PoCL's worker is a thread the runtime does not know:
 * clgc attaches it for its first callback and finds it attached after. */
START_TEST(pocl_thread_is_attached_once)
{
    unsigned long attach0;
    struct gated g;
    struct seen s[3];

    test_rt_set_strict(1);
    gated_open(&g);
    attach0 = test_rt_attach_calls();
    gated_callbacks(&g, s, 3);
    /* PoCL has a worker per core: each attached once, whichever ran. */
    {
        unsigned long threads = 1;

        for (int i = 1; i < 3; i++) {
            int seen_before = 0;

            for (int k = 0; k < i; k++)
                seen_before |= pthread_equal(s[i].thread, s[k].thread);
            threads += !seen_before;
        }
        ck_assert_uint_eq(test_rt_attach_calls() - attach0, threads);
    }
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(atomic_load(&s[i].calls), 1);
    gated_close(&g);
}
END_TEST

/* 100,000 event callbacks, registered on 4 threads that defer them to the
 * owner's queue, each delivered once, all on the owner's thread. */
#define DEFER_THREADS 4
#define DEFER_EACH 25000

struct deferred {
    cl_context context;
    clgc_queue_t *queue;
    unsigned char *calls; /* DEFER_THREADS * DEFER_EACH */
    pthread_t owner;
    atomic_ulong delivered, elsewhere;
};

struct producer {
    struct deferred *d;
    unsigned first;
};

/* Each callback's data is its own slot; the test's state is global. */
static struct deferred *the_deferred;

static void CL_CALLBACK
count_deferred(cl_event event, cl_int status, void *data)
{
    unsigned char *slot = data;

    if (!pthread_equal(pthread_self(), the_deferred->owner) ||
        status != CL_COMPLETE)
        atomic_fetch_add(&the_deferred->elsewhere, 1);
    (*slot)++;
    atomic_fetch_add(&the_deferred->delivered, 1);
}

static void *
produce(void *arg)
{
    struct producer *p = arg;
    struct deferred *d = p->d;

    clgc_callbacks_defer(d->queue);
    for (unsigned i = 0; i < DEFER_EACH; i++) {
        cl_int err;
        cl_event ev = clgc_clCreateUserEvent(d->context, &err);

        if (err != CL_SUCCESS ||
            clgc_clSetEventCallback(ev, CL_COMPLETE, count_deferred,
                                    &d->calls[p->first + i]) != CL_SUCCESS ||
            clgc_clSetUserEventStatus(ev, CL_COMPLETE) != CL_SUCCESS)
            atomic_fetch_add(&d->elsewhere, 1);
        clgc_clReleaseEvent(ev);
    }
    clgc_callbacks_defer(NULL);
    return NULL;
}

START_TEST(deferred_callbacks_from_four_threads_arrive_once)
{
    struct deferred d = {.context = test_pocl_context(),
                         .owner = pthread_self()};
    struct producer p[DEFER_THREADS];
    pthread_t t[DEFER_THREADS];
    struct pollfd fd = {-1, POLLIN, 0};
    const unsigned long total = DEFER_THREADS * DEFER_EACH;

    ck_assert_int_eq(clgc_queue_create(&d.queue), CLGC_OK);
    fd.fd = clgc_queue_fd(d.queue);
    the_deferred = &d;
    d.calls = calloc(total, 1);
    ck_assert_ptr_nonnull(d.calls);
    for (unsigned i = 0; i < DEFER_THREADS; i++) {
        p[i] = (struct producer){&d, i * DEFER_EACH};
        ck_assert_int_eq(pthread_create(&t[i], NULL, produce, &p[i]), 0);
    }
    while (atomic_load(&d.delivered) < total) {
        ck_assert_int_ge(poll(&fd, 1, 1000), 0);
        ck_assert_int_ge(clgc_queue_drain(d.queue, 0), 0);
    }
    for (int i = 0; i < DEFER_THREADS; i++)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    ck_assert_int_eq(clgc_queue_close(d.queue), CLGC_OK);
    ck_assert_uint_eq(atomic_load(&d.delivered), total);
    ck_assert_uint_eq(atomic_load(&d.elsewhere), 0);
    for (unsigned long i = 0; i < total; i++)
        ck_assert_msg(d.calls[i] == 1, "callback %lu ran %u times", i,
                      d.calls[i]);
    free(d.calls);
    clReleaseContext(d.context);
}
END_TEST

Suite *
clgc_make_callback_suite(void)
{
    Suite *s = suite_create("callback");
    TCase *tc = test_case("delivery");

    test_add_pocl_test(tc, event_callback_on_a_complete_event_runs_inline,
                       "PoCL calls back inline for a complete event");
    test_add_premised_test(
        tc, event_callback_runs_on_pocl_thread, TEST_DRIVER_THREADS,
        "it flushes a kernel behind a user event it sets later");
    test_add_pocl_test(tc, inline_callback_may_release_its_own_event,
                       "a callback called inline for an event already "
                       "complete");
    tcase_add_test(tc, driver_thread_callback_may_release_its_own_event);
    test_add_pocl_test(tc, build_compile_and_link_notify_once_each,
                       "PoCL calls build notifications inline");
    tcase_add_test(tc, failed_builds_notify_as_the_spec_says);
    test_add_pocl_test(tc, destructor_callbacks_run_once_at_the_last_release,
                       "PoCL calls destructor callbacks inline");
    tcase_add_test(tc, context_error_callback_lives_as_long_as_the_context);
    test_add_pocl_test(tc, svm_free_callback_runs_once_with_the_pointers,
                       "SVM, optional in OpenCL 3.0");
    tcase_add_test(tc, program_release_callback_runs_once_or_is_refused);
    tcase_add_test(tc, deferred_callback_runs_in_the_drain);
    tcase_add_test(tc, failure_reaches_the_runtime_at_the_next_wait);
    tcase_add_test(tc, failure_reaches_the_runtime_at_a_blocking_wait);
    test_add_premised_test(
        tc, unattachable_thread_is_reported, TEST_DRIVER_THREADS,
        "it flushes a kernel behind a user event it sets later");
    test_add_pocl_test(tc, native_kernel_runs_once_active,
                       "native kernels, which only CPU devices run");
    test_add_premised_test(
        tc, pocl_thread_is_attached_once, TEST_DRIVER_THREADS,
        "it flushes kernels behind user events it sets later");
    suite_add_tcase(s, tc);
    return s;
}

/* Named "threads": the ThreadSanitizer build runs it too. */
Suite *
clgc_make_callback_threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = test_case("deferred callbacks");

    tcase_add_test(tc, deferred_callbacks_from_four_threads_arrive_once);
    suite_add_tcase(s, tc);
    return s;
}
