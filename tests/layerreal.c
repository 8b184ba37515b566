/* What real programs do that plain OpenCL survives, for tests/layer.sh:
 * an unmodified program (libOpenCL only, no clgc header), run with and
 * without OPENCL_LAYERS naming libclgc-layer, on a platform named on the
 * command line (PoCL, or Oclgrind, an OpenCL 1.2 driver).
 *
 *   layerreal PLATFORM selfrelease
 *   layerreal PLATFORM released-queue
 *   layerreal PLATFORM fork
 *   layerreal PLATFORM queue-2.0
 *
 * Each prints what it saw, which the script compares between the two
 * runs, and exits 0 when the program could go on. Every mode runs under
 * alarm(), so that a hang is a failure with a word on stderr, not a test
 * that never ends. */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

/* Seconds before SIGALRM ends a mode that hangs, and a forked child. */
#define LIMIT_S 120
#define CHILD_LIMIT_S 60
#define MARKERS 10000

struct cl {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
};

static void
die(const char *what, cl_int err)
{
    printf("FAIL %s: %d\n", what, err);
    exit(1);
}

static void
on_alarm(int sig)
{
    static const char msg[] = "FAIL: still running after the time limit\n";

    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(2);
}

static cl_platform_id
find_platform(const char *name)
{
    cl_platform_id ids[16];
    cl_uint n = 0;

    if (clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
        return NULL;
    for (cl_uint i = 0; i < n && i < 16; i++) {
        char got[256] = "";

        clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof got, got, NULL);
        if (strstr(got, name) != NULL)
            return ids[i];
    }
    return NULL;
}

/* A context and an in-order queue made the OpenCL 1.2 way, which every
 * driver has (Oclgrind has nothing newer). */
static void
open_cl(struct cl *cl, const char *platform_name)
{
    cl_platform_id platform = find_platform(platform_name);
    cl_int err;

    if (platform == NULL)
        die("no such platform", 0);
    err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &cl->device, NULL);
    if (err != CL_SUCCESS)
        die("clGetDeviceIDs", err);
    cl->context = clCreateContext(NULL, 1, &cl->device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        die("clCreateContext", err);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    cl->queue = clCreateCommandQueue(cl->context, cl->device, 0, &err);
#pragma GCC diagnostic pop
    if (err != CL_SUCCESS)
        die("clCreateCommandQueue", err);
}

static void
close_cl(struct cl *cl)
{
    if (cl->queue != NULL)
        clReleaseCommandQueue(cl->queue);
    clReleaseContext(cl->context);
}

static volatile int released;

/* An event callback that drops the last reference to its own event, as
 * a binding does that hands the event's ownership to its callback. */
static void CL_CALLBACK
release_own(cl_event event, cl_int status, void *data)
{
    (void)status;
    (void)data;
    clReleaseEvent(event);
    __atomic_add_fetch(&released, 1, __ATOMIC_SEQ_CST);
}

/* One event complete before its callback is set (PoCL calls it inline,
 * in clSetEventCallback; Oclgrind never calls it), then MARKERS markers whose
 * callbacks come while they run (on PoCL's own thread), each releasing its
 * event. */
static int
selfrelease(struct cl *cl)
{
    cl_event ev;
    cl_int err;

    err = clEnqueueMarkerWithWaitList(cl->queue, 0, NULL, &ev);
    if (err == CL_SUCCESS)
        err = clWaitForEvents(1, &ev);
    if (err == CL_SUCCESS)
        err = clSetEventCallback(ev, CL_COMPLETE, release_own, NULL);
    if (err != CL_SUCCESS)
        die("the complete event's callback", err);
    for (int i = 0; i < MARKERS; i++) {
        err = clEnqueueMarkerWithWaitList(cl->queue, 0, NULL, &ev);
        if (err == CL_SUCCESS)
            err = clSetEventCallback(ev, CL_COMPLETE, release_own, NULL);
        if (err != CL_SUCCESS)
            die("a marker's callback", err);
        if (i % 100 == 0)
            clFlush(cl->queue);
    }
    if ((err = clFinish(cl->queue)) != CL_SUCCESS)
        die("clFinish", err);
    /* The callbacks may still be on their way after clFinish; the alarm
     * bounds this wait for them. */
    while (__atomic_load_n(&released, __ATOMIC_SEQ_CST) < MARKERS + 1)
        usleep(1000);
    printf("callbacks that released their event: %d\n", released);
    return 0;
}

/* A wait for an event whose queue the program has released: OpenCL keeps
 * the event valid, and the driver may free the queue (Oclgrind does). */
static int
released_queue(struct cl *cl)
{
    cl_event ev;
    cl_int err = clEnqueueMarkerWithWaitList(cl->queue, 0, NULL, &ev);

    if (err != CL_SUCCESS)
        die("clEnqueueMarkerWithWaitList", err);
    clReleaseCommandQueue(cl->queue);
    cl->queue = NULL;
    printf("clWaitForEvents after the queue's release: %d\n",
           clWaitForEvents(1, &ev));
    clReleaseEvent(ev);
    return 0;
}

/* clFinish in a child forked after the parent used the queue: whatever
 * the driver answers there, the child must get an answer. */
static int
forked_finish(struct cl *cl)
{
    cl_event ev;
    int status;
    pid_t pid;

    if (clEnqueueMarkerWithWaitList(cl->queue, 0, NULL, &ev) != CL_SUCCESS ||
        clWaitForEvents(1, &ev) != CL_SUCCESS)
        die("the parent's marker", 0);
    clReleaseEvent(ev);
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        die("fork", 0);
    if (pid == 0) {
        /* A child has no alarm of its parent's. */
        alarm(CHILD_LIMIT_S);
        _exit(clFinish(cl->queue) == CL_SUCCESS ? 0 : 1);
    }
    if (waitpid(pid, &status, 0) != pid)
        die("waitpid", 0);
    if (WIFEXITED(status))
        printf("the child's clFinish: exit %d\n", WEXITSTATUS(status));
    else
        printf("the child's clFinish: signal %d\n", WTERMSIG(status));
    return WIFEXITED(status) ? 0 : 1;
}

/* clCreateCommandQueueWithProperties, OpenCL 2.0's, on a driver that may
 * be older: it must return (a queue, or an error), whatever it says. */
static int
queue_20(struct cl *cl)
{
    cl_command_queue q;
    cl_int err = CL_SUCCESS;

    q = clCreateCommandQueueWithProperties(cl->context, cl->device, NULL, &err);
    printf("clCreateCommandQueueWithProperties returned: %s\n",
           q != NULL ? "a queue" : "an error");
    if (q != NULL)
        clReleaseCommandQueue(q);
    return 0;
}

int
main(int argc, char **argv)
{
    struct cl cl = {0};
    int ret;

    if (argc != 3) {
        fprintf(stderr, "usage: layerreal PLATFORM MODE\n");
        return 2;
    }
    signal(SIGALRM, on_alarm);
    alarm(LIMIT_S);
    open_cl(&cl, argv[1]);
    if (strcmp(argv[2], "selfrelease") == 0)
        ret = selfrelease(&cl);
    else if (strcmp(argv[2], "released-queue") == 0)
        ret = released_queue(&cl);
    else if (strcmp(argv[2], "fork") == 0)
        ret = forked_finish(&cl);
    else if (strcmp(argv[2], "queue-2.0") == 0)
        ret = queue_20(&cl);
    else {
        fprintf(stderr, "layerreal: unknown mode %s\n", argv[2]);
        ret = 2;
    }
    close_cl(&cl);
    return ret;
}
