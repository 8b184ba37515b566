/* The default runtime, in a process that never installs one: every hook
 * is the no-op, the thread state is still tracked, and the first crossing
 * fixes the default so that a later install is refused. Misuse that debug
 * builds catch is here too: each test runs in a child of its own (Check's
 * fork mode), so a test may install a runtime without disturbing the
 * others; with CK_FORK=no, run one test at a time (CK_RUN_CASE). */

#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "bound.h"
#include "clgc.h"

static void *
report_state(void *arg)
{
    unsigned *depth = arg;

    *depth =
        clgc_thread_region_depth() * 10 + (unsigned)clgc_thread_in_region();
    return arg;
}

START_TEST(default_runtime_tracks_regions)
{
    unsigned depth = 0;

    ck_assert_ptr_eq(clgc_call_safe(report_state, &depth), &depth);
    ck_assert_uint_eq(depth, 11);
    ck_assert_uint_eq(clgc_thread_region_depth(), 0);
    ck_assert_str_eq(clgc_runtime_current()->name, "none");
    ck_assert_ptr_null(clgc_runtime_data());
    ck_assert_int_eq(clgc_thread_attach(), CLGC_OK);
    ck_assert_int_eq(clgc_thread_detach(), CLGC_OK);
}
END_TEST

START_TEST(install_after_first_use_is_refused)
{
    clgc_runtime_t rt = {.version = CLGC_RUNTIME_VERSION, .name = "late"};
    cl_uint n = 0;

    /* Any wrapper counts as a use, whatever OpenCL answers. */
    clgc_clGetPlatformIDs(0, NULL, &n);
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EINUSE);
    ck_assert_str_eq(clgc_runtime_current()->name, "none");
}
END_TEST

/* The environment sets how waits wait, read at the first wait of the
 * process (which this test's own process is). */
START_TEST(environment_makes_waits_blocking)
{
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_event ev;
    cl_int err;

    ck_assert_int_eq(setenv("CLGC_WAIT", "blocking", 1), 0);
    ck_assert_int_eq(clgc_clGetPlatformIDs(1, &platform, NULL), CL_SUCCESS);
    ck_assert_int_eq(
        clgc_clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL),
        CL_SUCCESS);
    context = clgc_clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ev = clgc_clCreateUserEvent(context, &err);
    ck_assert_int_eq(clgc_clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
    ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_BLOCKING);
    clgc_clReleaseEvent(ev);
    clgc_clReleaseContext(context);
}
END_TEST

/* With POCL_DEVICES=basic, PoCL runs commands on the application thread
 * inside clFlush and clFinish: a wait that flushes still finishes. */
START_TEST(basic_device_wait_finishes)
{
    static const char *src = "__kernel void k(__global int *x)"
                             "{ x[get_global_id(0)] += 1; }";
    size_t global = 64;
    cl_platform_id platforms[8];
    cl_platform_id platform = NULL;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_mem buf;
    cl_event done;
    cl_uint n = 0;
    cl_int err;
    char name[128];

    ck_assert_int_eq(setenv("POCL_DEVICES", "basic", 1), 0);
    ck_assert_int_eq(clGetPlatformIDs(8, platforms, &n), CL_SUCCESS);
    for (cl_uint i = 0; i < n && i < 8; i++) {
        clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof(name), name,
                          NULL);
        if (strstr(name, "Portable Computing Language") != NULL)
            platform = platforms[i];
    }
    ck_assert_ptr_nonnull(platform);
    ck_assert_int_eq(
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), 0);
    ck_assert_int_eq(
        clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof(name), name, NULL),
        CL_SUCCESS);
    ck_assert_msg(strstr(name, "basic") != NULL, "device %s is not basic",
                  name);
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    program = clCreateProgramWithSource(context, 1, &src, NULL, &err);
    ck_assert_int_eq(clBuildProgram(program, 1, &device, "", NULL, NULL), 0);
    kernel = clCreateKernel(program, "k", &err);
    buf = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL,
                         &err);
    ck_assert_int_eq(clSetKernelArg(kernel, 0, sizeof(buf), &buf), 0);
    ck_assert_int_eq(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global,
                                            NULL, 0, NULL, &done),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_wait_set_poll_ns(0), CLGC_OK);
    ck_assert_int_eq(clgc_wait_for_events(1, &done), CL_SUCCESS);
    clReleaseEvent(done);
    clReleaseMemObject(buf);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
}
END_TEST

#ifdef CLGC_DEBUG
static void *
skip_fn(clgc_fn_t fn, void *arg)
{
    return arg;
}

static void *
twice(clgc_fn_t fn, void *arg)
{
    fn(arg);
    return fn(arg);
}

static void *
nothing(void *arg)
{
    return arg;
}

/* A safe_region hook that does not run fn exactly once leaves the thread's
 * regions unbalanced: debug builds abort with a message. */
START_TEST(hook_that_skips_fn_aborts)
{
    clgc_runtime_t rt = {.version = CLGC_RUNTIME_VERSION,
                         .safe_region = skip_fn};

    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_OK);
    clgc_call_safe(nothing, NULL);
}
END_TEST

START_TEST(hook_that_runs_fn_twice_aborts)
{
    clgc_runtime_t rt = {.version = CLGC_RUNTIME_VERSION, .safe_region = twice};

    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_OK);
    clgc_call_safe(nothing, NULL);
}
END_TEST
#endif

int
main(void)
{
    Suite *s = suite_create("default");
    TCase *tc = test_case("none");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, default_runtime_tracks_regions);
    tcase_add_test(tc, install_after_first_use_is_refused);
    suite_add_tcase(s, tc);
    tc = test_case("wait");
    tcase_add_test(tc, environment_makes_waits_blocking);
    tcase_add_test(tc, basic_device_wait_finishes);
    suite_add_tcase(s, tc);
#ifdef CLGC_DEBUG
    tc = test_case("unbalanced");
    tcase_add_test_raise_signal(tc, hook_that_skips_fn_aborts, SIGABRT);
    tcase_add_test_raise_signal(tc, hook_that_runs_fn_twice_aborts, SIGABRT);
    suite_add_tcase(s, tc);
#endif
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
