/* The wrappers on the real PoCL CPU device, through the real ICD loader:
 * a whole program's life (platforms, devices, build, kernel, results,
 * releases), extension functions resolved for PoCL's platform, and bad
 * input. Only clgc_cl* calls touch OpenCL here. */

#include <pthread.h>
#include <string.h>

#include "testutil.h"
/* Every wrapper: clgc.h declares the command-buffer ones only with headers
 * at the registry's revision of cl_khr_command_buffer, which Debian 12's
 * are not. */
#include "gen/commands.h"

#define N 1024

static const char *saxpy_src =
    "__kernel void saxpy(float a, __global const float *x,\n"
    "                    __global float *y)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    y[i] = a * x[i] + y[i];\n"
    "}\n";

/* Counts the wrapper calls a test makes, to compare with the runtime's
 * count of safe regions. */
static unsigned long calls;
#define W(call) (calls++, (call))

struct pocl {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
};

static void
pocl_open(struct pocl *p)
{
    cl_platform_id ids[16];
    cl_uint n = 0;
    char name[256];
    cl_int err;

    ck_assert_int_eq(W(clgc_clGetPlatformIDs(16, ids, &n)), CL_SUCCESS);
    ck_assert_uint_ge(n, 1);
    p->platform = NULL;
    for (cl_uint i = 0; i < n && i < 16 && p->platform == NULL; i++) {
        ck_assert_int_eq(W(clgc_clGetPlatformInfo(ids[i], CL_PLATFORM_NAME,
                                                  sizeof(name), name, NULL)),
                         CL_SUCCESS);
        if (strstr(name, "Portable Computing Language") != NULL)
            p->platform = ids[i];
    }
    ck_assert_msg(p->platform != NULL, "PoCL is not among %u platforms", n);
    ck_assert_int_eq(W(clgc_clGetDeviceIDs(p->platform, CL_DEVICE_TYPE_CPU, 1,
                                           &p->device, NULL)),
                     CL_SUCCESS);
    p->context = W(clgc_clCreateContext(NULL, 1, &p->device, NULL, NULL, &err));
    ck_assert_int_eq(err, CL_SUCCESS);
    p->queue = W(clgc_clCreateCommandQueueWithProperties(p->context, p->device,
                                                         NULL, &err));
    ck_assert_int_eq(err, CL_SUCCESS);
}

static void
pocl_close(struct pocl *p)
{
    ck_assert_int_eq(W(clgc_clReleaseCommandQueue(p->queue)), CL_SUCCESS);
    ck_assert_int_eq(W(clgc_clReleaseContext(p->context)), CL_SUCCESS);
}

/* What the build notification saw: PoCL calls it on the building thread,
 * before clBuildProgram returns, inside the wrapper's region; clgc's
 * trampoline re-enters the runtime through its active hook for it. */
struct notify_seen {
    int calls;
    int hook_depth;
    int in_region;
    unsigned long active_calls;
    pthread_t thread;
};

static void CL_CALLBACK
build_notify(cl_program program, void *data)
{
    struct notify_seen *seen = data;

    seen->calls++;
    seen->hook_depth = test_rt_hook_depth();
    seen->in_region = clgc_thread_in_region();
    seen->active_calls = test_rt_active_calls();
    seen->thread = pthread_self();
}

START_TEST(program_runs_through_wrappers_inside_regions)
{
    unsigned long safe0 = test_rt_safe_calls();
    unsigned long active0 = test_rt_active_calls();
    struct notify_seen seen = {0, -1, -1, 0, 0};
    float x[N], y[N], out[N], a = 3.0f;
    size_t global = N, log_size = 0;
    struct pocl p;
    cl_program program;
    cl_kernel kernel;
    cl_mem bx, by;
    cl_event done;
    cl_int err, status = 1;
    char log[4096];

    calls = 0;
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = (float)(N - i);
    }
    pocl_open(&p);
    program =
        W(clgc_clCreateProgramWithSource(p.context, 1, &saxpy_src, NULL, &err));
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(
        W(clgc_clBuildProgram(program, 1, &p.device, "", build_notify, &seen)),
        CL_SUCCESS);
    ck_assert_int_eq(seen.calls, 1);
    ck_assert_int_eq(seen.hook_depth, 0);
    ck_assert_int_eq(seen.in_region, 0);
    ck_assert_uint_eq(seen.active_calls - active0, 1);
    ck_assert(pthread_equal(seen.thread, pthread_self()));
    ck_assert_int_eq(
        W(clgc_clGetProgramBuildInfo(program, p.device, CL_PROGRAM_BUILD_LOG,
                                     sizeof(log), log, &log_size)),
        CL_SUCCESS);
    ck_assert_uint_ge(log_size, 1);
    ck_assert_int_eq(log[log_size - 1], '\0');

    kernel = W(clgc_clCreateKernel(program, "saxpy", &err));
    ck_assert_int_eq(err, CL_SUCCESS);
    bx = W(clgc_clCreateBuffer(p.context,
                               CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               sizeof(x), x, &err));
    ck_assert_int_eq(err, CL_SUCCESS);
    by = W(clgc_clCreateBuffer(p.context,
                               CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                               sizeof(y), y, &err));
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(W(clgc_clSetKernelArg(kernel, 0, sizeof(a), &a)), 0);
    ck_assert_int_eq(W(clgc_clSetKernelArg(kernel, 1, sizeof(bx), &bx)), 0);
    ck_assert_int_eq(W(clgc_clSetKernelArg(kernel, 2, sizeof(by), &by)), 0);
    ck_assert_int_eq(
        W(clgc_clEnqueueNDRangeKernel(p.queue, kernel, 1, NULL, &global, NULL,
                                      0, NULL, &done)),
        CL_SUCCESS);
    ck_assert_int_eq(W(clgc_clWaitForEvents(1, &done)), CL_SUCCESS);
    ck_assert_int_eq(
        W(clgc_clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS,
                              sizeof(status), &status, NULL)),
        CL_SUCCESS);
    ck_assert_int_eq(status, CL_COMPLETE);
    ck_assert_int_eq(
        W(clgc_clEnqueueReadBuffer(p.queue, by, CL_TRUE, 0, sizeof(out), out, 0,
                                   NULL, NULL)),
        CL_SUCCESS);
    for (int i = 0; i < N; i++)
        ck_assert_float_eq(out[i], a * x[i] + y[i]);

    ck_assert_int_eq(W(clgc_clReleaseEvent(done)), CL_SUCCESS);
    ck_assert_int_eq(W(clgc_clReleaseMemObject(bx)), CL_SUCCESS);
    ck_assert_int_eq(W(clgc_clReleaseMemObject(by)), CL_SUCCESS);
    ck_assert_int_eq(W(clgc_clReleaseKernel(kernel)), CL_SUCCESS);
    ck_assert_int_eq(W(clgc_clReleaseProgram(program)), CL_SUCCESS);
    pocl_close(&p);

    ck_assert_uint_eq(test_rt_safe_calls() - safe0, calls);
    ck_assert_uint_eq(clgc_thread_region_depth(), 0);
    ck_assert_int_eq(clgc_thread_in_region(), 0);
    ck_assert_int_eq(test_rt_hook_depth(), 0);
}
END_TEST

START_TEST(extension_functions_resolve_for_pocl)
{
    struct pocl p;
    cl_mem buf, size_buf;
    cl_int err = 0;

    pocl_open(&p);
    buf = clgc_clCreateBuffer(p.context, CL_MEM_READ_WRITE, 64, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    size_buf = clgc_clCreateBuffer(p.context, CL_MEM_READ_WRITE,
                                   sizeof(cl_ulong), NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);

    /* A PoCL extension, found for the buffer's platform. */
    ck_assert_int_eq(clgc_clSetContentSizeBufferPoCL(buf, size_buf),
                     CL_SUCCESS);
    ck_assert_ptr_eq(clgc_clGetExtensionFunctionAddressForPlatform(
                         p.platform, "clSetContentSizeBufferPoCL"),
                     (void *)clgc_clSetContentSizeBufferPoCL);
    ck_assert_ptr_null(clgc_clGetExtensionFunctionAddressForPlatform(
        p.platform, "clNoSuchFunctionAnywhere"));

    /* A function PoCL lacks: a clear error, nothing called. */
    ck_assert_ptr_null(clGetExtensionFunctionAddressForPlatform(
        p.platform, "clCreateAcceleratorINTEL"));
    ck_assert_ptr_null(clgc_clGetExtensionFunctionAddressForPlatform(
        p.platform, "clCreateAcceleratorINTEL"));
    err = 0;
    ck_assert_ptr_null(
        clgc_clCreateAcceleratorINTEL(p.context, 0, 0, NULL, &err));
    ck_assert_int_eq(err, CL_INVALID_OPERATION);
    ck_assert_int_eq(clgc_clGetKernelSuggestedLocalWorkSizeKHR(
                         p.queue, NULL, 1, NULL, NULL, NULL),
                     CL_INVALID_OPERATION);

    ck_assert_int_eq(clgc_clReleaseMemObject(size_buf), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseMemObject(buf), CL_SUCCESS);
    pocl_close(&p);
}
END_TEST

START_TEST(null_objects_get_their_error)
{
    cl_event none = NULL;
    size_t size = 0;
    cl_int err = 0;

    ck_assert_int_eq(clgc_clGetDeviceInfo(NULL, CL_DEVICE_NAME, 0, NULL, &size),
                     CL_INVALID_DEVICE);
    ck_assert_int_eq(clgc_clReleaseMemObject(NULL), CL_INVALID_MEM_OBJECT);
    ck_assert_ptr_null(clgc_clCreateBuffer(NULL, 0, 64, NULL, &err));
    ck_assert_int_eq(err, CL_INVALID_CONTEXT);
    ck_assert_int_eq(clgc_clWaitForEvents(1, &none), CL_INVALID_EVENT);
    ck_assert_int_eq(clgc_clWaitForEvents(0, NULL), CL_INVALID_VALUE);
    /* Extension commands: clgc checks, there is no loader in between. */
    ck_assert_int_eq(clgc_clSetContentSizeBufferPoCL(NULL, NULL),
                     CL_INVALID_MEM_OBJECT);
    ck_assert_int_eq(clgc_clRetainSemaphoreKHR(NULL), CL_INVALID_SEMAPHORE_KHR);
    err = 0;
    ck_assert_ptr_null(clgc_clCreateCommandBufferKHR(0, NULL, NULL, &err));
    ck_assert_int_eq(err, CL_INVALID_COMMAND_QUEUE);
}
END_TEST

/* Objects whose last reference is gone and whose memory PoCL freed: the
 * loader would crash on them (it calls through their first word); the
 * wrappers report them. Events are not among them: PoCL 3.1 keeps released
 * events on a free list of its own, dispatch pointer and all, and aborts
 * when it is given one (docs/wrappers.md). */
START_TEST(released_objects_get_their_error)
{
    struct pocl p;
    cl_context context;
    cl_mem buf;
    size_t size = 0;
    cl_int err = 0;

    pocl_open(&p);
    buf = clgc_clCreateBuffer(p.context, CL_MEM_READ_WRITE, 64, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseMemObject(buf), CL_SUCCESS);
    ck_assert_int_eq(
        clgc_clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof(size), &size, NULL),
        CL_INVALID_MEM_OBJECT);
    ck_assert_int_eq(clgc_clReleaseMemObject(buf), CL_INVALID_MEM_OBJECT);
    ck_assert_int_eq(clgc_clSetContentSizeBufferPoCL(buf, buf),
                     CL_INVALID_MEM_OBJECT);

    context = clgc_clCreateContext(NULL, 1, &p.device, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseContext(context), CL_SUCCESS);
    err = 0;
    ck_assert_ptr_null(clgc_clCreateBuffer(context, 0, 64, NULL, &err));
    ck_assert_int_eq(err, CL_INVALID_CONTEXT);
    pocl_close(&p);
}
END_TEST

/* Issue 25, item 4: PoCL 3.1's dispatch table has no
 * clSetCommandQueueProperty (OpenCL 1.1 deprecated it), and the loader
 * calls through the NULL entry: OpenCL-CTS's set_command_queue_property
 * jumped to address 0. Through clgc it is CL_INVALID_OPERATION, on the
 * inline path where PoCL is the first platform and on the out-of-line
 * one inside a region, and the queue's properties are unchanged. */
static void *
set_profiling(void *queue)
{
    cl_command_queue_properties old = 0;

    return (void *)(intptr_t)clgc_clSetCommandQueueProperty(
        queue, CL_QUEUE_PROFILING_ENABLE, CL_TRUE, &old);
}

START_TEST(missing_entry_is_invalid_operation)
{
    struct pocl p;
    cl_command_queue_properties old = 0, now = 1;

    pocl_open(&p);
    ck_assert_int_eq(clgc_clSetCommandQueueProperty(
                         p.queue, CL_QUEUE_PROFILING_ENABLE, CL_TRUE, &old),
                     CL_INVALID_OPERATION);
    ck_assert_ptr_eq(clgc_call_safe(set_profiling, p.queue),
                     (void *)(intptr_t)CL_INVALID_OPERATION);
    ck_assert_int_eq(clgc_clGetCommandQueueInfo(p.queue, CL_QUEUE_PROPERTIES,
                                                sizeof(now), &now, NULL),
                     CL_SUCCESS);
    ck_assert_uint_eq(now & CL_QUEUE_PROFILING_ENABLE, 0);
    pocl_close(&p);
}
END_TEST

/* A sub-device released while its context, queue and buffer live, as a
 * binding's collector may release them: OpenCL says they keep it, and
 * PoCL 3.1 crashed in the buffer's release when only the program's
 * reference had kept it. clgc's context keeps its sub-devices
 * (src/subdevice.c) until it is destroyed. */
START_TEST(a_released_sub_device_outlives_its_context)
{
    static const cl_device_partition_property equally[] = {
        CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    struct pocl p;
    cl_device_id subs[64];
    cl_uint n = 0;
    cl_context context;
    cl_command_queue queue;
    cl_mem buf;
    cl_event written;
    cl_uint refs = 0;
    char data[64], back[64];
    cl_int err;

    pocl_open(&p);
    memset(data, 7, sizeof(data));
    memset(back, 0, sizeof(back));
    ck_assert_int_eq(clgc_clCreateSubDevices(p.device, equally, 0, NULL, &n),
                     CL_SUCCESS);
    ck_assert_uint_ge(n, 1);
    ck_assert_uint_le(n, 64);
    ck_assert_int_eq(clgc_clCreateSubDevices(p.device, equally, n, subs, NULL),
                     CL_SUCCESS);
    context = clgc_clCreateContext(NULL, 1, &subs[0], NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    queue =
        clgc_clCreateCommandQueueWithProperties(context, subs[0], NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    buf = clgc_clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(data), NULL,
                              &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    /* The program's references to every sub-device go; the context's
     * stays. */
    for (cl_uint i = 0; i < n; i++)
        ck_assert_int_eq(clgc_clReleaseDevice(subs[i]), CL_SUCCESS);
    ck_assert_int_eq(clgc_clGetDeviceInfo(subs[0], CL_DEVICE_REFERENCE_COUNT,
                                          sizeof(refs), &refs, NULL),
                     CL_SUCCESS);
    ck_assert_uint_ge(refs, 1);
    ck_assert_int_eq(clgc_clEnqueueWriteBuffer(queue, buf, CL_FALSE, 0,
                                               sizeof(data), data, 0, NULL,
                                               &written),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_clEnqueueReadBuffer(queue, buf, CL_TRUE, 0,
                                              sizeof(back), back, 1, &written,
                                              NULL),
                     CL_SUCCESS);
    ck_assert_mem_eq(back, data, sizeof(data));
    ck_assert_int_eq(clgc_clReleaseEvent(written), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseMemObject(buf), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseCommandQueue(queue), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseContext(context), CL_SUCCESS);
    pocl_close(&p);
}
END_TEST

Suite *
clgc_make_pocl_suite(void)
{
    Suite *s = suite_create("pocl");
    TCase *tc = test_case("program");

    tcase_add_test(tc, program_runs_through_wrappers_inside_regions);
    suite_add_tcase(s, tc);
    tc = test_case("extensions");
    tcase_add_test(tc, extension_functions_resolve_for_pocl);
    suite_add_tcase(s, tc);
    tc = test_case("sub-devices");
    tcase_add_test(tc, a_released_sub_device_outlives_its_context);
    suite_add_tcase(s, tc);
    tc = test_case("bad input");
    tcase_add_test(tc, null_objects_get_their_error);
    tcase_add_test(tc, released_objects_get_their_error);
    test_add_pocl_test(tc, missing_entry_is_invalid_operation,
                       "PoCL 3.1 leaves clSetCommandQueueProperty NULL");
    suite_add_tcase(s, tc);
    return s;
}
