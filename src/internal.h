#ifndef CLGC_INTERNAL_H
#define CLGC_INTERNAL_H

/* Private to the library: the state behind clgc/runtime.h and the helpers
 * the generated wrappers call. Names are clgc__ (hidden by the linker map
 * and -fvisibility=hidden). */

#ifdef HAVE_CONFIG_H
#include "config.h" /* CLGC_DEBUG */
#endif

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#ifdef CLGC_DEBUG
#include <stdio.h>
#include <stdlib.h>
#endif

#include "clgc.h"

#include <CL/cl_icd.h>

/* -fvisibility=hidden covers definitions, not declarations: without this
 * the compiler would reach the library's own data (the thread's state, the
 * first platform's dispatch table) through the GOT from every wrapper. No
 * header may be included below. */
#pragma GCC visibility push(hidden)

#if defined(__SANITIZE_ADDRESS__)
#define CLGC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLGC_ASAN 1
#endif
#endif

/* For the few helpers on every wrapper's path: the compiler's size
 * heuristics would otherwise call them out of line from every generated
 * wrapper. */
#define CLGC_INLINE static inline __attribute__((always_inline))

/* A clock's reading in ns: CLOCK_MONOTONIC for times, and
 * CLOCK_THREAD_CPUTIME_ID for the calling thread's CPU (getrusage's
 * RUSAGE_THREAD lags until the thread is switched out or a tick). */
CLGC_INLINE long
clgc__clock_ns(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

#define CLGC_LIKELY(x) __builtin_expect(!!(x), 1)
#define CLGC_UNLIKELY(x) __builtin_expect(!!(x), 0)

#ifdef CLGC_DEBUG
#define CLGC_ASSERT(cond)                                                      \
    ((cond) ? (void)0                                                          \
            : (fprintf(stderr, "clgc: %s:%d: assertion '%s' failed\n",         \
                       __FILE__, __LINE__, #cond),                             \
               abort()))
#else
#define CLGC_ASSERT(cond) ((void)0)
#endif

/* Per-thread state. Initial-exec TLS: one %fs-relative access, no call,
 * which is what keeps a wrapper within a few ns of the raw call.
 *
 * `region` packs what a crossing changes into one word, so that entering
 * is one load and one store and leaving one store: the depth of safe
 * regions << 1 | whether the innermost crossing was into one. Its top
 * bit, CLGC__SLOW, keeps the generated wrappers off their inline
 * transitions (clgc__fast_ready): set until the thread is set up with a
 * state word it may store into with no fence of its own (membarrier is
 * there, or there is no collector), so that one load and test tells a
 * wrapper both that and whether it is inside a region.
 *
 * `state` and `stop` make every crossing of the inline forms (no hooks,
 * or the safepoint form) a store into *state, and leaving one a check of
 * *stop. They are NULL until the thread's first crossing sets them up
 * (clgc_call_safe), and stay NULL for runtimes with the callback hooks,
 * whose crossings all go through clgc_call_safe. */
struct clgc__thread {
    unsigned region;
    int *state;
    const int *stop;
    int own_state;          /* the word of threads the runtime has none for */
    unsigned char attached; /* clgc attached it: detach at exit */
    unsigned char known;    /* the runtime knows it (kept once true) */
};
extern __thread struct clgc__thread clgc__self
    __attribute__((tls_model("initial-exec")));

#define CLGC__SAFE 1u
#define CLGC__DEPTH_ONE 2u
#define CLGC__SLOW 0x80000000u

/* The runtime in force; NULL until installed or first used. */
extern _Atomic(const clgc_runtime_t *) clgc__rt;
const clgc_runtime_t *clgc__rt_fix(void);

CLGC_INLINE const clgc_runtime_t *
clgc__runtime(void)
{
    const clgc_runtime_t *rt =
        atomic_load_explicit(&clgc__rt, memory_order_acquire);
    return CLGC_LIKELY(rt != NULL) ? rt : clgc__rt_fix();
}

/* Set when the kernel lacks membarrier: the leaving transition then needs
 * a full fence of its own (see clgc_safepoint_barrier). */
extern atomic_int clgc__full_fence;

/* A full fence. ThreadSanitizer does not model fences (GCC warns), so its
 * builds use a sequentially consistent read-modify-write instead. */
#ifdef __SANITIZE_THREAD__
extern int clgc__fence_word;
#define clgc__fence() __atomic_fetch_add(&clgc__fence_word, 0, __ATOMIC_SEQ_CST)
#else
#define clgc__fence() atomic_thread_fence(memory_order_seq_cst)
#endif

/* Set when the runtime asked for CLGC_RUNTIME_SKIP_NONBLOCKING and has the
 * callback hooks. */
extern atomic_int clgc__skip_nonblocking;

/* The inline transitions: every wrapper's path once the thread is set up
 * with a state word. Entering returns what leaving restores. */
CLGC_INLINE unsigned
clgc__enter_inline(struct clgc__thread *t)
{
    unsigned outer = t->region;

    t->region = (outer + CLGC__DEPTH_ONE) | CLGC__SAFE;
    __atomic_store_n(t->state, CLGC_STATE_SAFE, __ATOMIC_RELEASE);
    return outer;
}

void clgc__safepoint_slow(void);

/* Back to running, unless the region was nested in another: then the
 * word stays SAFE. The store and the load of *stop need no fence between
 * them: the collector's clgc_safepoint_barrier supplies it. */
CLGC_INLINE void
clgc__leave_inline(struct clgc__thread *t, unsigned outer)
{
    if (!(outer & CLGC__SAFE)) {
        __atomic_store_n(t->state, CLGC_STATE_RUNNING, __ATOMIC_RELEASE);
        if (CLGC_UNLIKELY(
                atomic_load_explicit(&clgc__full_fence, memory_order_relaxed)))
            clgc__fence();
        else
            atomic_signal_fence(memory_order_seq_cst);
        /* Acquire: the thread is about to use the heap the collector may
         * have just written, and stop = 0 is the collector's release. */
        if (CLGC_UNLIKELY(__atomic_load_n(t->stop, __ATOMIC_ACQUIRE)))
            clgc__safepoint_slow();
    }
    t->region = outer;
}

/* The generated wrappers' own transitions, for the common case only: a
 * thread whose region word has neither CLGC__SLOW nor CLGC__SAFE (above),
 * which clgc__fast_ready tells. Neither keeps anything in a register across the
 * OpenCL call: entering adds one region and the SAFE bit to `region` (both
 * known to be clear of it) and leaving takes them off again, so a wrapper
 * needs no saved registers and its OpenCL call no spills. The protocol is
 * clgc__enter_inline's and clgc__leave_inline's: a release store of SAFE,
 * the call, a release store of RUNNING, and an acquire load of *stop, with
 * the full fence between them supplied by the collector's membarrier
 * (clgc_safepoint_barrier); threads that would need a fence of their own
 * keep CLGC__SLOW and take the out-of-line path. Anything else (nested
 * regions, a thread not set up, the callback form) takes it too. */
#define CLGC__FAST_STEP (CLGC__DEPTH_ONE | CLGC__SAFE)

CLGC_INLINE int
clgc__fast_ready(void)
{
    return CLGC_LIKELY(!(clgc__self.region & (CLGC__SLOW | CLGC__SAFE)));
}

CLGC_INLINE void
clgc__fast_enter(void)
{
    clgc__self.region += CLGC__FAST_STEP;
    __atomic_store_n(clgc__self.state, CLGC_STATE_SAFE, __ATOMIC_RELEASE);
}

void clgc__fast_safepoint(void) __attribute__((cold, noinline));

CLGC_INLINE void
clgc__fast_leave(void)
{
    __atomic_store_n(clgc__self.state, CLGC_STATE_RUNNING, __ATOMIC_RELEASE);
    atomic_signal_fence(memory_order_seq_cst);
    if (CLGC_UNLIKELY(__atomic_load_n(clgc__self.stop, __ATOMIC_ACQUIRE)))
        clgc__fast_safepoint();
    clgc__self.region -= CLGC__FAST_STEP;
}

/* Memory for clgc's records that hold a user's data pointer (a
 * notification's, a posted function's, a callback's), so that a runtime
 * can have its collector scan them (runtime.c). */
void *clgc__record_alloc(size_t size);
void clgc__record_free(void *record);

/* Failures of the handlers clgc runs (failure.c). A feature that runs a
 * user's handler pushes a frame around it, naming what registered it (an
 * OpenCL command, "clgc_event_post", or NULL for a closure): inside it
 * clgc_callback_fail records a failure. */
struct clgc__running {
    const char *command;
    const struct clgc__running *outer;
};
void clgc__running_push(struct clgc__running *r, const char *command);
void clgc__running_pop(struct clgc__running *r);
/* Record a failure of a handler registered by command. Any thread. */
void clgc__record_error(const char *command, int code, void *error);
/* Hand the failures recorded so far to the runtime's callback_failed hook,
 * on this thread (the end of a wait or a drain). */
void clgc__hand_errors(void);

/* Platforms and their objects (platform.c). */

/* More platforms than any machine has; platforms past it are never used. */
#define CLGC__MAX_PLATFORMS 16

struct clgc__platforms {
    atomic_int listed; /* n, id and dispatch are set */
    cl_uint n;
    cl_platform_id id[CLGC__MAX_PLATFORMS];
    /* Atomic only so that the inline check may read dispatch[0] before
     * `listed` says it is set; it is written once. */
    _Atomic(const void *) dispatch[CLGC__MAX_PLATFORMS];
};
extern struct clgc__platforms clgc__platforms;
void clgc__list_platforms(void);

/* An object's first word: its platform's dispatch table pointer. */
#ifdef CLGC_ASAN
const void *clgc__dispatch_of(const void *object);
#else
CLGC_INLINE const void *
clgc__dispatch_of(const void *object)
{
    return *(const void *const *)object;
}
#endif

/* The index of the platform whose objects carry this dispatch pointer,
 * or -1. Lists the platforms on first use. */
int clgc__platform_index(const void *dispatch);

/* The inline part of clgc__object_ok, for the generated wrappers' fast
 * path: NULL, or an object of the first platform. Anything else goes the
 * out-of-line way, which makes the whole check. */
CLGC_INLINE int
clgc__object_fast(const void *obj)
{
    return obj == NULL ||
           CLGC_LIKELY(clgc__dispatch_of(obj) ==
                       atomic_load_explicit(&clgc__platforms.dispatch[0],
                                            memory_order_relaxed));
}

/* Whether a core wrapper may pass obj to the loader: NULL (the loader
 * reports it, or picks a default platform where OpenCL allows one) or an
 * object of a known platform. The first platform is checked inline: until
 * the platforms are listed its entry is a sentinel no object matches. */
CLGC_INLINE int
clgc__object_ok(const void *obj)
{
    const void *dispatch;

    if (obj == NULL)
        return 1;
    dispatch = clgc__dispatch_of(obj);
    if (CLGC_LIKELY(dispatch ==
                    atomic_load_explicit(&clgc__platforms.dispatch[0],
                                         memory_order_relaxed)))
        return 1;
    return clgc__platform_index(dispatch) >= 0;
}

/* Dispatch entries (gen/commands.h's enum clgc__entry). A driver may leave
 * an entry of its dispatch table absent, and the loader calls through it
 * without a check. Absent is NULL (PoCL has no clSetCommandQueueProperty,
 * which OpenCL 1.1 deprecated: a call to address 0) or the loader's own
 * exported function (a driver older than the command links it from
 * libOpenCL, as Oclgrind does for OpenCL 2.0 to 3.0: the loader would
 * dispatch back to the driver for ever, and through the layer each round
 * adds a frame). So a wrapper checks the entry in its object's own table
 * first and returns CL_INVALID_OPERATION for an absent one. The check costs
 * the fast path nothing: clgc__entry_dispatch[e] is the first platform's
 * dispatch pointer only if that platform has entry e (written once, when
 * the platforms are listed), so the one comparison the wrappers made with
 * the first platform's pointer now also says the entry is there. Every
 * other case reads the object's table each time. */
typedef void (*clgc__any_fn)(void);
extern const clgc__any_fn clgc__entry_loader[];
extern _Atomic(const void *) clgc__entry_dispatch[];
extern const unsigned short clgc__entry_offsets[];

/* The inline part of clgc__entry_check: NULL, or an object of the first
 * platform, whose table fills the entry. */
CLGC_INLINE int
clgc__entry_fast(const void *obj, unsigned entry)
{
    return obj == NULL ||
           CLGC_LIKELY(clgc__dispatch_of(obj) ==
                       atomic_load_explicit(&clgc__entry_dispatch[entry],
                                            memory_order_relaxed));
}

/* The out-of-line part: invalid if obj belongs to no known platform,
 * CL_INVALID_OPERATION if its table lacks the entry, else CL_SUCCESS. */
cl_int clgc__entry_missing(const void *obj, unsigned entry, cl_int invalid);

/* clgc__object_ok for a call through dispatch entry `entry`: CL_SUCCESS if
 * obj may be passed to the loader (NULL, which the loader reports, or an
 * object of a known platform whose table has the entry), else the error
 * to return: `invalid` (the object's error) or CL_INVALID_OPERATION. */
CLGC_INLINE cl_int
clgc__entry_check(const void *obj, unsigned entry, cl_int invalid)
{
    if (clgc__entry_fast(obj, entry))
        return CL_SUCCESS;
    return clgc__entry_missing(obj, entry, invalid);
}

/* Extension functions. */
struct clgc__extension {
    const char *name;
    cl_int invalid;    /* error for a NULL object; 0 if NULL is allowed */
    unsigned char icd; /* the object is an ICD object: unknown is an error */
};
extern const struct clgc__extension clgc__extensions[];
extern const clgc_command_t clgc__commands[];

/* The function for extension slot `slot` on the platform that `object`
 * belongs to, or NULL with *err set to the CL error to return. */
void *clgc__extension(unsigned slot, const void *object, cl_int *err);

/* The first object of an array of n (NULL if none). */
const void *clgc__first_object(cl_uint n, const void *const *objects);

/* The CL_CONTEXT_PLATFORM of a property list (NULL if absent). */
const void *clgc__properties_platform(const cl_context_properties *props);

/* Set in a child forked after the parent used OpenCL through clgc
 * (fork.c): the driver's threads stayed in the parent, so the waits there
 * are the driver's own, which return when the driver's would. */
extern atomic_int clgc__forked;

CLGC_INLINE int
clgc__in_forked_child(void)
{
    return CLGC_UNLIKELY(
        atomic_load_explicit(&clgc__forked, memory_order_relaxed));
}

/* Events (event.c), for the features that wait for them. */

/* Flush the command queue of each event whose command is still queued,
 * once, as a wait must (clSetEventCallback does not flush, and a command
 * nobody flushed may never start; a queue whose commands have all left
 * CL_QUEUED is never touched, as it may be gone), and check
 * the list as clWaitForEvents does: CL_SUCCESS, CL_INVALID_EVENT for an
 * event OpenCL does not know, CL_INVALID_CONTEXT for events of two
 * contexts. *user, if not NULL, is set to whether some event is a user
 * event's (it has no queue). */
cl_int clgc__events_flush(cl_uint n, const cl_event *events, int *user);
/* Whether event is a user event's: it has no queue. */
int clgc__event_is_user(cl_event event);
/* An event's execution status; CL_INVALID_EVENT if it cannot be read. */
cl_int clgc__event_status(cl_event event);
/* 1 when every event is complete or failed (or cannot be read). */
int clgc__events_done(cl_uint n, const cl_event *events);
/* clWaitForEvents' result for events that are done: CL_SUCCESS, or
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if one failed. */
cl_int clgc__events_outcome(cl_uint n, const cl_event *events);

/* For the hand-written wrappers (handwritten.c). Wake every sleeping wait
 * to look at its events (wait.c): a failure was set through clgc. */
void clgc__wait_kick(void);
/* clSetEventCallback's body, inside the wrapper's region (callback.c):
 * the callback watched for failures the driver never calls back for. */
struct clgc__set_event_callback {
    cl_event event;
    cl_int type;
    void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
    void *data;
    cl_int ret;
};
void *clgc__set_event_callback(void *p);

/* The watcher (watch.c): an event callback that is sure to come, even where
 * PoCL never calls back (a user event set to an error, and the commands
 * that depend on it). A watch is delivered exactly once, by
 * OpenCL's callback or by clgc's watcher thread, which looks at the status
 * of the pending ones; OpenCL's callback is given an id, not the record, so
 * one that comes after the delivery, or never, costs nothing. */
struct clgc__watch {
    /* Called once with the event and a status (OpenCL's, or the negative
     * one the watcher saw), on OpenCL's thread, the watcher's, or inline
     * in clgc__watch_start; the record is the callee's from then on. */
    void (*fire)(struct clgc__watch *w, cl_event event, cl_int status);
};
/* Register w's callback on event for the execution status type
 * (clSetEventCallback) and watch it: if the event fails first, fire gets
 * the negative status, as OpenCL specifies for a terminated command.
 * Returns 1 if fire has run or will run, 0 if it never will, with *err set
 * to OpenCL's answer (or CL_OUT_OF_HOST_MEMORY). Any thread. */
int clgc__watch_start(struct clgc__watch *w, cl_event event, cl_int type,
                      cl_int *err);
/* A failure was set through clgc: have the watcher look soon. Any thread. */
void clgc__watch_kick(void);

/* What a completion queue holds (queue.c): the first member of an event
 * notification, a deferred callback or a posted function. A drain calls
 * run, which owns the item from then on, inside a frame naming command
 * (clgc__running_push), so that clgc_callback_fail in the handler records
 * a failure of what posted it. */
struct clgc__item {
    struct clgc__item *next;
    void (*run)(struct clgc__item *item);
    const char *command; /* "clgc_event_post", an OpenCL command, ... */
    int promised;        /* counted by clgc__queue_promise until it has run */
};

/* Push an item; promised: it was counted by clgc__queue_promise, which
 * keeps clgc_queue_close from closing the queue under a coming push (the
 * count drops once the item has run, so a close right after a drain never
 * sees it). A push may be the last thing that keeps a queue open: after
 * it, the pusher must not touch q again. */
void clgc__queue_push(clgc_queue_t *q, struct clgc__item *it, int promised);
void clgc__queue_promise(clgc_queue_t *q, int n);
/* n threads more (or fewer) defer their callbacks to q (callback.c):
 * clgc_queue_close refuses while any does. */
void clgc__queue_deferring(clgc_queue_t *q, int n);

/* The trampolines' records (callback.c; the generated wrappers of the
 * commands that take a callback use them). A record stands for one
 * registration: the user's function and data, and what the generated
 * trampoline needs to call it. */
enum clgc__lifetime {
    CLGC__ONCE,     /* called at most once; deferrable */
    CLGC__ONCE_NOW, /* called at most once, never deferred */
    CLGC__CONTEXT   /* called any number of times until its context goes */
};

struct clgc__callback;
typedef void (*clgc__run_fn)(const struct clgc__callback *cb, const void *args);

struct clgc__callback {
    struct clgc__item item; /* in a queue, when deferred */
    clgc__run_fn run;       /* calls fn with a call's arguments and data */
    clgc_function_t fn;
    void *data;
    const char *command;
    clgc_queue_t *queue; /* deferred there, or NULL */
    enum clgc__lifetime lifetime;
    int state;     /* CLGC__ONCE*: 0 waiting, 1 called, 2 never will be */
    unsigned refs; /* the registration's and the callback's */
    clgc_closure_t *closure; /* a native kernel's function, freed with it */
    size_t argsize;
    max_align_t args[]; /* a deferred call's arguments */
};

/* A record for a registration of command's callback fn(data), or NULL. */
struct clgc__callback *clgc__callback_new(const char *command,
                                          enum clgc__lifetime lifetime,
                                          clgc__run_fn run, clgc_function_t fn,
                                          void *data, size_t argsize);
/* The registering call returned; ok: it accepted the callback. For
 * CLGC__CONTEXT, context is the context created (NULL if none). cb may be
 * NULL (no callback was given): then it does nothing. */
void clgc__callback_registered(struct clgc__callback *cb, int ok,
                               cl_context context);
/* clCreateContext made context on devices[0..n): retain its sub-devices
 * until it is destroyed (src/subdevice.c). */
void clgc__context_keep_devices(cl_context context, cl_uint n,
                                const cl_device_id *devices);
/* A record for clEnqueueNativeKernel's function fn, which has no user
 * data: *code is a one-shot closure that calls it. NULL if out of memory. */
struct clgc__callback *clgc__native_new(const char *command, clgc_function_t fn,
                                        clgc_function_t *code);
/* A trampoline was called with a call's arguments (argsize bytes). */
void clgc__callback_fire(struct clgc__callback *cb, const void *args);

#pragma GCC visibility pop

#endif /* CLGC_INTERNAL_H */
