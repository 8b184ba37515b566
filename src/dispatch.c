/* The OpenCL layer's dispatch table, inside libclgc (see dispatch.h and
 * docs/layer.md). libclgc-layer's clInitLayer hands it the next table
 * through clgc__layer_init, the one symbol libclgc exports for its own
 * libraries only; the entries (src/gen/layer.c) are the wrappers of the
 * same commands calling that table, and clWaitForEvents and clFinish
 * become clgc's cooperative wait. */

#include "dispatch.h"

#include <string.h>

/* The table the loader calls: written once by the first clgc__layer_init,
 * read-only afterwards. */
static struct _cl_icd_dispatch clgc__layer_table;
static atomic_int clgc__layer_taken;

/* clFinish inside one region (the generated entry), for the cases the
 * cooperative one hands back (see clgc__layer_finish). */
static cl_api_clFinish clgc__layer_region_finish;

/* clWaitForEvents as clgc's cooperative wait, whose own OpenCL calls go
 * below the layer (CLGC__CL). Inside a region (a program's wrapper of
 * clWaitForEvents, calling the loader), the driver's wait, as for every
 * entry. */
static cl_int CL_API_CALL
clgc__layer_wait(cl_uint num_events, const cl_event *event_list)
{
    if (clgc__self.region & CLGC__SAFE)
        return clgc__next.clWaitForEvents(num_events, event_list);
    return clgc_wait_for_events(num_events, event_list);
}

/* clFinish as a marker and clgc's cooperative wait for it: the marker
 * completes when every command enqueued before it has. Where the marker
 * cannot be made, or the wait reports a failed command, the driver's own
 * clFinish (inside a region) gives the answer clFinish would. */
static cl_int CL_API_CALL
clgc__layer_finish(cl_command_queue command_queue)
{
    cl_event marker;
    cl_int ret;

    if (clgc__self.region & CLGC__SAFE)
        return clgc__next.clFinish(command_queue);
    /* In a forked child no driver thread would complete the marker; the
     * driver's clFinish answers as it would without the layer. */
    if (clgc__in_forked_child() || !clgc__object_ok(command_queue) ||
        clgc__next.clEnqueueMarkerWithWaitList(command_queue, 0, NULL,
                                               &marker) != CL_SUCCESS)
        return clgc__layer_region_finish(command_queue);
    ret = clgc_wait_for_events(1, &marker);
    clgc__next.clReleaseEvent(marker);
    if (ret != CL_SUCCESS)
        return clgc__layer_region_finish(command_queue);
    return CL_SUCCESS;
}

__attribute__((visibility("default"))) int
clgc__layer_init(cl_uint num_entries, const cl_icd_dispatch *target,
                 int cooperative, cl_uint *num_entries_ret,
                 const cl_icd_dispatch **table_ret)
{
    const cl_uint slots = sizeof clgc__layer_table / sizeof(void *);
    cl_uint n = num_entries < slots ? num_entries : slots;

    if (target == NULL || num_entries_ret == NULL || table_ret == NULL)
        return CLGC_EINVAL;
    /* Once per process: a second instance (another copy of libclgc-layer
     * on this libclgc) would wrap clgc's own table, or put every call in
     * two regions. clgc's table exists only once this is taken. */
    if (atomic_exchange(&clgc__layer_taken, 1))
        return CLGC_EALREADY;
    memcpy(&clgc__next, target, n * sizeof(void *));
    clgc__layer_table = clgc__next;
    clgc__layer_fill(&clgc__layer_table, n);
    clgc__layer_region_finish = clgc__layer_table.clFinish;
    if (cooperative) {
        if (CLGC__LAYER_SLOT(clWaitForEvents, n) &&
            clgc__next.clWaitForEvents != NULL)
            clgc__layer_table.clWaitForEvents = clgc__layer_wait;
        if (CLGC__LAYER_SLOT(clEnqueueMarkerWithWaitList, n) &&
            clgc__next.clFinish != NULL &&
            clgc__next.clEnqueueMarkerWithWaitList != NULL &&
            clgc__next.clReleaseEvent != NULL)
            clgc__layer_table.clFinish = clgc__layer_finish;
    }
    atomic_store_explicit(&clgc__layered, 1, memory_order_release);
    *num_entries_ret = n;
    *table_ret = &clgc__layer_table;
    return CLGC_OK;
}
