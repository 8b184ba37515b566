/* The recording runtime: every hook counts its calls, and the safe_region
 * hook keeps a per-thread depth that code running inside a wrapped OpenCL
 * call (a stub ICD, a callback PoCL runs inline) can read back. */

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include "testutil.h"

const char *test_spin_src = "__kernel void spin(__global float *x, int n)\n"
                            "{\n"
                            "    float a = x[get_global_id(0)];\n"
                            "    for (int i = 0; i < n; i++)\n"
                            "        a = a * 0.999f + 0.5f;\n"
                            "    x[get_global_id(0)] = a;\n"
                            "}\n";

static atomic_ulong safe_calls, active_calls, attach_calls, detach_calls;
static atomic_ulong failures;
static clgc_callback_error_t last_failure;
static atomic_int attach_result, strict;
static __thread int hook_depth;
/* The thread installed the runtime (the main thread), or attach_thread
 * attached it: what a strict runtime knows. */
static __thread int native, attached_here;

static void *
rec_safe(clgc_fn_t fn, void *arg)
{
    void *result;

    atomic_fetch_add(&safe_calls, 1);
    hook_depth++;
    result = fn(arg);
    hook_depth--;
    return result;
}

static void *
rec_active(clgc_fn_t fn, void *arg)
{
    int saved = hook_depth;
    void *result;

    /* Active again: this thread is no longer inside any safe region as far
     * as the runtime is concerned, until fn enters one again. */
    atomic_fetch_add(&active_calls, 1);
    hook_depth = 0;
    result = fn(arg);
    hook_depth = saved;
    return result;
}

/* Called inside each attach_thread hook, when set. */
static void (*_Atomic attach_hook)(void *);
static void *_Atomic attach_hook_arg;

static int
rec_attach(void *data)
{
    int err = atomic_load(&attach_result);
    void (*hook)(void *) = atomic_load(&attach_hook);

    if (hook != NULL)
        hook(atomic_load(&attach_hook_arg));
    atomic_fetch_add(&attach_calls, 1);
    attached_here = err == CLGC_OK;
    return err;
}

/* The region depth clgc reported inside the last detach_thread hook. */
static atomic_uint detach_depth;

static void
rec_detach(void *data)
{
    atomic_store(&detach_depth, clgc_thread_region_depth());
    atomic_fetch_add(&detach_calls, 1);
    attached_here = 0;
}

static int
rec_known(void *data)
{
    return !atomic_load(&strict) || native || attached_here;
}

static void
rec_failed(const clgc_callback_error_t *error, void *data)
{
    last_failure = *error;
    atomic_fetch_add(&failures, 1);
}

int
test_rt_install(void)
{
    static const clgc_runtime_t rt = {.version = CLGC_RUNTIME_VERSION,
                                      .name = "recording",
                                      .data = (void *)&safe_calls,
                                      .safe_region = rec_safe,
                                      .active_region = rec_active,
                                      .attach_thread = rec_attach,
                                      .detach_thread = rec_detach,
                                      .thread_known = rec_known,
                                      .callback_failed = rec_failed};

    native = 1;
    return clgc_runtime_install(&rt);
}

unsigned long
test_rt_failures(clgc_callback_error_t *last)
{
    unsigned long n = atomic_load(&failures);

    if (last != NULL)
        *last = last_failure;
    return n;
}

unsigned long
test_rt_safe_calls(void)
{
    return atomic_load(&safe_calls);
}
unsigned long
test_rt_active_calls(void)
{
    return atomic_load(&active_calls);
}
unsigned long
test_rt_attach_calls(void)
{
    return atomic_load(&attach_calls);
}
unsigned
test_rt_detach_depth(void)
{
    return atomic_load(&detach_depth);
}

unsigned long
test_rt_detach_calls(void)
{
    return atomic_load(&detach_calls);
}
int
test_rt_hook_depth(void)
{
    return hook_depth;
}
void
test_rt_set_attach_result(int err)
{
    atomic_store(&attach_result, err);
}
void
test_rt_set_attach_hook(void (*fn)(void *), void *arg)
{
    atomic_store(&attach_hook_arg, arg);
    atomic_store(&attach_hook, fn);
}

void
test_rt_set_strict(int on)
{
    atomic_store(&strict, on);
}

const char *
test_elsewhere(void)
{
    const char *chosen = getenv("CLGC_TEST_PLATFORM");

    return chosen != NULL && chosen[0] != '\0' ? chosen : NULL;
}

cl_device_type
test_device_type(void)
{
    /* PoCL's CPU device is the only one here; elsewhere the platform's
     * first device is the one to test (a GPU, or PoCL 5's CPU). */
    return test_elsewhere() != NULL ? CL_DEVICE_TYPE_ALL : CL_DEVICE_TYPE_CPU;
}

void
test_add_pocl_only(TCase *tc, const TTest *test, const char *name,
                   const char *why)
{
    const char *chosen = test_elsewhere();

    if (chosen == NULL) {
        tcase_add_test(tc, test);
        return;
    }
    /* Said on stderr, so that a log of the run shows what was not run. */
    fprintf(stderr, "not run on '%s': %s (%s)\n", chosen, name, why);
}

/* The probe's other thread: it gives the flush a second to return on
 * its own, then decides the driver ran the command inside the flush, and
 * sets the user event in any case, which lets such a flush return. */
struct premise_probe {
    cl_event gate;
    atomic_int decided; /* 1 once the flush returned or the second passed */
    int inline_flush;
};

static void *
premise_probe_gate(void *arg)
{
    struct premise_probe *p = arg;
    struct timespec ms = {0, 1000000L};

    for (int i = 0; i < 1000 && !atomic_load(&p->decided); i++)
        nanosleep(&ms, NULL);
    if (!atomic_exchange(&p->decided, 1))
        p->inline_flush = 1;
    clSetUserEventStatus(p->gate, CL_COMPLETE);
    return NULL;
}

/* In the child: the premises the driver breaks, a bit each (1 <<
 * enum test_premise), or 1 << TEST_PREMISES if the probe could not run.
 * TEST_DRIVER_THREADS: a flushed marker behind an unset user event lets
 * clFlush return. */
static int
premise_probe(void)
{
    struct premise_probe p = {NULL, 0, 0};
    cl_platform_id ids[16];
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_event marker;
    cl_uint n = 0;
    char buf[256];
    pthread_t t;
    cl_int err;
    int found = -1, broken = 0;

    if (clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
        return 1 << TEST_PREMISES;
    for (cl_uint i = 0; i < n && i < 16 && found < 0; i++)
        if (clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof(buf), buf,
                              NULL) == CL_SUCCESS &&
            strstr(buf, test_elsewhere()) != NULL)
            found = (int)i;
    if (found < 0 || clGetDeviceIDs(ids[found], test_device_type(), 1, &device,
                                    NULL) != CL_SUCCESS)
        return 1 << TEST_PREMISES;
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return 1 << TEST_PREMISES;
    queue = clgc_create_command_queue(context, device, NULL, &err);
    p.gate = clCreateUserEvent(context, &err);
    if (queue == NULL || err != CL_SUCCESS ||
        pthread_create(&t, NULL, premise_probe_gate, &p) != 0)
        return 1 << TEST_PREMISES;
    if (clEnqueueMarkerWithWaitList(queue, 1, &p.gate, &marker) != CL_SUCCESS)
        return 1 << TEST_PREMISES;
    clFlush(queue);
    atomic_exchange(&p.decided, 1);
    pthread_join(t, NULL);
    clFinish(queue);
    broken |= p.inline_flush << TEST_DRIVER_THREADS;
    return broken;
}

static const char *const premise_broken[TEST_PREMISES] = {
    [TEST_DRIVER_THREADS] = "runs commands inside clFlush on the calling "
                            "thread",
};

int
test_driver_does(enum test_premise premise)
{
    static int broken = -1;
    int status;
    pid_t child;

    if (test_elsewhere() == NULL)
        return 1;
    if (broken < 0) {
        fflush(NULL);
        child = fork();
        if (child == 0)
            _exit(premise_probe());
        broken = 1 << TEST_PREMISES;
        if (child > 0 && waitpid(child, &status, 0) == child &&
            WIFEXITED(status))
            broken = WEXITSTATUS(status);
        if (broken & 1 << TEST_PREMISES)
            fprintf(stderr,
                    "the driver's premises could not be probed on '%s': the "
                    "cases that need them are not run\n",
                    test_elsewhere());
    }
    return !(broken & (1 << premise | 1 << TEST_PREMISES));
}

void
test_add_premised(TCase *tc, const TTest *test, const char *name,
                  enum test_premise premise, const char *why)
{
    if (test_driver_does(premise)) {
        tcase_add_test(tc, test);
        return;
    }
    fprintf(stderr, "not run on '%s': %s (the driver %s: %s)\n",
            test_elsewhere(), name, premise_broken[premise], why);
}

cl_platform_id
test_platform(const char *name)
{
    cl_platform_id ids[16];
    cl_uint n = 0;
    char buf[256];

    /* Tests that want "the device" name PoCL; CLGC_TEST_PLATFORM moves
     * them to another platform. The stub's tests keep the stub. */
    if (strcmp(name, TEST_POCL) == 0 && test_elsewhere() != NULL)
        name = test_elsewhere();
    ck_assert_int_eq(clGetPlatformIDs(16, ids, &n), CL_SUCCESS);
    for (cl_uint i = 0; i < n && i < 16; i++) {
        ck_assert_int_eq(
            clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof(buf), buf, NULL),
            CL_SUCCESS);
        if (strstr(buf, name) != NULL)
            return ids[i];
    }
    ck_abort_msg("no OpenCL platform named '%s' (is OCL_ICD_VENDORS set?)",
                 name);
    return NULL;
}

cl_context
test_pocl_context(void)
{
    cl_platform_id platform = test_platform(TEST_POCL);
    cl_device_id device;
    cl_context context;
    cl_int err;

    ck_assert_int_eq(
        clGetDeviceIDs(platform, test_device_type(), 1, &device, NULL), 0);
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    return context;
}

void *
test_set_status(void *setter)
{
    struct test_setter *s = setter;

    clSetUserEventStatus(s->event, s->status);
    return NULL;
}

cl_int
test_event_status(cl_event event)
{
    cl_int status = 1;

    ck_assert_int_eq(clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                    sizeof(status), &status, NULL),
                     CL_SUCCESS);
    return status;
}

static long
await_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Check's own CK_TIMEOUT_MULTIPLIER (a whole number, 1 if unset), which
 * the sanitizer builds and the bundle's runner set. */
static long
await_multiplier(void)
{
    const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
    long n = m != NULL ? strtol(m, NULL, 10) : 1;

    return n >= 1 ? n : 1;
}

struct test_await
test_await_start(void)
{
    struct test_await w = {
        await_now_ns() + TEST_AWAIT_S * await_multiplier() * 1000000000L, 0};

    return w;
}

void
test_await_nap(struct test_await *w, const char *fmt, ...)
{
    if (await_now_ns() > w->deadline_ns) {
        char what[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        ck_abort_msg("waited %ld s for %s", TEST_AWAIT_S * await_multiplier(),
                     what);
    }
    if (w->naps++ < 1000) {
        sched_yield();
    } else {
        struct timespec ms = {0, 1000000};

        nanosleep(&ms, NULL);
    }
}

void
test_sem_wait(sem_t *sem, const char *what)
{
    struct test_await w = test_await_start();

    for (;;) {
        struct timespec at;

        clock_gettime(CLOCK_REALTIME, &at);
        at.tv_sec += 1;
        if (sem_timedwait(sem, &at) == 0)
            return;
        /* Each try waits a second; past the thousandth nap
         * test_await_nap only sleeps a millisecond, and checks the bound. */
        w.naps = 1000;
        test_await_nap(&w, "%s", what);
    }
}

int
test_poll(struct pollfd *p, const char *what)
{
    struct test_await w = test_await_start();
    int n;

    while ((n = poll(p, 1, 1000)) == 0 || (n < 0 && errno == EINTR)) {
        w.naps = 1000;
        test_await_nap(&w, "%s", what);
    }
    return n;
}

void
test_event_let_go(cl_event event)
{
    struct test_await w = test_await_start();
    cl_uint refs = 0;

    for (;;) {
        ck_assert_int_eq(clGetEventInfo(event, CL_EVENT_REFERENCE_COUNT,
                                        sizeof(refs), &refs, NULL),
                         CL_SUCCESS);
        if (refs <= 1)
            return;
        test_await_nap(&w,
                       "the driver and clgc to let go of an event (%u "
                       "references, 1 the caller's)",
                       refs);
    }
}

/* The line /proc/self/task/TID/syscall holds: the call's number and its
 * six arguments, or "running". */
static void
read_syscall(pid_t tid, char *buf, size_t size)
{
    char path[64];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
    buf[0] = 0;
    f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fgets(buf, (int)size, f) == NULL)
        buf[0] = 0;
    fclose(f);
}

int
test_sleeps_in_futex(pid_t tid)
{
    char buf[256], want[16];

    read_syscall(tid, buf, sizeof(buf));
    snprintf(want, sizeof(want), "%d ", (int)SYS_futex);
    return strncmp(buf, want, strlen(want)) == 0;
}

/* 1 if thread tid sleeps in futex(2), with *timeout its timeout
 * argument (0: none), from one reading of its syscall. */
static int
futex_timeout(pid_t tid, unsigned long long *timeout)
{
    char buf[256];
    unsigned long long args[3];
    int nr;

    /* futex(uaddr, op, val, timeout, ...): the fourth is the timeout. */
    read_syscall(tid, buf, sizeof(buf));
    return sscanf(buf, "%d %llx %llx %llx %llx", &nr, &args[0], &args[1],
                  &args[2], timeout) == 5 &&
           nr == SYS_futex;
}

int
test_sleeps_untimed(pid_t tid)
{
    unsigned long long timeout;

    return futex_timeout(tid, &timeout) && timeout == 0;
}

int
test_sleeps_timed(pid_t tid)
{
    unsigned long long timeout;

    return futex_timeout(tid, &timeout) && timeout != 0;
}

long
test_thread_wakeups(pid_t tid)
{
    char path[64], line[128];
    long n = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
            n = atol(line + 24);
    fclose(f);
    return n;
}

pid_t
test_thread_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    pid_t found = 0;

    if (d == NULL)
        return 0;
    while (found == 0 && (e = readdir(d)) != NULL) {
        char path[300], comm[64] = "";
        FILE *f;

        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(comm, sizeof(comm), f) != NULL) {
            comm[strcspn(comm, "\n")] = 0;
            if (strcmp(comm, name) == 0)
                found = (pid_t)atoi(e->d_name);
        }
        fclose(f);
    }
    closedir(d);
    return found;
}

cl_command_queue
test_queue_create(cl_context context, cl_device_id device)
{
    cl_command_queue queue;
    cl_int err = CL_SUCCESS;

    queue = clgc_create_command_queue(context, device, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_ptr_nonnull(queue);
    return queue;
}

void
test_device_open(struct test_device *d, size_t nfloats)
{
    cl_device_id device;
    cl_int err;

    d->platform = test_platform("Portable Computing Language");
    ck_assert_int_eq(
        clGetDeviceIDs(d->platform, test_device_type(), 1, &device, NULL), 0);
    d->context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    d->queue = test_queue_create(d->context, device);
    d->program =
        clCreateProgramWithSource(d->context, 1, &test_spin_src, NULL, &err);
    test_assert_built(clBuildProgram(d->program, 1, &device, "", NULL, NULL),
                      d->program, device);
    d->kernel = clCreateKernel(d->program, "spin", &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    d->buf = clCreateBuffer(d->context, CL_MEM_READ_WRITE,
                            nfloats * sizeof(float), NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(d->kernel, 0, sizeof(d->buf), &d->buf), 0);
}

void
test_device_close(struct test_device *d)
{
    clReleaseMemObject(d->buf);
    clReleaseKernel(d->kernel);
    clReleaseProgram(d->program);
    clReleaseCommandQueue(d->queue);
    clReleaseContext(d->context);
}

cl_event
test_launch(struct test_device *d, int n)
{
    size_t global = 64;
    cl_event done;

    ck_assert_int_eq(clSetKernelArg(d->kernel, 1, sizeof(n), &n), 0);
    ck_assert_int_eq(clEnqueueNDRangeKernel(d->queue, d->kernel, 1, NULL,
                                            &global, NULL, 0, NULL, &done),
                     CL_SUCCESS);
    return done;
}

clgc_wait_driver_info_t
test_driver_info(struct test_device *d)
{
    clgc_wait_driver_info_t info;

    ck_assert_int_eq(clgc_wait_driver_info(d->platform, &info), CLGC_OK);
    return info;
}

/* Wait for n-trip kernels while the platform's callbacks (own: its own
 * wait) are still learned, at most bound times. */
static void
wait_while_learning(struct test_device *d, int n, int bound, int own)
{
    for (int i = 0; i < bound; i++) {
        clgc_wait_driver_info_t info = test_driver_info(d);
        cl_event ev;

        if (own ? info.own != CLGC_WAIT_OWN_LEARNING
                : info.learned != CLGC_WAIT_DRIVER_LEARNING)
            return;
        ev = test_launch(d, n);
        ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
        clReleaseEvent(ev);
    }
}

void
test_learn_driver(struct test_device *d)
{
    wait_while_learning(d, 2000, 20000, 0);
}

void
test_learn_own_wait(struct test_device *d)
{
    wait_while_learning(d, 1000000, 64, 1);
}

const char *
test_build_log(cl_program program, cl_device_id device)
{
    static __thread char log[8192];
    size_t size = 0;

    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG,
                              sizeof(log) - 1, log, &size) != CL_SUCCESS)
        snprintf(log, sizeof(log),
                 "(no build log: the log is longer than "
                 "%zu bytes, or the program is gone)",
                 sizeof(log) - 1);
    log[sizeof(log) - 1] = '\0';
    return log;
}
