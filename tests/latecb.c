/* A late-callback driver over the real one (tests/latecb.h), with
 * NVIDIA's busy clWaitForEvents if asked.
 *
 * The trampoline the driver calls only queues the callback: the delivery
 * thread calls it when it is due. One thread delivers them all, in order,
 * as a driver's callback thread would (NVIDIA's, PoCL 7's); the delay is
 * counted from the driver's call, so a callback is never early. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include "latecb.h"

typedef void(CL_CALLBACK *event_fn)(cl_event, cl_int, void *);

struct late {
    struct late *next;
    /* In the list of registrations the driver has not called back for
     * (it never does for a failed user event's commands): reachable, so
     * that a test's leak check does not count them as lost. */
    struct late *unmade_prev, *unmade_next;
    event_fn fn;
    void *data;
    cl_event event;
    cl_int status;
    long due;        /* ns, CLOCK_MONOTONIC; 0: held until latecb_release */
    long registered; /* ns, CLOCK_MONOTONIC */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond; /* on the monotonic clock */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct late *head, *tail; /* made by the driver, not delivered */
static struct late *registered;  /* not made yet by the driver */
static int releasing, running;
static atomic_long delay_ms, split_us, share, held, delivered, unmade, waiting;
static atomic_int busy_wait, wait_completes;
static cl_int(CL_API_CALL *real)(cl_event, cl_int, event_fn, void *);
static cl_int(CL_API_CALL *real_wait)(cl_uint, const cl_event *);

static long
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Under lock: l joins or leaves the registrations not made yet. */
static void
unmade_link(struct late *l)
{
    l->unmade_prev = NULL;
    l->unmade_next = registered;
    if (registered != NULL)
        registered->unmade_prev = l;
    registered = l;
}

static void
unmade_unlink(struct late *l)
{
    if (l->unmade_prev != NULL)
        l->unmade_prev->unmade_next = l->unmade_next;
    else
        registered = l->unmade_next;
    if (l->unmade_next != NULL)
        l->unmade_next->unmade_prev = l->unmade_prev;
}

static void *
deliver(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&lock);
    for (;;) {
        struct late *l = head;

        if (l == NULL || (!releasing && l->due == 0)) {
            pthread_cond_wait(&cond, &lock);
            continue;
        }
        if (!releasing && now_ns() < l->due) {
            struct timespec until = {l->due / 1000000000L,
                                     l->due % 1000000000L};

            pthread_cond_timedwait(&cond, &lock, &until);
            continue;
        }
        head = l->next;
        if (head == NULL)
            tail = NULL;
        pthread_mutex_unlock(&lock);
        l->fn(l->event, l->status, l->data);
        clReleaseEvent(l->event);
        free(l);
        pthread_mutex_lock(&lock);
        atomic_fetch_sub(&held, 1);
        atomic_fetch_add(&delivered, 1);
        pthread_cond_broadcast(&cond);
    }
    return NULL;
}

static void
init(void)
{
    pthread_condattr_t attr;
    const char *ms = getenv("CLGC_TEST_LATE_CALLBACK_MS");

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&cond, &attr);
    pthread_condattr_destroy(&attr);
    const char *busy = getenv("CLGC_TEST_LATE_BUSY_WAIT");
    const char *split = getenv("CLGC_TEST_LATE_SPLIT_US");

    *(void **)&real = dlsym(RTLD_NEXT, "clSetEventCallback");
    *(void **)&real_wait = dlsym(RTLD_NEXT, "clWaitForEvents");
    if (ms != NULL)
        atomic_store(&delay_ms, atol(ms));
    if (busy != NULL)
        atomic_store(&busy_wait, atoi(busy));
    if (split != NULL)
        atomic_store(&split_us, atol(split));
}

/* The driver's callback: on its thread, or inline in the registration. */
static void CL_CALLBACK
trampoline(cl_event event, cl_int status, void *p)
{
    struct late *l = p;
    long ms = atomic_load(&delay_ms), split = atomic_load(&split_us), now;

    pthread_mutex_lock(&lock);
    unmade_unlink(l);
    pthread_mutex_unlock(&lock);
    /* A command that ended sooner than the split after its registration
     * is called back at once, as NVIDIA calls back for short ones. */
    if (split > 0 && ms > 0 && now_ns() - l->registered < split * 1000L) {
        atomic_fetch_sub(&unmade, 1);
        l->fn(event, status, l->data);
        free(l);
        return;
    }
    clRetainEvent(event);
    l->event = event;
    l->status = status;
    now = now_ns();
    if (ms == 0) /* by a share of the command's time */
        l->due = now + (now - l->registered) * atomic_load(&share) / 100;
    else
        l->due = ms < 0 ? 0 : now + ms * 1000000L;
    l->next = NULL;
    pthread_mutex_lock(&lock);
    atomic_fetch_add(&held, 1);
    /* Made only now that it is held: a release that found none unmade
     * (check_late's release_all) must find this one held. */
    atomic_fetch_sub(&unmade, 1);
    /* The delivery thread waits for the head: a callback behind it is
     * due later (or held as it is), and needs no wakeup. Under a share
     * one may be due sooner; it is delivered after the head all the
     * same (the tests that set a share wait for one command at a time). */
    if (tail != NULL) {
        tail->next = l;
    } else {
        head = l;
        pthread_cond_broadcast(&cond);
    }
    tail = l;
    pthread_mutex_unlock(&lock);
}

cl_int CL_API_CALL
clSetEventCallback(cl_event event, cl_int type, event_fn fn, void *data)
{
    struct late *l;
    cl_int err;

    pthread_once(&once, init);
    if (real == NULL)
        return CL_INVALID_OPERATION;
    if ((atomic_load(&delay_ms) == 0 && atomic_load(&share) == 0) || fn == NULL)
        return real(event, type, fn, data);
    l = calloc(1, sizeof(*l));
    if (l == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    l->fn = fn;
    l->data = data;
    l->registered = now_ns();
    pthread_mutex_lock(&lock);
    unmade_link(l);
    if (!running) {
        pthread_t t;

        running = pthread_create(&t, NULL, deliver, NULL) == 0;
        if (running)
            pthread_detach(t);
    }
    pthread_mutex_unlock(&lock);
    atomic_fetch_add(&unmade, 1);
    err = real(event, type, trampoline, l);
    if (err != CL_SUCCESS) {
        pthread_mutex_lock(&lock);
        unmade_unlink(l);
        pthread_mutex_unlock(&lock);
        atomic_fetch_sub(&unmade, 1);
        free(l);
    }
    return err;
}

static cl_int
busy_wait_for(cl_uint n, const cl_event *events)
{
    int failed = 0;

    for (cl_uint i = 0; i < n; i++) {
        cl_command_queue queue = NULL;

        if (clGetEventInfo(events[i], CL_EVENT_COMMAND_QUEUE, sizeof(queue),
                           &queue, NULL) != CL_SUCCESS)
            return CL_INVALID_EVENT;
        if (queue != NULL)
            clFlush(queue);
    }
    for (cl_uint i = 0; i < n; i++) {
        cl_int status;

        do {
            if (clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS,
                               sizeof(status), &status, NULL) != CL_SUCCESS)
                return CL_INVALID_EVENT;
        } while (status > CL_COMPLETE);
        failed |= status < 0;
    }
    return failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS;
}

/* latecb_set_wait_completes: the user events of the list, set. */
static void
complete_user_events(cl_uint n, const cl_event *events)
{
    for (cl_uint i = 0; i < n; i++) {
        cl_command_type type;
        cl_int status;

        if (clGetEventInfo(events[i], CL_EVENT_COMMAND_TYPE, sizeof(type),
                           &type, NULL) == CL_SUCCESS &&
            type == CL_COMMAND_USER &&
            clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS,
                           sizeof(status), &status, NULL) == CL_SUCCESS &&
            status > CL_COMPLETE)
            clSetUserEventStatus(events[i], CL_COMPLETE);
    }
}

cl_int CL_API_CALL
clWaitForEvents(cl_uint n, const cl_event *events)
{
    cl_int err;

    pthread_once(&once, init);
    if (real_wait == NULL)
        return CL_INVALID_OPERATION;
    if (atomic_load(&wait_completes) && events != NULL)
        complete_user_events(n, events);
    atomic_fetch_add(&waiting, 1);
    if (atomic_load(&busy_wait) && n > 0 && events != NULL)
        err = busy_wait_for(n, events);
    else
        err = real_wait(n, events);
    atomic_fetch_sub(&waiting, 1);
    return err;
}

long
latecb_waiting(void)
{
    return atomic_load(&waiting);
}

void
latecb_set_busy_wait(int busy)
{
    pthread_once(&once, init);
    atomic_store(&busy_wait, busy);
}

void
latecb_set_wait_completes(int completes)
{
    atomic_store(&wait_completes, completes);
}

void
latecb_set_split_us(long us)
{
    pthread_once(&once, init);
    atomic_store(&split_us, us);
}

void
latecb_set_share(long percent)
{
    pthread_once(&once, init);
    atomic_store(&share, percent);
}

void
latecb_set_ms(long ms)
{
    pthread_once(&once, init);
    atomic_store(&delay_ms, ms);
}

long
latecb_held(void)
{
    return atomic_load(&held);
}

long
latecb_unmade(void)
{
    return atomic_load(&unmade);
}

long
latecb_delivered(void)
{
    return atomic_load(&delivered);
}

void
latecb_release(void)
{
    pthread_once(&once, init);
    pthread_mutex_lock(&lock);
    releasing++;
    pthread_cond_broadcast(&cond);
    while (atomic_load(&held) != 0)
        pthread_cond_wait(&cond, &lock);
    releasing--;
    pthread_mutex_unlock(&lock);
}
