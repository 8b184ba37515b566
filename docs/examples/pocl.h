/* What every example but dropin.c needs first: PoCL's CPU device, a
 * context and an in-order queue on it, and a program built from source,
 * all through clgc's wrappers. The platform is picked by its name, so the
 * examples run beside any other vendor (make check adds a stub one). */

#ifndef EXAMPLE_POCL_H
#define EXAMPLE_POCL_H

#include <stdio.h>
#include <string.h>

#include <clgc.h>

#define POCL_PLATFORM "Portable Computing Language"

struct pocl {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
};

/* PoCL's CPU device, or NULL with a message. */
static inline cl_device_id
pocl_device(void)
{
    cl_platform_id ids[16];
    cl_device_id device;
    cl_uint n = 0;
    char name[256];

    if (clgc_clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
        n = 0;
    for (cl_uint i = 0; i < n && i < 16; i++) {
        if (clgc_clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof(name), name,
                                   NULL) == CL_SUCCESS &&
            strstr(name, POCL_PLATFORM) != NULL &&
            clgc_clGetDeviceIDs(ids[i], CL_DEVICE_TYPE_CPU, 1, &device, NULL) ==
                CL_SUCCESS)
            return device;
    }
    fprintf(stderr, "no OpenCL platform named '%s' with a CPU device\n",
            POCL_PLATFORM);
    return NULL;
}

/* An in-order queue: clCreateCommandQueue on an OpenCL 1.x device
 * (Oclgrind), whose driver may lack the 2.0 call, else
 * clCreateCommandQueueWithProperties. */
static inline cl_command_queue
pocl_queue(cl_context context, cl_device_id device, cl_int *err)
{
    char version[64] = "";

    if (clgc_clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof(version) - 1,
                             version, NULL) == CL_SUCCESS &&
        strncmp(version, "OpenCL 1.", 9) == 0)
        return clgc_clCreateCommandQueue(context, device, 0, err);
    return clgc_clCreateCommandQueueWithProperties(context, device, NULL, err);
}

/* Fill *p, building src (NULL: no program). Returns 0, or -1 with a
 * message and nothing left to release. */
static inline int
pocl_open(struct pocl *p, const char *src)
{
    cl_int err = CL_SUCCESS;

    memset(p, 0, sizeof(*p));
    p->device = pocl_device();
    if (p->device == NULL)
        return -1;
    p->context = clgc_clCreateContext(NULL, 1, &p->device, NULL, NULL, &err);
    if (err == CL_SUCCESS)
        p->queue = pocl_queue(p->context, p->device, &err);
    if (err == CL_SUCCESS && src != NULL)
        p->program =
            clgc_clCreateProgramWithSource(p->context, 1, &src, NULL, &err);
    if (err == CL_SUCCESS && src != NULL)
        err = clgc_clBuildProgram(p->program, 1, &p->device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "setting up PoCL failed: %d\n", err);
        if (p->program != NULL)
            clgc_clReleaseProgram(p->program);
        if (p->queue != NULL)
            clgc_clReleaseCommandQueue(p->queue);
        if (p->context != NULL)
            clgc_clReleaseContext(p->context);
        return -1;
    }
    return 0;
}

static inline void
pocl_close(struct pocl *p)
{
    if (p->program != NULL)
        clgc_clReleaseProgram(p->program);
    clgc_clReleaseCommandQueue(p->queue);
    clgc_clReleaseContext(p->context);
}

#endif /* EXAMPLE_POCL_H */
