/* refvm: the reference VM for clgc's safepoint form (see refvm.h).
 *
 * The protocol, in one place:
 *
 *   mutator                              collector
 *   -------                              ---------
 *   word = RUNNING while in VM code      lock the world
 *   poll: if stop, park:                 stop = 1
 *     word = SAFE (release)              clgc_safepoint_barrier()
 *     wait for the world to restart      wait until every word is SAFE
 *     word = RUNNING, full fence         collect
 *     check stop again                   stop = 0 (release)
 *                                        unlock the world
 *
 * clgc does the mutator's part inside every clgc_cl* wrapper: SAFE on the
 * way in; on the way out RUNNING, then a read of stop and, if it is set, a
 * call of the safepoint hook (refvm_park). Its way out has no fence
 * between the store and the read, to cost nothing on the common path;
 * clgc_safepoint_barrier() gives the collector that fence instead: after
 * it, either the collector sees a thread's RUNNING or the thread sees
 * stop = 1 and parks. One pass over the words is therefore enough: a
 * thread seen SAFE that leaves its region later parks before it touches
 * the heap.
 *
 * Two locks. `world` is held by a collector from the moment it sets stop
 * to the moment it clears it, so parking is "take the world lock once":
 * it returns when the world restarts. It also guards the thread list. A
 * thread makes its word SAFE before it takes `world`, or a collector could
 * wait forever for a thread that waits for it. `heap_lock` guards the heap
 * list against concurrent allocators; the collector does not take it, as
 * the stopped world is its lock (which lets TSan check the protocol). */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "refvm.h"

#define REFVM_MAGIC 0x5afe0b7u

struct refvm_obj {
    struct refvm_obj *next; /* the heap list */
    long value;
    unsigned magic;
    unsigned char marked;
};

/* A VM thread. It lives in TLS, not on the heap, because clgc keeps the
 * address of `state` for the thread's whole life once thread_state has
 * returned it, even across refvm_unregister. */
struct refvm_thread {
    int state; /* CLGC_STATE_*, read by collectors; accessed atomically */
    int registered;
    struct refvm_obj *roots[REFVM_ROOTS];
    struct refvm_thread *next; /* the thread list, under `world` */
};

static __thread struct refvm_thread self;

static pthread_mutex_t world = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct refvm_thread *threads; /* under `world` */
static struct refvm_obj *heap;       /* see the locks above */
static int stop;                     /* clgc reads it: a plain int */
static atomic_int collecting, allow_attach = 1;
static void (*_Atomic on_stopped)(void *);
static void *_Atomic on_stopped_arg;

static struct {
    atomic_ulong collections, stalls, parks, safepoint_calls, allocated, freed,
        attaches, detaches, refused, violations;
    atomic_uint threads;
} stats;

#define COUNT(counter)                                                         \
    atomic_fetch_add_explicit(&(counter), 1, memory_order_relaxed)

/* Back from SAFE to RUNNING, as clgc's leaving transition is, but with a
 * full fence between the store and the next read of stop: the VM's own
 * transitions are not on OpenCL's hot path. The fence is the seq_cst
 * store paired with refvm_park's seq_cst read (on x86 the store is an
 * xchg); atomic_thread_fence would do as well, but TSan does not model
 * fences (GCC refuses them with -Werror=tsan). */
static void
refvm_set_running(void)
{
    __atomic_store_n(&self.state, CLGC_STATE_RUNNING, __ATOMIC_SEQ_CST);
}

/* The safepoint slow path: stay parked while a collection is requested.
 * The read of stop (seq_cst, so also acquire) pairs with the collector's
 * release store of 0, so the thread sees all the collector did to the
 * heap before it runs on. */
static void
refvm_park(void)
{
    while (__atomic_load_n(&stop, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&self.state, CLGC_STATE_SAFE, __ATOMIC_RELEASE);
        COUNT(stats.parks);
        /* The collector holds `world` until the world restarts. */
        pthread_mutex_lock(&world);
        pthread_mutex_unlock(&world);
        refvm_set_running();
    }
}

void
refvm_poll(void)
{
    if (self.registered && __atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        refvm_park();
}

/* Lock the world from a thread that may be registered: SAFE first, since
 * a collector may hold the lock and wait for this very word. */
static void
refvm_world_lock(void)
{
    if (self.registered)
        __atomic_store_n(&self.state, CLGC_STATE_SAFE, __ATOMIC_RELEASE);
    pthread_mutex_lock(&world);
}

/* Unlock it and run again, parking if a collection started meanwhile. */
static void
refvm_world_unlock(void)
{
    pthread_mutex_unlock(&world);
    if (self.registered) {
        refvm_set_running();
        refvm_park();
    }
}

void
refvm_register(void)
{
    if (self.registered)
        return;
    memset(self.roots, 0, sizeof(self.roots));
    /* Not in the list yet, but it will be once the lock is taken. */
    __atomic_store_n(&self.state, CLGC_STATE_SAFE, __ATOMIC_RELEASE);
    pthread_mutex_lock(&world);
    self.next = threads;
    threads = &self;
    self.registered = 1;
    atomic_fetch_add(&stats.threads, 1);
    refvm_world_unlock();
}

void
refvm_unregister(void)
{
    struct refvm_thread **p;

    if (!self.registered)
        return;
    refvm_world_lock();
    for (p = &threads; *p != &self; p = &(*p)->next)
        ;
    *p = self.next;
    self.registered = 0;
    memset(self.roots, 0, sizeof(self.roots)); /* garbage from now on */
    atomic_fetch_sub(&stats.threads, 1);
    pthread_mutex_unlock(&world);
}

int
refvm_registered(void)
{
    return self.registered;
}

const int *
refvm_state_word(void)
{
    return &self.state;
}

/* Mutators touch the heap only while RUNNING and never while a collector
 * collects: each heap access checks both. */
static void
refvm_check_mutator(void)
{
    if (!self.registered ||
        __atomic_load_n(&self.state, __ATOMIC_RELAXED) != CLGC_STATE_RUNNING ||
        atomic_load(&collecting))
        COUNT(stats.violations);
}

void
refvm_alloc(int slot, long value)
{
    struct refvm_obj *o = malloc(sizeof(*o));

    if (o == NULL)
        abort(); /* a test fixture: no recovery worth writing */
    o->value = value;
    o->magic = REFVM_MAGIC;
    o->marked = 0;
    refvm_poll();
    refvm_check_mutator();
    pthread_mutex_lock(&heap_lock);
    o->next = heap;
    heap = o;
    pthread_mutex_unlock(&heap_lock);
    COUNT(stats.allocated);
    self.roots[slot] = o;
}

long
refvm_load(int slot)
{
    refvm_check_mutator();
    return self.roots[slot] != NULL ? self.roots[slot]->value : -1;
}

/* One pass suffices (see the top of the file). A word read as RUNNING
 * belongs to a thread in VM code, which will reach a poll. */
static void
refvm_wait_for_safe(void)
{
    for (struct refvm_thread *t = threads; t != NULL; t = t->next) {
        if (__atomic_load_n(&t->state, __ATOMIC_SEQ_CST) == CLGC_STATE_SAFE)
            continue;
        COUNT(stats.stalls);
        while (__atomic_load_n(&t->state, __ATOMIC_SEQ_CST) != CLGC_STATE_SAFE)
            sched_yield();
    }
}

/* Mark what the roots hold; returns how many objects that is. */
static unsigned long
refvm_mark(void)
{
    unsigned long marked = 0;

    for (struct refvm_thread *t = threads; t != NULL; t = t->next) {
        for (int i = 0; i < REFVM_ROOTS; i++) {
            struct refvm_obj *o = t->roots[i];

            if (o == NULL)
                continue;
            if (o->magic != REFVM_MAGIC || o->marked) {
                COUNT(stats.violations); /* freed, or held twice */
                continue;
            }
            o->marked = 1;
            marked++;
        }
    }
    return marked;
}

/* Free what is not marked; returns how many objects survive. */
static unsigned long
refvm_sweep(void)
{
    struct refvm_obj **p = &heap, *o;
    unsigned long kept = 0;

    while ((o = *p) != NULL) {
        if (o->marked) {
            o->marked = 0;
            kept++;
            p = &o->next;
        } else {
            *p = o->next;
            o->magic = 0;
            free(o);
            COUNT(stats.freed);
        }
    }
    return kept;
}

void
refvm_collect(void)
{
    void (*fn)(void *);
    unsigned long marked;

    refvm_world_lock();
    __atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
    clgc_safepoint_barrier();
    refvm_wait_for_safe();
    atomic_store(&collecting, 1);
    /* Every marked object must be found in the heap. */
    marked = refvm_mark();
    if (refvm_sweep() != marked)
        COUNT(stats.violations);
    fn = atomic_load(&on_stopped);
    if (fn != NULL)
        fn(atomic_load(&on_stopped_arg));
    atomic_store(&collecting, 0);
    COUNT(stats.collections);
    __atomic_store_n(&stop, 0, __ATOMIC_RELEASE);
    refvm_world_unlock();
}

void
refvm_on_stopped(void (*fn)(void *), void *arg)
{
    atomic_store(&on_stopped_arg, arg);
    atomic_store(&on_stopped, fn);
}

/* The clgc hooks. */

static int *
refvm_thread_state(void *data)
{
    return self.registered ? &self.state : NULL;
}

static void
refvm_safepoint(void *data)
{
    COUNT(stats.safepoint_calls);
    refvm_poll();
}

/* Foreign threads (PoCL's, or any thread the VM did not start) become
 * mutators when they first call back into the VM (clgc_call_active). */
static int
refvm_attach(void *data)
{
    if (!atomic_load(&allow_attach)) {
        COUNT(stats.refused);
        return CLGC_EATTACH;
    }
    if (self.registered)
        return CLGC_KNOWN;
    refvm_register();
    COUNT(stats.attaches);
    return CLGC_OK;
}

static void
refvm_detach(void *data)
{
    refvm_unregister();
    COUNT(stats.detaches);
}

void
refvm_runtime(clgc_runtime_t *rt)
{
    memset(rt, 0, sizeof(*rt));
    rt->version = CLGC_RUNTIME_VERSION;
    rt->name = "refvm";
    rt->attach_thread = refvm_attach;
    rt->detach_thread = refvm_detach;
    rt->thread_state = refvm_thread_state;
    rt->stop_requested = &stop;
    rt->safepoint = refvm_safepoint;
}

int
refvm_install(void)
{
    clgc_runtime_t rt;

    refvm_runtime(&rt);
    return clgc_runtime_install(&rt);
}

void
refvm_allow_attach(int allow)
{
    atomic_store(&allow_attach, allow);
}

void
refvm_stats(struct refvm_stats *out)
{
    out->collections = atomic_load(&stats.collections);
    out->stalls = atomic_load(&stats.stalls);
    out->parks = atomic_load(&stats.parks);
    out->safepoint_calls = atomic_load(&stats.safepoint_calls);
    out->allocated = atomic_load(&stats.allocated);
    out->freed = atomic_load(&stats.freed);
    out->attaches = atomic_load(&stats.attaches);
    out->detaches = atomic_load(&stats.detaches);
    out->refused = atomic_load(&stats.refused);
    out->violations = atomic_load(&stats.violations);
    out->threads = atomic_load(&stats.threads);
}
