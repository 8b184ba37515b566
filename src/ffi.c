/* Closures and generic calls (include/clgc/ffi.h), on libffi.
 *
 * A closure is a libffi closure whose function, clgc__closure_entry, runs
 * the user's handler through clgc_call_active. Its record counts the calls
 * in progress, so that clgc_closure_free can wait for them; each call also
 * pushes a frame on a per-thread stack, so that a handler freeing its own
 * closure is recognised, its own call is not waited for, and the call
 * touches nothing of the closure after the handler returns.
 *
 * A generic call calls the command's wrapper with a libffi call
 * description made from the command's metadata: the registry's commands'
 * descriptions are prepared once, together, on the first generic call;
 * any other command's is built on the stack for each call. */

#include <ffi.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen/commands.h"
#include "internal.h"

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

/* libffi's type for each ctype, in clgc_ctype_t order. */
static ffi_type *const clgc__ffi_types[] = {
    &ffi_type_void,   &ffi_type_sint8,   &ffi_type_uint8,  &ffi_type_sint16,
    &ffi_type_uint16, &ffi_type_sint32,  &ffi_type_uint32, &ffi_type_sint64,
    &ffi_type_uint64, &CLGC__FFI_INTPTR, &CLGC__FFI_SIZE,  &ffi_type_float,
    &ffi_type_double, &ffi_type_pointer, &ffi_type_pointer};

#define CLGC__N_CTYPES (sizeof(clgc__ffi_types) / sizeof(clgc__ffi_types[0]))

/* Whether t is a ctype a value may have (every ctype but VOID). */
static int
clgc__value_ctype(clgc_ctype_t t)
{
    return t > CLGC_CTYPE_VOID && (size_t)t < CLGC__N_CTYPES;
}

/* A value of ctype t as libffi returns it: integers narrower than ffi_arg
 * widened to a whole ffi_arg, other types as they are. */
union clgc__ffi_result {
    ffi_arg word;
    clgc_value_t value;
};

/* From what libffi stores for a call's result to the clgc_value_t member
 * of type t. */
static void
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

/* ------------------------------------------------------------------------
 * Generic calls */

/* Describe a call of command to libffi, with types[] room for its
 * parameters' types. Returns CLGC_EINVAL for a command clgc cannot call:
 * an invalid ctype, or one libffi refuses. */
static int
clgc__command_prep(const clgc_command_t *command, ffi_cif *cif,
                   ffi_type **types)
{
    clgc_ctype_t rt = command->result_ctype;

    if (rt != CLGC_CTYPE_VOID && !clgc__value_ctype(rt))
        return CLGC_EINVAL;
    for (unsigned i = 0; i < command->nparams; i++) {
        if (!clgc__value_ctype(command->params[i].ctype))
            return CLGC_EINVAL;
        types[i] = clgc__ffi_types[command->params[i].ctype];
    }
    if (ffi_prep_cif(cif, FFI_DEFAULT_ABI, command->nparams,
                     clgc__ffi_types[rt], types) != FFI_OK)
        return CLGC_EINVAL;
    return CLGC_OK;
}

/* The registry's commands' call descriptions. Preparing one classifies
 * every argument, which costs about as much as the call itself: doing it
 * once makes a generic call about 40% cheaper. One allocation for the
 * life of the process; without it every call prepares its own. */
struct clgc__cifs {
    ffi_cif cif[CLGC__N_COMMANDS];
    unsigned char ok[CLGC__N_COMMANDS];
    ffi_type *types[]; /* every command's parameters, one after another */
};

static struct clgc__cifs *clgc__cifs;
static pthread_once_t clgc__cifs_once = PTHREAD_ONCE_INIT;

static void
clgc__cifs_prepare(void)
{
    struct clgc__cifs *c;
    size_t n = 0;

    for (size_t i = 0; i < CLGC__N_COMMANDS; i++)
        n += clgc__commands[i].nparams;
    c = malloc(sizeof(*c) + n * sizeof(ffi_type *));
    if (c == NULL)
        return;
    n = 0;
    for (size_t i = 0; i < CLGC__N_COMMANDS; i++) {
        c->ok[i] = clgc__command_prep(&clgc__commands[i], &c->cif[i],
                                      &c->types[n]) == CLGC_OK;
        n += clgc__commands[i].nparams;
    }
    clgc__cifs = c;
}

/* The prepared description of command, if it is one of the registry's;
 * else NULL. */
static ffi_cif *
clgc__command_cif(const clgc_command_t *command)
{
    uintptr_t at = (uintptr_t)command, first = (uintptr_t)clgc__commands;
    size_t i;

    if (at < first || at >= (uintptr_t)(clgc__commands + CLGC__N_COMMANDS))
        return NULL;
    i = (at - first) / sizeof(*command);
    pthread_once(&clgc__cifs_once, clgc__cifs_prepare);
    return clgc__cifs != NULL && clgc__cifs->ok[i] ? &clgc__cifs->cif[i] : NULL;
}

int
clgc_command_call(const clgc_command_t *command, unsigned nargs,
                  const clgc_arg_t *args, clgc_value_t *result)
{
    ffi_type *types[CLGC_CLOSURE_MAX_ARGS];
    void *values[CLGC_CLOSURE_MAX_ARGS];
    union clgc__ffi_result r;
    ffi_cif own, *cif;
    int err;

    if (command == NULL || result == NULL || (args == NULL && nargs > 0) ||
        command->wrapper == NULL || command->nparams > CLGC_CLOSURE_MAX_ARGS ||
        (command->nparams > 0 && command->params == NULL))
        return CLGC_EINVAL;
    cif = clgc__command_cif(command);
    if (cif == NULL) {
        err = clgc__command_prep(command, &own, types);
        if (err != CLGC_OK)
            return err;
        cif = &own;
    }
    if (nargs != command->nparams)
        return CLGC_EARITY;
    for (unsigned i = 0; i < nargs; i++) {
        if (args[i].ctype != command->params[i].ctype)
            return CLGC_ETYPE;
        /* Every member of the union starts at its first byte. libffi
         * only reads through these. */
        values[i] = (void *)&args[i].value;
    }
    ffi_call(cif, command->wrapper, &r, values);
    if (command->result_ctype != CLGC_CTYPE_VOID)
        clgc__result_narrow(command->result_ctype, &r, result);
    return CLGC_OK;
}

int
clgc_command_call_by_name(const char *name, unsigned nargs,
                          const clgc_arg_t *args, clgc_value_t *result)
{
    const clgc_command_t *command;

    if (name == NULL)
        return CLGC_EINVAL;
    command = clgc_command_find(name);
    if (command == NULL)
        return CLGC_ENOCOMMAND;
    return clgc_command_call(command, nargs, args, result);
}
