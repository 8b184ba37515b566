/* The (clgc) module's C half: OpenCL objects as Guile foreign objects,
 * every OpenCL call through clgc's wrappers (so that it runs outside Guile
 * mode), Scheme callbacks entered with scm_with_guile, errors raised as
 * &clgc-error (defined in modules/clgc.scm). */

#define _GNU_SOURCE /* process_vm_readv */
#include <libguile.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/uio.h>
#include <unistd.h>

#include "guile-clgc.h"

#define EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------------
 * Error names */

/* The name of an OpenCL error code, from clgc's table of every code in the
 * registry; "CL_UNKNOWN_ERROR" for a code it lacks. */
static const char *
cl_error_name(cl_int code)
{
    const char *name = clgc_cl_error_name(code);

    return name != NULL ? name : "CL_UNKNOWN_ERROR";
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

/* Every handle the binding has seen made or returned (by a typed
 * procedure, an info query or a generic call), with its kind: what
 * pointer->object checks an address against, since OpenCL cannot tell an
 * object's kind (PoCL answers a queue's reference count asked as a
 * buffer's). An open-addressing table of addresses, never shrunk; an
 * address is noted again with its new kind when the driver reuses it. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static struct seen {
    void *h;
    int kind;
} * seen;
static size_t seen_cap, seen_count;

static size_t
seen_slot(struct seen *t, size_t cap, void *h)
{
    size_t i = ((uintptr_t)h >> 4) * 0x9E3779B97F4A7C15u & (cap - 1);

    while (t[i].h != NULL && t[i].h != h)
        i = (i + 1) & (cap - 1);
    return i;
}

static void
seen_note(enum kind k, void *h)
{
    size_t i;

    if (h == NULL)
        return;
    pthread_mutex_lock(&seen_lock);
    if (2 * (seen_count + 1) > seen_cap) {
        size_t cap = seen_cap ? 2 * seen_cap : 256;
        struct seen *t = calloc(cap, sizeof(*t));

        if (t == NULL) {
            pthread_mutex_unlock(&seen_lock);
            return; /* not noted: pointer->object will refuse it */
        }
        for (size_t j = 0; j < seen_cap; j++)
            if (seen[j].h != NULL)
                t[seen_slot(t, cap, seen[j].h)] = seen[j];
        free(seen);
        seen = t;
        seen_cap = cap;
    }
    i = seen_slot(seen, seen_cap, h);
    if (seen[i].h == NULL)
        seen_count++;
    seen[i].h = h;
    seen[i].kind = (int)k;
    pthread_mutex_unlock(&seen_lock);
}

/* The kind h was last noted with, or -1. */
static int
seen_kind(void *h)
{
    int k = -1;

    pthread_mutex_lock(&seen_lock);
    if (seen_cap > 0 && h != NULL) {
        size_t i = seen_slot(seen, seen_cap, h);

        if (seen[i].h == h)
            k = seen[i].kind;
    }
    pthread_mutex_unlock(&seen_lock);
    return k;
}

static SCM
wrap(enum kind k, void *h)
{
    if (k < K_CQ)
        seen_note(k, h);
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
        /* clgc's objects have clgc's code, by clgc's name: CLGC_EINVAL's
         * value is also CL_MEM_OBJECT_ALLOCATION_FAILURE's. */
        if (k == K_CQ)
            raise_error("CLGC_EINVAL", CLGC_EINVAL, who, SCM_BOOL_F, SCM_BOOL_F,
                        "the completion queue was closed");
        if (k == K_CLOSURE)
            raise_error("CLGC_EINVAL", CLGC_EINVAL, who, SCM_BOOL_F, SCM_BOOL_F,
                        "the closure was released");
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
 * protected until the closure is released.
 *
 * The binding cannot know when C stops holding a closure's code, so
 * (release c) retires the closure instead of freeing it: the procedure is
 * dropped (proc becomes #f under closure_lock, then unprotected) and the
 * code stays valid for the rest of the process, returning a zero result
 * to any C that still calls it. Retired closures are kept on a list (a
 * record and libffi's trampoline each). */
struct closure {
    clgc_closure_t *closure;
    clgc_function_t code;
    SCM proc; /* #f once released; read and written under closure_lock */
    struct closure *next_retired;
    char signature[2 * CLGC_CLOSURE_MAX_ARGS + 4];
};

static pthread_mutex_t closure_lock = PTHREAD_MUTEX_INITIALIZER;
static struct closure *retired;

static SCM
release(SCM obj)
{
    int k = kind_of(obj);

    if (k < 0)
        scm_wrong_type_arg_msg("release", 1, obj, "OpenCL object");
    if (k == K_CLOSURE) {
        struct closure *c = take_handle(obj);

        SCM proc;

        if (c == NULL)
            return SCM_UNSPECIFIED;
        pthread_mutex_lock(&closure_lock);
        proc = c->proc;
        c->proc = SCM_BOOL_F;
        c->next_retired = retired;
        retired = c;
        pthread_mutex_unlock(&closure_lock);
        scm_gc_unprotect_object(proc);
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

/* (%object-types): the foreign object types, for the Scheme half's
 * printers. */
static SCM
object_types(void)
{
    SCM l = SCM_EOL;

    for (int k = K_NKINDS; k-- > 0;)
        l = scm_cons(types[k], l);
    return l;
}

/* (cl-device? obj) and the other kinds' predicates. */
#define PREDICATE(f, k)                                                        \
    static SCM f(SCM obj)                                                      \
    {                                                                          \
        return scm_from_bool(SCM_IS_A_P(obj, types[k]));                       \
    }
PREDICATE(platform_p, K_PLATFORM)
PREDICATE(device_p, K_DEVICE)
PREDICATE(context_p, K_CONTEXT)
PREDICATE(queue_p, K_QUEUE)
PREDICATE(program_p, K_PROGRAM)
PREDICATE(kernel_p, K_KERNEL)
PREDICATE(mem_p, K_MEM)
PREDICATE(event_p, K_EVENT)
PREDICATE(cq_p, K_CQ)
PREDICATE(closure_p, K_CLOSURE)
#undef PREDICATE

static SCM
handle_pointer(SCM obj)
{
    int k = kind_of(obj);

    if (k < 0)
        scm_wrong_type_arg_msg("handle->pointer", 1, obj, "OpenCL object");
    return scm_from_pointer(unwrap(k, obj, 1, "handle->pointer"), NULL);
}

/* ------------------------------------------------------------------------
 * Platforms, devices */

static SCM
platforms(void)
{
    cl_uint n = 0;
    cl_platform_id ids[16];
    cl_int err;
    SCM l = SCM_EOL;

    guile_clgc_signals_note(); /* the first call loads PoCL */
    err = clgc_clGetPlatformIDs(16, ids, &n);
    guile_clgc_signals_restore();

    if (err == CL_PLATFORM_NOT_FOUND_KHR)
        return SCM_EOL;
    CHECK_CL(err, "platforms");
    if (n > 16)
        n = 16;
    while (n-- > 0)
        l = scm_cons(wrap(K_PLATFORM, ids[n]), l);
    return l;
}

/* A wrong-type-arg error unless ok. */
static void
validate(const char *who, int ok, SCM v, int pos, const char *what)
{
    if (!ok)
        scm_wrong_type_arg_msg(who, pos, v, what);
}

/* An exact integer argument within [min, max]: a wrong type raises
 * wrong-type-arg, a value out of the range out-of-range, both with
 * arguments Guile can print (scm_to_size_t's own range error, in Guile
 * 3.0.8, carries bounds that crash the printer). */
static int64_t
to_signed(SCM v, int64_t min, int64_t max, int pos, const char *who)
{
    if (!scm_is_exact_integer(v))
        scm_wrong_type_arg_msg(who, pos, v, "exact integer");
    if (!scm_is_signed_integer(v, min, max))
        scm_out_of_range_pos(who, v, scm_from_int(pos));
    return scm_to_int64(v);
}

static uint64_t
to_unsigned(SCM v, uint64_t max, int pos, const char *who)
{
    if (!scm_is_exact_integer(v))
        scm_wrong_type_arg_msg(who, pos, v, "exact integer");
    if (!scm_is_unsigned_integer(v, 0, max))
        scm_out_of_range_pos(who, v, scm_from_int(pos));
    return scm_to_uint64(v);
}

static int
sym_is(SCM sym, const char *name)
{
    return scm_is_eq(sym, scm_from_utf8_symbol(name));
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
    guile_clgc_signals_note(); /* opening the device starts LLVM */
    err = clgc_clGetDeviceIDs(p, t, 16, ids, &n);
    guile_clgc_signals_restore();
    if (err == CL_DEVICE_NOT_FOUND)
        return SCM_EOL;
    CHECK_CL(err, "devices");
    if (n > 16)
        n = 16;
    while (n-- > 0)
        l = scm_cons(wrap(K_DEVICE, ids[n]), l);
    return l;
}

/* ------------------------------------------------------------------------
 * Info queries, by the registry's names and types (clgc/names.h) */

/* What a query asks besides its object: nothing, a device, or an argument
 * index. */
enum info_extra { EXTRA_NONE, EXTRA_DEVICE, EXTRA_ARG };

struct info_proc {
    const char *who;    /* "device-info" */
    const char *family; /* "cl_device_info" */
    enum kind kind;
    enum info_extra extra;
};

/* The query through clgc_info_get: extra is the device or a pointer to
 * the argument's index, as p->extra says. */
static cl_int
proc_get(const struct info_proc *p, void *obj, const void *extra, cl_uint param,
         size_t size, void *value, size_t *size_ret)
{
    clgc_info_extra_t x = {NULL, 0, 0, NULL};

    if (p->extra == EXTRA_DEVICE)
        x.device = (void *)extra;
    else if (p->extra == EXTRA_ARG)
        x.arg_index = *(const cl_uint *)extra;
    return clgc_info_get(clgc_info_family_find(p->family), obj, &x, param, size,
                         value, size_ret);
}

/* The binding's kind of each object kind of clgc's tables, and how to take
 * a reference of the wrapper's own on one (platforms and root devices have
 * none; the binding makes no sub-devices). A kind the binding lacks comes
 * back as a pointer. */
static const struct {
    const char *name;
    enum kind kind;
    cl_int (*retain)(void *obj);
} info_kinds[] = {
    {"platform", K_PLATFORM, NULL},
    {"device", K_DEVICE, NULL},
    {"context", K_CONTEXT, (cl_int(*)(void *))clgc_clRetainContext},
    {"command_queue", K_QUEUE, (cl_int(*)(void *))clgc_clRetainCommandQueue},
    {"mem", K_MEM, (cl_int(*)(void *))clgc_clRetainMemObject},
    {"program", K_PROGRAM, (cl_int(*)(void *))clgc_clRetainProgram},
    {"kernel", K_KERNEL, (cl_int(*)(void *))clgc_clRetainKernel},
    {"event", K_EVENT, (cl_int(*)(void *))clgc_clRetainEvent},
};

/* The handle h of kind name as an object holding its own reference, or #f
 * for NULL. */
static SCM
info_handle(const char *name, void *h, const char *who)
{
    if (h == NULL)
        return SCM_BOOL_F;
    for (size_t i = 0; i < sizeof(info_kinds) / sizeof(info_kinds[0]); i++) {
        if (strcmp(info_kinds[i].name, name) != 0)
            continue;
        if (info_kinds[i].retain != NULL)
            CHECK_CL(info_kinds[i].retain(h), who);
        return wrap(info_kinds[i].kind, h);
    }
    return scm_from_pointer(h, NULL);
}

/* A 32-bit enum value: its name as a symbol, or the integer where the
 * group has no name for it (a negative execution status is an error). */
static SCM
info_enum(const char *group, int32_t v)
{
    const char *name = clgc_enum_name(clgc_enum_group_find(group), v);

    return name != NULL ? scm_from_utf8_symbol(name) : scm_from_int32(v);
}

/* A bitfield: the names of its set flags as symbols, in bit order; a bit
 * the group does not name as its value. */
static SCM
info_bits(const char *group, uint64_t bits)
{
    const clgc_enum_group_t *g = clgc_enum_group_find(group);
    SCM l = SCM_EOL;

    for (int b = 63; b >= 0; b--) {
        uint64_t bit = (uint64_t)1 << b;
        const char *name;

        if (!(bits & bit))
            continue;
        name = clgc_enum_name(g, (int64_t)bit);
        l = scm_cons(name != NULL ? scm_from_utf8_symbol(name)
                                  : scm_from_uint64(bit),
                     l);
    }
    return l;
}

/* The i-th of the elements of `unit` bytes at buf, as the type says. */
static SCM
info_element(const clgc_info_t *info, const char *buf, size_t i, size_t unit,
             const char *who)
{
    const void *v = buf + i * unit;

    switch (info->type) {
    case CLGC_INFO_STRING_ARRAY:
        return str_or_false(*(const char *const *)v);
    case CLGC_INFO_UINT_ARRAY:
        return scm_from_uint32(*(const uint32_t *)v);
    case CLGC_INFO_ULONG_ARRAY:
    case CLGC_INFO_PROPERTIES:
        return scm_from_uint64(*(const uint64_t *)v);
    case CLGC_INFO_SIZE_ARRAY:
        return scm_from_size_t(*(const size_t *)v);
    case CLGC_INFO_PROPERTIES_INTPTR:
        return scm_from_intptr_t(*(const intptr_t *)v);
    case CLGC_INFO_ENUM_ARRAY:
        return info_enum(info->group, *(const int32_t *)v);
    case CLGC_INFO_HANDLE_ARRAY:
        return info_handle(info->group, *(void *const *)v, who);
    case CLGC_INFO_NAME_VERSION_ARRAY: {
        const cl_name_version *nv = v;

        return scm_cons(scm_from_utf8_stringn(
                            nv->name, strnlen(nv->name, sizeof(nv->name))),
                        scm_from_uint32(nv->version));
    }
    default:
        return SCM_BOOL_F;
    }
}

/* One value of a scalar type, whole at v. */
static SCM
info_scalar(const clgc_info_t *info, const void *v, const char *who)
{
    switch (info->type) {
    case CLGC_INFO_BOOL:
        return scm_from_bool(*(const cl_bool *)v != CL_FALSE);
    case CLGC_INFO_INT:
        return scm_from_int32(*(const int32_t *)v);
    case CLGC_INFO_UINT:
        return scm_from_uint32(*(const uint32_t *)v);
    case CLGC_INFO_ULONG:
        return scm_from_uint64(*(const uint64_t *)v);
    case CLGC_INFO_SIZE:
        return scm_from_size_t(*(const size_t *)v);
    case CLGC_INFO_FLOAT:
        return scm_from_double(*(const cl_float *)v);
    case CLGC_INFO_POINTER:
        return *(void *const *)v == NULL
                   ? SCM_BOOL_F
                   : scm_from_pointer(*(void *const *)v, NULL);
    case CLGC_INFO_BITFIELD:
        return info_bits(info->group, *(const uint64_t *)v);
    case CLGC_INFO_ENUM:
        return info_enum(info->group, *(const int32_t *)v);
    case CLGC_INFO_HANDLE:
        return info_handle(info->group, *(void *const *)v, who);
    case CLGC_INFO_IMAGE_FORMAT: {
        const cl_image_format *f = v;

        return scm_cons(
            info_enum("cl_channel_order", (int32_t)f->image_channel_order),
            info_enum("cl_channel_type", (int32_t)f->image_channel_data_type));
    }
    default:
        scm_misc_error(who, "~A: no conversion for its type",
                       scm_list_1(scm_from_utf8_string(info->name)));
        return SCM_BOOL_F;
    }
}

/* The value of info, size bytes at buf (malloc'd: freed on a non-local
 * exit by the dynwind the caller opened). */
static SCM
info_value(const clgc_info_t *info, const char *buf, size_t size,
           const char *who)
{
    size_t unit = clgc_info_type_size(info->type),
           n = unit ? size / unit : size;
    SCM l = SCM_EOL;

    switch (info->type) {
    case CLGC_INFO_STRING:
        return scm_from_utf8_stringn(buf, strnlen(buf, size));
    case CLGC_INFO_BYTES: {
        SCM bv = scm_c_make_bytevector(size);

        memcpy(SCM_BYTEVECTOR_CONTENTS(bv), buf, size);
        return bv;
    }
    case CLGC_INFO_STRING_ARRAY:
    case CLGC_INFO_UINT_ARRAY:
    case CLGC_INFO_ULONG_ARRAY:
    case CLGC_INFO_SIZE_ARRAY:
    case CLGC_INFO_PROPERTIES:
    case CLGC_INFO_PROPERTIES_INTPTR:
    case CLGC_INFO_ENUM_ARRAY:
    case CLGC_INFO_HANDLE_ARRAY:
    case CLGC_INFO_NAME_VERSION_ARRAY:
        while (n-- > 0)
            l = scm_cons(info_element(info, buf, n, unit, who), l);
        return l;
    default:
        break;
    }
    /* A bitfield in 32 bits: PoCL 3.1 answers
     * CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES so. */
    if (info->type == CLGC_INFO_BITFIELD && size == 4)
        return info_bits(info->group, *(const uint32_t *)(const void *)buf);
    if (n < 1)
        scm_misc_error(who, "~A: the driver returned ~A bytes, ~A expected",
                       scm_list_3(scm_from_utf8_string(info->name),
                                  scm_from_size_t(size),
                                  scm_from_size_t(unit)));
    return info_scalar(info, buf, who);
}

/* CL_PROGRAM_BINARIES in *out: one bytevector per device of the program,
 * as long as CL_PROGRAM_BINARY_SIZES says (the caller allocates them).
 * Returns OpenCL's code. */
static cl_int
info_binaries(const struct info_proc *p, void *obj, const void *extra, SCM *out)
{
    size_t size = 0, n;
    size_t *sizes;
    unsigned char **bins;
    SCM *bvs;
    cl_int err =
        proc_get(p, obj, extra, CL_PROGRAM_BINARY_SIZES, 0, NULL, &size);

    if (err != CL_SUCCESS)
        return err;
    n = size / sizeof(size_t);
    sizes = scm_gc_malloc_pointerless(size + sizeof(size_t), "binary sizes");
    err = proc_get(p, obj, extra, CL_PROGRAM_BINARY_SIZES, size, sizes, NULL);
    if (err != CL_SUCCESS)
        return err;
    bins = scm_gc_malloc((n + 1) * sizeof(*bins), "binaries");
    bvs = scm_gc_malloc((n + 1) * sizeof(*bvs), "binaries");
    for (size_t i = 0; i < n; i++) {
        bvs[i] = scm_c_make_bytevector(sizes[i]);
        bins[i] = (unsigned char *)SCM_BYTEVECTOR_CONTENTS(bvs[i]);
    }
    err = proc_get(p, obj, extra, CL_PROGRAM_BINARIES, n * sizeof(*bins), bins,
                   NULL);
    *out = SCM_EOL;
    while (err == CL_SUCCESS && n-- > 0)
        *out = scm_cons(bvs[n], *out);
    return err;
}

/* The value of the query info of obj in *out; returns OpenCL's code. */
static cl_int
info_fetch(const struct info_proc *p, void *obj, const void *extra,
           const clgc_info_t *info, SCM *out)
{
    size_t size = 0;
    char *buf;
    cl_int err;

    if (info->type == CLGC_INFO_BINARIES)
        return info_binaries(p, obj, extra, out);
    err = proc_get(p, obj, extra, info->value, 0, NULL, &size);
    if (err != CL_SUCCESS)
        return err;
    scm_dynwind_begin(0);
    buf = scm_malloc(size + 1);
    scm_dynwind_free(buf);
    /* An empty value is not asked for again: PoCL 3.1 copies
     * CL_CONTEXT_PROPERTIES from NULL when the context has none. */
    if (size > 0)
        err = proc_get(p, obj, extra, info->value, size, buf, NULL);
    buf[size] = '\0';
    if (err == CL_SUCCESS)
        *out = info_value(info, buf, size, p->who);
    scm_dynwind_end();
    return err;
}

/* The query of p's family that key (a symbol) names. */
static const clgc_info_t *
info_lookup(const struct info_proc *p, SCM key, int pos)
{
    const clgc_info_t *info;
    char *name;

    SCM_ASSERT_TYPE(scm_is_symbol(key), key, pos, p->who, "symbol");
    name = scm_to_utf8_string(scm_symbol_to_string(key));
    info = clgc_info_find(clgc_info_family_find(p->family), name);
    free(name);
    if (info == NULL)
        scm_misc_error(p->who, "unknown info key ~S (not a ~A)",
                       scm_list_2(key, scm_from_utf8_string(p->family)));
    return info;
}

/* (<proc> obj [extra] key) for the procedure p. */
static SCM
info_call(const struct info_proc *p, SCM obj, SCM extra, SCM key)
{
    void *h = unwrap(p->kind, obj, 1, p->who);
    const void *x = NULL;
    cl_uint index = 0;

    if (p->extra == EXTRA_DEVICE) {
        x = unwrap(K_DEVICE, extra, 2, p->who);
    } else if (p->extra == EXTRA_ARG) {
        index = (cl_uint)to_unsigned(extra, UINT32_MAX, 2, p->who);
        x = &index;
    }
    const clgc_info_t *info;
    SCM v = SCM_BOOL_F;

    info = info_lookup(p, key, p->extra == EXTRA_NONE ? 2 : 3);
    cl_int err;

    err = info_fetch(p, h, x, info, &v);
    guile_clgc_signals_restore();
    CHECK_CL(err, p->who);
    return v;
}

/* The procedures, by index; the first of each kind is the family of its
 * object (info-alist's). */
static const struct info_proc info_procs[] = {
    {"platform-info", "cl_platform_info", K_PLATFORM, EXTRA_NONE},
    {"device-info", "cl_device_info", K_DEVICE, EXTRA_NONE},
    {"context-info", "cl_context_info", K_CONTEXT, EXTRA_NONE},
    {"command-queue-info", "cl_command_queue_info", K_QUEUE, EXTRA_NONE},
    {"mem-info", "cl_mem_info", K_MEM, EXTRA_NONE},
    {"program-info", "cl_program_info", K_PROGRAM, EXTRA_NONE},
    {"kernel-info", "cl_kernel_info", K_KERNEL, EXTRA_NONE},
    {"event-info", "cl_event_info", K_EVENT, EXTRA_NONE},
    {"event-profiling-info", "cl_profiling_info", K_EVENT, EXTRA_NONE},
    {"program-build-info", "cl_program_build_info", K_PROGRAM, EXTRA_DEVICE},
    {"kernel-work-group-info", "cl_kernel_work_group_info", K_KERNEL,
     EXTRA_DEVICE},
    {"kernel-arg-info", "cl_kernel_arg_info", K_KERNEL, EXTRA_ARG},
};

#define INFO_PROC(f, i)                                                        \
    static SCM f(SCM obj, SCM key)                                             \
    {                                                                          \
        return info_call(&info_procs[i], obj, SCM_UNDEFINED, key);             \
    }
INFO_PROC(platform_info, 0)
INFO_PROC(device_info, 1)
INFO_PROC(context_info, 2)
INFO_PROC(command_queue_info, 3)
INFO_PROC(mem_info, 4)
INFO_PROC(program_info, 5)
INFO_PROC(kernel_info, 6)
INFO_PROC(event_info, 7)
INFO_PROC(event_profiling_info, 8)
#undef INFO_PROC
#define INFO_PROC(f, i)                                                        \
    static SCM f(SCM obj, SCM extra, SCM key)                                  \
    {                                                                          \
        return info_call(&info_procs[i], obj, extra, key);                     \
    }
INFO_PROC(program_build_info, 9)
INFO_PROC(kernel_work_group_info, 10)
INFO_PROC(kernel_arg_info, 11)
#undef INFO_PROC

/* (info-names family): the registry's names of a family ('cl_device_info)
 * in its order, each with the type of its value: ((CL_DEVICE_TYPE .
 * bitfield) ...), the types of clgc/names.h. */
static SCM
info_names(SCM family)
{
    const clgc_info_family_t *f;
    char *name;
    SCM l = SCM_EOL;

    SCM_ASSERT_TYPE(scm_is_symbol(family), family, 1, "info-names", "symbol");
    name = scm_to_utf8_string(scm_symbol_to_string(family));
    f = clgc_info_family_find(name);
    free(name);
    if (f == NULL)
        scm_misc_error("info-names", "unknown info family ~S",
                       scm_list_1(family));
    for (size_t i = f->count; i-- > 0;)
        l = scm_acons(
            scm_from_utf8_symbol(f->infos[i].name),
            scm_from_utf8_symbol(clgc_info_type_name(f->infos[i].type)), l);
    return l;
}

/* (info-alist obj): every query of obj's family (platform, device,
 * context, command queue, mem object, program, kernel or event) that the
 * driver answers, as (CL_NAME . value) in the registry's order. A query it
 * refuses (one the device lacks) is left out. */
static SCM
info_alist(SCM obj)
{
    int k = kind_of(obj);
    const struct info_proc *p = NULL;
    const clgc_info_family_t *f;
    SCM l = SCM_EOL;

    for (size_t i = 0; k >= 0 && i < sizeof(info_procs) / sizeof(info_procs[0]);
         i++)
        if (info_procs[i].kind == (enum kind)k) {
            p = &info_procs[i];
            break;
        }
    if (p == NULL)
        scm_wrong_type_arg_msg("info-alist", 1, obj, "OpenCL object");
    f = clgc_info_family_find(p->family);
    for (size_t i = f->count; i-- > 0;) {
        SCM v = SCM_BOOL_F;

        if (info_fetch(p, unwrap(p->kind, obj, 1, "info-alist"), NULL,
                       &f->infos[i], &v) == CL_SUCCESS)
            l = scm_acons(scm_from_utf8_symbol(f->infos[i].name), v, l);
    }
    return l;
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
    guile_clgc_signals_note();
    c = clgc_clCreateContext(NULL, n, (cl_device_id *)d, NULL, NULL, &err);
    guile_clgc_signals_restore();
    free_array(d, buf);
    CHECK_CL(err, "make-context");
    return wrap(K_CONTEXT, c);
}

static SCM
make_queue(SCM context, SCM device, SCM profiling)
{
    void *c = unwrap(K_CONTEXT, context, 1, "make-command-queue");
    void *d = unwrap(K_DEVICE, device, 2, "make-command-queue");
    int prof = !SCM_UNBNDP(profiling) && scm_is_true(profiling);
    cl_ulong props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_int err = CL_SUCCESS;
    cl_command_queue q =
        clgc_create_command_queue(c, d, prof ? props : NULL, &err);

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

/* (%call-guarded proc args) of the Scheme half, looked up when the
 * extension loads (the module defines it first). */
static SCM guarded;

/* Report exn, a callback's exception, through clgc_callback_fail: it is
 * protected while clgc holds it. */
static void
report_failure(SCM exn)
{
    scm_gc_protect_object(exn);
    if (clgc_callback_fail(SCM_UNPACK_POINTER(exn)) != CLGC_OK)
        scm_gc_unprotect_object(exn);
}

/* proc applied to args under %call-guarded: its value, or, when it
 * raised, the exception object reported and #f in *ok. */
static SCM
apply_guarded(SCM proc, SCM args, int *ok)
{
    SCM r = scm_call_2(scm_variable_ref(guarded), proc, args);

    *ok = scm_is_true(scm_car(r));
    if (!*ok)
        report_failure(scm_cdr(r));
    return scm_cdr(r);
}

static SCM
call_body(void *data)
{
    struct scheme_call *c = data;
    int ok;

    apply_guarded(c->proc, c->args, &ok);
    return SCM_UNSPECIFIED;
}

static SCM
call_handler(void *data, SCM key, SCM args)
{
    SCM cause;

    (void)data;
    /* What %call-guarded did not catch: converting a closure's result.
     * raise-exception of a non-throw object arrives as (%exception obj). */
    if (scm_is_eq(key, scm_from_utf8_symbol("%exception")) && scm_is_pair(args))
        cause = scm_car(args);
    else
        cause = scm_cons(key, args);
    report_failure(cause);
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

/* A build notification's data: #(proc args returned failure), kept alive
 * by clgc's record. returned is #t once build-program has returned;
 * failure is (exception) when the notification raised before that, for
 * build-program to raise. A notification that raises later (a driver
 * that calls back on a thread of its own after the build) is reported as
 * any callback's, at the next wait. build_lock orders the two. */
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

static SCM
build_body(void *data)
{
    SCM v = SCM_PACK_POINTER(data);
    SCM r = scm_call_2(scm_variable_ref(guarded), scm_c_vector_ref(v, 0),
                       scm_c_vector_ref(v, 1));

    if (scm_is_true(scm_car(r)))
        return SCM_UNSPECIFIED;
    pthread_mutex_lock(&build_lock);
    if (scm_is_false(scm_c_vector_ref(v, 2))) {
        scm_c_vector_set_x(v, 3, scm_list_1(scm_cdr(r)));
        pthread_mutex_unlock(&build_lock);
    } else {
        pthread_mutex_unlock(&build_lock);
        report_failure(scm_cdr(r));
    }
    return SCM_UNSPECIFIED;
}

static void *
build_guarded(void *data)
{
    scm_c_catch(SCM_BOOL_T, build_body, data, call_handler, NULL, NULL, NULL);
    return NULL;
}

static void CL_CALLBACK
build_notify(cl_program program, void *data)
{
    (void)program;
    scm_with_guile(build_guarded, data);
}

static SCM
build_program(SCM program, SCM options, SCM notify)
{
    void *p = unwrap(K_PROGRAM, program, 1, "build-program");
    char *opts = NULL;
    SCM pair = SCM_BOOL_F, failure = SCM_BOOL_F;
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
        pair = scm_c_make_vector(4, SCM_BOOL_F);
        scm_c_vector_set_x(pair, 0, notify);
        scm_c_vector_set_x(pair, 1, scm_list_1(program));
    }
    guile_clgc_signals_note();
    err = clgc_clBuildProgram(
        p, 0, NULL, opts, scm_is_true(pair) ? build_notify : NULL,
        scm_is_true(pair) ? SCM_UNPACK_POINTER(pair) : NULL);
    free(opts);
    guile_clgc_signals_restore();
    if (scm_is_true(pair)) {
        pthread_mutex_lock(&build_lock);
        scm_c_vector_set_x(pair, 2, SCM_BOOL_T);
        failure = scm_c_vector_ref(pair, 3);
        pthread_mutex_unlock(&build_lock);
    }
    scm_remember_upto_here_1(pair);
    if (scm_is_pair(failure) && err == CL_SUCCESS)
        raise_clgc_named(CLGC_ECALLBACK, "clBuildProgram", scm_car(failure),
                         "a Scheme callback raised an exception");
    if (scm_is_pair(failure)) {
        /* The build's own error first; the notification's at the next
         * wait, as any callback's. */
        clgc_callback_error_t e = {"clBuildProgram", CLGC_ECALLBACK,
                                   SCM_UNPACK_POINTER(scm_car(failure))};

        scm_gc_protect_object(scm_car(failure));
        guile_clgc_callback_failed(&e, NULL);
    }
    if (err != CL_SUCCESS)
        raise_error(cl_error_name(err), err, "build-program",
                    err == CL_BUILD_PROGRAM_FAILURE ? all_build_logs(p)
                                                    : SCM_BOOL_F,
                    SCM_BOOL_F, NULL);
    raise_pending(); /* an earlier callback's failure */
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
    guile_clgc_signals_note();
    k = clgc_clCreateKernel(p, n, &err);
    guile_clgc_signals_restore();
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
    cl_uint i = (cl_uint)to_unsigned(index, UINT32_MAX, 2, "set-kernel-arg!");
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
            size = to_unsigned(value, SIZE_MAX, 3, "set-kernel-arg!");
        } else if (sym_is(type, "int")) {
            v.i = (cl_int)to_signed(value, INT32_MIN, INT32_MAX, 3,
                                    "set-kernel-arg!"),
            size = sizeof(cl_int);
        } else if (sym_is(type, "uint")) {
            v.u = (cl_uint)to_unsigned(value, UINT32_MAX, 3, "set-kernel-arg!"),
            size = sizeof(cl_uint);
        } else if (sym_is(type, "long")) {
            v.l = to_signed(value, INT64_MIN, INT64_MAX, 3, "set-kernel-arg!"),
            size = sizeof(cl_long);
        } else if (sym_is(type, "ulong")) {
            v.ul = to_unsigned(value, UINT64_MAX, 3, "set-kernel-arg!"),
            size = sizeof(cl_ulong);
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
        size = to_unsigned(init, SIZE_MAX, 3, "make-buffer");
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

/* Waits that wake for Guile's asyncs.
 *
 * A wait sleeps in scm_std_select (outside Guile mode, as any crossing) on
 * an eventfd of its own, which clgc_event_notify handlers (RAW: they only
 * count down and write) make readable when the last event completes, and
 * on the thread's sleep pipe, which system-async-mark writes to: a SIGINT
 * handler, cancel-thread or any async wakes it; it runs the asyncs
 * (scm_async_tick) and goes on waiting, as sleep does. Once every event
 * has completed clgc_wait_for_events gives their status at once.
 *
 * The memory-safety rule: an async that raises (or cancel-thread) unwinds
 * out of the wait at once, while the commands go on. What they still use
 * stays alive until they complete: OpenCL keeps the events and the memory
 * objects of their commands, and what the binding gave them (a
 * transfer's bytevector) is protected from the collector until its
 * command completes. The waiter becomes an orphan; the next wait on any
 * thread unprotects the orphans whose commands have completed. */
struct waiter {
    atomic_int refs;    /* the waiting thread (or the orphan list) + handlers */
    atomic_int pending; /* events still to complete */
    int fd;             /* an eventfd, readable once pending is 0 */
    SCM keep;           /* protected until the commands complete, or #f */
    struct waiter *next_orphan;
};

static pthread_mutex_t orphan_lock = PTHREAD_MUTEX_INITIALIZER;
static struct waiter *orphans;

static void
waiter_unref(struct waiter *w)
{
    if (atomic_fetch_sub(&w->refs, 1) == 1) {
        close(w->fd);
        free(w);
    }
}

/* A completion, on whichever thread sees it: no runtime, no Guile. */
static void CL_CALLBACK
waiter_notify(cl_event event, cl_int status, void *data)
{
    struct waiter *w = data;
    uint64_t one = 1;

    (void)event;
    (void)status;
    if (atomic_fetch_sub(&w->pending, 1) == 1 &&
        write(w->fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
        abort(); /* an eventfd write of 1 cannot fail */
    waiter_unref(w);
}

/* The waiting thread left early (an async raised): hand its reference to
 * the orphan list, which keeps w->keep protected until pending is 0. */
static void
waiter_orphan(void *data)
{
    struct waiter *w = data;

    pthread_mutex_lock(&orphan_lock);
    w->next_orphan = orphans;
    orphans = w;
    pthread_mutex_unlock(&orphan_lock);
}

/* Unprotect and drop the orphans whose commands have completed. Guile
 * mode. */
static void
sweep_orphans(void)
{
    struct waiter *done = NULL, **pw;

    pthread_mutex_lock(&orphan_lock);
    for (pw = &orphans; *pw != NULL;) {
        struct waiter *w = *pw;

        if (atomic_load(&w->pending) == 0) {
            *pw = w->next_orphan;
            w->next_orphan = done;
            done = w;
        } else {
            pw = &w->next_orphan;
        }
    }
    pthread_mutex_unlock(&orphan_lock);
    while (done != NULL) {
        struct waiter *w = done;

        done = w->next_orphan;
        if (scm_is_true(w->keep))
            scm_gc_unprotect_object(w->keep);
        waiter_unref(w);
    }
}

/* Wait for n events, running Guile's asyncs meanwhile (see above); keep
 * (or #f) stays protected until the commands complete, however the wait
 * ends. Returns clgc_wait_for_events's code. With the regions off, the
 * wait is clgc_wait_for_events in Guile mode, as before. */
static cl_int
interruptible_wait(cl_uint n, cl_event *events, SCM keep)
{
    struct waiter *w;
    cl_int err;

    sweep_orphans();
    w = guile_clgc_regions() ? calloc(1, sizeof(*w)) : NULL;
    if (w != NULL && (w->fd = eventfd(0, EFD_CLOEXEC)) < 0) {
        free(w);
        w = NULL;
    }
    if (w != NULL) {
        atomic_init(&w->refs, 1);
        atomic_init(&w->pending, (int)n);
        w->keep = SCM_BOOL_F;
        for (cl_uint i = 0; i < n; i++) {
            atomic_fetch_add(&w->refs, 1);
            if (clgc_event_notify(events[i], CLGC_NOTIFY_RAW, waiter_notify,
                                  w) != CL_SUCCESS)
                waiter_notify(events[i], 0, w); /* wait's error says why */
        }
        if (scm_is_true(keep)) {
            scm_gc_protect_object(keep);
            w->keep = keep;
        }
        scm_dynwind_begin(0);
        scm_dynwind_unwind_handler(waiter_orphan, w, 0);
        while (atomic_load(&w->pending) > 0) {
            fd_set r;
            int rc;

            FD_ZERO(&r);
            FD_SET(w->fd, &r);
            rc = scm_std_select(w->fd + 1, &r, NULL, NULL, NULL);
            if (rc < 0 && errno == EINTR)
                scm_async_tick(); /* may unwind: waiter_orphan */
            else if (rc < 0)
                break; /* clgc_wait_for_events waits instead */
        }
        scm_dynwind_end();
        if (scm_is_true(w->keep))
            scm_gc_unprotect_object(w->keep);
        w->keep = SCM_BOOL_F;
        waiter_unref(w);
    }
    err = clgc_wait_for_events(n, events);
    guile_clgc_signals_restore();
    scm_remember_upto_here_1(keep);
    return err;
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
    scm_dynwind_begin(0);
    if (e != buf)
        scm_dynwind_free(e);
    err = interruptible_wait(n, (cl_event *)e, SCM_BOOL_F);
    scm_dynwind_end();
    scm_remember_upto_here_1(events);
    raise_pending();
    CHECK_CL(err, "wait-for-events");
    return SCM_UNSPECIFIED;
}

static void
release_event(void *ev)
{
    clgc_clReleaseEvent(ev);
}

/* Blocking transfers: enqueued without blocking and waited for with the
 * interruptible wait, so the thread leaves Guile and the collector runs
 * meanwhile; the bytevector stays alive until the command completes, even
 * when an async unwinds out of the wait. */
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
        off = to_unsigned(offset, SIZE_MAX, 4, who);
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
    scm_dynwind_begin(0);
    scm_dynwind_unwind_handler(release_event, ev, SCM_F_WIND_EXPLICITLY);
    err = interruptible_wait(1, &ev, bv); /* bv kept until the transfer ends */
    scm_dynwind_end();
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
        out[0] = to_unsigned(sizes, SIZE_MAX, pos, who);
        return 1;
    }
    if (scm_ilength(sizes) < 1 || scm_ilength(sizes) > 3)
        scm_wrong_type_arg_msg(who, pos, sizes, "size or list of 1 to 3");
    for (SCM l = sizes; !scm_is_null(l); l = scm_cdr(l))
        out[dim++] = to_unsigned(scm_car(l), SIZE_MAX, pos, who);
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
    guile_clgc_signals_restore();
    free_array(w, buf);
    CHECK_CL(err, who);
    return wrap(K_EVENT, ev);
}

static SCM
finish(SCM queue)
{
    void *q = unwrap(K_QUEUE, queue, 1, "finish");
    cl_int err;

    err = clgc_clFinish(q);
    guile_clgc_signals_restore();
    CHECK_CL(err, "finish");
    return SCM_UNSPECIFIED;
}

static SCM
flush(SCM queue)
{
    void *q = unwrap(K_QUEUE, queue, 1, "flush");
    cl_int err;

    err = clgc_clFlush(q);
    guile_clgc_signals_restore();
    CHECK_CL(err, "flush");
    return SCM_UNSPECIFIED;
}

/* ------------------------------------------------------------------------
 * Events */

/* An execution status as event-status and the event callbacks give it:
 * complete running submitted queued, or the negative error code. */
static SCM
status_scm(cl_int s)
{
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
event_status(SCM event)
{
    cl_int s = 0;

    CHECK_CL(clgc_clGetEventInfo(unwrap(K_EVENT, event, 1, "event-status"),
                                 CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(s),
                                 &s, NULL),
             "event-status");
    return status_scm(s);
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
        s = (cl_int)to_signed(status, INT32_MIN, INT32_MAX, 2,
                              "set-user-event-status!");
    CHECK_CL(clgc_clSetUserEventStatus(e, s), "set-user-event-status!");
    return SCM_UNSPECIFIED;
}

static void CL_CALLBACK
event_notify(cl_event event, cl_int status, void *data)
{
    SCM pair = SCM_PACK_POINTER(data);

    (void)event;
    call_scheme(scm_car(pair), scm_list_2(scm_cdr(pair), status_scm(status)));
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
    unsigned m =
        SCM_UNBNDP(max) ? 0 : (unsigned)to_unsigned(max, UINT_MAX, 2, "drain!");
    int n = clgc_queue_drain(q, m);

    raise_pending();
    if (n < 0)
        raise_clgc(n, "drain!");
    return scm_from_int(n);
}

/* ------------------------------------------------------------------------
 * The generic path: any command by name, arguments converted by the
 * command's metadata. */

/* Whether p can be an OpenCL object: its first word is readable (read
 * with process_vm_readv, which fails instead of faulting) and is the
 * dispatch table of one of the platforms, as every ICD object's is. It
 * cannot tell a released object from a live one of the same vendor. */
static int
object_plausible(void *p)
{
    void *dispatch = NULL, *pd = NULL;
    struct iovec local = {&dispatch, sizeof(dispatch)};
    struct iovec remote = {p, sizeof(dispatch)};
    cl_platform_id ids[16];
    cl_uint n = 0;

    if (p == NULL || ((uintptr_t)p & (sizeof(void *) - 1)) != 0 ||
        process_vm_readv(getpid(), &local, 1, &remote, 1, 0) !=
            (ssize_t)sizeof(dispatch) ||
        dispatch == NULL)
        return 0;
    if (clgc_clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
        return 0;
    for (cl_uint i = 0; i < n && i < 16; i++) {
        memcpy(&pd, (void *)ids[i], sizeof(pd));
        if (pd == dispatch)
            return 1;
    }
    return 0;
}

/* The binding's kind of an OpenCL handle type ("cl_command_queue"), or -1
 * for a type the binding has no objects of. */
static int
kind_of_type(const char *type)
{
    static const char *const names[K_CQ] = {[K_PLATFORM] = "cl_platform_id",
                                            [K_DEVICE] = "cl_device_id",
                                            [K_CONTEXT] = "cl_context",
                                            [K_QUEUE] = "cl_command_queue",
                                            [K_PROGRAM] = "cl_program",
                                            [K_KERNEL] = "cl_kernel",
                                            [K_MEM] = "cl_mem",
                                            [K_EVENT] = "cl_event"};

    for (int k = 0; k < K_CQ; k++)
        if (strcmp(names[k], type) == 0)
            return k;
    return -1;
}

/* Whether an OpenCL handle type of clgc's tables that the binding has no
 * objects of (cl_sampler, cl_command_buffer_khr, ...). */
static int
foreign_handle_type(const char *type)
{
    for (size_t i = 0; i < clgc_object_kind_count(); i++)
        if (strcmp(clgc_object_kind_at(i)->type, type) == 0)
            return 1;
    return 0;
}

/* A handle parameter (no '*' in its type) of command-call: #f (NULL), or
 * an object of the parameter's kind, never a raw pointer: an address
 * that is no object of that kind is dereferenced by the ICD loader. A
 * handle of a kind the binding has no objects of (a sampler, made by a
 * generic call) is a pointer that passes the object check. */
static void *
generic_handle(const clgc_param_t *param, SCM v, int pos)
{
    const char *who = "command-call";
    int want = kind_of_type(param->type);
    char what[96];

    if (scm_is_false(v))
        return NULL;
    if (want >= 0) {
        if (SCM_IS_A_P(v, types[want]))
            return unwrap((enum kind)want, v, pos, who);
        snprintf(what, sizeof(what), "%s or #f for %s %s", kinds[want].name,
                 param->type, param->name);
        scm_wrong_type_arg_msg(who, pos, v, what);
    }
    if (SCM_POINTER_P(v) && foreign_handle_type(param->type)) {
        if (!object_plausible(SCM_POINTER_VALUE(v)))
            raise_error("CL_INVALID_VALUE", CL_INVALID_VALUE, who, SCM_BOOL_F,
                        SCM_BOOL_F, "the pointer is no OpenCL object");
        return SCM_POINTER_VALUE(v);
    }
    snprintf(what, sizeof(what), "%s or #f", param->type);
    scm_wrong_type_arg_msg(who, pos, v, what);
    return NULL;
}

/* A bytevector for pointer parameter i of the converted arguments a:
 * refused unless it holds all the command may read or write there
 * (clgc_command_reach; a const char * one must hold its NUL). */
static void
check_reach(const clgc_command_t *cmd, const clgc_arg_t *a, unsigned i, SCM bv)
{
    const char *who = "command-call";
    size_t have = SCM_BYTEVECTOR_LENGTH(bv);
    int64_t need = clgc_command_reach(cmd, i, a);
    int pos = (int)i + 2;

    if (need < 0 && strcmp(cmd->params[i].type, "const char *") == 0) {
        if (memchr(SCM_BYTEVECTOR_CONTENTS(bv), 0, have) == NULL)
            scm_misc_error(
                who, "argument ~A (~A ~A): no NUL in the bytevector",
                scm_list_3(scm_from_int(pos),
                           scm_from_utf8_string(cmd->params[i].type),
                           scm_from_utf8_string(cmd->params[i].name)));
        return;
    }
    if (need < 0)
        scm_misc_error(
            who,
            "argument ~A (~A ~A): the size it needs is not known (~A): "
            "pass a pointer (bytevector->pointer)",
            scm_list_4(scm_from_int(pos),
                       scm_from_utf8_string(cmd->params[i].type),
                       scm_from_utf8_string(cmd->params[i].name),
                       scm_from_utf8_string(cmd->params[i].unknown != NULL
                                                ? cmd->params[i].unknown
                                                : "a count of no integer")));
    if ((uint64_t)need > have)
        scm_misc_error(
            who, "argument ~A (~A ~A): ~A bytes needed, the bytevector has ~A",
            scm_list_5(scm_from_int(pos),
                       scm_from_utf8_string(cmd->params[i].type),
                       scm_from_utf8_string(cmd->params[i].name),
                       scm_from_int64(need), scm_from_size_t(have)));
}

/* Note the handles a generic call made (seen_note): its result, when its
 * type is a kind's, and the first element of an out-parameter of one
 * (cl_event *event, cl_mem *, ...) of a call that returned CL_SUCCESS. */
static void
note_generic_handles(const clgc_command_t *cmd, const clgc_arg_t *a,
                     const clgc_value_t *r)
{
    int k = kind_of_type(cmd->result_type);
    char type[64];

    if (k >= 0)
        seen_note((enum kind)k, r->p);
    /* Out-parameters are written only by a call that succeeded. */
    if (cmd->result_ctype != CLGC_CTYPE_INT32 || r->i32 != CL_SUCCESS)
        return;
    for (unsigned i = 0; i < cmd->nparams; i++) {
        const char *t = cmd->params[i].type, *star = strchr(t, '*');
        size_t n = star != NULL ? (size_t)(star - t) : 0;
        void *h = NULL;

        if (star == NULL || star[1] != '\0' || strncmp(t, "const ", 6) == 0 ||
            a[i].value.p == NULL || n == 0 || n >= sizeof(type))
            continue;
        memcpy(type, t, n);
        while (n > 0 && type[n - 1] == ' ')
            n--;
        type[n] = '\0';
        if ((k = kind_of_type(type)) < 0)
            continue;
        memcpy(&h, a[i].value.p, sizeof(h));
        seen_note((enum kind)k, h);
    }
}

static SCM
command_call(SCM name, SCM args)
{
    const char *who = "command-call";
    char *n;
    const clgc_command_t *cmd;
    clgc_arg_t a[CLGC_CLOSURE_MAX_ARGS];
    clgc_value_t r;
    unsigned i = 0;
    int err;

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
            if (t == CLGC_CTYPE_INT8)
                a[i].value.i8 =
                    (int8_t)to_signed(v, INT8_MIN, INT8_MAX, pos, who);
            else if (t == CLGC_CTYPE_INT16)
                a[i].value.i16 =
                    (int16_t)to_signed(v, INT16_MIN, INT16_MAX, pos, who);
            else if (t == CLGC_CTYPE_INT32)
                a[i].value.i32 =
                    (int32_t)to_signed(v, INT32_MIN, INT32_MAX, pos, who);
            else
                a[i].value.i64 = to_signed(v, INT64_MIN, INT64_MAX, pos, who);
            break;
        }
        case CLGC_CTYPE_UINT8:
            a[i].value.u8 = (uint8_t)to_unsigned(v, UINT8_MAX, pos, who);
            break;
        case CLGC_CTYPE_UINT16:
            a[i].value.u16 = (uint16_t)to_unsigned(v, UINT16_MAX, pos, who);
            break;
        case CLGC_CTYPE_UINT32:
            a[i].value.u32 = (uint32_t)to_unsigned(v, UINT32_MAX, pos, who);
            break;
        case CLGC_CTYPE_UINT64:
            a[i].value.u64 = to_unsigned(v, UINT64_MAX, pos, who);
            break;
        case CLGC_CTYPE_SIZE:
            a[i].value.size = to_unsigned(v, SIZE_MAX, pos, who);
            break;
        case CLGC_CTYPE_FLOAT:
            a[i].value.f = (float)scm_to_double(v);
            break;
        case CLGC_CTYPE_DOUBLE:
            a[i].value.d = scm_to_double(v);
            break;
        case CLGC_CTYPE_POINTER:
            if (strchr(cmd->params[i].type, '*') == NULL)
                a[i].value.p = generic_handle(&cmd->params[i], v, pos);
            else if (scm_is_false(v))
                a[i].value.p = NULL;
            else if (SCM_POINTER_P(v))
                a[i].value.p = SCM_POINTER_VALUE(v);
            else if (scm_is_bytevector(v))
                a[i].value.p = SCM_BYTEVECTOR_CONTENTS(v);
            else
                scm_wrong_type_arg_msg(who, pos, v,
                                       "pointer, bytevector or #f");
            break;
        case CLGC_CTYPE_FUNCTION:
            if (scm_is_false(v))
                a[i].value.p = NULL;
            else if (SCM_IS_A_P(v, types[K_CLOSURE]))
                a[i].value.fn =
                    ((struct closure *)unwrap(K_CLOSURE, v, pos, who))->code;
            else
                scm_wrong_type_arg_msg(who, pos, v, "closure or #f");
            break;
        default:
            scm_wrong_type_arg_msg(who, pos, v, "value");
        }
    }
    /* The sizes are known once every argument is converted. */
    i = 0;
    for (SCM l = args; !scm_is_null(l); l = scm_cdr(l), i++)
        if (cmd->params[i].ctype == CLGC_CTYPE_POINTER &&
            scm_is_bytevector(scm_car(l)))
            check_reach(cmd, a, i, scm_car(l));
    memset(&r, 0, sizeof(r));
    guile_clgc_signals_note();
    err = clgc_command_call(cmd, i, a, &r);
    guile_clgc_signals_restore();
    scm_remember_upto_here_1(args);
    if (err != CLGC_OK)
        raise_clgc(err, who);
    note_generic_handles(cmd, a, &r);
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

/* Whether h is an object of kind k: one the binding saw made as one
 * (seen_kind), still an object (object_plausible), and a platform of the
 * list or one the kind's info query answers. */
static int
object_of_kind(int k, void *h)
{
    cl_platform_id ids[16];
    cl_uint n = 0, u = 0;
    cl_device_type t = 0;

    if (seen_kind(h) != k || !object_plausible(h))
        return 0;
    switch (k) {
    case K_PLATFORM:
        if (clgc_clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
            return 0;
        for (cl_uint i = 0; i < n && i < 16; i++)
            if ((void *)ids[i] == h)
                return 1;
        return 0;
    case K_DEVICE:
        return clgc_clGetDeviceInfo(h, CL_DEVICE_TYPE, sizeof(t), &t, NULL) ==
               CL_SUCCESS;
    case K_CONTEXT:
        return clgc_clGetContextInfo(h, CL_CONTEXT_REFERENCE_COUNT, sizeof(u),
                                     &u, NULL) == CL_SUCCESS;
    case K_QUEUE:
        return clgc_clGetCommandQueueInfo(h, CL_QUEUE_REFERENCE_COUNT,
                                          sizeof(u), &u, NULL) == CL_SUCCESS;
    case K_PROGRAM:
        return clgc_clGetProgramInfo(h, CL_PROGRAM_REFERENCE_COUNT, sizeof(u),
                                     &u, NULL) == CL_SUCCESS;
    case K_KERNEL:
        return clgc_clGetKernelInfo(h, CL_KERNEL_REFERENCE_COUNT, sizeof(u), &u,
                                    NULL) == CL_SUCCESS;
    case K_MEM:
        return clgc_clGetMemObjectInfo(h, CL_MEM_REFERENCE_COUNT, sizeof(u), &u,
                                       NULL) == CL_SUCCESS;
    case K_EVENT:
        return clgc_clGetEventInfo(h, CL_EVENT_REFERENCE_COUNT, sizeof(u), &u,
                                   NULL) == CL_SUCCESS;
    default:
        return 0;
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
        if (sym_is(kind, names[k])) {
            void *h = SCM_POINTER_VALUE(pointer);

            if (!object_of_kind(k, h))
                raise_error(cl_error_name(kinds[k].invalid), kinds[k].invalid,
                            "pointer->object", SCM_BOOL_F, SCM_BOOL_F,
                            "the pointer is no OpenCL object of that kind");
            return wrap(k, h);
        }
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
    SCM args = SCM_EOL, r, proc;
    int n = 0, ok;

    /* Read under the lock into this frame, which the collector scans: a
     * release on another thread may unprotect it right after. */
    pthread_mutex_lock(&closure_lock);
    proc = k->c->proc;
    pthread_mutex_unlock(&closure_lock);
    if (scm_is_false(proc))
        return SCM_UNSPECIFIED; /* released: the zeroed result */
    for (const char *p = a; *p != ')'; p++)
        n++;
    for (int i = n - 1; i >= 0; i--)
        args = scm_cons(c_to_scm(a[i], k->args[i]), args);
    r = apply_guarded(proc, args, &ok);
    if (!ok)
        return SCM_UNSPECIFIED; /* the zeroed result */
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
        *(int64_t *)k->result =
            to_signed(r, INT64_MIN, INT64_MAX, 0, "closure");
        break;
    default:
        *(uint64_t *)k->result = to_unsigned(r, UINT64_MAX, 0, "closure");
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
 * with the arguments converted (integers, reals, pointers). (release c)
 * retires it: a later call from C returns a zero result. */
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

/* scm_c_define_gsubr, with a docstring (what ,describe and
 * procedure-documentation show). (clgc)'s export list is made from these
 * calls (guile.am: every define_doc call whose name does not start
 * with '%'), so none is defined without being exported and documented,
 * and the list names none that is gone. */
static void
define_doc(const char *name, int req, int opt, int rst, scm_t_subr fn,
           const char *doc)
{
    SCM proc = scm_c_define_gsubr(name, req, opt, rst, fn);

    scm_set_procedure_property_x(proc, scm_from_utf8_symbol("documentation"),
                                 scm_from_utf8_string(doc));
}

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

    guarded = scm_gc_protect_object(
        scm_c_module_lookup(scm_c_resolve_module("clgc"), "%call-guarded"));
    define_doc(
        "platforms", 0, 0, 0, platforms,
        "(platforms) -> the OpenCL platforms, a list of cl-platform objects.");
    define_doc(
        "platform-info", 2, 0, 0, platform_info,
        "(platform-info platform key) -> the value of the cl_platform_info "
        "query key (a symbol: 'CL_PLATFORM_NAME or 'name).");
    define_doc("devices", 1, 1, 0, devices,
               "(devices platform [type]) -> the platform's devices of type "
               "all (default), cpu, gpu, accelerator or default.");
    define_doc("device-info", 2, 0, 0, device_info,
               "(device-info device key) -> the value of the cl_device_info "
               "query key ('max-compute-units, 'CL_DEVICE_NAME, ...).");
    define_doc("context-info", 2, 0, 0, context_info,
               "(context-info context key) -> the value of the cl_context_info "
               "query key.");
    define_doc("command-queue-info", 2, 0, 0, command_queue_info,
               "(command-queue-info queue key) -> the value of the "
               "cl_command_queue_info query key.");
    define_doc(
        "mem-info", 2, 0, 0, mem_info,
        "(mem-info buffer key) -> the value of the cl_mem_info query key.");
    define_doc("program-info", 2, 0, 0, program_info,
               "(program-info program key) -> the value of the cl_program_info "
               "query key (CL_PROGRAM_BINARIES: a list of bytevectors).");
    define_doc("program-build-info", 3, 0, 0, program_build_info,
               "(program-build-info program device key) -> the value of the "
               "cl_program_build_info query key for device.");
    define_doc("kernel-info", 2, 0, 0, kernel_info,
               "(kernel-info kernel key) -> the value of the cl_kernel_info "
               "query key.");
    define_doc("kernel-work-group-info", 3, 0, 0, kernel_work_group_info,
               "(kernel-work-group-info kernel device key) -> the value of the "
               "cl_kernel_work_group_info query key for device.");
    define_doc("kernel-arg-info", 3, 0, 0, kernel_arg_info,
               "(kernel-arg-info kernel index key) -> the value of the "
               "cl_kernel_arg_info query key for argument index (from 0).");
    define_doc(
        "event-info", 2, 0, 0, event_info,
        "(event-info event key) -> the value of the cl_event_info query key.");
    define_doc("event-profiling-info", 2, 0, 0, event_profiling_info,
               "(event-profiling-info event key) -> the value of the "
               "cl_profiling_info query key (the queue needs profiling).");
    define_doc("info-alist", 1, 0, 0, info_alist,
               "(info-alist obj) -> every query of obj's family the driver "
               "answers, as ((CL_NAME . value) ...).");
    define_doc(
        "info-names", 1, 0, 0, info_names,
        "(info-names family) -> the names of an info family ('cl_device_info) "
        "with their value types, ((CL_DEVICE_TYPE . bitfield) ...).");
    define_doc("make-context", 1, 0, 0, make_context,
               "(make-context devices) -> a cl-context for a list of devices.");
    define_doc("make-command-queue", 2, 1, 0, make_queue,
               "(make-command-queue context device [profiling?]) -> a "
               "cl-command-queue.");
    define_doc("make-program", 2, 0, 0, make_program,
               "(make-program context source) -> a cl-program from OpenCL C "
               "source (a string).");
    define_doc("build-program", 1, 2, 0, build_program,
               "(build-program program [options] [notify]) -> program, built "
               "for its devices outside Guile mode; notify: (lambda (program) "
               "...). Raises CL_BUILD_PROGRAM_FAILURE with the build logs.");
    define_doc("program-build-log", 2, 0, 0, program_build_log,
               "(program-build-log program device) -> the build log of program "
               "for device, a string.");
    define_doc("make-kernel", 2, 0, 0, make_kernel,
               "(make-kernel program name) -> the cl-kernel called name.");
    define_doc("set-kernel-arg!", 3, 1, 0, set_kernel_arg,
               "(set-kernel-arg! kernel index value [type]) sets argument "
               "index: a buffer, a bytevector (its bytes), a number with type "
               "int uint long ulong float double, or a size with 'local.");
    define_doc("make-buffer", 3, 0, 0, make_buffer,
               "(make-buffer context flags size-or-bytevector) -> a cl-mem "
               "buffer; flags: read-write read-only write-only alloc-host-ptr; "
               "a bytevector is copied in.");
    define_doc("buffer-size", 1, 0, 0, buffer_size,
               "(buffer-size buffer) -> its size in bytes.");
    define_doc("read-buffer!", 3, 2, 0, read_buffer,
               "(read-buffer! queue buffer bytevector [offset] [wait-list]) "
               "reads the buffer into bytevector and returns it once done; the "
               "wait runs Guile's asyncs.");
    define_doc("write-buffer!", 3, 2, 0, write_buffer,
               "(write-buffer! queue buffer bytevector [offset] [wait-list]) "
               "writes bytevector into the buffer and returns it once done; "
               "the wait runs Guile's asyncs.");
    define_doc("enqueue-kernel", 3, 2, 0, enqueue_kernel,
               "(enqueue-kernel queue kernel global [local] [wait-list]) -> a "
               "cl-event; sizes: an integer or a list of 1 to 3.");
    define_doc("finish", 1, 0, 0, finish,
               "(finish queue) returns once every command of queue is done.");
    define_doc("flush", 1, 0, 0, flush,
               "(flush queue) submits the queue's commands to the device.");
    define_doc("wait-for-events", 1, 0, 0, wait_for_events,
               "(wait-for-events events) returns once every event of the list "
               "is complete, outside Guile mode, running Guile's asyncs as "
               "they come; raises a failed command's error.");
    define_doc("event-status", 1, 0, 0, event_status,
               "(event-status event) -> complete, running, submitted, queued, "
               "or a negative error code.");
    define_doc("make-user-event", 1, 0, 0, make_user_event,
               "(make-user-event context) -> a user cl-event, set with "
               "set-user-event-status!.");
    define_doc("set-user-event-status!", 2, 0, 0, set_user_event_status,
               "(set-user-event-status! event status) sets a user event's "
               "status: 'complete or a negative error code.");
    define_doc("set-event-callback!", 2, 1, 0, set_event_callback,
               "(set-event-callback! event proc [completion-queue]) calls "
               "(proc event status) once the event completes or fails, on "
               "OpenCL's thread, or in a drain! of completion-queue.");
    define_doc("make-completion-queue", 0, 0, 0, make_completion_queue,
               "(make-completion-queue) -> a completion queue for deferred "
               "callbacks, drained with drain!.");
    define_doc("%completion-queue-fd", 1, 0, 0, completion_queue_fd,
               "(%completion-queue-fd cq) -> the queue's eventfd (internal: "
               "use completion-queue-port).");
    define_doc("drain!", 1, 1, 0, drain,
               "(drain! cq [max]) runs up to max (default all) pending "
               "callbacks of cq on this thread and returns how many ran.");
    define_doc("release", 1, 0, 0, release,
               "(release obj) releases an OpenCL object (or closes a "
               "completion queue, or retires a closure) now; idempotent.");
    define_doc("cl-platform?", 1, 0, 0, platform_p,
               "(cl-platform? obj) -> whether obj is a platform.");
    define_doc("cl-device?", 1, 0, 0, device_p,
               "(cl-device? obj) -> whether obj is a device.");
    define_doc("cl-context?", 1, 0, 0, context_p,
               "(cl-context? obj) -> whether obj is a context.");
    define_doc("cl-command-queue?", 1, 0, 0, queue_p,
               "(cl-command-queue? obj) -> whether obj is a command queue.");
    define_doc("cl-program?", 1, 0, 0, program_p,
               "(cl-program? obj) -> whether obj is a program.");
    define_doc("cl-kernel?", 1, 0, 0, kernel_p,
               "(cl-kernel? obj) -> whether obj is a kernel.");
    define_doc("cl-mem?", 1, 0, 0, mem_p,
               "(cl-mem? obj) -> whether obj is a buffer (a memory object).");
    define_doc("cl-event?", 1, 0, 0, event_p,
               "(cl-event? obj) -> whether obj is an event.");
    define_doc("completion-queue?", 1, 0, 0, cq_p,
               "(completion-queue? obj) -> whether obj is a completion queue.");
    define_doc("closure?", 1, 0, 0, closure_p,
               "(closure? obj) -> whether obj is a closure (make-closure).");
    define_doc("%object-types", 0, 0, 0, object_types,
               "(%object-types) -> the object types (internal: for the "
               "printers).");
    define_doc("released?", 1, 0, 0, released_p,
               "(released? obj) -> #t once obj was released.");
    define_doc("handle->pointer", 1, 0, 0, handle_pointer,
               "(handle->pointer obj) -> obj's OpenCL handle, a pointer.");
    define_doc("pointer->object", 2, 0, 0, pointer_to_object,
               "(pointer->object kind pointer) adopts a handle of kind "
               "platform device context queue program kernel buffer event that "
               "the binding saw made; the object owns the reference.");
    define_doc("command-call", 1, 0, 1, command_call,
               "(command-call name arg ...) calls the OpenCL command called "
               "name through its clgc wrapper, arguments converted and checked "
               "by the command's metadata; returns its result.");
    define_doc("make-closure", 2, 0, 0, make_closure,
               "(make-closure signature proc) -> a closure: a C function of "
               "signature (\"v(pp)\") that calls proc, for the generic path.");
    define_doc(
        "closure-pointer", 1, 0, 0, closure_pointer,
        "(closure-pointer closure) -> the closure's C function, a pointer.");
    define_doc("set-safe-regions!", 1, 0, 0, set_safe_regions,
               "(set-safe-regions! on?) switches the safe regions on or off "
               "(off: every call in Guile mode, for comparison).");
    define_doc("safe-regions?", 0, 0, 0, safe_regions_p,
               "(safe-regions?) -> whether the safe regions are on.");
    define_doc("runtime-name", 0, 0, 0, runtime_name,
               "(runtime-name) -> the name of clgc's runtime, \"guile\".");
    define_doc("in-safe-region?", 0, 0, 0, thread_in_region_p,
               "(in-safe-region?) -> whether this thread is inside a safe "
               "region (never, from Scheme).");
}
