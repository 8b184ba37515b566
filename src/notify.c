/* Asynchronous waits (include/clgc/wait.h).
 *
 * A notification is a record that the watcher service (watch.c) delivers
 * exactly once, when OpenCL calls back or when the watcher sees the event
 * fail: it then runs its handler (RAW or ACTIVE), or is pushed to its
 * queue and runs in a drain. Whoever runs the handler frees the record.
 * The record holds a reference to its event until then, so that the
 * handler gets a live event whatever the caller did with its own.
 *
 * Records hold the user's data pointer, so they come from
 * clgc__record_alloc: a runtime may have its collector scan them. */

#include <stddef.h>

#include "clgc/wait.h"
#include "next.h"

struct clgc__note {
    struct clgc__item item;   /* in a queue */
    struct clgc__watch watch; /* until delivered */
    cl_event event;
    clgc_event_cb handler;
    void *data;
    clgc_queue_t *queue; /* NULL: run the handler where it is delivered */
    clgc_notify_mode_t mode;
    cl_int status;
};

static void
clgc__note_free(struct clgc__note *n)
{
    CLGC__CL(clReleaseEvent)(n->event);
    clgc__record_free(n);
}

/* Run the handler, marked as a running handler so that it may report a
 * failure with clgc_callback_fail. */
static void
clgc__call_handler(struct clgc__note *n, const char *command)
{
    struct clgc__running running;

    clgc__running_push(&running, command);
    n->handler(n->event, n->status, n->data);
    clgc__running_pop(&running);
}

static void *
clgc__run_handler(void *p)
{
    clgc__call_handler(p, "clgc_event_notify");
    return NULL;
}

/* A queued notification's turn in a drain. */
static void
clgc__run_queued(struct clgc__item *it)
{
    struct clgc__note *n = (struct clgc__note *)it;

    /* The drain runs it inside a failure frame named after item.command. */
    n->handler(n->event, n->status, n->data);
    clgc__note_free(n);
}

/* Delivered: by OpenCL's callback, or by the watcher, or inline while it
 * registers. The status OpenCL gives is CL_COMPLETE even for a failed
 * command: the handler gets the event's own. */
static void
clgc__note_fire(struct clgc__watch *w, cl_event event, cl_int status)
{
    struct clgc__note *n =
        (struct clgc__note *)((char *)w - offsetof(struct clgc__note, watch));

    (void)event;
    (void)status;
    n->status = clgc__event_status(n->event);
    if (n->queue != NULL) {
        clgc__queue_push(n->queue, &n->item, 1); /* the queue's now */
        return;
    }
    if (n->mode == CLGC_NOTIFY_RAW ||
        clgc_call_active(clgc__run_handler, n, NULL) != CLGC_OK) {
        if (n->mode == CLGC_NOTIFY_ACTIVE)
            n->status = CLGC_NOTIFY_NOT_ATTACHED;
        clgc__run_handler(n);
    }
    clgc__note_free(n);
}

struct clgc__notify_args {
    struct clgc__note *n;
    cl_event event;
    cl_int err;
    int fires;
};

static void *
clgc__notify_register(void *p)
{
    struct clgc__notify_args *a = p;

    /* An event OpenCL does not know is refused by the registration. */
    (void)clgc__events_flush(1, &a->event, NULL);
    a->fires = clgc__watch_start(&a->n->watch, a->event, CL_COMPLETE, &a->err);
    return NULL;
}

static cl_int
clgc__notify(cl_event event, clgc_notify_mode_t mode, clgc_queue_t *queue,
             clgc_event_cb handler, void *data)
{
    struct clgc__notify_args a;
    struct clgc__note *n;

    if (event == NULL || !clgc__object_ok(event))
        return CL_INVALID_EVENT;
    if (handler == NULL ||
        (mode != CLGC_NOTIFY_RAW && mode != CLGC_NOTIFY_ACTIVE))
        return CL_INVALID_VALUE;
    n = clgc__record_alloc(sizeof(*n));
    if (n == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    if (CLGC__CL(clRetainEvent)(event) != CL_SUCCESS) {
        clgc__record_free(n);
        return CL_INVALID_EVENT;
    }
    *n = (struct clgc__note){
        .item = {.run = clgc__run_queued, .command = "clgc_event_post"},
        .watch.fire = clgc__note_fire,
        .event = event,
        .handler = handler,
        .data = data,
        .queue = queue,
        .mode = mode};
    if (queue != NULL)
        clgc__queue_promise(queue, 1);
    /* In a region: PoCL may run the callback inline, and an ACTIVE
     * handler then re-enters the runtime through the region's hook. Once
     * registered, n may be gone already. */
    a = (struct clgc__notify_args){n, event, CL_SUCCESS, 0};
    clgc_call_safe(clgc__notify_register, &a);
    if (!a.fires) {
        if (queue != NULL)
            clgc__queue_promise(queue, -1);
        clgc__note_free(n);
        return a.err;
    }
    return CL_SUCCESS;
}

cl_int
clgc_event_notify(cl_event event, clgc_notify_mode_t mode,
                  clgc_event_cb handler, void *data)
{
    return clgc__notify(event, mode, NULL, handler, data);
}

cl_int
clgc_event_post(cl_event event, clgc_queue_t *queue, clgc_event_cb handler,
                void *data)
{
    if (queue == NULL)
        return CL_INVALID_VALUE;
    return clgc__notify(event, CLGC_NOTIFY_RAW, queue, handler, data);
}
