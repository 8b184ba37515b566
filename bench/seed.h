#ifndef CLGC_SEED_H
#define CLGC_SEED_H

/* The strategy of the seed this project answers (GPUToolbox's
 * cooperative_wait for PoCL), written again from its description, for
 * clgc-bench wait and clgc-demo to measure beside raw and clgc: look at
 * the event's status for at most 10 us, then register a completion
 * callback and sleep on a condition variable until it signals. No clgc.
 * Returns CL_SUCCESS once the event is complete. */

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

cl_int seed_wait(cl_event event);

#endif
