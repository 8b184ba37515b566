/* The runtime in force and the per-thread state behind clgc/runtime.h.
 *
 * The runtime pointer is written once: by clgc_runtime_install() or, if
 * something crosses the boundary first, by clgc__rt_fix() with the no-op
 * runtime. After that it never changes, so the hot path is one acquire load
 * (a plain load on x86) and a predictable branch. */

#include <pthread.h>
#include <string.h>

#include "internal.h"

__thread struct clgc__thread clgc__self
    __attribute__((tls_model("initial-exec")));

_Atomic(const clgc_runtime_t *) clgc__rt;
atomic_int clgc__hookless;

static const clgc_runtime_t clgc__none = {.version = CLGC_RUNTIME_VERSION,
                                          .name = "none"};
static clgc_runtime_t clgc__installed;
static pthread_mutex_t clgc__install_lock = PTHREAD_MUTEX_INITIALIZER;

/* Detaches a thread that exits while attached. */
static pthread_key_t clgc__exit_key;
static pthread_once_t clgc__exit_once = PTHREAD_ONCE_INIT;

/* Publish rt as the runtime in force; the install lock is held. */
static void
clgc__rt_set(const clgc_runtime_t *rt)
{
    atomic_store_explicit(&clgc__rt, rt, memory_order_release);
    atomic_store_explicit(&clgc__hookless, rt->safe_region == NULL,
                          memory_order_release);
}

const clgc_runtime_t *
clgc__rt_fix(void)
{
    const clgc_runtime_t *rt;

    pthread_mutex_lock(&clgc__install_lock);
    rt = atomic_load_explicit(&clgc__rt, memory_order_relaxed);
    if (rt == NULL) {
        rt = &clgc__none;
        clgc__rt_set(rt);
    }
    pthread_mutex_unlock(&clgc__install_lock);
    return rt;
}

int
clgc_runtime_install(const clgc_runtime_t *rt)
{
    const clgc_runtime_t *now;
    int err = CLGC_OK;

    if (rt == NULL)
        return CLGC_EINVAL;
    if (rt->version < 1 || rt->version > CLGC_RUNTIME_VERSION)
        return CLGC_EVERSION;
    pthread_mutex_lock(&clgc__install_lock);
    now = atomic_load_explicit(&clgc__rt, memory_order_relaxed);
    if (now == &clgc__none) {
        err = CLGC_EINUSE;
    } else if (now != NULL) {
        err = CLGC_EALREADY;
    } else {
        /* Version 1 is the whole struct. A later version will copy only
         * the fields its caller's version has. */
        memcpy(&clgc__installed, rt, sizeof(clgc__installed));
        clgc__rt_set(&clgc__installed);
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

void *
clgc_call_safe(clgc_fn_t fn, void *arg)
{
    return clgc__safe(fn, arg);
}

void *
clgc_call_active(clgc_fn_t fn, void *arg)
{
    const clgc_runtime_t *rt = clgc__runtime();
    struct clgc__thread *t = &clgc__self;
    unsigned outer = t->region;
    void *result;

    if (!(outer & CLGC__SAFE))
        return fn(arg);
    t->region = outer & ~CLGC__SAFE;
    result = rt->active_region != NULL ? rt->active_region(fn, arg) : fn(arg);
    t->region = outer;
    return result;
}

static void
clgc__exit_detach(void *unused)
{
    const clgc_runtime_t *rt = clgc__runtime();

    (void)unused;
    if (clgc__self.attached && rt->detach_thread != NULL)
        rt->detach_thread(rt->data);
    clgc__self.attached = 0;
}

static void
clgc__exit_key_create(void)
{
    /* Without the key an exiting thread would stay attached, which for
     * bdwgc means a dead stack it keeps scanning: nothing sensible to do
     * but report ENOMEM from attach below. */
    if (pthread_key_create(&clgc__exit_key, clgc__exit_detach) != 0)
        clgc__exit_key = (pthread_key_t)-1;
}

int
clgc_thread_attach(void)
{
    const clgc_runtime_t *rt = clgc__runtime();
    int err = CLGC_OK;

    if (clgc__self.attached)
        return CLGC_OK;
    pthread_once(&clgc__exit_once, clgc__exit_key_create);
    if (clgc__exit_key == (pthread_key_t)-1)
        return CLGC_ENOMEM;
    if (rt->attach_thread != NULL)
        err = rt->attach_thread(rt->data);
    if (err > 0)
        err = CLGC_EATTACH;
    if (err != CLGC_OK)
        return err;
    /* Any non-NULL value makes the destructor run at thread exit. */
    if (pthread_setspecific(clgc__exit_key, &clgc__self) != 0) {
        if (rt->detach_thread != NULL)
            rt->detach_thread(rt->data);
        return CLGC_ENOMEM;
    }
    clgc__self.attached = 1;
    return CLGC_OK;
}

int
clgc_thread_detach(void)
{
    const clgc_runtime_t *rt = clgc__runtime();

    if (!clgc__self.attached)
        return CLGC_ENOTATTACHED;
    if (clgc__self.region != 0)
        return CLGC_EINVAL;
    pthread_setspecific(clgc__exit_key, NULL);
    if (rt->detach_thread != NULL)
        rt->detach_thread(rt->data);
    clgc__self.attached = 0;
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
    return clgc__self.region / CLGC__DEPTH_ONE;
}

int
clgc_thread_in_region(void)
{
    return (int)(clgc__self.region & CLGC__SAFE);
}
