/* Every other OpenCL command, through clgc's metadata and generic call:
 * call(name, ...) with Lua values converted by each parameter's ctype, so
 * a Lua program is never stuck for want of a method. */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lclgc.h"

static const char *const lclgc_ctype_names[] = {
    "void",  "int8",   "uint8",  "int16",   "uint16",
    "int32", "uint32", "int64",  "uint64",  "intptr",
    "size",  "float",  "double", "pointer", "function"};

/* A string or a clgc.Memory block for pointer parameter i: refused unless
 * it holds all the command may read or write there, by the converted
 * arguments args (clgc_command_reach; a string only for a const pointer:
 * Lua strings are immutable). */
static void
lclgc_check_reach(lua_State *L, const clgc_command_t *c, unsigned i,
                  const clgc_arg_t *args, size_t have, int is_string)
{
    const char *type = c->params[i].type;
    int idx = (int)i + 2;
    lua_Integer need = clgc_command_reach(c, i, args);

    if (strchr(type, '*') == NULL)
        lclgc_error(L,
                    "clgc.call: argument #%d (%s %s): a handle or a light "
                    "userdata expected, got %s",
                    idx, type, c->params[i].name, lclgc_typename(L, idx));
    if (is_string && strncmp(type, "const ", 6) != 0)
        lclgc_error(L,
                    "clgc.call: argument #%d (%s %s): a string cannot be "
                    "written into: use clgc.memory",
                    idx, type, c->params[i].name);
    /* A const char * reads up to a NUL: a string ends with one, and a
     * Memory block with eight spare ones. */
    if (need < 0 && strcmp(type, "const char *") == 0)
        return;
    if (need < 0)
        lclgc_error(L,
                    "clgc.call: argument #%d (%s %s): the size it needs "
                    "is not known (%s): pass a light userdata (Memory:ptr())",
                    idx, type, c->params[i].name,
                    c->params[i].unknown != NULL ? c->params[i].unknown
                                                 : "a count of no integer");
    if ((size_t)need > have)
        lclgc_error(L,
                    "clgc.call: argument #%d (%s %s): %I bytes needed, "
                    "the %s has %I",
                    idx, type, c->params[i].name, need,
                    is_string ? "string" : LCLGC_MEMORY, (lua_Integer)have);
}

/* The handle class a parameter's opaque type takes, or NULL. */
static const char *
lclgc_class_of(const char *type)
{
    static const char *const map[][2] = {
        {"cl_platform_id", LCLGC_PLATFORM}, {"cl_device_id", LCLGC_DEVICE},
        {"cl_context", LCLGC_CONTEXT},      {"cl_command_queue", LCLGC_QUEUE},
        {"cl_program", LCLGC_PROGRAM},      {"cl_kernel", LCLGC_KERNEL},
        {"cl_mem", LCLGC_BUFFER},           {"cl_event", LCLGC_EVENT}};

    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(map[i][0], type) == 0)
            return map[i][1];
    return NULL;
}

/* A pointer argument: nil, a handle of the parameter's type, Memory, a
 * light userdata (passed as it is: its size is the caller's affair), or
 * a string (read-only bytes). Memory and strings are checked against what
 * the command will touch (lclgc_check_reach), once every integer is
 * converted into args. */
static void *
lclgc_check_pointer(lua_State *L, const clgc_command_t *c, unsigned i,
                    const clgc_arg_t *args)
{
    int idx = (int)i + 2;
    const char *want = lclgc_class_of(c->params[i].type);
    size_t len;

    switch (lua_type(L, idx)) {
    case LUA_TNIL:
        return NULL;
    case LUA_TLIGHTUSERDATA:
        return lua_touserdata(L, idx);
    case LUA_TSTRING:
        (void)lua_tolstring(L, idx, &len);
        lclgc_check_reach(L, c, i, args, len, 1);
        return (void *)lua_tostring(L, idx);
    case LUA_TUSERDATA:
        if (luaL_testudata(L, idx, LCLGC_MEMORY) != NULL) {
            size_t *m = lua_touserdata(L, idx);

            lclgc_check_reach(L, c, i, args, *m, 0);
            return m + 1;
        }
        if (want != NULL && luaL_testudata(L, idx, want) != NULL)
            return lclgc_check(L, idx, want, "clgc.call");
        break;
    default:
        break;
    }
    if (want != NULL)
        lclgc_error(L,
                    "clgc.call: argument #%d (%s %s): %s or a light userdata "
                    "expected, got %s",
                    idx, c->params[i].type, c->params[i].name, want,
                    lclgc_typename(L, idx));
    lclgc_error(L,
                "clgc.call: argument #%d (%s %s): pointer expected (nil, "
                "clgc.Memory, a light userdata or a string), got %s",
                idx, c->params[i].type, c->params[i].name,
                lclgc_typename(L, idx));
    return NULL;
}

/* Keeping memory for as long as OpenCL uses it (clgc_command_keep): a
 * post whose handler does nothing and whose argument is the Memory block
 * or string, run once the command completes (or the memory object made
 * over it is destroyed) in a drain of the state's queue, which then drops
 * both. Until that drain the value stays reachable. */
static int
lclgc_noop(lua_State *L)
{
    (void)L;
    return 0;
}

/* Keep the value at idx until ev completes, or, without ev, until mem is
 * destroyed; if that cannot be registered, wait for ev here (mem: the
 * call's caller gets an error and the object is released). */
static void
lclgc_keep(lua_State *L, int idx, cl_event ev, cl_mem mem)
{
    clgc_queue_t *before = clgc_callbacks_deferred_to();
    struct lclgc_post *p;
    cl_int err;

    lua_pushcfunction(L, lclgc_noop);
    p = lclgc_post_new(L, -1, idx, "clgc.call");
    lua_pop(L, 1);
    (void)clgc_callbacks_defer(lclgc_state_queue(lclgc_state_get(L)));
    err =
        ev != NULL
            ? clgc_clSetEventCallback(ev, CL_COMPLETE, lclgc_event_callback, p)
            : clgc_clSetMemObjectDestructorCallback(mem, lclgc_mem_destroyed,
                                                    p);
    (void)clgc_callbacks_defer(before);
    if (err == CL_SUCCESS)
        return;
    lclgc_post_free(p);
    if (ev != NULL) {
        (void)clgc_wait_for_events(1, &ev);
        return;
    }
    (void)clgc_clReleaseMemObject(mem);
    lclgc_error(L,
                "clgc.call: the memory object made over a clgc.Memory "
                "block could not keep it (%d)",
                (int)err);
}

/* call(name, ...) -> the command's result (a cl_int code as an integer,
 * an object as a light userdata, for clgc.wrap). */
static int
lclgc_call(lua_State *L)
{
    const char *name = lclgc_checkstr(L, 1, NULL, "clgc.call");
    const clgc_command_t *c = clgc_command_find(name);
    clgc_arg_t args[CLGC_CLOSURE_MAX_ARGS];
    clgc_keep_t keep[CLGC_CLOSURE_MAX_ARGS];
    cl_event own = NULL, *event = NULL;
    unsigned until_done = 0;
    clgc_value_t r;
    int err, e;

    if (c == NULL)
        return lclgc_error(L, "clgc.call: no OpenCL command named '%s'", name);
    if (c->nparams > CLGC_CLOSURE_MAX_ARGS)
        return lclgc_error(L, "clgc.call: %s has too many parameters", name);
    if ((unsigned)lua_gettop(L) - 1 != c->nparams)
        return lclgc_error(L, "clgc.call: %s takes %d arguments, got %d", name,
                           (int)c->nparams, lua_gettop(L) - 1);
    for (unsigned i = 0; i < c->nparams; i++) {
        int idx = (int)i + 2, isnum = 1;
        clgc_value_t *v = &args[i].value;

        args[i].ctype = c->params[i].ctype;
        memset(v, 0, sizeof(*v));
        switch (c->params[i].ctype) {
        case CLGC_CTYPE_FLOAT:
            v->f = (float)lua_tonumberx(L, idx, &isnum);
            break;
        case CLGC_CTYPE_DOUBLE:
            v->d = lua_tonumberx(L, idx, &isnum);
            break;
        case CLGC_CTYPE_POINTER:
            v->p = NULL; /* after every integer: sizes are checked */
            break;
        case CLGC_CTYPE_FUNCTION:
            if (!lua_isnil(L, idx))
                return lclgc_error(L,
                                   "clgc.call: argument #%d (%s): callbacks "
                                   "only as nil here; use Event:on or "
                                   "Program:build for Lua callbacks",
                                   idx, c->params[i].name);
            v->fn = NULL;
            break;
        default: {
            lua_Integer n = lua_isboolean(L, idx)
                                ? lua_toboolean(L, idx)
                                : lua_tointegerx(L, idx, &isnum);
            v->u64 = (uint64_t)n; /* little-endian: narrower members share it */
            switch (c->params[i].ctype) {
            case CLGC_CTYPE_INT8:
                v->i8 = (int8_t)n;
                break;
            case CLGC_CTYPE_UINT8:
                v->u8 = (uint8_t)n;
                break;
            case CLGC_CTYPE_INT16:
                v->i16 = (int16_t)n;
                break;
            case CLGC_CTYPE_UINT16:
                v->u16 = (uint16_t)n;
                break;
            case CLGC_CTYPE_INT32:
                v->i32 = (int32_t)n;
                break;
            case CLGC_CTYPE_UINT32:
                v->u32 = (uint32_t)n;
                break;
            case CLGC_CTYPE_INTPTR:
                v->iptr = (intptr_t)n;
                break;
            case CLGC_CTYPE_SIZE:
                v->size = (size_t)n;
                break;
            default:
                break;
            }
            break;
        }
        }
        if (!isnum)
            return lclgc_error(L,
                               "clgc.call: argument #%d (%s %s): %s "
                               "expected, got %s",
                               idx, c->params[i].type, c->params[i].name,
                               lclgc_ctype_names[c->params[i].ctype],
                               lclgc_typename(L, idx));
    }
    for (unsigned i = 0; i < c->nparams; i++)
        if (c->params[i].ctype == CLGC_CTYPE_POINTER)
            args[i].value.p = lclgc_check_pointer(L, c, i, args);
    /* What OpenCL uses after the call, kept (a light userdata is the
     * caller's affair). */
    for (unsigned i = 0; i < c->nparams; i++) {
        int t = lua_type(L, (int)i + 2);

        keep[i] = t == LUA_TSTRING ||
                          (t == LUA_TUSERDATA &&
                           luaL_testudata(L, (int)i + 2, LCLGC_MEMORY) != NULL)
                      ? clgc_command_keep(c, i, args)
                      : CLGC_KEEP_CALL;
        until_done += keep[i] == CLGC_KEEP_COMMAND;
    }
    if (until_done > 0) {
        if ((e = clgc_command_event(c)) < 0)
            return lclgc_error(L,
                               "clgc.call: %s has no event to keep its "
                               "memory by",
                               name);
        if (args[e].value.p == NULL)
            args[e].value.p = &own; /* the binding's own, to keep memory */
        event = args[e].value.p;
    }
    err = clgc_command_call(c, c->nparams, args, &r);
    if (err != CLGC_OK)
        return lclgc_clgc_error(L, "clgc.call", err);
    for (unsigned i = 0; i < c->nparams; i++)
        if ((keep[i] == CLGC_KEEP_COMMAND && event != NULL && *event != NULL) ||
            (keep[i] == CLGC_KEEP_OBJECT && r.p != NULL &&
             strcmp(c->result_type, "cl_mem") == 0))
            lclgc_keep(L, (int)i + 2,
                       keep[i] == CLGC_KEEP_COMMAND ? *event : NULL, r.p);
    if (own != NULL)
        (void)clgc_clReleaseEvent(own);
    switch (c->result_ctype) {
    case CLGC_CTYPE_VOID:
        return 0;
    case CLGC_CTYPE_POINTER:
    case CLGC_CTYPE_FUNCTION:
        if (r.p == NULL)
            lua_pushnil(L);
        else
            lua_pushlightuserdata(L, r.p);
        return 1;
    case CLGC_CTYPE_INT32:
        lua_pushinteger(L, r.i32);
        return 1;
    case CLGC_CTYPE_UINT32:
        lua_pushinteger(L, r.u32);
        return 1;
    case CLGC_CTYPE_FLOAT:
        lua_pushnumber(L, r.f);
        return 1;
    case CLGC_CTYPE_DOUBLE:
        lua_pushnumber(L, r.d);
        return 1;
    default:
        lua_pushinteger(L, (lua_Integer)r.i64);
        return 1;
    }
}

/* wrap(kind, pointer) -> a handle that owns one reference to the object
 * (as returned by a clCreate* through call). */
static int
lclgc_wrap(lua_State *L)
{
    static const char *const kinds[] = {"Platform", "Device",  "Context",
                                        "Queue",    "Program", "Kernel",
                                        "Buffer",   "Event",   NULL};
    static const char *const names[] = {
        LCLGC_PLATFORM, LCLGC_DEVICE, LCLGC_CONTEXT, LCLGC_QUEUE,
        LCLGC_PROGRAM,  LCLGC_KERNEL, LCLGC_BUFFER,  LCLGC_EVENT};
    int k = lclgc_checkopt(L, 1, NULL, kinds, "clgc.wrap");

    lclgc_checktype(L, 2, LUA_TLIGHTUSERDATA, "clgc.wrap");
    if (lua_touserdata(L, 2) == NULL)
        return lclgc_error(L, "clgc.wrap: NULL pointer");
    lclgc_push_handle(L, names[k], lua_touserdata(L, 2));
    return 1;
}

/* command(name) -> {name=, result=, params={{name=, type=, ctype=}...},
 * may_block=, callback=, extension=, origin=} or nil */
static int
lclgc_command(lua_State *L)
{
    const clgc_command_t *c =
        clgc_command_find(lclgc_checkstr(L, 1, NULL, "clgc.command"));

    if (c == NULL)
        return 0;
    lua_createtable(L, 0, 8);
    lua_pushstring(L, c->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, c->result_type);
    lua_setfield(L, -2, "result");
    lua_pushstring(L, c->origin);
    lua_setfield(L, -2, "origin");
    lua_pushboolean(L, (c->flags & CLGC_COMMAND_MAY_BLOCK) != 0);
    lua_setfield(L, -2, "may_block");
    lua_pushboolean(L, (c->flags & CLGC_COMMAND_CALLBACK) != 0);
    lua_setfield(L, -2, "callback");
    lua_pushboolean(L, (c->flags & CLGC_COMMAND_EXTENSION) != 0);
    lua_setfield(L, -2, "extension");
    lua_createtable(L, (int)c->nparams, 0);
    for (unsigned i = 0; i < c->nparams; i++) {
        lua_createtable(L, 0, 3);
        lua_pushstring(L, c->params[i].name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, c->params[i].type);
        lua_setfield(L, -2, "type");
        lua_pushstring(L, lclgc_ctype_names[c->params[i].ctype]);
        lua_setfield(L, -2, "ctype");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "params");
    return 1;
}

/* commands() -> { name... } in name order */
static int
lclgc_commands(lua_State *L)
{
    size_t n = clgc_command_count();

    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushstring(L, clgc_command_at(i)->name);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

void
lclgc_open_generic(lua_State *L)
{
    static const luaL_Reg funcs[] = {{"call", lclgc_call},
                                     {"wrap", lclgc_wrap},
                                     {"command", lclgc_command},
                                     {"commands", lclgc_commands},
                                     {NULL, NULL}};

    luaL_setfuncs(L, funcs, 0);
}
