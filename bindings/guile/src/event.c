/* Waits that wake for Guile's asyncs, events and their callbacks, and
 * completion queues. */

#include <libguile.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <unistd.h>

#include "guile-clgc.h"

/* Waits that wake for Guile's asyncs.
 *
 * A wait sleeps in scm_std_select (outside Guile mode, as any crossing) on
 * an eventfd of its own, which clgc_event_notify handlers (RAW: they only
 * count down and write) make readable when the last event completes, and
 * on the thread's sleep pipe, which system-async-mark writes to: a SIGINT
 * handler, cancel-thread or any async wakes it; it runs the asyncs
 * (scm_async_tick) and goes on waiting, as sleep does. Once every event
 * has completed clgc_wait_for_events gives their status at once.
 *
 * The memory-safety rule: an async that raises (or cancel-thread) unwinds
 * out of the wait at once, while the commands go on. What they still use
 * stays alive until they complete: OpenCL keeps the events and the memory
 * objects of their commands, and what the binding gave them (a
 * transfer's bytevector) is protected from the collector until its
 * command completes. The waiter becomes an orphan; the next wait on any
 * thread unprotects the orphans whose commands have completed. */
struct waiter {
    atomic_int refs;    /* the waiting thread (or the orphan list) + handlers */
    atomic_int pending; /* events still to complete */
    int fd;   /* an eventfd, readable once pending is 0; -1 for none */
    SCM keep; /* protected until the commands complete, or #f */
    struct waiter *next_orphan;
};

static pthread_mutex_t orphan_lock = PTHREAD_MUTEX_INITIALIZER;
static struct waiter *orphans;

static void
waiter_unref(struct waiter *w)
{
    if (atomic_fetch_sub(&w->refs, 1) == 1) {
        if (w->fd >= 0)
            close(w->fd);
        free(w);
    }
}

/* A completion, on whichever thread sees it: no runtime, no Guile. */
static void CL_CALLBACK
waiter_notify(cl_event event, cl_int status, void *data)
{
    struct waiter *w = data;
    uint64_t one = 1;

    (void)event;
    (void)status;
    if (atomic_fetch_sub(&w->pending, 1) == 1 && w->fd >= 0 &&
        write(w->fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
        abort(); /* an eventfd write of 1 cannot fail */
    waiter_unref(w);
}

/* The waiting thread left early (an async raised): hand its reference to
 * the orphan list, which keeps w->keep protected until pending is 0. */
static void
waiter_orphan(void *data)
{
    struct waiter *w = data;

    pthread_mutex_lock(&orphan_lock);
    w->next_orphan = orphans;
    orphans = w;
    pthread_mutex_unlock(&orphan_lock);
}

/* Unprotect and drop the orphans whose commands have completed. Guile
 * mode. */
static void
sweep_orphans(void)
{
    struct waiter *done = NULL, **pw;

    pthread_mutex_lock(&orphan_lock);
    for (pw = &orphans; *pw != NULL;) {
        struct waiter *w = *pw;

        if (atomic_load(&w->pending) == 0) {
            *pw = w->next_orphan;
            w->next_orphan = done;
            done = w;
        } else {
            pw = &w->next_orphan;
        }
    }
    pthread_mutex_unlock(&orphan_lock);
    while (done != NULL) {
        struct waiter *w = done;

        done = w->next_orphan;
        if (scm_is_true(w->keep))
            scm_gc_unprotect_object(w->keep);
        waiter_unref(w);
    }
}

/* Wait for n events, running Guile's asyncs meanwhile (see above); keep
 * (or #f) stays protected until the commands complete, however the wait
 * ends. Returns clgc_wait_for_events's code. With the regions off, the
 * wait is clgc_wait_for_events in Guile mode, as before. */
cl_int
guile_clgc_interruptible_wait(cl_uint n, cl_event *events, SCM keep)
{
    struct waiter *w;
    cl_int err;

    sweep_orphans();
    w = guile_clgc_regions() ? calloc(1, sizeof(*w)) : NULL;
    if (w != NULL && (w->fd = eventfd(0, EFD_CLOEXEC)) < 0) {
        free(w);
        w = NULL;
    }
    if (w != NULL) {
        atomic_init(&w->refs, 1);
        atomic_init(&w->pending, (int)n);
        w->keep = SCM_BOOL_F;
        for (cl_uint i = 0; i < n; i++) {
            atomic_fetch_add(&w->refs, 1);
            if (clgc_event_notify(events[i], CLGC_NOTIFY_RAW, waiter_notify,
                                  w) != CL_SUCCESS)
                waiter_notify(events[i], 0, w); /* wait's error says why */
        }
        if (scm_is_true(keep)) {
            scm_gc_protect_object(keep);
            w->keep = keep;
        }
        scm_dynwind_begin(0);
        scm_dynwind_unwind_handler(waiter_orphan, w, 0);
        while (atomic_load(&w->pending) > 0) {
            fd_set r;
            int rc;

            FD_ZERO(&r);
            FD_SET(w->fd, &r);
            rc = scm_std_select(w->fd + 1, &r, NULL, NULL, NULL);
            if (rc < 0 && errno == EINTR)
                scm_async_tick(); /* may unwind: waiter_orphan */
            else if (rc < 0)
                break; /* clgc_wait_for_events waits instead */
        }
        scm_dynwind_end();
        if (scm_is_true(w->keep))
            scm_gc_unprotect_object(w->keep);
        w->keep = SCM_BOOL_F;
        waiter_unref(w);
    }
    err = clgc_wait_for_events(n, events);
    guile_clgc_signals_restore();
    scm_remember_upto_here_1(keep);
    return err;
}

/* keep (what a non-blocking command reads or writes: a bytevector) stays
 * protected until event completes: an orphan from the start, unprotected
 * by a later wait, drain or non-blocking command once it has. Without
 * memory for that, the command is waited for here instead. Guile mode. */
void
guile_clgc_keep_until_complete(cl_event event, SCM keep)
{
    struct waiter *w;

    sweep_orphans();
    w = calloc(1, sizeof(*w));
    if (w == NULL) {
        guile_clgc_interruptible_wait(1, &event, keep);
        return;
    }
    w->fd = -1;
    atomic_init(&w->refs, 2); /* the orphan list, the handler */
    atomic_init(&w->pending, 1);
    w->keep = scm_gc_protect_object(keep);
    waiter_orphan(w);
    if (clgc_event_notify(event, CLGC_NOTIFY_RAW, waiter_notify, w) !=
        CL_SUCCESS)
        waiter_notify(event, 0, w); /* a bad event: nothing runs */
}

static void
release_event(void *ev)
{
    clgc_clReleaseEvent(ev);
}

SCM
guile_clgc_transfer_done(cl_event ev, SCM bv, int block, const char *who)
{
    cl_int err;

    if (!block) {
        SCM event = guile_clgc_wrap(K_EVENT, ev);

        guile_clgc_keep_until_complete(ev, bv);
        return event;
    }
    scm_dynwind_begin(0);
    scm_dynwind_unwind_handler(release_event, ev, SCM_F_WIND_EXPLICITLY);
    err = guile_clgc_interruptible_wait(1, &ev, bv);
    scm_dynwind_end();
    scm_remember_upto_here_1(bv);
    guile_clgc_raise_pending();
    CHECK_CL(err, who);
    return bv;
}

static SCM
wait_for_events_body(SCM events)
{
    cl_uint n;
    void *buf[16];
    void **e = guile_clgc_handle_array(K_EVENT, events, 1, "wait-for-events",
                                       &n, buf, 16);
    cl_int err;

    if (n == 0) {
        guile_clgc_raise_error("CL_INVALID_VALUE", CL_INVALID_VALUE,
                               "wait-for-events", SCM_BOOL_F, SCM_BOOL_F,
                               "no events");
    }
    scm_dynwind_begin(0);
    if (e != buf)
        scm_dynwind_free(e);
    err = guile_clgc_interruptible_wait(n, (cl_event *)e, SCM_BOOL_F);
    scm_dynwind_end();
    scm_remember_upto_here_1(events);
    guile_clgc_raise_pending();
    CHECK_CL(err, "wait-for-events");
    return SCM_UNSPECIFIED;
}
GUILE_CLGC_HELD1(wait_for_events)

/* ------------------------------------------------------------------------
 * Events */

/* An execution status as event-status and the event callbacks give it:
 * complete running submitted queued, or the negative error code. */
static SCM
status_scm(cl_int s)
{
    switch (s) {
    case CL_COMPLETE:
        return scm_from_utf8_symbol("complete");
    case CL_RUNNING:
        return scm_from_utf8_symbol("running");
    case CL_SUBMITTED:
        return scm_from_utf8_symbol("submitted");
    case CL_QUEUED:
        return scm_from_utf8_symbol("queued");
    default:
        return scm_from_int32(s);
    }
}

static SCM
event_status_body(SCM event)
{
    cl_int s = 0;

    CHECK_CL(clgc_clGetEventInfo(
                 guile_clgc_unwrap(K_EVENT, event, 1, "event-status"),
                 CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(s), &s, NULL),
             "event-status");
    return status_scm(s);
}
GUILE_CLGC_HELD1(event_status)

static SCM
make_user_event_body(SCM context)
{
    cl_int err = CL_SUCCESS;
    cl_event e = clgc_clCreateUserEvent(
        guile_clgc_unwrap(K_CONTEXT, context, 1, "make-user-event"), &err);

    CHECK_CL(err, "make-user-event");
    return guile_clgc_wrap(K_EVENT, e);
}
GUILE_CLGC_HELD1(make_user_event)

/* status: 'complete or a negative error code. */
static SCM
set_user_event_status_body(SCM event, SCM status)
{
    void *e = guile_clgc_unwrap(K_EVENT, event, 1, "set-user-event-status!");
    cl_int s;

    if (scm_is_symbol(status) && guile_clgc_sym_is(status, "complete"))
        s = CL_COMPLETE;
    else
        s = (cl_int)guile_clgc_to_signed(status, INT32_MIN, INT32_MAX, 2,
                                         "set-user-event-status!");
    CHECK_CL(clgc_clSetUserEventStatus(e, s), "set-user-event-status!");
    return SCM_UNSPECIFIED;
}
GUILE_CLGC_HELD2(set_user_event_status)

static void CL_CALLBACK
event_notify(cl_event event, cl_int status, void *data)
{
    SCM pair = SCM_PACK_POINTER(data);

    (void)event;
    guile_clgc_call_scheme(scm_car(pair),
                           scm_list_2(scm_cdr(pair), status_scm(status)));
}

/* (set-event-callback! event proc [completion-queue]): proc gets (event
 * status) once the event completes or fails, on PoCL's thread with Guile
 * entered, or in a drain of the completion queue when one is given. */
static SCM
set_event_callback_body(SCM event, SCM proc, SCM cq)
{
    const char *who = "set-event-callback!";
    void *e = guile_clgc_unwrap(K_EVENT, event, 1, who);
    clgc_queue_t *q = NULL, *before = NULL;
    SCM pair;
    cl_int err;

    if (scm_is_false(scm_procedure_p(proc)))
        scm_wrong_type_arg_msg(who, 2, proc, "procedure");
    if (!SCM_UNBNDP(cq) && scm_is_true(cq))
        q = guile_clgc_unwrap(K_CQ, cq, 3, who);
    pair = scm_cons(proc, event);
    if (q != NULL) {
        before = clgc_callbacks_deferred_to();
        if (clgc_callbacks_defer(q) != CLGC_OK)
            guile_clgc_raise_clgc(CLGC_ENOMEM, who);
    }
    err = clgc_clSetEventCallback(e, CL_COMPLETE, event_notify,
                                  SCM_UNPACK_POINTER(pair));
    if (q != NULL)
        clgc_callbacks_defer(before);
    scm_remember_upto_here_1(pair);
    CHECK_CL(err, who);
    return SCM_UNSPECIFIED;
}
GUILE_CLGC_HELD3(set_event_callback)

/* ------------------------------------------------------------------------
 * Completion queues */

static SCM
make_completion_queue_body(void)
{
    clgc_queue_t *q = NULL;
    int err = clgc_queue_create(&q);

    if (err != CLGC_OK)
        guile_clgc_raise_clgc(err, "make-completion-queue");
    return guile_clgc_wrap(K_CQ, q);
}
GUILE_CLGC_HELD0(make_completion_queue)

static SCM
completion_queue_fd_body(SCM cq)
{
    return scm_from_int(
        clgc_queue_fd(guile_clgc_unwrap(K_CQ, cq, 1, "completion-queue-fd")));
}
GUILE_CLGC_HELD1(completion_queue_fd)

static SCM
drain_body(SCM cq, SCM max)
{
    clgc_queue_t *q = guile_clgc_unwrap(K_CQ, cq, 1, "drain!");
    unsigned m =
        SCM_UNBNDP(max)
            ? 0
            : (unsigned)guile_clgc_to_unsigned(max, UINT_MAX, 2, "drain!");
    int n = clgc_queue_drain(q, m);

    sweep_orphans();
    guile_clgc_raise_pending();
    if (n < 0)
        guile_clgc_raise_clgc(n, "drain!");
    return scm_from_int(n);
}
GUILE_CLGC_HELD2(drain)

const struct guile_clgc_proc guile_clgc_event_procs[] = {
    {"wait-for-events", 1, 0, 0, wait_for_events,
     "(wait-for-events events) returns once every event of the list is "
     "complete, outside Guile mode, running Guile's asyncs as they come; "
     "raises a failed command's error."},
    {"event-status", 1, 0, 0, event_status,
     "(event-status event) -> complete, running, submitted, queued, or a "
     "negative error code."},
    {"make-user-event", 1, 0, 0, make_user_event,
     "(make-user-event context) -> a user cl-event, set with "
     "set-user-event-status!."},
    {"set-user-event-status!", 2, 0, 0, set_user_event_status,
     "(set-user-event-status! event status) sets a user event's status: "
     "'complete or a negative error code."},
    {"set-event-callback!", 2, 1, 0, set_event_callback,
     "(set-event-callback! event proc [completion-queue]) calls (proc event "
     "status) once the event completes or fails, on OpenCL's thread, or in a "
     "drain! of completion-queue."},
    {"make-completion-queue", 0, 0, 0, make_completion_queue,
     "(make-completion-queue) -> a completion queue for deferred callbacks, "
     "drained with drain!."},
    {"%completion-queue-fd", 1, 0, 0, completion_queue_fd,
     "(%completion-queue-fd cq) -> the queue's eventfd (internal: use "
     "completion-queue-port)."},
    {"drain!", 1, 1, 0, drain,
     "(drain! cq [max]) runs up to max (default all) pending callbacks of cq "
     "on this thread and returns how many ran."},
    {NULL, 0, 0, 0, NULL, NULL}};
