/* A test helper extension: bdwgc's count of how often its collections
 * suspended one thread (tests/gcevents.c), for Scheme. Guile collects with
 * the same bdwgc, so a thread inside scm_without_guile (GC_do_blocking)
 * is never sent the suspend signal and its count stays 0. */

#include <libguile.h>
#include <pthread.h>

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

void
scm_init_clgc_gcwatch(void)
{
    boehm_count_suspensions();
    scm_c_define_gsubr("gc-watch-current-thread!", 0, 0, 0, watch_current);
    scm_c_define_gsubr("gc-unwatch!", 0, 0, 0, unwatch);
    scm_c_define_gsubr("gc-suspensions", 0, 0, 0, suspensions);
}
