/* clgc-bench wait: latency of one launch + wait of a small kernel, raw
 * clWaitForEvents against clgc_wait_for_events with several polling
 * budgets, in the same process (no runtime installed).
 *
 *   clgc-bench wait [--samples N] [--launches N] [--items N]
 *
 * Each figure is the median over the samples of the mean latency of a
 * launch in a sample. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "clgc.h"

static const char *saxpy_src =
    "__kernel void saxpy(float a, __global const float *x,\n"
    "                    __global float *y)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    y[i] = a * x[i] + y[i];\n"
    "}\n";

struct launch {
    cl_command_queue queue;
    cl_kernel kernel;
    size_t items;
};

/* budget < 0: the raw clWaitForEvents. */
static double
sample(const struct launch *l, long budget, int launches)
{
    double t0 = bench_now_ns();

    if (budget >= 0)
        clgc_wait_set_poll_ns(budget);
    for (int i = 0; i < launches; i++) {
        cl_event ev;

        if (clEnqueueNDRangeKernel(l->queue, l->kernel, 1, NULL, &l->items,
                                   NULL, 0, NULL, &ev) != CL_SUCCESS)
            exit(3);
        if ((budget < 0 ? clWaitForEvents(1, &ev)
                        : clgc_wait_for_events(1, &ev)) != CL_SUCCESS)
            exit(3);
        clReleaseEvent(ev);
    }
    return (bench_now_ns() - t0) / launches / 1e3;
}

int
bench_wait(int argc, char **argv)
{
    static const long budgets[] = {-1, 0, 5000, 20000, 50000, 100000};
    enum { N = sizeof(budgets) / sizeof(budgets[0]) };
    int samples = 21, launches = 200;
    struct launch l = {NULL, NULL, 4096};
    double *v[N];
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_program program;
    cl_mem x, y;
    float a = 2.0f;
    cl_int err;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
            samples = atoi(argv[++i]);
        else if (strcmp(argv[i], "--launches") == 0 && i + 1 < argc)
            launches = atoi(argv[++i]);
        else if (strcmp(argv[i], "--items") == 0 && i + 1 < argc)
            l.items = (size_t)atol(argv[++i]);
        else {
            fprintf(stderr, "usage: clgc-bench wait [--samples N] "
                            "[--launches N] [--items N]\n");
            return 2;
        }
    }
    if (samples < 1 || launches < 1 || l.items < 1)
        return 2;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != 0)
        return 1;
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    l.queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    program = clCreateProgramWithSource(context, 1, &saxpy_src, NULL, &err);
    if (clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS)
        return 1;
    l.kernel = clCreateKernel(program, "saxpy", &err);
    x = clCreateBuffer(context, CL_MEM_READ_WRITE, l.items * sizeof(float),
                       NULL, &err);
    y = clCreateBuffer(context, CL_MEM_READ_WRITE, l.items * sizeof(float),
                       NULL, &err);
    if (err != CL_SUCCESS)
        return 1;
    clSetKernelArg(l.kernel, 0, sizeof(a), &a);
    clSetKernelArg(l.kernel, 1, sizeof(x), &x);
    clSetKernelArg(l.kernel, 2, sizeof(y), &y);

    for (int k = 0; k < N; k++) {
        v[k] = calloc((size_t)samples, sizeof(double));
        if (v[k] == NULL)
            return 2;
        sample(&l, budgets[k], launches); /* warm up */
    }
    for (int s = 0; s < samples; s++)
        for (int k = 0; k < N; k++)
            v[k][s] = sample(&l, budgets[k], launches);
    printf("# launch + wait of saxpy over %zu items, us: median of %d "
           "samples of %d launches\n",
           l.items, samples, launches);
    printf("%-26s %9s %8s\n", "wait", "latency", "vs raw");
    for (int k = 0; k < N; k++) {
        double m = bench_median(v[k], samples);
        char name[64];

        if (budgets[k] < 0)
            snprintf(name, sizeof(name), "clWaitForEvents");
        else
            snprintf(name, sizeof(name), "clgc, poll %ld us",
                     budgets[k] / 1000);
        if (k == 0)
            v[0][0] = m;
        printf("%-26s %9.1f %7.3fx\n", name, m, m / v[0][0]);
    }
    for (int k = 0; k < N; k++)
        free(v[k]);
    clReleaseMemObject(x);
    clReleaseMemObject(y);
    clReleaseKernel(l.kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(l.queue);
    clReleaseContext(context);
    return 0;
}
