/* The service every stub uses (clgc_ml.h): objects, errors, arguments. */

#include <stdlib.h>
#include <string.h>

#include "clgc_ml.h"

/* The kinds as the generated tables name them (clgc/names.h), for the
 * invalid-object errors and the info families. */
static const char *const ml_kind_names[ML_NKINDS] = {
    "platform", "device", "context", "command_queue",
    "program",  "kernel", "mem",     "event"};

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
 * address holds while the block moves (the stubs' held lists keep it).
 * Freed with the block, unless a thread still holds it (the last unhold
 * frees it then). */
static void
ml_handle_finalize(value v)
{
    struct ml_handle *m = Handle_val(v);

    if (m->busy > 0)
        m->orphan = 1;
    else
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

value
clgc_ml_wrap(enum ml_kind kind, void *h)
{
    struct ml_handle *m = malloc(sizeof(*m));
    value v;

    if (m == NULL) {
        clgc_ml_release_handle(kind, h);
        caml_raise_out_of_memory();
    }
    m->h = h;
    m->kind = (unsigned char)kind;
    m->release = 0;
    m->orphan = 0;
    m->busy = 0;
    m->args = NULL;
    v = caml_alloc_custom(&ml_handle_ops, sizeof(m), 0, 1);
    Handle_val(v) = m;
    return v;
}

/* What this thread's stub holds: every object it got, busy until the
 * thread's next stub starts (a stub may end by an exception, so the end
 * is found there). A release meanwhile, by another thread's stub or a
 * finaliser, is done by the unhold. */
#define ML_HELD_FIXED 8
static __thread struct ml_handle *ml_held_fixed[ML_HELD_FIXED];
static __thread struct ml_handle **ml_held_more; /* a long wait list's */
static __thread size_t ml_nheld, ml_capheld;

static void
ml_hold(struct ml_handle *m)
{
    if (ml_nheld >= ML_HELD_FIXED) {
        size_t i = ml_nheld - ML_HELD_FIXED;

        if (i == ml_capheld) {
            size_t cap = ml_capheld ? ml_capheld * 2 : 64;
            struct ml_handle **a = realloc(ml_held_more, cap * sizeof(*a));

            if (a == NULL)
                caml_raise_out_of_memory();
            ml_held_more = a;
            ml_capheld = cap;
        }
        ml_held_more[i] = m;
    } else
        ml_held_fixed[ml_nheld] = m;
    m->busy++;
    ml_nheld++;
}

/* Releases that must wait for a thread of the program's: made on a
 * foreign thread (a finaliser or Clgc.release run by a callback's OCaml
 * code on PoCL's thread, where a release can wait for work that very
 * thread should do). Under the lock. */
struct ml_deferred {
    void *h;
    enum ml_kind kind;
    struct ml_deferred *next;
};
static struct ml_deferred *ml_deferred;
int clgc_ml_untidy;

/* Release m's handle now, or defer it. */
static void
ml_release(struct ml_handle *m)
{
    void *h = m->h, *args = m->args;

    m->h = NULL;
    m->args = NULL;
    m->release = 0;
    if (args != NULL)
        clgc_ml_release_handle(ML_KERNEL_ARGS, args);
    clgc_ml_release_handle((enum ml_kind)m->kind, h);
}

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
    d->next = ml_deferred;
    ml_deferred = d;
    clgc_ml_untidy = 1;
}

/* Let go of what this thread's stub held. A release that waited for it
 * is deferred, not done: the stub's result may be a value that a call
 * letting the lock go would leave to the collector. */
void
clgc_ml_leave(void)
{
    while (ml_nheld > 0) {
        size_t i = --ml_nheld;
        struct ml_handle *m = i >= ML_HELD_FIXED
                                  ? ml_held_more[i - ML_HELD_FIXED]
                                  : ml_held_fixed[i];

        if (--m->busy > 0)
            continue;
        if (m->release && m->h != NULL) {
            if (m->args != NULL)
                ml_defer(ML_KERNEL_ARGS, m->args);
            ml_defer((enum ml_kind)m->kind, m->h);
            m->h = NULL;
            m->args = NULL;
            m->release = 0;
        }
        if (m->orphan)
            free(m);
    }
    /* A thread may end after any stub: nothing of its own is left. */
    free(ml_held_more);
    ml_held_more = NULL;
    ml_capheld = 0;
}

int
clgc_ml_enter(void)
{
    clgc_ml_known = 1;
    clgc_ml_leave(); /* what a stub that raised still held */
    clgc_ml_drop_kept();
    while (clgc_ml_untidy && !clgc_ml_foreign()) {
        struct ml_deferred *d = ml_deferred;

        ml_deferred = d->next;
        clgc_ml_untidy = ml_deferred != NULL;
        clgc_ml_release_handle(d->kind, d->h);
        free(d);
    }
    return 0;
}

void *
clgc_ml_get(value v, enum ml_kind kind, const char *who)
{
    struct ml_handle *m = Handle_val(v);

    if (m->kind != kind) {
        char message[160];

        snprintf(message, sizeof(message), "%s: a %s where a %s was expected",
                 who, ml_kind_names[m->kind], ml_kind_names[kind]);
        caml_invalid_argument(message);
    }
    if (m->h == NULL || m->release) {
        const clgc_object_kind_t *k =
            clgc_object_kind_find(ml_kind_names[kind]);

        clgc_ml_raise(k != NULL ? k->invalid : CL_INVALID_VALUE, who,
                      "the object was released");
    }
    ml_hold(m);
    return m->h;
}

void
clgc_ml_release_handle(enum ml_kind kind, void *h)
{
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
        clgc_clReleaseKernel(h);
        break;
    case ML_MEM:
        clgc_clReleaseMemObject(h);
        break;
    case ML_EVENT:
        clgc_clReleaseEvent(h);
        break;
    case ML_KERNEL_ARGS:
        clgc_kernel_args_free(h);
        break;
    case ML_NKINDS:
        break;
    }
}

clgc_kernel_args_t *
clgc_ml_kernel_args(value v, int make, const char *who)
{
    void *k = clgc_ml_get(v, ML_KERNEL, who);
    struct ml_handle *m = Handle_val(v);
    cl_int err;

    if (m->args == NULL && make) {
        m->args = clgc_kernel_args_new(k, &err);
        ML_CHECK(err, "clgc_kernel_args_new");
    }
    return m->args;
}

/* Clgc.release: idempotent; done by the unhold if a stub holds the
 * object (this thread's last one included). */
value
ml_clgc_release(value v)
{
    ML_STUB;
    struct ml_handle *m = Handle_val(v);

    if (m->h == NULL || m->release)
        return Val_unit;
    if (m->busy > 0)
        m->release = 1;
    else
        ml_release(m);
    return Val_unit;
}

value
ml_clgc_released(value v)
{
    ML_STUB;
    return Val_bool(Handle_val(v)->h == NULL || Handle_val(v)->release);
}

value
ml_clgc_kind(value v)
{
    ML_STUB;
    return caml_copy_string(ml_kind_names[Handle_val(v)->kind]);
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
