#ifndef CLGC_REFVM_H
#define CLGC_REFVM_H

/* refvm: the reference VM for clgc's safepoint form. It is the smallest VM
 * that stops the world cooperatively the way HotSpot, ART or a Go-style
 * runtime does, and it exists to show a VM author what clgc expects:
 *
 * - every VM thread owns an int state word, CLGC_STATE_RUNNING while it
 *   may touch the heap and CLGC_STATE_SAFE while it promises not to;
 * - one global stop flag asks running threads to park at their next
 *   safepoint poll;
 * - the collector sets the flag, calls clgc_safepoint_barrier(), waits
 *   until every other thread's word reads SAFE, collects, and restarts the
 *   world.
 *
 * clgc stores SAFE into the word when a thread enters a clgc_cl* wrapper
 * and RUNNING when it leaves; if the stop flag is set as it leaves, it
 * calls the VM's safepoint hook, which parks the thread. A thread blocked
 * in OpenCL therefore never delays a collection.
 *
 * The heap is a list of small objects. A thread keeps an object alive only
 * by holding it in one of its REFVM_ROOTS root slots; the collector marks
 * the objects in the slots of registered threads and frees the rest.
 *
 * The tests (tests/check_safepoint*.c) and clgc-bench gc use it. It is a
 * test fixture, not part of the library. */

#include "clgc.h"

/* Root slots per thread. */
#define REFVM_ROOTS 8

/* Install the VM as clgc's runtime (the safepoint form). Returns
 * clgc_runtime_install()'s code. Call once per process, before any other
 * clgc call that crosses the boundary. */
int refvm_install(void);

/* Fill *rt with the VM's runtime description, for tests that install a
 * variant of it (or a broken one). */
void refvm_runtime(clgc_runtime_t *rt);

/* Whether the attach_thread hook accepts foreign threads (1, the default)
 * or refuses them (0), for bad-input tests. */
void refvm_allow_attach(int allow);

/* Register the calling thread as a mutator; it starts RUNNING. It must
 * call refvm_unregister() before it exits. Registering a registered thread
 * does nothing. May wait for a collection in progress to finish. */
void refvm_register(void);

/* Unregister the calling thread; its roots are dropped. Outside any clgc
 * region. May wait for a collection in progress to finish. */
void refvm_unregister(void);

/* 1 if the calling thread is registered. */
int refvm_registered(void);

/* The calling thread's state word (whether or not it is registered): the
 * word clgc stores into. Tests read it to see what the collector sees. */
const int *refvm_state_word(void);

/* The safepoint poll: park here if a collection is requested, until it
 * is done. A registered thread calls it often while it runs VM code (the
 * VM's compiler would put it on loop back-edges). */
void refvm_poll(void);

/* Allocate an object holding `value` and keep it in root slot `slot`
 * (0 <= slot < REFVM_ROOTS), dropping what the slot held. Polls first.
 * Registered threads only. */
void refvm_alloc(int slot, long value);

/* The value of the object in root slot `slot`, or -1 if the slot is
 * empty. Registered threads only. */
long refvm_load(int slot);

/* Stop the world, collect, restart it; returns when the collection is
 * done. Any thread: a registered caller counts as stopped meanwhile (so
 * two threads may collect at once; they take turns). Never call it inside
 * a clgc region. */
void refvm_collect(void);

/* Have the collector call fn(arg) in every collection, after collecting
 * and before restarting the world (NULL: none). fn runs on the collecting
 * thread while every registered thread is stopped; it must not call the
 * VM. For tests that need to act at a known point of a collection. */
void refvm_on_stopped(void (*fn)(void *), void *arg);

/* The VM's counters since the process started. */
struct refvm_stats {
    unsigned long collections; /* completed */
    unsigned long stalls;      /* times a collector waited on a RUNNING word */
    unsigned long parks;       /* times a thread parked at a safepoint */
    unsigned long safepoint_calls; /* times clgc called the safepoint hook */
    unsigned long allocated, freed;
    unsigned long attaches, detaches, refused; /* the clgc hooks */
    unsigned long violations; /* broken invariants: must stay 0 */
    unsigned threads;         /* registered now */
};
void refvm_stats(struct refvm_stats *out);

#endif /* CLGC_REFVM_H */
