/* clgc-bench: what clgc costs, as ratios against the raw OpenCL call
 * measured in the same process.
 *
 *   clgc-bench call [--samples N] [--calls N]
 *
 * `call` times cheap calls (clGetPlatformInfo, clGetEventInfo on a
 * completed event) raw and through their clgc_ wrappers, once per runtime:
 * the default no-op runtime ("none") and a minimal one whose region hook
 * does two atomic stores, as a safepoint VM's does ("minimal"). A runtime
 * can be installed once
 * per process, so each runtime runs in a child process of its own; raw and
 * wrapped calls alternate within it. Each figure is the median over the
 * samples of the mean time of one call in a sample. */

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clgc.h"

static int samples = 51;
static long ncalls = 200000;

/* The minimal runtime: the thread publishes "in native code" and "back",
 * which is all a cooperative collector needs to read. */
static __thread atomic_int vm_state;

static void *
minimal_safe(clgc_fn_t fn, void *arg)
{
    void *result;

    atomic_store_explicit(&vm_state, 1, memory_order_release);
    result = fn(arg);
    atomic_store_explicit(&vm_state, 0, memory_order_release);
    return result;
}

static const clgc_runtime_t runtimes[] = {
    {.version = CLGC_RUNTIME_VERSION, .name = "none"},
    {.version = CLGC_RUNTIME_VERSION,
     .name = "minimal",
     .safe_region = minimal_safe},
};

static double
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return v[n / 2];
}

/* The calls under test, raw and wrapped, sharing one signature. */
typedef cl_int (*query_fn)(void *obj, cl_uint param, size_t size, void *value,
                           size_t *size_ret);

struct pair {
    const char *name;
    query_fn raw, wrapped;
    void *obj;
    cl_uint param;
};

static double
time_calls(query_fn fn, void *obj, cl_uint param)
{
    char value[256];
    double t0 = now_ns();

    for (long i = 0; i < ncalls; i++)
        if (fn(obj, param, sizeof(value), value, NULL) != CL_SUCCESS)
            exit(3);
    return (now_ns() - t0) / (double)ncalls;
}

static void
measure(const char *runtime, const struct pair *p)
{
    double *raw = calloc((size_t)samples, sizeof(double));
    double *wrapped = calloc((size_t)samples, sizeof(double));
    double *diff = calloc((size_t)samples, sizeof(double));
    double r, w;

    if (raw == NULL || wrapped == NULL || diff == NULL)
        exit(2);
    time_calls(p->raw, p->obj, p->param); /* warm up */
    time_calls(p->wrapped, p->obj, p->param);
    for (int s = 0; s < samples; s++) {
        raw[s] = time_calls(p->raw, p->obj, p->param);
        wrapped[s] = time_calls(p->wrapped, p->obj, p->param);
        diff[s] = wrapped[s] - raw[s];
    }
    r = median(raw, samples);
    w = median(wrapped, samples);
    printf("%-8s %-18s %8.2f %9.2f %7.3fx %+9.2f\n", runtime, p->name, r, w,
           w / r, median(diff, samples));
    free(raw);
    free(wrapped);
    free(diff);
}

static int
run_call(const clgc_runtime_t *rt)
{
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_event event;
    cl_int err;

    /* "none" is the default: installing nothing measures it. */
    if (rt->safe_region != NULL) {
        if (clgc_runtime_install(rt) != CLGC_OK)
            return 1;
    }
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) !=
            CL_SUCCESS)
        return 1;
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return 1;
    event = clCreateUserEvent(context, &err);
    if (err != CL_SUCCESS || clSetUserEventStatus(event, CL_COMPLETE) != 0)
        return 1;

    const struct pair pairs[] = {
        {"clGetPlatformInfo", (query_fn)clGetPlatformInfo,
         (query_fn)clgc_clGetPlatformInfo, platform, CL_PLATFORM_PROFILE},
        {"clGetEventInfo", (query_fn)clGetEventInfo,
         (query_fn)clgc_clGetEventInfo, event,
         CL_EVENT_COMMAND_EXECUTION_STATUS},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
        measure(rt->name, &pairs[i]);
    clReleaseEvent(event);
    clReleaseContext(context);
    return 0;
}

static int
bench_call(void)
{
    int failed = 0;

    printf("# per-call time in ns, median of %d samples of %ld calls\n",
           samples, ncalls);
    printf("%-8s %-18s %8s %9s %8s %9s\n", "runtime", "call", "raw", "clgc",
           "ratio", "over raw");
    fflush(stdout);
    for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++) {
        int status;
        pid_t pid = fork();

        if (pid == 0) {
            int rc = run_call(&runtimes[i]);

            fflush(stdout);
            _exit(rc);
        }
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "clgc-bench: the '%s' run failed\n",
                    runtimes[i].name);
            failed = 1;
        }
    }
    return failed;
}

static void
usage(FILE *f)
{
    fprintf(f, "usage: clgc-bench call [--samples N] [--calls N]\n");
}

int
main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
            samples = atoi(argv[++i]);
        else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
            ncalls = atol(argv[++i]);
        else {
            usage(stderr);
            return 2;
        }
    }
    if (samples < 1 || ncalls < 1) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "call") == 0)
        return bench_call();
    usage(stderr);
    return 2;
}
