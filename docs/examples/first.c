/* A first program (docs/design.md): saxpy through clgc, under Boehm GC,
 * with the three crossings of the design's picture.
 *
 * - A call: clgc_clBuildProgram runs clBuildProgram inside GC_do_blocking,
 *   so bdwgc collects without stopping this thread while PoCL compiles.
 * - A callback: PoCL calls on_complete on a thread of its own once the
 *   kernel is done. clgc registers that thread with bdwgc first, so the
 *   callback may allocate from the collected heap.
 * - A wait: clgc_wait_for_events sleeps inside GC_do_blocking until PoCL's
 *   completion callback wakes it.
 *
 * It exits 0 when y = a * x + y came out right and the callback ran once,
 * on a thread bdwgc knew, with the runtime active.
 *
 *   cc first.c -o first $(pkg-config --cflags --libs clgc-boehm)
 */

#define GC_THREADS
#include <gc/gc.h>

#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>

#include <clgc.h>
#include <clgc/boehm.h>

#include "pocl.h"

#define N 1024

static const char *src = "__kernel void saxpy(float a, __global const float *x,"
                         "                    __global float *y)\n"
                         "{\n"
                         "    size_t i = get_global_id(0);\n"
                         "    y[i] = a * x[i] + y[i];\n"
                         "}\n";

/* What the completion callback reports. It lives on main's stack, which
 * bdwgc scans, so `note` keeps what the callback allocated alive. */
struct completion {
    sem_t done;
    int calls;
    int runtime_active; /* bdwgc knew the thread, outside any safe region */
    int *note;          /* allocated by the callback */
};

/* On PoCL's thread, with bdwgc active: clgc's trampoline registered the
 * thread (once; it stays registered until it exits) before calling this. */
static void CL_CALLBACK
on_complete(cl_event event, cl_int status, void *data)
{
    struct completion *c = data;

    c->runtime_active = GC_thread_is_registered() && !clgc_thread_in_region();
    c->note = GC_MALLOC(sizeof(*c->note));
    if (c->note != NULL)
        *c->note = status;
    c->calls++;
    sem_post(&c->done);
}

/* A blocking call of the program's own, run in a safe region as the
 * wrappers run theirs: collections need not wait for it. */
static void *
wait_for_callback(void *sem)
{
    while (sem_wait(sem) != 0 && errno == EINTR)
        ;
    return NULL;
}

int
main(void)
{
    struct completion c = {.calls = 0};
    float x[N], y[N], a = 2.0f;
    size_t global = N;
    struct pocl p;
    cl_kernel kernel = NULL;
    cl_mem xb = NULL, yb = NULL;
    cl_event done = NULL;
    cl_int err;
    int bad = 0;

    /* bdwgc's default restart signal, SIGXCPU, makes LLVM inside PoCL
     * delete its temporary files mid-build (docs/boehm.md). */
    GC_set_thr_restart_signal(SIGRTMIN + 2);
    GC_INIT();
    if (clgc_boehm_install(0) != CLGC_OK) /* before any other clgc call */
        return 1;

    /* The call: pocl_open builds the program with clgc_clBuildProgram. */
    if (pocl_open(&p, src) != 0)
        return 1;
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    kernel = clgc_clCreateKernel(p.program, "saxpy", &err);
    if (err == CL_SUCCESS)
        xb = clgc_clCreateBuffer(p.context,
                                 CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                 sizeof(x), x, &err);
    if (err == CL_SUCCESS)
        yb = clgc_clCreateBuffer(p.context,
                                 CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                 sizeof(y), y, &err);
    if (err == CL_SUCCESS)
        err = clgc_clSetKernelArg(kernel, 0, sizeof(a), &a);
    if (err == CL_SUCCESS)
        err = clgc_clSetKernelArg(kernel, 1, sizeof(xb), &xb);
    if (err == CL_SUCCESS)
        err = clgc_clSetKernelArg(kernel, 2, sizeof(yb), &yb);
    if (err == CL_SUCCESS)
        err = clgc_clEnqueueNDRangeKernel(p.queue, kernel, 1, NULL, &global,
                                          NULL, 0, NULL, &done);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "setting up the kernel failed: %d\n", err);
        bad = 1;
        goto out;
    }

    /* The callback: registered before the wait, called on PoCL's thread. */
    sem_init(&c.done, 0, 0);
    err = clgc_clSetEventCallback(done, CL_COMPLETE, on_complete, &c);

    /* The wait: flush, one look, then sleep in a safe region until woken. */
    if (err == CL_SUCCESS)
        err = clgc_wait_for_events(1, &done);
    if (err == CL_SUCCESS)
        err = clgc_clEnqueueReadBuffer(p.queue, yb, CL_TRUE, 0, sizeof(y), y, 0,
                                       NULL, NULL);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "running the kernel failed: %d\n", err);
        bad = 1;
    } else {
        /* The wait can return before our callback has run: both are
         * called when the event completes, in no set order. */
        clgc_call_safe(wait_for_callback, &c.done);
    }
    for (int i = 0; i < N && !bad; i++)
        if (y[i] != a * (float)i + 1.0f) {
            fprintf(stderr, "y[%d] = %g, not %g\n", i, y[i], a * i + 1.0f);
            bad = 1;
        }
    if (!bad && (c.calls != 1 || !c.runtime_active || c.note == NULL ||
                 *c.note != CL_COMPLETE)) {
        fprintf(stderr, "callback: %d calls, runtime active %d\n", c.calls,
                c.runtime_active);
        bad = 1;
    }
    if (!bad)
        printf("saxpy of %d floats through clgc (runtime %s): right; the "
               "wait finished by %s; the callback ran once with bdwgc "
               "active\n",
               N, clgc_runtime_current()->name,
               clgc_wait_last_path() == CLGC_WAIT_PATH_POLL       ? "poll"
               : clgc_wait_last_path() == CLGC_WAIT_PATH_CALLBACK ? "callback"
               : clgc_wait_last_path() == CLGC_WAIT_PATH_BACKOFF  ? "backoff"
                                                                  : "blocking");
    sem_destroy(&c.done);
out:
    if (done != NULL)
        clgc_clReleaseEvent(done);
    if (yb != NULL)
        clgc_clReleaseMemObject(yb);
    if (xb != NULL)
        clgc_clReleaseMemObject(xb);
    if (kernel != NULL)
        clgc_clReleaseKernel(kernel);
    pocl_close(&p);
    return bad;
}
