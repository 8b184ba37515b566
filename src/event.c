/* Event status, flushing and outcome: a service at the bottom of the
 * library for the features that wait for events (wait.c, notify.c and the
 * watcher in watch.c), so that none of them borrows from another.
 *
 * Everything here is a plain OpenCL query on the calling thread, made
 * wherever the caller is (inside a safe region, for the waits). */

#include "next.h"

/* Whether a command still waits for a flush: it is queued, not yet
 * submitted. Only then is its queue flushed, and it is asked first, for
 * the queue may be gone: OpenCL deletes a released queue once its
 * commands have finished (Oclgrind frees it then) while their events
 * keep naming it, and a command that has not finished keeps its queue.
 * A command past CL_QUEUED needs no flush. */
static int
clgc__needs_flush(cl_event event, cl_int *err)
{
    cl_int status = CL_QUEUED;

    *err = CLGC__CL(clGetEventInfo)(event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                    sizeof(status), &status, NULL);
    return *err == CL_SUCCESS && status == CL_QUEUED;
}

cl_int
clgc__events_flush(cl_uint n, const cl_event *events, int *user)
{
    cl_command_queue seen = NULL, flushed = NULL;
    cl_context context = NULL;

    if (user != NULL)
        *user = 0;
    for (cl_uint i = 0; i < n; i++) {
        cl_command_queue queue = NULL;
        cl_context c = NULL;
        cl_int err;
        int queued = clgc__needs_flush(events[i], &err);

        /* The queue's handle is compared, never used, unless queued. */
        if (err != CL_SUCCESS ||
            CLGC__CL(clGetEventInfo)(events[i], CL_EVENT_COMMAND_QUEUE,
                                     sizeof(queue), &queue, NULL) != CL_SUCCESS)
            return CL_INVALID_EVENT;
        if (queue == NULL && user != NULL)
            *user = 1;
        /* A queue belongs to one context: an event of the queue just
         * seen needs no query of its own. One event cannot disagree with
         * itself, so a single-event wait asks nothing more than it did. */
        if (n > 1 && (queue == NULL || queue != seen)) {
            if (CLGC__CL(clGetEventInfo)(events[i], CL_EVENT_CONTEXT, sizeof(c),
                                         &c, NULL) != CL_SUCCESS)
                return CL_INVALID_EVENT;
            if (context != NULL && c != context)
                return CL_INVALID_CONTEXT;
            context = c;
        }
        seen = queue;
        if (queued && queue != NULL && queue != flushed) {
            CLGC__CL(clFlush)(queue);
            flushed = queue;
        }
    }
    return CL_SUCCESS;
}

int
clgc__event_is_user(cl_event event)
{
    cl_command_queue queue = NULL;

    return CLGC__CL(clGetEventInfo)(event, CL_EVENT_COMMAND_QUEUE,
                                    sizeof(queue), &queue,
                                    NULL) == CL_SUCCESS &&
           queue == NULL;
}

cl_int
clgc__event_status(cl_event event)
{
    cl_int status = CL_QUEUED;

    if (CLGC__CL(clGetEventInfo)(event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                 sizeof(status), &status, NULL) != CL_SUCCESS)
        return CL_INVALID_EVENT;
    return status;
}

int
clgc__events_done(cl_uint n, const cl_event *events)
{
    for (cl_uint i = 0; i < n; i++)
        if (clgc__event_status(events[i]) > CL_COMPLETE)
            return 0;
    return 1;
}

cl_int
clgc__events_outcome(cl_uint n, const cl_event *events)
{
    for (cl_uint i = 0; i < n; i++)
        if (clgc__event_status(events[i]) < 0)
            return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    return CL_SUCCESS;
}
