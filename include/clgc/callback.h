#ifndef CLGC_CALLBACK_H
#define CLGC_CALLBACK_H

/* OpenCL's callbacks, made safe for the runtime.
 *
 * Every clgc_cl* wrapper of a command that takes a callback hands OpenCL a
 * trampoline of clgc's in place of the function given, and the trampoline
 * calls that function, with the data given, with the runtime active,
 * whichever thread OpenCL calls it on:
 *
 * - the caller's own thread, inside the safe region of the very wrapper
 *   call that registered it (PoCL runs a build's notification, the
 *   callback of an event that is already complete and the destructor of a
 *   buffer's last release this way): clgc re-enters the runtime through
 *   its active_region hook, or in the safepoint form leaves the region
 *   for the call;
 * - a thread the runtime knows and that is active: a direct call;
 * - a thread the runtime does not know (PoCL's): clgc attaches it, once,
 *   and it stays attached until it exits.
 *
 * If a foreign thread cannot be attached, the function is not called and
 * the failure is reported as below (code CLGC_ENOTATTACHED).
 *
 * When the function may be called, and when clgc frees what it keeps for
 * the registration:
 *
 *   clSetEventCallback                    once
 *   clBuildProgram, clCompileProgram,
 *   clLinkProgram                         once per call (the build's end)
 *   clSetMemObjectDestructorCallback,
 *   clSetMemObjectDestructorAPPLE,
 *   clSetContextDestructorCallback,
 *   clSetProgramReleaseCallback           once, when the object goes
 *   clEnqueueSVMFree, clEnqueueSVMFreeARM once, when the command runs
 *   clEnqueueNativeKernel                 once, when the command runs
 *   clCreateContext,
 *   clCreateContextFromType               any number of times, until the
 *                                         context is destroyed
 *
 * A registration that fails (the command returns an error, or NULL) is
 * never called back, except a build that fails after it has started,
 * which has called it already. clgc frees a context's record from the
 * context's destructor callback (OpenCL 3.0); on a platform without it the
 * record stays for the life of the process. */

#include "clgc/common.h"
#include "clgc/queue.h"

CLGC_BEGIN_DECLS

/* Defer the callbacks that the calling thread registers from now on to
 * queue: when OpenCL calls one, clgc stores its arguments and posts it, and
 * the function runs in a later clgc_queue_drain(queue) on the thread that
 * drains it, instead of on OpenCL's thread. NULL: call them at once again
 * (the default). Only callbacks called once whose arguments are plain
 * values are deferred: those of clSetEventCallback, the builds, the
 * destructor and release callbacks. A context's error callback and the
 * SVM free callbacks still run at once (their arguments live only for the
 * call), and so does a native kernel (its command would never finish if it
 * waited for the drain). A deferred destructor callback gets the handle of
 * an object that no longer exists: only its value is of use.
 *
 * A handler run this way may report a failure with clgc_callback_fail,
 * as on any other path; the drain hands it over when it ends.
 *
 * The queue must outlive the deferral and the callbacks deferred to it.
 * Each queue counts the threads that defer to it: a call with another
 * queue (or NULL) moves this thread's count from the old queue to the new
 * one, and a thread that exits still deferring is uncounted when it
 * exits. clgc_queue_close returns CLGC_EBUSY while any thread defers to
 * the queue, and while a callback registered by a thread that deferred to
 * it has yet to be called and run: stop deferring (clgc_callbacks_defer(NULL),
 * or let the thread exit), drain, then close. queue must be open: call
 * this before the close can start, not concurrently with it.
 *
 * The calling thread only; deferring to the queue it defers to already
 * does nothing. Returns CLGC_OK, or CLGC_ENOMEM if clgc could not set up
 * the thread-exit hook (the deferral is then unchanged). Undo with
 * clgc_callbacks_defer(NULL). */
CLGC_EXTERN int clgc_callbacks_defer(clgc_queue_t *queue);

/* The queue the calling thread's callbacks are deferred to, or NULL. The
 * calling thread only. */
CLGC_EXTERN clgc_queue_t *clgc_callbacks_deferred_to(void);

/* A callback that failed. */
typedef struct clgc_callback_error {
    const char *command; /* the command that registered it: "clBuildProgram";
                            NULL for a closure (clgc/ffi.h) */
    int code;            /* CLGC_ECALLBACK, or CLGC_ENOTATTACHED */
    void *error;         /* what the handler gave clgc_callback_fail */
} clgc_callback_error_t;

/* Report that the callback being delivered on this thread failed (a Lua
 * error, a Scheme exception), with a value of the runtime's that says how.
 * Call it from the callback, or from the runtime's active_region hook
 * around it, and then return normally: never unwind through OpenCL. clgc
 * hands the failure to the runtime's callback_failed hook at the next
 * clgc_wait_for_events or clgc_queue_drain on a thread the runtime knows,
 * or keeps it for clgc_callback_error_take if the runtime has no such
 * hook. Returns CLGC_OK, or CLGC_EINVAL outside a callback clgc delivers. */
CLGC_EXTERN int clgc_callback_fail(void *error);

/* Take the oldest failure not yet handed over into *error: returns 1, or 0
 * if there is none, or CLGC_EINVAL if error is NULL. Any thread. */
CLGC_EXTERN int clgc_callback_error_take(clgc_callback_error_t *error);

CLGC_END_DECLS

#endif /* CLGC_CALLBACK_H */
