/* OpenCL the same on every version and driver (include/clgc/portable.h),
 * above the wrappers it calls. */

#include <string.h>

#include "internal.h"

/* Whether device reports OpenCL 1.x (1), a later version (0), or, with
 * *err set, nothing: a NULL or invalid device, which the 2.0 call would
 * refuse too (on a 1.x driver it may not have the call to refuse it). */
static int
clgc__device_is_1x(cl_device_id device, cl_int *err)
{
    char version[1024] = "";

    *err = clgc_clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof(version) - 1,
                                version, NULL);
    return *err == CL_SUCCESS && strncmp(version, "OpenCL 1.", 9) == 0;
}

cl_command_queue
clgc_create_command_queue(cl_context context, cl_device_id device,
                          const cl_ulong *properties, cl_int *errcode_ret)
{
    cl_command_queue_properties bits = 0;
    cl_int err;

    if (!clgc__device_is_1x(device, &err)) {
        if (err != CL_SUCCESS) {
            if (errcode_ret != NULL)
                *errcode_ret = err;
            return NULL;
        }
        return clgc_clCreateCommandQueueWithProperties(context, device,
                                                       properties, errcode_ret);
    }
    for (const cl_ulong *p = properties; p != NULL && p[0] != 0; p += 2) {
        if (p[0] != CL_QUEUE_PROPERTIES) {
            if (errcode_ret != NULL)
                *errcode_ret = CL_INVALID_QUEUE_PROPERTIES;
            return NULL;
        }
        bits |= (cl_command_queue_properties)p[1];
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return clgc_clCreateCommandQueue(context, device, bits, errcode_ret);
#pragma GCC diagnostic pop
}
