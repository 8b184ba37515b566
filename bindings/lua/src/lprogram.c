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
 * number (lclgc_arg_kind). Pushed on the stack. */
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

/* What an argument of the kernel takes, from clGetKernelArgInfo (the
 * binding builds with -cl-kernel-arg-info): OpenCL checks only a value's
 * size, and a long given for a __global pointer, or a local size for one,
 * would be taken for a cl_mem and crash the driver at the launch. */
enum lclgc_arg_kind {
    LCLGC_ARG_UNKNOWN, /* no information: the program was built elsewhere */
    LCLGC_ARG_BUFFER,  /* a __global or __constant pointer */
    LCLGC_ARG_LOCAL,   /* a __local pointer */
    LCLGC_ARG_VALUE,   /* a scalar, vector or structure by value */
    LCLGC_ARG_OTHER,   /* a pipe, a queue, ...: not supported */
    LCLGC_ARG_IMAGE,   /* an image: a clgc.Image */
    LCLGC_ARG_SAMPLER  /* a sampler_t: a clgc.Sampler */
};

/* Whether a by-value type is an opaque one of OpenCL C's (its size is a
 * pointer's, and any number given for it would be taken for one). */
static int
lclgc_opaque_type(const char *type)
{
    static const char *const opaque[] = {
        "sampler_t", "queue_t", "clk_event_t", "reserve_id_t", "event_t", NULL};

    if (strncmp(type, "image", 5) == 0)
        return 1;
    for (int i = 0; opaque[i] != NULL; i++)
        if (strcmp(type, opaque[i]) == 0)
            return 1;
    return 0;
}

static enum lclgc_arg_kind
lclgc_arg_kind(lua_State *L, cl_kernel k, lua_Integer i, const char *fn)
{
    cl_kernel_arg_address_qualifier aq = 0;
    cl_kernel_arg_type_qualifier tq = 0;
    char type[256] = "";
    cl_int err = clgc_clGetKernelArgInfo(
        k, (cl_uint)i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(aq), &aq, NULL);

    if (err == CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
        return LCLGC_ARG_UNKNOWN;
    if (err == CL_SUCCESS)
        err = clgc_clGetKernelArgInfo(k, (cl_uint)i, CL_KERNEL_ARG_TYPE_NAME,
                                      sizeof(type) - 1, type, NULL);
    if (err == CL_SUCCESS)
        err = clgc_clGetKernelArgInfo(
            k, (cl_uint)i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof(tq), &tq, NULL);
    if (err != CL_SUCCESS)
        lclgc_fail(L, fn, err, lclgc_cl_name(err), NULL, "argument %I", i);
    if ((tq & CL_KERNEL_ARG_TYPE_PIPE) != 0)
        return LCLGC_ARG_OTHER;
    if (strchr(type, '*') == NULL && strncmp(type, "image", 5) == 0)
        return LCLGC_ARG_IMAGE;
    if (strchr(type, '*') == NULL && strcmp(type, "sampler_t") == 0)
        return LCLGC_ARG_SAMPLER;
    if (strchr(type, '*') == NULL)
        return aq == CL_KERNEL_ARG_ADDRESS_PRIVATE && !lclgc_opaque_type(type)
                   ? LCLGC_ARG_VALUE
                   : LCLGC_ARG_OTHER;
    if (aq == CL_KERNEL_ARG_ADDRESS_LOCAL)
        return LCLGC_ARG_LOCAL;
    return aq == CL_KERNEL_ARG_ADDRESS_GLOBAL ||
                   aq == CL_KERNEL_ARG_ADDRESS_CONSTANT
               ? LCLGC_ARG_BUFFER
               : LCLGC_ARG_OTHER;
}

/* The size of a by-value argument of the type OpenCL C calls name
 * ("float4", "uint"), or 0 for a type whose size the name does not tell
 * (a structure, a typedef). */
static size_t
lclgc_value_type_size(const char *name)
{
    static const struct {
        const char *name;
        size_t size;
    } types[] = {{"char", 1},
                 {"uchar", 1},
                 {"short", 2},
                 {"ushort", 2},
                 {"int", 4},
                 {"uint", 4},
                 {"long", 8},
                 {"ulong", 8},
                 {"float", 4},
                 {"double", 8},
                 {"half", 2},
                 {"bool", 1},
                 {"size_t", sizeof(size_t)}};
    size_t len = strlen(name), blen = len, n = 1;

    while (blen > 0 && name[blen - 1] >= '0' && name[blen - 1] <= '9')
        blen--;
    if (blen < len)
        n = (size_t)strtoul(name + blen, NULL, 10);
    if (n != 1 && n != 2 && n != 3 && n != 4 && n != 8 && n != 16)
        return 0;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
        if (strlen(types[t].name) == blen &&
            strncmp(types[t].name, name, blen) == 0)
            return (n == 3 ? 4 : n) * types[t].size;
    return 0;
}

/* Refuse a value whose size is not that of the argument's type, where
 * the type's name tells it: PoCL takes a float2 for a float4 and its
 * kernel then reads past the value. */
static void
lclgc_check_value_size(lua_State *L, cl_kernel k, lua_Integer i, size_t size,
                       const char *fn)
{
    char type[256] = "";
    size_t want;

    if (clgc_clGetKernelArgInfo(k, (cl_uint)i, CL_KERNEL_ARG_TYPE_NAME,
                                sizeof(type) - 1, type, NULL) != CL_SUCCESS)
        return; /* no information: the driver's check alone */
    want = lclgc_value_type_size(type);
    if (want != 0 && want != size)
        lclgc_fail(L, fn, CL_INVALID_ARG_SIZE, "CL_INVALID_ARG_SIZE", NULL,
                   "argument %I of the kernel is a %s (%I bytes), got %I bytes",
                   i, type, (lua_Integer)want, (lua_Integer)size);
}

/* The least local memory of the kernel's devices. */
static cl_ulong
lclgc_local_limit(lua_State *L, cl_kernel k, const char *fn)
{
    cl_program p = NULL;
    cl_device_id ids[16];
    size_t size = 0;
    cl_ulong least = 0;
    cl_int err =
        clgc_clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof(p), &p, NULL);

    if (err == CL_SUCCESS)
        err = clgc_clGetProgramInfo(p, CL_PROGRAM_DEVICES, sizeof(ids), ids,
                                    &size);
    for (size_t d = 0; err == CL_SUCCESS && d < size / sizeof(ids[0]); d++) {
        cl_ulong n = 0;

        err = clgc_clGetDeviceInfo(ids[d], CL_DEVICE_LOCAL_MEM_SIZE, sizeof(n),
                                   &n, NULL);
        if (d == 0 || n < least)
            least = n;
    }
    if (err != CL_SUCCESS)
        lclgc_cl_error(L, fn, err);
    return least;
}

/* Refuse a local size that, with the kernel's other local arguments (its
 * user value 1, by index), exceeds the devices' local memory: PoCL asserts
 * at the launch instead of failing it. */
static void
lclgc_check_local(lua_State *L, cl_kernel k, lua_Integer i, size_t size,
                  const char *fn)
{
    cl_ulong limit = lclgc_local_limit(L, k, fn), total = size;

    if (lua_getiuservalue(L, 1, 1) == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            size_t *s = luaL_testudata(L, -1, LCLGC_LOCAL);

            if (s != NULL && lua_tointeger(L, -2) != i)
                total += *s;
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
    if (size > limit || total > limit)
        lclgc_fail(
            L, fn, CL_INVALID_ARG_SIZE, "CL_INVALID_ARG_SIZE", NULL,
            "argument %I: %I bytes of local memory, more than the device's %I",
            i, (lua_Integer)total, (lua_Integer)limit);
}

/* The value for an argument of the given kind, refused unless it fits. */
static void
lclgc_check_arg_kind(lua_State *L, enum lclgc_arg_kind kind, lua_Integer i,
                     const char *fn)
{
    static const char *const wants[] = {
        NULL,
        "a __global or __constant pointer: " LCLGC_BUFFER,
        "a __local pointer: " LCLGC_LOCAL,
        "a value: a number with its type, a table of numbers with a "
        "vector type or a string of a structure's bytes",
        NULL,
        "an image: " LCLGC_IMAGE,
        "a sampler: " LCLGC_SAMPLER};
    int ok = kind == LCLGC_ARG_UNKNOWN ||
             (kind == LCLGC_ARG_BUFFER &&
              luaL_testudata(L, 3, LCLGC_BUFFER) != NULL) ||
             (kind == LCLGC_ARG_LOCAL &&
              luaL_testudata(L, 3, LCLGC_LOCAL) != NULL) ||
             (kind == LCLGC_ARG_VALUE &&
              (lua_type(L, 3) == LUA_TNUMBER || lua_type(L, 3) == LUA_TTABLE ||
               lua_type(L, 3) == LUA_TSTRING)) ||
             (kind == LCLGC_ARG_IMAGE &&
              luaL_testudata(L, 3, LCLGC_IMAGE) != NULL) ||
             (kind == LCLGC_ARG_SAMPLER &&
              luaL_testudata(L, 3, LCLGC_SAMPLER) != NULL);

    if (kind == LCLGC_ARG_OTHER)
        lclgc_error(L,
                    "%s: argument %I of the kernel is of a kind clgc "
                    "cannot set (pipe, queue, ...)",
                    fn, i);
    if (!ok)
        lclgc_error(L,
                    "%s: argument #3: argument %I of the kernel is %s, "
                    "got %s",
                    fn, i, wants[kind], lclgc_typename(L, 3));
}

/* Keep what argument i holds for as long as the kernel can be launched:
 * user value 1 keeps the Lua value (a buffer's handle, a clgc.Local), user
 * value 2 a reference of the kernel's own on a buffer, since
 * clSetKernelArg retains nothing and a buffer's :release() must not free
 * it under the kernel. Replacing the argument lets the old one go. */
static void
lclgc_keep_arg(lua_State *L, lua_Integer i, void *held, const char *kind)
{
    for (int uv = 1; uv <= 2; uv++) {
        if (lua_getiuservalue(L, 1, uv) != LUA_TTABLE) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushvalue(L, -1);
            lua_setiuservalue(L, 1, uv);
        }
    }
    if (lua_rawgeti(L, -1, i) == LUA_TUSERDATA)
        lclgc_handle_drop(lua_touserdata(L, -1));
    lua_pop(L, 1);
    if (held != NULL && (strcmp(kind, LCLGC_KERNEL_SAMPLER) == 0
                             ? clgc_clRetainSampler(held)
                             : clgc_clRetainMemObject(held)) == CL_SUCCESS)
        lclgc_push_handle(L, kind, held);
    else
        lua_pushnil(L);
    lua_rawseti(L, -2, i);
    if (luaL_testudata(L, 3, LCLGC_BUFFER) != NULL ||
        luaL_testudata(L, 3, LCLGC_IMAGE) != NULL ||
        luaL_testudata(L, 3, LCLGC_SAMPLER) != NULL ||
        luaL_testudata(L, 3, LCLGC_LOCAL) != NULL)
        lua_pushvalue(L, 3);
    else
        lua_pushnil(L);
    lua_rawseti(L, -3, i);
    lua_pop(L, 2);
}

/* Kernel:arg(index, value [, type]): index from 0, as OpenCL counts. value
 * is a Buffer, clgc.local_mem(bytes), or a number with its type. */
static int
lclgc_kernel_arg(lua_State *L)
{
    const char *fn = "clgc.Kernel:arg";
    cl_kernel k = lclgc_check(L, 1, LCLGC_KERNEL, fn);
    lua_Integer i = lclgc_checkint(L, 2, fn);
    union {
        cl_double d;
        cl_ulong u;
        cl_mem m;
        cl_sampler s;
        char bytes[128]; /* a vector: at most 16 elements of 8 bytes */
    } v;
    size_t size;
    const void *arg = &v;
    void *held = NULL;
    const char *held_kind = LCLGC_KERNEL_ARG;
    enum lclgc_arg_kind kind;
    cl_int err;

    if (i < 0 || i > 0xffff)
        return lclgc_fail(L, fn, CL_INVALID_ARG_INDEX, "CL_INVALID_ARG_INDEX",
                          NULL, "index %I", i);
    kind = lclgc_arg_kind(L, k, i, fn);
    lclgc_check_arg_kind(L, kind, i, fn);
    if (luaL_testudata(L, 3, LCLGC_BUFFER) != NULL) {
        v.m = held = lclgc_check(L, 3, LCLGC_BUFFER, fn);
        size = sizeof(cl_mem);
    } else if (luaL_testudata(L, 3, LCLGC_IMAGE) != NULL) {
        v.m = held = lclgc_check(L, 3, LCLGC_IMAGE, fn);
        size = sizeof(cl_mem);
    } else if (luaL_testudata(L, 3, LCLGC_SAMPLER) != NULL) {
        v.s = held = lclgc_check(L, 3, LCLGC_SAMPLER, fn);
        held_kind = LCLGC_KERNEL_SAMPLER;
        size = sizeof(cl_sampler);
    } else if (lua_type(L, 3) == LUA_TTABLE) {
        size = lclgc_store_vector(L, 3, 4, v.bytes, fn);
    } else if (lua_type(L, 3) == LUA_TSTRING) {
        /* A structure's bytes (string.pack): the driver checks the size
         * against the argument's. */
        arg = lua_tolstring(L, 3, &size);
        if (size == 0)
            return lclgc_error(L, "%s: argument #3: an empty string", fn);
    } else if (luaL_testudata(L, 3, LCLGC_LOCAL) != NULL) {
        size = *(size_t *)lua_touserdata(L, 3);
        lclgc_check_local(L, k, i, size, fn);
        arg = NULL;
    } else if (lua_type(L, 3) == LUA_TNUMBER) {
        if (lua_isnoneornil(L, 4))
            return lclgc_error(L,
                               "%s: argument #3: a number needs a type "
                               "(int, float, ...)",
                               fn);
        size = lclgc_store_scalar(L, 3, lclgc_check_type(L, 4, fn), &v, fn);
    } else {
        return lclgc_error(L,
                           "%s: argument #3: %s, %s, %s, %s, number, table "
                           "or string expected, got %s",
                           fn, LCLGC_BUFFER, LCLGC_IMAGE, LCLGC_SAMPLER,
                           LCLGC_LOCAL, lclgc_typename(L, 3));
    }
    if (kind == LCLGC_ARG_VALUE)
        lclgc_check_value_size(L, k, i, size, fn);
    err = clgc_clSetKernelArg(k, (cl_uint)i, size, arg);
    if (err != CL_SUCCESS)
        return lclgc_fail(L, fn, err, lclgc_cl_name(err), NULL, "argument %I",
                          i);
    lclgc_keep_arg(L, i, held, held_kind);
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
    lclgc_new_class(L, LCLGC_KERNEL_ARG, NULL);
    luaL_newmetatable(L, LCLGC_LOCAL);
    lua_pushboolean(L, 0); /* protected, as the handles' (lclgc.c) */
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
    lua_pushcfunction(L, lclgc_local);
    lua_setfield(L, -2, "local_mem");
}
