#ifndef CLGC_DRIVER_H
#define CLGC_DRIVER_H

/* What clgc learns of each platform's driver (src/driver.c): whether its
 * completion callbacks come late, and whether its own clWaitForEvents
 * sleeps; the waits (wait.c) and the watcher (watch.c) ask it how to wait,
 * and tell it what they saw. A service below both. */

#include "internal.h"

/* What clgc learns of each platform's callbacks (driver.c): the index of
 * an object's platform (0 for an unknown one), whether its events are
 * polled (the strategy, or what was learned), and the samples that teach
 * it. A key names what polled (a wait's handle, a watch's id), as its
 * callbacks' user_data does. Any thread; nothing allocates. */
int clgc__driver_of(const void *object);
/* 0: its events are waited for by callback; 1: polled (learned late, or
 * CLGC_WAIT_BACKOFF); 2: polled while it is learned. */
int clgc__driver_polls(int platform);
/* Whether this wait, on a platform learned prompt, should poll as while
 * it is learned, so that the platform is still sampled (one wait in
 * CLGC__RESAMPLE_EVERY). */
int clgc__driver_resample(int platform);
/* How late a callback may come and still be prompt. */
#define CLGC__LATE_NS 1000000L
/* A sample: callbacks this late (0: one came before the poller's own look
 * saw its events done; CLGC__LATE_NS: at least that late). */
void clgc__driver_lateness(int platform, long lateness);
/* A poller's look saw the events of key complete before their callback. */
void clgc__driver_probe(int platform, uintptr_t key);
/* key's callback came (after its poller returned, or not). */
void clgc__driver_called(int platform, uintptr_t key);
/* A late platform's own clWaitForEvents: CLGC_WAIT_OWN_USED if the
 * synchronous waits should use it, _LEARNING if a wait should sample it,
 * _AVOIDED otherwise (also when the platform is not learned late, or the
 * strategy is forced). */
int clgc__driver_own(int platform);
/* A sample: a wait in it took wall ns, busy ns of them with the thread
 * runnable (on a CPU or waiting for one). */
void clgc__driver_own_sample(int platform, long wall, long busy);
void clgc__driver_info(int platform, clgc_wait_driver_info_t *info);
void clgc__strategy_set(clgc_wait_strategy_t strategy);

#endif /* CLGC_DRIVER_H */
