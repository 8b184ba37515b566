/* clgc-bench: what clgc costs, as ratios against the raw OpenCL call
 * measured in the same process.
 *
 *   clgc-bench call [--samples N] [--calls N] [--threads N]
 *   clgc-bench gc [options]            (bench/gc.c)
 *   clgc-bench wait [options]          (bench/wait.c)
 *   clgc-bench callback [options]      (bench/callback.c)
 *   clgc-bench queue [options]         (bench/queue.c)
 *
 * `call` times cheap calls (clGetPlatformInfo, clGetEventInfo on a
 * completed event) raw and through their clgc_ wrappers, once per runtime:
 *
 *   none        the default runtime, no hooks
 *   safepoint   a minimal VM in the safepoint form: a state word per
 *               thread and a stop flag that is never set
 *   callback    a safe_region hook that does two atomic stores
 *   boehm       the Boehm adapter, every call in a region
 *   boehm-skip  the Boehm adapter with CLGC_RUNTIME_SKIP_NONBLOCKING
 *
 * and, as the floor of any wrapper, the raw call from a bare forwarder:
 * a function that makes the call and returns through its own frame, as a
 * wrapper that does anything after the call must; for the Boehm runs also
 * the raw call inside a bare GC_do_blocking.
 * With --layer PATH (libclgc-layer, docs/layer.md) it then times the same
 * calls through the ICD loader against the driver's own function, taken
 * from the object's dispatch table: without the layer ("loader", what the
 * loader adds), with it and no runtime ("layer"), and with it and
 * CLGC_RUNTIME=boehm ("layer-boehm"); the layer's own cost is the
 * difference from the "loader" row.
 * A runtime can be installed once per process, so each runs in a child
 * process of its own; the variants alternate within it. With one thread
 * each figure is the median over the samples of the mean time of one call
 * in a sample; with --threads N, N threads call at once and the figure is
 * the median of the total calls per second. */

#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_BDWGC
#include <gc/gc.h>

#include "clgc/boehm.h"
#endif

#include <CL/cl_icd.h>

#include "bench.h"
#include "clgc.h"

static int samples = 51;
static long ncalls = 200000;
static int nthreads = 1;

/* The minimal VMs: a thread publishes "in native code" and "back", which
 * is all a cooperative collector needs to read. */
static __thread int vm_state;
static const int never_stop;

static int *
vm_word(void *data)
{
    return &vm_state;
}

static void
vm_safepoint(void *data)
{
}

static void *
two_stores(clgc_fn_t fn, void *arg)
{
    void *result;

    __atomic_store_n(&vm_state, CLGC_STATE_SAFE, __ATOMIC_RELEASE);
    result = fn(arg);
    __atomic_store_n(&vm_state, CLGC_STATE_RUNNING, __ATOMIC_RELEASE);
    return result;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double
bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return v[n / 2];
}

double
bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The calls under test, sharing one signature. */
typedef cl_int (*query_fn)(void *obj, cl_uint param, size_t size, void *value,
                           size_t *size_ret);

struct call {
    const char *name;
    query_fn raw, wrapped;
    void *obj;
    cl_uint param;
};

/* The floor of any wrapper: the raw call, and nothing else, from a
 * function that cannot jump to it (the empty asm after the call). */
static query_fn forward_to;

static __attribute__((noinline)) cl_int
forward(void *obj, cl_uint param, size_t size, void *value, size_t *size_ret)
{
    cl_int ret = forward_to(obj, param, size, value, size_ret);

    __asm__ volatile("" ::: "memory");
    return ret;
}

#ifdef HAVE_BDWGC
/* The raw call inside a bare GC_do_blocking: the floor for the adapter. */
struct bare_args {
    const struct call *c;
    cl_uint param;
    size_t size;
    void *value;
    cl_int ret;
};

static void *
bare_thunk(void *p)
{
    struct bare_args *a = p;

    a->ret = a->c->raw(a->c->obj, a->param, a->size, a->value, NULL);
    return NULL;
}

static const struct call *bare_call;

static cl_int
bare_gc_do_blocking(void *obj, cl_uint param, size_t size, void *value,
                    size_t *size_ret)
{
    struct bare_args a = {bare_call, param, size, value, 0};

    (void)obj;
    (void)size_ret;
    GC_do_blocking(bare_thunk, &a);
    return a.ret;
}
#endif

/* One sample: ncalls calls of fn on each of nthreads threads at once. */
struct loop {
    query_fn fn;
    void *obj;
    cl_uint param;
    pthread_barrier_t *start;
    int failed;
    double t0, t1; /* the loop's own start and end */
};

static void *
run_loop(void *p)
{
    struct loop *l = p;
    char value[256];

    /* Makes the thread known to the runtime: bdwgc registers it. */
    if (l->start != NULL) {
        if (clgc_thread_attach() < 0)
            l->failed = 1;
        pthread_barrier_wait(l->start);
    }
    l->t0 = bench_now_ns();
    for (long i = 0; i < ncalls; i++)
        if (l->fn(l->obj, l->param, sizeof(value), value, NULL) != 0)
            l->failed = 1;
    l->t1 = bench_now_ns();
    return NULL;
}

/* Nanoseconds per call (one thread) or calls per second (several). The
 * threads time themselves: with as many threads as cores, the main thread
 * may not run again until they are done. */
static double
sample(query_fn fn, const struct call *c)
{
    struct loop l[16];
    pthread_t t[16];
    pthread_barrier_t start;
    double t0, t1;

    if (nthreads == 1) {
        l[0] = (struct loop){fn, c->obj, c->param, NULL, 0, 0, 0};
        run_loop(&l[0]);
        if (l[0].failed)
            exit(3);
        return (l[0].t1 - l[0].t0) / (double)ncalls;
    }
    pthread_barrier_init(&start, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; i++) {
        l[i] = (struct loop){fn, c->obj, c->param, &start, 0, 0, 0};
        if (pthread_create(&t[i], NULL, run_loop, &l[i]) != 0)
            exit(3);
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    t0 = l[0].t0;
    t1 = l[0].t1;
    for (int i = 0; i < nthreads; i++) {
        if (l[i].failed)
            exit(3);
        t0 = l[i].t0 < t0 ? l[i].t0 : t0;
        t1 = l[i].t1 > t1 ? l[i].t1 : t1;
    }
    return (double)nthreads * (double)ncalls / ((t1 - t0) * 1e-9);
}

/* Raw, clgc, the forwarder and (bare) the bare GC_do_blocking, in turn
 * within each sample; "over raw" is the median of the paired
 * differences, as is the forwarder's. */
static void
measure(const char *runtime, const struct call *c, query_fn bare)
{
    query_fn fns[4] = {c->raw, c->wrapped, forward, bare};
    int n = bare != NULL ? 4 : 3;
    double *v[4], diff[2][1024], m[4];

    forward_to = c->raw;
    for (int k = 0; k < n; k++) {
        v[k] = calloc((size_t)samples, sizeof(double));
        if (v[k] == NULL)
            exit(2);
        sample(fns[k], c); /* warm up */
    }
    for (int s = 0; s < samples; s++) {
        for (int k = 0; k < n; k++)
            v[k][s] = sample(fns[k], c);
        diff[0][s] = v[1][s] - v[0][s];
        diff[1][s] = v[2][s] - v[0][s];
    }
    for (int k = 0; k < n; k++)
        m[k] = bench_median(v[k], samples);
    if (nthreads == 1)
        printf("%-10s %-17s %7.2f %7.2f %6.3fx %+8.2f %+8.2f", runtime, c->name,
               m[0], m[1], m[1] / m[0], bench_median(diff[0], samples),
               bench_median(diff[1], samples));
    else
        printf("%-10s %-17s %7.1fM %7.1fM %6.3fx %6.3fx", runtime, c->name,
               m[0] / 1e6, m[1] / 1e6, m[1] / m[0], m[2] / m[0]);
    if (bare != NULL)
        printf("  bare GC_do_blocking %.2f%s, clgc/bare %.3fx",
               m[3] / (nthreads == 1 ? 1 : 1e6), nthreads == 1 ? "" : "M",
               m[1] / m[3]);
    printf("\n");
    for (int k = 0; k < n; k++)
        free(v[k]);
}

/* The wrapper with a binding's hold around it (clgc/binding.h): the
 * "held" row, held against the wrapper's row above it. */
static clgc_box_t *held_box;

static cl_int
held_event_info(void *obj, cl_uint param, size_t size, void *value,
                size_t *size_ret)
{
    size_t mark = clgc_holds_mark();
    void *event = clgc_box_get(held_box);
    cl_int ret = clgc_clGetEventInfo(event, param, size, value, size_ret);

    (void)obj;
    clgc_holds_back_to(mark);
    return ret;
}

/* Installs the runtime named; "none" installs nothing. */
static int
install(const char *name)
{
    static const clgc_runtime_t safepoint = {.version = CLGC_RUNTIME_VERSION,
                                             .name = "safepoint",
                                             .thread_state = vm_word,
                                             .stop_requested = &never_stop,
                                             .safepoint = vm_safepoint};
    static const clgc_runtime_t callback = {.version = CLGC_RUNTIME_VERSION,
                                            .name = "callback",
                                            .safe_region = two_stores};

    if (strcmp(name, "none") == 0)
        return 0;
    if (strcmp(name, "safepoint") == 0)
        return clgc_runtime_install(&safepoint);
    if (strcmp(name, "callback") == 0)
        return clgc_runtime_install(&callback);
#ifdef HAVE_BDWGC
    GC_INIT();
    if (strcmp(name, "boehm") == 0)
        return clgc_boehm_install(0);
    if (strcmp(name, "boehm-skip") == 0)
        return clgc_boehm_install(CLGC_RUNTIME_SKIP_NONBLOCKING);
#endif
    return -1;
}

static int
run_call(const void *arg)
{
    const char *runtime = arg;
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_event event;
    cl_int err;
    query_fn bare = NULL;

    if (install(runtime) != 0)
        return 1;
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

    const struct call calls[] = {
        {"clGetPlatformInfo", (query_fn)clGetPlatformInfo,
         (query_fn)clgc_clGetPlatformInfo, platform, CL_PLATFORM_PROFILE},
        {"clGetEventInfo", (query_fn)clGetEventInfo,
         (query_fn)clgc_clGetEventInfo, event,
         CL_EVENT_COMMAND_EXECUTION_STATUS},
        {"clGetEventInfo held", (query_fn)clGetEventInfo, held_event_info,
         event, CL_EVENT_COMMAND_EXECUTION_STATUS},
    };

    held_box = clgc_box_new(event, NULL);
    if (held_box == NULL)
        return 1;
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
#ifdef HAVE_BDWGC
        bare_call = &calls[i];
        if (strncmp(runtime, "boehm", 5) == 0)
            bare = bare_gc_do_blocking;
#endif
        measure(runtime, &calls[i], bare);
    }
    clgc_box_free(held_box);
    clReleaseEvent(event);
    clReleaseContext(context);
    return 0;
}

/* --layer: the layer's path, or NULL. --runtime: the one runtime to run,
 * or NULL for all. */
static const char *layer_path, *only_runtime;

/* A child of the layer mode: OPENCL_LAYERS and CLGC_RUNTIME are set before
 * the process's first OpenCL call, where the loader reads them. */
static int
run_layer(const void *arg)
{
    const char *mode = arg;
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_event event;
    cl_int err;

    if (strcmp(mode, "loader") != 0)
        setenv("OPENCL_LAYERS", layer_path, 1);
    setenv("CLGC_RUNTIME", strcmp(mode, "layer-boehm") == 0 ? "boehm" : "none",
           1);
#ifdef HAVE_BDWGC
    GC_INIT();
#endif
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

    /* Every ICD object starts with its driver's dispatch table. */
    const struct _cl_icd_dispatch *pd = *(void *const *)platform;
    const struct _cl_icd_dispatch *ed = *(void *const *)event;
    const struct call calls[] = {
        {"clGetPlatformInfo", (query_fn)pd->clGetPlatformInfo,
         (query_fn)clGetPlatformInfo, platform, CL_PLATFORM_PROFILE},
        {"clGetEventInfo", (query_fn)ed->clGetEventInfo,
         (query_fn)clGetEventInfo, event, CL_EVENT_COMMAND_EXECUTION_STATUS},
    };
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
        measure(mode, &calls[i], NULL);
    clReleaseEvent(event);
    clReleaseContext(context);
    return 0;
}

static int
bench_call(void)
{
    static const char *runtimes[] = {"none", "safepoint", "callback",
#ifdef HAVE_BDWGC
                                     "boehm", "boehm-skip"
#endif
    };
    size_t n = sizeof(runtimes) / sizeof(runtimes[0]), first = 0;
    int failed = 0;

    if (only_runtime != NULL) {
        while (first < n && strcmp(only_runtime, runtimes[first]) != 0)
            first++;
        if (first == n) {
            fprintf(stderr, "clgc-bench: no runtime '%s'\n", only_runtime);
            return 2;
        }
        n = first + 1;
    }
    if (nthreads == 1) {
        printf("# ns per call, median of %d samples of %ld calls; forward: "
               "a bare forwarder's call over raw\n",
               samples, ncalls);
        printf("%-10s %-17s %7s %7s %7s %8s %8s\n", "runtime", "call", "raw",
               "clgc", "ratio", "over raw", "forward");
    } else {
        printf("# calls per second on %d threads at once, median of %d "
               "samples of %ld calls a thread; forward: a bare forwarder's "
               "ratio\n",
               nthreads, samples, ncalls);
        printf("%-10s %-17s %8s %8s %7s %7s\n", "runtime", "call", "raw",
               "clgc", "ratio", "forward");
    }
    fflush(stdout);
    for (size_t i = first; i < n; i++)
        failed |= bench_in_child(run_call, runtimes[i], runtimes[i]);
    if (layer_path != NULL) {
        static const char *modes[] = {"loader", "layer",
#ifdef HAVE_BDWGC
                                      "layer-boehm"
#endif
        };

        printf("# the loader's call against the driver's own function\n");
        fflush(stdout);
        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
            failed |= bench_in_child(run_layer, modes[i], modes[i]);
    }
    return failed;
}

int
bench_in_child(int (*run)(const void *arg), const void *arg, const char *what)
{
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        int rc = run(arg);

        fflush(stdout);
        _exit(rc);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "clgc-bench: the '%s' run failed\n", what);
        return 1;
    }
    return 0;
}

static void
usage(FILE *f)
{
    fprintf(f, "usage: clgc-bench call [--samples N] [--calls N] "
               "[--threads N] [--runtime NAME] [--layer PATH]\n"
               "       clgc-bench gc [--help]\n"
               "       clgc-bench wait [--samples N]\n"
               "       clgc-bench callback [--samples N] [--calls N] "
               "[--threads N]\n"
               "       clgc-bench queue [--samples N] [--each N]\n");
}

int
main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "gc") == 0)
        return bench_gc(argc - 1, argv + 1);
    if (strcmp(argv[1], "wait") == 0)
        return bench_wait(argc - 1, argv + 1);
    if (strcmp(argv[1], "queue") == 0)
        return bench_queue(argc - 1, argv + 1);
    if (strcmp(argv[1], "callback") == 0)
        return bench_callback(argc - 1, argv + 1);
    if (strcmp(argv[1], "call") != 0) {
        usage(stderr);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
            samples = atoi(argv[++i]);
        else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
            ncalls = atol(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--layer") == 0 && i + 1 < argc)
            layer_path = argv[++i];
        else if (strcmp(argv[i], "--runtime") == 0 && i + 1 < argc)
            only_runtime = argv[++i];
        else {
            usage(stderr);
            return 2;
        }
    }
    if (samples < 1 || samples > 1024 || ncalls < 1 || nthreads < 1 ||
        nthreads > 16) {
        usage(stderr);
        return 2;
    }
    return bench_call();
}
