/* A test helper extension: bdwgc's count of how often its collections
 * suspended one thread (tests/gcevents.c), for Scheme. Guile collects with
 * the same bdwgc, so a thread inside scm_without_guile (GC_do_blocking)
 * is never sent the suspend signal and its count stays 0. */

#include <clgc.h>
#include <libguile.h>
#include <pthread.h>
#include <time.h>

#include "../../../tests/gcevents.h"

void scm_init_clgc_gcwatch(void);

/* (gc-watch-current-thread!): count the calling thread's suspensions from
 * zero. */
static SCM
watch_current(void)
{
    boehm_watch(pthread_self());
    return SCM_UNSPECIFIED;
}

static SCM
unwatch(void)
{
    boehm_unwatch();
    return SCM_UNSPECIFIED;
}

static SCM
suspensions(void)
{
    return scm_from_ulong(boehm_suspended());
}

/* (c-launch-wait queue kernel global n): n launches of kernel on queue
 * (handles as pointers, from handle->pointer), each waited for with
 * clgc_wait_for_events, as the binding's enqueue-kernel and
 * wait-for-events do but with no Scheme between them. Returns the
 * nanoseconds they took, or #f if a call failed. For the binding's
 * benchmark (bindings/guile/bench/bench.scm). */
static SCM
c_launch_wait(SCM queue, SCM kernel, SCM global, SCM count)
{
    cl_command_queue q = SCM_POINTER_VALUE(queue);
    cl_kernel k = SCM_POINTER_VALUE(kernel);
    size_t g = scm_to_size_t(global);
    unsigned long n = scm_to_ulong(count);
    struct timespec t0, t1;
    int ok = 1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned long i = 0; i < n && ok; i++) {
        cl_event ev = NULL;

        ok = clgc_clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL,
                                         &ev) == CL_SUCCESS &&
             clgc_wait_for_events(1, &ev) == CL_SUCCESS;
        if (ev != NULL)
            clgc_clReleaseEvent(ev);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!ok)
        return SCM_BOOL_F;
    return scm_from_int64((int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 +
                          (t1.tv_nsec - t0.tv_nsec));
}

void
scm_init_clgc_gcwatch(void)
{
    scm_c_define_gsubr("c-launch-wait", 4, 0, 0, c_launch_wait);
    boehm_count_suspensions();
    scm_c_define_gsubr("gc-watch-current-thread!", 0, 0, 0, watch_current);
    scm_c_define_gsubr("gc-unwatch!", 0, 0, 0, unwatch);
    scm_c_define_gsubr("gc-suspensions", 0, 0, 0, suspensions);
}
