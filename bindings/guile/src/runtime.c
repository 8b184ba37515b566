/* The Guile runtime adapter: clgc's safe regions are Guile's own
 * scm_without_guile, re-entry is scm_with_guile, and clgc's records are
 * bdwgc's uncollectable objects, as in the Boehm adapter (src/boehm.c):
 * Guile collects with the same bdwgc, so one runtime serves both. */

#define _GNU_SOURCE /* dladdr */
#define GC_THREADS
#include <dlfcn.h>
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

/* The LLVM inside PoCL registers handlers of its own for the signals
 * that end a process (SIGINT, SIGTERM, SIGXCPU, SIGSEGV, ...) when the
 * device is first opened and again whenever it compiles
 * (RemoveFileOnSignal), with SA_RESETHAND, and leaves them there. When one
 * runs it deletes the compiler's temporary files and puts back the
 * dispositions it found when it registered. Under Guile, bdwgc restarts
 * the threads it stopped with SIGXCPU: the first collection that stops a
 * thread in Guile mode then runs LLVM's handler, which resets a handler
 * the program set since (SIGINT to SIG_DFL: Ctrl-C ends the process), and
 * while it runs SIGXCPU is SIG_DFL, so a second thread restarted in the
 * same instant kills the process.
 *
 * So the binding keeps, for each of those signals, the last disposition
 * it saw that was not LLVM's (a handler in a library named libLLVM*),
 * noted before the calls that may register LLVM's handlers (device
 * discovery, contexts, builds, kernel creation, the generic path) and
 * after every call that may run LLVM (those, and launches, waits,
 * transfers, finish, flush, info queries), which also puts it back
 * wherever LLVM's handler is registered. bdwgc's restart signal always
 * gets bdwgc's handler back. A disposition unchanged since it was saved
 * costs one sigaction read, no dladdr.
 *
 * Those reads were most of what a launch and wait cost from Scheme beyond
 * the same from C (two passes of 17 system calls: docs/performance.md).
 * LLVM registers its handlers for all the signals at once, so after a
 * launch or a wait one signal is read first, SIGTERM (one LLVM always
 * takes, and that a program seldom changes): unchanged since it was
 * saved, nothing was registered since the last pass, and the pass is
 * skipped. A pass that finds LLVM's handlers makes the next few passes
 * whole, for a registration that another thread was still making. */
static const int guile_llvm_signals[] = {
    SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGTRAP, SIGABRT, SIGBUS,  SIGFPE,
    SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGTERM, SIGXCPU, SIGXFSZ, SIGSYS};
#define GUILE_NSIGNALS (sizeof(guile_llvm_signals) / sizeof(int))
static struct sigaction guile_saved[GUILE_NSIGNALS];
static int guile_have_saved[GUILE_NSIGNALS];
static pthread_mutex_t guile_signal_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction guile_restart_action;
static int guile_restart_signal;
/* Under the lock: whole passes still due after one that found LLVM's. */
static int guile_whole_passes;
#define GUILE_WHOLE_PASSES 8
static size_t guile_sentinel; /* SIGTERM's index in guile_llvm_signals */

/* Whether now is the disposition saved for signal i (no dladdr needed). */
static int
guile_same_as_saved(size_t i, const struct sigaction *now)
{
    return guile_have_saved[i] &&
           now->sa_handler == guile_saved[i].sa_handler &&
           now->sa_flags == guile_saved[i].sa_flags;
}

/* Whether a disposition is a handler in LLVM's library. */
static int
guile_llvm_handler(const struct sigaction *sa)
{
    void *fn = (sa->sa_flags & SA_SIGINFO) ? (void *)sa->sa_sigaction
                                           : (void *)sa->sa_handler;
    Dl_info info;

    if (fn == (void *)SIG_DFL || fn == (void *)SIG_IGN)
        return 0;
    return dladdr(fn, &info) != 0 && info.dli_fname != NULL &&
           strstr(info.dli_fname, "libLLVM") != NULL;
}

void
guile_clgc_signals_note(void)
{
    struct sigaction now;

    pthread_mutex_lock(&guile_signal_lock);
    for (size_t i = 0; i < GUILE_NSIGNALS; i++)
        if (guile_llvm_signals[i] != guile_restart_signal &&
            sigaction(guile_llvm_signals[i], NULL, &now) == 0 &&
            !guile_same_as_saved(i, &now) && !guile_llvm_handler(&now)) {
            guile_saved[i] = now;
            guile_have_saved[i] = 1;
        }
    pthread_mutex_unlock(&guile_signal_lock);
}

void
guile_clgc_signals_restore(void)
{
    struct sigaction now;

    pthread_mutex_lock(&guile_signal_lock);
    if (guile_restart_signal > 0 &&
        sigaction(guile_restart_signal, NULL, &now) == 0 &&
        now.sa_handler != guile_restart_action.sa_handler)
        sigaction(guile_restart_signal, &guile_restart_action, NULL);
    if (guile_whole_passes == 0 && sigaction(SIGTERM, NULL, &now) == 0 &&
        guile_same_as_saved(guile_sentinel, &now)) {
        pthread_mutex_unlock(&guile_signal_lock);
        return;
    }
    if (guile_whole_passes > 0)
        guile_whole_passes--;
    for (size_t i = 0; i < GUILE_NSIGNALS; i++) {
        int sig = guile_llvm_signals[i];

        if (sig == guile_restart_signal || sigaction(sig, NULL, &now) != 0 ||
            guile_same_as_saved(i, &now))
            continue;
        if (!guile_llvm_handler(&now)) {
            guile_saved[i] = now;
            guile_have_saved[i] = 1;
        } else {
            if (guile_have_saved[i])
                sigaction(sig, &guile_saved[i], NULL);
            guile_whole_passes = GUILE_WHOLE_PASSES;
        }
    }
    pthread_mutex_unlock(&guile_signal_lock);
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
    for (size_t i = 0; i < GUILE_NSIGNALS; i++)
        if (guile_llvm_signals[i] == SIGTERM)
            guile_sentinel = i;
    guile_clgc_signals_note();
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

/* ------------------------------------------------------------------------
 * Switches */

static SCM
set_safe_regions_body(SCM on)
{
    guile_clgc_set_regions(scm_is_true(on));
    return SCM_UNSPECIFIED;
}
GUILE_CLGC_HELD1(set_safe_regions)

static SCM
safe_regions_p_body(void)
{
    return scm_from_bool(guile_clgc_regions());
}
GUILE_CLGC_HELD0(safe_regions_p)

static SCM
runtime_name_body(void)
{
    return guile_clgc_str_or_false(clgc_runtime_current()->name);
}
GUILE_CLGC_HELD0(runtime_name)

static SCM
thread_in_region_p_body(void)
{
    return scm_from_bool(clgc_thread_in_region());
}
GUILE_CLGC_HELD0(thread_in_region_p)

const struct guile_clgc_proc guile_clgc_runtime_procs[] = {
    {"set-safe-regions!", 1, 0, 0, set_safe_regions,
     "(set-safe-regions! on?) switches the safe regions on or off (off: every "
     "call in Guile mode, for comparison)."},
    {"safe-regions?", 0, 0, 0, safe_regions_p,
     "(safe-regions?) -> whether the safe regions are on."},
    {"runtime-name", 0, 0, 0, runtime_name,
     "(runtime-name) -> the name of clgc's runtime, \"guile\"."},
    {"in-safe-region?", 0, 0, 0, thread_in_region_p,
     "(in-safe-region?) -> whether this thread is inside a safe region (never, "
     "from Scheme)."},
    {NULL, 0, 0, 0, NULL, NULL}};
