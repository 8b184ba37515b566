#ifndef CLGC_WAIT_H
#define CLGC_WAIT_H

/* Waiting for OpenCL events without holding up the runtime.
 *
 * clgc_wait_for_events() has clWaitForEvents' contract. It flushes the
 * queues of the events (PoCL may never start a command nobody flushed),
 * polls their status for a short budget, and if they are not done by then
 * asks PoCL for a completion callback and sleeps inside a safe region until
 * the last one fires: a collection, or another task of the runtime, runs
 * meanwhile. It allocates nothing: the wait's record is a slot of a
 * static pool (with more than 512 waits at once the rest fall back to a
 * plain clWaitForEvents in a safe region), free again the moment its wait
 * returns: the callbacks hold a handle (slot and generation), so one that
 * comes late, or never, touches nothing.
 *
 * After fork(), a child may use user events, waits and notifications on
 * them, but not enqueue commands (PoCL cannot run kernels in a child) nor
 * touch the parent's completion queues (their eventfds are shared with the
 * parent); see docs/wait.md. */

#include "clgc/common.h"
#include "clgc/queue.h"
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
 * clWaitForEvents does, and return what it would, in every mode:
 * CL_SUCCESS; CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if any command
 * failed (its negative status, which PoCL's callbacks report as
 * CL_COMPLETE, is read back from the event); CL_INVALID_VALUE for an empty
 * list; CL_INVALID_EVENT for a NULL event or one OpenCL does not know;
 * CL_INVALID_CONTEXT for events of more than one context. A released event
 * cannot always be told: PoCL recycles released events, so one may pass
 * for a live event (whatever command now has its memory) or make PoCL
 * abort. Never wait on an event after releasing it. Nothing is ever
 * abandoned half-way: the wait returns only when the device is done with
 * the events, so memory the commands write may be freed after it. A user
 * event failed through clgc_clSetUserEventStatus (which PoCL never calls
 * back for) ends the waits on it at once; one failed with the raw call is
 * seen within 100 ms or the time waited so far.
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

/* The largest polling budget, one second: a wait that should spin longer
 * than that should sleep instead (and a larger one would overflow the
 * clock's arithmetic). */
#define CLGC_WAIT_POLL_MAX_NS 1000000000L

/* The polling budget of a cooperative wait, in nanoseconds: how long it
 * checks the events' status before it asks for a callback and sleeps. 0
 * asks for the callback at once. The environment variable
 * CLGC_WAIT_POLL_NS sets it before the first wait; a value that is not a
 * number from 0 to CLGC_WAIT_POLL_MAX_NS is ignored there. Any thread.
 * Returns CLGC_OK, or CLGC_EINVAL (the budget in force is kept) for a
 * negative budget or one over CLGC_WAIT_POLL_MAX_NS. */
CLGC_EXTERN int clgc_wait_set_poll_ns(long ns);

/* The polling budget in force, in nanoseconds. */
CLGC_EXTERN long clgc_wait_get_poll_ns(void);

/* How the calling thread's last cooperative wait finished, for tests,
 * benchmarks and demos. */
typedef enum clgc_wait_path {
    CLGC_WAIT_PATH_NONE,     /* no wait yet on this thread */
    CLGC_WAIT_PATH_POLL,     /* done within the polling budget */
    CLGC_WAIT_PATH_CALLBACK, /* slept until PoCL's callback woke it */
    CLGC_WAIT_PATH_BLOCKING  /* CLGC_WAIT_BLOCKING, or a fallback */
} clgc_wait_path_t;

CLGC_EXTERN clgc_wait_path_t clgc_wait_last_path(void);

/* Asynchronous waits, for runtimes with a scheduler of their own: a
 * handler runs exactly once when the event completes or fails, with the
 * event's real final status (CL_COMPLETE, or the negative error). clgc
 * holds a reference to the event until it is done with it, so the caller
 * may release its own at any time; a handler that releases objects should
 * do it in a queue's drain (a release on PoCL's thread can wait for work
 * that thread should do).
 *
 * PoCL 3.1 never calls back for a user event set to an error status, nor
 * for the commands that depend on it. clgc watches every pending
 * notification (and every CL_COMPLETE callback registered through
 * clgc_clSetEventCallback) from a thread of its own, started on first use,
 * which delivers the failed ones itself, on that thread: it sleeps while
 * nothing is pending; it looks at once when a failure is set through
 * clgc_clSetUserEventStatus, then at 10 ms, 20 ms, ... up to once a
 * second; and once a second while anything is pending, so a failure set
 * with the raw clSetUserEventStatus is delivered up to about a second
 * late. A notification is reclaimed once delivered, whether or not PoCL
 * ever calls back. A handler may report a failure with clgc_callback_fail:
 * it is recorded with command "clgc_event_notify" (or "clgc_event_post"
 * for clgc_event_post's handlers). A child of fork() gets a watcher of its
 * own when it first needs one; notifications pending at the fork stay the
 * parent's. */
typedef void (*clgc_event_cb)(cl_event event, cl_int status, void *data);

typedef enum clgc_notify_mode {
    /* The handler runs on the thread that sees the completion (PoCL's, or
     * clgc's watcher, or the caller's if the event is already complete),
     * with the runtime untouched: to wake an event loop, as
     * uv_async_send does. It must not use the runtime. */
    CLGC_NOTIFY_RAW,
    /* The handler runs on that thread with the runtime active, through
     * clgc_call_active: a foreign thread is attached once, on its first
     * handler, and stays attached until it exits. If it cannot be
     * attached, the handler runs with the runtime untouched and gets
     * status CLGC_NOTIFY_NOT_ATTACHED. */
    CLGC_NOTIFY_ACTIVE
} clgc_notify_mode_t;

/* The status an ACTIVE handler gets when its thread could not be
 * attached; no OpenCL status has this value. */
#define CLGC_NOTIFY_NOT_ATTACHED (-1000000)

/* Run handler(event, status, data) once when event completes or fails.
 * Returns CL_SUCCESS, CL_INVALID_EVENT for a NULL or released event,
 * CL_INVALID_VALUE for a NULL handler or an unknown mode,
 * CL_OUT_OF_HOST_MEMORY, or clSetEventCallback's error: on any error the
 * handler never runs. Any thread. */
CLGC_EXTERN cl_int clgc_event_notify(cl_event event, clgc_notify_mode_t mode,
                                     clgc_event_cb handler, void *data);

/* As clgc_event_notify, but the handler runs in a later
 * clgc_queue_drain(queue) (clgc/queue.h), on the thread that drains it;
 * until then the queue cannot be closed (CLGC_EBUSY). Returns what
 * clgc_event_notify does, and CL_INVALID_VALUE for a NULL queue. */
CLGC_EXTERN cl_int clgc_event_post(cl_event event, clgc_queue_t *queue,
                                   clgc_event_cb handler, void *data);

CLGC_END_DECLS

#endif /* CLGC_WAIT_H */
