/* The count of a thread's suspensions by bdwgc (gcevents.h). */

#include "gcevents.h"

/* Threads are registered explicitly everywhere this is used. */
#define GC_THREADS 1
#define GC_NO_THREAD_REDIRECTS 1
#include <gc/gc.h>

#include <stdatomic.h>
#include <stdint.h>

_Static_assert(sizeof(pthread_t) <= sizeof(unsigned long),
               "bdwgc names a thread by its pthread_t in its events");

/* The thread whose suspensions are counted, or 0 for none. */
static atomic_ulong boehm_watched;
static atomic_ulong boehm_suspensions;

/* bdwgc calls this on the collecting thread, with its lock held and the
 * world partly stopped, once for each thread it sends the suspend signal
 * to: threads inside GC_do_blocking get none. */
static void GC_CALLBACK
boehm_on_thread_event(GC_EventType event, void *thread_id)
{
    unsigned long watched = atomic_load(&boehm_watched);

    if (event == GC_EVENT_THREAD_SUSPENDED && watched != 0 &&
        (unsigned long)(uintptr_t)thread_id == watched)
        atomic_fetch_add(&boehm_suspensions, 1);
}

void
boehm_count_suspensions(void)
{
    GC_set_on_thread_event(boehm_on_thread_event);
}

void
boehm_watch(pthread_t thread)
{
    atomic_store(&boehm_watched, 0);
    atomic_store(&boehm_suspensions, 0);
    atomic_store(&boehm_watched, (unsigned long)thread);
}

void
boehm_unwatch(void)
{
    atomic_store(&boehm_watched, 0);
}

unsigned long
boehm_suspended(void)
{
    return atomic_load(&boehm_suspensions);
}
