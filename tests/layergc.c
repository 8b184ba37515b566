/* An unmodified bdwgc program for the layer's tests (tests/layer.sh): it
 * links bdwgc and libOpenCL, never clgc. One thread, registered with
 * bdwgc, builds a program on PoCL and waits for a kernel held back by a
 * user event; the main thread collects while that thread is blocked in
 * clWaitForEvents, then releases the kernel. It prints how many times the
 * collections suspended the OpenCL thread: with the layer and
 * CLGC_RUNTIME=boehm the wait runs in a safe region (none), without it
 * every collection stops the thread. It also prints whether the kernel's
 * event callback, which PoCL calls on a thread of its own, found that
 * thread registered with bdwgc: the layer hands PoCL clgc's trampoline,
 * which attaches it (the Boehm adapter registers it), so that the
 * callback may use the collected heap; without the layer it may not.
 *
 *   layergc COLLECTIONS */

/* Threads register themselves, as in check_boehm: bdwgc's pthread_create
 * wrapper and ASan disagree over the thread's signal stack at its exit. */
#define GC_THREADS 1
#define GC_NO_THREAD_REDIRECTS 1
#include <gc/gc.h>

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include "gcevents.h"

static const char *source =
    "__kernel void k(__global int *a) { a[get_global_id(0)] = 7; }";

static atomic_long cl_tid;   /* the OpenCL thread's id, once it waits */
static cl_event gate;        /* the user event the kernel waits for */
static atomic_int cl_status; /* what the OpenCL thread ended with */
static atomic_int cb_registered = -1; /* the callback's thread: registered? */

static void CL_CALLBACK
on_done(cl_event event, cl_int status, void *data)
{
    (void)event;
    (void)status;
    (void)data;
    atomic_store(&cb_registered, GC_thread_is_registered());
}

#define CHECK(call)                                                            \
    do {                                                                       \
        cl_int err_ = (call);                                                  \
        if (err_ != CL_SUCCESS) {                                              \
            fprintf(stderr, "layergc: %s: %d\n", #call, err_);                 \
            atomic_store(&cl_status, 1);                                       \
            atomic_store(&cl_tid, -1);                                         \
            return NULL;                                                       \
        }                                                                      \
    } while (0)

static cl_platform_id
pocl(void)
{
    cl_platform_id ids[16];
    cl_uint n = 0;

    if (clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
        return NULL;
    for (cl_uint i = 0; i < n && i < 16; i++) {
        char name[128] = "";

        clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strstr(name, "Portable Computing Language") != NULL)
            return ids[i];
    }
    return NULL;
}

static void *opencl_work(void);

static void *
opencl_thread(void *unused)
{
    struct GC_stack_base sb;

    (void)unused;
    if (GC_get_stack_base(&sb) != GC_SUCCESS ||
        GC_register_my_thread(&sb) != GC_SUCCESS) {
        fprintf(stderr, "layergc: cannot register the OpenCL thread\n");
        atomic_store(&cl_status, 1);
        atomic_store(&cl_tid, -1);
        return NULL;
    }
    opencl_work();
    GC_unregister_my_thread();
    return NULL;
}

static void *
opencl_work(void)
{
    cl_platform_id platform = pocl();
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_mem buf;
    cl_event done;
    cl_int err, out[4] = {0};
    const size_t global = 4;

    if (platform == NULL) {
        fprintf(stderr, "layergc: no PoCL platform\n");
        atomic_store(&cl_status, 77);
        atomic_store(&cl_tid, -1);
        return NULL;
    }
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    queue = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    program = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL));
    kernel = clCreateKernel(program, "k", &err);
    CHECK(err);
    buf = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof out, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(kernel, 0, sizeof buf, &buf));
    gate = clCreateUserEvent(ctx, &err);
    CHECK(err);
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 1,
                                 &gate, &done));
    CHECK(clSetEventCallback(done, CL_COMPLETE, on_done, NULL));
    CHECK(clFlush(queue));
    atomic_store(&cl_tid, (long)syscall(SYS_gettid));
    CHECK(clWaitForEvents(1, &done));
    while (atomic_load(&cb_registered) < 0) /* it comes after the wait */
        sched_yield();
    CHECK(clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof out, out, 0, NULL,
                              NULL));
    CHECK(clFinish(queue));
    if (out[3] != 7) {
        fprintf(stderr, "layergc: the kernel wrote %d\n", out[3]);
        atomic_store(&cl_status, 1);
    }
    clReleaseEvent(done); /* gate is main's, which may still be in it */
    clReleaseMemObject(buf);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    return NULL;
}

/* Whether thread `tid` is asleep in the kernel (state S in its stat):
 * once it has said it is about to wait, that is the wait. */
static int
sleeping(long tid)
{
    char path[64], line[512], *close;
    FILE *f;
    int asleep = 0;

    snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    if (fgets(line, sizeof line, f) != NULL &&
        (close = strrchr(line, ')')) != NULL)
        asleep = close[1] == ' ' && close[2] == 'S';
    fclose(f);
    return asleep;
}

int
main(int argc, char **argv)
{
    int collections = argc > 1 ? atoi(argv[1]) : 5;
    pthread_t thread;
    long tid;

    /* docs/boehm.md: PoCL's LLVM takes SIGXCPU, bdwgc's default. */
    GC_set_thr_restart_signal(SIGRTMIN + 2);
    GC_INIT();
    GC_allow_register_threads();
    boehm_count_suspensions();
    if (pthread_create(&thread, NULL, opencl_thread, NULL) != 0)
        return 1;
    while ((tid = atomic_load(&cl_tid)) == 0 || (tid > 0 && !sleeping(tid)))
        sched_yield();
    if (tid > 0) {
        boehm_watch(thread);
        for (int i = 0; i < collections; i++)
            GC_gcollect();
        boehm_unwatch();
        clSetUserEventStatus(gate, CL_COMPLETE);
    }
    pthread_join(thread, NULL);
    if (tid > 0)
        clReleaseEvent(gate);
    printf("suspended %lu\n", boehm_suspended());
    printf("callback on a registered thread %d\n", atomic_load(&cb_registered));
    return atomic_load(&cl_status);
}
