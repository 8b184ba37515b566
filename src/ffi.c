/* Closures (include/clgc/ffi.h), on libffi, and the ctypes' libffi
 * types that the generic calls (call.c) share (ctypes.h).
 *
 * A closure is a libffi closure whose function, clgc__closure_entry, runs
 * the user's handler through clgc_call_active. Its record counts the calls
 * in progress, so that clgc_closure_free can wait for them; each call also
 * pushes a frame on a per-thread stack, so that a handler freeing its own
 * closure is recognised, its own call is not waited for, and the call
 * touches nothing of the closure after the handler returns.
 */

#include <ffi.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctypes.h"

/* The signature letters, in clgc_ctype_t order: a letter's index is its
 * ctype. */
static const char clgc__letters[] = "vcCsSiIlLjzfdpF";

#if INTPTR_MAX == INT64_MAX
#define CLGC__FFI_INTPTR ffi_type_sint64
#else
#define CLGC__FFI_INTPTR ffi_type_sint32
#endif
#if SIZE_MAX == UINT64_MAX
#define CLGC__FFI_SIZE ffi_type_uint64
#else
#define CLGC__FFI_SIZE ffi_type_uint32
#endif

ffi_type *const clgc__ffi_types[CLGC__N_CTYPES] = {
    &ffi_type_void,   &ffi_type_sint8,   &ffi_type_uint8,  &ffi_type_sint16,
    &ffi_type_uint16, &ffi_type_sint32,  &ffi_type_uint32, &ffi_type_sint64,
    &ffi_type_uint64, &CLGC__FFI_INTPTR, &CLGC__FFI_SIZE,  &ffi_type_float,
    &ffi_type_double, &ffi_type_pointer, &ffi_type_pointer};

int
clgc__value_ctype(clgc_ctype_t t)
{
    return t > CLGC_CTYPE_VOID && (size_t)t < CLGC__N_CTYPES;
}

void
clgc__result_narrow(clgc_ctype_t t, const union clgc__ffi_result *r,
                    clgc_value_t *v)
{
    memset(v, 0, sizeof(*v));
    switch (t) {
    case CLGC_CTYPE_INT8:
        v->i8 = (int8_t)r->word;
        break;
    case CLGC_CTYPE_UINT8:
        v->u8 = (uint8_t)r->word;
        break;
    case CLGC_CTYPE_INT16:
        v->i16 = (int16_t)r->word;
        break;
    case CLGC_CTYPE_UINT16:
        v->u16 = (uint16_t)r->word;
        break;
    case CLGC_CTYPE_INT32:
        v->i32 = (int32_t)r->word;
        break;
    case CLGC_CTYPE_UINT32:
        v->u32 = (uint32_t)r->word;
        break;
    default:
        memcpy(v, &r->value, clgc__ffi_types[t]->size);
        break;
    }
}

/* The reverse, for a closure's result: what libffi expects the closure to
 * store at ret (at least an ffi_arg). */
static void
clgc__result_widen(clgc_ctype_t t, const clgc_value_t *v, void *ret)
{
    switch (t) {
    case CLGC_CTYPE_VOID:
        break;
    case CLGC_CTYPE_INT8:
        *(ffi_sarg *)ret = v->i8;
        break;
    case CLGC_CTYPE_UINT8:
        *(ffi_arg *)ret = v->u8;
        break;
    case CLGC_CTYPE_INT16:
        *(ffi_sarg *)ret = v->i16;
        break;
    case CLGC_CTYPE_UINT16:
        *(ffi_arg *)ret = v->u16;
        break;
    case CLGC_CTYPE_INT32:
        *(ffi_sarg *)ret = v->i32;
        break;
    case CLGC_CTYPE_UINT32:
        *(ffi_arg *)ret = v->u32;
        break;
    case CLGC_CTYPE_INTPTR:
        *(ffi_sarg *)ret = v->iptr;
        break;
    case CLGC_CTYPE_SIZE:
        *(ffi_arg *)ret = v->size;
        break;
    default:
        memcpy(ret, v, clgc__ffi_types[t]->size);
        break;
    }
}

/* ------------------------------------------------------------------------
 * Signatures */

struct clgc__signature {
    clgc_ctype_t result;
    unsigned nargs;
    clgc_ctype_t args[CLGC_CLOSURE_MAX_ARGS];
};

/* The ctype of letter ch, or -1 (the terminating NUL included). */
static int
clgc__letter(char ch)
{
    const char *p = ch != '\0' ? strchr(clgc__letters, ch) : NULL;

    return p != NULL ? (int)(p - clgc__letters) : -1;
}

static int
clgc__signature_parse(const char *s, struct clgc__signature *sig)
{
    int t;

    if (s == NULL || (t = clgc__letter(*s++)) < 0 || *s++ != '(')
        return CLGC_ESIGNATURE;
    sig->result = (clgc_ctype_t)t;
    for (sig->nargs = 0; *s != ')'; s++) {
        t = clgc__letter(*s);
        if (t <= (int)CLGC_CTYPE_VOID || sig->nargs == CLGC_CLOSURE_MAX_ARGS)
            return CLGC_ESIGNATURE;
        sig->args[sig->nargs++] = (clgc_ctype_t)t;
    }
    return s[1] == '\0' ? CLGC_OK : CLGC_ESIGNATURE;
}

/* ------------------------------------------------------------------------
 * Closures */

struct clgc_closure {
    ffi_closure *ffi; /* libffi's writable view of the closure */
    ffi_cif cif;
    ffi_type *types[CLGC_CLOSURE_MAX_ARGS];
    clgc_ctype_t result;
    clgc_closure_cb handler;
    void *data;
    /* Calls past their first instruction in clgc__closure_entry and not
     * yet done with the closure, on any thread. */
    atomic_uint calls;
};

/* A call in progress on this thread. The frames form a stack, innermost
 * first, through `up`. */
struct clgc__closure_call {
    clgc_closure_t *closure;
    clgc_closure_cb handler;
    void *data;
    void *const *args;
    clgc_value_t *result;
    int freed; /* its handler freed the closure: never touch it again */
    struct clgc__closure_call *up;
};

static __thread struct clgc__closure_call *clgc__closure_calls
    __attribute__((tls_model("initial-exec")));

/* The one place a call whose handler cannot run ends up: the thread could
 * not be attached to the runtime (err is clgc_call_active's). The caller
 * gets a zero result, and the runtime hears of it as of a failed callback
 * (clgc/callback.h), with no command. */
static void
clgc__closure_undelivered(const clgc_closure_t *closure, int err,
                          clgc_value_t *result)
{
    (void)closure;
    memset(result, 0, sizeof(*result));
    clgc__record_error(NULL, err, NULL);
}

static void *
clgc__closure_run(void *p)
{
    struct clgc__closure_call *k = p;
    struct clgc__running running;

    clgc__running_push(&running, NULL);
    k->handler(k->result, k->args, k->data);
    clgc__running_pop(&running);
    return NULL;
}

/* libffi calls this for every call of a closure's code. Its first touch
 * of the closure is the increment that counts the call in: from there on
 * clgc_closure_free waits for it, through the thread's attach and the
 * runtime's region hooks to the handler's return. Once the handler has
 * returned it reads only its own frame, unless the closure is still
 * alive; and its last touch of a live closure is the decrement that lets
 * clgc_closure_free go on. */
static void
clgc__closure_entry(ffi_cif *cif, void *ret, void **args, void *user_data)
{
    clgc_closure_t *c = user_data;
    clgc_value_t value;
    struct clgc__closure_call k;
    clgc_ctype_t result_type;
    int err;

    (void)cif;
    /* Sequentially consistent, as clgc_closure_free's first look at the
     * count: a call counted before the free looks is seen by it, and no
     * read of c below moves above the count. */
    atomic_fetch_add_explicit(&c->calls, 1, memory_order_seq_cst);
    result_type = c->result;
    k = (struct clgc__closure_call){.closure = c,
                                    .handler = c->handler,
                                    .data = c->data,
                                    .args = args,
                                    .result = &value,
                                    .up = clgc__closure_calls};
    clgc__closure_calls = &k;
    err = clgc_call_active(clgc__closure_run, &k, NULL);
    clgc__closure_calls = k.up;
    if (err != CLGC_OK)
        clgc__closure_undelivered(c, err, &value);
    if (!k.freed)
        atomic_fetch_sub_explicit(&c->calls, 1, memory_order_release);
    clgc__result_widen(result_type, &value, ret);
}

int
clgc_closure_create(const char *signature, clgc_closure_cb handler, void *data,
                    clgc_closure_t **closure, clgc_function_t *code)
{
    struct clgc__signature sig;
    clgc_closure_t *c;
    void *entry = NULL;
    int err;

    if (handler == NULL || closure == NULL || code == NULL)
        return CLGC_EINVAL;
    err = clgc__signature_parse(signature, &sig);
    if (err != CLGC_OK)
        return err;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return CLGC_ENOMEM;
    c->result = sig.result;
    c->handler = handler;
    c->data = data;
    atomic_init(&c->calls, 0);
    for (unsigned i = 0; i < sig.nargs; i++)
        c->types[i] = clgc__ffi_types[sig.args[i]];
    err = CLGC_ENOMEM;
    c->ffi = ffi_closure_alloc(sizeof(ffi_closure), &entry);
    if (c->ffi == NULL)
        goto out;
    /* Only an unsupported type or ABI fails here: none of the letters'. */
    err = CLGC_ESIGNATURE;
    if (ffi_prep_cif(&c->cif, FFI_DEFAULT_ABI, sig.nargs,
                     clgc__ffi_types[sig.result], c->types) != FFI_OK ||
        ffi_prep_closure_loc(c->ffi, &c->cif, clgc__closure_entry, c, entry) !=
            FFI_OK)
        goto out;
    *closure = c;
    *code = (clgc_function_t)entry;
    return CLGC_OK;
out:
    if (c->ffi != NULL)
        ffi_closure_free(c->ffi);
    free(c);
    return err;
}

/* Wait until no other thread is inside a call of c; called in a safe
 * region. Calls are short and the wait is rare: yield first, then nap. */
static void *
clgc__closure_drain(void *p)
{
    clgc_closure_t *c = p;
    const struct timespec nap = {0, 100000};

    for (unsigned n = 0;
         atomic_load_explicit(&c->calls, memory_order_acquire) != 0; n++) {
        if (n < 100)
            sched_yield();
        else
            nanosleep(&nap, NULL);
    }
    return NULL;
}

int
clgc_closure_free(clgc_closure_t *closure)
{
    unsigned own = 0;

    if (closure == NULL)
        return CLGC_EINVAL;
    /* Calls of the closure on this thread's stack cannot end before this
     * returns: stop counting them, and have them leave the closure
     * alone. */
    for (struct clgc__closure_call *k = clgc__closure_calls; k != NULL;
         k = k->up) {
        if (k->closure == closure && !k->freed) {
            k->freed = 1;
            own++;
        }
    }
    if (own > 0)
        atomic_fetch_sub_explicit(&closure->calls, own, memory_order_relaxed);
    if (atomic_load_explicit(&closure->calls, memory_order_seq_cst) != 0)
        clgc_call_safe(clgc__closure_drain, closure);
    ffi_closure_free(closure->ffi);
    free(closure);
    return CLGC_OK;
}
