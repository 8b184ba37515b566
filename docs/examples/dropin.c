/* The drop-in header (docs/bindings.md): vector_add() below is plain
 * OpenCL, as a binding or an application already has it. Compiled with
 * <clgc/dropin.h> in place of <CL/cl.h>, every clXxx call in it becomes
 * clgc_clXxx, with the same signature: each runs in a safe region of the
 * runtime the program installs, and its callbacks would run with the
 * runtime active.
 *
 * main() then reads the command metadata a binding generator would use.
 *
 * It exits 0 when the sum is right, the names were mapped, the runtime
 * saw one safe region per OpenCL call, and the metadata says what the
 * registry does about clBuildProgram, clGetPlatformInfo and
 * clWaitForEvents.
 *
 *   cc dropin.c -o dropin $(pkg-config --cflags --libs clgc)
 */

#include <stdio.h>
#include <string.h>

#include <clgc/dropin.h> /* was: #include <CL/cl.h> */

#define N 1000

/* ---- Unchanged OpenCL code: c = a + b on PoCL's CPU device. ---- */

static const char *source = "__kernel void add(__global const int *a,\n"
                            "                  __global const int *b,\n"
                            "                  __global int *c)\n"
                            "{\n"
                            "    size_t i = get_global_id(0);\n"
                            "    c[i] = a[i] + b[i];\n"
                            "}\n";

static int
vector_add(const int *a, const int *b, int *c, int n)
{
    cl_platform_id platforms[16], platform = NULL;
    cl_uint count = 0;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_mem ab, bb, cb;
    size_t global = (size_t)n, bytes = (size_t)n * sizeof(int);
    char name[256], version[64] = "";
    cl_int err;

    clGetPlatformIDs(16, platforms, &count);
    for (cl_uint i = 0; i < count && i < 16 && platform == NULL; i++) {
        clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof(name), name,
                          NULL);
        if (strstr(name, "Portable Computing Language") != NULL)
            platform = platforms[i];
    }
    if (platform == NULL ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, &device, NULL) != 0)
        return -1;
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    /* An OpenCL 1.x device's driver may lack the 2.0 call. */
    clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof(version) - 1, version,
                    NULL);
    if (strncmp(version, "OpenCL 1.", 9) == 0)
        queue = clCreateCommandQueue(context, device, 0, &err);
    else
        queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    err = clBuildProgram(program, 1, &device, "", NULL, NULL);
    kernel = clCreateKernel(program, "add", &err);
    ab = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                        (void *)a, &err);
    bb = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                        (void *)b, &err);
    cb = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
    clSetKernelArg(kernel, 0, sizeof(ab), &ab);
    clSetKernelArg(kernel, 1, sizeof(bb), &bb);
    clSetKernelArg(kernel, 2, sizeof(cb), &cb);
    err = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL,
                                 NULL);
    if (err == CL_SUCCESS)
        err =
            clEnqueueReadBuffer(queue, cb, CL_TRUE, 0, bytes, c, 0, NULL, NULL);
    clReleaseMemObject(cb);
    clReleaseMemObject(bb);
    clReleaseMemObject(ab);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return err;
}

/* ---- The host: a runtime that counts its safe regions. ---- */

static unsigned long regions;

static void *
counting_region(clgc_fn_t fn, void *arg)
{
    regions++; /* the program calls OpenCL from one thread */
    return fn(arg);
}

static const clgc_runtime_t runtime = {
    .version = CLGC_RUNTIME_VERSION,
    .name = "counting",
    .safe_region = counting_region,
};

#define NAME(f) #f
#define EXPANDED(f) NAME(f)

int
main(void)
{
    static int a[N], b[N], c[N];
    int bad = 0;

    if (clgc_runtime_install(&runtime) != CLGC_OK)
        return 1;
    for (int i = 0; i < N; i++) {
        a[i] = i;
        b[i] = 2 * i;
    }
    if (vector_add(a, b, c, N) != CL_SUCCESS) {
        fputs("vector_add failed\n", stderr);
        return 1;
    }
    for (int i = 0; i < N; i++)
        bad |= c[i] != 3 * i;
    printf("c = a + b: %s\n", bad ? "WRONG" : "right");
    printf("clEnqueueNDRangeKernel is %s\n", EXPANDED(clEnqueueNDRangeKernel));
    bad |= strcmp(EXPANDED(clEnqueueNDRangeKernel),
                  "clgc_clEnqueueNDRangeKernel") != 0;
    /* 23 calls, and clGetPlatformInfo once per platform up to PoCL. */
    printf("safe regions: %lu\n", regions);
    bad |= regions < 24;

    /* What a binding generator reads instead of C headers
     * (clgc/commands.h): every command, how each value is passed, which
     * may block and which take callbacks. */
    {
        const clgc_command_t *build = clgc_command_find("clBuildProgram");
        const clgc_command_t *info = clgc_command_find("clGetPlatformInfo");
        const clgc_command_t *wait = clgc_command_find("clWaitForEvents");
        size_t n = clgc_command_count(), may_block = 0, callbacks = 0;

        for (size_t i = 0; i < n; i++) {
            unsigned flags = clgc_command_at(i)->flags;

            may_block += (flags & CLGC_COMMAND_MAY_BLOCK) != 0;
            callbacks += (flags & CLGC_COMMAND_CALLBACK) != 0;
        }
        printf("%zu commands: %zu may block, %zu take a callback\n", n,
               may_block, callbacks);
        printf("clBuildProgram: %u parameters; %s, the 5th, is a %s\n",
               build->nparams, build->params[4].name, build->params[4].type);
        bad |= !(build->flags & CLGC_COMMAND_MAY_BLOCK) ||
               !(build->flags & CLGC_COMMAND_CALLBACK) ||
               build->params[4].ctype != CLGC_CTYPE_FUNCTION ||
               (info->flags & CLGC_COMMAND_MAY_BLOCK) ||
               wait->wrapper != (clgc_function_t)clgc_clWaitForEvents;
    }
    return bad;
}
