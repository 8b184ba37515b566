#ifndef CLGC_WAIT_H
#define CLGC_WAIT_H

/* Waiting for OpenCL events without holding up the runtime.
 *
 * clgc_wait_for_events() has clWaitForEvents' contract. It flushes the
 * queues of the events (PoCL may never start a command nobody flushed),
 * polls their status for a short budget, and if they are not done by then
 * asks PoCL for a completion callback and sleeps inside a safe region until
 * the last one fires: a collection, or another task of the runtime, runs
 * meanwhile. It allocates nothing: the wait's record lives on the waiting
 * thread's stack, and the callbacks touch it for the last time before the
 * wait can return. */

#include "clgc/common.h"
#include "clgc/wrappers.h"

CLGC_BEGIN_DECLS

/* How waits wait. */
typedef enum clgc_wait_mode {
    /* Flush, poll, then callback and sleep in a safe region (default). */
    CLGC_WAIT_COOPERATIVE,
    /* A plain clWaitForEvents inside a safe region: for comparison, and
     * for drivers whose callbacks misbehave. */
    CLGC_WAIT_BLOCKING
} clgc_wait_mode_t;

/* Wait until every event of the list is complete or has failed, as
 * clWaitForEvents does, and return what it would: CL_SUCCESS;
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if any command failed (its
 * negative status, which PoCL's callbacks report as CL_COMPLETE, is read
 * back from the event); CL_INVALID_VALUE for an empty list;
 * CL_INVALID_EVENT for a NULL or released event. Nothing is ever abandoned
 * half-way: the wait returns only when the device is done with the events,
 * so memory the commands write may be freed after it.
 *
 * Call it on a thread the runtime knows, outside a safe region (inside
 * one it still works, without a region of its own). Callbacks run on
 * PoCL's threads and touch nothing but the wait's own record. */
CLGC_EXTERN cl_int clgc_wait_for_events(cl_uint num_events,
                                        const cl_event *event_list);

/* Set how every later wait of the process waits. The environment variable
 * CLGC_WAIT=blocking sets CLGC_WAIT_BLOCKING before the first wait. Any
 * thread. Returns CLGC_OK or CLGC_EINVAL for an unknown mode. */
CLGC_EXTERN int clgc_wait_set_mode(clgc_wait_mode_t mode);

/* The polling budget of a cooperative wait, in nanoseconds: how long it
 * checks the events' status before it asks for a callback and sleeps. 0
 * asks for the callback at once. CLGC_WAIT_POLL_NS sets it before the
 * first wait. Returns CLGC_OK or CLGC_EINVAL for a negative budget. */
CLGC_EXTERN int clgc_wait_set_poll_ns(long ns);

/* How the calling thread's last cooperative wait finished, for tests,
 * benchmarks and demos. */
typedef enum clgc_wait_path {
    CLGC_WAIT_PATH_NONE,     /* no wait yet on this thread */
    CLGC_WAIT_PATH_POLL,     /* done within the polling budget */
    CLGC_WAIT_PATH_CALLBACK, /* slept until PoCL's callback woke it */
    CLGC_WAIT_PATH_BLOCKING  /* CLGC_WAIT_BLOCKING, or a fallback */
} clgc_wait_path_t;

CLGC_EXTERN clgc_wait_path_t clgc_wait_last_path(void);

CLGC_END_DECLS

#endif /* CLGC_WAIT_H */
