/* Event status, flushing and outcome: a service at the bottom of the
 * library for the features that wait for events (wait.c, notify.c and the
 * watcher in watch.c), so that none of them borrows from another.
 *
 * Everything here is a plain OpenCL query on the calling thread, made
 * wherever the caller is (inside a safe region, for the waits). */

#include "internal.h"

cl_int
clgc__events_flush(cl_uint n, const cl_event *events)
{
    cl_command_queue last = NULL;
    cl_context context = NULL;

    for (cl_uint i = 0; i < n; i++) {
        cl_command_queue queue = NULL;
        cl_context c = NULL;

        if (clGetEventInfo(events[i], CL_EVENT_COMMAND_QUEUE, sizeof(queue),
                           &queue, NULL) != CL_SUCCESS)
            return CL_INVALID_EVENT;
        /* A queue belongs to one context: an event of the queue just
         * seen needs no query of its own. One event cannot disagree with
         * itself, so a single-event wait asks nothing more than it did. */
        if (n > 1 && (queue == NULL || queue != last)) {
            if (clGetEventInfo(events[i], CL_EVENT_CONTEXT, sizeof(c), &c,
                               NULL) != CL_SUCCESS)
                return CL_INVALID_EVENT;
            if (context != NULL && c != context)
                return CL_INVALID_CONTEXT;
            context = c;
        }
        if (queue != NULL && queue != last) {
            clFlush(queue);
            last = queue;
        }
    }
    return CL_SUCCESS;
}

cl_int
clgc__event_status(cl_event event)
{
    cl_int status = CL_QUEUED;

    if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
                       &status, NULL) != CL_SUCCESS)
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
