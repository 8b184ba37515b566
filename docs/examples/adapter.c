/* An adapter for a made-up VM (docs/runtime.md, "Writing an adapter"):
 * toyvm, whose threads are either RUNNING (they may touch its heap) or
 * NATIVE (they promise not to), in the callback form of clgc_runtime_t.
 * Its hooks count their calls and check that clgc keeps its promises:
 *
 * - safe_region is called on a thread the VM knows, while it is RUNNING;
 *   active_region only from inside a safe region, while it is NATIVE;
 * - a thread the VM does not know is attached once, when it first enters
 *   the VM, and detached when it exits; wrappers called on it run outside
 *   any region;
 * - a callback that failed reaches callback_failed at the next wait.
 *
 * It exits 0 when every count is what the comments say.
 *
 *   cc adapter.c -o adapter $(pkg-config --cflags --libs clgc) -pthread
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <clgc.h>

#include "pocl.h"

enum { NOT_IN_VM, RUNNING, NATIVE };

/* The VM's view of a thread: its own threads start RUNNING. */
static __thread int toy_state = NOT_IN_VM;

static atomic_int safe_calls, active_calls, attaches, detaches, failures;
static atomic_int broken_promises;
static const char *failed_command;

/* Run fn(arg) with the thread NATIVE: a real VM would publish the state
 * to its collector here and, on the way back, wait for a collection in
 * progress to finish before it touches the heap again. */
static void *
toy_safe_region(clgc_fn_t fn, void *arg)
{
    void *result;

    if (toy_state != RUNNING)
        atomic_fetch_add(&broken_promises, 1);
    atomic_fetch_add(&safe_calls, 1);
    toy_state = NATIVE;
    result = fn(arg); /* exactly once, and return normally */
    toy_state = RUNNING;
    return result;
}

/* The inverse: from inside a safe region, RUNNING for fn's length. */
static void *
toy_active_region(clgc_fn_t fn, void *arg)
{
    void *result;

    if (toy_state != NATIVE)
        atomic_fetch_add(&broken_promises, 1);
    atomic_fetch_add(&active_calls, 1);
    toy_state = RUNNING;
    result = fn(arg);
    toy_state = NATIVE;
    return result;
}

/* A thread the VM did not create (PoCL's, or a plain pthread) joins it. */
static int
toy_attach(void *data)
{
    if (toy_state != NOT_IN_VM)
        return CLGC_KNOWN; /* clgc will then never detach it */
    atomic_fetch_add(&attaches, 1);
    toy_state = RUNNING;
    return CLGC_OK;
}

/* clgc calls this from clgc_thread_detach(), or as the thread exits. */
static void
toy_detach(void *data)
{
    atomic_fetch_add(&detaches, 1);
    toy_state = NOT_IN_VM;
}

/* Asked on a thread's crossings until it says yes; cheap. */
static int
toy_known(void *data)
{
    return toy_state != NOT_IN_VM;
}

/* With the runtime active, on the thread of the next wait or drain: a
 * binding would raise its language's error here. */
static void
toy_callback_failed(const clgc_callback_error_t *e, void *data)
{
    atomic_fetch_add(&failures, 1);
    failed_command = e->command;
    if (e->code != CLGC_ECALLBACK || e->error != data)
        atomic_fetch_add(&broken_promises, 1);
}

static int toy_error; /* what the failing callback reports: its address */

static const clgc_runtime_t toyvm = {
    .version = CLGC_RUNTIME_VERSION, /* 3 or later: callback_failed is read */
    .name = "toyvm",
    .data = &toy_error,
    .safe_region = toy_safe_region,
    .active_region = toy_active_region,
    .attach_thread = toy_attach,
    .detach_thread = toy_detach,
    .thread_known = toy_known,
    .callback_failed = toy_callback_failed,
};

/* A build notification: PoCL calls it on the building thread, inside the
 * wrapper's safe region; clgc brings the VM back through active_region. */
static void CL_CALLBACK
on_built(cl_program program, void *data)
{
    if (toy_state != RUNNING || clgc_thread_in_region())
        atomic_fetch_add(&broken_promises, 1);
    (*(int *)data)++;
}

/* A callback that fails the way a binding's does: it caught its error and
 * hands it to clgc, then returns normally. */
static void CL_CALLBACK
on_status(cl_event event, cl_int status, void *data)
{
    clgc_callback_fail(&toy_error);
}

/* VM code run on a foreign thread through clgc_call_active. */
static void *
vm_work(void *data)
{
    if (toy_state != RUNNING)
        atomic_fetch_add(&broken_promises, 1);
    return data;
}

/* A thread the VM never created enters it twice: attached once. */
static void *
foreign_thread(void *unused)
{
    void *r = NULL;

    if (clgc_call_active(vm_work, &r, &r) != CLGC_OK ||
        clgc_call_active(vm_work, &r, &r) != CLGC_OK || !clgc_thread_attached())
        atomic_fetch_add(&broken_promises, 1);
    return NULL; /* clgc detaches it as it exits */
}

/* A thread unknown to the VM calls a wrapper: no region, no attach. */
static void *
unknown_thread(void *device)
{
    cl_device_type type;

    if (clgc_clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof(type), &type,
                             NULL) != CL_SUCCESS)
        atomic_fetch_add(&broken_promises, 1);
    return NULL;
}

static int
expect(const char *what, int got, int want)
{
    printf("%-48s %3d%s\n", what, got, got == want ? "" : "  WRONG");
    return got != want;
}

int
main(void)
{
    const char *src = "__kernel void k(void) {}";
    struct pocl p;
    pthread_t t;
    cl_program program;
    cl_event user;
    cl_int err;
    int built = 0, safe_before, bad = 0;

    toy_state = RUNNING; /* the main thread is the VM's own */
    if (clgc_runtime_install(&toyvm) != CLGC_OK ||
        clgc_runtime_install(&toyvm) != CLGC_EALREADY)
        return 1;
    if (pocl_open(&p, NULL) != 0)
        return 1;

    /* A call: one safe region; the notification re-enters the VM. */
    safe_before = atomic_load(&safe_calls);
    program = clgc_clCreateProgramWithSource(p.context, 1, &src, NULL, &err);
    if (err == CL_SUCCESS)
        err = clgc_clBuildProgram(program, 1, &p.device, "", on_built, &built);
    bad |= expect("clBuildProgram's result (CL_SUCCESS)", err, CL_SUCCESS);
    bad |= expect("safe regions for the two calls",
                  atomic_load(&safe_calls) - safe_before, 2);
    bad |= expect("build notifications", built, 1);
    bad |= expect("active regions (the notification)",
                  atomic_load(&active_calls), 1);
    clgc_clReleaseProgram(program);

    /* Foreign threads: attached once and detached at exit, or left alone. */
    pthread_create(&t, NULL, foreign_thread, NULL);
    pthread_join(t, NULL);
    safe_before = atomic_load(&safe_calls);
    pthread_create(&t, NULL, unknown_thread, p.device);
    pthread_join(t, NULL);
    bad |= expect("attaches (a foreign thread, two entries)",
                  atomic_load(&attaches), 1);
    bad |= expect("detaches (it exited)", atomic_load(&detaches), 1);
    bad |= expect("safe regions on a thread the VM does not know",
                  atomic_load(&safe_calls) - safe_before, 0);

    /* A failing callback: reported once, at the next wait. PoCL runs a
     * user event's callbacks inside clSetUserEventStatus, here on the main
     * thread inside the wrapper's region. */
    user = clgc_clCreateUserEvent(p.context, &err);
    clgc_clSetEventCallback(user, CL_COMPLETE, on_status, NULL);
    clgc_clSetUserEventStatus(user, CL_COMPLETE);
    bad |= expect("failures before the wait", atomic_load(&failures), 0);
    clgc_wait_for_events(1, &user);
    bad |=
        expect("failures handed to callback_failed", atomic_load(&failures), 1);
    bad |= expect("... registered by clSetEventCallback",
                  failed_command != NULL &&
                      strcmp(failed_command, "clSetEventCallback") == 0,
                  1);
    clgc_clReleaseEvent(user);

    bad |= expect("promises clgc broke", atomic_load(&broken_promises), 0);
    pocl_close(&p);
    return bad;
}
