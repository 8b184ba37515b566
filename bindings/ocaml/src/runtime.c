/* clgc's runtime adapter for OCaml 4.13 (docs/ocaml.md, "The runtime").
 *
 * A safe region lets the runtime lock go (caml_release_runtime_system,
 * without running pending signal handlers: no OCaml code may run, nor an
 * exception leave, inside one of clgc's hooks), so other threads run and
 * collect while OpenCL works; leaving it takes the lock back, and the
 * signals that came meanwhile are handled at the stub's return, where
 * OCaml polls. A foreign thread (PoCL's, calling back) is registered with
 * caml_c_thread_register before the first OCaml code runs on it, and
 * holds the lock only while OCaml code runs: between callbacks it blocks
 * in OpenCL while the program runs. clgc detaches it at its exit.
 *
 * Which threads hold the lock is kept per thread (ml_released), so that
 * either hook is right whatever the thread holds: a wrapper called from a
 * callback's OCaml code lets the lock go once, and a callback that clgc
 * runs inline on a thread inside a wrapper's region takes it once. */

#include <stdio.h>
#include <string.h>

#include "clgc_ml.h"

#include <caml/signals.h>
#include <caml/threads.h>

__thread int clgc_ml_known;
/* The thread is known (OCaml's, or attached) and does not hold the lock. */
static __thread int ml_released;
/* A foreign thread clgc attached: registered with OCaml only once OCaml
 * code is to run on it (registering takes the lock, and most of what clgc
 * calls back on PoCL's threads is C that needs none). */
static __thread int ml_foreign, ml_registered;

int
clgc_ml_foreign(void)
{
    return ml_foreign;
}

void *
clgc_ml_active(void *(*fn)(void *), void *arg)
{
    void *r;

    if (!ml_released)
        return fn(arg);
    if (ml_foreign && !ml_registered) {
        if (!caml_c_thread_register())
            return NULL;
        ml_registered = 1;
    }
    caml_leave_blocking_section();
    ml_released = 0;
    r = fn(arg);
    ml_released = 1;
    caml_enter_blocking_section_no_pending();
    return r;
}

static void *
ml_safe_region(clgc_fn_t fn, void *arg)
{
    void *r;

    if (ml_released)
        return fn(arg);
    ml_released = 1;
    caml_enter_blocking_section_no_pending();
    r = fn(arg);
    caml_leave_blocking_section();
    ml_released = 0;
    return r;
}

static void *
ml_active_region(clgc_fn_t fn, void *arg)
{
    return clgc_ml_active(fn, arg);
}

/* PoCL's thread, on its first callback: known, without the lock, and
 * registered with OCaml by the first callback that runs OCaml code. */
static int
ml_attach(void *data)
{
    (void)data;
    if (clgc_ml_known)
        return CLGC_KNOWN;
    clgc_ml_known = 1;
    ml_foreign = 1;
    ml_released = 1;
    return CLGC_OK;
}

/* At the thread's exit (or clgc_thread_detach), outside clgc's regions:
 * the thread does not hold the lock, which unregistering takes. */
static void
ml_detach(void *data)
{
    (void)data;
    if (ml_registered)
        caml_c_thread_unregister();
    clgc_ml_known = 0;
    ml_foreign = 0;
    ml_registered = 0;
    ml_released = 0;
}

static int
ml_thread_known(void *data)
{
    (void)data;
    return clgc_ml_known;
}

/* Clgc's initialisation: install the adapter, once; another runtime
 * installed first (or clgc used before) is refused loudly.
 *
 * Every call lets the lock go, those that never block too
 * (CLGC_RUNTIME_SKIP_NONBLOCKING is not set): a callback's OCaml code
 * waits for the lock on PoCL's thread, and a thread that kept the lock
 * across its calls would hold it off (callbacks.ml's queries starved 500
 * callbacks for seconds that way), or deadlock where the driver holds a
 * lock of its own while it calls back. */
value
ml_clgc_install(value unit)
{
    ML_STUB;
    static const clgc_runtime_t rt = {
        .version = CLGC_RUNTIME_VERSION,
        .name = "ocaml",
        .safe_region = ml_safe_region,
        .active_region = ml_active_region,
        .attach_thread = ml_attach,
        .detach_thread = ml_detach,
        .thread_known = ml_thread_known,
    };
    int rc;

    (void)unit;
    rc = clgc_runtime_install(&rt);
    if (rc == CLGC_EALREADY || rc == CLGC_EINUSE) {
        const clgc_runtime_t *now = clgc_runtime_current();
        char message[200];

        if (now->name != NULL && strcmp(now->name, "ocaml") == 0)
            return Val_unit; /* a second copy of the module: the same */
        snprintf(message, sizeof(message),
                 "Clgc: the runtime '%s' is installed already; the OCaml "
                 "binding needs its own (clgc_runtime_install)",
                 now->name != NULL ? now->name : "?");
        caml_failwith(message);
    }
    if (rc != CLGC_OK)
        caml_failwith("Clgc: clgc_runtime_install failed");
    return Val_unit;
}
