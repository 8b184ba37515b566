/* Closures: a Scheme procedure as a C function pointer of any signature
 * (clgc/ffi.h), for the generic path. */

#include <libguile.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guile-clgc.h"

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

void
guile_clgc_closure_retire(void *closure)
{
    struct closure *c = closure;
    SCM proc;

    if (c == NULL)
        return;
    pthread_mutex_lock(&closure_lock);
    proc = c->proc;
    c->proc = SCM_BOOL_F;
    c->next_retired = retired;
    retired = c;
    pthread_mutex_unlock(&closure_lock);
    scm_gc_unprotect_object(proc);
}

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
    r = guile_clgc_apply_guarded(proc, args, &ok);
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
            guile_clgc_to_signed(r, INT64_MIN, INT64_MAX, 0, "closure");
        break;
    default:
        *(uint64_t *)k->result =
            guile_clgc_to_unsigned(r, UINT64_MAX, 0, "closure");
        break;
    }
    return SCM_UNSPECIFIED;
}

static void *
closure_guarded(void *data)
{
    scm_c_catch(SCM_BOOL_T, closure_body, data, guile_clgc_call_handler, NULL,
                NULL, NULL);
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
make_closure_body(SCM signature, SCM proc)
{
    struct closure *c;
    char *sig;
    int err;

    guile_clgc_validate("make-closure", scm_is_string(signature), signature, 1,
                        "string");
    guile_clgc_validate("make-closure", scm_is_true(scm_procedure_p(proc)),
                        proc, 2, "procedure");
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        guile_clgc_raise_clgc(CLGC_ENOMEM, "make-closure");
    sig = scm_to_utf8_string(signature);
    if (strlen(sig) >= sizeof(c->signature)) {
        free(sig);
        free(c);
        guile_clgc_raise_clgc(CLGC_ESIGNATURE, "make-closure");
    }
    strcpy(c->signature, sig);
    free(sig);
    c->proc = proc;
    err = clgc_closure_create(c->signature, closure_handler, c, &c->closure,
                              &c->code);
    if (err != CLGC_OK) {
        free(c);
        guile_clgc_raise_clgc(err, "make-closure");
    }
    scm_gc_protect_object(proc);
    return guile_clgc_wrap(K_CLOSURE, c);
}
GUILE_CLGC_HELD2(make_closure)

clgc_function_t
guile_clgc_closure_code(SCM closure, int pos, const char *who)
{
    struct closure *c = guile_clgc_unwrap(K_CLOSURE, closure, pos, who);

    return c->code;
}

static SCM
closure_pointer_body(SCM closure)
{
    return scm_from_pointer(
        (void *)guile_clgc_closure_code(closure, 1, "closure-pointer"), NULL);
}
GUILE_CLGC_HELD1(closure_pointer)

const struct guile_clgc_proc guile_clgc_closure_procs[] = {
    {"make-closure", 2, 0, 0, make_closure,
     "(make-closure signature proc) -> a closure: a C function of signature "
     "(\"v(pp)\") that calls proc, for the generic path."},
    {"closure-pointer", 1, 0, 0, closure_pointer,
     "(closure-pointer closure) -> the closure's C function, a pointer."},
    {NULL, 0, 0, 0, NULL, NULL}};
