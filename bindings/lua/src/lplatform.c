/* Platforms, devices and their info queries; contexts and command queues. */

#include <stdlib.h>
#include <string.h>

#include "lclgc.h"

/* Info parameters by name, with the type their value has. */
enum lclgc_info_type { T_STRING, T_UINT, T_ULONG, T_SIZE, T_BOOL, T_TYPE };

struct lclgc_info {
    const char *name;
    cl_uint param;
    enum lclgc_info_type type;
};

static const struct lclgc_info lclgc_platform_params[] = {
    {"name", CL_PLATFORM_NAME, T_STRING},
    {"vendor", CL_PLATFORM_VENDOR, T_STRING},
    {"version", CL_PLATFORM_VERSION, T_STRING},
    {"profile", CL_PLATFORM_PROFILE, T_STRING},
    {"extensions", CL_PLATFORM_EXTENSIONS, T_STRING},
    {NULL, 0, 0}};

static const struct lclgc_info lclgc_device_params[] = {
    {"name", CL_DEVICE_NAME, T_STRING},
    {"vendor", CL_DEVICE_VENDOR, T_STRING},
    {"version", CL_DEVICE_VERSION, T_STRING},
    {"driver_version", CL_DRIVER_VERSION, T_STRING},
    {"extensions", CL_DEVICE_EXTENSIONS, T_STRING},
    {"type", CL_DEVICE_TYPE, T_TYPE},
    {"max_compute_units", CL_DEVICE_MAX_COMPUTE_UNITS, T_UINT},
    {"max_clock_frequency", CL_DEVICE_MAX_CLOCK_FREQUENCY, T_UINT},
    {"global_mem_size", CL_DEVICE_GLOBAL_MEM_SIZE, T_ULONG},
    {"local_mem_size", CL_DEVICE_LOCAL_MEM_SIZE, T_ULONG},
    {"max_mem_alloc_size", CL_DEVICE_MAX_MEM_ALLOC_SIZE, T_ULONG},
    {"max_work_group_size", CL_DEVICE_MAX_WORK_GROUP_SIZE, T_SIZE},
    {"available", CL_DEVICE_AVAILABLE, T_BOOL},
    {"compiler_available", CL_DEVICE_COMPILER_AVAILABLE, T_BOOL},
    {NULL, 0, 0}};

/* Push the value of an info query made by get(obj, param, size, value,
 * size_ret); raise a Lua error naming fn on failure. */
static int
lclgc_push_info(lua_State *L, const char *fn, void *obj,
                const struct lclgc_info *table, int idx,
                cl_int (*get)(void *, cl_uint, size_t, void *, size_t *))
{
    const char *name = lclgc_checkstr(L, idx, NULL, fn);
    const struct lclgc_info *i;
    size_t size = 0;
    cl_int err;
    char *buf;

    for (i = table; i->name != NULL; i++)
        if (strcmp(i->name, name) == 0)
            break;
    if (i->name == NULL)
        return lclgc_error(L, "%s: unknown info name '%s'", fn, name);
    err = get(obj, i->param, 0, NULL, &size);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    buf = lua_newuserdatauv(L, size + 1, 0); /* freed by Lua's collector */
    err = get(obj, i->param, size, buf, NULL);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    switch (i->type) {
    case T_STRING:
        buf[size] = 0;
        lua_pushstring(L, buf);
        break;
    case T_UINT:
        lua_pushinteger(L, *(cl_uint *)(void *)buf);
        break;
    case T_ULONG:
        lua_pushinteger(L, (lua_Integer) * (cl_ulong *)(void *)buf);
        break;
    case T_SIZE:
        lua_pushinteger(L, (lua_Integer) * (size_t *)(void *)buf);
        break;
    case T_BOOL:
        lua_pushboolean(L, *(cl_bool *)(void *)buf);
        break;
    case T_TYPE: {
        cl_device_type t = *(cl_device_type *)(void *)buf;

        lua_pushstring(L, (t & CL_DEVICE_TYPE_GPU)           ? "gpu"
                          : (t & CL_DEVICE_TYPE_CPU)         ? "cpu"
                          : (t & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator"
                                                             : "custom");
        break;
    }
    }
    return 1;
}

static cl_int
lclgc_get_platform_info(void *o, cl_uint p, size_t s, void *v, size_t *r)
{
    return clgc_clGetPlatformInfo(o, p, s, v, r);
}

static cl_int
lclgc_get_device_info(void *o, cl_uint p, size_t s, void *v, size_t *r)
{
    return clgc_clGetDeviceInfo(o, p, s, v, r);
}

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

static int
lclgc_platform_info(lua_State *L)
{
    void *p = lclgc_check(L, 1, LCLGC_PLATFORM, "clgc.Platform:info");

    return lclgc_push_info(L, "clgc.Platform:info", p, lclgc_platform_params, 2,
                           lclgc_get_platform_info);
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

static int
lclgc_device_info(lua_State *L)
{
    void *d = lclgc_check(L, 1, LCLGC_DEVICE, "clgc.Device:info");

    return lclgc_push_info(L, "clgc.Device:info", d, lclgc_device_params, 2,
                           lclgc_get_device_info);
}

/* Devices given as one Device or a table of them, in a userdata (freed by
 * the collector) at the top of the stack. */
static cl_device_id *
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

/* Context:queue(device [, {profiling = true}]) -> Queue */
static int
lclgc_context_queue(lua_State *L)
{
    const char *fn = "clgc.Context:queue";
    cl_context c = lclgc_check(L, 1, LCLGC_CONTEXT, fn);
    cl_device_id d = lclgc_check(L, 2, LCLGC_DEVICE, fn);
    cl_queue_properties props[3] = {0, 0, 0};
    cl_int err = CL_SUCCESS;
    cl_command_queue q;

    if (!lua_isnoneornil(L, 3)) {
        lclgc_checktype(L, 3, LUA_TTABLE, fn);
        if (lua_getfield(L, 3, "profiling") != LUA_TNIL &&
            lua_toboolean(L, -1)) {
            props[0] = CL_QUEUE_PROPERTIES;
            props[1] = CL_QUEUE_PROFILING_ENABLE;
        }
        lua_pop(L, 1);
    }
    q = clgc_clCreateCommandQueueWithProperties(c, d, props, &err);
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
    static const luaL_Reg platform[] = {{"info", lclgc_platform_info},
                                        {"devices", lclgc_platform_devices},
                                        {NULL, NULL}};
    static const luaL_Reg device[] = {{"info", lclgc_device_info},
                                      {NULL, NULL}};
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
