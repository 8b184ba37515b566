/* A program built against the newest OpenCL headers (OpenCL-Headers
 * v2026.05.29, OpenCL 3.1, beta extensions on) through clgc/dropin.h, run
 * against this machine's ICD loader (ocl-icd 2.3.1, which predates 3.1)
 * and PoCL 3.1. tests/newest.sh builds and runs it.
 *
 * It shows that every wrapper the headers let it name is the library's
 * (the drop-in names resolve to the wrappers clgc's metadata lists), and
 * that OpenCL 3.1 commands PoCL lacks fail with CL_INVALID_OPERATION: the
 * core command clGetKernelSuggestedLocalWorkSize, which the loader does not
 * export, and two extension commands. Exits 0 when all holds, 1 with a
 * message for each check that failed. */

#include <stdio.h>
#include <string.h>

#include "clgc.h"

#include "gen/signatures.h"

#include "clgc/dropin.h"

#define TEST_EVERY_WRAPPER
#include "gen/mapped.h"

#if !defined(CL_VERSION_3_1) || !defined(CLGC_HAVE_cl_khr_unified_svm)
#error                                                                         \
    "build with v2026.05.29's headers, CL_TARGET_OPENCL_VERSION=310 and CL_ENABLE_BETA_EXTENSIONS"
#endif

static int failures;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "newest.c:%d: %s\n", __LINE__, #cond);             \
            failures++;                                                        \
        }                                                                      \
    } while (0)

/* Each wrapper the program names through the drop-in header is the one
 * the library's metadata lists for the command. */
static void
every_wrapper_is_the_librarys(void)
{
    unsigned n = 0;

    for (const struct test_wrapper *w = test_wrappers; w->name != NULL; w++) {
        const clgc_command_t *c = clgc_command_find(w->name);

        CHECK(c != NULL);
        if (c != NULL && c->wrapper != w->fn)
            fprintf(stderr, "newest.c: %s is not clgc's wrapper\n", w->name);
        CHECK(c != NULL && c->wrapper == w->fn);
        n++;
    }
    CHECK(n == TEST_N_EVERY_WRAPPER);
    CHECK(clgc_command_count() == 252);
}

/* PoCL's platform and CPU device. */
static int
find_pocl(cl_platform_id *platform, cl_device_id *device)
{
    cl_platform_id ids[16];
    cl_uint n = 0;
    char name[256];

    if (clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
        n = 0;
    for (cl_uint i = 0; i < n && i < 16; i++) {
        if (clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof(name), name,
                              NULL) == CL_SUCCESS &&
            strstr(name, "Portable Computing Language") != NULL &&
            clGetDeviceIDs(ids[i], CL_DEVICE_TYPE_CPU, 1, device, NULL) ==
                CL_SUCCESS) {
            *platform = ids[i];
            return 0;
        }
    }
    fprintf(stderr, "newest.c: no PoCL platform with a CPU device\n");
    return -1;
}

static const char *source = "kernel void k(global int *a) {"
                            " a[get_global_id(0)] = 1; }";

/* The 3.1 commands on PoCL's real objects. PoCL 3.1 has none of them:
 * clgc's lookup (the drop-in name of clGetExtensionFunctionAddressForPlatform)
 * says so first, so that the test states its premise. */
static void
missing_commands_fail_cleanly(void)
{
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    size_t global = 64, local = 12345;
    cl_int err = CL_SUCCESS;
    void *svm;

    if (find_pocl(&platform, &device) != 0) {
        failures++;
        return;
    }
    CHECK(clGetExtensionFunctionAddressForPlatform(
              platform, "clGetKernelSuggestedLocalWorkSize") == NULL);
    CHECK(clGetExtensionFunctionAddressForPlatform(
              platform, "clSVMAllocWithPropertiesKHR") == NULL);
    CHECK(clGetExtensionFunctionAddressForPlatform(
              platform, "clSetKernelArgDevicePointerEXT") == NULL);

    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err == CL_SUCCESS);
    queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    CHECK(err == CL_SUCCESS);
    program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    CHECK(err == CL_SUCCESS);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL) == CL_SUCCESS);
    kernel = clCreateKernel(program, "k", &err);
    CHECK(err == CL_SUCCESS);

    /* OpenCL 3.1 core: not a symbol of ocl-icd 2.3.1, not in PoCL 3.1. */
    CHECK(clGetKernelSuggestedLocalWorkSize(queue, kernel, 1, NULL, &global,
                                            &local) == CL_INVALID_OPERATION);
    CHECK(local == 12345);
    /* cl_khr_unified_svm: NULL, and the error in *errcode_ret. */
    err = CL_SUCCESS;
    svm = clSVMAllocWithPropertiesKHR(context, NULL, 0, 64, &err);
    CHECK(svm == NULL);
    CHECK(err == CL_INVALID_OPERATION);
    /* cl_ext_buffer_device_address. */
    CHECK(clSetKernelArgDevicePointerEXT(kernel, 0, 0) == CL_INVALID_OPERATION);
    /* A NULL queue still gets the queue's error, before any lookup. */
    CHECK(clGetKernelSuggestedLocalWorkSize(NULL, kernel, 1, NULL, &global,
                                            &local) ==
          CL_INVALID_COMMAND_QUEUE);

    CHECK(clReleaseKernel(kernel) == CL_SUCCESS);
    CHECK(clReleaseProgram(program) == CL_SUCCESS);
    CHECK(clReleaseCommandQueue(queue) == CL_SUCCESS);
    CHECK(clReleaseContext(context) == CL_SUCCESS);
}

int
main(void)
{
    every_wrapper_is_the_librarys();
    missing_commands_fail_cleanly();
    if (failures == 0)
        printf("newest.c: %d wrappers through the drop-in names; the 3.1"
               " commands PoCL lacks fail with CL_INVALID_OPERATION\n",
               TEST_N_EVERY_WRAPPER);
    return failures == 0 ? 0 : 1;
}
