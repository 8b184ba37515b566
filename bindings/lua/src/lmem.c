/* Buffers: create, write from and read into Lua strings and tables of
 * numbers with an element type; raw memory for the generic path. */

#include <stdlib.h>
#include <string.h>

#include "lclgc.h"

/* Context:buffer(size | string [, "rw" | "r" | "w"]) -> Buffer */
static int
lclgc_context_buffer(lua_State *L)
{
    static const char *const names[] = {"rw", "r", "w", NULL};
    static const cl_mem_flags flags[] = {CL_MEM_READ_WRITE, CL_MEM_READ_ONLY,
                                         CL_MEM_WRITE_ONLY};
    const char *fn = "clgc.Context:buffer";
    cl_context c = lclgc_check(L, 1, LCLGC_CONTEXT, fn);
    cl_mem_flags f = flags[lclgc_checkopt(L, 3, "rw", names, fn)];
    void *host = NULL;
    size_t size;
    cl_int err = CL_SUCCESS;
    cl_mem m;

    if (lua_type(L, 2) == LUA_TSTRING) {
        host = (void *)lua_tolstring(L, 2, &size);
        f |= CL_MEM_COPY_HOST_PTR;
    } else {
        lua_Integer n = lclgc_checkint(L, 2, fn);

        if (n <= 0)
            return lclgc_fail(L, fn, CL_INVALID_BUFFER_SIZE,
                              "CL_INVALID_BUFFER_SIZE", NULL, "%I bytes", n);
        size = (size_t)n;
    }
    m = clgc_clCreateBuffer(c, f, size, host, &err);
    if (m == NULL)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_BUFFER, m);
    return 1;
}

static int
lclgc_buffer_size(lua_State *L)
{
    const char *fn = "clgc.Buffer:size";

    lua_pushinteger(L, (lua_Integer)lclgc_mem_size(
                           L, lclgc_check(L, 1, LCLGC_BUFFER, fn), fn));
    return 1;
}

/* Options of a transfer: {type=, offset=, count=, size=, wait=}. */
struct lclgc_xfer {
    int type; /* -1: bytes */
    size_t offset;
    lua_Integer count, size; /* -1: not given */
    cl_event *wait;
    cl_uint nwait;
};

static lua_Integer
lclgc_opt_field(lua_State *L, int idx, const char *name, lua_Integer def,
                const char *fn)
{
    lua_Integer v = def;

    if (lua_getfield(L, idx, name) != LUA_TNIL) {
        int isint;

        v = lua_tointegerx(L, -1, &isint);
        if (!isint || v < 0)
            lclgc_error(L, "%s: option '%s': a non-negative integer expected",
                        fn, name);
    }
    lua_pop(L, 1);
    return v;
}

static void
lclgc_check_xfer(lua_State *L, int idx, struct lclgc_xfer *x, const char *fn)
{
    x->type = -1;
    x->offset = 0;
    x->count = x->size = -1;
    x->wait = NULL;
    x->nwait = 0;
    if (lua_isnoneornil(L, idx))
        return;
    if (lua_type(L, idx) == LUA_TSTRING) { /* just the type */
        x->type = lclgc_check_type(L, idx, fn);
        return;
    }
    lclgc_checktype(L, idx, LUA_TTABLE, fn);
    if (lua_getfield(L, idx, "type") != LUA_TNIL)
        x->type = lclgc_check_type(L, -1, fn);
    lua_pop(L, 1);
    x->offset = (size_t)lclgc_opt_field(L, idx, "offset", 0, fn);
    x->count = lclgc_opt_field(L, idx, "count", -1, fn);
    x->size = lclgc_opt_field(L, idx, "size", -1, fn);
    if (lua_getfield(L, idx, "wait") != LUA_TNIL) {
        x->wait = lclgc_check_events(L, lua_gettop(L), &x->nwait, fn);
        lua_remove(L, -2); /* the table; the array stays on the stack */
    } else {
        lua_pop(L, 1);
    }
}

/* Queue:write(buffer, string | numbers [, type | options]): a blocking
 * write at options.offset (bytes). A table needs an element type. */
static int
lclgc_queue_write(lua_State *L)
{
    const char *fn = "clgc.Queue:write";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem m = lclgc_check(L, 2, LCLGC_BUFFER, fn);
    struct lclgc_xfer x;
    const void *data;
    size_t size;
    cl_int err;

    lclgc_check_xfer(L, 4, &x, fn);
    if (lua_type(L, 3) == LUA_TSTRING) {
        data = lua_tolstring(L, 3, &size);
    } else if (lua_type(L, 3) == LUA_TTABLE) {
        size_t n = lclgc_rawlen(L, 3, fn);
        char *buf;
        size_t es;

        if (x.type < 0)
            return lclgc_error(L,
                               "%s: a table of numbers needs an element "
                               "type (float, int, ...)",
                               fn);
        es = lclgc_type_size(x.type);
        buf = lua_newuserdatauv(L, n * es + 1, 0);
        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, 3, (lua_Integer)i + 1);
            lclgc_store_scalar(L, -1, x.type, buf + i * es, fn);
            lua_pop(L, 1);
        }
        data = buf;
        size = n * es;
    } else {
        return lclgc_error(L,
                           "%s: argument #3: string or table expected, "
                           "got %s",
                           fn, lclgc_typename(L, 3));
    }
    if (size == 0)
        return 0;
    err = clgc_clEnqueueWriteBuffer(q, m, CL_TRUE, x.offset, size, data,
                                    x.nwait, x.wait, NULL);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    return 0;
}

/* Queue:read(buffer [, type | options]) -> string | numbers: a blocking
 * read of options.size bytes (default: the rest of the buffer), or of
 * options.count elements of options.type. */
static int
lclgc_queue_read(lua_State *L)
{
    const char *fn = "clgc.Queue:read";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem m = lclgc_check(L, 2, LCLGC_BUFFER, fn);
    size_t total = lclgc_mem_size(L, m, fn), size, es = 1;
    struct lclgc_xfer x;
    char *buf;
    cl_int err;

    lclgc_check_xfer(L, 3, &x, fn);
    if (x.offset > total)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "offset past the end");
    if (x.type >= 0)
        es = lclgc_type_size(x.type);
    /* Compared in elements, so that no product can overflow: a count of
     * 2^62 + 1 floats must not become 4 bytes. */
    if (x.count >= 0 && (size_t)x.count > (total - x.offset) / es)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "count %I past the end of the buffer", x.count);
    if (x.size >= 0 && (size_t)x.size > total - x.offset)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "size %I past the end of the buffer", x.size);
    if (x.count >= 0)
        size = (size_t)x.count * es;
    else if (x.size >= 0)
        size = (size_t)x.size;
    else
        size = (total - x.offset) / es * es;
    buf = lua_newuserdatauv(L, size + 1, 0);
    if (size > 0) {
        err = clgc_clEnqueueReadBuffer(q, m, CL_TRUE, x.offset, size, buf,
                                       x.nwait, x.wait, NULL);
        if (err != CL_SUCCESS)
            return lclgc_cl_error(L, fn, err);
    }
    if (x.type < 0) {
        lua_pushlstring(L, buf, size);
        return 1;
    }
    lua_createtable(L, (int)(size / es), 0);
    for (size_t i = 0; i < size / es; i++) {
        lclgc_push_scalar(L, x.type, buf + i * es);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* Raw memory for the generic path: memory(bytes) -> Memory. */
static int
lclgc_memory(lua_State *L)
{
    lua_Integer n = lclgc_checkint(L, 1, "clgc.memory");
    size_t *m;

    if (n < 0 || n > (1 << 30))
        return lclgc_error(L, "clgc.memory: argument #1: size out of range "
                              "(0 to 2^30)");
    m = lua_newuserdatauv(L, sizeof(size_t) + (size_t)n + 8, 0);
    memset(m, 0, sizeof(size_t) + (size_t)n + 8);
    *m = (size_t)n;
    luaL_setmetatable(L, LCLGC_MEMORY);
    return 1;
}

/* self of a Memory method. */
static size_t *
lclgc_memory_self(lua_State *L, const char *fn)
{
    size_t *m = luaL_testudata(L, 1, LCLGC_MEMORY);

    if (m == NULL)
        lclgc_argerror(L, 1, fn, LCLGC_MEMORY " expected");
    return m;
}

static char *
lclgc_memory_at(lua_State *L, lua_Integer i, size_t es, const char *fn)
{
    size_t *m = lclgc_memory_self(L, fn);

    if (i < 0 || (size_t)i > *m / es || ((size_t)i + 1) * es > *m)
        lclgc_error(L, "%s: index %I out of range", fn, i);
    return (char *)(m + 1) + (size_t)i * es;
}

/* Memory:get(type, index): index from 0, in elements. */
static int
lclgc_memory_get(lua_State *L)
{
    const char *fn = "clgc.Memory:get";
    int t = (lclgc_memory_self(L, fn), lclgc_check_type(L, 2, fn));

    lclgc_push_scalar(
        L, t,
        lclgc_memory_at(L, lclgc_optint(L, 3, 0, fn), lclgc_type_size(t), fn));
    return 1;
}

static int
lclgc_memory_set(lua_State *L)
{
    const char *fn = "clgc.Memory:set";
    int t = (lclgc_memory_self(L, fn), lclgc_check_type(L, 2, fn));
    char *p =
        lclgc_memory_at(L, lclgc_checkint(L, 3, fn), lclgc_type_size(t), fn);

    lclgc_store_scalar(L, 4, t, p, fn);
    return 0;
}

/* Memory:pointer(index): the pointer stored at index (from 0, in
 * pointers), as a light userdata, or nil for NULL. */
static int
lclgc_memory_pointer(lua_State *L)
{
    const char *fn = "clgc.Memory:pointer";
    void **p = (void **)(void *)lclgc_memory_at(
        L, (lclgc_memory_self(L, fn), lclgc_optint(L, 2, 0, fn)),
        sizeof(void *), fn);

    if (*p == NULL)
        lua_pushnil(L);
    else
        lua_pushlightuserdata(L, *p);
    return 1;
}

/* Memory:string([len]): the bytes up to len, or up to the first NUL. */
static int
lclgc_memory_string(lua_State *L)
{
    size_t *m = lclgc_memory_self(L, "clgc.Memory:string");
    const char *p = (const char *)(m + 1);
    lua_Integer len = lclgc_optint(L, 2, -1, "clgc.Memory:string");

    if (len < 0)
        lua_pushstring(L, p); /* NUL-terminated: 8 spare zero bytes */
    else
        lua_pushlstring(L, p, (size_t)len < *m ? (size_t)len : *m);
    return 1;
}

static int
lclgc_memory_ptr(lua_State *L)
{
    size_t *m = lclgc_memory_self(L, "clgc.Memory:ptr");

    lua_pushlightuserdata(L, m + 1);
    return 1;
}

static int
lclgc_memory_len(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)*lclgc_memory_self(L, "clgc.Memory:len"));
    return 1;
}

void
lclgc_open_mem(lua_State *L)
{
    static const luaL_Reg context[] = {{"buffer", lclgc_context_buffer},
                                       {NULL, NULL}};
    static const luaL_Reg buffer[] = {{"size", lclgc_buffer_size},
                                      {NULL, NULL}};
    static const luaL_Reg queue[] = {
        {"write", lclgc_queue_write}, {"read", lclgc_queue_read}, {NULL, NULL}};
    static const luaL_Reg memory[] = {
        {"get", lclgc_memory_get},         {"set", lclgc_memory_set},
        {"string", lclgc_memory_string},   {"ptr", lclgc_memory_ptr},
        {"pointer", lclgc_memory_pointer}, {NULL, NULL}};

    lclgc_add_methods(L, LCLGC_CONTEXT, context);
    lclgc_new_class(L, LCLGC_BUFFER, buffer);
    lclgc_add_methods(L, LCLGC_QUEUE, queue);
    luaL_newmetatable(L, LCLGC_MEMORY);
    luaL_newlib(L, memory);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, lclgc_memory_len);
    lua_setfield(L, -2, "__len");
    lua_pushboolean(L, 0); /* protected, as the handles' (lclgc.c) */
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
    lua_pushcfunction(L, lclgc_memory);
    lua_setfield(L, -2, "memory");
}
