/* An "unmodified program" for the layer's tests (tests/layer.sh): built
 * against libOpenCL only, it never includes a clgc header and never calls
 * clgc. Run with and without OPENCL_LAYERS naming libclgc-layer.
 *
 *   layerprog stub DEPTH
 *   layerprog bad
 *   layerprog coop
 *   layerprog foreign
 *   layerprog init LAYER
 *
 * calls a set of dispatched commands on the stub ICD's objects and checks
 * that each reaches the stub exactly once, at safe-region depth DEPTH as
 * the stub's probe sees it (1 with the layer; -1 without, where no clgc is
 * in the process to ask), then prints what each call returned, which the
 * script compares between the two runs. */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include "stub/stub.h"

static unsigned (*region_depth)(void);

/* The stub's probe: the region depth of the calling thread, asked of the
 * libclgc the layer brought into the process (found by name, since the
 * program does not link clgc). */
static int
probe(void)
{
    return region_depth != NULL ? (int)region_depth() : -1;
}

static struct stub_control *ctl;
static int failures;

/* One call has just returned `got`: the stub saw it once, at `depth`, and
 * the program got back what the stub returned. */
static void
check(const char *what, uint64_t got, int depth)
{
    if (ctl->calls != 1) {
        printf("FAIL %s: the stub saw %lu calls, not 1\n", what, ctl->calls);
        failures++;
    } else if (ctl->log[0].probe != depth) {
        printf("FAIL %s: region depth %d at the stub, not %d\n", what,
               ctl->log[0].probe, depth);
        failures++;
    } else if (got != stub_result_bits(ctl->log[0].index)) {
        printf("FAIL %s: returned %#llx, the stub %#llx\n", what,
               (unsigned long long)got,
               (unsigned long long)stub_result_bits(ctl->log[0].index));
        failures++;
    }
    printf("%s -> %#llx (command %u, %u args)\n", what, (unsigned long long)got,
           ctl->log[0].index, ctl->log[0].nargs);
    ctl->reset();
}

static cl_platform_id
named_platform(const char *want)
{
    cl_platform_id ids[16];
    cl_uint n = 0;

    if (clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
        return NULL;
    for (cl_uint i = 0; i < n && i < 16; i++) {
        char name[64] = "";

        clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strcmp(name, want) == 0)
            return ids[i];
    }
    return NULL;
}

static cl_platform_id
stub_platform(void)
{
    return named_platform(STUB_PLATFORM_NAME);
}

static int
run_stub(int depth)
{
    cl_platform_id p = stub_platform();
    cl_uint n = 0;
    cl_int err = 0;
    size_t size = 0;
    cl_event ev = NULL;
    const size_t global = 64;
    void *ctx, *queue, *mem, *kernel, *event, *lib;

    if (p == NULL || clGetPlatformInfo(p, STUB_PLATFORM_CONTROL, sizeof ctl,
                                       &ctl, NULL) != CL_SUCCESS) {
        printf("FAIL: no stub platform\n");
        return 1;
    }
    /* The layer and its libclgc are loaded RTLD_LOCAL: ask for libclgc by
     * its soname, without loading it where it is not. */
    lib = dlopen("libclgc.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (lib != NULL)
        *(void **)&region_depth = dlsym(lib, "clgc_thread_region_depth");
    ctl->probe = probe;
    ctl->reset();
    ctx = ctl->object(p, 1);
    queue = ctl->object(p, 2);
    mem = ctl->object(p, 3);
    kernel = ctl->object(p, 4);
    event = ctl->object(p, 5);

    check("clGetDeviceIDs",
          (uint32_t)clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, NULL, &n), depth);
    check("clRetainContext", (uint32_t)clRetainContext(ctx), depth);
    check("clCreateBuffer",
          (uintptr_t)clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err),
          depth);
    check("clGetMemObjectInfo",
          (uint32_t)clGetMemObjectInfo(mem, CL_MEM_SIZE, 0, NULL, &size),
          depth);
    check("clSetKernelArg",
          (uint32_t)clSetKernelArg(kernel, 0, sizeof mem, &mem), depth);
    check("clEnqueueNDRangeKernel",
          (uint32_t)clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global,
                                           NULL, 0, NULL, &ev),
          depth);
    check("clFlush", (uint32_t)clFlush(queue), depth);
    check("clFinish", (uint32_t)clFinish(queue), depth);
    check("clWaitForEvents", (uint32_t)clWaitForEvents(1, (cl_event *)&event),
          depth);
    check("clReleaseEvent", (uint32_t)clReleaseEvent(event), depth);

    /* Bad input: NULL objects never reach the stub, and the program gets
     * the loader's own error, the same with the layer as without. */
    err = 0;
    printf("clFlush(NULL) -> %d\n", clFlush(NULL));
    printf("clReleaseEvent(NULL) -> %d\n", clReleaseEvent(NULL));
    printf("clGetMemObjectInfo(NULL) -> %d\n",
           clGetMemObjectInfo(NULL, CL_MEM_SIZE, 0, NULL, &size));
    printf("clCreateBuffer(NULL) -> %p, %d\n",
           (void *)clCreateBuffer(NULL, CL_MEM_READ_WRITE, 64, NULL, &err),
           err);
    if (ctl->calls != 0) {
        printf("FAIL: NULL objects reached the stub (%lu calls)\n", ctl->calls);
        failures++;
    }
    ctl->probe = NULL;
    return failures != 0;
}

/* The waits on bad input: the same errors with the cooperative waits as
 * with the driver's. */
static int
run_bad(void)
{
    cl_event none = NULL;

    if (stub_platform() == NULL)
        return 1;
    printf("clFinish(NULL) -> %d\n", clFinish(NULL));
    printf("clWaitForEvents(0, NULL) -> %d\n", clWaitForEvents(0, NULL));
    printf("clWaitForEvents(1, NULL) -> %d\n", clWaitForEvents(1, NULL));
    printf("clWaitForEvents(1, {NULL}) -> %d\n", clWaitForEvents(1, &none));
    return 0;
}

/* Issue 25, item 4: a NULL entry in a driver's dispatch table (PoCL 3.1's
 * clSetCommandQueueProperty), which the loader alone calls through: the
 * layer's entry answers CL_INVALID_OPERATION and calls nothing. Only with
 * the layer: without it this jumps to address 0. */
static int
run_null_entry(void)
{
    cl_platform_id p = stub_platform();
    cl_platform_id refusing = named_platform(STUB_REFUSING_NAME);
    cl_command_queue_properties old = 0;
    void *queue;
    cl_int ret;

    if (p == NULL || refusing == NULL ||
        clGetPlatformInfo(p, STUB_PLATFORM_CONTROL, sizeof ctl, &ctl, NULL) !=
            CL_SUCCESS)
        return 1;
    queue = ctl->object(refusing, 3);
    ctl->clear_entry(
        offsetof(struct _cl_icd_dispatch, clSetCommandQueueProperty));
    ctl->reset();
    ret = clSetCommandQueueProperty(queue, CL_QUEUE_PROFILING_ENABLE, CL_TRUE,
                                    &old);
    printf("clSetCommandQueueProperty -> %d after %lu stub calls\n", ret,
           ctl->calls);
    return ret != CL_INVALID_OPERATION || ctl->calls != 0;
}

/* clWaitForEvents on a stub event with the cooperative wait: clgc's wait
 * makes its own calls (the event's status, its queue...), which go
 * straight to the table below the layer; each must reach the stub at
 * region depth 1, inside the wait's one region, never a second. Prints
 * the commands the stub saw first. */
static int
run_coop(void)
{
    cl_platform_id p = stub_platform();
    void *event, *lib;
    cl_int ret;

    if (p == NULL || clGetPlatformInfo(p, STUB_PLATFORM_CONTROL, sizeof ctl,
                                       &ctl, NULL) != CL_SUCCESS)
        return 1;
    lib = dlopen("libclgc.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (lib != NULL)
        *(void **)&region_depth = dlsym(lib, "clgc_thread_region_depth");
    event = ctl->object(p, 5);
    ctl->probe = probe;
    ctl->reset();
    ret = clWaitForEvents(1, (cl_event *)&event);
    ctl->probe = NULL;
    printf("clWaitForEvents -> %d after %lu stub calls:", ret, ctl->calls);
    for (unsigned long i = 0; i < ctl->calls && i < STUB_LOG_SIZE; i++) {
        printf(" %u@%d", ctl->log[i].index, ctl->log[i].probe);
        if (ctl->log[i].probe != 1)
            failures++;
    }
    printf("\n");
    return failures != 0 || ctl->calls == 0;
}

/* A call that must return `want`: prints what it returned. */
static void
expect(const char *what, cl_int got, cl_int want)
{
    printf("%s -> %d\n", what, got);
    if (got != want) {
        printf("FAIL %s: %d, not %d\n", what, got, want);
        failures++;
    }
}
#define EXPECT(call, want) expect(#call, (call), (want))

/* Handles that are no OpenCL object (freed memory, a pointer of another
 * type): the loader would call through whatever their first word holds;
 * the layer's entries refuse them as the wrappers do. Run with the layer
 * only. */
static int
run_foreign(void)
{
    static void *junk[8]; /* zero: no dispatch table */
    size_t size = 0;
    cl_int err = 0;

    if (stub_platform() == NULL)
        return 1;
    EXPECT(clGetKernelInfo((cl_kernel)junk, CL_KERNEL_NUM_ARGS, 0, NULL, &size),
           CL_INVALID_KERNEL);
    EXPECT(clSetKernelArg((cl_kernel)junk, 0, sizeof junk, &junk),
           CL_INVALID_KERNEL);
    EXPECT(clReleaseMemObject((cl_mem)junk), CL_INVALID_MEM_OBJECT);
    EXPECT(clSetEventCallback((cl_event)junk, CL_COMPLETE, NULL, NULL),
           CL_INVALID_EVENT);
    EXPECT(clWaitForEvents(1, (cl_event *)&(void *){junk}), CL_INVALID_EVENT);
    EXPECT(clFinish((cl_command_queue)junk), CL_INVALID_COMMAND_QUEUE);
    clCreateBuffer((cl_context)junk, CL_MEM_READ_WRITE, 16, NULL, &err);
    EXPECT(err, CL_INVALID_CONTEXT);
    return failures != 0;
}

/* The layer's own entry points, called as a loader would, with bad input:
 * each refuses it and changes nothing. */
static int
run_init(const char *path)
{
    cl_int(CL_API_CALL * info)(cl_uint, size_t, void *, size_t *);
    cl_int(CL_API_CALL * init)(cl_uint, const void *, cl_uint *, const void **);
    cl_int(CL_API_CALL * init_props)(cl_uint, const void *, cl_uint *,
                                     const void **, const cl_ulong *);
    const cl_ulong unknown[] = {0x4242, 1, 0}, empty[] = {0};
    const void *table = NULL, *target = &table;
    cl_uint n = 0, version = 0;
    char name[8];
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);

    if (lib == NULL) {
        fprintf(stderr, "layerprog: %s\n", dlerror());
        return 1;
    }
    *(void **)&info = dlsym(lib, "clGetLayerInfo");
    *(void **)&init = dlsym(lib, "clInitLayer");
    *(void **)&init_props = dlsym(lib, "clInitLayerWithProperties");
    if (info == NULL || init == NULL || init_props == NULL)
        return 1;
    EXPECT(
        info(0x4240 /* CL_LAYER_API_VERSION */, sizeof version, &version, NULL),
        CL_SUCCESS);
    if (version != 100 /* CL_LAYER_API_VERSION_100 */)
        failures++;
    EXPECT(info(0x4241 /* CL_LAYER_NAME */, sizeof name, name, NULL),
           CL_INVALID_VALUE);
    EXPECT(info(0, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT(init(1, NULL, &n, &table), CL_INVALID_VALUE);
    EXPECT(init(1, target, NULL, NULL), CL_INVALID_VALUE);
    EXPECT(init_props(1, target, &n, &table, unknown), CL_INVALID_PROPERTY);
    EXPECT(init_props(1, NULL, &n, &table, empty), CL_INVALID_VALUE);
    if (table != NULL)
        failures++;
    return failures != 0;
}

int
main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "foreign") == 0)
        return run_foreign();
    if (argc == 3 && strcmp(argv[1], "init") == 0)
        return run_init(argv[2]);
    if (argc == 2 && strcmp(argv[1], "coop") == 0)
        return run_coop();
    if (argc == 2 && strcmp(argv[1], "bad") == 0)
        return run_bad();
    if (argc == 3 && strcmp(argv[1], "stub") == 0)
        return run_stub(atoi(argv[2]));
    if (argc == 2 && strcmp(argv[1], "null-entry") == 0)
        return run_null_entry();
    fprintf(stderr, "usage: layerprog stub DEPTH | bad | coop | foreign | "
                    "init LAYER | null-entry\n");
    return 2;
}
