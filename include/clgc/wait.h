#ifndef CLGC_WAIT_H
#define CLGC_WAIT_H

/* Waiting for OpenCL events without holding up the runtime.
 *
 * clgc_wait_for_events() has clWaitForEvents' contract. It flushes the
 * queues of the events (PoCL may never start a command nobody flushed),
 * polls their status for a short budget, and if they are not done by then
 * asks PoCL for a completion callback and sleeps inside a safe region until
 * the last one fires (or, on a driver whose callbacks come late, polls on
 * a backoff schedule: clgc_wait_set_strategy): a collection, or another
 * task of the runtime, runs meanwhile. It allocates nothing: the wait's record
 * is a slot of a static pool (with more than 512 waits at once the rest fall
 * back to a plain clWaitForEvents in a safe region), free again the moment its
 * wait returns: the callbacks hold a handle (slot and generation), so one that
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
 * CL_INVALID_CONTEXT for events of more than one context, which clgc
 * checks itself (NVIDIA's clWaitForEvents does not). A released event
 * cannot always be told: PoCL recycles released events, so one may pass
 * for a live event (whatever command now has its memory) or make PoCL
 * abort. Never wait on an event after releasing it. Nothing is ever
 * abandoned half-way: the wait returns only when the device is done with
 * the events, so memory the commands write may be freed after it. A user
 * event failed through clgc_clSetUserEventStatus (which PoCL never calls
 * back for) ends the waits on it at once; one failed with the raw call is
 * seen within 1.6 s (a sleeping wait looks at its events itself after 1 s,
 * then every 1.6 s).
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
    CLGC_WAIT_PATH_CALLBACK, /* slept until the driver's callback woke it */
    CLGC_WAIT_PATH_BLOCKING, /* CLGC_WAIT_BLOCKING, or a fallback */
    CLGC_WAIT_PATH_BACKOFF,  /* its own look, on the backoff schedule */
    CLGC_WAIT_PATH_OWN       /* the driver's clWaitForEvents, on a late
                                platform where it sleeps (clgc_wait_own_t) */
} clgc_wait_path_t;

CLGC_EXTERN clgc_wait_path_t clgc_wait_last_path(void);

/* How a cooperative wait sleeps once its polling budget is spent, and how
 * the watcher looks at pending notifications (docs/wait.md, "Late
 * callbacks").
 *
 * Some drivers call back long after the command's status says complete
 * (NVIDIA's OpenCL), so sleeping until the callback makes a short
 * kernel's wait many times longer. On such a driver a wait polls instead,
 * on a backoff schedule: a moment of looks, then sleeps that grow with
 * the time waited, so that a look comes at most a small fraction of the
 * wait late, each ended at once by the callback, which stays registered
 * as a backstop; the watcher looks at the pending notifications of such
 * a platform on the same kind of schedule. clgc learns per platform which
 * kind of driver it has, from the waits and looks that poll while it does
 * not know yet (clgc_wait_driver_info); a wait on a user event teaches it
 * nothing, as the program's clSetUserEventStatus makes its callbacks. The
 * schedule's figures are docs/wait.md's. */
typedef enum clgc_wait_strategy {
    /* Per platform: poll while learning and where callbacks were learned
     * late; sleep until the callback where they were learned prompt
     * (default). */
    CLGC_WAIT_LEARN,
    /* Always sleep until the callback (the path before clgc learned). */
    CLGC_WAIT_CALLBACK,
    /* Always poll on the backoff schedule, the callback as backstop. */
    CLGC_WAIT_BACKOFF
} clgc_wait_strategy_t;

/* Set the strategy of every later wait and look of the process, on every
 * platform. Setting CLGC_WAIT_LEARN forgets what was learned: every
 * platform is learned again. The environment variable CLGC_WAIT_STRATEGY
 * (learn, callback or backoff) sets it before the first wait or
 * notification; other values are ignored. Any thread. Returns CLGC_OK or
 * CLGC_EINVAL for an unknown strategy. */
CLGC_EXTERN int clgc_wait_set_strategy(clgc_wait_strategy_t strategy);

/* What clgc learned of a platform's completion callbacks, for short
 * commands (those a wait sees complete within its first 200 us) and long
 * ones apart: NVIDIA's callbacks are prompt for the first and late for
 * the second. A prompt class is sampled again now and then, at random,
 * and turns late when enough of its recent samples were; a late class is
 * tried now and then, ever more rarely, by a wait that sleeps until its
 * callbacks, and turns prompt when enough tries in a row find them
 * prompt (clgc_wait_set_strategy(CLGC_WAIT_LEARN) forgets both). A
 * platform late in either class is waited for as late in both. How many
 * samples decide, and how late is late: docs/wait.md. */
typedef enum clgc_wait_driver {
    CLGC_WAIT_DRIVER_LEARNING, /* too few samples yet */
    CLGC_WAIT_DRIVER_PROMPT,   /* most of the first samples were prompt */
    CLGC_WAIT_DRIVER_LATE      /* most were late, or enough later ones */
} clgc_wait_driver_t;

/* What clgc learned of a late platform's own clWaitForEvents. Where it
 * sleeps, a synchronous wait is better off in it (inside the safe region)
 * than polling, whose looks take CPU from the driver's threads; where it
 * busy-waits (NVIDIA's), the backoff schedule costs a fraction of its
 * CPU. While it is learned, a wait on a late platform that has polled
 * for a while hands the rest of the wait to clWaitForEvents and measures
 * it: a long enough wait with the thread rarely runnable (on a CPU, or
 * waiting for one on a loaded machine) is a sample that it sleeps, one
 * runnable much of the time that it busy-waits. A few samples decide;
 * sampled waits that give none leave it avoided (docs/wait.md). (clgc
 * takes a driver's wait that sleeps to wake when the command is
 * done, as PoCL's does; one that slept until its late callbacks would be
 * used all the same: CLGC_WAIT_STRATEGY=backoff keeps to polling.) */
typedef enum clgc_wait_own {
    CLGC_WAIT_OWN_LEARNING, /* not known yet (or not asked: not late) */
    CLGC_WAIT_OWN_USED,     /* it sleeps: the synchronous waits use it */
    CLGC_WAIT_OWN_AVOIDED   /* it busy-waits, or could not be told */
} clgc_wait_own_t;

typedef struct clgc_wait_driver_info {
    /* The platform: late if either class is, else prompt if either is. */
    clgc_wait_driver_t learned;
    /* What waits on the platform do now: CLGC_WAIT_CALLBACK or
     * CLGC_WAIT_BACKOFF (the strategy set, or what was learned; with own
     * CLGC_WAIT_OWN_USED the synchronous waits use the driver's wait). */
    clgc_wait_strategy_t strategy;
    unsigned prompt, late; /* samples of each kind so far, both classes */
    /* The median lateness of the last samples, in ns: how long after a
     * poll saw the command complete its callback came (0 for a callback
     * that came first; for one that had not come when the next poll
     * looked, the time until then). -1 without samples. */
    long lateness_ns;
    /* Its own clWaitForEvents, and the samples of it: slept, busy. */
    clgc_wait_own_t own;
    unsigned own_sleeps, own_busy;
    /* Each class: short commands, long ones. */
    clgc_wait_driver_t learned_short, learned_long;
    /* While late: the waits that tried its callbacks alone, and those of
     * them that found a late class's callbacks prompt (8 in a row turn
     * the class prompt again). */
    unsigned tried, tried_prompt;
    /* While prompt: how long a wait that follows a short one (under
     * 200 us) polls its events before it sleeps until the callbacks (0:
     * none do); the mean wall time of the short waits that did not poll
     * and of those that did (0: none measured yet), the faster of which
     * the waits do; and the polls so far that saw the events done and
     * those that did not (docs/wait.md, "Short commands"). */
    long poll_ns;
    long short_wait_ns[2];
    unsigned polls_done, polls_missed;
} clgc_wait_driver_info_t;

/* Fill *info with what clgc learned of platform's callbacks. Platforms of
 * one ICD share what is learned (their objects share a dispatch table).
 * Any thread. Returns CLGC_OK, or CLGC_EINVAL for a NULL argument or a
 * platform the loader did not list. */
CLGC_EXTERN int clgc_wait_driver_info(cl_platform_id platform,
                                      clgc_wait_driver_info_t *info);

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
