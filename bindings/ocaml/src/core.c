/* The service every stub uses (clgc_ml.h): objects, errors, arguments. */

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgc_ml.h"

/* The kinds as the generated tables name them (clgc/names.h), for the
 * invalid-object errors and the info families. */
static const char *const ml_kind_names[ML_NKINDS] = {
    "platform", "device", "context", "command_queue", "program",
    "kernel",   "mem",    "event",   "sampler"};

/* Identity: two values are equal when they hold one handle. */
static int
ml_compare(value a, value b)
{
    uintptr_t x = (uintptr_t)Handle_val(a)->h, y = (uintptr_t)Handle_val(b)->h;

    return x < y ? -1 : x > y;
}

static intnat
ml_hash(value v)
{
    return (intnat)((uintptr_t)Handle_val(v)->h >> 4);
}

/* The record itself: a custom block only points at it, so that its
 * address holds while the block moves. Freed with the block; its box
 * (which a thread may still hold) releases the object if nothing did, and
 * is freed after the last hold. */
static void
ml_handle_finalize(value v)
{
    struct ml_handle *m = Handle_val(v);

    clgc_box_free(m->box);
    free(m);
}

static struct custom_operations ml_handle_ops = {"clgc.handle",
                                                 ml_handle_finalize,
                                                 ml_compare,
                                                 ml_hash,
                                                 custom_serialize_default,
                                                 custom_deserialize_default,
                                                 custom_compare_ext_default,
                                                 custom_fixed_length_default};

/* What a kernel's box holds: the kernel, and its argument table
 * (clgc/binding.h), made at its first set_arg. */
struct ml_kernel {
    cl_kernel k;
    clgc_kernel_args_t *args;
};

/* Releases that must wait for a thread of the program's, in a stub's
 * start: made on a foreign thread (a finaliser or Clgc.release run by a
 * callback's OCaml code on PoCL's thread, where a release can wait for
 * work that very thread should do), by a stub's end (its result may be a
 * value that a call letting the lock go would leave to the collector), at
 * a thread's exit, or by a finaliser. Any thread, under ml_deferred_lock:
 * a box's last hold may end on a thread without the runtime lock. */
struct ml_deferred {
    void *h;
    enum ml_kind kind;
    struct ml_deferred *next;
};
static pthread_mutex_t ml_deferred_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ml_deferred *ml_deferred;
static atomic_int ml_untidy;

static void
ml_defer(enum ml_kind kind, void *h)
{
    struct ml_deferred *d = malloc(sizeof(*d));

    if (d == NULL) {
        clgc_ml_release_handle(kind, h); /* now, then */
        return;
    }
    d->h = h;
    d->kind = kind;
    pthread_mutex_lock(&ml_deferred_lock);
    d->next = ml_deferred;
    ml_deferred = d;
    atomic_store(&ml_untidy, 1);
    pthread_mutex_unlock(&ml_deferred_lock);
}

/* Set by Clgc.release on a thread of the program's: a box it releases
 * with no hold left releases the object at once. Any other release
 * (the last hold's end, a finaliser) is deferred. */
static __thread int ml_now;

static void
ml_box_release(enum ml_kind kind, void *h)
{
    if (ml_now && !clgc_ml_foreign())
        clgc_ml_release_handle(kind, h);
    else
        ml_defer(kind, h);
}

#define ML_BOX_RELEASE(kind)                                                   \
    static cl_int ml_box_release_##kind(void *h)                               \
    {                                                                          \
        ml_box_release(kind, h);                                               \
        return CL_SUCCESS;                                                     \
    }
ML_BOX_RELEASE(ML_DEVICE)
ML_BOX_RELEASE(ML_CONTEXT)
ML_BOX_RELEASE(ML_QUEUE)
ML_BOX_RELEASE(ML_PROGRAM)
ML_BOX_RELEASE(ML_KERNEL)
ML_BOX_RELEASE(ML_MEM)
ML_BOX_RELEASE(ML_EVENT)
ML_BOX_RELEASE(ML_SAMPLER)
#undef ML_BOX_RELEASE

static cl_int (*const ml_box_releases[ML_NKINDS])(void *) = {
    [ML_DEVICE] = ml_box_release_ML_DEVICE,
    [ML_CONTEXT] = ml_box_release_ML_CONTEXT,
    [ML_QUEUE] = ml_box_release_ML_QUEUE,
    [ML_PROGRAM] = ml_box_release_ML_PROGRAM,
    [ML_KERNEL] = ml_box_release_ML_KERNEL,
    [ML_MEM] = ml_box_release_ML_MEM,
    [ML_EVENT] = ml_box_release_ML_EVENT,
    [ML_SAMPLER] = ml_box_release_ML_SAMPLER};

value
clgc_ml_wrap(enum ml_kind kind, void *h)
{
    struct ml_handle *m = malloc(sizeof(*m));
    struct ml_kernel *k = NULL;
    value v;

    if (m != NULL && kind == ML_KERNEL && (k = calloc(1, sizeof(*k))) != NULL)
        k->k = h;
    if (m == NULL || (kind == ML_KERNEL && k == NULL) ||
        (m->box = clgc_box_new(kind == ML_KERNEL ? (void *)k : h,
                               ml_box_releases[kind])) == NULL) {
        free(m);
        free(k);
        if (kind == ML_KERNEL)
            clgc_clReleaseKernel(h);
        else
            clgc_ml_release_handle(kind, h);
        caml_raise_out_of_memory();
    }
    m->h = h;
    m->kind = (unsigned char)kind;
    v = caml_alloc_custom(&ml_handle_ops, sizeof(m), 0, 1);
    Handle_val(v) = m;
    return v;
}

/* Every object a stub gets is held for the thread (clgc_box_get) until
 * the thread's next stub starts or this one ends, or the thread exits (a
 * stub may end by an exception, so the end is found there). */
void
clgc_ml_leave(void)
{
    clgc_holds_end();
}

int
clgc_ml_enter(void)
{
    clgc_ml_known = 1;
    clgc_holds_end(); /* what a stub that raised still held */
    clgc_ml_drop_kept();
    if (!clgc_ml_foreign())
        clgc_ml_tidy_ports();
    while (atomic_load(&ml_untidy) && !clgc_ml_foreign()) {
        struct ml_deferred *d;

        pthread_mutex_lock(&ml_deferred_lock);
        d = ml_deferred;
        if (d != NULL)
            ml_deferred = d->next;
        atomic_store(&ml_untidy, ml_deferred != NULL);
        pthread_mutex_unlock(&ml_deferred_lock);
        if (d == NULL)
            break;
        clgc_ml_release_handle(d->kind, d->h);
        free(d);
    }
    return 0;
}

/* What m's box holds, held for the thread; raises as clgc_ml_get. */
static void *
ml_hold(struct ml_handle *m, enum ml_kind kind, const char *who)
{
    void *obj;

    if (m->kind != kind) {
        char message[160];

        snprintf(message, sizeof(message), "%s: a %s where a %s was expected",
                 who, ml_kind_names[m->kind], ml_kind_names[kind]);
        caml_invalid_argument(message);
    }
    if ((obj = clgc_box_get(m->box)) == NULL) {
        const clgc_object_kind_t *k =
            clgc_object_kind_find(ml_kind_names[kind]);

        if (!clgc_box_released(m->box))
            caml_raise_out_of_memory();
        clgc_ml_raise(k != NULL ? k->invalid : CL_INVALID_VALUE, who,
                      "the object was released");
    }
    return obj;
}

void *
clgc_ml_get(value v, enum ml_kind kind, const char *who)
{
    void *obj = ml_hold(Handle_val(v), kind, who);

    return kind == ML_KERNEL ? ((struct ml_kernel *)obj)->k : obj;
}

void *
clgc_ml_get_mem(value v, clgc_arg_kind_t kind, const char *who)
{
    void *m = clgc_ml_get(v, ML_MEM, who);

    if (clgc_mem_kind(m) != kind) {
        char message[160];

        snprintf(message, sizeof(message), "%s: %s", who,
                 kind == CLGC_ARG_BUFFER ? "an image, not a buffer"
                                         : "a buffer, not an image");
        caml_invalid_argument(message);
    }
    return m;
}

void
clgc_ml_release_handle(enum ml_kind kind, void *h)
{
    struct ml_kernel *k = h;

    if (clgc_ml_foreign()) {
        ml_defer(kind, h);
        return;
    }
    switch (kind) {
    case ML_PLATFORM:
        break;
    case ML_DEVICE:
        clgc_clReleaseDevice(h);
        break;
    case ML_CONTEXT:
        clgc_clReleaseContext(h);
        break;
    case ML_QUEUE:
        clgc_clReleaseCommandQueue(h);
        break;
    case ML_PROGRAM:
        clgc_clReleaseProgram(h);
        break;
    case ML_KERNEL:
        clgc_kernel_args_free(k->args);
        clgc_clReleaseKernel(k->k);
        free(k);
        break;
    case ML_MEM:
        clgc_clReleaseMemObject(h);
        break;
    case ML_EVENT:
        clgc_clReleaseEvent(h);
        break;
    case ML_SAMPLER:
        clgc_clReleaseSampler(h);
        break;
    case ML_NKINDS:
        break;
    }
}

clgc_kernel_args_t *
clgc_ml_kernel_args(value v, int make, const char *who)
{
    struct ml_kernel *k = ml_hold(Handle_val(v), ML_KERNEL, who);
    cl_int err;

    if (k->args == NULL && make) {
        k->args = clgc_kernel_args_new(k->k, &err);
        ML_CHECK(err, "clgc_kernel_args_new");
    }
    return k->args;
}

/* Clgc.release: idempotent; done by the last unhold if a stub holds the
 * object (this thread's last one let go by ML_STUB). */
value
ml_clgc_release(value v)
{
    ML_STUB;
    ml_now = 1;
    clgc_box_release(Handle_val(v)->box);
    ml_now = 0;
    return Val_unit;
}

value
ml_clgc_released(value v)
{
    ML_STUB;
    return Val_bool(clgc_box_released(Handle_val(v)->box));
}

value
ml_clgc_kind(value v)
{
    ML_STUB;
    return caml_copy_string(ml_kind_names[Handle_val(v)->kind]);
}

value
clgc_ml_some(int tag, value v)
{
    CAMLparam1(v);
    CAMLlocal1(r);

    r = caml_alloc_small(1, tag);
    Field(r, 0) = v;
    CAMLreturn(r);
}

int
clgc_ml_kind_of_type(const char *type)
{
    for (size_t i = 0; i < clgc_object_kind_count(); i++) {
        const clgc_object_kind_t *k = clgc_object_kind_at(i);

        if (strcmp(k->type, type) == 0)
            for (int m = 0; m < ML_NKINDS; m++)
                if (strcmp(ml_kind_names[m], k->name) == 0)
                    return m;
    }
    return -1;
}

/* Raise Clgc.Error with detail, an OCaml string. */
CAMLnoreturn_start static void ml_raise(cl_int code, const char *call,
                                        value detail) CAMLnoreturn_end;

static void
ml_raise(cl_int code, const char *call, value detail)
{
    CAMLparam1(detail);
    CAMLlocal3(name, where, error);
    const value *exn = caml_named_value("Clgc.Error");
    const char *n = clgc_cl_error_name(code);

    if (exn == NULL)
        caml_failwith(call);
    name = caml_copy_string(n != NULL ? n : "?");
    where = caml_copy_string(call);
    /* Clgc.error: { code; name; call; detail } */
    error = caml_alloc_tuple(4);
    Store_field(error, 0, Val_int(code));
    Store_field(error, 1, name);
    Store_field(error, 2, where);
    Store_field(error, 3, detail);
    caml_raise_with_arg(*exn, error);
    CAMLnoreturn;
}

void
clgc_ml_raise(cl_int code, const char *call, const char *detail)
{
    ml_raise(code, call, caml_copy_string(detail != NULL ? detail : ""));
}

void
clgc_ml_raise_owned(cl_int code, const char *call, char *detail)
{
    value text = caml_copy_string(detail != NULL ? detail : "");

    free(detail);
    ml_raise(code, call, text);
}

cl_event *
clgc_ml_events(value list, cl_uint *n, const char *who)
{
    cl_event *a;
    cl_uint k = 0;
    value l;

    for (l = list; l != Val_emptylist; l = Field(l, 1))
        k++;
    *n = k;
    if (k == 0)
        return NULL;
    /* Every element first: a wrong one raises before anything is
     * allocated. */
    for (l = list; l != Val_emptylist; l = Field(l, 1))
        clgc_ml_get(Field(l, 0), ML_EVENT, who);
    a = malloc(k * sizeof(*a));
    if (a == NULL)
        caml_raise_out_of_memory();
    k = 0;
    for (l = list; l != Val_emptylist; l = Field(l, 1))
        a[k++] = Handle_val(Field(l, 0))->h;
    return a;
}

cl_uint
clgc_ml_sizes(value arr, size_t out[3], const char *who)
{
    mlsize_t n = Wosize_val(arr);

    if (n < 1 || n > 3) {
        char message[120];

        snprintf(message, sizeof(message), "%s: 1 to 3 sizes, not %lu", who,
                 (unsigned long)n);
        caml_invalid_argument(message);
    }
    for (mlsize_t i = 0; i < n; i++) {
        intnat s = Long_val(Field(arr, i));

        if (s < 0) {
            char message[120];

            snprintf(message, sizeof(message), "%s: a negative size", who);
            caml_invalid_argument(message);
        }
        out[i] = (size_t)s;
    }
    return (cl_uint)n;
}

char *
clgc_ml_strdup(value s)
{
    size_t len = caml_string_length(s);
    char *c;

    /* C would read it cut short: a kernel of another name, options cut. */
    if (!caml_string_is_c_safe(s))
        caml_invalid_argument("Clgc: a string with a NUL inside");
    c = malloc(len + 1);
    if (c == NULL)
        caml_raise_out_of_memory();
    memcpy(c, String_val(s), len);
    c[len] = '\0';
    return c;
}

value
ml_clgc_error_name(value code)
{
    ML_STUB;
    const char *n = clgc_cl_error_name((int32_t)Long_val(code));

    return caml_copy_string(n != NULL ? n : "?");
}
