/* Asynchronous waits (include/clgc/wait.h).
 *
 * A notification is a heap record shared by PoCL's callback, clgc's
 * watcher and, once delivered to a queue, the queue. It is delivered once,
 * by whichever of the callback and the watcher gets there first (a
 * compare-and-swap on `delivered`), and freed by whichever drops the last
 * reference:
 *
 * - the callback's: PoCL's completion callback drops it, with the watch
 *   list's, when it runs (unlinking the record from the list);
 * - the watch list's: the record stays listed until the callback comes, so
 *   that the watcher can deliver a failure PoCL never calls back for;
 * - the queue's: taken when the record is pushed, dropped after its
 *   handler ran in a drain.
 *
 * The record holds a reference to its event, dropped when the record is
 * freed, so that the watcher may look at the event while a handler
 * elsewhere releases the caller's. A record whose callback never comes
 * (PoCL 3.1, a failed user event and what depends on it) stays on the
 * watch list, delivered, for the life of the process, with its event. */

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "clgc/wait.h"
#include "internal.h"

/* How often the watcher looks at undelivered notifications. */
#define CLGC__WATCH_NS 10000000L

struct clgc__note {
    struct clgc__item item;           /* in a queue */
    struct clgc__note *wnext, *wprev; /* in the watch list */
    struct clgc__note *fnext;         /* in the watcher's list of failures */
    cl_event event;
    clgc_event_cb handler;
    void *data;
    clgc_queue_t *queue; /* NULL: run the handler where it is delivered */
    clgc_notify_mode_t mode;
    cl_int status;
    int delivered;
    unsigned refs;
};

/* The watch list: every notification whose callback has not come. */
static pthread_mutex_t clgc__watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t clgc__watch_cond = PTHREAD_COND_INITIALIZER;
static struct clgc__note clgc__watch = {.wnext = &clgc__watch,
                                        .wprev = &clgc__watch};
static unsigned clgc__undelivered; /* under the lock: what to watch for */
static pthread_once_t clgc__watcher_once = PTHREAD_ONCE_INIT;
static int clgc__watcher_failed;

static void
clgc__unref(struct clgc__note *n, unsigned k)
{
    if (__atomic_sub_fetch(&n->refs, k, __ATOMIC_ACQ_REL) == 0) {
        clReleaseEvent(n->event);
        clgc__record_free(n);
    }
}

static cl_int
clgc__final_status(cl_event event)
{
    cl_int status = CL_COMPLETE;

    if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
                       &status, NULL) != CL_SUCCESS)
        status = CL_INVALID_EVENT;
    return status;
}

static void *
clgc__run_handler(void *p)
{
    struct clgc__note *n = p;

    n->handler(n->event, n->status, n->data);
    return NULL;
}

/* A queued notification's turn in a drain. */
static void
clgc__run_queued(struct clgc__item *it)
{
    struct clgc__note *n = (struct clgc__note *)it;

    n->handler(n->event, n->status, n->data);
    clgc__unref(n, 1);
}

/* Deliver n if nobody has; the caller holds a reference. */
static void
clgc__deliver(struct clgc__note *n)
{
    int no = 0;

    if (!__atomic_compare_exchange_n(&n->delivered, &no, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&clgc__watch_lock);
    clgc__undelivered--;
    pthread_mutex_unlock(&clgc__watch_lock);
    n->status = clgc__final_status(n->event);
    if (n->queue != NULL) {
        __atomic_add_fetch(&n->refs, 1, __ATOMIC_RELAXED); /* the queue's */
        clgc__queue_push(n->queue, &n->item, 1);
    } else if (n->mode == CLGC_NOTIFY_RAW ||
               clgc_call_active(clgc__run_handler, n, NULL) != CLGC_OK) {
        if (n->mode == CLGC_NOTIFY_ACTIVE)
            n->status = CLGC_NOTIFY_NOT_ATTACHED;
        n->handler(n->event, n->status, n->data);
    }
}

/* PoCL's completion callback: on its own thread, or inline in
 * clSetEventCallback when the event is already complete. */
static void CL_CALLBACK
clgc__note_fired(cl_event event, cl_int status, void *p)
{
    struct clgc__note *n = p;

    (void)event;
    (void)status;
    clgc__deliver(n);
    pthread_mutex_lock(&clgc__watch_lock);
    n->wprev->wnext = n->wnext;
    n->wnext->wprev = n->wprev;
    pthread_mutex_unlock(&clgc__watch_lock);
    clgc__unref(n, 2); /* the callback's and the watch list's */
}

/* The watcher: while undelivered notifications exist, look at their
 * events every CLGC__WATCH_NS and deliver the failed ones. Sleeps on a
 * condition variable otherwise. */
static void *
clgc__watcher(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&clgc__watch_lock);
    for (;;) {
        struct clgc__note *failed = NULL, *n;
        struct timespec until;

        while (clgc__undelivered == 0)
            pthread_cond_wait(&clgc__watch_cond, &clgc__watch_lock);
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += CLGC__WATCH_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&clgc__watch_cond, &clgc__watch_lock, &until);
        /* Take the undelivered ones out of the lock's reach before asking
         * OpenCL anything: PoCL may hold an event's lock while it runs our
         * callback, which takes the watch lock. */
        for (n = clgc__watch.wnext; n != &clgc__watch; n = n->wnext) {
            if (__atomic_load_n(&n->delivered, __ATOMIC_ACQUIRE))
                continue;
            __atomic_add_fetch(&n->refs, 1, __ATOMIC_RELAXED);
            n->fnext = failed;
            failed = n;
        }
        pthread_mutex_unlock(&clgc__watch_lock);
        while ((n = failed) != NULL) {
            failed = n->fnext;
            if (!__atomic_load_n(&n->delivered, __ATOMIC_ACQUIRE) &&
                clgc__final_status(n->event) < 0)
                clgc__deliver(n);
            clgc__unref(n, 1);
        }
        pthread_mutex_lock(&clgc__watch_lock);
    }
    return NULL;
}

static void
clgc__start_watcher(void)
{
    pthread_attr_t attr;
    pthread_t t;

    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    clgc__watcher_failed = pthread_create(&t, &attr, clgc__watcher, NULL);
    pthread_attr_destroy(&attr);
}

/* clSetEventCallback refused n: take it back, unless the watcher has
 * delivered it meanwhile (the event had failed), in which case the handler
 * ran and the registration counts as done. */
static cl_int
clgc__unregister(struct clgc__note *n, cl_int err)
{
    int no = 0, claimed = __atomic_compare_exchange_n(&n->delivered, &no, 1, 0,
                                                      __ATOMIC_ACQ_REL,
                                                      __ATOMIC_RELAXED);

    pthread_mutex_lock(&clgc__watch_lock);
    if (claimed)
        clgc__undelivered--;
    n->wprev->wnext = n->wnext;
    n->wnext->wprev = n->wprev;
    pthread_mutex_unlock(&clgc__watch_lock);
    if (claimed && n->queue != NULL)
        clgc__queue_promise(n->queue, -1);
    clgc__unref(n, 2); /* the callback's, which never comes, and the list's */
    return claimed ? err : CL_SUCCESS;
}

struct clgc__a_register {
    struct clgc__note *n;
    cl_int ret;
};

static void *
clgc__register(void *p)
{
    struct clgc__a_register *a = p;

    clgc__flush_queues(1, &a->n->event);
    a->ret =
        clSetEventCallback(a->n->event, CL_COMPLETE, clgc__note_fired, a->n);
    return NULL;
}

static cl_int
clgc__notify(cl_event event, clgc_notify_mode_t mode, clgc_queue_t *queue,
             clgc_event_cb handler, void *data)
{
    struct clgc__a_register a;
    struct clgc__note *n;

    if (event == NULL || !clgc__object_ok(event))
        return CL_INVALID_EVENT;
    if (handler == NULL ||
        (mode != CLGC_NOTIFY_RAW && mode != CLGC_NOTIFY_ACTIVE))
        return CL_INVALID_VALUE;
    pthread_once(&clgc__watcher_once, clgc__start_watcher);
    n = clgc__record_alloc(sizeof(*n));
    if (n == NULL || clgc__watcher_failed) {
        clgc__record_free(n);
        return CL_OUT_OF_HOST_MEMORY;
    }
    if (clRetainEvent(event) != CL_SUCCESS) {
        clgc__record_free(n);
        return CL_INVALID_EVENT;
    }
    *n = (struct clgc__note){.item.run = clgc__run_queued,
                             .event = event,
                             .handler = handler,
                             .data = data,
                             .queue = queue,
                             .mode = mode,
                             .refs = 2};
    if (queue != NULL)
        clgc__queue_promise(queue, 1);
    pthread_mutex_lock(&clgc__watch_lock);
    n->wnext = &clgc__watch;
    n->wprev = clgc__watch.wprev;
    clgc__watch.wprev->wnext = n;
    clgc__watch.wprev = n;
    clgc__undelivered++;
    pthread_cond_signal(&clgc__watch_cond);
    pthread_mutex_unlock(&clgc__watch_lock);
    /* In a region: PoCL may run the callback inline, and an ACTIVE
     * handler then re-enters the runtime through the region's hook. */
    a = (struct clgc__a_register){n, CL_SUCCESS};
    clgc_call_safe(clgc__register, &a);
    if (a.ret != CL_SUCCESS)
        return clgc__unregister(n, a.ret);
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
