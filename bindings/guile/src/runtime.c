/* The Guile runtime adapter: clgc's safe regions are Guile's own
 * scm_without_guile, re-entry is scm_with_guile, and clgc's records are
 * bdwgc's uncollectable objects, as in the Boehm adapter (src/boehm.c):
 * Guile collects with the same bdwgc, so one runtime serves both. */

#define GC_THREADS
#include <gc/gc.h>
#include <libguile.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "guile-clgc.h"

/* 0 when the safe regions are switched off (CLGC_GUILE_REGIONS=off, or
 * set-safe-regions! #f): every wrapper then runs in Guile mode, and
 * collections suspend a thread blocked in OpenCL, as they would with raw
 * (system foreign) calls. For comparison and demos only. */
static atomic_int guile_regions = 1;

/* scm_without_guile dereferences the current Guile thread without a
 * check; clgc calls this hook only on threads thread_known said yes to,
 * which entered Guile at least once. */
static void *
guile_safe_region(clgc_fn_t fn, void *arg)
{
    if (!atomic_load_explicit(&guile_regions, memory_order_relaxed))
        return fn(arg);
    return scm_without_guile(fn, arg);
}

/* Re-entry from inside a region: scm_with_guile sets Guile mode again
 * (GC_call_with_gc_active inside) and puts a continuation barrier under
 * fn, so that nothing in Scheme unwinds through OpenCL's frames. */
static void *
guile_active_region(clgc_fn_t fn, void *arg)
{
    return scm_with_guile(fn, arg);
}

/* Every thread that entered Guile is registered with bdwgc for the rest of
 * its life; a thread registered otherwise (by bdwgc's own
 * GC_register_my_thread in a program that mixes both) would crash in
 * scm_without_guile, which clgc never calls for a thread that did not
 * first go through guile_attach or Guile itself. */
static int
guile_known(void *data)
{
    (void)data;
    return GC_thread_is_registered();
}

static void *
guile_noop(void *arg)
{
    return arg;
}

/* Two threads entering Guile for the first time at once is a reported
 * crash (CONTEXT.md): PoCL's worker and callback threads may well do it,
 * so first entries are made one at a time. */
static pthread_mutex_t guile_first_entry = PTHREAD_MUTEX_INITIALIZER;

/* A foreign thread (PoCL's) becomes a Guile thread for the rest of its
 * life; Guile's own thread-exit hook unregisters it, so there is nothing
 * for clgc to undo (no detach hook). */
static int
guile_attach(void *data)
{
    (void)data;
    pthread_mutex_lock(&guile_first_entry);
    scm_with_guile(guile_noop, NULL);
    pthread_mutex_unlock(&guile_first_entry);
    return GC_thread_is_registered() ? CLGC_OK : CLGC_EATTACH;
}

/* As the Boehm adapter's: uncollectable, so that bdwgc scans the record
 * and keeps the Scheme procedure or object that clgc holds for a callback
 * alive until its handler has run. */
static void *
guile_record_alloc(size_t size, void *data)
{
    (void)data;
    return GC_malloc_uncollectable(size);
}

static void
guile_record_free(void *record, void *data)
{
    (void)data;
    GC_free(record);
}

/* bdwgc's restart signal is SIGXCPU, fixed when Guile started it. The
 * LLVM inside PoCL registers a handler of its own for SIGXCPU whenever it
 * compiles (RemoveFileOnSignal), with SA_RESETHAND, and leaves it there: a
 * collection then restarts a suspended thread through LLVM's handler,
 * which deletes the compiler's temporary files and puts bdwgc's handler
 * back, and while it does, the disposition is SIG_DFL, so a second thread
 * restarted in the same instant kills the process. The binding puts
 * bdwgc's handler back itself after the calls that may run LLVM (builds,
 * kernel creation, launches). */
static struct sigaction guile_restart_action;
static int guile_restart_signal;

void
guile_clgc_restore_restart_signal(void)
{
    struct sigaction now;

    if (guile_restart_signal <= 0 ||
        sigaction(guile_restart_signal, NULL, &now) != 0)
        return;
    if (now.sa_handler != guile_restart_action.sa_handler)
        sigaction(guile_restart_signal, &guile_restart_action, NULL);
}

int
guile_clgc_install(void)
{
    const char *env = getenv("CLGC_GUILE_REGIONS");
    const clgc_runtime_t rt = {
        .version = CLGC_RUNTIME_VERSION,
        .name = "guile",
        .safe_region = guile_safe_region,
        .active_region = guile_active_region,
        .attach_thread = guile_attach,
        .detach_thread = NULL,
        .flags = 0,
        .thread_known = guile_known,
        .callback_failed = guile_clgc_callback_failed,
        .record_alloc = guile_record_alloc,
        .record_free = guile_record_free,
    };

    if (env != NULL && (strcmp(env, "off") == 0 || strcmp(env, "0") == 0 ||
                        strcmp(env, "no") == 0))
        atomic_store(&guile_regions, 0);
    GC_allow_register_threads();
    guile_restart_signal = GC_get_thr_restart_signal();
    if (guile_restart_signal > 0 &&
        sigaction(guile_restart_signal, NULL, &guile_restart_action) != 0)
        guile_restart_signal = 0;
    return clgc_runtime_install(&rt);
}

void
guile_clgc_set_regions(int on)
{
    atomic_store(&guile_regions, on != 0);
}

int
guile_clgc_regions(void)
{
    return atomic_load(&guile_regions);
}
