/* Every other OpenCL command, through clgc's metadata and generic call:
 * call(name, ...) with Lua values converted by each parameter's ctype, so
 * a Lua program is never stuck for want of a method. */

#include <string.h>

#include "lclgc.h"

static const char *const lclgc_ctype_names[] = {
    "void",  "int8",   "uint8",  "int16",   "uint16",
    "int32", "uint32", "int64",  "uint64",  "intptr",
    "size",  "float",  "double", "pointer", "function"};

/* A pointer argument: nil, a handle, Memory, a light userdata, or a
 * string (read-only bytes: for const char * parameters). */
static void *
lclgc_check_pointer(lua_State *L, int idx, const char *fn, unsigned i)
{
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
        return NULL;
    case LUA_TLIGHTUSERDATA:
        return lua_touserdata(L, idx);
    case LUA_TSTRING:
        return (void *)lua_tostring(L, idx);
    case LUA_TUSERDATA:
        if (luaL_testudata(L, idx, LCLGC_MEMORY) != NULL)
            return (size_t *)lua_touserdata(L, idx) + 1;
        if (lua_getmetatable(L, idx)) {
            const char *name;

            lua_getfield(L, -1, "__name");
            name = lua_tostring(L, -1);
            lua_pop(L, 2);
            if (name != NULL && strncmp(name, "clgc.", 5) == 0 &&
                strcmp(name, LCLGC_LOCAL) != 0)
                return lclgc_check(L, idx, name, fn);
        }
        break;
    default:
        break;
    }
    luaL_error(L,
               "%s: argument #%d: pointer expected (nil, a handle, "
               "clgc.Memory, a light userdata or a string), got %s",
               fn, (int)i + 2, lclgc_typename(L, idx));
    return NULL;
}

/* call(name, ...) -> the command's result (a cl_int code as an integer,
 * an object as a light userdata, for clgc.wrap). */
static int
lclgc_call(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    const clgc_command_t *c = clgc_command_find(name);
    clgc_arg_t args[CLGC_CLOSURE_MAX_ARGS];
    clgc_value_t r;
    int err;

    if (c == NULL)
        return luaL_error(L, "clgc.call: no OpenCL command named '%s'", name);
    if (c->nparams > CLGC_CLOSURE_MAX_ARGS)
        return luaL_error(L, "clgc.call: %s has too many parameters", name);
    if ((unsigned)lua_gettop(L) - 1 != c->nparams)
        return luaL_error(L, "clgc.call: %s takes %d arguments, got %d", name,
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
            v->p = lclgc_check_pointer(L, idx, "clgc.call", i);
            break;
        case CLGC_CTYPE_FUNCTION:
            if (!lua_isnil(L, idx))
                return luaL_error(L,
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
            return luaL_error(L,
                              "clgc.call: argument #%d (%s %s): %s "
                              "expected, got %s",
                              idx, c->params[i].type, c->params[i].name,
                              lclgc_ctype_names[c->params[i].ctype],
                              lclgc_typename(L, idx));
    }
    err = clgc_command_call(c, c->nparams, args, &r);
    if (err != CLGC_OK)
        return lclgc_clgc_error(L, "clgc.call", err);
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
    int k = luaL_checkoption(L, 1, NULL, kinds);

    luaL_checktype(L, 2, LUA_TLIGHTUSERDATA);
    if (lua_touserdata(L, 2) == NULL)
        return luaL_error(L, "clgc.wrap: NULL pointer");
    lclgc_push_handle(L, names[k], lua_touserdata(L, 2));
    return 1;
}

/* command(name) -> {name=, result=, params={{name=, type=, ctype=}...},
 * may_block=, callback=, extension=, origin=} or nil */
static int
lclgc_command(lua_State *L)
{
    const clgc_command_t *c = clgc_command_find(luaL_checkstring(L, 1));

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
