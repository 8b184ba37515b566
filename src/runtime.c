/* The runtime in force and the per-thread state behind clgc/runtime.h.
 *
 * The runtime pointer is written once: by clgc_runtime_install() or, if
 * something crosses the boundary first, by clgc__rt_fix() with the no-op
 * runtime. After that it never changes.
 *
 * A thread's first crossing sets it up (clgc__thread_setup): for the no-op
 * runtime and the safepoint form it gets a state word, and from then on
 * every wrapper makes its transitions inline (internal.h); for the
 * callback form it does not, and every crossing comes here. */

#include <linux/membarrier.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

__thread struct clgc__thread clgc__self
    __attribute__((tls_model("initial-exec"))) = {.region = CLGC__SLOW};

_Atomic(const clgc_runtime_t *) clgc__rt;
atomic_int clgc__full_fence;
#ifdef __SANITIZE_THREAD__
int clgc__fence_word;
#endif
atomic_int clgc__skip_nonblocking;

static const clgc_runtime_t clgc__none = {.version = CLGC_RUNTIME_VERSION,
                                          .name = "none"};
static clgc_runtime_t clgc__installed;
static pthread_mutex_t clgc__install_lock = PTHREAD_MUTEX_INITIALIZER;

/* The word threads without a runtime-owned one poll: never set. */
static const int clgc__never_stop;

/* How much of a clgc_runtime_t each version has. */
static const size_t clgc__runtime_size[CLGC_RUNTIME_VERSION + 1] = {
    0, offsetof(clgc_runtime_t, flags),
    offsetof(clgc_runtime_t, callback_failed),
    offsetof(clgc_runtime_t, record_alloc), sizeof(clgc_runtime_t)};

/* Detaches a thread that exits while attached. */
static pthread_key_t clgc__exit_key;
static pthread_once_t clgc__exit_once = PTHREAD_ONCE_INIT;

const clgc_runtime_t *
clgc__rt_fix(void)
{
    const clgc_runtime_t *rt;

    pthread_mutex_lock(&clgc__install_lock);
    rt = atomic_load_explicit(&clgc__rt, memory_order_relaxed);
    if (rt == NULL) {
        rt = &clgc__none;
        atomic_store_explicit(&clgc__rt, rt, memory_order_release);
    }
    pthread_mutex_unlock(&clgc__install_lock);
    return rt;
}

static int
clgc__safepoint_form(const clgc_runtime_t *rt)
{
    return rt->thread_state != NULL || rt->stop_requested != NULL ||
           rt->safepoint != NULL;
}

/* The forms exclude each other, the safepoint form is all or nothing, and
 * so are the record hooks: a record is freed by the allocator that made
 * it. */
static int
clgc__runtime_valid(const clgc_runtime_t *rt)
{
    if ((rt->record_alloc == NULL) != (rt->record_free == NULL))
        return 0;
    if (!clgc__safepoint_form(rt))
        return 1;
    return rt->thread_state != NULL && rt->stop_requested != NULL &&
           rt->safepoint != NULL && rt->safe_region == NULL &&
           rt->active_region == NULL && rt->thread_known == NULL;
}

/* membarrier lets the collector supply the fence the leaving transition
 * omits; without it every leaving transition pays for a fence. */
static void
clgc__barrier_setup(void)
{
    long ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
                      0, 0);

    atomic_store_explicit(&clgc__full_fence, ok != 0, memory_order_relaxed);
}

int
clgc_runtime_install(const clgc_runtime_t *rt)
{
    const clgc_runtime_t *now;
    clgc_runtime_t copy;
    int err = CLGC_OK;

    if (rt == NULL)
        return CLGC_EINVAL;
    if (rt->version < 1 || rt->version > CLGC_RUNTIME_VERSION)
        return CLGC_EVERSION;
    /* Fields past the caller's version stay zero: absent. */
    memset(&copy, 0, sizeof(copy));
    memcpy(&copy, rt, clgc__runtime_size[rt->version]);
    if (!clgc__runtime_valid(&copy))
        return CLGC_EINVAL;
    pthread_mutex_lock(&clgc__install_lock);
    now = atomic_load_explicit(&clgc__rt, memory_order_relaxed);
    if (now == &clgc__none) {
        err = CLGC_EINUSE;
    } else if (now != NULL) {
        err = CLGC_EALREADY;
    } else {
        clgc__installed = copy;
        if (clgc__safepoint_form(&copy))
            clgc__barrier_setup();
        atomic_store_explicit(&clgc__skip_nonblocking,
                              (copy.flags & CLGC_RUNTIME_SKIP_NONBLOCKING) &&
                                  copy.safe_region != NULL,
                              memory_order_relaxed);
        atomic_store_explicit(&clgc__rt, &clgc__installed,
                              memory_order_release);
    }
    pthread_mutex_unlock(&clgc__install_lock);
    return err;
}

const clgc_runtime_t *
clgc_runtime_current(void)
{
    return clgc__runtime();
}

void *
clgc_runtime_data(void)
{
    return clgc__runtime()->data;
}

void
clgc_safepoint_barrier(void)
{
    if (atomic_load_explicit(&clgc__full_fence, memory_order_relaxed) ||
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        clgc__fence();
}

void
clgc__safepoint_slow(void)
{
    const clgc_runtime_t *rt = clgc__runtime();

    if (rt->safepoint != NULL)
        rt->safepoint(rt->data);
}

/* A fast wrapper's leaving transition found stop set: it is out of the
 * region as far as the collector is concerned (RUNNING), but still counts
 * it in `region` until it returns; the safepoint runs as it would from
 * clgc__leave_inline, outside. */
void
clgc__fast_safepoint(void)
{
    clgc__safepoint_slow();
}

/* Whether the runtime knows the calling thread; the inline forms also get
 * their state word here. Asked until the answer is yes. */
static int
clgc__thread_setup(struct clgc__thread *t, const clgc_runtime_t *rt)
{
    if (t->state != NULL || (t->known && rt->safe_region != NULL))
        return 1;
    CLGC_ASSERT(t->region & CLGC__SLOW);
    if (rt->thread_state != NULL) {
        t->state = rt->thread_state(rt->data);
        t->stop = rt->stop_requested;
    } else if (rt->safe_region == NULL) {
        t->state = &t->own_state;
        t->stop = &clgc__never_stop;
    } else {
        t->known = t->attached || rt->thread_known == NULL ||
                   rt->thread_known(rt->data);
        return t->known;
    }
    /* The fast transitions have no fence: without membarrier the thread
     * keeps to clgc__leave_inline, which has one. clgc__full_fence was
     * set before the runtime was published (clgc_runtime_install). */
    if (t->state != NULL &&
        !atomic_load_explicit(&clgc__full_fence, memory_order_relaxed))
        t->region &= ~CLGC__SLOW;
    t->known = t->state != NULL;
    return t->known;
}

#ifdef CLGC_DEBUG
/* Checks that a safe_region hook ran fn exactly once and returned. */
struct clgc__counted {
    clgc_fn_t fn;
    void *arg;
    int runs;
};

static void *
clgc__count_run(void *p)
{
    struct clgc__counted *c = p;

    c->runs++;
    return c->fn(c->arg);
}
#endif

static void *
clgc__callback_region(const clgc_runtime_t *rt, clgc_fn_t fn, void *arg)
{
#ifdef CLGC_DEBUG
    struct clgc__counted c = {fn, arg, 0};
    void *result = rt->safe_region(clgc__count_run, &c);

    CLGC_ASSERT(c.runs == 1 && "the safe_region hook must call fn once");
    return result;
#else
    return rt->safe_region(fn, arg);
#endif
}

void *
clgc_call_safe(clgc_fn_t fn, void *arg)
{
    const clgc_runtime_t *rt = clgc__runtime();
    struct clgc__thread *t = &clgc__self;
    unsigned outer;
    void *result;

    if (!clgc__thread_setup(t, rt))
        return fn(arg); /* the collector does not wait for this thread */
    if (t->state != NULL) {
        outer = clgc__enter_inline(t);
        result = fn(arg);
        clgc__leave_inline(t, outer);
        return result;
    }
    outer = t->region;
    t->region = (outer + CLGC__DEPTH_ONE) | CLGC__SAFE;
    result = clgc__callback_region(rt, fn, arg);
    CLGC_ASSERT(t->region == ((outer + CLGC__DEPTH_ONE) | CLGC__SAFE));
    t->region = outer;
    return result;
}

int
clgc_call_active(clgc_fn_t fn, void *arg, void **result)
{
    const clgc_runtime_t *rt = clgc__runtime();
    struct clgc__thread *t = &clgc__self;
    unsigned outer = t->region;
    void *r;

    if (!(outer & CLGC__SAFE)) {
        int native = 0, err;

        /* A thread the runtime does not know (PoCL's, say) is attached on
         * its first entry and stays attached until it exits. */
        if (!clgc__thread_setup(t, rt)) {
            err = rt->attach_thread != NULL ? clgc_thread_attach()
                                            : CLGC_ENOTATTACHED;
            if (err < 0 || !clgc__thread_setup(t, rt))
                return CLGC_ENOTATTACHED;
            native = err == CLGC_OK;
        }
        outer = t->region; /* the setup may have cleared CLGC__SLOW */
        /* With a state word, a thread in native code (attached just now,
         * or whose word is SAFE outside any region: back from an earlier
         * call) leaves it for fn as a wrapper leaves its region, and goes
         * back to it after. PoCL's thread blocks in PoCL between
         * callbacks: were its word left RUNNING, the next collection
         * would wait for it for ever. If fn detached the thread, its word
         * is no longer clgc's to store into. */
        if (t->state != NULL &&
            (native ||
             __atomic_load_n(t->state, __ATOMIC_RELAXED) == CLGC_STATE_SAFE)) {
            clgc__leave_inline(t, outer);
            r = fn(arg);
            if (t->state != NULL)
                __atomic_store_n(t->state, CLGC_STATE_SAFE, __ATOMIC_RELEASE);
        } else {
            r = fn(arg);
        }
    } else if (t->state != NULL) {
        /* Leave the region as a wrapper would, safepoint poll included,
         * and enter it again after fn. */
        t->region = outer & ~CLGC__SAFE;
        clgc__leave_inline(t, outer & ~CLGC__SAFE);
        r = fn(arg);
        __atomic_store_n(t->state, CLGC_STATE_SAFE, __ATOMIC_RELEASE);
        t->region = outer;
    } else {
        t->region = outer & ~CLGC__SAFE;
        r = rt->active_region != NULL ? rt->active_region(fn, arg) : fn(arg);
        t->region = outer;
    }
    if (result != NULL)
        *result = r;
    return CLGC_OK;
}

/* Forget what the thread's setup found, so that its next crossing asks
 * the runtime again. */
static void
clgc__thread_reset(struct clgc__thread *t)
{
    t->region |= CLGC__SLOW;
    t->state = NULL;
    t->stop = NULL;
    t->known = 0;
    t->attached = 0;
}

/* An attached thread exits. It may exit inside a safe region (pthread_exit
 * in a function clgc_call_safe runs, or in one clgc_call_active runs from
 * there): the exit skipped the ends of the regions, the runtime's hooks'
 * included. It leaves clgc's regions first, so that
 * detach_thread, as from clgc_thread_detach, finds the thread outside any
 * region and anything it asks clgc agrees. In the safepoint form the word
 * keeps its value: SAFE, as a native thread's between callbacks, or
 * RUNNING inside an active region, as a thread's that detaches itself. */
static void
clgc__exit_detach(void *unused)
{
    const clgc_runtime_t *rt = clgc__runtime();
    struct clgc__thread *t = &clgc__self;

    (void)unused;
    t->region = CLGC__SLOW;
    if (t->attached && rt->detach_thread != NULL)
        rt->detach_thread(rt->data);
    clgc__thread_reset(t);
}

static void
clgc__exit_key_create(void)
{
    /* Without the key an exiting thread would stay attached, which for
     * bdwgc means a dead stack it keeps scanning: attach reports ENOMEM. */
    if (pthread_key_create(&clgc__exit_key, clgc__exit_detach) != 0)
        clgc__exit_key = (pthread_key_t)-1;
}

int
clgc_thread_attach(void)
{
    const clgc_runtime_t *rt = clgc__runtime();
    struct clgc__thread *t = &clgc__self;
    int err = CLGC_OK;

    if (t->attached)
        return CLGC_OK;
    pthread_once(&clgc__exit_once, clgc__exit_key_create);
    if (clgc__exit_key == (pthread_key_t)-1)
        return CLGC_ENOMEM;
    if (rt->attach_thread != NULL)
        err = rt->attach_thread(rt->data);
    if (err == CLGC_KNOWN) {
        clgc__thread_reset(t);
        t->known = 1;
        return CLGC_KNOWN;
    }
    if (err > 0)
        err = CLGC_EATTACH;
    if (err != CLGC_OK)
        return err;
    /* Any non-NULL value makes the destructor run at thread exit. */
    if (pthread_setspecific(clgc__exit_key, t) != 0) {
        if (rt->detach_thread != NULL)
            rt->detach_thread(rt->data);
        return CLGC_ENOMEM;
    }
    /* The runtime may have a state word for the thread now. */
    clgc__thread_reset(t);
    t->attached = 1;
    t->known = 1;
    return CLGC_OK;
}

int
clgc_thread_detach(void)
{
    const clgc_runtime_t *rt = clgc__runtime();
    struct clgc__thread *t = &clgc__self;

    if (!t->attached)
        return CLGC_ENOTATTACHED;
    if ((t->region & ~CLGC__SLOW) != 0)
        return CLGC_EINVAL;
    pthread_setspecific(clgc__exit_key, NULL);
    if (rt->detach_thread != NULL)
        rt->detach_thread(rt->data);
    clgc__thread_reset(t);
    return CLGC_OK;
}

int
clgc_thread_attached(void)
{
    return clgc__self.attached;
}

unsigned
clgc_thread_region_depth(void)
{
    return (clgc__self.region & ~CLGC__SLOW) / CLGC__DEPTH_ONE;
}

int
clgc_thread_in_region(void)
{
    return (int)(clgc__self.region & CLGC__SAFE);
}

/* With record hooks, each record starts with a header that says which
 * allocator made it: the runtime's, or malloc for a record made on a
 * thread the runtime does not know. The header keeps the record aligned
 * as max_align_t. */
union clgc__record_header {
    int from_runtime;
    max_align_t align;
};

struct clgc__record_request {
    const clgc_runtime_t *rt;
    size_t size;
};

static void *
clgc__record_alloc_active(void *p)
{
    const struct clgc__record_request *r = p;

    return r->rt->record_alloc(r->size, r->rt->data);
}

void *
clgc__record_alloc(size_t size)
{
    const clgc_runtime_t *rt = clgc__runtime();
    struct clgc__thread *t = &clgc__self;
    struct clgc__record_request r = {rt, 0};
    union clgc__record_header *h;
    void *mem = NULL;
    int from_runtime;

    if (CLGC_LIKELY(rt->record_alloc == NULL))
        return malloc(size);
    if (size > (size_t)-1 - sizeof(*h))
        return NULL;
    r.size = sizeof(*h) + size;
    /* Inside a region the thread is known (regions are entered only on
     * known threads); outside one, ask without attaching: a thread the
     * runtime does not know gets a malloc'd record, as its wrappers run
     * outside any region and attach nothing. */
    from_runtime = (t->region & CLGC__SAFE) || clgc__thread_setup(t, rt);
    if (!from_runtime)
        mem = malloc(r.size);
    else if (clgc_call_active(clgc__record_alloc_active, &r, &mem) != CLGC_OK)
        mem = NULL;
    if (mem == NULL)
        return NULL;
    h = mem;
    h->from_runtime = from_runtime;
    return h + 1;
}

void
clgc__record_free(void *record)
{
    const clgc_runtime_t *rt = clgc__runtime();
    union clgc__record_header *h;

    if (record == NULL)
        return;
    if (CLGC_LIKELY(rt->record_free == NULL)) {
        free(record);
        return;
    }
    h = (union clgc__record_header *)record - 1;
    if (h->from_runtime)
        rt->record_free(h, rt->data);
    else
        free(h);
}
