/* A context's sub-devices, kept while it lives (gen/tables.py, AFTER).
 *
 * OpenCL says a context, and the queues and memory made in it, keep their
 * devices. PoCL 3.1 does not keep a sub-device: once the program releases
 * it, a later release of a buffer made on it crashes (in POclReleaseEvent),
 * and a binding whose collector frees objects in whatever order it finds
 * them makes that an ordinary program's fate. Every queue, memory object,
 * program and event keeps its context, so a context that keeps its
 * sub-devices keeps them for all of those. The wrappers of clCreateContext
 * (clgc's and the layer's) retain them, and OpenCL 3.0's context
 * destructor callback releases them; a driver without that callback (an
 * OpenCL 1.2 one) is left as it is. */

#include <stdlib.h>

#include "internal.h"
#include "next.h"
#include "gen/commands.h"

struct clgc__kept_devices {
    cl_uint n;
    cl_device_id devices[];
};

static void CL_CALLBACK
clgc__context_released(cl_context context, void *p)
{
    struct clgc__kept_devices *k = p;

    (void)context;
    for (cl_uint i = 0; i < k->n; i++)
        (void)CLGC__CL(clReleaseDevice)(k->devices[i]);
    free(k);
}

static int
clgc__is_sub_device(cl_device_id device)
{
    cl_device_id parent = NULL;

    return CLGC__CL(clGetDeviceInfo)(device, CL_DEVICE_PARENT_DEVICE,
                                     sizeof(parent), &parent,
                                     NULL) == CL_SUCCESS &&
           parent != NULL;
}

void
clgc__context_keep_devices(cl_context context, cl_uint n,
                           const cl_device_id *devices)
{
    struct clgc__kept_devices *k = NULL;

    for (cl_uint i = 0; i < n; i++) {
        if (!clgc__is_sub_device(devices[i]))
            continue;
        /* The first sub-device: room for it and every device after it. */
        if (k == NULL) {
            if (clgc__entry_check(context,
                                  CLGC__ENTRY_clSetContextDestructorCallback,
                                  CL_INVALID_CONTEXT) != CL_SUCCESS ||
                (k = malloc(sizeof(*k) + (n - i) * sizeof(k->devices[0]))) ==
                    NULL)
                return;
            k->n = 0;
        }
        if (CLGC__CL(clRetainDevice)(devices[i]) == CL_SUCCESS)
            k->devices[k->n++] = devices[i];
    }
    if (k != NULL && CLGC__CL(clSetContextDestructorCallback)(
                         context, clgc__context_released, k) != CL_SUCCESS)
        clgc__context_released(context, k);
}
