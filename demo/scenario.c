/* clgc-demo's scenario, run in a child process per runtime (a runtime is
 * installed once per process).
 *
 * Thread A, one of the runtime's threads, builds a program and then runs a
 * long kernel and waits for it: first through clgc's wrappers and
 * clgc_wait_for_events, then with the raw OpenCL calls. Meanwhile two
 * other threads of the runtime run: a collector, which allocates and
 * collects every millisecond or so, and a ticker, a mutator that allocates
 * and ticks every millisecond. Both sleep inside a safe region, as a VM's
 * own blocking calls do. Counters say what the runtime got done while A
 * was in OpenCL. Then the main thread times short launches and waits four
 * ways: clWaitForEvents, clgc_wait_for_events, a completion queue, and
 * a fourth without clgc, the seed's (bench/seed.h). */

#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_BDWGC
/* Threads are registered explicitly, through clgc_thread_attach. */
#define GC_THREADS 1
#define GC_NO_THREAD_REDIRECTS 1
#include <gc/gc.h>

#include "../tests/gcevents.h"
#include "clgc/boehm.h"
#endif

#include "../bench/seed.h"
#include "../bench/shuffle.h"
#include "../tests/refvm.h"
#include "../tests/slow.h"
#include "clgc.h"
#include "demo.h"

/* Trips of the short kernel whose waits are timed: a few microseconds of
 * work, so the launch and the wait are most of the time. */
#define SHORT_TRIPS 1000L

/* The program: spin, whose one work item loops n times (on a CPU device
 * the kernel takes one core and leaves the other to the runtime's threads,
 * as a GPU would leave all), and slow (tests/slow.h), 4^5 copies of a
 * statement that take PoCL a few hundred ms to compile, and new in every
 * build so that PoCL's cache cannot answer it. */
static const char spin_source[] =
    "__kernel void spin(__global float *x, long n)\n"
    "{\n"
    "    float a = x[get_global_id(0)];\n"
    "    for (long i = 0; i < n; i++)\n"
    "        a = a * 0.999f + 0.5f;\n"
    "    x[get_global_id(0)] = a;\n"
    "}\n";

/* ------------------------------------------------------------------------
 * The runtimes, as the scenario's threads use them. */

struct demo_vm {
    const char *name;
    int (*install)(void);
    void (*thread_start)(void); /* make the calling thread a mutator */
    void (*thread_stop)(void);
    void (*alloc)(void);   /* one small object, soon garbage */
    void (*collect)(void); /* NULL: nothing collects */
    void (*poll)(void);    /* the safepoint poll */
    /* Collections completed so far, counted by the collector while the
     * world is stopped. */
    unsigned long (*collections)(void);
    /* How often the collector has stopped A, counted from A's start; NULL:
     * the runtime cannot tell. */
    unsigned long (*suspensions)(void);
};

/* One side's run. */
static struct {
    const struct demo_vm *vm;
    int raw;
    atomic_int busy, stop, started; /* busy: A is in OpenCL */
    atomic_ulong ticks;
    double longest_ms; /* the collector's own */
    long spin;         /* the long kernel's trips */
    cl_int err;
} run;

static int
none_install(void)
{
    return CLGC_OK;
}

static void
nothing(void)
{
}

static const struct demo_vm vm_none = {.name = "none",
                                       .install = none_install,
                                       .thread_start = nothing,
                                       .thread_stop = nothing,
                                       .alloc = nothing,
                                       .poll = nothing};

static void
refvm_alloc_one(void)
{
    static __thread long n;

    refvm_alloc((int)(n % REFVM_ROOTS), n);
    n++;
}

static unsigned long
refvm_collections(void)
{
    struct refvm_stats stats;

    refvm_stats(&stats);
    return stats.collections;
}

static const struct demo_vm vm_safepoint = {.name = "safepoint",
                                            .install = refvm_install,
                                            .thread_start = refvm_register,
                                            .thread_stop = refvm_unregister,
                                            .alloc = refvm_alloc_one,
                                            .collect = refvm_collect,
                                            .poll = refvm_poll,
                                            .collections = refvm_collections};

#ifdef HAVE_BDWGC
/* bdwgc's default restart signal, SIGXCPU, makes the LLVM inside PoCL
 * fail builds (docs/boehm.md): move it first. */
static int
boehm_install(void)
{
    GC_set_thr_restart_signal(SIGRTMIN + 2);
    GC_INIT();
    boehm_count_suspensions(); /* of A, while it runs (tests/gcevents.c) */
    return clgc_boehm_install(0);
}

static void
boehm_start(void)
{
    if (clgc_thread_attach() < 0) {
        fprintf(stderr, "clgc-demo: bdwgc refused a thread\n");
        exit(1);
    }
}

static void
boehm_stop(void)
{
    clgc_thread_detach(); /* CLGC_ENOTATTACHED for bdwgc's own threads */
}

static void
boehm_alloc(void)
{
    (void)GC_MALLOC(64);
}

static unsigned long
boehm_collections(void)
{
    return (unsigned long)GC_get_gc_no();
}

static const struct demo_vm vm_boehm = {.name = "boehm",
                                        .install = boehm_install,
                                        .thread_start = boehm_start,
                                        .thread_stop = boehm_stop,
                                        .alloc = boehm_alloc,
                                        .collect = GC_gcollect,
                                        .poll = nothing,
                                        .collections = boehm_collections,
                                        .suspensions = boehm_suspended};
#endif

const char *const demo_runtimes[] = {"none", "boehm", "safepoint"};
const int demo_nruntimes = sizeof(demo_runtimes) / sizeof(demo_runtimes[0]);

/* ------------------------------------------------------------------------
 * OpenCL. */

static struct {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel spin;
    cl_mem buf;
    clgc_queue_t *cq;
} cl;

/* The calls A makes, raw or through clgc: each wrapper has the signature
 * of the call it wraps, so one table holds either. */
struct demo_calls {
    __typeof__(&clCreateProgramWithSource) create_program;
    __typeof__(&clBuildProgram) build;
    __typeof__(&clReleaseProgram) release_program;
    __typeof__(&clSetKernelArg) set_arg;
    __typeof__(&clEnqueueNDRangeKernel) enqueue;
    __typeof__(&clFlush) flush; /* NULL: the wait flushes */
    __typeof__(&clWaitForEvents) wait;
    __typeof__(&clReleaseEvent) release_event;
};

static const struct demo_calls raw_calls = {.create_program =
                                                clCreateProgramWithSource,
                                            .build = clBuildProgram,
                                            .release_program = clReleaseProgram,
                                            .set_arg = clSetKernelArg,
                                            .enqueue = clEnqueueNDRangeKernel,
                                            .flush = clFlush,
                                            .wait = clWaitForEvents,
                                            .release_event = clReleaseEvent};

static const struct demo_calls clgc_calls = {
    .create_program = clgc_clCreateProgramWithSource,
    .build = clgc_clBuildProgram,
    .release_program = clgc_clReleaseProgram,
    .set_arg = clgc_clSetKernelArg,
    .enqueue = clgc_clEnqueueNDRangeKernel,
    .wait = clgc_wait_for_events,
    .release_event = clgc_clReleaseEvent};

static void
progress(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "clgc-demo [%s] ", run.vm->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static double
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Is device d of platform p (flat: of all platforms) the one asked for? */
static int
demo_pick(const struct demo_options *opt, cl_platform_id platform, int p,
          cl_device_id device, int d, int flat)
{
    char name[128] = "";
    cl_device_type type = 0;

    if (opt->platform >= 0)
        return p == opt->platform && d == opt->device;
    if (opt->device >= 0)
        return flat == opt->device;
    clgc_clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof(name), name,
                           NULL);
    clgc_clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
    return strstr(name, "Portable Computing Language") != NULL &&
           (type & CL_DEVICE_TYPE_CPU) != 0;
}

static int
demo_find_device(const struct demo_options *opt, struct demo_result *out)
{
    cl_platform_id platforms[16];
    cl_device_id devices[16];
    cl_uint np = 0, nd;
    int flat = 0;

    if (clgc_clGetPlatformIDs(16, platforms, &np) != CL_SUCCESS)
        np = 0;
    for (int p = 0; p < (int)np && p < 16; p++) {
        if (clgc_clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 16, devices,
                                &nd) != CL_SUCCESS)
            nd = 0;
        for (int d = 0; d < (int)nd && d < 16; d++, flat++) {
            if (!demo_pick(opt, platforms[p], p, devices[d], d, flat))
                continue;
            cl.device = devices[d];
            clgc_clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME,
                                   sizeof(out->platform), out->platform, NULL);
            clgc_clGetDeviceInfo(devices[d], CL_DEVICE_NAME,
                                 sizeof(out->device), out->device, NULL);
            return 0;
        }
    }
    fprintf(stderr, "clgc-demo: %s (clinfo -l lists the devices)\n",
            opt->platform >= 0 || opt->device >= 0
                ? "no such device"
                : "no PoCL CPU device: choose one with --device");
    return 1;
}

/* Build a new program with calls c, and keep it in *keep or release it. */
static cl_int
demo_build(const struct demo_calls *c, cl_program *keep)
{
    char slow[1024];
    const char *p[] = {spin_source, slow};
    cl_program program;
    cl_int err;

    slow_source(slow, sizeof(slow), 5);
    program = c->create_program(cl.context, 2, p, NULL, &err);
    if (err != CL_SUCCESS)
        return err;
    err = c->build(program, 1, &cl.device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[2048] = "";

        clGetProgramBuildInfo(program, cl.device, CL_PROGRAM_BUILD_LOG,
                              sizeof(log), log, NULL);
        fprintf(stderr, "clgc-demo: the build failed (%d):\n%s\n", err, log);
    }
    if (err == CL_SUCCESS && keep != NULL)
        *keep = program;
    else
        c->release_program(program);
    return err;
}

/* The device, a context, a queue, the spin kernel and a completion
 * queue. Set-up, not measured: clgc's wrappers work on any thread, and
 * on one the runtime does not know (this one, for the VM) they are the
 * raw calls. */
static int
demo_open(const struct demo_options *opt, struct demo_result *out)
{
    float zero = 0;
    cl_int err;

    if (demo_find_device(opt, out) != 0)
        return 1;
    cl.context = clgc_clCreateContext(NULL, 1, &cl.device, NULL, NULL, &err);
    if (err == CL_SUCCESS)
        cl.queue = clgc_create_command_queue(cl.context, cl.device, NULL, &err);
    if (err == CL_SUCCESS) /* PoCL's first build is slow: not timed */
        err = demo_build(&clgc_calls, &cl.program);
    if (err == CL_SUCCESS)
        cl.spin = clgc_clCreateKernel(cl.program, "spin", &err);
    if (err == CL_SUCCESS)
        cl.buf = clgc_clCreateBuffer(cl.context,
                                     CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                     sizeof(zero), &zero, &err);
    if (err == CL_SUCCESS)
        err = clgc_clSetKernelArg(cl.spin, 0, sizeof(cl.buf), &cl.buf);
    if (err != CL_SUCCESS || clgc_queue_create(&cl.cq) != CLGC_OK) {
        fprintf(stderr, "clgc-demo: setting up %s failed (OpenCL error %d)\n",
                out->device, err);
        return 1;
    }
    return 0;
}

static void
demo_close(void)
{
    clgc_queue_close(cl.cq);
    clgc_clReleaseMemObject(cl.buf);
    clgc_clReleaseKernel(cl.spin);
    clgc_clReleaseProgram(cl.program);
    clgc_clReleaseCommandQueue(cl.queue);
    clgc_clReleaseContext(cl.context);
}

static void
queue_done(cl_event event, cl_int status, void *data)
{
    *(cl_int *)data = status;
}

/* Wait as an event loop does: post the event to the completion queue,
 * poll() its file descriptor, drain. */
static cl_int
queue_wait(cl_event ev)
{
    struct pollfd p = {clgc_queue_fd(cl.cq), POLLIN, 0};
    cl_int status = CL_QUEUED; /* until the handler says otherwise */
    cl_int err = clgc_event_post(ev, cl.cq, queue_done, &status);

    while (err == CL_SUCCESS && status > CL_COMPLETE) {
        if (poll(&p, 1, -1) < 0 && errno != EINTR)
            return CL_OUT_OF_RESOURCES;
        clgc_queue_drain(cl.cq, 0);
    }
    if (err == CL_SUCCESS && status != CL_COMPLETE)
        err = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    return err;
}

/* Launch spin for `trips` and wait the way `how` (DEMO_WAIT_*) says. */
static cl_int
spin_wait(long trips, int how)
{
    const struct demo_calls *c = how == DEMO_WAIT_RAW || how == DEMO_WAIT_SEED
                                     ? &raw_calls
                                     : &clgc_calls;
    const size_t one = 1;
    cl_long n = trips;
    cl_event ev;
    cl_int err;

    err = c->set_arg(cl.spin, 1, sizeof(n), &n);
    if (err == CL_SUCCESS)
        err = c->enqueue(cl.queue, cl.spin, 1, NULL, &one, NULL, 0, NULL, &ev);
    if (err != CL_SUCCESS)
        return err;
    if (c->flush != NULL)
        c->flush(cl.queue);
    err = how == DEMO_WAIT_QUEUE  ? queue_wait(ev)
          : how == DEMO_WAIT_SEED ? seed_wait(ev)
                                  : c->wait(1, &ev);
    c->release_event(ev);
    return err;
}

/* The time of one raw launch and wait of spin for n trips, in ms. */
static double
spin_ms(long n)
{
    double t0 = now_ms();

    return spin_wait(n, DEMO_WAIT_RAW) == CL_SUCCESS ? now_ms() - t0 : -1;
}

/* The trip count of a kernel of about ms milliseconds: lengthen a launch
 * until it is long enough to time, then scale (the loop is linear). The
 * shortest of three launches is the one least slowed by other work. */
static long
calibrate(int ms)
{
    long n = 100000;
    double t;

    if (spin_ms(1) < 0) /* PoCL compiles the kernel for the device */
        return -1;
    while ((t = spin_ms(n)) >= 0 && t < 20 && n < (1L << 40))
        n *= 8;
    for (int i = 0; i < 2 && t >= 0; i++) {
        double again = spin_ms(n);

        t = again >= 0 && again < t ? again : t;
    }
    return t > 0 ? (long)((double)n * ms / t) + 1 : -1;
}

/* ------------------------------------------------------------------------
 * The threads. */

static void *
sleep_fn(void *arg)
{
    struct timespec ts = {0, *(const long *)arg * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        continue;
    return NULL;
}

/* Sleep in a safe region: a VM's own blocking calls never hold up its
 * collector. Leaving it reaches a safepoint. */
static void
vm_sleep(long ms)
{
    clgc_call_safe(sleep_fn, &ms);
}

static void *
ticker(void *arg)
{
    run.vm->thread_start();
    atomic_fetch_add(&run.started, 1);
    while (!atomic_load(&run.stop)) {
        run.vm->alloc();
        atomic_fetch_add(&run.ticks, 1);
        vm_sleep(1);
    }
    run.vm->thread_stop();
    return NULL;
}

/* Keeps the longest collection requested while A was in OpenCL. */
static void *
collector(void *arg)
{
    run.vm->thread_start();
    atomic_fetch_add(&run.started, 1);
    while (!atomic_load(&run.stop)) {
        int busy;
        double t0, t;

        for (int i = 0; i < 16; i++)
            run.vm->alloc();
        busy = atomic_load(&run.busy);
        t0 = now_ms();
        run.vm->collect();
        t = now_ms() - t0;
        if (busy && t > run.longest_ms)
            run.longest_ms = t;
        vm_sleep(1);
    }
    run.vm->thread_stop();
    return NULL;
}

/* What the runtime got done while A was in OpenCL: counters at the
 * start, then what they gained. */
struct window {
    unsigned long collections, ticks, suspensions;
    double ms;
};

static void
window_read(struct window *w)
{
    w->collections = run.vm->collections ? run.vm->collections() : 0;
    w->ticks = atomic_load(&run.ticks);
    w->suspensions = run.vm->suspensions ? run.vm->suspensions() : 0;
    w->ms = now_ms();
}

/* A reaches a safepoint, then reads the counters. The VM's collector
 * counts a collection while the world is still stopped, and A leaves a
 * safepoint only once the world restarts: so every collection that
 * completed before is counted already, and while A is in a raw call none
 * can complete at all. */
static void
window_open(struct window *w)
{
    run.vm->poll();
    window_read(w);
    atomic_store(&run.busy, 1);
}

/* What the counters gained; then the safepoint where a collection held
 * up by a raw call completes. */
static void
window_close(struct window *w)
{
    struct window now;

    window_read(&now);
    atomic_store(&run.busy, 0);
    w->collections = now.collections - w->collections;
    w->ticks = now.ticks - w->ticks;
    w->suspensions = now.suspensions - w->suspensions;
    w->ms = now.ms - w->ms;
    run.vm->poll();
}

static void *
opencl_thread(void *arg)
{
    struct demo_side *s = arg;
    const struct demo_calls *c = run.raw ? &raw_calls : &clgc_calls;
    int helpers = run.vm->collect != NULL ? 2 : 1;
    int counts = run.vm->collections != NULL;
    struct window build, kernel = {0, 0, 0, 0};

    run.vm->thread_start();
#ifdef HAVE_BDWGC
    boehm_watch(pthread_self());
#endif
    while (atomic_load(&run.started) < helpers)
        vm_sleep(1);
    window_open(&build);
    run.err = demo_build(c, NULL);
    window_close(&build);
    if (run.err == CL_SUCCESS) {
        window_open(&kernel);
        run.err = spin_wait(run.spin, run.raw ? DEMO_WAIT_RAW : DEMO_WAIT_CLGC);
        window_close(&kernel);
        s->kernel_wait = run.raw ? -1 : (int)clgc_wait_last_path();
    }
#ifdef HAVE_BDWGC
    boehm_unwatch();
#endif
    run.vm->thread_stop();

    s->build_ms = build.ms;
    s->kernel_ms = kernel.ms;
    s->build_collections = counts ? (long)build.collections : -1;
    s->kernel_collections = counts ? (long)kernel.collections : -1;
    s->ticks = (long)kernel.ticks;
    s->suspensions = run.vm->suspensions != NULL
                         ? (long)(build.suspensions + kernel.suspensions)
                         : -1;
    return NULL;
}

static int
run_side(int raw, struct demo_side *s)
{
    const struct demo_vm *vm = run.vm;
    pthread_t a, t, c;

    atomic_store(&run.stop, 0);
    atomic_store(&run.started, 0);
    run.raw = raw;
    run.longest_ms = 0;
    if (pthread_create(&t, NULL, ticker, NULL) != 0 ||
        (vm->collect != NULL && pthread_create(&c, NULL, collector, NULL)) ||
        pthread_create(&a, NULL, opencl_thread, s) != 0)
        return 1;
    pthread_join(a, NULL);
    atomic_store(&run.stop, 1);
    pthread_join(t, NULL);
    if (vm->collect != NULL)
        pthread_join(c, NULL);
    s->longest_ms = vm->collect != NULL ? run.longest_ms : -1;
    return run.err != CL_SUCCESS;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Short launches, each wait in turn (in a new order every round), on a
 * thread of the runtime with the others gone: the medians, and how clgc's
 * waits finished. */
static int
time_waits(struct demo_result *out)
{
    static double us[DEMO_WAITS][DEMO_SAMPLES];
    uint32_t draw = 2463534242u;
    int failed = 0;

    run.vm->thread_start();
    for (int k = -3; k < DEMO_SAMPLES && !failed; k++) {
        int order[DEMO_WAITS];

        bench_shuffle(order, DEMO_WAITS, &draw);
        for (int i = 0; i < DEMO_WAITS && !failed; i++) {
            int w = order[i];
            double t0 = now_ms();

            failed = spin_wait(SHORT_TRIPS, w) != CL_SUCCESS;
            if (k < 0) /* warming up */
                continue;
            us[w][k] = (now_ms() - t0) * 1e3;
            if (w == DEMO_WAIT_CLGC)
                out->paths[clgc_wait_last_path()]++;
        }
    }
    run.vm->thread_stop();
    for (int w = 0; w < DEMO_WAITS; w++) {
        qsort(us[w], DEMO_SAMPLES, sizeof(double), cmp_double);
        out->wait_us[w] = us[w][DEMO_SAMPLES / 2];
    }
    return failed;
}

int
demo_scenario(const char *runtime, const struct demo_options *opt,
              struct demo_result *out)
{
    static const struct demo_vm *const vms[] = {&vm_none, &vm_safepoint,
#ifdef HAVE_BDWGC
                                                &vm_boehm
#endif
    };
    static const char *const side_name[] = {"through clgc", "raw"};
    int err;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < sizeof(vms) / sizeof(vms[0]); i++)
        if (strcmp(vms[i]->name, runtime) == 0)
            run.vm = vms[i];
    if (run.vm == NULL)
        return 1;
    err = run.vm->install();
    if (err != CLGC_OK) {
        fprintf(stderr, "clgc-demo: installing %s: %s\n", runtime,
                clgc_strerror(err));
        return 1;
    }
    progress("opening the device; PoCL's first build takes a while");
    if (demo_open(opt, out) != 0)
        return 1;
    run.spin = out->spin = calibrate(opt->kernel_ms);
    if (run.spin < 0)
        return 1;
    for (int side = 0; side < DEMO_SIDES; side++) {
        progress("%s: a thread builds a program, then runs a %d ms kernel",
                 side_name[side], opt->kernel_ms);
        if (run_side(side == DEMO_RAW, &out->side[side]) != 0)
            return 1;
    }
    progress("timing %d short waits of each kind", DEMO_SAMPLES);
    if (time_waits(out) != 0)
        return 1;
    demo_close();
    /* What the threads left is garbage now: free it, for leak checkers. */
    if (run.vm->collect != NULL)
        run.vm->collect();
    return 0;
}
