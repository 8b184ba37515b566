/* clgc-bench gc: how long a collection waits for a thread that is blocked
 * in OpenCL.
 *
 *   clgc-bench gc [--builds N]
 *
 * Thread A builds a program that takes PoCL about half a second; thread B
 * collects again and again meanwhile and times each collection, from its
 * request to its return. A builds either through clgc_clBuildProgram
 * ("clgc") or with the raw clBuildProgram ("raw"); the two alternate,
 * N builds each. Runtimes, each in a child process of its own (a runtime
 * is installed once per process):
 *
 *   refvm   the reference VM (tests/refvm.c) in the safepoint form: the
 *           collector waits for every thread's word to read SAFE. In the
 *           raw build A's word stays RUNNING, so B waits for the build.
 *   boehm   bdwgc through clgc_boehm_install, B calling GC_gcollect():
 *           bdwgc stops A with a signal even inside the raw call, so the
 *           difference is what suspending and scanning A costs.
 *
 * The table gives, per runtime and build, how many collections B made
 * during A's builds, their median and maximum latency, and clgc's median
 * and maximum over the raw build's. The target with clgc: under 1 ms. */

#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_BDWGC
/* For GC_set_thr_restart_signal; threads are registered explicitly. */
#define GC_THREADS 1
#define GC_NO_THREAD_REDIRECTS 1
#include <gc/gc.h>

#include "clgc/boehm.h"
#endif

#include "../tests/refvm.h"
#include "../tests/slow.h"
#include "bench.h"
#include "clgc.h"

/* Collections B may time during one build; more are not timed. */
#define MAX_SAMPLES 4096

static int builds = 3;

/* One runtime's hooks for the bench's two threads. */
struct gc_runtime {
    const char *name;
    int (*install)(void);
    void (*thread_start)(void);
    void (*thread_stop)(void);
    void (*collect)(void);
    void (*poll)(void);
};

/* One build of A, timed from B. */
struct race {
    cl_device_id device;
    cl_context context;
    const struct gc_runtime *rt;
    int wrapped;
    atomic_int started, done;
    double build_ns;
    double lat[MAX_SAMPLES];
    int n;
    int failed;
};

static void
gc_build_failed(struct race *r, cl_program program, cl_int err)
{
    char log[2048] = "";

    clGetProgramBuildInfo(program, r->device, CL_PROGRAM_BUILD_LOG, sizeof(log),
                          log, NULL);
    fprintf(stderr, "clgc-bench gc: %s build failed (%d):\n%s\n",
            r->wrapped ? "clgc" : "raw", err, log);
    r->failed = 1;
}

static void *
gc_builder(void *arg)
{
    struct race *r = arg;
    char src[1024];
    const char *p = src;
    cl_program program;
    cl_int err;
    double t0;

    r->rt->thread_start();
    /* About half a second of PoCL's time here: 4^6 statements. */
    slow_source(src, sizeof(src), 6);
    program = clCreateProgramWithSource(r->context, 1, &p, NULL, &err);
    if (err != CL_SUCCESS)
        r->failed = 1;
    atomic_store(&r->started, 1);
    t0 = bench_now_ns();
    err = r->wrapped
              ? clgc_clBuildProgram(program, 1, &r->device, "", NULL, NULL)
              : clBuildProgram(program, 1, &r->device, "", NULL, NULL);
    r->build_ns = bench_now_ns() - t0;
    atomic_store(&r->done, 1);
    if (err != CL_SUCCESS)
        gc_build_failed(r, program, err);
    r->rt->poll(); /* a raw-call thread lets the collection in only here */
    clReleaseProgram(program);
    r->rt->thread_stop();
    return NULL;
}

static void *
gc_collector(void *arg)
{
    struct race *r = arg;
    const struct timespec pause = {0, 1000000};

    r->rt->thread_start();
    while (!atomic_load(&r->started)) {
        r->rt->poll();
        sched_yield();
    }
    while (!atomic_load(&r->done) && r->n < MAX_SAMPLES) {
        double t0 = bench_now_ns();

        r->rt->collect();
        r->lat[r->n++] = bench_now_ns() - t0;
        nanosleep(&pause, NULL); /* no other thread collects: no poll */
    }
    r->rt->thread_stop();
    return NULL;
}

static int
gc_race(struct race *r)
{
    pthread_t a, b;

    atomic_store(&r->started, 0);
    atomic_store(&r->done, 0);
    r->n = 0;
    r->failed = 0;
    if (pthread_create(&a, NULL, gc_builder, r) != 0 ||
        pthread_create(&b, NULL, gc_collector, r) != 0)
        return -1;
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return r->failed ? -1 : 0;
}

/* Latencies and build times of one kind of build, over all its builds. */
struct pooled {
    double lat[MAX_SAMPLES];
    double build[64];
    int n, nbuild;
    double max;
};

static void
gc_pool(struct pooled *p, const struct race *r)
{
    for (int i = 0; i < r->n && p->n < MAX_SAMPLES; i++) {
        p->lat[p->n++] = r->lat[i];
        if (r->lat[i] > p->max)
            p->max = r->lat[i];
    }
    if (p->nbuild < 64)
        p->build[p->nbuild++] = r->build_ns;
}

static double
gc_median(struct pooled *p)
{
    return p->n > 0 ? bench_median(p->lat, p->n) : 0;
}

static void
gc_row(const char *runtime, const char *build, struct pooled *p)
{
    printf("%-7s %-20s %6d %12.1f %12.1f %9.0f", runtime, build, p->n,
           gc_median(p) / 1e3, p->max / 1e3,
           bench_median(p->build, p->nbuild) / 1e6);
}

static int
gc_open(struct race *r)
{
    cl_platform_id platform;
    cl_int err;

    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, &r->device, NULL) !=
            CL_SUCCESS)
        return -1;
    r->context = clCreateContext(NULL, 1, &r->device, NULL, NULL, &err);
    return err == CL_SUCCESS ? 0 : -1;
}

static int
gc_run(const void *arg)
{
    const struct gc_runtime *rt = arg;
    static struct race r;
    static struct pooled raw, wrapped;
    double m_raw, m_clgc;

    if (rt->install() != CLGC_OK || gc_open(&r) != 0)
        return 1;
    r.rt = rt;
    r.wrapped = 1;
    if (gc_race(&r) != 0) /* PoCL's first build is much slower: warm up */
        return 1;
    for (int i = 0; i < 2 * builds; i++) {
        r.wrapped = i % 2;
        if (gc_race(&r) != 0)
            return 1;
        gc_pool(r.wrapped ? &wrapped : &raw, &r);
    }
    m_raw = gc_median(&raw);
    m_clgc = gc_median(&wrapped);
    gc_row(rt->name, "clBuildProgram", &raw);
    printf("\n");
    gc_row(rt->name, "clgc_clBuildProgram", &wrapped);
    printf(" %8.3gx %8.3gx\n", m_raw > 0 ? m_clgc / m_raw : 0,
           raw.max > 0 ? wrapped.max / raw.max : 0);
    clReleaseContext(r.context);
    return 0;
}

/* The reference VM. */

static int
refvm_bench_install(void)
{
    return refvm_install();
}

static const struct gc_runtime gc_refvm = {"refvm",        refvm_bench_install,
                                           refvm_register, refvm_unregister,
                                           refvm_collect,  refvm_poll};

#ifdef HAVE_BDWGC
/* bdwgc: clgc_thread_attach registers a thread we created with bdwgc. */

/* bdwgc resumes threads with SIGXCPU by default, which the LLVM inside
 * PoCL takes over while it compiles (its handler deletes the compiler's
 * temporary files, and the build fails: "unable to rename temporary").
 * A real-time signal avoids it. */
static int
boehm_bench_install(void)
{
    GC_set_thr_restart_signal(SIGRTMIN + 2);
    GC_INIT();
    return clgc_boehm_install(0);
}

static void
boehm_thread_start(void)
{
    if (clgc_thread_attach() < 0)
        exit(3);
}

static void
boehm_thread_stop(void)
{
    clgc_thread_detach();
}

/* bdwgc stops threads with signals: there is nothing to poll. */
static void
boehm_poll(void)
{
}

static const struct gc_runtime gc_boehm = {
    "boehm",           boehm_bench_install, boehm_thread_start,
    boehm_thread_stop, GC_gcollect,         boehm_poll};
#endif

static void
gc_usage(FILE *f)
{
    fprintf(f, "usage: clgc-bench gc [--builds N]\n"
               "Times the collections thread B makes while thread A builds "
               "a slow program,\nwith clgc_clBuildProgram and with the raw "
               "clBuildProgram, N builds each\n(default 3).\n");
}

int
bench_gc(int argc, char **argv)
{
    const struct gc_runtime *runtimes[] = {&gc_refvm,
#ifdef HAVE_BDWGC
                                           &gc_boehm
#endif
    };
    int failed = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            gc_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--builds") == 0 && i + 1 < argc) {
            builds = atoi(argv[++i]);
        } else {
            gc_usage(stderr);
            return 2;
        }
    }
    if (builds < 1 || builds > 32) {
        gc_usage(stderr);
        return 2;
    }
    printf("# latency of B's collections (us, request to return) during A's "
           "builds; %d builds each\n",
           builds);
    printf("%-7s %-20s %6s %12s %12s %9s %9s %9s\n", "runtime", "A builds with",
           "colls", "median", "max", "build ms", "median", "max");
    printf("%-7s %-20s %6s %12s %12s %9s %9s %9s\n", "", "", "", "", "", "",
           "clgc/raw", "clgc/raw");
    fflush(stdout);
    for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
        failed |= bench_in_child(gc_run, runtimes[i], runtimes[i]->name);
    return failed;
}
