#ifndef CLGC_QUEUE_H
#define CLGC_QUEUE_H

/* Completion queues: work posted from any thread, run on the thread that
 * drains the queue, the one that owns the runtime.
 *
 * A queue holds three kinds of completion: event notifications posted
 * with clgc_event_post (clgc/wait.h), OpenCL callbacks deferred to it with
 * clgc_callbacks_defer (clgc/callback.h), and functions posted with
 * clgc_queue_post. Its file descriptor is readable whenever something is
 * pending, whatever the last drain's max was (wakeups coalesce: one
 * readable state for any number of completions), so it plugs into epoll,
 * libuv, luv, cqueues or Guile's fd waits.
 *
 * One thread drains a queue at a time: a drain or a close of a queue that
 * is being drained, from another thread or from one of its own handlers,
 * is refused with CLGC_EDRAINING. A handler may post to its own queue (it
 * runs in a later drain) and may drain or close other queues.
 *
 * A handler reports a failure of its own (a Lua error, a Scheme
 * exception) with clgc_callback_fail (clgc/callback.h), which records it
 * with the command that posted it: "clgc_queue_post", "clgc_event_post",
 * or the OpenCL command of a deferred callback. The drain hands the
 * failures to the runtime's callback_failed hook when it ends. */

#include "clgc/common.h"

CLGC_BEGIN_DECLS

typedef struct clgc_queue clgc_queue_t;

/* Create a queue into *queue. Any thread. Returns CLGC_OK; CLGC_EINVAL if
 * queue is NULL; CLGC_ENOMEM; or CLGC_ESYSTEM if the eventfd could not be
 * made (errno says why). On error *queue is left alone. Undo with
 * clgc_queue_close(). */
CLGC_EXTERN int clgc_queue_create(clgc_queue_t **queue);

/* The queue's file descriptor (an eventfd): poll it for reading, never
 * read or close it. -1 for a NULL queue. Valid until clgc_queue_close(). */
CLGC_EXTERN int clgc_queue_fd(const clgc_queue_t *queue);

/* Post fn(data) to run in a later drain of queue: for completions of a
 * runtime's own (a closure's handler that must run on the owner thread,
 * say). Any thread, but a post must return before clgc_queue_close(queue)
 * starts, unless its handler has run already (the close then waits for it
 * to return). From a handler of the queue it runs in a later drain.
 * Allocates one small record (with the runtime's record hooks, so a
 * collector may scan data), freed after fn runs. Returns CLGC_OK,
 * CLGC_EINVAL (NULL queue or fn) or CLGC_ENOMEM; on error fn never runs. */
CLGC_EXTERN int clgc_queue_post(clgc_queue_t *queue, void (*fn)(void *data),
                                void *data);

/* Run the handlers of up to max pending completions (0: all those pending
 * when it starts; completions posted while it runs wait for the next
 * drain), in the order they completed, on the calling thread, then hand
 * the failures recorded so far to the runtime (clgc_callback_fail). Call
 * it on the thread that owns the runtime, outside a safe region. Never
 * blocks. Leaves the fd readable if anything is still pending.
 *
 * Returns how many handlers ran (0 or more, at most INT_MAX), or a
 * negative code: CLGC_EINVAL for a NULL queue; CLGC_EDRAINING if the queue
 * is being drained (from one of its own handlers, or on another thread);
 * CLGC_ESYSTEM if reading the fd failed (errno says why; nothing ran). */
CLGC_EXTERN int clgc_queue_drain(clgc_queue_t *queue, unsigned max);

/* Close the queue: run the handlers pending (as clgc_queue_drain(queue, 0)
 * does), then close its fd and free it. Call it on the thread that drains
 * the queue, outside its handlers.
 *
 * Returns CLGC_OK (the queue is gone), or an error with the queue still
 * open and usable: CLGC_EINVAL for a NULL queue; CLGC_EDRAINING from one
 * of the queue's own handlers or while another thread drains it;
 * CLGC_EBUSY while completions are still to come (an event posted to it
 * has yet to complete, a callback deferred to it has yet to be called, a
 * thread still defers its callbacks to it, or a handler the close ran
 * posted again): drain and close it after those. */
CLGC_EXTERN int clgc_queue_close(clgc_queue_t *queue);

CLGC_END_DECLS

#endif /* CLGC_QUEUE_H */
