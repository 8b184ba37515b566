/* Programs from binaries, and separate compilation: compile with
 * embedded headers, link with libraries. A program's binaries are
 * Program:info("binaries") (linfo.c). Compile and link block the thread,
 * as Program:build does outside a coroutine. */

#include <stdlib.h>
#include <string.h>

#include "lclgc.h"

/* Context:program_binaries(devices, binaries) -> Program: one binary (a
 * string) per device, as Program:info("binaries") gives them; build it
 * before use. Junk is refused or padded by the library
 * (clgc_program_with_binaries, clgc/binding.h). */
static int
lclgc_context_program_binaries(lua_State *L)
{
    const char *fn = "clgc.Context:program_binaries";
    cl_context c = lclgc_check(L, 1, LCLGC_CONTEXT, fn);
    cl_uint n, nb;
    cl_device_id *ids;
    const unsigned char **bins;
    size_t *lens;
    cl_int *status, err = CL_SUCCESS;
    cl_program p;

    /* The binaries before the devices, whose array is pushed: at 3 it
     * would be taken for the binaries when none are passed. */
    if (lua_type(L, 3) == LUA_TSTRING) {
        lua_createtable(L, 1, 0);
        lua_pushvalue(L, 3);
        lua_rawseti(L, -2, 1);
        lua_replace(L, 3);
    }
    lclgc_checktype(L, 3, LUA_TTABLE, fn);
    ids = lclgc_check_devices(L, 2, &n, fn);
    nb = (cl_uint)lclgc_rawlen(L, 3, fn);
    if (nb != n)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "%d binaries for %d devices", (int)nb, (int)n);
    bins = lua_newuserdatauv(L, n * sizeof(*bins), 0);
    lens = lua_newuserdatauv(L, n * sizeof(*lens), 0);
    status = lua_newuserdatauv(L, n * sizeof(*status), 0);
    for (cl_uint i = 0; i < n; i++) {
        /* The table at 3 keeps the strings for the call. */
        lua_rawgeti(L, 3, i + 1);
        if (lua_type(L, -1) != LUA_TSTRING || lua_rawlen(L, -1) == 0)
            return lclgc_error(L, "%s: binary %d: a non-empty string expected",
                               fn, (int)i + 1);
        bins[i] = (const unsigned char *)lua_tolstring(L, -1, &lens[i]);
        lua_pop(L, 1);
    }
    p = clgc_program_with_binaries(c, n, ids, lens, bins, status, &err);
    if (p == NULL) {
        for (cl_uint i = 0; i < n; i++)
            if (status[i] != CL_SUCCESS)
                return lclgc_fail(L, fn, err, lclgc_cl_name(err), NULL,
                                  "binary %d: %s (%d)", (int)i + 1,
                                  lclgc_cl_name(status[i]), (int)status[i]);
        return lclgc_cl_error(L, fn, err);
    }
    lclgc_push_handle(L, LCLGC_PROGRAM, p);
    return 1;
}

/* Raise fn's error object for err, with p's build logs as its log. */
static int
lclgc_log_error(lua_State *L, const char *fn, cl_program p, cl_int err)
{
    lclgc_push_log(L, p);
    return lclgc_fail(L, fn, err, lclgc_cl_name(err), lua_tostring(L, -1),
                      NULL);
}

/* Program:compile([options [, headers]]) -> self: headers is a table of
 * include names to programs made from their source ({["defs.h"] =
 * ctx:program(src)}). -cl-kernel-arg-info is added to the options, as a
 * build adds it. */
static int
lclgc_program_compile(lua_State *L)
{
    const char *fn = "clgc.Program:compile";
    cl_program p = lclgc_check(L, 1, LCLGC_PROGRAM, fn);
    const char *opts;
    int opts_idx;
    cl_uint n = 0;
    cl_program *hs = NULL;
    const char **names = NULL;
    cl_int err;

    /* The options' copy goes above the arguments: at 3 it would be taken
     * for the headers when none are passed. */
    lua_settop(L, 3);
    opts = lua_pushfstring(L, "%s -cl-kernel-arg-info",
                           lclgc_optstr(L, 2, "", fn));
    opts_idx = lua_gettop(L);

    if (!lua_isnoneornil(L, 3)) {
        lclgc_checktype(L, 3, LUA_TTABLE, fn);
        lua_pushnil(L);
        while (lua_next(L, 3) != 0) {
            if (n == 1024)
                return lclgc_error(L, "%s: too many headers", fn);
            n++;
            lua_pop(L, 1);
        }
        hs = lua_newuserdatauv(L, (n + 1) * sizeof(*hs), 0);
        names = lua_newuserdatauv(L, (n + 1) * sizeof(*names), 0);
        n = 0;
        lua_pushnil(L);
        while (lua_next(L, 3) != 0) {
            if (lua_type(L, -2) != LUA_TSTRING)
                return lclgc_error(L,
                                   "%s: argument #3: header names (strings) "
                                   "expected as keys, got %s",
                                   fn, luaL_typename(L, -2));
            if (luaL_testudata(L, -1, LCLGC_PROGRAM) == NULL) {
                const char *key = lua_tostring(L, -2);
                const char *got = lclgc_typename(L, -1); /* pushes */

                return lclgc_error(L,
                                   "%s: argument #3: header '%s': %s "
                                   "expected, got %s",
                                   fn, key, LCLGC_PROGRAM, got);
            }
            hs[n] = lclgc_check(L, -1, LCLGC_PROGRAM, fn);
            names[n] = lua_tostring(L, -2); /* a key of the table at 3 */
            n++;
            lua_pop(L, 1);
        }
    }
    opts = lua_tostring(L, opts_idx);
    err = clgc_clCompileProgram(p, 0, NULL, opts, n, n ? hs : NULL,
                                n ? names : NULL, NULL, NULL);
    if (err == CL_COMPILE_PROGRAM_FAILURE)
        return lclgc_log_error(L, fn, p, err);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lua_settop(L, 1);
    return 1;
}

/* Context:link(programs [, options]) -> Program: compiled programs (or
 * libraries, linked with "-create-library") into an executable one, with
 * -cl-kernel-arg-info added to the options. */
static int
lclgc_context_link(lua_State *L)
{
    const char *fn = "clgc.Context:link";
    cl_context c = lclgc_check(L, 1, LCLGC_CONTEXT, fn);
    const char *opts;
    cl_uint n;
    cl_program *ps, p;
    cl_int err = CL_SUCCESS;

    /* -cl-kernel-arg-info again: without it PoCL's linked kernels have no
     * argument information, and Kernel:arg could not check kinds. Pushed
     * above the arguments, where a missing one cannot be taken for it. */
    if (lua_isnone(L, 2))
        lclgc_checktype(L, 2, LUA_TTABLE, fn);
    lua_settop(L, 3);
    opts = lua_pushfstring(L, "%s -cl-kernel-arg-info",
                           lclgc_optstr(L, 3, "", fn));

    if (luaL_testudata(L, 2, LCLGC_PROGRAM) != NULL) {
        lua_createtable(L, 1, 0);
        lua_pushvalue(L, 2);
        lua_rawseti(L, -2, 1);
        lua_replace(L, 2);
    }
    lclgc_checktype(L, 2, LUA_TTABLE, fn);
    n = (cl_uint)lclgc_rawlen(L, 2, fn);
    if (n == 0)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "no programs");
    ps = lua_newuserdatauv(L, n * sizeof(*ps), 0);
    for (cl_uint i = 0; i < n; i++) {
        lua_rawgeti(L, 2, i + 1);
        ps[i] = lclgc_check(L, -1, LCLGC_PROGRAM, fn);
        lua_pop(L, 1);
    }
    p = clgc_clLinkProgram(c, 0, NULL, opts, n, ps, NULL, NULL, &err);
    if (p != NULL && err != CL_SUCCESS) {
        /* A failed link may still make a program, for its log. */
        lclgc_push_handle(L, LCLGC_PROGRAM, p);
        return lclgc_log_error(L, fn, p, err);
    }
    if (p == NULL)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_PROGRAM, p);
    return 1;
}

void
lclgc_open_binary(lua_State *L)
{
    static const luaL_Reg context[] = {
        {"program_binaries", lclgc_context_program_binaries},
        {"link", lclgc_context_link},
        {NULL, NULL}};
    static const luaL_Reg program[] = {{"compile", lclgc_program_compile},
                                       {NULL, NULL}};

    lclgc_add_methods(L, LCLGC_CONTEXT, context);
    lclgc_add_methods(L, LCLGC_PROGRAM, program);
}
