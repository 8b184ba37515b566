/* The cooperative wait (include/clgc/wait.h).
 *
 * The whole wait runs inside one safe region: flushing the events' queues
 * (PoCL's basic device runs commands inside clFlush), polling their status
 * for a short budget, then registering a completion callback on each and
 * sleeping on a futex until the last one fires. No lock is held while the
 * waiter wakes, so it never waits for the callback thread (the fault that
 * cost Julia's version 15-30% on short kernels).
 *
 * The record the callbacks share is a slot of a static pool, not the
 * waiter's stack frame: PoCL 3.1 never calls back for a user event that is
 * set to an error status, so a callback may come after its wait has
 * returned, or never. A slot is reference-counted by its waiter and every
 * callback registered on it, each dropping its reference as its last touch,
 * and returns to the pool at zero. The waiter also wakes now and then to
 * look at the events itself (clgc__sleep), so a callback that never comes
 * cannot hold it. A slot whose callback never comes stays taken; when
 * the pool is empty a wait falls back to the driver's clWaitForEvents. */

#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clgc/wait.h"
#include "internal.h"

/* No polling by default: on PoCL's CPU device the callback path alone
 * already waits less than clWaitForEvents, at no more CPU; polling 50 us
 * cuts small-kernel latency further but costs the waiter 1.3x to 1.7x the
 * raw wait's CPU (clgc-bench wait, docs/wait.md). */
#define CLGC__DEFAULT_POLL_NS 0L

static atomic_int clgc__wait_mode = CLGC_WAIT_COOPERATIVE;
static atomic_long clgc__poll_ns = CLGC__DEFAULT_POLL_NS;
static pthread_once_t clgc__wait_env_once = PTHREAD_ONCE_INIT;
static __thread clgc_wait_path_t clgc__last_path;

/* A wait's record, shared with its callbacks. */
struct clgc__wait_slot {
    unsigned refs;    /* the waiter's, and one per registered callback */
    unsigned pending; /* callbacks to come, plus one held by the waiter */
    int fired;        /* futex word: the last callback has run */
};

/* More waits than can be in progress at once in any program. */
#define CLGC__WAIT_SLOTS 512
static struct clgc__wait_slot clgc__slots[CLGC__WAIT_SLOTS];
static __thread unsigned clgc__slot_hint;

/* When a sleeping waiter first looks at its events itself, and how far
 * apart its looks grow. */
#define CLGC__RECHECK_NS 100000000L
#define CLGC__RECHECK_MAX_NS 1600000000L

struct clgc__wait_args {
    cl_uint n;
    const cl_event *events;
    cl_int ret;
};

static void
clgc__wait_env(void)
{
    const char *mode = getenv("CLGC_WAIT");
    const char *poll = getenv("CLGC_WAIT_POLL_NS");
    char *end;
    long ns;

    if (mode != NULL && strcmp(mode, "blocking") == 0)
        atomic_store(&clgc__wait_mode, CLGC_WAIT_BLOCKING);
    if (poll != NULL) {
        ns = strtol(poll, &end, 10);
        if (*poll != '\0' && *end == '\0' && ns >= 0)
            atomic_store(&clgc__poll_ns, ns);
    }
}

int
clgc_wait_set_mode(clgc_wait_mode_t mode)
{
    if (mode != CLGC_WAIT_COOPERATIVE && mode != CLGC_WAIT_BLOCKING)
        return CLGC_EINVAL;
    pthread_once(&clgc__wait_env_once, clgc__wait_env);
    atomic_store(&clgc__wait_mode, mode);
    return CLGC_OK;
}

int
clgc_wait_set_poll_ns(long ns)
{
    if (ns < 0)
        return CLGC_EINVAL;
    pthread_once(&clgc__wait_env_once, clgc__wait_env);
    atomic_store(&clgc__poll_ns, ns);
    return CLGC_OK;
}

long
clgc_wait_get_poll_ns(void)
{
    pthread_once(&clgc__wait_env_once, clgc__wait_env);
    return atomic_load(&clgc__poll_ns);
}

clgc_wait_path_t
clgc_wait_last_path(void)
{
    return clgc__last_path;
}

static long
clgc__now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* PoCL runs this on its own thread, or inline in clSetEventCallback when
 * the event is already complete. It is told CL_COMPLETE even when the
 * command failed: the waiter reads the real status afterwards. */
static void CL_CALLBACK
clgc__wait_fired(cl_event event, cl_int status, void *p)
{
    struct clgc__wait_slot *w = p;

    (void)event;
    (void)status;
    if (__atomic_sub_fetch(&w->pending, 1, __ATOMIC_ACQ_REL) == 0) {
        __atomic_store_n(&w->fired, 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &w->fired, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    /* The last touch: at zero the slot may be taken by another wait. */
    __atomic_sub_fetch(&w->refs, 1, __ATOMIC_RELEASE);
}

/* A free slot, or NULL when every slot is taken. */
static struct clgc__wait_slot *
clgc__slot_take(void)
{
    for (unsigned i = 0; i < CLGC__WAIT_SLOTS; i++) {
        unsigned k = (clgc__slot_hint + i) % CLGC__WAIT_SLOTS;
        struct clgc__wait_slot *w = &clgc__slots[k];
        unsigned none = 0;

        if (__atomic_compare_exchange_n(&w->refs, &none, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
            clgc__slot_hint = k;
            w->fired = 0;
            return w;
        }
    }
    return NULL;
}

/* Flush each event's queue once: clSetEventCallback does not flush, and a
 * command nobody flushed may never start. User events have no queue. */
void
clgc__flush_queues(cl_uint n, const cl_event *events)
{
    cl_command_queue last = NULL;

    for (cl_uint i = 0; i < n; i++) {
        cl_command_queue queue = NULL;

        if (clGetEventInfo(events[i], CL_EVENT_COMMAND_QUEUE, sizeof(queue),
                           &queue, NULL) == CL_SUCCESS &&
            queue != NULL && queue != last) {
            clFlush(queue);
            last = queue;
        }
    }
}

/* 1 when every event is complete or failed. */
static int
clgc__all_done(cl_uint n, const cl_event *events)
{
    for (cl_uint i = 0; i < n; i++) {
        cl_int status = CL_QUEUED;

        if (clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS,
                           sizeof(status), &status, NULL) != CL_SUCCESS)
            return 1; /* cannot tell: the caller asks the driver to wait */
        if (status > CL_COMPLETE)
            return 0;
    }
    return 1;
}

/* clWaitForEvents' result from the events' final status. */
static cl_int
clgc__outcome(cl_uint n, const cl_event *events)
{
    for (cl_uint i = 0; i < n; i++) {
        cl_int status = CL_QUEUED;

        if (clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS,
                           sizeof(status), &status, NULL) != CL_SUCCESS ||
            status < 0)
            return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    }
    return CL_SUCCESS;
}

static int
clgc__poll(cl_uint n, const cl_event *events, long budget)
{
    long deadline = clgc__now_ns() + budget;

    do {
        if (clgc__all_done(n, events))
            return 1;
    } while (clgc__now_ns() < deadline);
    return 0;
}

/* Sleep until the last callback has fired, or the events are all done
 * without it. The waiter looks at the events itself after 100 ms, then at
 * doubling intervals up to 1.6 s: a wait wakes a handful of times at most
 * (each wakeup cost a 100 ms wait as much CPU as the raw wait's whole
 * spend, with 10 ms), and a failure PoCL does not call back for is seen
 * within 100 ms or the time waited so far. */
static void
clgc__sleep(struct clgc__wait_slot *w, cl_uint n, const cl_event *events)
{
    long interval = CLGC__RECHECK_NS;

    while (!__atomic_load_n(&w->fired, __ATOMIC_ACQUIRE)) {
        struct timespec recheck = {interval / 1000000000L,
                                   interval % 1000000000L};

        syscall(SYS_futex, &w->fired, FUTEX_WAIT_PRIVATE, 0, &recheck, NULL, 0);
        if (!__atomic_load_n(&w->fired, __ATOMIC_ACQUIRE) &&
            clgc__all_done(n, events))
            return;
        if (interval < CLGC__RECHECK_MAX_NS)
            interval *= 2;
    }
}

/* Register a callback on every event and sleep until they are done.
 * Returns 0 if there was no slot or some event refused the callback: the
 * caller then falls back to the driver's wait. */
static int
clgc__sleep_until_fired(cl_uint n, const cl_event *events)
{
    struct clgc__wait_slot *w = clgc__slot_take();
    int all_registered = 1;

    if (w == NULL)
        return 0;
    __atomic_store_n(&w->pending, n + 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&w->refs, n, __ATOMIC_RELAXED);
    for (cl_uint i = 0; i < n; i++) {
        if (clSetEventCallback(events[i], CL_COMPLETE, clgc__wait_fired, w) !=
            CL_SUCCESS) {
            __atomic_sub_fetch(&w->pending, 1, __ATOMIC_ACQ_REL);
            __atomic_sub_fetch(&w->refs, 1, __ATOMIC_RELEASE);
            all_registered = 0;
        }
    }
    /* The waiter's own share: if it is the last, every callback has
     * already fired. */
    if (__atomic_sub_fetch(&w->pending, 1, __ATOMIC_ACQ_REL) != 0 &&
        all_registered)
        clgc__sleep(w, n, events);
    __atomic_sub_fetch(&w->refs, 1, __ATOMIC_RELEASE);
    return all_registered;
}

static void *
clgc__wait_body(void *p)
{
    struct clgc__wait_args *a = p;

    clgc__flush_queues(a->n, a->events);
    if (clgc__poll(a->n, a->events, atomic_load(&clgc__poll_ns))) {
        clgc__last_path = CLGC_WAIT_PATH_POLL;
    } else if (clgc__sleep_until_fired(a->n, a->events)) {
        clgc__last_path = CLGC_WAIT_PATH_CALLBACK;
    } else {
        clWaitForEvents(a->n, a->events);
        clgc__last_path = CLGC_WAIT_PATH_BLOCKING;
    }
    a->ret = clgc__outcome(a->n, a->events);
    return NULL;
}

cl_int
clgc_wait_for_events(cl_uint num_events, const cl_event *event_list)
{
    struct clgc__wait_args a = {num_events, event_list, CL_SUCCESS};

    if (num_events == 0 || event_list == NULL)
        return CL_INVALID_VALUE;
    for (cl_uint i = 0; i < num_events; i++)
        if (event_list[i] == NULL || !clgc__object_ok(event_list[i]))
            return CL_INVALID_EVENT;
    pthread_once(&clgc__wait_env_once, clgc__wait_env);
    if (atomic_load(&clgc__wait_mode) == CLGC_WAIT_BLOCKING) {
        clgc__last_path = CLGC_WAIT_PATH_BLOCKING;
        a.ret = clgc_clWaitForEvents(num_events, event_list);
    } else {
        clgc_call_safe(clgc__wait_body, &a);
    }
    clgc__hand_errors();
    return a.ret;
}
