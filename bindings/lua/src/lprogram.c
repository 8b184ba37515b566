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
    const char *src = luaL_checklstring(L, 2, &len);
    cl_int err = CL_SUCCESS;
    cl_program p = clgc_clCreateProgramWithSource(c, 1, &src, &len, &err);

    if (p == NULL)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_PROGRAM, p);
    return 1;
}

/* Push the build logs of every device of the program, one after the
 * other ("" if there are none). */
static void
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
        return luaL_error(L, "clgc.Program:build: %s (%d)\n%s",
                          lclgc_cl_name(status), (int)status,
                          lua_tostring(L, -1));
    }
    return lclgc_cl_error(L, "clgc.Program:build", status);
}

/* Program:build_check(status): what clgc.lua calls once an asynchronous
 * build has completed. */
static int
lclgc_program_build_check(lua_State *L)
{
    cl_program p = lclgc_check(L, 1, LCLGC_PROGRAM, "clgc.Program:build");

    lclgc_build_check(L, p, (cl_int)luaL_checkinteger(L, 2));
    return 0;
}

/* The build notification: deferred to the state's queue, so this runs in a
 * drain on the owner thread. */
static void CL_CALLBACK
lclgc_build_notify(cl_program program, void *post)
{
    (void)program;
    lclgc_post_run(post, CL_SUCCESS);
}

/* Whether a build that returned err has called (or will call) its
 * notification: clgc/callback.h says a failed registration never does,
 * except a build that failed after it started. */
static int
lclgc_build_notified(cl_int err)
{
    return err == CL_SUCCESS || err == CL_BUILD_PROGRAM_FAILURE;
}

/* Program:build([options [, notify]]): build on this thread. notify, a
 * Lua function, runs as notify(0, program) in the drain that follows. */
static int
lclgc_program_build(lua_State *L)
{
    const char *fn = "clgc.Program:build";
    cl_program p = lclgc_check(L, 1, LCLGC_PROGRAM, fn);
    const char *opts = luaL_optstring(L, 2, NULL);
    lclgc_state *st = lclgc_state_get(L);
    struct lclgc_post *notify = NULL;
    clgc_queue_t *before;
    cl_int err;

    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TFUNCTION);
        notify = lclgc_post_new(L, 3, 1, "clgc.Program:build notify");
    }
    before = clgc_callbacks_deferred_to();
    (void)clgc_callbacks_defer(lclgc_state_queue(st));
    err = clgc_clBuildProgram(
        p, 0, NULL, opts, notify != NULL ? lclgc_build_notify : NULL, notify);
    (void)clgc_callbacks_defer(before);
    if (notify != NULL && !lclgc_build_notified(err))
        lclgc_post_free(notify);
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
    int notified;
};

static void
lclgc_build_work(struct lclgc_job *job)
{
    struct lclgc_build *b = (struct lclgc_build *)job;

    /* The deferral is the worker's own: its notification goes to the
     * owner's queue, never runs here. */
    if (b->notify != NULL)
        (void)clgc_callbacks_defer(lclgc_state_queue(job->st));
    job->status = clgc_clBuildProgram(
        b->program, 0, NULL, b->options,
        b->notify != NULL ? lclgc_build_notify : NULL, b->notify);
    (void)clgc_callbacks_defer(NULL);
    b->notified = lclgc_build_notified(job->status);
}

/* In the drain, on the owner thread, after done ran. */
static void
lclgc_build_finish(struct lclgc_job *job)
{
    struct lclgc_build *b = (struct lclgc_build *)job;

    if (b->notify != NULL && !b->notified)
        lclgc_post_free(b->notify);
    (void)clgc_clReleaseProgram(b->program);
    free(b->options);
    free(b);
}

/* Program:build_start(options, done [, notify]): build on a worker
 * thread; done(status, program) runs in a later drain. clgc.lua's build
 * yields until then. */
static int
lclgc_program_build_start(lua_State *L)
{
    const char *fn = "clgc.Program:build";
    cl_program p = lclgc_check(L, 1, LCLGC_PROGRAM, fn);
    const char *opts = luaL_optstring(L, 2, NULL);
    struct lclgc_build *b;

    luaL_checktype(L, 3, LUA_TFUNCTION);
    if (!lua_isnoneornil(L, 4))
        luaL_checktype(L, 4, LUA_TFUNCTION);
    b = calloc(1, sizeof(*b));
    if (b == NULL || (opts != NULL && (b->options = strdup(opts)) == NULL)) {
        free(b);
        return luaL_error(L, "%s: out of memory", fn);
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
    const char *name = luaL_checkstring(L, 2);
    cl_int err = CL_SUCCESS;
    cl_kernel k = clgc_clCreateKernel(p, name, &err);

    if (k == NULL)
        return luaL_error(L, "%s: %s (%d): '%s'", fn, lclgc_cl_name(err),
                          (int)err, name);
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
            luaL_error(L, "%s: %s value is not an integer: %s", fn,
                       lclgc_type_names[t], lua_tostring(L, idx));
    }
    if (!isnum)
        luaL_error(L, "%s: number expected for %s, got %s", fn,
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
    const char *name = luaL_checkstring(L, idx);

    for (int t = 0; lclgc_type_names[t] != NULL; t++)
        if (strcmp(lclgc_type_names[t], name) == 0)
            return t;
    return luaL_error(L,
                      "%s: unknown type '%s' (char, uchar, short, ushort, "
                      "int, uint, long, ulong, float, double, size_t)",
                      fn, name);
}

size_t
lclgc_type_size(int t)
{
    return lclgc_type_sizes[t];
}

/* Kernel:arg(index, value [, type]): index from 0, as OpenCL counts. value
 * is a Buffer, clgc.local(bytes), or a number with its type. */
static int
lclgc_kernel_arg(lua_State *L)
{
    const char *fn = "clgc.Kernel:arg";
    cl_kernel k = lclgc_check(L, 1, LCLGC_KERNEL, fn);
    lua_Integer i = luaL_checkinteger(L, 2);
    union {
        cl_double d;
        cl_ulong u;
        cl_mem m;
    } v;
    size_t size;
    const void *arg = &v;
    cl_int err;

    if (i < 0 || i > 0xffff)
        return luaL_error(L, "%s: CL_INVALID_ARG_INDEX (%d): index %I", fn,
                          CL_INVALID_ARG_INDEX, i);
    if (luaL_testudata(L, 3, LCLGC_BUFFER) != NULL) {
        v.m = lclgc_check(L, 3, LCLGC_BUFFER, fn);
        size = sizeof(cl_mem);
    } else if (luaL_testudata(L, 3, LCLGC_LOCAL) != NULL) {
        size = *(size_t *)lua_touserdata(L, 3);
        arg = NULL;
    } else if (lua_type(L, 3) == LUA_TNUMBER) {
        if (lua_isnoneornil(L, 4))
            return luaL_error(L,
                              "%s: argument #3: a number needs a type "
                              "(int, float, ...)",
                              fn);
        size = lclgc_store_scalar(L, 3, lclgc_check_type(L, 4, fn), &v, fn);
    } else {
        return luaL_error(L,
                          "%s: argument #3: %s, %s or number expected, "
                          "got %s",
                          fn, LCLGC_BUFFER, LCLGC_LOCAL, lclgc_typename(L, 3));
    }
    err = clgc_clSetKernelArg(k, (cl_uint)i, size, arg);
    if (err != CL_SUCCESS)
        return luaL_error(L, "%s: %s (%d): argument %I", fn, lclgc_cl_name(err),
                          (int)err, i);
    /* Keep a buffer argument alive as long as the kernel (user value 1, a
     * table by index); any other value lets the old one go. */
    if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, 1, 1);
    }
    if (arg == &v && size == sizeof(cl_mem) &&
        luaL_testudata(L, 3, LCLGC_BUFFER) != NULL)
        lua_pushvalue(L, 3);
    else
        lua_pushnil(L);
    lua_rawseti(L, -2, i);
    lua_settop(L, 1);
    return 1;
}

/* local(bytes): a kernel argument of local memory. */
static int
lclgc_local(lua_State *L)
{
    lua_Integer n = luaL_checkinteger(L, 1);
    size_t *s;

    luaL_argcheck(L, n > 0, 1, "clgc.local: size must be positive");
    s = lua_newuserdatauv(L, sizeof(*s), 0);
    *s = (size_t)n;
    luaL_setmetatable(L, LCLGC_LOCAL);
    return 1;
}

void
lclgc_open_program(lua_State *L)
{
    static const luaL_Reg context[] = {{"program", lclgc_context_program},
                                       {NULL, NULL}};
    static const luaL_Reg program[] = {
        {"build", lclgc_program_build},
        {"build_start", lclgc_program_build_start},
        {"build_check", lclgc_program_build_check},
        {"log", lclgc_program_log},
        {"kernel", lclgc_program_kernel},
        {NULL, NULL}};
    static const luaL_Reg kernel[] = {{"arg", lclgc_kernel_arg}, {NULL, NULL}};

    lclgc_add_methods(L, LCLGC_CONTEXT, context);
    lclgc_new_class(L, LCLGC_PROGRAM, program);
    lclgc_new_class(L, LCLGC_KERNEL, kernel);
    luaL_newmetatable(L, LCLGC_LOCAL);
    lua_pop(L, 1);
    lua_pushcfunction(L, lclgc_local);
    lua_setfield(L, -2, "local_mem");
}
