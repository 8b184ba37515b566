#ifndef CLGC_PORTABLE_H
#define CLGC_PORTABLE_H

/* OpenCL the same on every version and driver: calls that a binding, a
 * demo or a test would otherwise write for each OpenCL version it meets,
 * once, through the clgc_cl* wrappers (so in a safe region, as any of
 * them). */

#include "clgc/common.h"
#include "clgc/wrappers.h"

CLGC_BEGIN_DECLS

/* A command queue on a device of any OpenCL version, with the signature
 * and the errors of clCreateCommandQueueWithProperties (OpenCL 2.0). On a
 * device that reports OpenCL 1.x (CL_DEVICE_VERSION "OpenCL 1.", whose
 * driver may lack the 2.0 call: Oclgrind's, 1.2), it is
 * clCreateCommandQueue with the bits of properties' CL_QUEUE_PROPERTIES;
 * any other property there is CL_INVALID_QUEUE_PROPERTIES, as a valid
 * property the device does not support. A NULL or invalid device is
 * CL_INVALID_DEVICE (what CL_DEVICE_VERSION's query says), whatever the
 * context. properties may be NULL, as
 * errcode_ret may; it is a cl_queue_properties list, spelled cl_ulong
 * (its type) for programs built for OpenCL 1.x, whose headers lack the
 * name. Any thread a wrapper may be called on. */
CLGC_EXTERN cl_command_queue
clgc_create_command_queue(cl_context context, cl_device_id device,
                          const cl_ulong *properties, cl_int *errcode_ret);

CLGC_END_DECLS

#endif /* CLGC_PORTABLE_H */
