#ifndef CLGC_TESTS_GCEVENTS_H
#define CLGC_TESTS_GCEVENTS_H

/* bdwgc's own account of which threads its collections stop, for the tests
 * (tests/check_boehm*.c) and clgc-demo: a count of how often one watched
 * thread was sent the suspend signal. A thread inside a safe region (inside
 * GC_do_blocking) gets none, so the count shows whether clgc put a thread
 * there, without any timing. Built only with bdwgc. */

#include <pthread.h>

/* Has bdwgc report thread events to the counter (GC_set_on_thread_event).
 * Call after GC_INIT(), on any thread; nothing is counted until
 * boehm_watch. */
void boehm_count_suspensions(void);

/* Counts the suspensions of `thread` from zero, and no other thread's.
 * Any thread. */
void boehm_watch(pthread_t thread);

/* Stops counting; the count stays as it is. Any thread. */
void boehm_unwatch(void);

/* How many times bdwgc has suspended the watched thread since
 * boehm_watch. Any thread. */
unsigned long boehm_suspended(void);

#endif /* CLGC_TESTS_GCEVENTS_H */
