/* The (clgc) module's C half: OpenCL objects as Guile foreign objects,
 * every OpenCL call through clgc's wrappers (so that it runs outside Guile
 * mode), Scheme callbacks entered with scm_with_guile, errors raised as
 * &clgc-error (defined in modules/clgc.scm). */

#include <libguile.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guile-clgc.h"

#define EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------------
 * Error names */

static const struct {
    cl_int code;
    const char *name;
} cl_errors[] = {
#define E(x)                                                                   \
    {                                                                          \
        x, #x                                                                  \
    }
    E(CL_SUCCESS),
    E(CL_DEVICE_NOT_FOUND),
    E(CL_DEVICE_NOT_AVAILABLE),
    E(CL_COMPILER_NOT_AVAILABLE),
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE),
    E(CL_OUT_OF_RESOURCES),
    E(CL_OUT_OF_HOST_MEMORY),
    E(CL_PROFILING_INFO_NOT_AVAILABLE),
    E(CL_MEM_COPY_OVERLAP),
    E(CL_IMAGE_FORMAT_MISMATCH),
    E(CL_IMAGE_FORMAT_NOT_SUPPORTED),
    E(CL_BUILD_PROGRAM_FAILURE),
    E(CL_MAP_FAILURE),
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET),
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST),
    E(CL_COMPILE_PROGRAM_FAILURE),
    E(CL_LINKER_NOT_AVAILABLE),
    E(CL_LINK_PROGRAM_FAILURE),
    E(CL_DEVICE_PARTITION_FAILED),
    E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE),
    E(CL_INVALID_VALUE),
    E(CL_INVALID_DEVICE_TYPE),
    E(CL_INVALID_PLATFORM),
    E(CL_INVALID_DEVICE),
    E(CL_INVALID_CONTEXT),
    E(CL_INVALID_QUEUE_PROPERTIES),
    E(CL_INVALID_COMMAND_QUEUE),
    E(CL_INVALID_HOST_PTR),
    E(CL_INVALID_MEM_OBJECT),
    E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
    E(CL_INVALID_IMAGE_SIZE),
    E(CL_INVALID_SAMPLER),
    E(CL_INVALID_BINARY),
    E(CL_INVALID_BUILD_OPTIONS),
    E(CL_INVALID_PROGRAM),
    E(CL_INVALID_PROGRAM_EXECUTABLE),
    E(CL_INVALID_KERNEL_NAME),
    E(CL_INVALID_KERNEL_DEFINITION),
    E(CL_INVALID_KERNEL),
    E(CL_INVALID_ARG_INDEX),
    E(CL_INVALID_ARG_VALUE),
    E(CL_INVALID_ARG_SIZE),
    E(CL_INVALID_KERNEL_ARGS),
    E(CL_INVALID_WORK_DIMENSION),
    E(CL_INVALID_WORK_GROUP_SIZE),
    E(CL_INVALID_WORK_ITEM_SIZE),
    E(CL_INVALID_GLOBAL_OFFSET),
    E(CL_INVALID_EVENT_WAIT_LIST),
    E(CL_INVALID_EVENT),
    E(CL_INVALID_OPERATION),
    E(CL_INVALID_GL_OBJECT),
    E(CL_INVALID_BUFFER_SIZE),
    E(CL_INVALID_MIP_LEVEL),
    E(CL_INVALID_GLOBAL_WORK_SIZE),
    E(CL_INVALID_PROPERTY),
    E(CL_INVALID_IMAGE_DESCRIPTOR),
    E(CL_INVALID_COMPILER_OPTIONS),
    E(CL_INVALID_LINKER_OPTIONS),
    E(CL_INVALID_DEVICE_PARTITION_COUNT),
    E(CL_INVALID_PIPE_SIZE),
    E(CL_INVALID_DEVICE_QUEUE),
    E(CL_INVALID_SPEC_ID),
    E(CL_MAX_SIZE_RESTRICTION_EXCEEDED),
#undef E
};

static const char *
cl_error_name(cl_int code)
{
    for (size_t i = 0; i < sizeof(cl_errors) / sizeof(cl_errors[0]); i++)
        if (cl_errors[i].code == code)
            return cl_errors[i].name;
    return "CL_UNKNOWN_ERROR";
}

/* The Scheme half's raiser, (%raise-clgc-error name code who log cause
 * message), looked up on first use: the extension is loaded before the
 * module has defined it. */
static SCM
raiser(void)
{
    static SCM var = SCM_BOOL_F;

    if (scm_is_false(var))
        var = scm_gc_protect_object(scm_c_module_lookup(
            scm_c_resolve_module("clgc"), "%raise-clgc-error"));
    return scm_variable_ref(var);
}

static SCM
str_or_false(const char *s)
{
    return s != NULL ? scm_from_utf8_string(s) : SCM_BOOL_F;
}

/* Raise &clgc-error; never returns. */
static void
raise_error(const char *name, int code, const char *who, SCM log, SCM cause,
            const char *message)
{
    SCM args[6] = {scm_from_utf8_string(name),
                   scm_from_int(code),
                   scm_from_utf8_symbol(who),
                   log,
                   cause,
                   str_or_false(message)};

    scm_call_n(raiser(), args, 6);
    abort(); /* the raiser never returns */
}

/* clgc's own codes by their C names: "CLGC_EBUSY". */
static void
raise_clgc_named(int code, const char *who, SCM cause, const char *message)
{
    char name[64];

    snprintf(name, sizeof(name), "CLGC_%s", clgc_err_name(code));
    raise_error(name, code, who, SCM_BOOL_F, cause, message);
}

static void
raise_cl(cl_int err, const char *who)
{
    raise_error(cl_error_name(err), err, who, SCM_BOOL_F, SCM_BOOL_F, NULL);
}

static void
raise_clgc(int err, const char *who)
{
    raise_clgc_named(err, who, SCM_BOOL_F, clgc_strerror(err));
}

#define CHECK_CL(err, who)                                                     \
    do {                                                                       \
        cl_int check_err_ = (err);                                             \
        if (check_err_ != CL_SUCCESS)                                          \
            raise_cl(check_err_, who);                                         \
    } while (0)

/* ------------------------------------------------------------------------
 * Callback failures, raised at the next wait or drain
 *
 * A Scheme callback's exception is protected from the collector while clgc
 * holds it (clgc's failure list is malloc'd), handed back through the
 * runtime's callback_failed hook on the thread that finishes a wait or a
 * drain, and kept in that thread's list until the binding raises it. */

struct pending {
    struct pending *next;
    const char *command;
    int code;
    int protected; /* cause is protected with scm_gc_protect_object */
    SCM cause;
};

static __thread struct pending *pending_head, **pending_tail;

void
guile_clgc_callback_failed(const clgc_callback_error_t *error, void *data)
{
    struct pending *p = malloc(sizeof(*p));
    SCM cause =
        error->error != NULL ? SCM_PACK_POINTER(error->error) : SCM_BOOL_F;

    (void)data;
    if (p == NULL)
        return; /* nowhere to keep it: the failure is lost */
    p->next = NULL;
    p->command = error->command;
    p->code = error->code;
    p->cause = cause;
    p->protected = error->error != NULL;
    if (pending_tail == NULL)
        pending_tail = &pending_head;
    *pending_tail = p;
    pending_tail = &p->next;
}

/* Raise the calling thread's oldest callback failure, if any. The rest
 * wait for the next wait or drain. */
static void
raise_pending(void)
{
    struct pending *p = pending_head;
    SCM cause;
    const char *command;
    int code, protected;

    if (p == NULL)
        return;
    pending_head = p->next;
    if (pending_head == NULL)
        pending_tail = &pending_head;
    cause = p->cause;
    command = p->command != NULL ? p->command : "closure";
    code = p->code;
    protected = p->protected;
    free(p);
    /* cause is on this frame's stack now, which the collector scans. */
    if (protected)
        scm_gc_unprotect_object(cause);
    raise_clgc_named(code, command, cause,
                     "a Scheme callback raised an exception");
}

/* ------------------------------------------------------------------------
 * Objects */

enum kind {
    K_PLATFORM,
    K_DEVICE,
    K_CONTEXT,
    K_QUEUE,
    K_PROGRAM,
    K_KERNEL,
    K_MEM,
    K_EVENT,
    K_CQ,      /* a clgc completion queue */
    K_CLOSURE, /* a clgc closure (clgc/ffi.h) */
    K_NKINDS
};

static SCM types[K_NKINDS];

/* Release is idempotent and may race a finalizer of another object only:
 * the lock makes "take the handle, then release it" one step, so an
 * explicit release on two threads at once releases once. */
static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;

static void *
take_handle(SCM obj)
{
    void *h;

    pthread_mutex_lock(&handle_lock);
    h = scm_foreign_object_ref(obj, 0);
    scm_foreign_object_set_x(obj, 0, NULL);
    pthread_mutex_unlock(&handle_lock);
    return h;
}

static void
release_handle(enum kind k, void *h)
{
    if (h == NULL)
        return;
    switch (k) {
    case K_CONTEXT:
        clgc_clReleaseContext(h);
        break;
    case K_QUEUE:
        clgc_clReleaseCommandQueue(h);
        break;
    case K_PROGRAM:
        clgc_clReleaseProgram(h);
        break;
    case K_KERNEL:
        clgc_clReleaseKernel(h);
        break;
    case K_MEM:
        clgc_clReleaseMemObject(h);
        break;
    case K_EVENT:
        clgc_clReleaseEvent(h);
        break;
    case K_CLOSURE:
        /* Only an explicit release frees a closure (see make_closure). */
        break;
    case K_CQ:
        /* On the finalization thread nobody else drains it; a queue with
         * completions still to come cannot be closed and is left. */
        clgc_queue_close(h);
        break;
    default:
        break; /* platforms and root devices are never released */
    }
}

/* Finalizers run on Guile's finalization thread, a Guile thread: the
 * wrappers' regions (scm_without_guile) work there as anywhere. */
#define FINALIZER(k)                                                           \
    static void finalize_##k(SCM obj)                                          \
    {                                                                          \
        release_handle(k, take_handle(obj));                                   \
    }
FINALIZER(K_CONTEXT)
FINALIZER(K_QUEUE)
FINALIZER(K_PROGRAM)
FINALIZER(K_KERNEL)
FINALIZER(K_MEM)
FINALIZER(K_EVENT)
FINALIZER(K_CQ)

static const struct {
    const char *name;
    cl_int invalid;
    scm_t_struct_finalize finalizer;
} kinds[K_NKINDS] = {
    [K_PLATFORM] = {"cl-platform", CL_INVALID_PLATFORM, NULL},
    [K_DEVICE] = {"cl-device", CL_INVALID_DEVICE, NULL},
    [K_CONTEXT] = {"cl-context", CL_INVALID_CONTEXT, finalize_K_CONTEXT},
    [K_QUEUE] = {"cl-command-queue", CL_INVALID_COMMAND_QUEUE,
                 finalize_K_QUEUE},
    [K_PROGRAM] = {"cl-program", CL_INVALID_PROGRAM, finalize_K_PROGRAM},
    [K_KERNEL] = {"cl-kernel", CL_INVALID_KERNEL, finalize_K_KERNEL},
    [K_MEM] = {"cl-mem", CL_INVALID_MEM_OBJECT, finalize_K_MEM},
    [K_EVENT] = {"cl-event", CL_INVALID_EVENT, finalize_K_EVENT},
    [K_CQ] = {"completion-queue", CLGC_EINVAL, finalize_K_CQ},
    [K_CLOSURE] = {"closure", CLGC_EINVAL, NULL},
};

static SCM
wrap(enum kind k, void *h)
{
    return scm_make_foreign_object_1(types[k], h);
}

/* The live handle of obj, of kind k: a wrong type raises wrong-type-arg,
 * a released object &clgc-error with the kind's CL_INVALID_* code. */
static void *
unwrap(enum kind k, SCM obj, int pos, const char *who)
{
    void *h;

    if (!SCM_IS_A_P(obj, types[k]))
        scm_wrong_type_arg_msg(who, pos, obj, kinds[k].name);
    h = scm_foreign_object_ref(obj, 0);
    if (h == NULL) {
        if (k == K_CQ)
            raise_error("CLGC_EINVAL", CLGC_EINVAL, who, SCM_BOOL_F, SCM_BOOL_F,
                        "the completion queue was closed");
        raise_error(cl_error_name(kinds[k].invalid), kinds[k].invalid, who,
                    SCM_BOOL_F, SCM_BOOL_F, "the object was released");
    }
    return h;
}

static int
kind_of(SCM obj)
{
    for (int k = 0; k < K_NKINDS; k++)
        if (SCM_IS_A_P(obj, types[k]))
            return k;
    return -1;
}

/* A Scheme procedure behind a clgc closure. The closure's memory is
 * malloc'd, which the collector does not scan, so the procedure is
 * protected until the closure is released. */
struct closure {
    clgc_closure_t *closure;
    clgc_function_t code;
    SCM proc;
    char signature[2 * CLGC_CLOSURE_MAX_ARGS + 4];
};

static SCM
release(SCM obj)
{
    int k = kind_of(obj);

    if (k < 0)
        scm_wrong_type_arg_msg("release", 1, obj, "OpenCL object");
    if (k == K_CLOSURE) {
        struct closure *c = take_handle(obj);

        if (c != NULL) {
            clgc_closure_free(c->closure);
            scm_gc_unprotect_object(c->proc);
            free(c);
        }
        return SCM_UNSPECIFIED;
    }
    if (k == K_CQ) {
        void *q = scm_foreign_object_ref(obj, 0);
        int err;

        if (q == NULL)
            return SCM_UNSPECIFIED;
        err = clgc_queue_close(q);
        if (err != CLGC_OK)
            raise_clgc(err, "release");
        scm_foreign_object_set_x(obj, 0, NULL);
        return SCM_UNSPECIFIED;
    }
    release_handle(k, take_handle(obj));
    return SCM_UNSPECIFIED;
}

static SCM
released_p(SCM obj)
{
    if (kind_of(obj) < 0)
        scm_wrong_type_arg_msg("released?", 1, obj, "OpenCL object");
    return scm_from_bool(scm_foreign_object_ref(obj, 0) == NULL);
}

static SCM
handle_pointer(SCM obj)
{
    int k = kind_of(obj);

    if (k < 0)
        scm_wrong_type_arg_msg("handle->pointer", 1, obj, "OpenCL object");
    return scm_from_pointer(unwrap(k, obj, 1, "handle->pointer"), NULL);
}

/* ------------------------------------------------------------------------
 * Platforms, devices, info */

static SCM
platforms(void)
{
    cl_uint n = 0;
    cl_platform_id ids[16];
    cl_int err = clgc_clGetPlatformIDs(16, ids, &n);
    SCM l = SCM_EOL;

    if (err == CL_PLATFORM_NOT_FOUND_KHR)
        return SCM_EOL;
    CHECK_CL(err, "platforms");
    if (n > 16)
        n = 16;
    while (n-- > 0)
        l = scm_cons(wrap(K_PLATFORM, ids[n]), l);
    return l;
}

static SCM
info_string(cl_int (*get)(void *, cl_uint, size_t, void *, size_t *), void *h,
            cl_uint param, const char *who)
{
    size_t size = 0;
    char *buf;
    SCM s;
    cl_int err = get(h, param, 0, NULL, &size);

    CHECK_CL(err, who);
    buf = malloc(size + 1);
    if (buf == NULL)
        raise_cl(CL_OUT_OF_HOST_MEMORY, who);
    err = get(h, param, size, buf, NULL);
    buf[size] = 0;
    if (err != CL_SUCCESS) {
        free(buf);
        raise_cl(err, who);
    }
    s = scm_from_utf8_string(buf);
    free(buf);
    return s;
}

static cl_int
get_platform_info(void *h, cl_uint p, size_t s, void *v, size_t *r)
{
    return clgc_clGetPlatformInfo(h, p, s, v, r);
}

static cl_int
get_device_info(void *h, cl_uint p, size_t s, void *v, size_t *r)
{
    return clgc_clGetDeviceInfo(h, p, s, v, r);
}

/* A wrong-type-arg error unless ok. */
static void
validate(const char *who, int ok, SCM v, int pos, const char *what)
{
    if (!ok)
        scm_wrong_type_arg_msg(who, pos, v, what);
}

static int
sym_is(SCM sym, const char *name)
{
    return scm_is_eq(sym, scm_from_utf8_symbol(name));
}

static SCM
platform_info(SCM platform, SCM key)
{
    void *p = unwrap(K_PLATFORM, platform, 1, "platform-info");
    static const struct {
        const char *name;
        cl_uint param;
    } keys[] = {{"name", CL_PLATFORM_NAME},
                {"vendor", CL_PLATFORM_VENDOR},
                {"version", CL_PLATFORM_VERSION},
                {"profile", CL_PLATFORM_PROFILE},
                {"extensions", CL_PLATFORM_EXTENSIONS}};

    SCM_ASSERT_TYPE(scm_is_symbol(key), key, 2, "platform-info", "symbol");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (sym_is(key, keys[i].name))
            return info_string(get_platform_info, p, keys[i].param,
                               "platform-info");
    scm_misc_error("platform-info", "unknown key: ~S", scm_list_1(key));
    return SCM_UNSPECIFIED;
}

static SCM
devices(SCM platform, SCM type)
{
    void *p = unwrap(K_PLATFORM, platform, 1, "devices");
    cl_device_type t = CL_DEVICE_TYPE_ALL;
    cl_device_id ids[16];
    cl_uint n = 0;
    cl_int err;
    SCM l = SCM_EOL;

    if (!SCM_UNBNDP(type)) {
        SCM_ASSERT_TYPE(scm_is_symbol(type), type, 2, "devices", "symbol");
        if (sym_is(type, "cpu"))
            t = CL_DEVICE_TYPE_CPU;
        else if (sym_is(type, "gpu"))
            t = CL_DEVICE_TYPE_GPU;
        else if (sym_is(type, "accelerator"))
            t = CL_DEVICE_TYPE_ACCELERATOR;
        else if (sym_is(type, "default"))
            t = CL_DEVICE_TYPE_DEFAULT;
        else if (!sym_is(type, "all"))
            scm_misc_error("devices", "unknown device type: ~S",
                           scm_list_1(type));
    }
    err = clgc_clGetDeviceIDs(p, t, 16, ids, &n);
    if (err == CL_DEVICE_NOT_FOUND)
        return SCM_EOL;
    CHECK_CL(err, "devices");
    if (n > 16)
        n = 16;
    while (n-- > 0)
        l = scm_cons(wrap(K_DEVICE, ids[n]), l);
    return l;
}

static SCM
device_info(SCM device, SCM key)
{
    void *d = unwrap(K_DEVICE, device, 1, "device-info");
    static const struct {
        const char *name;
        cl_uint param;
        char kind; /* s string, u cl_uint, l cl_ulong, z size_t, t type */
    } keys[] = {
        {"name", CL_DEVICE_NAME, 's'},
        {"vendor", CL_DEVICE_VENDOR, 's'},
        {"version", CL_DEVICE_VERSION, 's'},
        {"driver-version", CL_DRIVER_VERSION, 's'},
        {"extensions", CL_DEVICE_EXTENSIONS, 's'},
        {"max-compute-units", CL_DEVICE_MAX_COMPUTE_UNITS, 'u'},
        {"max-work-group-size", CL_DEVICE_MAX_WORK_GROUP_SIZE, 'z'},
        {"global-mem-size", CL_DEVICE_GLOBAL_MEM_SIZE, 'l'},
        {"local-mem-size", CL_DEVICE_LOCAL_MEM_SIZE, 'l'},
        {"type", CL_DEVICE_TYPE, 't'},
    };

    SCM_ASSERT_TYPE(scm_is_symbol(key), key, 2, "device-info", "symbol");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        cl_ulong l = 0;
        cl_uint u = 0;
        size_t z = 0;

        if (!sym_is(key, keys[i].name))
            continue;
        switch (keys[i].kind) {
        case 's':
            return info_string(get_device_info, d, keys[i].param,
                               "device-info");
        case 'u':
            CHECK_CL(
                clgc_clGetDeviceInfo(d, keys[i].param, sizeof(u), &u, NULL),
                "device-info");
            return scm_from_uint32(u);
        case 'z':
            CHECK_CL(
                clgc_clGetDeviceInfo(d, keys[i].param, sizeof(z), &z, NULL),
                "device-info");
            return scm_from_size_t(z);
        case 'l':
            CHECK_CL(
                clgc_clGetDeviceInfo(d, keys[i].param, sizeof(l), &l, NULL),
                "device-info");
            return scm_from_uint64(l);
        default:
            CHECK_CL(
                clgc_clGetDeviceInfo(d, keys[i].param, sizeof(l), &l, NULL),
                "device-info");
            return scm_from_utf8_symbol(l & CL_DEVICE_TYPE_GPU   ? "gpu"
                                        : l & CL_DEVICE_TYPE_CPU ? "cpu"
                                        : l & CL_DEVICE_TYPE_ACCELERATOR
                                            ? "accelerator"
                                            : "custom");
        }
    }
    scm_misc_error("device-info", "unknown key: ~S", scm_list_1(key));
    return SCM_UNSPECIFIED;
}

/* ------------------------------------------------------------------------
 * Contexts, queues, programs, kernels */

/* A list of objects of kind k (or one object) as an array: buf when it
 * has room for them (n_buf entries), else malloc'd (release it with
 * free_array). Every element is checked before anything is allocated, so
 * a type error leaks nothing. */
static void **
handle_array(enum kind k, SCM list, int pos, const char *who, cl_uint *n,
             void **buf, size_t n_buf)
{
    long len;
    void **a;
    SCM l;
    cl_uint i = 0;

    *n = 0;
    /* OpenCL wants NULL for an empty list: a non-NULL list with a count of
     * 0 is CL_INVALID_EVENT_WAIT_LIST. */
    if (scm_is_false(list) || scm_is_null(list))
        return NULL;
    if (SCM_IS_A_P(list, types[k])) {
        buf[0] = unwrap(k, list, pos, who);
        *n = 1;
        return buf;
    }
    len = scm_ilength(list);
    if (len < 0)
        scm_wrong_type_arg_msg(who, pos, list, "list");
    for (l = list; !scm_is_null(l); l = scm_cdr(l))
        unwrap(k, scm_car(l), pos, who);
    a = (size_t)len <= n_buf ? buf : malloc(sizeof(void *) * (size_t)len);
    if (a == NULL)
        raise_cl(CL_OUT_OF_HOST_MEMORY, who);
    for (l = list; !scm_is_null(l); l = scm_cdr(l))
        a[i++] = scm_foreign_object_ref(scm_car(l), 0);
    *n = i;
    return a;
}

static void
free_array(void **a, void **buf)
{
    if (a != buf)
        free(a);
}

static SCM
make_context(SCM devs)
{
    cl_uint n;
    void *buf[16];
    void **d = handle_array(K_DEVICE, devs, 1, "make-context", &n, buf, 16);
    cl_int err = CL_SUCCESS;
    cl_context c;

    if (n == 0)
        raise_error("CL_INVALID_VALUE", CL_INVALID_VALUE, "make-context",
                    SCM_BOOL_F, SCM_BOOL_F, "no devices");
    c = clgc_clCreateContext(NULL, n, (cl_device_id *)d, NULL, NULL, &err);
    free_array(d, buf);
    CHECK_CL(err, "make-context");
    return wrap(K_CONTEXT, c);
}

static SCM
make_queue(SCM context, SCM device, SCM profiling)
{
    void *c = unwrap(K_CONTEXT, context, 1, "make-command-queue");
    void *d = unwrap(K_DEVICE, device, 2, "make-command-queue");
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES,
                                   CL_QUEUE_PROFILING_ENABLE, 0};
    int prof = !SCM_UNBNDP(profiling) && scm_is_true(profiling);
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clgc_clCreateCommandQueueWithProperties(
        c, d, prof ? props : NULL, &err);

    CHECK_CL(err, "make-command-queue");
    return wrap(K_QUEUE, q);
}

static SCM
make_program(SCM context, SCM source)
{
    void *c = unwrap(K_CONTEXT, context, 1, "make-program");
    char *src;
    cl_int err = CL_SUCCESS;
    cl_program p;

    validate("make-program", scm_is_string(source), source, 2, "string");
    src = scm_to_utf8_string(source);
    p = clgc_clCreateProgramWithSource(c, 1, (const char **)&src, NULL, &err);
    free(src);
    CHECK_CL(err, "make-program");
    return wrap(K_PROGRAM, p);
}

static SCM
build_log(void *p, void *d)
{
    size_t size = 0;
    char *buf;
    SCM s;

    if (clgc_clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, NULL,
                                   &size) != CL_SUCCESS)
        return SCM_BOOL_F;
    buf = malloc(size + 1);
    if (buf == NULL)
        return SCM_BOOL_F;
    if (clgc_clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, size, buf,
                                   NULL) != CL_SUCCESS)
        size = 0;
    buf[size] = 0;
    s = scm_from_utf8_string(buf);
    free(buf);
    return s;
}

static SCM
program_build_log(SCM program, SCM device)
{
    return build_log(unwrap(K_PROGRAM, program, 1, "program-build-log"),
                     unwrap(K_DEVICE, device, 2, "program-build-log"));
}

/* The logs of every device of the program, concatenated. */
static SCM
all_build_logs(void *p)
{
    cl_device_id ids[16];
    size_t size = 0;
    SCM logs = scm_from_utf8_string("");

    if (clgc_clGetProgramInfo(p, CL_PROGRAM_DEVICES, sizeof(ids), ids, &size) !=
        CL_SUCCESS)
        return SCM_BOOL_F;
    for (size_t i = 0; i < size / sizeof(ids[0]); i++) {
        SCM l = build_log(p, ids[i]);

        if (scm_is_string(l))
            logs = scm_string_append(scm_list_2(logs, l));
    }
    return logs;
}

/* Callbacks in Scheme. data is a pair (procedure . arguments), kept alive
 * by clgc's record (the runtime's record_alloc: uncollectable) until the
 * callback has run. The call is entered with scm_with_guile (a no-op
 * barrier on a thread in Guile mode, the entry proper on PoCL's thread)
 * and guarded: an exception is reported through clgc_callback_fail and
 * never unwinds into OpenCL. */
struct scheme_call {
    SCM proc;
    SCM args;
};

static SCM
call_body(void *data)
{
    struct scheme_call *c = data;

    return scm_apply_0(c->proc, c->args);
}

static SCM
call_handler(void *data, SCM key, SCM args)
{
    SCM cause;

    (void)data;
    /* raise-exception of a non-throw object arrives as (%exception obj). */
    if (scm_is_eq(key, scm_from_utf8_symbol("%exception")) && scm_is_pair(args))
        cause = scm_car(args);
    else
        cause = scm_cons(key, args);
    scm_gc_protect_object(cause);
    if (clgc_callback_fail(SCM_UNPACK_POINTER(cause)) != CLGC_OK)
        scm_gc_unprotect_object(cause);
    return SCM_UNSPECIFIED;
}

static void *
call_guarded(void *data)
{
    scm_c_catch(SCM_BOOL_T, call_body, data, call_handler, NULL, NULL, NULL);
    return NULL;
}

static void
call_scheme(SCM proc, SCM args)
{
    struct scheme_call c = {proc, args};

    scm_with_guile(call_guarded, &c);
}

static void CL_CALLBACK
build_notify(cl_program program, void *data)
{
    SCM pair = SCM_PACK_POINTER(data);

    (void)program;
    call_scheme(scm_car(pair), scm_cdr(pair));
}

static SCM
build_program(SCM program, SCM options, SCM notify)
{
    void *p = unwrap(K_PROGRAM, program, 1, "build-program");
    char *opts = NULL;
    SCM pair = SCM_BOOL_F;
    cl_int err;

    if (!SCM_UNBNDP(options) && scm_is_true(options)) {
        validate("build-program", scm_is_string(options), options, 2, "string");
        opts = scm_to_utf8_string(options);
    }
    if (!SCM_UNBNDP(notify) && scm_is_true(notify)) {
        if (scm_is_false(scm_procedure_p(notify))) {
            free(opts);
            scm_wrong_type_arg_msg("build-program", 3, notify, "procedure");
        }
        pair = scm_cons(notify, scm_list_1(program));
    }
    err = clgc_clBuildProgram(
        p, 0, NULL, opts, scm_is_true(pair) ? build_notify : NULL,
        scm_is_true(pair) ? SCM_UNPACK_POINTER(pair) : NULL);
    free(opts);
    guile_clgc_restore_restart_signal();
    scm_remember_upto_here_1(pair);
    if (err != CL_SUCCESS)
        raise_error(cl_error_name(err), err, "build-program",
                    err == CL_BUILD_PROGRAM_FAILURE ? all_build_logs(p)
                                                    : SCM_BOOL_F,
                    SCM_BOOL_F, NULL);
    raise_pending(); /* a build notification that raised */
    return program;
}

static SCM
make_kernel(SCM program, SCM name)
{
    void *p = unwrap(K_PROGRAM, program, 1, "make-kernel");
    char *n;
    cl_int err = CL_SUCCESS;
    cl_kernel k;

    validate("make-kernel", scm_is_string(name), name, 2, "string");
    n = scm_to_utf8_string(name);
    k = clgc_clCreateKernel(p, n, &err);
    guile_clgc_restore_restart_signal();
    free(n);
    CHECK_CL(err, "make-kernel");
    return wrap(K_KERNEL, k);
}

/* (set-kernel-arg! kernel index value [type]): a buffer; a bytevector (its
 * bytes); or a number with its type, one of int uint long ulong float
 * double; or (set-kernel-arg! k i size 'local) for local memory. */
static SCM
set_kernel_arg(SCM kernel, SCM index, SCM value, SCM type)
{
    void *k = unwrap(K_KERNEL, kernel, 1, "set-kernel-arg!");
    cl_uint i = scm_to_uint32(index);
    union {
        cl_int i;
        cl_uint u;
        cl_long l;
        cl_ulong ul;
        cl_float f;
        cl_double d;
        cl_mem m;
    } v;
    size_t size;
    const void *ptr = &v;

    if (SCM_UNBNDP(type)) {
        if (SCM_IS_A_P(value, types[K_MEM])) {
            v.m = unwrap(K_MEM, value, 3, "set-kernel-arg!");
            size = sizeof(cl_mem);
        } else if (scm_is_bytevector(value)) {
            ptr = SCM_BYTEVECTOR_CONTENTS(value);
            size = SCM_BYTEVECTOR_LENGTH(value);
        } else {
            scm_wrong_type_arg_msg("set-kernel-arg!", 3, value,
                                   "buffer, bytevector, or number with type");
        }
    } else {
        SCM_ASSERT_TYPE(scm_is_symbol(type), type, 4, "set-kernel-arg!",
                        "symbol");
        if (sym_is(type, "local")) {
            ptr = NULL;
            size = scm_to_size_t(value);
        } else if (sym_is(type, "int")) {
            v.i = scm_to_int32(value), size = sizeof(cl_int);
        } else if (sym_is(type, "uint")) {
            v.u = scm_to_uint32(value), size = sizeof(cl_uint);
        } else if (sym_is(type, "long")) {
            v.l = scm_to_int64(value), size = sizeof(cl_long);
        } else if (sym_is(type, "ulong")) {
            v.ul = scm_to_uint64(value), size = sizeof(cl_ulong);
        } else if (sym_is(type, "float")) {
            v.f = (cl_float)scm_to_double(value), size = sizeof(cl_float);
        } else if (sym_is(type, "double")) {
            v.d = scm_to_double(value), size = sizeof(cl_double);
        } else {
            scm_misc_error("set-kernel-arg!", "unknown argument type: ~S",
                           scm_list_1(type));
            return SCM_UNSPECIFIED;
        }
    }
    CHECK_CL(clgc_clSetKernelArg(k, i, size, ptr), "set-kernel-arg!");
    scm_remember_upto_here_1(value);
    return SCM_UNSPECIFIED;
}

/* ------------------------------------------------------------------------
 * Buffers and commands */

static cl_mem_flags
mem_flags(SCM flags)
{
    cl_mem_flags f = 0;

    if (scm_is_symbol(flags))
        flags = scm_list_1(flags);
    if (scm_ilength(flags) < 0)
        scm_wrong_type_arg_msg("make-buffer", 2, flags, "list of symbols");
    for (SCM l = flags; !scm_is_null(l); l = scm_cdr(l)) {
        SCM s = scm_car(l);

        if (sym_is(s, "read-write"))
            f |= CL_MEM_READ_WRITE;
        else if (sym_is(s, "read-only"))
            f |= CL_MEM_READ_ONLY;
        else if (sym_is(s, "write-only"))
            f |= CL_MEM_WRITE_ONLY;
        else if (sym_is(s, "alloc-host-ptr"))
            f |= CL_MEM_ALLOC_HOST_PTR;
        else
            scm_misc_error("make-buffer", "unknown flag: ~S", scm_list_1(s));
    }
    return f;
}

/* (make-buffer context flags size-or-bytevector): a bytevector's contents
 * are copied into the new buffer (CL_MEM_COPY_HOST_PTR). */
static SCM
make_buffer(SCM context, SCM flags, SCM init)
{
    void *c = unwrap(K_CONTEXT, context, 1, "make-buffer");
    cl_mem_flags f = mem_flags(flags);
    cl_int err = CL_SUCCESS;
    void *host = NULL;
    size_t size;
    cl_mem m;

    if (scm_is_bytevector(init)) {
        host = SCM_BYTEVECTOR_CONTENTS(init);
        size = SCM_BYTEVECTOR_LENGTH(init);
        f |= CL_MEM_COPY_HOST_PTR;
    } else {
        SCM_ASSERT_TYPE(scm_is_integer(init), init, 3, "make-buffer",
                        "size or bytevector");
        size = scm_to_size_t(init);
    }
    m = clgc_clCreateBuffer(c, f, size, host, &err);
    scm_remember_upto_here_1(init);
    CHECK_CL(err, "make-buffer");
    return wrap(K_MEM, m);
}

static SCM
buffer_size(SCM buffer)
{
    size_t size = 0;

    CHECK_CL(clgc_clGetMemObjectInfo(unwrap(K_MEM, buffer, 1, "buffer-size"),
                                     CL_MEM_SIZE, sizeof(size), &size, NULL),
             "buffer-size");
    return scm_from_size_t(size);
}

static SCM
wait_for_events(SCM events)
{
    cl_uint n;
    void *buf[16];
    void **e = handle_array(K_EVENT, events, 1, "wait-for-events", &n, buf, 16);
    cl_int err;

    if (n == 0) {
        raise_error("CL_INVALID_VALUE", CL_INVALID_VALUE, "wait-for-events",
                    SCM_BOOL_F, SCM_BOOL_F, "no events");
    }
    err = clgc_wait_for_events(n, (cl_event *)e);
    guile_clgc_restore_restart_signal();
    free_array(e, buf);
    scm_remember_upto_here_1(events);
    raise_pending();
    CHECK_CL(err, "wait-for-events");
    return SCM_UNSPECIFIED;
}

/* Blocking transfers: enqueued without blocking and waited for with clgc's
 * wait, so the thread leaves Guile and the collector runs meanwhile; the
 * bytevector stays alive on this frame, which the collector scans. */
static SCM
transfer(SCM queue, SCM buffer, SCM bv, SCM offset, SCM wait, int write,
         const char *who)
{
    void *q = unwrap(K_QUEUE, queue, 1, who);
    void *m = unwrap(K_MEM, buffer, 2, who);
    size_t off = 0;
    cl_uint n = 0;
    void **w, *buf[16];
    cl_event ev = NULL;
    cl_int err;

    validate(who, scm_is_bytevector(bv), bv, 3, "bytevector");
    if (!SCM_UNBNDP(offset))
        off = scm_to_size_t(offset);
    w = handle_array(K_EVENT, SCM_UNBNDP(wait) ? SCM_EOL : wait, 5, who, &n,
                     buf, 16);
    if (write)
        err = clgc_clEnqueueWriteBuffer(
            q, m, CL_FALSE, off, SCM_BYTEVECTOR_LENGTH(bv),
            SCM_BYTEVECTOR_CONTENTS(bv), n, (cl_event *)w, &ev);
    else
        err = clgc_clEnqueueReadBuffer(
            q, m, CL_FALSE, off, SCM_BYTEVECTOR_LENGTH(bv),
            SCM_BYTEVECTOR_CONTENTS(bv), n, (cl_event *)w, &ev);
    free_array(w, buf);
    CHECK_CL(err, who);
    err = clgc_wait_for_events(1, &ev);
    clgc_clReleaseEvent(ev);
    scm_remember_upto_here_1(bv);
    raise_pending();
    CHECK_CL(err, who);
    return bv;
}

static SCM
read_buffer(SCM queue, SCM buffer, SCM bv, SCM offset, SCM wait)
{
    return transfer(queue, buffer, bv, offset, wait, 0, "read-buffer!");
}

static SCM
write_buffer(SCM queue, SCM buffer, SCM bv, SCM offset, SCM wait)
{
    return transfer(queue, buffer, bv, offset, wait, 1, "write-buffer!");
}

static int
work_sizes(SCM sizes, size_t out[3], int pos, const char *who)
{
    int dim = 0;

    if (scm_is_integer(sizes)) {
        out[0] = scm_to_size_t(sizes);
        return 1;
    }
    if (scm_ilength(sizes) < 1 || scm_ilength(sizes) > 3)
        scm_wrong_type_arg_msg(who, pos, sizes, "size or list of 1 to 3");
    for (SCM l = sizes; !scm_is_null(l); l = scm_cdr(l))
        out[dim++] = scm_to_size_t(scm_car(l));
    return dim;
}

/* (enqueue-kernel queue kernel global [local] [wait-list]) -> event */
static SCM
enqueue_kernel(SCM queue, SCM kernel, SCM global, SCM local, SCM wait)
{
    const char *who = "enqueue-kernel";
    void *q = unwrap(K_QUEUE, queue, 1, who);
    void *k = unwrap(K_KERNEL, kernel, 2, who);
    size_t g[3], l[3];
    int dim = work_sizes(global, g, 3, who), use_local = 0;
    cl_uint n = 0;
    void **w, *buf[16];
    cl_event ev = NULL;
    cl_int err;

    if (!SCM_UNBNDP(local) && scm_is_true(local)) {
        if (work_sizes(local, l, 4, who) != dim)
            raise_error("CL_INVALID_WORK_DIMENSION", CL_INVALID_WORK_DIMENSION,
                        who, SCM_BOOL_F, SCM_BOOL_F,
                        "local and global sizes differ in dimension");
        use_local = 1;
    }
    w = handle_array(K_EVENT, SCM_UNBNDP(wait) ? SCM_EOL : wait, 5, who, &n,
                     buf, 16);
    err = clgc_clEnqueueNDRangeKernel(q, k, (cl_uint)dim, NULL, g,
                                      use_local ? l : NULL, n, (cl_event *)w,
                                      &ev);
    guile_clgc_restore_restart_signal();
    free_array(w, buf);
    CHECK_CL(err, who);
    return wrap(K_EVENT, ev);
}

static SCM
finish(SCM queue)
{
    CHECK_CL(clgc_clFinish(unwrap(K_QUEUE, queue, 1, "finish")), "finish");
    return SCM_UNSPECIFIED;
}

static SCM
flush(SCM queue)
{
    CHECK_CL(clgc_clFlush(unwrap(K_QUEUE, queue, 1, "flush")), "flush");
    return SCM_UNSPECIFIED;
}

/* ------------------------------------------------------------------------
 * Events */

static SCM
event_status(SCM event)
{
    cl_int s = 0;

    CHECK_CL(clgc_clGetEventInfo(unwrap(K_EVENT, event, 1, "event-status"),
                                 CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(s),
                                 &s, NULL),
             "event-status");
    switch (s) {
    case CL_COMPLETE:
        return scm_from_utf8_symbol("complete");
    case CL_RUNNING:
        return scm_from_utf8_symbol("running");
    case CL_SUBMITTED:
        return scm_from_utf8_symbol("submitted");
    case CL_QUEUED:
        return scm_from_utf8_symbol("queued");
    default:
        return scm_from_int32(s);
    }
}

static SCM
make_user_event(SCM context)
{
    cl_int err = CL_SUCCESS;
    cl_event e = clgc_clCreateUserEvent(
        unwrap(K_CONTEXT, context, 1, "make-user-event"), &err);

    CHECK_CL(err, "make-user-event");
    return wrap(K_EVENT, e);
}

/* status: 'complete or a negative error code. */
static SCM
set_user_event_status(SCM event, SCM status)
{
    void *e = unwrap(K_EVENT, event, 1, "set-user-event-status!");
    cl_int s;

    if (scm_is_symbol(status) && sym_is(status, "complete"))
        s = CL_COMPLETE;
    else
        s = scm_to_int32(status);
    CHECK_CL(clgc_clSetUserEventStatus(e, s), "set-user-event-status!");
    return SCM_UNSPECIFIED;
}

static void CL_CALLBACK
event_notify(cl_event event, cl_int status, void *data)
{
    SCM pair = SCM_PACK_POINTER(data);

    (void)event;
    call_scheme(scm_car(pair),
                scm_list_2(scm_cdr(pair), scm_from_int32(status)));
}

/* (set-event-callback! event proc [completion-queue]): proc gets (event
 * status) once the event completes or fails, on PoCL's thread with Guile
 * entered, or in a drain of the completion queue when one is given. */
static SCM
set_event_callback(SCM event, SCM proc, SCM cq)
{
    const char *who = "set-event-callback!";
    void *e = unwrap(K_EVENT, event, 1, who);
    clgc_queue_t *q = NULL, *before = NULL;
    SCM pair;
    cl_int err;

    if (scm_is_false(scm_procedure_p(proc)))
        scm_wrong_type_arg_msg(who, 2, proc, "procedure");
    if (!SCM_UNBNDP(cq) && scm_is_true(cq))
        q = unwrap(K_CQ, cq, 3, who);
    pair = scm_cons(proc, event);
    if (q != NULL) {
        before = clgc_callbacks_deferred_to();
        if (clgc_callbacks_defer(q) != CLGC_OK)
            raise_clgc(CLGC_ENOMEM, who);
    }
    err = clgc_clSetEventCallback(e, CL_COMPLETE, event_notify,
                                  SCM_UNPACK_POINTER(pair));
    if (q != NULL)
        clgc_callbacks_defer(before);
    scm_remember_upto_here_1(pair);
    CHECK_CL(err, who);
    return SCM_UNSPECIFIED;
}

/* ------------------------------------------------------------------------
 * Completion queues */

static SCM
make_completion_queue(void)
{
    clgc_queue_t *q = NULL;
    int err = clgc_queue_create(&q);

    if (err != CLGC_OK)
        raise_clgc(err, "make-completion-queue");
    return wrap(K_CQ, q);
}

static SCM
completion_queue_fd(SCM cq)
{
    return scm_from_int(
        clgc_queue_fd(unwrap(K_CQ, cq, 1, "completion-queue-fd")));
}

static SCM
drain(SCM cq, SCM max)
{
    clgc_queue_t *q = unwrap(K_CQ, cq, 1, "drain!");
    unsigned m = SCM_UNBNDP(max) ? 0 : scm_to_uint(max);
    int n = clgc_queue_drain(q, m);

    raise_pending();
    if (n < 0)
        raise_clgc(n, "drain!");
    return scm_from_int(n);
}

/* ------------------------------------------------------------------------
 * The generic path: any command by name, arguments converted by the
 * command's metadata. */

static SCM
command_call(SCM name, SCM args)
{
    const char *who = "command-call";
    char *n;
    const clgc_command_t *cmd;
    clgc_arg_t a[CLGC_CLOSURE_MAX_ARGS];
    clgc_value_t r;
    unsigned i = 0;
    int err, k;

    validate(who, scm_is_string(name), name, 1, "string");
    n = scm_to_utf8_string(name);
    cmd = clgc_command_find(n);
    free(n);
    if (cmd == NULL)
        raise_error("CLGC_ENOCOMMAND", CLGC_ENOCOMMAND, who, SCM_BOOL_F,
                    SCM_BOOL_F, "no OpenCL command of that name");
    if (scm_ilength(args) != (long)cmd->nparams)
        raise_error("CLGC_EARITY", CLGC_EARITY, who, SCM_BOOL_F, SCM_BOOL_F,
                    "wrong number of arguments for the command");
    for (SCM l = args; !scm_is_null(l); l = scm_cdr(l), i++) {
        SCM v = scm_car(l);
        clgc_ctype_t t = cmd->params[i].ctype;
        int pos = (int)i + 2;

        a[i].ctype = t;
        memset(&a[i].value, 0, sizeof(a[i].value));
        if (scm_is_bool(v) && t != CLGC_CTYPE_POINTER &&
            t != CLGC_CTYPE_FUNCTION) {
            a[i].value.u64 = scm_is_true(v);
            continue;
        }
        switch (t) {
        case CLGC_CTYPE_INT8:
        case CLGC_CTYPE_INT16:
        case CLGC_CTYPE_INT32:
        case CLGC_CTYPE_INT64:
        case CLGC_CTYPE_INTPTR: {
            int64_t x = scm_to_int64(v);

            if (t == CLGC_CTYPE_INT8)
                a[i].value.i8 = (int8_t)x;
            else if (t == CLGC_CTYPE_INT16)
                a[i].value.i16 = (int16_t)x;
            else if (t == CLGC_CTYPE_INT32)
                a[i].value.i32 = scm_to_int32(v);
            else
                a[i].value.i64 = x;
            break;
        }
        case CLGC_CTYPE_UINT8:
            a[i].value.u8 = scm_to_uint8(v);
            break;
        case CLGC_CTYPE_UINT16:
            a[i].value.u16 = scm_to_uint16(v);
            break;
        case CLGC_CTYPE_UINT32:
            a[i].value.u32 = scm_to_uint32(v);
            break;
        case CLGC_CTYPE_UINT64:
            a[i].value.u64 = scm_to_uint64(v);
            break;
        case CLGC_CTYPE_SIZE:
            a[i].value.size = scm_to_size_t(v);
            break;
        case CLGC_CTYPE_FLOAT:
            a[i].value.f = (float)scm_to_double(v);
            break;
        case CLGC_CTYPE_DOUBLE:
            a[i].value.d = scm_to_double(v);
            break;
        case CLGC_CTYPE_POINTER:
        case CLGC_CTYPE_FUNCTION:
            if (scm_is_false(v))
                a[i].value.p = NULL;
            else if (SCM_POINTER_P(v))
                a[i].value.p = SCM_POINTER_VALUE(v);
            else if (scm_is_bytevector(v) && t == CLGC_CTYPE_POINTER)
                a[i].value.p = SCM_BYTEVECTOR_CONTENTS(v);
            else if (SCM_IS_A_P(v, types[K_CLOSURE]))
                a[i].value.fn =
                    ((struct closure *)unwrap(K_CLOSURE, v, pos, who))->code;
            else if (t == CLGC_CTYPE_POINTER && (k = kind_of(v)) >= 0)
                a[i].value.p = unwrap(k, v, pos, who);
            else
                scm_wrong_type_arg_msg(who, pos, v,
                                       "pointer, bytevector, object or #f");
            break;
        default:
            scm_wrong_type_arg_msg(who, pos, v, "value");
        }
    }
    memset(&r, 0, sizeof(r));
    err = clgc_command_call(cmd, i, a, &r);
    scm_remember_upto_here_1(args);
    if (err != CLGC_OK)
        raise_clgc(err, who);
    switch (cmd->result_ctype) {
    case CLGC_CTYPE_VOID:
        return SCM_UNSPECIFIED;
    case CLGC_CTYPE_INT32:
        return scm_from_int32(r.i32);
    case CLGC_CTYPE_UINT32:
        return scm_from_uint32(r.u32);
    case CLGC_CTYPE_INT64:
        return scm_from_int64(r.i64);
    case CLGC_CTYPE_UINT64:
        return scm_from_uint64(r.u64);
    case CLGC_CTYPE_SIZE:
        return scm_from_size_t(r.size);
    case CLGC_CTYPE_POINTER:
    case CLGC_CTYPE_FUNCTION:
        return scm_from_pointer(r.p, NULL);
    default:
        return scm_from_int64(r.i64);
    }
}

/* (pointer->object kind pointer): adopt a handle a generic call made, for
 * release and the typed procedures. kind: context queue program kernel
 * buffer event. The object owns the reference. */
static SCM
pointer_to_object(SCM kind, SCM pointer)
{
    static const char *names[] = {"platform", "device", "context", "queue",
                                  "program",  "kernel", "buffer",  "event"};

    validate("pointer->object", SCM_POINTER_P(pointer), pointer, 2, "pointer");
    for (int k = 0; k < K_CQ; k++)
        if (sym_is(kind, names[k]))
            return wrap(k, SCM_POINTER_VALUE(pointer));
    scm_wrong_type_arg_msg("pointer->object", 1, kind, "object kind symbol");
    return SCM_UNSPECIFIED;
}

/* ------------------------------------------------------------------------
 * Closures: a Scheme procedure as a C function pointer of any signature
 * (clgc/ffi.h), for the generic path. */

static SCM
c_to_scm(char letter, const void *v)
{
    switch (letter) {
    case 'c':
        return scm_from_int8(*(const int8_t *)v);
    case 'C':
        return scm_from_uint8(*(const uint8_t *)v);
    case 's':
        return scm_from_int16(*(const int16_t *)v);
    case 'S':
        return scm_from_uint16(*(const uint16_t *)v);
    case 'i':
        return scm_from_int32(*(const int32_t *)v);
    case 'I':
        return scm_from_uint32(*(const uint32_t *)v);
    case 'l':
        return scm_from_int64(*(const int64_t *)v);
    case 'L':
        return scm_from_uint64(*(const uint64_t *)v);
    case 'j':
        return scm_from_intptr_t(*(const intptr_t *)v);
    case 'z':
        return scm_from_size_t(*(const size_t *)v);
    case 'f':
        return scm_from_double(*(const float *)v);
    case 'd':
        return scm_from_double(*(const double *)v);
    default: /* p, F */
        return scm_from_pointer(*(void *const *)v, NULL);
    }
}

struct closure_call {
    struct closure *c;
    void *result;
    void *const *args;
};

static SCM
closure_body(void *data)
{
    struct closure_call *k = data;
    const char *sig = k->c->signature;
    const char *a = strchr(sig, '(') + 1;
    SCM args = SCM_EOL, r;
    int n = 0;

    for (const char *p = a; *p != ')'; p++)
        n++;
    for (int i = n - 1; i >= 0; i--)
        args = scm_cons(c_to_scm(a[i], k->args[i]), args);
    r = scm_apply_0(k->c->proc, args);
    switch (sig[0]) {
    case 'v':
        break;
    case 'f':
        *(float *)k->result = (float)scm_to_double(r);
        break;
    case 'd':
        *(double *)k->result = scm_to_double(r);
        break;
    case 'p':
    case 'F':
        *(void **)k->result = scm_is_false(r) ? NULL : SCM_POINTER_VALUE(r);
        break;
    case 'c':
    case 's':
    case 'i':
    case 'l':
    case 'j':
        *(int64_t *)k->result = scm_to_int64(r);
        break;
    default:
        *(uint64_t *)k->result = scm_to_uint64(r);
        break;
    }
    return SCM_UNSPECIFIED;
}

static void *
closure_guarded(void *data)
{
    scm_c_catch(SCM_BOOL_T, closure_body, data, call_handler, NULL, NULL, NULL);
    return NULL;
}

/* clgc runs this with the runtime active on whichever thread called the
 * closure's code; scm_with_guile enters Guile proper (a barrier only on a
 * thread in Guile mode). A non-void result is zeroed first, so that an
 * exception (reported through clgc_callback_fail) returns 0 to C. */
static void
closure_handler(void *result, void *const *args, void *data)
{
    struct closure_call k = {data, result, args};

    memset(result, 0, sizeof(clgc_value_t));
    scm_with_guile(closure_guarded, &k);
}

/* (make-closure signature proc) -> closure: (closure-pointer c) is a C
 * function of that signature ("v(pip)", clgc/ffi.h) that calls proc
 * with the arguments converted (integers, reals, pointers). Freed only by
 * (release c), once C can no longer call it. */
static SCM
make_closure(SCM signature, SCM proc)
{
    struct closure *c;
    char *sig;
    int err;

    validate("make-closure", scm_is_string(signature), signature, 1, "string");
    validate("make-closure", scm_is_true(scm_procedure_p(proc)), proc, 2,
             "procedure");
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        raise_clgc(CLGC_ENOMEM, "make-closure");
    sig = scm_to_utf8_string(signature);
    if (strlen(sig) >= sizeof(c->signature)) {
        free(sig);
        free(c);
        raise_clgc(CLGC_ESIGNATURE, "make-closure");
    }
    strcpy(c->signature, sig);
    free(sig);
    c->proc = proc;
    err = clgc_closure_create(c->signature, closure_handler, c, &c->closure,
                              &c->code);
    if (err != CLGC_OK) {
        free(c);
        raise_clgc(err, "make-closure");
    }
    scm_gc_protect_object(proc);
    return wrap(K_CLOSURE, c);
}

static SCM
closure_pointer(SCM closure)
{
    struct closure *c = unwrap(K_CLOSURE, closure, 1, "closure-pointer");

    return scm_from_pointer((void *)c->code, NULL);
}

/* ------------------------------------------------------------------------
 * Switches */

static SCM
set_safe_regions(SCM on)
{
    guile_clgc_set_regions(scm_is_true(on));
    return SCM_UNSPECIFIED;
}

static SCM
safe_regions_p(void)
{
    return scm_from_bool(guile_clgc_regions());
}

static SCM
runtime_name(void)
{
    return str_or_false(clgc_runtime_current()->name);
}

static SCM
thread_in_region_p(void)
{
    return scm_from_bool(clgc_thread_in_region());
}

/* ------------------------------------------------------------------------ */

EXPORT void scm_init_clgc(void);

/* The Guile runtime alone, for a Guile program that calls libOpenCL
 * through (system foreign) under libclgc-layer: CLGC_RUNTIME=guile makes
 * the layer load this extension with this init function (docs/layer.md).
 * Defines nothing; loading (clgc) later finds the runtime installed. */
EXPORT void scm_init_clgc_runtime(void);

void
scm_init_clgc_runtime(void)
{
    int err = guile_clgc_install();

    if (err != CLGC_OK && err != CLGC_EALREADY && err != CLGC_EINUSE)
        raise_clgc(err, "load-extension");
}

void
scm_init_clgc(void)
{
    int err;

    for (int k = 0; k < K_NKINDS; k++)
        /* Protected: whether bdwgc scans this library's static data
         * depends on how Guile set it up, and a type must outlive its
         * last instance's finalizer. */
        types[k] = scm_gc_protect_object(scm_make_foreign_object_type(
            scm_from_utf8_symbol(kinds[k].name),
            scm_list_1(scm_from_utf8_symbol("handle")), kinds[k].finalizer));

    /* The extension is loaded on a Guile thread (the main thread, in a
     * program that loads (clgc) first): it installs the runtime before
     * any OpenCL call starts PoCL's threads. A runtime of another name
     * installed by the host program would not enter Guile for Scheme
     * callbacks: refuse it. */
    err = guile_clgc_install();
    if (err == CLGC_EALREADY || err == CLGC_EINUSE) {
        const char *name = clgc_runtime_current()->name;

        if (name == NULL || strcmp(name, "guile") != 0)
            scm_misc_error("load-extension",
                           "clgc already has a runtime (~A): (clgc) needs the "
                           "Guile runtime, installed before any other clgc "
                           "call",
                           scm_list_1(str_or_false(name)));
    } else if (err != CLGC_OK) {
        raise_clgc(err, "load-extension");
    }

    scm_c_define_gsubr("platforms", 0, 0, 0, platforms);
    scm_c_define_gsubr("platform-info", 2, 0, 0, platform_info);
    scm_c_define_gsubr("devices", 1, 1, 0, devices);
    scm_c_define_gsubr("device-info", 2, 0, 0, device_info);
    scm_c_define_gsubr("make-context", 1, 0, 0, make_context);
    scm_c_define_gsubr("make-command-queue", 2, 1, 0, make_queue);
    scm_c_define_gsubr("make-program", 2, 0, 0, make_program);
    scm_c_define_gsubr("build-program", 1, 2, 0, build_program);
    scm_c_define_gsubr("program-build-log", 2, 0, 0, program_build_log);
    scm_c_define_gsubr("make-kernel", 2, 0, 0, make_kernel);
    scm_c_define_gsubr("set-kernel-arg!", 3, 1, 0, set_kernel_arg);
    scm_c_define_gsubr("make-buffer", 3, 0, 0, make_buffer);
    scm_c_define_gsubr("buffer-size", 1, 0, 0, buffer_size);
    scm_c_define_gsubr("read-buffer!", 3, 2, 0, read_buffer);
    scm_c_define_gsubr("write-buffer!", 3, 2, 0, write_buffer);
    scm_c_define_gsubr("enqueue-kernel", 3, 2, 0, enqueue_kernel);
    scm_c_define_gsubr("finish", 1, 0, 0, finish);
    scm_c_define_gsubr("flush", 1, 0, 0, flush);
    scm_c_define_gsubr("wait-for-events", 1, 0, 0, wait_for_events);
    scm_c_define_gsubr("event-status", 1, 0, 0, event_status);
    scm_c_define_gsubr("make-user-event", 1, 0, 0, make_user_event);
    scm_c_define_gsubr("set-user-event-status!", 2, 0, 0,
                       set_user_event_status);
    scm_c_define_gsubr("set-event-callback!", 2, 1, 0, set_event_callback);
    scm_c_define_gsubr("make-completion-queue", 0, 0, 0, make_completion_queue);
    scm_c_define_gsubr("%completion-queue-fd", 1, 0, 0, completion_queue_fd);
    scm_c_define_gsubr("drain!", 1, 1, 0, drain);
    scm_c_define_gsubr("release", 1, 0, 0, release);
    scm_c_define_gsubr("released?", 1, 0, 0, released_p);
    scm_c_define_gsubr("handle->pointer", 1, 0, 0, handle_pointer);
    scm_c_define_gsubr("pointer->object", 2, 0, 0, pointer_to_object);
    scm_c_define_gsubr("command-call", 1, 0, 1, command_call);
    scm_c_define_gsubr("make-closure", 2, 0, 0, make_closure);
    scm_c_define_gsubr("closure-pointer", 1, 0, 0, closure_pointer);
    scm_c_define_gsubr("set-safe-regions!", 1, 0, 0, set_safe_regions);
    scm_c_define_gsubr("safe-regions?", 0, 0, 0, safe_regions_p);
    scm_c_define_gsubr("runtime-name", 0, 0, 0, runtime_name);
    scm_c_define_gsubr("in-safe-region?", 0, 0, 0, thread_in_region_p);
}
