/* The trampolines' records and how a call reaches the user's function
 * (include/clgc/callback.h).
 *
 * Each wrapper of a command that takes a callback (generated, see
 * gen/generate.py) hands OpenCL a trampoline of the callback's own type
 * and a record in place of the user's function and data. When OpenCL calls
 * the trampoline, it packs the arguments into a struct on its stack and
 * calls clgc__callback_fire, which either
 *
 * - runs the user's function now, through clgc_call_active: with the
 *   runtime active on whichever thread this is (re-entered from inside the
 *   caller's own safe region, called directly on an active thread, or on a
 *   foreign thread after attaching it once); or
 * - for a record registered by a thread that asked for deferral, copies
 *   the arguments into the record and posts it to that thread's queue, to
 *   run in its next drain.
 *
 * A record of a callback called at most once holds two references, the
 * registration's (dropped when the registering call returns) and the
 * callback's (dropped after the call, or when the registering call failed
 * and so the call will never come). A context's error callback is freed
 * by the context's destructor callback. */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clgc/callback.h"
#include "next.h"
#include "gen/commands.h"

/* Callbacks registered on this thread go to this queue, or run at once.
 * The queue counts the threads deferring to it, so that it is not closed
 * under them; a thread that exits deferring is uncounted by the key's
 * destructor, whose value is the same queue. */
static __thread clgc_queue_t *clgc__defer_to;
static pthread_key_t clgc__defer_key;
static pthread_once_t clgc__defer_once = PTHREAD_ONCE_INIT;
static int clgc__defer_key_failed;

static void clgc__run_deferred(struct clgc__item *it);

static void
clgc__unref(struct clgc__callback *cb, unsigned k)
{
    if (__atomic_sub_fetch(&cb->refs, k, __ATOMIC_ACQ_REL) != 0)
        return;
    if (cb->closure != NULL)
        clgc_closure_free(cb->closure); /* maybe from its own handler */
    clgc__record_free(cb);
}

struct clgc__callback *
clgc__callback_new(const char *command, enum clgc__lifetime lifetime,
                   clgc__run_fn run, clgc_function_t fn, void *data,
                   size_t argsize)
{
    clgc_queue_t *queue = lifetime == CLGC__ONCE ? clgc__defer_to : NULL;
    struct clgc__callback *cb =
        clgc__record_alloc(sizeof(*cb) + (queue != NULL ? argsize : 0));

    if (cb == NULL)
        return NULL;
    *cb = (struct clgc__callback){.item.run = clgc__run_deferred,
                                  .item.command = command,
                                  .run = run,
                                  .fn = fn,
                                  .data = data,
                                  .command = command,
                                  .queue = queue,
                                  .lifetime = lifetime,
                                  .refs = lifetime == CLGC__CONTEXT ? 1 : 2,
                                  .argsize = argsize};
    if (queue != NULL)
        clgc__queue_promise(queue, 1);
    return cb;
}

/* A native kernel's closure: the closure's own dispatch has brought the
 * runtime in; call the user's function with the argument block. */
static void
clgc__native_call(void *result, void *const *args, void *p)
{
    struct clgc__callback *cb = p;
    struct clgc__running running;

    (void)result;
    __atomic_store_n(&cb->state, 1, __ATOMIC_RELEASE);
    clgc__running_push(&running, cb->command);
    ((void(CL_CALLBACK *)(void *))cb->fn)(*(void *const *)args[0]);
    clgc__running_pop(&running);
    clgc__unref(cb, 1);
}

struct clgc__callback *
clgc__native_new(const char *command, clgc_function_t fn, clgc_function_t *code)
{
    struct clgc__callback *cb =
        clgc__callback_new(command, CLGC__ONCE_NOW, NULL, fn, NULL, 0);

    if (cb != NULL && clgc_closure_create("v(p)", clgc__native_call, cb,
                                          &cb->closure, code) != CLGC_OK) {
        clgc__record_free(cb);
        cb = NULL;
    }
    return cb;
}

static void CL_CALLBACK
clgc__context_gone(cl_context context, void *p)
{
    (void)context;
    clgc__record_free(p);
}

void
clgc__callback_registered(struct clgc__callback *cb, int ok, cl_context context)
{
    int waiting = 0;

    if (cb == NULL)
        return;
    if (cb->lifetime == CLGC__CONTEXT) {
        /* A context that OpenCL 3.0's destructor callback cannot tell us
         * about keeps its record (a few dozen bytes) for good: so does one
         * whose driver's table lacks the entry (an OpenCL 1.2 driver such
         * as Oclgrind fills it with the loader's own function, which would
         * call itself for good). */
        if (!ok)
            clgc__record_free(cb);
        else if (clgc__entry_check(context,
                                   CLGC__ENTRY_clSetContextDestructorCallback,
                                   CL_INVALID_CONTEXT) == CL_SUCCESS)
            (void)CLGC__CL(clSetContextDestructorCallback)(
                context, clgc__context_gone, cb);
        return;
    }
    /* A registering call that fails has not called, and will not call, the
     * callback (a failed build has called it already). */
    if (!ok &&
        __atomic_compare_exchange_n(&cb->state, &waiting, 2, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        if (cb->queue != NULL)
            clgc__queue_promise(cb->queue, -1);
        clgc__unref(cb, 2);
        return;
    }
    clgc__unref(cb, 1);
}

struct clgc__call {
    const struct clgc__callback *cb;
    const void *args;
};

static void *
clgc__call_now(void *p)
{
    const struct clgc__call *c = p;
    struct clgc__running running;

    clgc__running_push(&running, c->cb->command);
    c->cb->run(c->cb, c->args);
    clgc__running_pop(&running);
    return NULL;
}

void
clgc__callback_fire(struct clgc__callback *cb, const void *args)
{
    struct clgc__call c = {cb, args};
    int err;

    if (cb->lifetime != CLGC__CONTEXT)
        __atomic_store_n(&cb->state, 1, __ATOMIC_RELEASE);
    if (cb->queue != NULL) {
        /* The queue takes over the callback's reference. */
        memcpy(cb->args, args, cb->argsize);
        clgc__queue_push(cb->queue, &cb->item, 1);
        return;
    }
    err = clgc_call_active(clgc__call_now, &c, NULL);
    if (err != CLGC_OK)
        clgc__record_error(cb->command, err, NULL);
    if (cb->lifetime != CLGC__CONTEXT)
        clgc__unref(cb, 1);
}

/* A deferred callback's turn in its queue's drain, on the owner thread. */
static void
clgc__run_deferred(struct clgc__item *it)
{
    struct clgc__callback *cb = (struct clgc__callback *)it;
    struct clgc__call c = {cb, cb->args};

    clgc__call_now(&c);
    clgc__unref(cb, 1);
}

/* A thread exits deferring to q. A registration made by a later
 * thread-exit destructor runs at once rather than promise to a queue that
 * no longer counts this thread. */
static void
clgc__defer_gone(void *q)
{
    clgc__defer_to = NULL;
    clgc__queue_deferring(q, -1);
}

static void
clgc__defer_key_make(void)
{
    clgc__defer_key_failed =
        pthread_key_create(&clgc__defer_key, clgc__defer_gone);
}

int
clgc_callbacks_defer(clgc_queue_t *queue)
{
    clgc_queue_t *old = clgc__defer_to;

    if (queue == old)
        return CLGC_OK;
    pthread_once(&clgc__defer_once, clgc__defer_key_make);
    if (clgc__defer_key_failed)
        return CLGC_ENOMEM;
    /* Counted on the new queue before the old one is let go, and before
     * this thread's registrations can promise anything to it. */
    if (queue != NULL)
        clgc__queue_deferring(queue, 1);
    if (pthread_setspecific(clgc__defer_key, queue) != 0) {
        if (queue != NULL)
            clgc__queue_deferring(queue, -1);
        return CLGC_ENOMEM;
    }
    clgc__defer_to = queue;
    if (old != NULL)
        clgc__queue_deferring(old, -1);
    return CLGC_OK;
}

clgc_queue_t *
clgc_callbacks_deferred_to(void)
{
    return clgc__defer_to;
}

/* clSetEventCallback, written by hand (gen/tables.py, HANDWRITTEN): its
 * callbacks are registered through the watcher (watch.c), so that each is
 * called once even for a failed command PoCL never calls back for, with
 * the event's negative status, as OpenCL specifies for a terminated
 * command; a deferred one then reaches its queue, which can close. */
struct clgc__event_args {
    cl_event event;
    cl_int event_command_status;
};

static void
clgc__run_event(const struct clgc__callback *cb, const void *p)
{
    const struct clgc__event_args *v = p;

    ((void(CL_CALLBACK *)(cl_event, cl_int, void *))cb->fn)(
        v->event, v->event_command_status, cb->data);
}

/* A registration's watch, beside its record. */
struct clgc__event_watch {
    struct clgc__watch watch;
    struct clgc__callback *cb;
};

/* The watcher passes a failure's own status; a driver's callback may say
 * CL_COMPLETE for a failed command (NVIDIA's does, for a failed user
 * event), so its status is read again then. */
static void
clgc__event_watch_fire(struct clgc__watch *w, cl_event event, cl_int status)
{
    struct clgc__event_watch *e = (struct clgc__event_watch *)w;
    struct clgc__event_args v = {event, status};
    struct clgc__callback *cb = e->cb;
    cl_int now;

    free(e);
    if (status >= 0 && (now = clgc__event_status(event)) < 0)
        v.event_command_status = now;
    clgc__callback_fire(cb, &v);
}

void *
clgc__set_event_callback(void *p)
{
    struct clgc__set_event_callback *a = p;
    struct clgc__event_watch *e;
    struct clgc__callback *cb;
    int fires;

    if (a->fn == NULL) {
        a->ret = CLGC__CL(clSetEventCallback)(a->event, a->type, NULL, a->data);
        return NULL;
    }
    cb = clgc__callback_new("clSetEventCallback", CLGC__ONCE, clgc__run_event,
                            (clgc_function_t)a->fn, a->data,
                            sizeof(struct clgc__event_args));
    e = malloc(sizeof(*e));
    if (cb == NULL || e == NULL) {
        free(e);
        if (cb != NULL)
            clgc__callback_registered(cb, 0, NULL);
        a->ret = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    *e = (struct clgc__event_watch){{clgc__event_watch_fire}, cb};
    fires = clgc__watch_start(&e->watch, a->event, a->type, &a->ret);
    if (!fires)
        free(e);
    clgc__callback_registered(cb, fires, NULL);
    return NULL;
}
