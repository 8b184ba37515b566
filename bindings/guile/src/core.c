/* The Guile binding's service, below every area file: errors raised as
 * &clgc-error (defined in modules/clgc.scm), the callback failures raised
 * at the next wait, OpenCL objects as Guile foreign objects, argument
 * checks, and Scheme callbacks entered with scm_with_guile. */

#include <libguile.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guile-clgc.h"

/* ------------------------------------------------------------------------
 * Error names */

/* The name of an OpenCL error code, from clgc's table of every code in the
 * registry; "CL_UNKNOWN_ERROR" for a code it lacks. */
const char *
guile_clgc_cl_error_name(cl_int code)
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

SCM
guile_clgc_str_or_false(const char *s)
{
    return s != NULL ? scm_from_utf8_string(s) : SCM_BOOL_F;
}

/* Raise &clgc-error; never returns. */
void
guile_clgc_raise_error(const char *name, int code, const char *who, SCM log,
                       SCM cause, const char *message)
{
    SCM args[6] = {scm_from_utf8_string(name),
                   scm_from_int(code),
                   scm_from_utf8_symbol(who),
                   log,
                   cause,
                   guile_clgc_str_or_false(message)};

    scm_call_n(raiser(), args, 6);
    abort(); /* the raiser never returns */
}

/* clgc's own codes by their C names: "CLGC_EBUSY". */
void
guile_clgc_raise_clgc_named(int code, const char *who, SCM cause,
                            const char *message)
{
    char name[64];

    snprintf(name, sizeof(name), "CLGC_%s", clgc_err_name(code));
    guile_clgc_raise_error(name, code, who, SCM_BOOL_F, cause, message);
}

void
guile_clgc_raise_cl(cl_int err, const char *who)
{
    guile_clgc_raise_error(guile_clgc_cl_error_name(err), err, who, SCM_BOOL_F,
                           SCM_BOOL_F, NULL);
}

void
guile_clgc_raise_clgc(int err, const char *who)
{
    guile_clgc_raise_clgc_named(err, who, SCM_BOOL_F, clgc_strerror(err));
}

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
void
guile_clgc_raise_pending(void)
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
    guile_clgc_raise_clgc_named(code, command, cause,
                                "a Scheme callback raised an exception");
}
/* ------------------------------------------------------------------------
 * Objects */

SCM guile_clgc_types[K_NKINDS];

/* An OpenCL object's foreign object holds a box (clgc/binding.h) around
 * its handle: a procedure holds it while it uses the handle (unwrap, until
 * the procedure ends: GUILE_CLGC_HELD), and a release on another thread,
 * or the finalizer, meanwhile takes effect when the last hold ends, so no
 * handle reaches OpenCL after its release. A kernel's box holds its
 * argument table (clgc/binding.h), which holds the kernel. Completion
 * queues and closures hold their own pointer. */
static cl_int
release_context(void *h)
{
    return clgc_clReleaseContext(h);
}
static cl_int
release_queue(void *h)
{
    return clgc_clReleaseCommandQueue(h);
}
static cl_int
release_program(void *h)
{
    return clgc_clReleaseProgram(h);
}
/* A kernel's box holds this: the kernel, and its argument table
 * (clgc/binding.h), made at its first set-kernel-arg!. */
struct kernel {
    cl_kernel k;
    clgc_kernel_args_t *args;
};

static cl_int
release_kernel(void *p)
{
    struct kernel *k = p;
    cl_int err;

    clgc_kernel_args_free(k->args);
    err = clgc_clReleaseKernel(k->k);
    free(k);
    return err;
}
static cl_int
release_mem(void *h)
{
    return clgc_clReleaseMemObject(h);
}
static cl_int
release_event(void *h)
{
    return clgc_clReleaseEvent(h);
}
static cl_int
release_sampler(void *h)
{
    return clgc_clReleaseSampler(h);
}

/* What releases a boxed object of kind k (NULL: platforms and root
 * devices, never released). */
static cl_int (*const releases[K_CQ])(void *) = {
    [K_CONTEXT] = release_context, [K_QUEUE] = release_queue,
    [K_PROGRAM] = release_program, [K_KERNEL] = release_kernel,
    [K_MEM] = release_mem,         [K_EVENT] = release_event,
    [K_SAMPLER] = release_sampler};

/* Release obj now, or when the last procedure holding it ends;
 * idempotent. A completion queue is closed; a closure retired. The lock
 * makes "take the pointer, then close it" one step for those. */
static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;

void
guile_clgc_release_object(enum kind k, SCM obj)
{
    void *p;

    if (k < K_CQ) {
        clgc_box_release(scm_foreign_object_ref(obj, 0));
        return;
    }
    pthread_mutex_lock(&handle_lock);
    p = scm_foreign_object_ref(obj, 0);
    scm_foreign_object_set_x(obj, 0, NULL);
    pthread_mutex_unlock(&handle_lock);
    if (p != NULL && k == K_CLOSURE)
        guile_clgc_closure_retire(p);
    /* On the finalization thread nobody else drains it; a queue with
     * completions still to come cannot be closed and is left. */
    else if (p != NULL)
        clgc_queue_close(p);
}

int
guile_clgc_released(SCM obj)
{
    void *p = scm_foreign_object_ref(obj, 0);

    return guile_clgc_kind_of(obj) < K_CQ ? clgc_box_released(p) : p == NULL;
}

/* Finalizers run on Guile's finalization thread, a Guile thread: the
 * wrappers' regions (scm_without_guile) work there as anywhere. A box is
 * freed once no procedure holds it. */
static void
finalize_boxed(SCM obj)
{
    clgc_box_free(scm_foreign_object_ref(obj, 0));
}

static void
finalize_K_CQ(SCM obj)
{
    guile_clgc_release_object(K_CQ, obj);
}

const struct guile_clgc_kind guile_clgc_kinds[K_NKINDS] = {
    [K_PLATFORM] = {"cl-platform", CL_INVALID_PLATFORM, finalize_boxed},
    [K_DEVICE] = {"cl-device", CL_INVALID_DEVICE, finalize_boxed},
    [K_CONTEXT] = {"cl-context", CL_INVALID_CONTEXT, finalize_boxed},
    [K_QUEUE] = {"cl-command-queue", CL_INVALID_COMMAND_QUEUE, finalize_boxed},
    [K_PROGRAM] = {"cl-program", CL_INVALID_PROGRAM, finalize_boxed},
    [K_KERNEL] = {"cl-kernel", CL_INVALID_KERNEL, finalize_boxed},
    [K_MEM] = {"cl-mem", CL_INVALID_MEM_OBJECT, finalize_boxed},
    [K_EVENT] = {"cl-event", CL_INVALID_EVENT, finalize_boxed},
    [K_SAMPLER] = {"cl-sampler", CL_INVALID_SAMPLER, finalize_boxed},
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

void
guile_clgc_seen_note(enum kind k, void *h)
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
int
guile_clgc_seen_kind(void *h)
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

SCM
guile_clgc_wrap(enum kind k, void *h)
{
    void *p = h, *box = NULL;

    if (k >= K_CQ)
        return scm_make_foreign_object_1(guile_clgc_types[k], h);
    guile_clgc_seen_note(k, h);
    if (k == K_KERNEL && (p = calloc(1, sizeof(struct kernel))) != NULL)
        ((struct kernel *)p)->k = h;
    if (p == NULL || (box = clgc_box_new(p, releases[k])) == NULL) {
        if (k == K_KERNEL) {
            free(p);
            clgc_clReleaseKernel(h);
        } else if (releases[k] != NULL) {
            releases[k](h);
        }
        scm_report_out_of_memory();
    }
    return scm_make_foreign_object_1(guile_clgc_types[k], box);
}

/* The live handle of obj, of kind k: a wrong type raises wrong-type-arg,
 * a released object &clgc-error with the kind's CL_INVALID_* code. */
static void
holds_back_to(void *mark)
{
    clgc_holds_back_to((size_t)(uintptr_t)mark);
}

void
guile_clgc_held_begin(void)
{
    scm_dynwind_begin(0);
    scm_dynwind_unwind_handler(holds_back_to,
                               (void *)(uintptr_t)clgc_holds_mark(),
                               SCM_F_WIND_EXPLICITLY);
}

/* What obj's slot holds, of kind k: for a boxed kind the object held
 * until the procedure ends (GUILE_CLGC_HELD; a kernel's argument table).
 * A wrong type raises wrong-type-arg, a released object &clgc-error with
 * the kind's CL_INVALID_* code. */
static void *
hold(enum kind k, SCM obj, int pos, const char *who)
{
    void *h;

    if (!SCM_IS_A_P(obj, guile_clgc_types[k]))
        scm_wrong_type_arg_msg(who, pos, obj, guile_clgc_kinds[k].name);
    h = scm_foreign_object_ref(obj, 0);
    if (h != NULL && k < K_CQ)
        h = clgc_box_get(h);
    if (h == NULL) {
        /* clgc's objects have clgc's code, by clgc's name: CLGC_EINVAL's
         * value is also CL_MEM_OBJECT_ALLOCATION_FAILURE's. */
        if (k == K_CQ)
            guile_clgc_raise_error("CLGC_EINVAL", CLGC_EINVAL, who, SCM_BOOL_F,
                                   SCM_BOOL_F,
                                   "the completion queue was closed");
        if (k == K_CLOSURE)
            guile_clgc_raise_error("CLGC_EINVAL", CLGC_EINVAL, who, SCM_BOOL_F,
                                   SCM_BOOL_F, "the closure was released");
        guile_clgc_raise_error(
            guile_clgc_cl_error_name(guile_clgc_kinds[k].invalid),
            guile_clgc_kinds[k].invalid, who, SCM_BOOL_F, SCM_BOOL_F,
            "the object was released");
    }
    return h;
}

/* The live handle of obj, of kind k, held until the procedure ends. */
void *
guile_clgc_unwrap(enum kind k, SCM obj, int pos, const char *who)
{
    void *h = hold(k, obj, pos, who);

    return k == K_KERNEL ? ((struct kernel *)h)->k : h;
}

void *
guile_clgc_unwrap_buffer(SCM obj, int pos, const char *who)
{
    void *m = guile_clgc_unwrap(K_MEM, obj, pos, who);

    if (clgc_mem_kind(m) == CLGC_ARG_IMAGE)
        scm_wrong_type_arg_msg(who, pos, obj, "buffer (not an image)");
    return m;
}

clgc_kernel_args_t *
guile_clgc_kernel_args(SCM kernel, int make, int pos, const char *who)
{
    struct kernel *k = hold(K_KERNEL, kernel, pos, who);
    cl_int err;

    if (k->args == NULL && make) {
        k->args = clgc_kernel_args_new(k->k, &err);
        CHECK_CL(err, who);
    }
    return k->args;
}

/* A Scheme string as a C string, malloc'd; one with a NUL inside is
 * refused (C would read it cut short: a kernel of another name, options
 * cut). */
char *
guile_clgc_cstring(SCM str, int pos, const char *who)
{
    size_t len;
    char *s;

    guile_clgc_validate(who, scm_is_string(str), str, pos, "string");
    s = scm_to_utf8_stringn(str, &len);
    if (strlen(s) != len) {
        free(s);
        scm_wrong_type_arg_msg(who, pos, str, "string without a NUL");
    }
    return s;
}

int
guile_clgc_kind_of(SCM obj)
{
    for (int k = 0; k < K_NKINDS; k++)
        if (SCM_IS_A_P(obj, guile_clgc_types[k]))
            return k;
    return -1;
}

/* ------------------------------------------------------------------------
 * Arguments */

/* A wrong-type-arg error unless ok. */
void
guile_clgc_validate(const char *who, int ok, SCM v, int pos, const char *what)
{
    if (!ok)
        scm_wrong_type_arg_msg(who, pos, v, what);
}

/* An exact integer argument within [min, max]: a wrong type raises
 * wrong-type-arg, a value out of the range out-of-range, both with
 * arguments Guile can print (scm_to_size_t's own range error, in Guile
 * 3.0.8, carries bounds that crash the printer). */
int64_t
guile_clgc_to_signed(SCM v, int64_t min, int64_t max, int pos, const char *who)
{
    if (!scm_is_exact_integer(v))
        scm_wrong_type_arg_msg(who, pos, v, "exact integer");
    if (!scm_is_signed_integer(v, min, max))
        scm_out_of_range_pos(who, v, scm_from_int(pos));
    return scm_to_int64(v);
}

uint64_t
guile_clgc_to_unsigned(SCM v, uint64_t max, int pos, const char *who)
{
    if (!scm_is_exact_integer(v))
        scm_wrong_type_arg_msg(who, pos, v, "exact integer");
    if (!scm_is_unsigned_integer(v, 0, max))
        scm_out_of_range_pos(who, v, scm_from_int(pos));
    return scm_to_uint64(v);
}

int
guile_clgc_sym_is(SCM sym, const char *name)
{
    return scm_is_eq(sym, scm_from_utf8_symbol(name));
}

SCM
guile_clgc_kw(const char *name)
{
    return scm_from_utf8_keyword(name);
}

int
guile_clgc_sizes(SCM v, size_t out[3], size_t fill, int pos, const char *who)
{
    int n = 0;

    out[0] = out[1] = out[2] = fill;
    if (scm_is_integer(v)) {
        out[0] = guile_clgc_to_unsigned(v, SIZE_MAX, pos, who);
        return 1;
    }
    if (scm_ilength(v) < 1 || scm_ilength(v) > 3)
        scm_wrong_type_arg_msg(who, pos, v, "size or list of 1 to 3 sizes");
    for (; !scm_is_null(v); v = scm_cdr(v))
        out[n++] = guile_clgc_to_unsigned(scm_car(v), SIZE_MAX, pos, who);
    return n;
}

/* A list of objects of kind k (or one object) as an array: buf when it
 * has room for them (n_buf entries), else malloc'd (release it with
 * free_array). Every element is checked before anything is allocated, so
 * a type error leaks nothing. */
void **
guile_clgc_handle_array(enum kind k, SCM list, int pos, const char *who,
                        cl_uint *n, void **buf, size_t n_buf)
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
    if (SCM_IS_A_P(list, guile_clgc_types[k])) {
        buf[0] = guile_clgc_unwrap(k, list, pos, who);
        *n = 1;
        return buf;
    }
    len = scm_ilength(list);
    if (len < 0)
        scm_wrong_type_arg_msg(who, pos, list, "list");
    for (l = list; !scm_is_null(l); l = scm_cdr(l))
        guile_clgc_unwrap(k, scm_car(l), pos, who);
    a = (size_t)len <= n_buf ? buf : malloc(sizeof(void *) * (size_t)len);
    if (a == NULL)
        guile_clgc_raise_cl(CL_OUT_OF_HOST_MEMORY, who);
    /* Each held (again) until the procedure ends: checked above, so this
     * raises nothing that would leak a. */
    for (l = list; !scm_is_null(l); l = scm_cdr(l))
        a[i++] = guile_clgc_unwrap(k, scm_car(l), pos, who);
    *n = i;
    return a;
}

void
guile_clgc_free_array(void **a, void **buf)
{
    if (a != buf)
        free(a);
}

/* Memory flags: a symbol or a list of read-write read-only write-only
 * alloc-host-ptr. */
cl_mem_flags
guile_clgc_mem_flags(SCM flags, int pos, const char *who)
{
    cl_mem_flags f = 0;

    if (scm_is_symbol(flags))
        flags = scm_list_1(flags);
    if (scm_ilength(flags) < 0)
        scm_wrong_type_arg_msg(who, pos, flags, "list of symbols");
    for (SCM l = flags; !scm_is_null(l); l = scm_cdr(l)) {
        SCM s = scm_car(l);

        if (guile_clgc_sym_is(s, "read-write"))
            f |= CL_MEM_READ_WRITE;
        else if (guile_clgc_sym_is(s, "read-only"))
            f |= CL_MEM_READ_ONLY;
        else if (guile_clgc_sym_is(s, "write-only"))
            f |= CL_MEM_WRITE_ONLY;
        else if (guile_clgc_sym_is(s, "alloc-host-ptr"))
            f |= CL_MEM_ALLOC_HOST_PTR;
        else
            scm_misc_error(who, "unknown flag: ~S", scm_list_1(s));
    }
    return f;
}

/* An optional wait-list argument: an event, a list of them, #f or '(). */
void **
guile_clgc_wait_list(SCM wait, int pos, const char *who, cl_uint *n, void **buf)
{
    return guile_clgc_handle_array(K_EVENT, SCM_UNBNDP(wait) ? SCM_EOL : wait,
                                   pos, who, n, buf, 16);
}

/* ------------------------------------------------------------------------
 * Scheme callbacks
 *
 * Callbacks in Scheme. data is a pair (procedure . arguments), kept alive
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
SCM guile_clgc_guarded;

/* Report exn, a callback's exception, through clgc_callback_fail: it is
 * protected while clgc holds it. */
void
guile_clgc_report_failure(SCM exn)
{
    scm_gc_protect_object(exn);
    if (clgc_callback_fail(SCM_UNPACK_POINTER(exn)) != CLGC_OK)
        scm_gc_unprotect_object(exn);
}

/* proc applied to args under %call-guarded: its value, or, when it
 * raised, the exception object reported and #f in *ok. */
SCM
guile_clgc_apply_guarded(SCM proc, SCM args, int *ok)
{
    SCM r = scm_call_2(scm_variable_ref(guile_clgc_guarded), proc, args);

    *ok = scm_is_true(scm_car(r));
    if (!*ok)
        guile_clgc_report_failure(scm_cdr(r));
    return scm_cdr(r);
}

static SCM
call_body(void *data)
{
    struct scheme_call *c = data;
    int ok;

    guile_clgc_apply_guarded(c->proc, c->args, &ok);
    return SCM_UNSPECIFIED;
}

SCM
guile_clgc_call_handler(void *data, SCM key, SCM args)
{
    SCM cause;

    (void)data;
    /* What %call-guarded did not catch: converting a closure's result.
     * raise-exception of a non-throw object arrives as (%exception obj). */
    if (scm_is_eq(key, scm_from_utf8_symbol("%exception")) && scm_is_pair(args))
        cause = scm_car(args);
    else
        cause = scm_cons(key, args);
    guile_clgc_report_failure(cause);
    return SCM_UNSPECIFIED;
}

static void *
call_guarded(void *data)
{
    scm_c_catch(SCM_BOOL_T, call_body, data, guile_clgc_call_handler, NULL,
                NULL, NULL);
    return NULL;
}

void
guile_clgc_call_scheme(SCM proc, SCM args)
{
    struct scheme_call c = {proc, args};

    scm_with_guile(call_guarded, &c);
}

/* The object types, and %call-guarded: once, from the extension's init
 * (module.c), in the (clgc) module that defines the latter first. */
void
guile_clgc_core_init(void)
{
    for (int k = 0; k < K_NKINDS; k++)
        /* Protected: whether bdwgc scans this library's static data
         * depends on how Guile set it up, and a type must outlive its
         * last instance's finalizer. */
        guile_clgc_types[k] =
            scm_gc_protect_object(scm_make_foreign_object_type(
                scm_from_utf8_symbol(guile_clgc_kinds[k].name),
                scm_list_1(scm_from_utf8_symbol("handle")),
                guile_clgc_kinds[k].finalizer));
    guile_clgc_guarded = scm_gc_protect_object(
        scm_c_module_lookup(scm_c_resolve_module("clgc"), "%call-guarded"));
}
