/* Platforms and devices; contexts and command queues. Their info queries
 * are in linfo.c. */

#include <stdlib.h>
#include <string.h>

#include "lclgc.h"

/* platforms() -> { Platform... } */
static int
lclgc_platforms(lua_State *L)
{
    cl_uint n = 0;
    cl_platform_id *ids;
    cl_int err = clgc_clGetPlatformIDs(0, NULL, &n);

    if (err == CL_PLATFORM_NOT_FOUND_KHR)
        n = 0;
    else if (err != CL_SUCCESS)
        return lclgc_cl_error(L, "clgc.platforms", err);
    ids = lua_newuserdatauv(L, (n + 1) * sizeof(*ids), 0);
    if (n > 0 && (err = clgc_clGetPlatformIDs(n, ids, NULL)) != CL_SUCCESS)
        return lclgc_cl_error(L, "clgc.platforms", err);
    lua_createtable(L, (int)n, 0);
    for (cl_uint i = 0; i < n; i++) {
        lclgc_push_handle(L, LCLGC_PLATFORM, ids[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* Platform:devices([type]) -> { Device... } */
static int
lclgc_platform_devices(lua_State *L)
{
    static const char *const names[] = {"all",         "cpu",     "gpu",
                                        "accelerator", "default", NULL};
    static const cl_device_type types[] = {
        CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
        CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_DEFAULT};
    const char *fn = "clgc.Platform:devices";
    void *p = lclgc_check(L, 1, LCLGC_PLATFORM, fn);
    cl_device_type type = types[lclgc_checkopt(L, 2, "all", names, fn)];
    cl_uint n = 0;
    cl_device_id *ids;
    cl_int err = clgc_clGetDeviceIDs(p, type, 0, NULL, &n);

    if (err == CL_DEVICE_NOT_FOUND)
        n = 0;
    else if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    ids = lua_newuserdatauv(L, (n + 1) * sizeof(*ids), 0);
    if (n > 0 &&
        (err = clgc_clGetDeviceIDs(p, type, n, ids, NULL)) != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lua_createtable(L, (int)n, 0);
    for (cl_uint i = 0; i < n; i++) {
        lclgc_push_handle(L, LCLGC_DEVICE, ids[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* Devices given as one Device or a table of them, in a userdata (freed by
 * the collector) at the top of the stack. */
cl_device_id *
lclgc_check_devices(lua_State *L, int idx, cl_uint *n, const char *fn)
{
    cl_device_id *ids;

    if (luaL_testudata(L, idx, LCLGC_DEVICE) != NULL) {
        ids = lua_newuserdatauv(L, sizeof(*ids), 0);
        ids[0] = lclgc_check(L, idx, LCLGC_DEVICE, fn);
        *n = 1;
        return ids;
    }
    if (!lua_istable(L, idx))
        lclgc_error(L,
                    "%s: argument #%d: %s or a table of them expected, got %s",
                    fn, idx, LCLGC_DEVICE, lclgc_typename(L, idx));
    *n = (cl_uint)lclgc_rawlen(L, idx, fn);
    if (*n == 0)
        lclgc_error(L, "%s: argument #%d: no devices", fn, idx);
    ids = lua_newuserdatauv(L, *n * sizeof(*ids), 0);
    for (cl_uint i = 0; i < *n; i++) {
        lua_rawgeti(L, idx, i + 1);
        ids[i] = lclgc_check(L, -1, LCLGC_DEVICE, fn);
        lua_pop(L, 1);
    }
    return ids;
}

/* context(devices) -> Context */
static int
lclgc_context(lua_State *L)
{
    const char *fn = "clgc.context";
    cl_uint n;
    cl_device_id *ids = lclgc_check_devices(L, 1, &n, fn);
    cl_int err = CL_SUCCESS;
    cl_context c = clgc_clCreateContext(NULL, n, ids, NULL, NULL, &err);

    if (c == NULL)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_CONTEXT, c);
    return 1;
}

/* Context:queue(device [, {profiling = true, out_of_order = true}]) ->
 * Queue */
static int
lclgc_context_queue(lua_State *L)
{
    const char *fn = "clgc.Context:queue";
    cl_context c = lclgc_check(L, 1, LCLGC_CONTEXT, fn);
    cl_device_id d = lclgc_check(L, 2, LCLGC_DEVICE, fn);
    cl_ulong props[3] = {0, 0, 0};
    cl_int err = CL_SUCCESS;
    cl_command_queue q;

    if (!lua_isnoneornil(L, 3)) {
        lclgc_checktype(L, 3, LUA_TTABLE, fn);
        if (lua_getfield(L, 3, "profiling") != LUA_TNIL && lua_toboolean(L, -1))
            props[1] |= CL_QUEUE_PROFILING_ENABLE;
        if (lua_getfield(L, 3, "out_of_order") != LUA_TNIL &&
            lua_toboolean(L, -1))
            props[1] |= CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
        lua_pop(L, 2);
        if (props[1] != 0)
            props[0] = CL_QUEUE_PROPERTIES;
    }
    q = clgc_create_command_queue(c, d, props, &err);
    if (q == NULL)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_QUEUE, q);
    return 1;
}

/* Context:devices() -> { Device... } */
static int
lclgc_context_devices(lua_State *L)
{
    const char *fn = "clgc.Context:devices";
    cl_context c = lclgc_check(L, 1, LCLGC_CONTEXT, fn);
    size_t size = 0;
    cl_device_id *ids;
    cl_int err = clgc_clGetContextInfo(c, CL_CONTEXT_DEVICES, 0, NULL, &size);

    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    ids = lua_newuserdatauv(L, size + sizeof(*ids), 0);
    err = clgc_clGetContextInfo(c, CL_CONTEXT_DEVICES, size, ids, NULL);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lua_createtable(L, (int)(size / sizeof(*ids)), 0);
    for (size_t i = 0; i < size / sizeof(*ids); i++) {
        lclgc_push_handle(L, LCLGC_DEVICE, ids[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static int
lclgc_queue_flush(lua_State *L)
{
    cl_int err =
        clgc_clFlush(lclgc_check(L, 1, LCLGC_QUEUE, "clgc.Queue:flush"));

    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, "clgc.Queue:flush", err);
    return 0;
}

/* Blocks the thread: clgc.lua waits for a marker first in a coroutine. */
static int
lclgc_queue_finish(lua_State *L)
{
    cl_int err =
        clgc_clFinish(lclgc_check(L, 1, LCLGC_QUEUE, "clgc.Queue:finish"));

    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, "clgc.Queue:finish", err);
    return 0;
}

void
lclgc_open_platform(lua_State *L)
{
    static const luaL_Reg platform[] = {{"devices", lclgc_platform_devices},
                                        {NULL, NULL}};
    static const luaL_Reg device[] = {{NULL, NULL}};
    static const luaL_Reg context[] = {{"queue", lclgc_context_queue},
                                       {"devices", lclgc_context_devices},
                                       {NULL, NULL}};
    static const luaL_Reg queue[] = {{"flush", lclgc_queue_flush},
                                     {"finish", lclgc_queue_finish},
                                     {NULL, NULL}};

    lclgc_new_class(L, LCLGC_PLATFORM, platform);
    lclgc_new_class(L, LCLGC_DEVICE, device);
    lclgc_new_class(L, LCLGC_CONTEXT, context);
    lclgc_new_class(L, LCLGC_QUEUE, queue);
    lua_pushcfunction(L, lclgc_platforms);
    lua_setfield(L, -2, "platforms");
    lua_pushcfunction(L, lclgc_context);
    lua_setfield(L, -2, "context");
}
