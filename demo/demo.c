/* clgc-demo: builds and runs a kernel on the first OpenCL platform through
 * clgc's wrappers, with a runtime that counts what it is told, and prints
 * what that runtime saw. */

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "clgc.h"

#define N 4096

static const char *source =
    "__kernel void saxpy(float a, __global const float *x,\n"
    "                    __global float *y)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    y[i] = a * x[i] + y[i];\n"
    "}\n";

/* The runtime: counts safe regions and remembers how deep the thread is,
 * so the build notification can report where PoCL ran it. */
static atomic_ulong regions;
static unsigned long calls;

/* Counts the clgc_cl* calls the demo makes, to set beside the regions. */
#define CL(fn) (calls++, fn)
static __thread int depth;

static void *
count_safe(clgc_fn_t fn, void *arg)
{
    void *result;

    atomic_fetch_add(&regions, 1);
    depth++;
    result = fn(arg);
    depth--;
    return result;
}

static void CL_CALLBACK
notify(cl_program program, void *seen_depth)
{
    *(int *)seen_depth = depth;
}

#define CHECK(what, err)                                                       \
    do {                                                                       \
        if ((err) != CL_SUCCESS) {                                             \
            fprintf(stderr, "clgc-demo: %s failed: OpenCL error %d\n", what,   \
                    (int)(err));                                               \
            return EXIT_FAILURE;                                               \
        }                                                                      \
    } while (0)

int
main(void)
{
    static const clgc_runtime_t counter = {.version = CLGC_RUNTIME_VERSION,
                                           .name = "counter",
                                           .safe_region = count_safe};
    static float x[N], y[N];
    float a = 2.0f;
    size_t global = N;
    int notify_depth = -1, wrong = 0;
    char name[128], device_name[128];
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_mem bx, by;
    cl_int err;

    if (clgc_runtime_install(&counter) != CLGC_OK)
        return EXIT_FAILURE;
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    CHECK("clGetPlatformIDs", CL(clgc_clGetPlatformIDs)(1, &platform, NULL));
    CHECK("clGetPlatformInfo",
          CL(clgc_clGetPlatformInfo)(platform, CL_PLATFORM_NAME, sizeof(name),
                                     name, NULL));
    CHECK("clGetDeviceIDs",
          CL(clgc_clGetDeviceIDs)(platform, CL_DEVICE_TYPE_ALL, 1, &device,
                                  NULL));
    CHECK("clGetDeviceInfo",
          CL(clgc_clGetDeviceInfo)(device, CL_DEVICE_NAME, sizeof(device_name),
                                   device_name, NULL));
    ctx = CL(clgc_clCreateContext)(NULL, 1, &device, NULL, NULL, &err);
    CHECK("clCreateContext", err);
    queue =
        CL(clgc_clCreateCommandQueueWithProperties)(ctx, device, NULL, &err);
    CHECK("clCreateCommandQueueWithProperties", err);
    program = CL(clgc_clCreateProgramWithSource)(ctx, 1, &source, NULL, &err);
    CHECK("clCreateProgramWithSource", err);
    CHECK("clBuildProgram", CL(clgc_clBuildProgram)(program, 1, &device, "",
                                                    notify, &notify_depth));
    kernel = CL(clgc_clCreateKernel)(program, "saxpy", &err);
    CHECK("clCreateKernel", err);
    bx = CL(clgc_clCreateBuffer)(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                 sizeof(x), x, &err);
    CHECK("clCreateBuffer", err);
    by = CL(clgc_clCreateBuffer)(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                 sizeof(y), y, &err);
    CHECK("clCreateBuffer", err);
    CHECK("clSetKernelArg", CL(clgc_clSetKernelArg)(kernel, 0, sizeof(a), &a));
    CHECK("clSetKernelArg",
          CL(clgc_clSetKernelArg)(kernel, 1, sizeof(bx), &bx));
    CHECK("clSetKernelArg",
          CL(clgc_clSetKernelArg)(kernel, 2, sizeof(by), &by));
    CHECK("clEnqueueNDRangeKernel",
          CL(clgc_clEnqueueNDRangeKernel)(queue, kernel, 1, NULL, &global, NULL,
                                          0, NULL, NULL));
    CHECK("clEnqueueReadBuffer",
          CL(clgc_clEnqueueReadBuffer)(queue, by, CL_TRUE, 0, sizeof(y), y, 0,
                                       NULL, NULL));
    for (int i = 0; i < N; i++)
        wrong += y[i] != a * (float)i + 1.0f;
    CL(clgc_clReleaseMemObject)(bx);
    CL(clgc_clReleaseMemObject)(by);
    CL(clgc_clReleaseKernel)(kernel);
    CL(clgc_clReleaseProgram)(program);
    CL(clgc_clReleaseCommandQueue)(queue);
    CL(clgc_clReleaseContext)(ctx);

    printf("platform:            %s\n", name);
    printf("device:              %s\n", device_name);
    printf("saxpy, %d floats:  %s\n", N, wrong == 0 ? "correct" : "WRONG");
    printf("OpenCL calls:        %lu, through clgc\n", calls);
    printf("safe regions:        %lu\n", atomic_load(&regions));
    printf("build notification:  ran at region depth %d (inside the build)\n",
           notify_depth);
    printf("region depth now:    %u\n", clgc_thread_region_depth());
    return wrong == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
