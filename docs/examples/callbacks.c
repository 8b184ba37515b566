/* Callbacks (docs/callbacks.md), for a runtime whose code runs on one
 * thread only (Lua, an event loop): OpenCL's callbacks are deferred to a
 * completion queue and run when this thread drains it, from a poll()
 * loop; a callback that fails reports it with clgc_callback_fail, and the
 * runtime's callback_failed hook gets it at the end of that drain.
 *
 * It exits 0 when each callback ran once, on this thread, only in a
 * drain; the failure reached the hook once, naming its command; and the
 * queue refused to close while a callback was still to come.
 *
 *   cc callbacks.c -o callbacks $(pkg-config --cflags --libs clgc) -pthread
 */

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <clgc.h>

#include "pocl.h"

static int bad;

static void
check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    bad |= !ok;
}

/* --- The runtime: no regions of its own (a single-threaded runtime has
 * no collector to hold up), only the hook that raises callbacks' errors.
 * A binding would raise its language's error here, with the runtime
 * active, on the thread that drains. */
static int failures;
static clgc_callback_error_t last_failure;

static void
on_failed(const clgc_callback_error_t *e, void *data)
{
    failures++;
    last_failure = *e;
}

static const clgc_runtime_t runtime = {
    .version = CLGC_RUNTIME_VERSION,
    .name = "one-thread",
    .callback_failed = on_failed,
};

/* --- The callbacks. */
struct tally {
    pthread_t owner;
    int ran, elsewhere;
    cl_int status;
};

static void CL_CALLBACK
on_complete(cl_event event, cl_int status, void *data)
{
    struct tally *t = data;

    t->ran++;
    t->elsewhere += !pthread_equal(pthread_self(), t->owner);
    t->status = status;
}

static const char *bad_value = "attempt to call a nil value"; /* say */

/* Catches its language's error (here: pretends to), reports it, and
 * returns normally: nothing may unwind through OpenCL. */
static void CL_CALLBACK
on_complete_fails(cl_event event, cl_int status, void *data)
{
    on_complete(event, status, data);
    clgc_callback_fail((void *)bad_value);
}

/* Drain q whenever its fd is readable, until *ran reaches want. */
static void
loop(clgc_queue_t *q, const int *ran, int want)
{
    struct pollfd pfd = {.fd = clgc_queue_fd(q), .events = POLLIN};

    while (*ran < want && poll(&pfd, 1, 10000) == 1) /* a hang guard */
        if (clgc_queue_drain(q, 0) < 0)
            break;
}

int
main(void)
{
    const char *src = "__kernel void nop(void) {}";
    struct tally ok = {.owner = pthread_self()};
    struct tally fails = {.owner = pthread_self()};
    struct tally later = {.owner = pthread_self()};
    size_t one = 1;
    clgc_queue_t *q;
    struct pocl p;
    cl_kernel k;
    cl_event ev[2], user;
    cl_int err;

    if (clgc_runtime_install(&runtime) != CLGC_OK || pocl_open(&p, src) != 0)
        return 1;
    k = clgc_clCreateKernel(p.program, "nop", &err);

    /* Callbacks this thread registers from now on go to q. */
    if (clgc_queue_create(&q) != CLGC_OK)
        return 1;
    clgc_callbacks_defer(q);

    /* Two kernels, a callback each: one succeeds, one fails. PoCL calls
     * the trampolines on its own thread; clgc posts them to q. */
    for (int i = 0; i < 2; i++)
        clgc_clEnqueueNDRangeKernel(p.queue, k, 1, NULL, &one, NULL, 0, NULL,
                                    &ev[i]);
    clgc_clSetEventCallback(ev[0], CL_COMPLETE, on_complete, &ok);
    clgc_clSetEventCallback(ev[1], CL_COMPLETE, on_complete_fails, &fails);
    clgc_clFlush(p.queue);
    clgc_clFinish(p.queue);
    check(ok.ran == 0 && fails.ran == 0,
          "the kernels are done, no callback has run before a drain");

    loop(q, &fails.ran, 1);
    loop(q, &ok.ran, 1);
    check(ok.ran == 1 && fails.ran == 1 && ok.elsewhere + fails.elsewhere == 0,
          "each callback ran once, on this thread, in a drain");
    check(ok.status == CL_COMPLETE, "with the event's status, CL_COMPLETE");
    check(failures == 1 && last_failure.code == CLGC_ECALLBACK &&
              last_failure.error == bad_value &&
              strcmp(last_failure.command, "clSetEventCallback") == 0,
          "the failure reached callback_failed once, naming its command");
    check(clgc_callback_fail(NULL) == CLGC_EINVAL,
          "clgc_callback_fail outside a callback: CLGC_EINVAL");

    /* A queue is never closed under a callback still to come. */
    user = clgc_clCreateUserEvent(p.context, &err);
    clgc_clSetEventCallback(user, CL_COMPLETE, on_complete, &later);
    check(clgc_queue_close(q) == CLGC_EBUSY,
          "close refuses while a deferred callback is to come");
    clgc_clSetUserEventStatus(user, CL_COMPLETE);
    loop(q, &later.ran, 1);
    check(later.ran == 1 && later.elsewhere == 0, "it came, and ran here");
    clgc_callbacks_defer(NULL);
    check(clgc_queue_close(q) == CLGC_OK, "then the queue closes");

    clgc_clReleaseEvent(user);
    clgc_clReleaseEvent(ev[0]);
    clgc_clReleaseEvent(ev[1]);
    clgc_clReleaseKernel(k);
    pocl_close(&p);
    return bad;
}
