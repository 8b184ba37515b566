#ifndef CLGC_TESTS_LATECB_H
#define CLGC_TESTS_LATECB_H

/* A late-callback driver over the real one, for the tests and clgc-bench:
 * it defines clSetEventCallback, which libclgc's calls reach before the
 * ICD loader's (the dynamic linker binds them to the first definition: a
 * program linked with tests/latecb.c, or tests/liblatecb.so preloaded
 * with LD_PRELOAD), registers a trampoline of its own with the real one
 * (dlsym(RTLD_NEXT)), and delivers each callback from a thread of its own
 * some time after the driver called the trampoline, as NVIDIA's OpenCL
 * does 10 to 20 ms after the command completes. The status the command
 * reaches is the driver's, on time: only the callbacks are late.
 *
 * The delay is CLGC_TEST_LATE_CALLBACK_MS milliseconds (read at the first
 * registration; 0 or unset: the callbacks pass through untouched), or
 * what latecb_set_ms sets. Callbacks are delivered in the order the driver
 * made them, each with a reference to its event held until it returns. */

/* The delay of the callbacks the driver makes from now on: ms > 0 delays
 * them that long; 0 passes later registrations through untouched; ms < 0
 * holds them until latecb_release. Any thread. */
void latecb_set_ms(long ms);

/* With a delay ms > 0, delay only the callbacks of commands that end at
 * least us microseconds after their registration, and make the others at
 * once (0: delay them all, the default), as NVIDIA calls back promptly
 * for short commands and late for those of a millisecond.
 * CLGC_TEST_LATE_SPLIT_US sets it at the first registration. Any
 * thread. */
void latecb_set_split_us(long us);

/* Instead of a fixed delay (latecb_set_ms(0) first), percent > 0 delays
 * each callback by that share of how long its command took from the
 * registration to the driver's callback: late for the command, however
 * long it ran, as NVIDIA's saxpy callbacks are (0: off). Any thread. */
void latecb_set_share(long percent);

/* How many callbacks the driver has made that are not delivered yet, how
 * many registrations it has not called back for yet, and how many
 * callbacks were delivered late. Any thread. */
long latecb_held(void);
long latecb_unmade(void);
long latecb_delivered(void);

/* Deliver every callback the driver has made, now, and return once they
 * have returned. Not from a callback. */
void latecb_release(void);

/* Whether clWaitForEvents busy-waits, as NVIDIA's does (a waiter's CPU
 * equals its wall time), rather than sleeping in the driver's, as PoCL's
 * does: the vehicle defines clWaitForEvents too, which with busy != 0
 * flushes the events' queues and reads their status until every one is
 * complete or failed. CLGC_TEST_LATE_BUSY_WAIT=1 sets it at the first
 * registration or wait. Any thread. */
void latecb_set_busy_wait(int busy);

/* Whether clWaitForEvents first sets every user event in its list to
 * CL_COMPLETE (those not set yet), so that a wait handed to it ends at
 * once: too soon for clgc to tell whether the driver's wait sleeps or
 * spins. Off until set. Any thread. */
void latecb_set_wait_completes(int completes);

/* How many threads are inside clWaitForEvents now. Any thread. */
long latecb_waiting(void);

#endif /* CLGC_TESTS_LATECB_H */
