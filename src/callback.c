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
#include "internal.h"

/* Callbacks registered on this thread go to this queue, or run at once. */
static __thread clgc_queue_t *clgc__defer_to;

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
clgc__native_new(const char *command, clgc_function_t fn,
                 clgc_function_t *code)
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
clgc__callback_registered(struct clgc__callback *cb, int ok,
                          cl_context context)
{
    int waiting = 0;

    if (cb == NULL)
        return;
    if (cb->lifetime == CLGC__CONTEXT) {
        /* A context that OpenCL 3.0's destructor callback cannot tell us
         * about keeps its record (a few dozen bytes) for good. */
        if (!ok)
            clgc__record_free(cb);
        else
            (void)clSetContextDestructorCallback(context, clgc__context_gone,
                                                 cb);
        return;
    }
    /* A registering call that fails has not called, and will not call, the
     * callback (a failed build has called it already). */
    if (!ok && __atomic_compare_exchange_n(&cb->state, &waiting, 2, 0,
                                           __ATOMIC_ACQ_REL,
                                           __ATOMIC_ACQUIRE)) {
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

int
clgc_callbacks_defer(clgc_queue_t *queue)
{
    clgc__defer_to = queue;
    return CLGC_OK;
}

clgc_queue_t *
clgc_callbacks_deferred_to(void)
{
    return clgc__defer_to;
}
