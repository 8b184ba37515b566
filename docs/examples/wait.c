/* Waiting (docs/wait.md): the cooperative wait and its paths, the polling
 * budget, the blocking switch, a failed command, an interrupt, and a
 * completion queue drained from a poll() loop. No runtime is installed
 * (clgc's no-op "none"); with one, every wait below sleeps in its safe
 * region.
 *
 * It exits 0 when every wait returned what clWaitForEvents would, each by
 * the path the comments say, and every queued handler ran once, here.
 *
 *   cc wait.c -o wait $(pkg-config --cflags --libs clgc) -pthread
 */

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>

#include <clgc.h>

#include "pocl.h"

#define N 256
#define LAUNCHES 8

static const char *src = "__kernel void add1(__global int *x)\n"
                         "{\n"
                         "    x[get_global_id(0)] += 1;\n"
                         "}\n";

static int bad;

static void
check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    bad |= !ok;
}

static const char *
path_name(clgc_wait_path_t path)
{
    switch (path) {
    case CLGC_WAIT_PATH_POLL:
        return "poll";
    case CLGC_WAIT_PATH_CALLBACK:
        return "callback";
    case CLGC_WAIT_PATH_BLOCKING:
        return "blocking";
    case CLGC_WAIT_PATH_BACKOFF:
        return "backoff";
    default:
        return "none";
    }
}

/* Enqueue add1 over the buffer, after `after` if not NULL. */
static cl_event
launch(struct pocl *p, cl_kernel k, cl_event after)
{
    size_t global = N;
    cl_event done = NULL;

    clgc_clEnqueueNDRangeKernel(p->queue, k, 1, NULL, &global, NULL,
                                after != NULL, after != NULL ? &after : NULL,
                                &done);
    return done;
}

/* Every element of buf is `want`. */
static int
all_equal(struct pocl *p, cl_mem buf, int want)
{
    int x[N];

    if (clgc_clEnqueueReadBuffer(p->queue, buf, CL_TRUE, 0, sizeof(x), x, 0,
                                 NULL, NULL) != CL_SUCCESS)
        return 0;
    for (int i = 0; i < N; i++)
        if (x[i] != want)
            return 0;
    return 1;
}

/* --- An interrupt: a signal handler sets a flag, as a runtime's Ctrl-C
 * handler would; the wait goes on until the event is done. The flag is
 * atomic (lock-free, so a handler may store to it) because another thread
 * reads it too. */
static atomic_int interrupted;

static void
on_interrupt(int sig)
{
    atomic_store(&interrupted, 1);
}

struct waiter {
    cl_event event;
    cl_int ret;
    int saw_flag;
};

static void *
waiter(void *arg)
{
    struct waiter *w = arg;

    w->ret = clgc_wait_for_events(1, &w->event);
    w->saw_flag = atomic_load(&interrupted); /* looked at after the wait */
    return NULL;
}

/* --- The queue's handler: runs in clgc_queue_drain, on this thread. */
struct tally {
    pthread_t owner;
    int ran, elsewhere, failed;
};

static void
on_done(cl_event event, cl_int status, void *data)
{
    struct tally *t = data;

    t->ran++;
    t->elsewhere += !pthread_equal(pthread_self(), t->owner);
    t->failed += status != CL_COMPLETE;
}

int
main(void)
{
    struct pocl p;
    cl_kernel k;
    cl_mem buf;
    cl_event ev, gate;
    cl_int err, zero = 0;

    if (pocl_open(&p, src) != 0)
        return 1;
    k = clgc_clCreateKernel(p.program, "add1", &err);
    buf = clgc_clCreateBuffer(p.context, CL_MEM_READ_WRITE, N * sizeof(int),
                              NULL, &err);
    clgc_clEnqueueFillBuffer(p.queue, buf, &zero, sizeof(zero), 0,
                             N * sizeof(int), 0, NULL, NULL);
    clgc_clSetKernelArg(k, 0, sizeof(buf), &buf);

    /* The default: flush, one look, then sleep until PoCL's callback. */
    ev = launch(&p, k, NULL);
    check(clgc_wait_for_events(1, &ev) == CL_SUCCESS && all_equal(&p, buf, 1),
          "a cooperative wait");
    printf("     it finished by %s; the budget is %ld ns\n",
           path_name(clgc_wait_last_path()), clgc_wait_get_poll_ns());
    clgc_clReleaseEvent(ev);

    /* A budget: look for up to 50 us before sleeping. */
    clgc_wait_set_poll_ns(50000);
    ev = launch(&p, k, NULL);
    check(clgc_wait_for_events(1, &ev) == CL_SUCCESS && all_equal(&p, buf, 2) &&
              clgc_wait_get_poll_ns() == 50000,
          "a wait with a 50 us polling budget");
    printf("     it finished by %s\n", path_name(clgc_wait_last_path()));
    clgc_wait_set_poll_ns(0);
    clgc_clReleaseEvent(ev);

    /* An event that is already complete: the one look finds it. */
    ev = launch(&p, k, NULL);
    clgc_clFinish(p.queue);
    check(clgc_wait_for_events(1, &ev) == CL_SUCCESS &&
              clgc_wait_last_path() == CLGC_WAIT_PATH_POLL,
          "a finished event: path poll");
    clgc_clReleaseEvent(ev);

    /* The blocking switch (CLGC_WAIT=blocking does the same). */
    clgc_wait_set_mode(CLGC_WAIT_BLOCKING);
    ev = launch(&p, k, NULL);
    check(clgc_wait_for_events(1, &ev) == CL_SUCCESS &&
              clgc_wait_last_path() == CLGC_WAIT_PATH_BLOCKING &&
              all_equal(&p, buf, 4),
          "the blocking switch: clWaitForEvents in a safe region");
    clgc_wait_set_mode(CLGC_WAIT_COOPERATIVE);
    clgc_clReleaseEvent(ev);

    /* An interrupt: signal the waiting thread until its handler has run,
     * then complete the event. The wait returns only then. */
    {
        struct sigaction sa = {.sa_handler = on_interrupt}; /* no restart */
        struct waiter w = {.ret = 1};
        pthread_t t;

        sigaction(SIGUSR1, &sa, NULL);
        w.event = clgc_clCreateUserEvent(p.context, &err);
        pthread_create(&t, NULL, waiter, &w);
        while (!atomic_load(&interrupted)) {
            pthread_kill(t, SIGUSR1);
            sched_yield();
        }
        clgc_clSetUserEventStatus(w.event, CL_COMPLETE);
        pthread_join(t, NULL);
        check(w.ret == CL_SUCCESS && w.saw_flag,
              "an interrupted wait: goes on, the flag is seen after it");
        clgc_clReleaseEvent(w.event);
    }

    /* A completion queue in an event loop: post each launch (posting
     * flushes its queue), release our event (clgc holds one), and drain
     * whenever the fd is readable. */
    {
        struct tally t = {.owner = pthread_self()};
        clgc_queue_t *q = NULL;
        struct pollfd pfd = {.events = POLLIN};
        int wakeups = 0;

        if (clgc_queue_create(&q) != CLGC_OK)
            check(0, "a completion queue is created");
        pfd.fd = clgc_queue_fd(q);

        for (int i = 0; i < LAUNCHES; i++) {
            ev = launch(&p, k, NULL);
            clgc_event_post(ev, q, on_done, &t);
            clgc_clReleaseEvent(ev);
        }
        while (t.ran < LAUNCHES) {
            if (poll(&pfd, 1, 10000) != 1) /* a hang guard only */
                break;
            wakeups++;
            if (clgc_queue_drain(q, 0) < 0)
                break;
        }
        check(t.ran == LAUNCHES && t.elsewhere == 0 && t.failed == 0 &&
                  all_equal(&p, buf, 4 + LAUNCHES),
              "a completion queue: every handler once, on this thread");
        printf("     %d handlers in %d wakeups\n", t.ran, wakeups);
        check(clgc_queue_close(q) == CLGC_OK, "the queue closes");
    }

    /* A failed command, last because the queue's later commands would
     * fail too: a kernel after a user event set to an error. PoCL calls
     * back for neither; clgc's own look (after 100 ms) sees the failure,
     * and the wait says so as clWaitForEvents would. */
    gate = clgc_clCreateUserEvent(p.context, &err);
    ev = launch(&p, k, gate);
    clgc_clSetUserEventStatus(gate, -1);
    check(clgc_wait_for_events(1, &ev) ==
              CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
          "a failed command: CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST");
    clgc_clReleaseEvent(ev);
    clgc_clReleaseEvent(gate);

    clgc_clReleaseMemObject(buf);
    clgc_clReleaseKernel(k);
    pocl_close(&p);
    return bad;
}
