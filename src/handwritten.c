/* The wrappers written by hand (gen/tables.py, HANDWRITTEN), in one
 * place: each has its command's signature, as the generated ones do, and
 * does what the generator cannot say. */

#include "next.h"

/* clSetUserEventStatus: PoCL
 * never calls back for a user event set to an error, so a failure set
 * through clgc wakes the waits and the watcher to look at once. A failure
 * set with the raw call is seen later: by a wait's own looks, and by the
 * watcher's slow scan (docs/wait.md). */
struct clgc__user_status {
    cl_event event;
    cl_int status;
    cl_int ret;
};

static void *
clgc__set_user_status(void *p)
{
    struct clgc__user_status *a = p;

    a->ret = CLGC__CL(clSetUserEventStatus)(a->event, a->status);
    return NULL;
}

cl_int CL_API_CALL
clgc_clSetUserEventStatus(cl_event event, cl_int execution_status)
{
    struct clgc__user_status a = {event, execution_status, CL_SUCCESS};

    if (!clgc__object_ok(event))
        return CL_INVALID_EVENT;
    /* In a region: PoCL runs the event's callbacks inline, and may block
     * (PoCL issue 1177). */
    clgc_call_safe(clgc__set_user_status, &a);
    if (a.ret == CL_SUCCESS && execution_status < 0) {
        clgc__wait_kick();
        clgc__watch_kick();
    }
    return a.ret;
}

/* clSetEventCallback: the callback is watched (callback.c), so that it
 * runs for a failure the driver never calls back for. */
cl_int CL_API_CALL
clgc_clSetEventCallback(
    cl_event event, cl_int command_exec_callback_type,
    void(CL_CALLBACK *pfn_notify)(cl_event event, cl_int event_command_status,
                                  void *user_data),
    void *user_data)
{
    struct clgc__set_event_callback a = {event, command_exec_callback_type,
                                         pfn_notify, user_data, CL_SUCCESS};

    if (!clgc__object_ok(event))
        return CL_INVALID_EVENT;
    /* In a region, as every wrapper: PoCL calls back inline for an event
     * that is complete, and the callback re-enters the runtime. */
    clgc_call_safe(clgc__set_event_callback, &a);
    return a.ret;
}
