/* clgc-bench wait: waiting strategies on the real device, in one process
 * (no runtime installed), as ratios against the raw clWaitForEvents.
 *
 *   clgc-bench wait [--samples N] [--platform NAME] [--late-ms MS]
 *                   [--split-us US] [--busy-wait]
 *                   [--strategy learn|callback|backoff] [--learn N]
 *                   [--long-only]
 *
 * For saxpy over 64 and 4096 items, a kernel of about 1 ms and one of
 * about 100 ms, each launch is waited for by:
 *
 *   raw     clWaitForEvents
 *   clgc    clgc_wait_for_events, default polling budget
 *   spin    clgc_wait_for_events polling until done (the largest budget,
 *           1 s: longer than any kernel here, so no callback)
 *   queue   clgc_event_post, poll() on the queue's fd, clgc_queue_drain
 *   floor   no clgc: a thread of the benchmark's own looks at the status
 *           without pause and writes an eventfd, the waiter sleeps in
 *           poll() on it; the fastest a completion queue woken through a
 *           descriptor could be, whatever watches the event
 *   seed    no clgc: the strategy of the seed this project answers
 *           (bench/seed.h): look at the status for at most 10 us, then
 *           a completion callback and a sleep on a condition variable
 *
 * and the table gives the wall time of a launch and wait, and the CPU time
 * the waiting thread spent (CLOCK_THREAD_CPUTIME_ID), each the median over
 * the samples of the mean over a sample's launches. A first table shows the
 * polling budgets behind clgc's default, on saxpy over 4096 items. The
 * strategies take turns, a sample each, in a new order every round
 * (shuffle.h).
 *
 * First it prints what a wait that lasts a second costs its thread, against
 * raw's: on a user event (which clgc learns nothing from), and the first
 * two waits of all on a ~1 s kernel, while the platform is still learned:
 * the first shows how long such commands run, the second samples them.
 * Before the tables,
 * --learn N (default 100) clgc waits on the ~1 ms
 * kernel let clgc learn the platform's callbacks, as a program that has
 * run a while has: the tables measure what such a program gets. Without
 * it (--learn 0) the saxpy tables are measured while a late driver is
 * still learned prompt (NVIDIA calls back promptly for short commands).
 * --long-only measures the ~100 ms kernel alone, over all the samples,
 * with no learning first: a program whose commands all run long.
 *
 * --platform picks the first platform whose name contains NAME (default:
 * the loader's first). --late-ms runs the whole benchmark with every
 * completion callback delayed MS milliseconds by the late-callback
 * vehicle (tests/latecb.c, linked in: without the option it passes the
 * callbacks through untouched), as NVIDIA's OpenCL delivers them;
 * --split-us delays only those of commands that end US microseconds or
 * more after their registration, as NVIDIA does (saxpy's come at once);
 * --busy-wait makes the vehicle's clWaitForEvents busy-wait, as NVIDIA's
 * does (the raw rows then spin a core, as they do there). --strategy sets
 * clgc_wait_set_strategy. The last lines say what clgc learned of each
 * platform's callbacks and own wait (clgc_wait_driver_info). */

#define _GNU_SOURCE
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "seed.h"
#include "shuffle.h"
#include "clgc.h"
#include "../tests/latecb.h"

static const char *src =
    "__kernel void saxpy(float a, __global const float *x,\n"
    "                    __global float *y)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    y[i] = a * x[i] + y[i];\n"
    "}\n"
    "__kernel void spin(__global float *y, int n)\n"
    "{\n"
    "    float a = y[get_global_id(0)];\n"
    "    for (int i = 0; i < n; i++)\n"
    "        a = a * 0.999f + 0.5f;\n"
    "    y[get_global_id(0)] = a;\n"
    "}\n";

enum strategy { RAW, CLGC, SPIN, QUEUE, FLOOR, SEED, N_STRATEGIES };

/* clgc's own default, read before the budget table changes it. */
static long default_budget;
static const char *strategy_name[] = {"raw",   "clgc",  "spin",
                                      "queue", "floor", "seed"};

struct launch {
    cl_command_queue queue;
    cl_kernel kernel;
    size_t items;
    clgc_queue_t *cq;
};

/* The floor's watcher: it runs during the floor's samples only, and
 * looks at the event it is handed until the command is done. */
static struct {
    _Atomic(cl_event) event;
    atomic_int stop;
    int fd;
    pthread_t thread;
} floor_w;

static void *
floor_watch(void *unused)
{
    uint64_t one = 1;

    (void)unused;
    while (!atomic_load(&floor_w.stop)) {
        cl_event ev = atomic_exchange(&floor_w.event, NULL);
        cl_int status = CL_QUEUED;

        if (ev == NULL)
            continue;
        while (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                              sizeof(status), &status, NULL) == CL_SUCCESS &&
               status > CL_COMPLETE)
            continue;
        if (write(floor_w.fd, &one, sizeof(one)) < 0)
            exit(3);
    }
    return NULL;
}

/* The calling thread's CPU time, us. Not getrusage(RUSAGE_THREAD): Linux
 * brings its figure up to date only when the thread is switched out (or
 * at a tick), so the CPU of a thread that never slept, such as the spin
 * strategy's poller, was counted in the next sample, the queue's, which
 * sleeps: 14x to 30x raw's CPU on ~100 ms kernels, none of it the
 * queue's. The clock reads the running slice too. */
static double
thread_cpu_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void
done_cb(cl_event event, cl_int status, void *data)
{
    *(int *)data = status == CL_COMPLETE ? 1 : -1;
}

static void
wait_one(const struct launch *l, enum strategy s, cl_event ev)
{
    struct pollfd p;
    int done = 0;
    cl_int err;

    switch (s) {
    case RAW:
        err = clWaitForEvents(1, &ev);
        break;
    case CLGC:
    case SPIN:
        err = clgc_wait_for_events(1, &ev);
        break;
    case SEED:
        err = seed_wait(ev);
        break;
    case FLOOR: {
        uint64_t count;

        atomic_store(&floor_w.event, ev);
        p = (struct pollfd){floor_w.fd, POLLIN, 0};
        poll(&p, 1, -1);
        err = read(floor_w.fd, &count, sizeof(count)) < 0 ? CL_INVALID_VALUE
                                                          : CL_SUCCESS;
        break;
    }
    default:
        err = clgc_event_post(ev, l->cq, done_cb, &done);
        p = (struct pollfd){clgc_queue_fd(l->cq), POLLIN, 0};
        while (err == CL_SUCCESS && done == 0) {
            poll(&p, 1, -1);
            clgc_queue_drain(l->cq, 0);
        }
        err = done == 1 ? CL_SUCCESS : err;
    }
    if (err != CL_SUCCESS)
        exit(3);
}

/* One sample: launches launches; *wall and *cpu per launch, in us. */
static void
sample(const struct launch *l, enum strategy s, long budget, int launches,
       double *wall, double *cpu)
{
    double t0, c0;

    if (s == FLOOR) {
        atomic_store(&floor_w.stop, 0);
        if (pthread_create(&floor_w.thread, NULL, floor_watch, NULL) != 0)
            exit(3);
    }
    t0 = bench_now_ns();
    c0 = thread_cpu_us();
    clgc_wait_set_poll_ns(s == SPIN ? CLGC_WAIT_POLL_MAX_NS : budget);
    for (int i = 0; i < launches; i++) {
        cl_event ev;

        if (clEnqueueNDRangeKernel(l->queue, l->kernel, 1, NULL, &l->items,
                                   NULL, 0, NULL, &ev) != CL_SUCCESS)
            exit(3);
        if (s == RAW || s == QUEUE || s == FLOOR || s == SEED)
            clFlush(l->queue);
        wait_one(l, s, ev);
        clReleaseEvent(ev);
    }
    *wall = (bench_now_ns() - t0) / 1e3 / launches;
    *cpu = (thread_cpu_us() - c0) / launches;
    if (s == FLOOR) {
        atomic_store(&floor_w.stop, 1);
        pthread_join(floor_w.thread, NULL);
    }
}

/* The spin kernel's trip count for about `us` microseconds of launch and
 * wait, found by scaling until a raw launch takes within 20% of it. */
static int
calibrate(struct launch *l, double us)
{
    int n = 20000;
    double wall = 0, cpu;

    for (int tries = 0; tries < 8; tries++) {
        clSetKernelArg(l->kernel, 1, sizeof(n), &n);
        sample(l, RAW, 0, 3, &wall, &cpu);
        if (wall > 0.8 * us && wall < 1.2 * us)
            break;
        n = (int)(n * (wall > 0 ? us / wall : 10.0));
        if (n < 1)
            n = 1;
    }
    return n;
}

static void
table(const char *name, struct launch *l, int samples, int launches)
{
    double wall[N_STRATEGIES][64], cpu[N_STRATEGIES][64];
    double mw[N_STRATEGIES], mc[N_STRATEGIES];
    uint32_t draw = 2463534242u;

    for (int s = 0; s < N_STRATEGIES; s++) /* warm up */
        sample(l, (enum strategy)s, default_budget, 1, &wall[s][0], &cpu[s][0]);
    for (int k = 0; k < samples; k++) {
        int order[N_STRATEGIES];

        bench_shuffle(order, N_STRATEGIES, &draw);
        for (int i = 0; i < N_STRATEGIES; i++)
            sample(l, (enum strategy)order[i], default_budget, launches,
                   &wall[order[i]][k], &cpu[order[i]][k]);
    }
    for (int s = 0; s < N_STRATEGIES; s++) {
        mw[s] = bench_median(wall[s], samples);
        mc[s] = bench_median(cpu[s], samples);
        printf("%-14s %-6s %11.1f %7.3fx %10.1f %7.3fx\n", name,
               strategy_name[s], mw[s], mw[s] / mw[RAW], mc[s],
               mc[RAW] > 0 ? mc[s] / mc[RAW] : 0.0);
    }
    fflush(stdout);
}

static void
budgets(struct launch *l, int samples)
{
    static const long ns[] = {0, 5000, 20000, 50000, 100000};
    double v[64], c[64], raw, raw_cpu;

    printf("# poll budget: saxpy over %zu items, us per launch and wait, "
           "and of the waiter's CPU\n",
           l->items);
    for (int k = 0; k < samples; k++)
        sample(l, RAW, 0, 200, &v[k], &c[k]);
    raw = bench_median(v, samples);
    raw_cpu = bench_median(c, samples);
    printf("%-20s %9.1f %7.3fx %9.1f %7.3fx\n", "clWaitForEvents", raw, 1.0,
           raw_cpu, 1.0);
    for (size_t b = 0; b < sizeof(ns) / sizeof(ns[0]); b++) {
        char name[32];
        double w, cpu;

        for (int k = 0; k < samples; k++)
            sample(l, CLGC, ns[b], 200, &v[k], &c[k]);
        w = bench_median(v, samples);
        cpu = bench_median(c, samples);
        snprintf(name, sizeof(name), "clgc, poll %ld us", ns[b] / 1000);
        printf("%-20s %9.1f %7.3fx %9.1f %7.3fx\n", name, w, w / raw, cpu,
               cpu / raw_cpu);
    }
}

static const char *
learned_name(clgc_wait_driver_t d)
{
    return d == CLGC_WAIT_DRIVER_PROMPT ? "prompt"
           : d == CLGC_WAIT_DRIVER_LATE ? "late"
                                        : "learning";
}

static const char *
own_name(clgc_wait_own_t o)
{
    return o == CLGC_WAIT_OWN_USED      ? "used"
           : o == CLGC_WAIT_OWN_AVOIDED ? "avoided"
                                        : "learning";
}

/* What clgc learned of each platform's callbacks and own wait. */
static void
print_learned(void)
{
    cl_platform_id ids[16];
    cl_uint n = 0;

    printf("\n# what clgc learned of each platform's completion callbacks\n");
    if (clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
        return;
    for (cl_uint i = 0; i < n && i < 16; i++) {
        clgc_wait_driver_info_t info;
        char name[128] = "?";

        clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof(name), name, NULL);
        if (clgc_wait_driver_info(ids[i], &info) != CLGC_OK)
            continue;
        printf(
            "%-32s %-8s (short %s, long %s) waits by %-8s prompt %u "
            "late %u lateness median %.1f us; own wait %s (slept %u, "
            "busy %u); callbacks tried %u, prompt %u; short waits poll "
            "%ld us (%.1f us without, %.1f with; done %u, missed %u)\n",
            name, learned_name(info.learned), learned_name(info.learned_short),
            learned_name(info.learned_long),
            info.strategy != CLGC_WAIT_BACKOFF ? "callback"
            : info.own == CLGC_WAIT_OWN_USED   ? "own wait"
                                               : "backoff",
            info.prompt, info.late,
            info.lateness_ns < 0 ? -1.0 : info.lateness_ns / 1e3,
            own_name(info.own), info.own_sleeps, info.own_busy, info.tried,
            info.tried_prompt, info.poll_ns / 1000, info.short_wait_ns[0] / 1e3,
            info.short_wait_ns[1] / 1e3, info.polls_done, info.polls_missed);
    }
}

/* A user event set IDLE_NS after the wait on it began: how much CPU a
 * wait that lasts that long costs its thread, against raw's. */
#define IDLE_NS 1000000000L

static void *
set_after_idle(void *gate)
{
    struct timespec ts = {IDLE_NS / 1000000000L, IDLE_NS % 1000000000L};

    nanosleep(&ts, NULL);
    clSetUserEventStatus(gate, CL_COMPLETE);
    return NULL;
}

static double
idle_cpu_ms(cl_context context, int cooperative)
{
    cl_event gate = clCreateUserEvent(context, NULL);
    struct timespec c0, c1;
    pthread_t t;

    if (gate == NULL || pthread_create(&t, NULL, set_after_idle, gate) != 0)
        return -1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    if (cooperative)
        clgc_wait_for_events(1, &gate);
    else
        clWaitForEvents(1, &gate);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    pthread_join(t, NULL);
    clReleaseEvent(gate);
    return (c1.tv_sec - c0.tv_sec) * 1e3 + (c1.tv_nsec - c0.tv_nsec) / 1e6;
}

/* The first platform whose name contains `want` (NULL: the first). */
static int
pick_platform(const char *want, cl_platform_id *platform)
{
    cl_platform_id ids[16];
    cl_uint n = 0;

    if (clGetPlatformIDs(16, ids, &n) != CL_SUCCESS || n == 0)
        return 0;
    for (cl_uint i = 0; i < n && i < 16; i++) {
        char name[256] = "";

        clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof(name), name, NULL);
        if (want == NULL || strstr(name, want) != NULL) {
            *platform = ids[i];
            printf("# platform: %s\n", name);
            return 1;
        }
    }
    fprintf(stderr, "clgc-bench wait: no platform named like \"%s\"\n", want);
    return 0;
}

int
bench_wait(int argc, char **argv)
{
    int samples = 21, n, n100, learn = 100;
    const char *want = NULL;
    long late_ms = 0, split_us = 0;
    int strategy = -1, busy = 0, long_only = 0;
    float a = 2.0f;
    struct launch l = {0};
    cl_kernel saxpy, spin;
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_program program;
    cl_mem x, y;
    cl_int err;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
            samples = atoi(argv[++i]);
        else if (strcmp(argv[i], "--platform") == 0 && i + 1 < argc)
            want = argv[++i];
        else if (strcmp(argv[i], "--late-ms") == 0 && i + 1 < argc)
            late_ms = atol(argv[++i]);
        else if (strcmp(argv[i], "--split-us") == 0 && i + 1 < argc)
            split_us = atol(argv[++i]);
        else if (strcmp(argv[i], "--learn") == 0 && i + 1 < argc)
            learn = atoi(argv[++i]);
        else if (strcmp(argv[i], "--busy-wait") == 0)
            busy = 1;
        else if (strcmp(argv[i], "--long-only") == 0)
            long_only = 1;
        else if (strcmp(argv[i], "--strategy") == 0 && i + 1 < argc) {
            i++;
            strategy = strcmp(argv[i], "learn") == 0      ? CLGC_WAIT_LEARN
                       : strcmp(argv[i], "callback") == 0 ? CLGC_WAIT_CALLBACK
                       : strcmp(argv[i], "backoff") == 0  ? CLGC_WAIT_BACKOFF
                                                          : -2;
        } else
            strategy = -2;
        if (strategy == -2) {
            fprintf(stderr, "usage: clgc-bench wait [--samples N] [--platform "
                            "NAME] [--late-ms MS] [--split-us US] "
                            "[--busy-wait] "
                            "[--strategy learn|callback|backoff] "
                            "[--learn N] [--long-only]\n");
            return 2;
        }
    }
    if (samples < 1 || samples > 64 || late_ms < 0 || learn < 0 || split_us < 0)
        return 2;
    if (split_us > 0) {
        latecb_set_split_us(split_us);
        printf("# only the callbacks of commands ending %ld us or more after "
               "their registration delayed\n",
               split_us);
    }
    if (late_ms > 0) {
        latecb_set_ms(late_ms);
        printf("# every completion callback delayed %ld ms (tests/latecb.c)\n",
               late_ms);
    }
    if (busy) {
        latecb_set_busy_wait(1);
        printf("# clWaitForEvents busy-waits (tests/latecb.c)\n");
    }
    if (strategy >= 0)
        clgc_wait_set_strategy((clgc_wait_strategy_t)strategy);
    if (!pick_platform(want, &platform) ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != 0)
        return 1;
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    l.queue = clgc_create_command_queue(context, device, NULL, &err);
    program = clCreateProgramWithSource(context, 1, &src, NULL, &err);
    floor_w.fd = eventfd(0, EFD_CLOEXEC);
    if (floor_w.fd < 0 || clgc_queue_create(&l.cq) != CLGC_OK ||
        clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS)
        return 1;
    saxpy = clCreateKernel(program, "saxpy", &err);
    spin = clCreateKernel(program, "spin", &err);
    x = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096 * sizeof(float), NULL,
                       &err);
    y = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096 * sizeof(float), NULL,
                       &err);
    if (err != CL_SUCCESS)
        return 1;
    clSetKernelArg(saxpy, 0, sizeof(a), &a);
    clSetKernelArg(saxpy, 1, sizeof(x), &x);
    clSetKernelArg(saxpy, 2, sizeof(y), &y);
    clSetKernelArg(spin, 0, sizeof(y), &y);

    default_budget = clgc_wait_get_poll_ns();
    /* The spin kernel's trip counts, by raw waits, which teach clgc
     * nothing; then the learning waits. */
    l.kernel = spin;
    l.items = 64;
    n100 = calibrate(&l, 100000);
    n = calibrate(&l, 1000);
    clSetKernelArg(spin, 1, sizeof(n), &n);
    {
        double raw = idle_cpu_ms(context, 0), coop = idle_cpu_ms(context, 1);
        double wall, raw_us, coop_us[2];
        int n1s = n100 < INT_MAX / 10 ? n100 * 10 : INT_MAX;

        printf("# a %.0f s wait on a user event: CPU %.2f ms (raw %.2f ms, "
               "%.2fx)\n",
               IDLE_NS / 1e9, coop, raw, raw > 0 ? coop / raw : 0.0);
        /* The first waits of clgc's that teach it anything: the first
         * times the long commands, the second samples them. */
        clSetKernelArg(spin, 1, sizeof(n1s), &n1s);
        sample(&l, RAW, 0, 1, &wall, &raw_us);
        sample(&l, CLGC, default_budget, 1, &wall, &coop_us[0]);
        sample(&l, CLGC, default_budget, 1, &wall, &coop_us[1]);
        printf("# the first two waits on a ~1 s kernel, while the platform "
               "is learned: CPU %.2f and %.2f ms (raw %.2f ms, %.2fx and "
               "%.2fx)\n",
               coop_us[0] / 1e3, coop_us[1] / 1e3, raw_us / 1e3,
               raw_us > 0 ? coop_us[0] / raw_us : 0.0,
               raw_us > 0 ? coop_us[1] / raw_us : 0.0);
        /* What follows starts from nothing learned, as before the row. */
        clgc_wait_set_strategy(strategy >= 0 ? (clgc_wait_strategy_t)strategy
                                             : CLGC_WAIT_LEARN);
        clSetKernelArg(spin, 1, sizeof(n), &n);
    }
    if (learn > 0 && !long_only) {
        double wall, cpu;

        sample(&l, CLGC, default_budget, learn, &wall, &cpu);
        printf("# learning: %d clgc waits on the ~1 ms kernel first\n", learn);
    }
    l.kernel = saxpy;
    l.items = 4096;
    if (!long_only)
        budgets(&l, samples);
    printf("\n# us per launch and wait (wall) and of the waiting thread's "
           "CPU, median of %d samples\n",
           samples);
    printf("%-14s %-6s %11s %8s %10s %8s\n", "kernel", "wait", "wall", "vs raw",
           "cpu", "vs raw");
    if (!long_only) {
        l.items = 64;
        table("saxpy 64", &l, samples, 200);
        l.items = 4096;
        table("saxpy 4096", &l, samples, 200);
    }
    l.kernel = spin;
    l.items = 64;
    if (!long_only) {
        clSetKernelArg(spin, 1, sizeof(n), &n);
        table("spin ~1 ms", &l, samples, 20);
    }
    clSetKernelArg(spin, 1, sizeof(n100), &n100);
    table("spin ~100 ms", &l, samples < 5 || long_only ? samples : 5, 1);
    print_learned();

    clgc_queue_close(l.cq);
    close(floor_w.fd);
    clReleaseMemObject(x);
    clReleaseMemObject(y);
    clReleaseKernel(saxpy);
    clReleaseKernel(spin);
    clReleaseProgram(program);
    clReleaseCommandQueue(l.queue);
    clReleaseContext(context);
    return 0;
}
