#ifndef CLGC_RUNTIME_H
#define CLGC_RUNTIME_H

/* The runtime interface: how clgc tells a managed runtime (a garbage
 * collector, a VM) that a thread is about to block in OpenCL, and how it
 * lets code back into the runtime from inside such a region.
 *
 * A *safe region* is a stretch of code during which the thread promises not
 * to touch the runtime's heap, so the runtime may collect (or stop the
 * world) without waiting for it. Every clgc_cl* wrapper runs its OpenCL call
 * in one. bdwgc calls this GC_do_blocking, Guile scm_without_guile; a
 * safepoint VM marks its thread state "in native code". */

#include <stddef.h>

#include "clgc/common.h"

CLGC_BEGIN_DECLS

struct clgc_callback_error;

/* The shape of every region hook: exactly bdwgc's GC_fn_type, so that
 * GC_do_blocking, GC_call_with_gc_active and scm_without_guile can be
 * stored in a clgc_runtime_t as they are. */
typedef void *(*clgc_fn_t)(void *arg);

/* Version 1: name, data, the callback hooks, attach and detach.
 * Version 2: flags, thread_known, and the safepoint form.
 * Version 3: callback_failed.
 * Version 4: record_alloc and record_free. */
#define CLGC_RUNTIME_VERSION 4

/* Values of a thread's state word in the safepoint form. */
#define CLGC_STATE_RUNNING 0
#define CLGC_STATE_SAFE 1

/* clgc_runtime_t.flags */
enum {
    /* Run commands that never block (those without CLGC_COMMAND_MAY_BLOCK)
     * outside any safe region, when the runtime has the callback hooks: a
     * collection waits for such a call at most as long as the call takes,
     * a few us, and the region would cost more than the call (bdwgc's:
     * a few hundred ns, serialised across threads on its allocator lock). */
    CLGC_RUNTIME_SKIP_NONBLOCKING = 1 << 0
};

/* The hooks a runtime fills in. Fields are only ever added at the end, with
 * a new version number; clgc reads only the fields of the version given.
 * Any hook may be NULL: clgc then does the no-op thing (calls fn(arg)
 * directly, or succeeds at attaching without doing anything).
 *
 * A runtime has one of two forms of safe region:
 * - the callback form, safe_region and active_region, for runtimes that
 *   must run the region themselves (bdwgc, Guile);
 * - the safepoint form, thread_state, stop_requested and safepoint, for
 *   VMs whose collector reads a state word per thread and stops the world
 *   cooperatively: clgc makes the transitions itself, inline in every
 *   wrapper, with no call at all on the common path.
 *
 * clgc calls the hooks with no lock of its own held, on the thread that is
 * crossing the boundary. */
typedef struct clgc_runtime {
    /* CLGC_RUNTIME_VERSION at the time the runtime was written. */
    int version;

    /* A name for messages ("boehm", "guile", "my-vm"); may be NULL. */
    const char *name;

    /* The runtime's own pointer, returned by clgc_runtime_data(); clgc
     * never looks at it. Passed to attach_thread and detach_thread. */
    void *data;

    /* Run fn(arg) inside a safe region and return its result. The calling
     * thread is one the runtime knows (attached, or its own), outside a
     * safe region or inside an active_region. fn must not return by any
     * means other than returning (no longjmp across the hook). */
    void *(*safe_region)(clgc_fn_t fn, void *arg);

    /* Run fn(arg) with the runtime active again, from inside a safe region
     * (GC_call_with_gc_active). Nestable: fn may enter safe_region again. */
    void *(*active_region)(clgc_fn_t fn, void *arg);

    /* Make the calling thread, which the runtime did not create, known to
     * it (GC_register_my_thread). Returns CLGC_OK; CLGC_KNOWN if the
     * runtime knew the thread already (then clgc never detaches it); or a
     * negative clgc code. Called at most once per thread between
     * detaches. */
    int (*attach_thread)(void *data);

    /* Undo attach_thread. clgc calls it from clgc_thread_detach() or, for
     * a thread that never called that, from a thread-exit destructor,
     * always with the thread outside any of clgc's regions: a thread that
     * exits inside one (pthread_exit in a region) leaves clgc's regions
     * first, though the exit skipped the ends of the runtime's own region
     * hooks (bdwgc's GC_unregister_my_thread accepts a thread inside
     * GC_do_blocking). */
    void (*detach_thread)(void *data);

    /* Version 2. */

    /* CLGC_RUNTIME_* flags. */
    unsigned flags;

    /* 1 if the runtime knows the calling thread, 0 if not (bdwgc:
     * GC_thread_is_registered). clgc asks on a thread's crossings until
     * the answer is 1, then remembers it until the thread detaches. On a
     * thread the runtime does not know, wrappers run their call outside
     * any region (the collector does not wait for such a thread) and
     * clgc_call_active fails. NULL: every thread is known. In the
     * safepoint form, thread_state answers this instead. */
    int (*thread_known)(void *data);

    /* The safepoint form. thread_state returns the calling thread's state
     * word (an int accessed atomically), or NULL if the VM does not know
     * the thread; clgc asks once per thread, as thread_known, and keeps
     * the word for the thread's life. Entering a safe region stores
     * CLGC_STATE_SAFE into it with release order. Leaving stores
     * CLGC_STATE_RUNNING, then reads *stop_requested, with no fence
     * between them, and if it is non-zero calls safepoint(data): the VM's
     * own safepoint slow path, which returns once the thread may run on
     * with its word CLGC_STATE_RUNNING. Because of the missing fence, the
     * collector must call clgc_safepoint_barrier() after it sets
     * *stop_requested and before it reads any state word. */
    int *(*thread_state)(void *data);
    const int *stop_requested;
    void (*safepoint)(void *data);

    /* Version 3. */

    /* A callback clgc delivered failed (its handler called
     * clgc_callback_fail, or its thread could not be attached): called
     * once per failure, in the order they happened, on the next thread to
     * finish a clgc_wait_for_events or a clgc_queue_drain, with the runtime
     * active. NULL: failures wait for clgc_callback_error_take (see
     * clgc/callback.h). */
    void (*callback_failed)(const struct clgc_callback_error *error,
                            void *data);

    /* Version 4. */

    /* Memory for clgc's records that hold a data pointer the program
     * handed clgc: a notification's (clgc_event_notify, clgc_event_post),
     * a posted function's (clgc_queue_post), and a callback's user_data
     * (every clgc_cl* wrapper that takes a callback, deferred or not).
     * clgc keeps the pointer there until the handler has run (a context's
     * error callback: until the context is gone), and OpenCL holds only
     * the record; a collector that does not scan the record collects the
     * data under the handler. A collecting runtime allocates
     * the records where its collector scans for pointers but never
     * collects (bdwgc: GC_malloc_uncollectable and GC_free), so that the
     * data lives as long as the record. Both or neither: NULL for both is
     * malloc and free.
     *
     * record_alloc returns size bytes aligned as max_align_t (need not be
     * zeroed), or NULL (the registration then fails as out of memory). clgc
     * calls it on the registering thread with the runtime active: inside a
     * safe region (a wrapper's: the wrappers allocate inside their region)
     * clgc first re-enters the runtime as clgc_call_active does, through
     * active_region or the safepoint form's leaving transition. On a
     * thread the runtime does not know, clgc does not call it: the record
     * comes from malloc, and data such a thread hands clgc must be rooted
     * by the program (attach the thread with clgc_thread_attach first to
     * have it kept).
     *
     * record_free frees a record record_alloc returned, once its handler
     * has run or can no longer run. clgc calls it on any thread, with no
     * promise about the runtime: the registering thread inside a wrapper's
     * safe region, PoCL's threads (which the runtime may not know), clgc's
     * watcher thread, a thread draining a queue. It must not call clgc,
     * and must not allocate from the runtime or wait for a collection. bdwgc's
     * GC_free qualifies: it takes only the allocator lock. A runtime whose
     * free needs a known, active thread must defer it itself (a lock-free
     * list that the next record_alloc empties, say). */
    void *(*record_alloc)(size_t size, void *data);
    void (*record_free)(void *record, void *data);
} clgc_runtime_t;

/* Install rt as the process's runtime. The struct is copied; rt may be
 * freed afterwards. Call it once, before any other clgc call that crosses
 * the boundary (any clgc_cl* wrapper, clgc_call_safe, clgc_call_active,
 * clgc_thread_attach).
 *
 * Returns CLGC_OK; CLGC_EINVAL if rt is NULL, or mixes the two forms, or
 * has only part of the safepoint form, or only one of record_alloc and
 * record_free; CLGC_EVERSION if rt->version
 * is not between 1 and CLGC_RUNTIME_VERSION; CLGC_EALREADY if a runtime was
 * installed before; CLGC_EINUSE if clgc was already used, which fixed the
 * default no-op runtime for good. There is no uninstall: threads may be
 * inside a hook at any time. Any thread; thread-safe. */
CLGC_EXTERN int clgc_runtime_install(const clgc_runtime_t *rt);

/* The runtime in force: the installed one, or the built-in no-op runtime
 * (name "none", every hook NULL). Reading it fixes the default, as any
 * boundary crossing does. Never NULL. Any thread. */
CLGC_EXTERN const clgc_runtime_t *clgc_runtime_current(void);

/* The data pointer of the runtime in force. Any thread. */
CLGC_EXTERN void *clgc_runtime_data(void);

/* Run fn(arg) inside a safe region of the runtime in force and return its
 * result. This is what every clgc_cl* wrapper does around its call. The
 * calling thread must be known to the runtime. Nests: calling it inside a
 * region enters the runtime's hook again (bdwgc and Guile allow this). */
CLGC_EXTERN void *clgc_call_safe(clgc_fn_t fn, void *arg);

/* Run fn(arg) with the runtime active and store its result in *result
 * (if result is not NULL). Inside a safe region this goes through the
 * runtime's active_region hook (or, in the safepoint form, leaves the
 * region, polling the safepoint, and enters it again after fn); outside
 * one the thread is already active and fn is called directly. Used by
 * callbacks that run on a thread that is blocked in OpenCL.
 *
 * A thread outside any region that the runtime does not know (PoCL's
 * callback thread, say) is attached first, as by clgc_thread_attach(),
 * and stays attached until it exits: the runtime registers it once, not
 * once per call. In the safepoint form such a thread, and any thread
 * whose state word is CLGC_STATE_SAFE outside a region, is in native
 * code: clgc makes its word RUNNING for fn (polling the safepoint) and
 * SAFE again after, so that no collection waits for it while it blocks
 * in OpenCL between callbacks. A thread attached by clgc_thread_attach()
 * keeps the word its runtime gave it.
 *
 * Returns CLGC_OK, or CLGC_ENOTATTACHED without calling fn when the
 * runtime does not know the thread and cannot attach it (no attach_thread
 * hook, or the hook failed). */
CLGC_EXTERN int clgc_call_active(clgc_fn_t fn, void *arg, void **result);

/* For the collector of a safepoint-form runtime: make every thread's
 * store to its state word visible, and *stop_requested visible to every
 * thread, before the collector reads the words. Call it after setting
 * *stop_requested. Uses membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) where
 * the kernel has it (clgc registers for it at install); elsewhere clgc's
 * leaving transition has a full fence instead and this is a fence. Any
 * thread. */
CLGC_EXTERN void clgc_safepoint_barrier(void);

/* Attach the calling thread to the runtime (for threads the runtime did
 * not create, such as PoCL's). Idempotent: a thread attached already gets
 * CLGC_OK again. The thread is detached by clgc_thread_detach() or, failing
 * that, when it exits, inside a safe region or not (see detach_thread).
 * Returns CLGC_OK, CLGC_KNOWN if the runtime knew the thread already
 * (nothing to undo: clgc_thread_attached() stays 0), or the attach_thread
 * hook's error (CLGC_EATTACH for any other positive value). */
CLGC_EXTERN int clgc_thread_attach(void);

/* Detach the calling thread if clgc attached it. Returns CLGC_OK, or
 * CLGC_ENOTATTACHED if clgc had not attached it, or CLGC_EINVAL if the
 * thread is inside a safe region (detach after leaving it). */
CLGC_EXTERN int clgc_thread_detach(void);

/* 1 if clgc_thread_attach() attached the calling thread and it has not
 * been detached, else 0. */
CLGC_EXTERN int clgc_thread_attached(void);

/* How many safe regions the calling thread is inside, counting regions
 * entered from within an active region. 0 on a thread that is running
 * ordinary runtime code. */
CLGC_EXTERN unsigned clgc_thread_region_depth(void);

/* 1 if the calling thread's innermost crossing was into a safe region (it
 * must not touch the runtime), 0 if it is active (never entered one, or
 * re-entered the runtime through clgc_call_active). */
CLGC_EXTERN int clgc_thread_in_region(void);

CLGC_END_DECLS

#endif /* CLGC_RUNTIME_H */
