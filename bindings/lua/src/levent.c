/* Events: NDRange launches, markers, user events, status and profiling,
 * blocking waits, completions posted to the state's queue, and event
 * callbacks deferred to it. */

#include <stdlib.h>
#include <string.h>

#include "lclgc.h"

/* An Event, or a table of them, or nil, as an array in a userdata pushed
 * on the stack (the collector frees it). */
cl_event *
lclgc_check_events(lua_State *L, int idx, cl_uint *n, const char *fn)
{
    cl_event *evs;

    idx = lua_absindex(L, idx);
    if (lua_isnoneornil(L, idx)) {
        *n = 0;
        lua_pushnil(L); /* the same stack effect, without an allocation */
        return NULL;
    }
    if (luaL_testudata(L, idx, LCLGC_EVENT) != NULL) {
        evs = lua_newuserdatauv(L, sizeof(*evs), 0);
        evs[0] = lclgc_check(L, idx, LCLGC_EVENT, fn);
        *n = 1;
        return evs;
    }
    if (!lua_istable(L, idx))
        lclgc_error(L, "%s: %s or a table of them expected, got %s", fn,
                    LCLGC_EVENT, lclgc_typename(L, idx));
    *n = (cl_uint)lclgc_rawlen(L, idx, fn);
    evs = lua_newuserdatauv(L, (*n + 1) * sizeof(*evs), 0);
    for (cl_uint i = 0; i < *n; i++) {
        lua_rawgeti(L, idx, i + 1);
        evs[i] = lclgc_check(L, -1, LCLGC_EVENT, fn);
        lua_pop(L, 1);
    }
    return *n > 0 ? evs : NULL;
}

/* 1 to 3 sizes: a number or a table of numbers. */
static cl_uint
lclgc_check_sizes(lua_State *L, int idx, size_t out[3], const char *fn,
                  const char *what)
{
    cl_uint n;

    if (lua_type(L, idx) == LUA_TNUMBER) {
        int isint;
        lua_Integer v = lua_tointegerx(L, idx, &isint);

        /* Named by what it is: an option's value has no argument number
         * of its own. */
        if (!isint || v < 0)
            lclgc_error(L, "%s: %s size: a non-negative integer expected", fn,
                        what);
        out[0] = (size_t)v;
        return 1;
    }
    if (!lua_istable(L, idx))
        lclgc_error(L, "%s: %s size: number or table expected, got %s", fn,
                    what, lclgc_typename(L, idx));
    n = (cl_uint)lclgc_rawlen(L, idx, fn);
    if (n < 1 || n > 3)
        lclgc_fail(L, fn, CL_INVALID_WORK_DIMENSION,
                   "CL_INVALID_WORK_DIMENSION", NULL,
                   "%s size has %d dimensions", what, (int)n);
    for (cl_uint i = 0; i < n; i++) {
        int isint;
        lua_Integer v;

        lua_rawgeti(L, idx, i + 1);
        v = lua_tointegerx(L, -1, &isint);
        if (!isint || v < 0)
            lclgc_error(L, "%s: %s size: non-negative integers expected", fn,
                        what);
        out[i] = (size_t)v;
        lua_pop(L, 1);
    }
    return n;
}

/* Queue:launch(kernel, global [, local | {local=, offset=, wait=}]) ->
 * Event */
static int
lclgc_queue_launch(lua_State *L)
{
    const char *fn = "clgc.Queue:launch";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_kernel k = lclgc_check(L, 2, LCLGC_KERNEL, fn);
    size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1}, offset[3] = {0, 0, 0};
    cl_uint dims = lclgc_check_sizes(L, 3, global, fn, "global"), ld = 0,
            od = 0, nwait = 0;
    cl_event *wait = NULL, ev = NULL;
    cl_int err;

    if (lua_type(L, 4) == LUA_TNUMBER) {
        ld = lclgc_check_sizes(L, 4, local, fn, "local");
    } else if (!lua_isnoneornil(L, 4)) {
        lclgc_checktype(L, 4, LUA_TTABLE, fn);
        if (lua_getfield(L, 4, "local") != LUA_TNIL)
            ld = lclgc_check_sizes(L, lua_gettop(L), local, fn, "local");
        lua_pop(L, 1);
        if (lua_getfield(L, 4, "offset") != LUA_TNIL)
            od = lclgc_check_sizes(L, lua_gettop(L), offset, fn, "offset");
        lua_pop(L, 1);
        lua_getfield(L, 4, "wait");
        wait = lclgc_check_events(L, -1, &nwait, fn);
    }
    if ((ld != 0 && ld != dims) || (od != 0 && od != dims))
        return lclgc_fail(
            L, fn, CL_INVALID_WORK_DIMENSION, "CL_INVALID_WORK_DIMENSION", NULL,
            "global, local and offset sizes differ in dimensions");
    /* A local size of 0 reaches PoCL's division (SIGFPE in OCaml's). */
    for (cl_uint i = 0; i < ld; i++)
        if (local[i] == 0)
            return lclgc_error(L, "%s: local size: positive integers expected",
                               fn);
    lclgc_kernel_ready(L, 2, k, fn);
    err = clgc_clEnqueueNDRangeKernel(q, k, dims, od ? offset : NULL, global,
                                      ld ? local : NULL, nwait, wait, &ev);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_EVENT, ev);
    return 1;
}

/* Queue:marker([events]) -> Event */
static int
lclgc_queue_marker(lua_State *L)
{
    const char *fn = "clgc.Queue:marker";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_uint n;
    cl_event *wait = lclgc_check_events(L, 2, &n, fn), ev = NULL;
    cl_int err = clgc_clEnqueueMarkerWithWaitList(q, n, wait, &ev);

    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_EVENT, ev);
    return 1;
}

/* user_event(context) -> Event */
static int
lclgc_user_event(lua_State *L)
{
    const char *fn = "clgc.user_event";
    cl_context c = lclgc_check(L, 1, LCLGC_CONTEXT, fn);
    cl_int err = CL_SUCCESS;
    cl_event ev = clgc_clCreateUserEvent(c, &err);

    if (ev == NULL)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_EVENT, ev);
    return 1;
}

/* Event:set_status("complete" | negative error code) */
static int
lclgc_event_set_status(lua_State *L)
{
    const char *fn = "clgc.Event:set_status";
    cl_event ev = lclgc_check(L, 1, LCLGC_EVENT, fn);
    cl_int status;
    cl_int err;

    if (lua_type(L, 2) == LUA_TSTRING) {
        if (strcmp(lua_tostring(L, 2), "complete") != 0)
            return lclgc_error(L, "%s: 'complete' or a negative code expected",
                               fn);
        status = CL_COMPLETE;
    } else {
        lua_Integer s = lclgc_checkint(L, 2, fn);

        if (s > 0 || s < -0x7fffffff)
            return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                              "status %I", s);
        status = (cl_int)s;
    }
    err = clgc_clSetUserEventStatus(ev, status);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    return 0;
}

static const char *
lclgc_status_name(cl_int s)
{
    switch (s) {
    case CL_COMPLETE:
        return "complete";
    case CL_RUNNING:
        return "running";
    case CL_SUBMITTED:
        return "submitted";
    case CL_QUEUED:
        return "queued";
    }
    return lclgc_cl_name(s);
}

/* Event:status() -> code, name: 0 "complete", 1 "running", ..., or the
 * negative error of a failed command. */
static int
lclgc_event_status(lua_State *L)
{
    const char *fn = "clgc.Event:status";
    cl_event ev = lclgc_check(L, 1, LCLGC_EVENT, fn);
    cl_int s = 0;
    cl_int err = clgc_clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                     sizeof(s), &s, NULL);

    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lua_pushinteger(L, s);
    lua_pushstring(L, lclgc_status_name(s));
    return 2;
}

/* Event:profile("queued" | "submit" | "start" | "end" | "complete") -> ns */
static int
lclgc_event_profile(lua_State *L)
{
    static const char *const names[] = {"queued", "submit",   "start",
                                        "end",    "complete", NULL};
    static const cl_profiling_info params[] = {
        CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
        CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END,
        CL_PROFILING_COMMAND_COMPLETE};
    const char *fn = "clgc.Event:profile";
    cl_event ev = lclgc_check(L, 1, LCLGC_EVENT, fn);
    cl_profiling_info p = params[lclgc_checkopt(L, 2, NULL, names, fn)];
    cl_ulong t = 0;
    cl_int err = clgc_clGetEventProfilingInfo(ev, p, sizeof(t), &t, NULL);

    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lua_pushinteger(L, (lua_Integer)t);
    return 1;
}

/* wait(events): block this thread until they are done, through
 * clgc_wait_for_events (GC-safe), then run the handlers that came in
 * meanwhile and raise a handler's failure or the events' error. */
static int
lclgc_wait(lua_State *L)
{
    const char *fn = "clgc.wait";
    lclgc_state *st = lclgc_state_get(L);
    cl_uint n;
    cl_event *evs, one;
    cl_int err;

    if (lua_gettop(L) == 1 && luaL_testudata(L, 1, LCLGC_EVENT) != NULL) {
        /* The common case, one event: no array to allocate. */
        one = lclgc_check(L, 1, LCLGC_EVENT, fn);
        err = clgc_wait_for_events(1, &one);
        goto waited;
    }
    if (lua_gettop(L) > 1) { /* wait(e1, e2, ...): make it a table */
        int top = lua_gettop(L);

        lua_createtable(L, top, 0);
        for (int i = 1; i <= top; i++) {
            lua_pushvalue(L, i);
            lua_rawseti(L, -2, i);
        }
        lua_replace(L, 1);
        lua_settop(L, 1);
    }
    if (lua_isnoneornil(L, 1))
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "no events");
    evs = lclgc_check_events(L, 1, &n, fn);
    if (n == 0)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "no events");
    err = clgc_wait_for_events(n, evs);
waited:
    /* Run what came in meanwhile, unless nothing of ours can be in the
     * queue (a drain costs a system call), or this is a handler's wait
     * (its drain goes on after it). */
    if (lclgc_state_pending(st) && !lclgc_is_draining(L))
        (void)lclgc_drain(L, 0, fn);
    lclgc_raise_failures(L, fn);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    return 0;
}

/* The event callback, deferred: runs in a drain on the owner thread. */
void CL_CALLBACK
lclgc_event_callback(cl_event event, cl_int status, void *post)
{
    (void)event;
    lclgc_post_run(post, status);
}

/* Event:on(fn [, "complete" | "running" | "submitted"]): fn(status,
 * event) once, on the owner thread, in a drain of the state's queue. */
static int
lclgc_event_on(lua_State *L)
{
    static const char *const names[] = {"complete", "running", "submitted",
                                        NULL};
    static const cl_int types[] = {CL_COMPLETE, CL_RUNNING, CL_SUBMITTED};
    const char *fn = "clgc.Event:on";
    cl_event ev = lclgc_check(L, 1, LCLGC_EVENT, fn);
    cl_int type = types[lclgc_checkopt(L, 3, "complete", names, fn)];
    lclgc_state *st = lclgc_state_get(L);
    struct lclgc_post *p;
    clgc_queue_t *before;
    cl_int err;

    lclgc_checktype(L, 2, LUA_TFUNCTION, fn);
    p = lclgc_post_new(L, 2, 1, "clgc.Event:on");
    /* Defer to this state's queue for this registration only, and give
     * back whatever deferral the thread had. */
    before = clgc_callbacks_deferred_to();
    (void)clgc_callbacks_defer(lclgc_state_queue(st));
    err = clgc_clSetEventCallback(ev, type, lclgc_event_callback, p);
    (void)clgc_callbacks_defer(before);
    if (err != CL_SUCCESS) {
        lclgc_post_free(p);
        return lclgc_cl_error(L, fn, err);
    }
    return 0;
}

/* A destructor callback, deferred: runs in a drain on the owner thread,
 * once the object is gone. */
static void CL_CALLBACK
lclgc_destroyed(void *object, void *post)
{
    (void)object;
    lclgc_post_run(post, CL_SUCCESS);
}

void CL_CALLBACK
lclgc_mem_destroyed(cl_mem mem, void *post)
{
    lclgc_destroyed(mem, post);
}

static void CL_CALLBACK
lclgc_context_destroyed(cl_context context, void *post)
{
    lclgc_destroyed(context, post);
}

/* Buffer:on_release(fn), Context:on_release(fn): fn(0) once the OpenCL
 * object is destroyed (its last reference gone, the handle's included),
 * in a drain on the owner thread. */
static int
lclgc_on_release(lua_State *L, const char *kind, const char *fn)
{
    void *obj = lclgc_check(L, 1, kind, fn);
    lclgc_state *st = lclgc_state_get(L);
    struct lclgc_post *p;
    clgc_queue_t *before;
    cl_int err;

    lclgc_checktype(L, 2, LUA_TFUNCTION, fn);
    p = lclgc_post_new(L, 2, 0, fn);
    before = clgc_callbacks_deferred_to();
    (void)clgc_callbacks_defer(lclgc_state_queue(st));
    if (strcmp(kind, LCLGC_BUFFER) == 0)
        err =
            clgc_clSetMemObjectDestructorCallback(obj, lclgc_mem_destroyed, p);
    else
        err = clgc_clSetContextDestructorCallback(obj, lclgc_context_destroyed,
                                                  p);
    (void)clgc_callbacks_defer(before);
    if (err != CL_SUCCESS) {
        lclgc_post_free(p);
        return lclgc_cl_error(L, fn, err);
    }
    return 0;
}

static int
lclgc_buffer_on_release(lua_State *L)
{
    return lclgc_on_release(L, LCLGC_BUFFER, "clgc.Buffer:on_release");
}

static int
lclgc_context_on_release(lua_State *L)
{
    return lclgc_on_release(L, LCLGC_CONTEXT, "clgc.Context:on_release");
}

static void
lclgc_event_posted(cl_event event, cl_int status, void *post)
{
    (void)event;
    lclgc_post_run(post, status);
}

/* Event:post(fn): fn(status, event) once the event completes or fails
 * (status: its real final status), in a drain of the state's queue. What
 * clgc.lua's coroutine waits are made of. */
static int
lclgc_event_post(lua_State *L)
{
    const char *fn = "clgc.Event:post";
    cl_event ev = lclgc_check(L, 1, LCLGC_EVENT, fn);
    struct lclgc_post *p;
    cl_int err;

    lclgc_checktype(L, 2, LUA_TFUNCTION, fn);
    /* clgc flushes a queued command's queue and delivers an event
     * already complete, on every driver. */
    p = lclgc_post_new(L, 2, 1, "clgc.Event:post");
    err = clgc_event_post(ev, lclgc_state_queue(lclgc_state_get(L)),
                          lclgc_event_posted, p);
    if (err != CL_SUCCESS) {
        lclgc_post_free(p);
        return lclgc_cl_error(L, fn, err);
    }
    return 0;
}

void
lclgc_open_event(lua_State *L)
{
    static const luaL_Reg queue[] = {{"launch", lclgc_queue_launch},
                                     {"marker", lclgc_queue_marker},
                                     {NULL, NULL}};
    static const luaL_Reg event[] = {{"status", lclgc_event_status},
                                     {"profile", lclgc_event_profile},
                                     {"set_status", lclgc_event_set_status},
                                     {"on", lclgc_event_on},
                                     {"post", lclgc_event_post},
                                     {NULL, NULL}};

    static const luaL_Reg buffer[] = {{"on_release", lclgc_buffer_on_release},
                                      {NULL, NULL}};
    static const luaL_Reg context[] = {{"on_release", lclgc_context_on_release},
                                       {NULL, NULL}};

    lclgc_add_methods(L, LCLGC_QUEUE, queue);
    lclgc_add_methods(L, LCLGC_BUFFER, buffer);
    lclgc_add_methods(L, LCLGC_CONTEXT, context);
    lclgc_new_class(L, LCLGC_EVENT, event);
    lua_pushcfunction(L, lclgc_user_event);
    lua_setfield(L, -2, "user_event");
    lua_pushcfunction(L, lclgc_wait);
    lua_setfield(L, -2, "wait");
}
