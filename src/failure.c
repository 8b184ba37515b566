/* Failures of the handlers clgc runs (include/clgc/callback.h), at the
 * bottom of the library: every feature that runs a user's handler (OpenCL
 * callbacks, notifications, queue drains, closures) marks it with a frame
 * here, so that clgc_callback_fail knows what failed, and every feature that
 * returns to the runtime (a wait, a drain) hands the failures over.
 *
 * Failures are rare: a mutex-guarded list, oldest first, and a counter that
 * lets the hand-over cost one relaxed load when there are none. */

#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

/* The innermost handler clgc is running on this thread, or NULL. */
static __thread const struct clgc__running *clgc__innermost;

struct clgc__failure {
    struct clgc__failure *next;
    clgc_callback_error_t e;
};

static pthread_mutex_t clgc__failures_lock = PTHREAD_MUTEX_INITIALIZER;
static struct clgc__failure *clgc__failures,
    **clgc__failures_tail = &clgc__failures;
static atomic_uint clgc__nfailures;

void
clgc__running_push(struct clgc__running *r, const char *command)
{
    r->command = command;
    r->outer = clgc__innermost;
    clgc__innermost = r;
}

void
clgc__running_pop(struct clgc__running *r)
{
    clgc__innermost = r->outer;
}

void
clgc__record_error(const char *command, int code, void *error)
{
    struct clgc__failure *f = malloc(sizeof(*f));

    if (f == NULL)
        return; /* nowhere to say it: the failure is lost */
    *f = (struct clgc__failure){NULL, {command, code, error}};
    pthread_mutex_lock(&clgc__failures_lock);
    *clgc__failures_tail = f;
    clgc__failures_tail = &f->next;
    atomic_fetch_add(&clgc__nfailures, 1);
    pthread_mutex_unlock(&clgc__failures_lock);
}

int
clgc_callback_fail(void *error)
{
    if (clgc__innermost == NULL)
        return CLGC_EINVAL;
    clgc__record_error(clgc__innermost->command, CLGC_ECALLBACK, error);
    return CLGC_OK;
}

int
clgc_callback_error_take(clgc_callback_error_t *error)
{
    struct clgc__failure *f;

    if (error == NULL)
        return CLGC_EINVAL;
    if (atomic_load_explicit(&clgc__nfailures, memory_order_relaxed) == 0)
        return 0;
    pthread_mutex_lock(&clgc__failures_lock);
    f = clgc__failures;
    if (f != NULL) {
        clgc__failures = f->next;
        if (clgc__failures == NULL)
            clgc__failures_tail = &clgc__failures;
        atomic_fetch_sub(&clgc__nfailures, 1);
    }
    pthread_mutex_unlock(&clgc__failures_lock);
    if (f == NULL)
        return 0;
    *error = f->e;
    free(f);
    return 1;
}

void
clgc__hand_errors(void)
{
    const clgc_runtime_t *rt;
    clgc_callback_error_t e;

    if (CLGC_LIKELY(
            atomic_load_explicit(&clgc__nfailures, memory_order_relaxed) == 0))
        return;
    rt = clgc__runtime();
    if (rt->callback_failed == NULL)
        return; /* kept for clgc_callback_error_take */
    while (clgc_callback_error_take(&e) == 1)
        rt->callback_failed(&e, rt->data);
}
