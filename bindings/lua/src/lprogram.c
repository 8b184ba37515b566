/* Programs (from source, built on a worker thread or in place, with the
 * build log in the error), kernels and their arguments. */

#include <stdlib.h>
#include <string.h>

#include "lclgc.h"

/* Context:program(source) -> Program */
static int
lclgc_context_program(lua_State *L)
{
    const char *fn = "clgc.Context:program";
    cl_context c = lclgc_check(L, 1, LCLGC_CONTEXT, fn);
    size_t len;
    const char *src = lclgc_checkstr(L, 2, &len, fn);
    cl_int err = CL_SUCCESS;
    cl_program p = clgc_clCreateProgramWithSource(c, 1, &src, &len, &err);

    if (p == NULL)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_PROGRAM, p);
    return 1;
}

/* Push the build logs of every device of the program, one after the
 * other ("" if there are none). */
void
lclgc_push_log(lua_State *L, cl_program p)
{
    size_t size = 0;
    cl_device_id *ids;

    if (clgc_clGetProgramInfo(p, CL_PROGRAM_DEVICES, 0, NULL, &size) !=
        CL_SUCCESS)
        size = 0;
    ids = lua_newuserdatauv(L, size + sizeof(*ids), 0);
    if (size > 0 && clgc_clGetProgramInfo(p, CL_PROGRAM_DEVICES, size, ids,
                                          NULL) != CL_SUCCESS)
        size = 0;
    lua_pushliteral(L, "");
    for (size_t i = 0; i < size / sizeof(*ids); i++) {
        size_t n = 0;
        char *log;

        if (clgc_clGetProgramBuildInfo(p, ids[i], CL_PROGRAM_BUILD_LOG, 0, NULL,
                                       &n) != CL_SUCCESS ||
            n == 0)
            continue;
        log = lua_newuserdatauv(L, n + 1, 0);
        if (clgc_clGetProgramBuildInfo(p, ids[i], CL_PROGRAM_BUILD_LOG, n, log,
                                       NULL) != CL_SUCCESS)
            n = 0;
        log[n] = 0;
        lua_pushstring(L, log);
        lua_remove(L, -2);
        lua_concat(L, 2);
    }
    lua_remove(L, -2); /* ids */
}

static int
lclgc_program_log(lua_State *L)
{
    lclgc_push_log(L, lclgc_check(L, 1, LCLGC_PROGRAM, "clgc.Program:log"));
    return 1;
}

/* Raise the build's error, with the log, if status says it failed. */
static int
lclgc_build_check(lua_State *L, cl_program p, cl_int status)
{
    if (status == CL_SUCCESS)
        return 0;
    if (status == CL_BUILD_PROGRAM_FAILURE) {
        lclgc_push_log(L, p);
        return lclgc_fail(L, "clgc.Program:build", status,
                          lclgc_cl_name(status), lua_tostring(L, -1), NULL);
    }
    return lclgc_cl_error(L, "clgc.Program:build", status);
}

/* build_check(program, status): what clgc.lua calls once an asynchronous
 * build has completed. */
static int
lclgc_program_build_check(lua_State *L)
{
    cl_program p = lclgc_check(L, 1, LCLGC_PROGRAM, "clgc.Program:build");

    lclgc_build_check(L, p, (cl_int)lclgc_checkint(L, 2, "clgc.Program:build"));
    return 0;
}

/* The options a build is given: the user's, plus -cl-kernel-arg-info,
 * without which Kernel:arg could not tell a pointer argument from a
 * number (clgc/binding.h). Pushed on the stack. */
static const char *
lclgc_build_options(lua_State *L, int idx, const char *fn)
{
    return lua_pushfstring(L, "%s -cl-kernel-arg-info",
                           lclgc_optstr(L, idx, "", fn));
}

/* Program:build([options [, notify]]): build on this thread. notify, a
 * Lua function, runs as notify(status, program) in the drain that
 * follows, once, whatever the build's status.
 *
 * The binding posts the notification itself rather than hand OpenCL a
 * callback: whether a failed clBuildProgram has called its callback
 * depends on the driver (PoCL calls it for options it rejects, against
 * clgc's rule that a failed registration is never called back), and a
 * record freed on the wrong guess was run after its free. A build without
 * a callback is synchronous on every driver, which is what both paths
 * assume anyway. */
static int
lclgc_program_build(lua_State *L)
{
    const char *fn = "clgc.Program:build";
    cl_program p = lclgc_check(L, 1, LCLGC_PROGRAM, fn);
    const char *opts = lclgc_build_options(L, 2, fn);
    struct lclgc_post *notify = NULL;
    cl_int err;

    if (!lua_isnoneornil(L, 3)) {
        lclgc_checktype(L, 3, LUA_TFUNCTION, fn);
        notify = lclgc_post_new(L, 3, 1, "clgc.Program:build notify");
    }
    err = clgc_clBuildProgram(p, 0, NULL, opts, NULL, NULL);
    if (notify != NULL && lclgc_post_queue(notify, err) != CLGC_OK)
        return lclgc_error(L, "%s: out of memory", fn);
    /* Run the notification now, unless this build is itself in a handler
     * (the drain running it will get there). */
    if (notify != NULL && !lclgc_is_draining(L)) {
        lclgc_drain(L, 0, fn);
        lclgc_raise_failures(L, fn);
    }
    lclgc_build_check(L, p, err);
    lua_settop(L, 1);
    return 1;
}

struct lclgc_build {
    struct lclgc_job job;
    cl_program program;
    char *options;
    struct lclgc_post *notify;
};

static void
lclgc_build_work(struct lclgc_job *job)
{
    struct lclgc_build *b = (struct lclgc_build *)job;

    job->status =
        clgc_clBuildProgram(b->program, 0, NULL, b->options, NULL, NULL);
}

/* In the drain, on the owner thread, after done ran: the notification
 * runs in the same drain (lclgc_program_build says why it is ours). */
static void
lclgc_build_finish(struct lclgc_job *job)
{
    struct lclgc_build *b = (struct lclgc_build *)job;

    if (b->notify != NULL && job->lost)
        free(b->notify);
    else if (b->notify != NULL)
        lclgc_post_run(b->notify, job->status);
    (void)clgc_clReleaseProgram(b->program);
    free(b->options);
    free(b);
}

/* build_start(program, options, done [, notify]): build on a worker
 * thread; done(status, program) runs in a later drain. clgc.lua's build
 * yields until then. */
static int
lclgc_program_build_start(lua_State *L)
{
    const char *fn = "clgc.Program:build";
    cl_program p = lclgc_check(L, 1, LCLGC_PROGRAM, fn);
    const char *opts = lclgc_build_options(L, 2, fn);
    struct lclgc_build *b;

    lclgc_checktype(L, 3, LUA_TFUNCTION, fn);
    if (!lua_isnoneornil(L, 4))
        lclgc_checktype(L, 4, LUA_TFUNCTION, fn);
    b = calloc(1, sizeof(*b));
    if (b == NULL || (b->options = strdup(opts)) == NULL) {
        free(b);
        return lclgc_error(L, "%s: out of memory", fn);
    }
    b->program = p;
    b->job.work = lclgc_build_work;
    b->job.finish = lclgc_build_finish;
    b->job.done = lclgc_post_new(L, 3, 1, "clgc.Program:build");
    if (!lua_isnoneornil(L, 4))
        b->notify = lclgc_post_new(L, 4, 1, "clgc.Program:build notify");
    (void)clgc_clRetainProgram(p); /* a :release() meanwhile must wait */
    if (lclgc_job_start(L, &b->job, fn) != 0) {
        (void)clgc_clReleaseProgram(p);
        lclgc_post_free(b->job.done);
        lclgc_post_free(b->notify);
        free(b->options);
        free(b);
    }
    return 0;
}

/* Program:kernel(name) -> Kernel */
static int
lclgc_program_kernel(lua_State *L)
{
    const char *fn = "clgc.Program:kernel";
    cl_program p = lclgc_check(L, 1, LCLGC_PROGRAM, fn);
    const char *name = lclgc_checkstr(L, 2, NULL, fn);
    cl_int err = CL_SUCCESS;
    cl_kernel k = clgc_clCreateKernel(p, name, &err);

    if (k == NULL)
        return lclgc_fail(L, fn, err, lclgc_cl_name(err), NULL, "'%s'", name);
    lclgc_push_handle(L, LCLGC_KERNEL, k);
    return 1;
}

/* Scalar types of kernel arguments and buffer elements. */
static const char *const lclgc_type_names[] = {
    "char", "uchar", "short", "ushort", "int",    "uint",
    "long", "ulong", "float", "double", "size_t", NULL};
static const size_t lclgc_type_sizes[] = {
    1, 1, 2, 2, 4, 4, 8, 8, 4, 8, sizeof(size_t)};

/* Store the number at idx as type t into out; return its size. */
size_t
lclgc_store_scalar(lua_State *L, int idx, int t, void *out, const char *fn)
{
    int isnum;
    lua_Integer i = 0;
    lua_Number d = 0;

    if (t == 8 || t == 9) {
        d = lua_tonumberx(L, idx, &isnum);
    } else {
        i = lua_tointegerx(L, idx, &isnum);
        if (!isnum && lua_type(L, idx) == LUA_TNUMBER)
            lclgc_error(L, "%s: %s value is not an integer: %s", fn,
                        lclgc_type_names[t], lua_tostring(L, idx));
    }
    if (!isnum)
        lclgc_error(L, "%s: number expected for %s, got %s", fn,
                    lclgc_type_names[t], lclgc_typename(L, idx));
    switch (t) {
    case 0:
        *(cl_char *)out = (cl_char)i;
        break;
    case 1:
        *(cl_uchar *)out = (cl_uchar)i;
        break;
    case 2:
        *(cl_short *)out = (cl_short)i;
        break;
    case 3:
        *(cl_ushort *)out = (cl_ushort)i;
        break;
    case 4:
        *(cl_int *)out = (cl_int)i;
        break;
    case 5:
        *(cl_uint *)out = (cl_uint)i;
        break;
    case 6:
        *(cl_long *)out = (cl_long)i;
        break;
    case 7:
        *(cl_ulong *)out = (cl_ulong)i;
        break;
    case 8:
        *(cl_float *)out = (cl_float)d;
        break;
    case 9:
        *(cl_double *)out = (cl_double)d;
        break;
    default:
        *(size_t *)out = (size_t)i;
        break;
    }
    return lclgc_type_sizes[t];
}

void
lclgc_push_scalar(lua_State *L, int t, const void *in)
{
    switch (t) {
    case 0:
        lua_pushinteger(L, *(const cl_char *)in);
        break;
    case 1:
        lua_pushinteger(L, *(const cl_uchar *)in);
        break;
    case 2:
        lua_pushinteger(L, *(const cl_short *)in);
        break;
    case 3:
        lua_pushinteger(L, *(const cl_ushort *)in);
        break;
    case 4:
        lua_pushinteger(L, *(const cl_int *)in);
        break;
    case 5:
        lua_pushinteger(L, *(const cl_uint *)in);
        break;
    case 6:
        lua_pushinteger(L, *(const cl_long *)in);
        break;
    case 7:
        lua_pushinteger(L, (lua_Integer) * (const cl_ulong *)in);
        break;
    case 8:
        lua_pushnumber(L, *(const cl_float *)in);
        break;
    case 9:
        lua_pushnumber(L, *(const cl_double *)in);
        break;
    default:
        lua_pushinteger(L, (lua_Integer) * (const size_t *)in);
        break;
    }
}

int
lclgc_check_type(lua_State *L, int idx, const char *fn)
{
    const char *name = lclgc_checkstr(L, idx, NULL, fn);

    for (int t = 0; lclgc_type_names[t] != NULL; t++)
        if (strcmp(lclgc_type_names[t], name) == 0)
            return t;
    return lclgc_error(L,
                       "%s: unknown type '%s' (char, uchar, short, ushort, "
                       "int, uint, long, ulong, float, double, size_t)",
                       fn, name);
}

size_t
lclgc_type_size(int t)
{
    return lclgc_type_sizes[t];
}

/* A vector kernel argument: the table at idx, of the vector type named at
 * type_idx ("float4": a scalar type and 2, 3, 4, 8 or 16), stored into out
 * (128 bytes). A 3-vector takes a 4-vector's size, as OpenCL lays it
 * out. Returns the size. */
static size_t
lclgc_store_vector(lua_State *L, int idx, int type_idx, char *out,
                   const char *fn)
{
    const char *name;
    size_t len, blen, n, es;
    int t = -1;

    if (lua_isnoneornil(L, type_idx))
        return (size_t)lclgc_error(L,
                                   "%s: argument #3: a table needs a vector "
                                   "type (float4, int2, ...)",
                                   fn);
    name = lclgc_checkstr(L, type_idx, &len, fn);
    for (blen = len; blen > 0 && name[blen - 1] >= '0' && name[blen - 1] <= '9';
         blen--)
        ;
    n = (size_t)strtoul(name + blen, NULL, 10);
    for (int i = 0; blen < len && lclgc_type_names[i] != NULL; i++)
        if (strlen(lclgc_type_names[i]) == blen &&
            strncmp(lclgc_type_names[i], name, blen) == 0 && i != 10)
            t = i;
    if (t < 0 || len - blen > 2 ||
        (n != 2 && n != 3 && n != 4 && n != 8 && n != 16))
        return (size_t)lclgc_error(L,
                                   "%s: unknown vector type '%s' (a scalar "
                                   "type and 2, 3, 4, 8 or 16: float4)",
                                   fn, name);
    if (lua_rawlen(L, idx) != n)
        return (size_t)lclgc_error(L,
                                   "%s: %s takes %d numbers, got a table of %d",
                                   fn, name, (int)n, (int)lua_rawlen(L, idx));
    es = lclgc_type_sizes[t];
    memset(out, 0, 128);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, idx, (lua_Integer)i + 1);
        lclgc_store_scalar(L, -1, t, out + i * es, fn);
        lua_pop(L, 1);
    }
    return (n == 3 ? 4 : n) * es;
}

/* The kernel's argument table (clgc/binding.h), made at its first
 * Kernel:arg: its user value, a handle of the hidden class
 * LCLGC_KERNEL_ARGS whose release frees it (and lets go of the buffers,
 * images and samplers it holds). NULL if there is none yet and make is
 * 0. */
static clgc_kernel_args_t *
lclgc_kernel_args(lua_State *L, int idx, cl_kernel k, int make, const char *fn)
{
    clgc_kernel_args_t *t;
    cl_int err;

    if (lua_getiuservalue(L, idx, 1) == LUA_TUSERDATA) {
        t = ((lclgc_handle *)lua_touserdata(L, -1))->obj;
        lua_pop(L, 1);
        return t;
    }
    lua_pop(L, 1);
    if (!make)
        return NULL;
    if ((t = clgc_kernel_args_new(k, &err)) == NULL)
        lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_KERNEL_ARGS, t);
    lua_setiuservalue(L, idx, 1);
    return t;
}

/* Raise the table's failure err, with its sentence. */
static int
lclgc_args_error(lua_State *L, clgc_kernel_args_t *t, cl_int err,
                 const char *fn)
{
    return lclgc_fail(L, fn, err, lclgc_cl_name(err), NULL, "%s",
                      clgc_kernel_args_message(t));
}

/* Raise unless the kernel may be launched: every argument set, where
 * they were set through Kernel:arg (Queue:launch). */
void
lclgc_kernel_ready(lua_State *L, int idx, cl_kernel k, const char *fn)
{
    clgc_kernel_args_t *t = lclgc_kernel_args(L, idx, k, 0, fn);
    cl_int err = t != NULL ? clgc_kernel_args_ready(t) : CL_SUCCESS;

    if (err != CL_SUCCESS)
        lclgc_args_error(L, t, err, fn);
}

/* Kernel:arg(index, value [, type]): index from 0, as OpenCL counts. value
 * is a Buffer, an Image, a Sampler, clgc.local_mem(bytes), a number with
 * its type, a table of numbers with a vector type, or a string of a
 * structure's bytes; the library checks it against what the kernel
 * declares, and holds the objects. */
static int
lclgc_kernel_arg(lua_State *L)
{
    const char *fn = "clgc.Kernel:arg";
    cl_kernel k = lclgc_check(L, 1, LCLGC_KERNEL, fn);
    lua_Integer i = lclgc_checkint(L, 2, fn);
    clgc_kernel_args_t *t;
    union {
        cl_double d;
        cl_ulong u;
        char bytes[128]; /* a vector: at most 16 elements of 8 bytes */
    } v;
    size_t size;
    const void *arg = &v;
    clgc_arg_kind_t given;
    cl_int err;

    if (i < 0 || i > 0xffff)
        return lclgc_fail(L, fn, CL_INVALID_ARG_INDEX, "CL_INVALID_ARG_INDEX",
                          NULL, "index %I", i);
    if (luaL_testudata(L, 3, LCLGC_BUFFER) != NULL)
        given = CLGC_ARG_BUFFER;
    else if (luaL_testudata(L, 3, LCLGC_IMAGE) != NULL)
        given = CLGC_ARG_IMAGE;
    else if (luaL_testudata(L, 3, LCLGC_SAMPLER) != NULL)
        given = CLGC_ARG_SAMPLER;
    else if (luaL_testudata(L, 3, LCLGC_LOCAL) != NULL)
        given = CLGC_ARG_LOCAL;
    else if (lua_type(L, 3) == LUA_TNUMBER || lua_type(L, 3) == LUA_TTABLE ||
             lua_type(L, 3) == LUA_TSTRING)
        given = CLGC_ARG_VALUE;
    else
        return lclgc_error(L,
                           "%s: argument #3: %s, %s, %s, %s, number, table "
                           "or string expected, got %s",
                           fn, LCLGC_BUFFER, LCLGC_IMAGE, LCLGC_SAMPLER,
                           LCLGC_LOCAL, lclgc_typename(L, 3));
    t = lclgc_kernel_args(L, 1, k, 1, fn);
    /* A kind the argument does not take is a misuse, as the wrong type of
     * a Lua argument is. */
    err = clgc_kernel_args_check(t, (cl_uint)i, given);
    if (err == CL_INVALID_ARG_VALUE)
        return lclgc_error(L, "%s: argument #3: %s (got %s)", fn,
                           clgc_kernel_args_message(t), lclgc_typename(L, 3));
    if (err == CL_SUCCESS &&
        (given == CLGC_ARG_BUFFER || given == CLGC_ARG_IMAGE))
        err = clgc_kernel_args_set_mem(
            t, (cl_uint)i,
            lclgc_check(L, 3,
                        given == CLGC_ARG_BUFFER ? LCLGC_BUFFER : LCLGC_IMAGE,
                        fn));
    else if (err == CL_SUCCESS && given == CLGC_ARG_SAMPLER)
        err = clgc_kernel_args_set_sampler(
            t, (cl_uint)i, lclgc_check(L, 3, LCLGC_SAMPLER, fn));
    else if (err == CL_SUCCESS && given == CLGC_ARG_LOCAL)
        err = clgc_kernel_args_set_local(t, (cl_uint)i,
                                         *(size_t *)lua_touserdata(L, 3));
    else if (err == CL_SUCCESS) {
        if (lua_type(L, 3) == LUA_TTABLE) {
            size = lclgc_store_vector(L, 3, 4, v.bytes, fn);
        } else if (lua_type(L, 3) == LUA_TSTRING) {
            /* A structure's bytes (string.pack). */
            arg = lua_tolstring(L, 3, &size);
            if (size == 0)
                return lclgc_error(L, "%s: argument #3: an empty string", fn);
        } else if (lua_isnoneornil(L, 4)) {
            return lclgc_error(L,
                               "%s: argument #3: a number needs a type "
                               "(int, float, ...)",
                               fn);
        } else {
            size = lclgc_store_scalar(L, 3, lclgc_check_type(L, 4, fn), &v, fn);
        }
        err = clgc_kernel_args_set_value(t, (cl_uint)i, size, arg);
    }
    if (err != CL_SUCCESS)
        return lclgc_args_error(L, t, err, fn);
    lua_settop(L, 1);
    return 1;
}

/* local(bytes): a kernel argument of local memory. */
static int
lclgc_local(lua_State *L)
{
    lua_Integer n = lclgc_checkint(L, 1, "clgc.local_mem");
    size_t *s;

    if (n <= 0)
        return lclgc_error(L, "clgc.local_mem: argument #1: size must be "
                              "positive");
    s = lua_newuserdatauv(L, sizeof(*s), 0);
    *s = (size_t)n;
    luaL_setmetatable(L, LCLGC_LOCAL);
    return 1;
}

void
lclgc_internal_program(lua_State *L)
{
    lua_pushcfunction(L, lclgc_program_build_start);
    lua_setfield(L, -2, "build_start");
    lua_pushcfunction(L, lclgc_program_build_check);
    lua_setfield(L, -2, "build_check");
}

void
lclgc_open_program(lua_State *L)
{
    static const luaL_Reg context[] = {{"program", lclgc_context_program},
                                       {NULL, NULL}};
    static const luaL_Reg program[] = {{"build", lclgc_program_build},
                                       {"log", lclgc_program_log},
                                       {"kernel", lclgc_program_kernel},
                                       {NULL, NULL}};
    static const luaL_Reg kernel[] = {{"arg", lclgc_kernel_arg}, {NULL, NULL}};

    lclgc_add_methods(L, LCLGC_CONTEXT, context);
    lclgc_new_class(L, LCLGC_PROGRAM, program);
    lclgc_new_class(L, LCLGC_KERNEL, kernel);
    lclgc_new_class(L, LCLGC_KERNEL_ARGS, NULL);
    luaL_newmetatable(L, LCLGC_LOCAL);
    lua_pushboolean(L, 0); /* protected, as the handles' (lclgc.c) */
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
    lua_pushcfunction(L, lclgc_local);
    lua_setfield(L, -2, "local_mem");
}
