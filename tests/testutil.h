#ifndef CLGC_TESTUTIL_H
#define CLGC_TESTUTIL_H

/* Shared by the test suites: the recording runtime that check_main.c
 * installs for the whole process (a runtime can be installed only once),
 * and helpers for the real PoCL platform. */

#include <check.h>
#include <poll.h>
#include <semaphore.h>
#include <sys/types.h>

#include "bound.h"
#include "clgc.h"

/* Install the recording runtime. Called once, by main(). */
int test_rt_install(void);

/* How many times the runtime's hooks ran, on all threads. */
unsigned long test_rt_safe_calls(void);
unsigned long test_rt_active_calls(void);
unsigned long test_rt_attach_calls(void);
unsigned long test_rt_detach_calls(void);
/* clgc_thread_region_depth() inside the last detach_thread hook. */
unsigned test_rt_detach_depth(void);

/* How many failures the callback_failed hook was given, and the last
 * one (if last is not NULL). */
unsigned long test_rt_failures(clgc_callback_error_t *last);

/* How many safe_region hooks the calling thread is inside right now. */
int test_rt_hook_depth(void);

/* Have each attach_thread hook call fn(arg) first, on the attaching
 * thread (NULL to stop): a test holds a thread there. */
void test_rt_set_attach_hook(void (*fn)(void *), void *arg);
/* Make the next attach_thread hooks return err (CLGC_OK to stop). */
void test_rt_set_attach_result(int err);

/* Strict (1): the runtime knows only the main thread and the threads its
 * attach_thread hook attached, as bdwgc does, so that a plain thread is
 * attached on its first clgc_call_active. Not strict (0, the default):
 * it knows every thread. clgc remembers that a thread is known, so turn
 * it on before the threads it is for first cross into clgc. */
void test_rt_set_strict(int on);

/* PoCL's CL_PLATFORM_NAME: what tests that want "the device" ask for. */
#define TEST_POCL "Portable Computing Language"

/* The first platform whose CL_PLATFORM_NAME contains `name`, found with
 * the raw loader calls; fails the test if there is none. When the
 * environment variable CLGC_TEST_PLATFORM is set (a substring of another
 * platform's name, for a run on another machine: docs/other-machines.md),
 * a request for TEST_POCL gets that platform instead. */
cl_platform_id test_platform(const char *name);

/* CLGC_TEST_PLATFORM, or NULL when it is unset or empty: the tests run on
 * PoCL 3.1, as everywhere in this tree by default. */
const char *test_elsewhere(void);

/* The device type to ask the test platform for: PoCL's CPU device, or the
 * first device of any type on the platform CLGC_TEST_PLATFORM chose. */
cl_device_type test_device_type(void);

/* A context on the test platform's device (PoCL's CPU device unless
 * CLGC_TEST_PLATFORM says otherwise), made with the raw calls. */
cl_context test_pocl_context(void);

/* The Check tag of the test cases that race threads (PoCL's, clgc's
 * watcher, the tests' own): `run` runs these, and no other test case of
 * the Check programs, again under ThreadSanitizer (CK_INCLUDE_TAGS). */
#define TEST_TAG_THREADED "threaded"

/* An in-order queue on device (clgc_create_command_queue, on any OpenCL
 * version). Fails the test if none is made. */
cl_command_queue test_queue_create(cl_context context, cl_device_id device);

/* Add a test that relies on what PoCL 3.1 does and OpenCL does not
 * promise (a callback on the calling thread, native kernels, no callback
 * for a failed user event): always here; when CLGC_TEST_PLATFORM chose
 * another platform it is left out, with a line on stderr saying so and
 * why, rather than run where its premise does not hold. */
#define test_add_pocl_test(tc, fn, why) test_add_pocl_only(tc, fn, #fn, why)
void test_add_pocl_only(TCase *tc, const TTest *test, const char *name,
                        const char *why);

/* What a test case takes the driver to do that OpenCL does not promise,
 * beyond PoCL's own ways (test_add_pocl_test). PoCL 3.1's CPU device, the
 * tests' default platform, does each. On the platform CLGC_TEST_PLATFORM
 * chose, test_driver_does asks the driver, once, in a child process (the
 * Check program's own process never loads a driver: its test cases run
 * in children of it), and says whether it does. */
enum test_premise {
    /* The driver runs a flushed command on threads of its own: clFlush
     * returns while the command still waits for its wait list (PoCL's
     * pthread device, NVIDIA). Oclgrind runs a queue's commands inside
     * clFlush, on the calling thread, and its flush waits for the wait
     * list: a test whose other thread sets a user event only once the
     * waiter is asleep after its flush would wait for itself there. */
    TEST_DRIVER_THREADS,
    TEST_PREMISES
};
int test_driver_does(enum test_premise premise);

/* Add a test that holds only where the driver does what premise says:
 * where it does not, the case is left out with a line on stderr ("not run
 * on ...: NAME (the driver ...: WHY)"), and every other case still runs;
 * where the probe itself failed, every premised case is left out, and a
 * line says so.
 * tools/bundle-run.sh counts those lines into its summary. */
#define test_add_premised_test(tc, fn, premise, why)                           \
    test_add_premised(tc, fn, #fn, premise, why)
void test_add_premised(TCase *tc, const TTest *test, const char *name,
                       enum test_premise premise, const char *why);

/* A user event and the status to give it: test_set_status, a pthread
 * start routine, sets it from the thread it runs on. */
struct test_setter {
    cl_event event;
    cl_int status;
};
void *test_set_status(void *setter);

/* Waiting for another thread: a driver's callback thread (PoCL calls a
 * user event's callbacks inside clSetUserEventStatus, NVIDIA 10 to 20 ms
 * later on a thread of its own), or a helper. A bound that only a hang
 * reaches, never a measure:
 *
 *     struct test_await w = test_await_start();
 *
 *     while (atomic_load(&calls) < n)
 *         test_await_nap(&w, "%u handlers to run (%u ran)", n,
 *                        atomic_load(&calls));
 *
 * test_await_nap yields the processor (after a thousand naps it sleeps a
 * millisecond) and, once the test has waited TEST_AWAIT_S seconds (times
 * CK_TIMEOUT_MULTIPLIER, as Check's timeouts are), fails it with
 * "waited N s for " and the message: what it waited for and what it
 * saw. */
#define TEST_AWAIT_S 60
struct test_await {
    long deadline_ns;
    unsigned long naps;
};
struct test_await test_await_start(void);
void test_await_nap(struct test_await *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* sem_wait and poll(fd, 1, -1), bounded as test_await_nap is: past the
 * bound the test fails with "waited N s for " and what. test_poll returns
 * poll's result (1 once the descriptor is ready). */
void test_sem_wait(sem_t *sem, const char *what);
int test_poll(struct pollfd *p, const char *what);

/* Wait until PoCL holds no reference to an event of a command it ran.
 * It drops its own last, after the command's callbacks have returned and
 * the command's other references (its kernel's) are gone; until then
 * the thread that ran the callbacks is still at work in PoCL, and the
 * process must not exit (with ASan, glibc's exit handlers then crash at
 * times). The caller holds a reference. Bounded (test_await). */
void test_event_let_go(cl_event event);

/* The event's CL_EVENT_COMMAND_EXECUTION_STATUS, asserting the query
 * succeeds. */
cl_int test_event_status(cl_event event);

/* OpenCL C source of `spin(__global float *x, int n)`: each work item
 * spins n times, so a launch takes as long as a test needs. */
extern const char *test_spin_src;

/* A build that must succeed: on failure the assertion says what the
 * compiler said, the program's build log (PoCL prints only "1 error
 * generated." on stderr). test_build_log's text lives until the thread's
 * next call. */
#define test_assert_built(call, program, device)                               \
    do {                                                                       \
        cl_int built_ = (call);                                                \
        if (built_ != CL_SUCCESS)                                              \
            ck_abort_msg("%s: %d; the build log:\n%s", #call, (int)built_,     \
                         test_build_log(program, device));                     \
    } while (0)
const char *test_build_log(cl_program program, cl_device_id device);

/* Every suite, for check_main.c. */
Suite *clgc_make_runtime_suite(void);
Suite *clgc_make_commands_suite(void);
Suite *clgc_make_names_suite(void);
Suite *clgc_make_pocl_suite(void);
Suite *clgc_make_forward_suite(void);
Suite *clgc_make_threads_suite(void);
Suite *clgc_make_wait_suite(void);
Suite *clgc_make_notify_suite(void);
Suite *clgc_make_queue_suite(void);
Suite *clgc_make_queue_threads_suite(void);
Suite *clgc_make_callback_suite(void);
Suite *clgc_make_callback_threads_suite(void);
Suite *clgc_make_ffi_suite(void);
Suite *clgc_make_ffi_threads_suite(void);
Suite *clgc_make_binding_suite(void);

/* 1 if thread tid of this process is blocked in futex(2) now (a waiter's
 * sleep, or a lock's), read from /proc/self/task/TID/syscall; 0
 * otherwise. Tests use it, or test_sleeps_timed below for a cooperative
 * wait's own sleep, to act only once a waiter sleeps, whatever the
 * scheduling. */
int test_sleeps_in_futex(pid_t tid);

/* 1 if thread tid sleeps in futex(2) with no timeout (a condition
 * variable's untimed wait), 0 if it runs or sleeps with one. */
int test_sleeps_untimed(pid_t tid);

/* 1 if thread tid sleeps in futex(2) with a timeout: every sleep of a
 * cooperative wait's has one (its looks at the events), where the locks
 * a thread may wait for on its way into the wait have none. */
int test_sleeps_timed(pid_t tid);

/* The id of this process's thread named name (its comm), or 0. */
pid_t test_thread_named(const char *name);
/* How many times thread tid of this process has slept and been woken
 * (its voluntary context switches), or -1. */
long test_thread_wakeups(pid_t tid);

/* The tests' device (PoCL's, or CLGC_TEST_PLATFORM's) with a queue and
 * test_spin_src's kernel "spin", its argument 0 set to a buffer of
 * nfloats floats: for the tests of waits. Undo with test_device_close. */
struct test_device {
    cl_platform_id platform;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_mem buf;
};
void test_device_open(struct test_device *d, size_t nfloats);
void test_device_close(struct test_device *d);

/* Launch the kernel over 64 items (the device needs 64 floats), n trips
 * of its loop each (2000: a short kernel; 1000000: a few ms), flushed
 * by nobody. Its event. */
cl_event test_launch(struct test_device *d, int n);

/* What clgc learned of the device's platform (clgc_wait_driver_info). */
clgc_wait_driver_info_t test_driver_info(struct test_device *d);

/* Wait for short kernels until clgc has learned the platform's callbacks
 * (a bound, not a time: each wait that polls while learning is a sample
 * or leaves one for later), then, on one learned late, for kernels of a
 * few milliseconds until it has learned its own clWaitForEvents (each
 * polls 100 us, then is a sample of it; 32 such decide in any case).
 * Every wait must succeed. */
void test_learn_driver(struct test_device *d);
void test_learn_own_wait(struct test_device *d);

#endif /* CLGC_TESTUTIL_H */
