#ifndef CLGC_BOEHM_H
#define CLGC_BOEHM_H

/* The Boehm GC (bdwgc) adapter: libclgc-boehm, `pkg-config clgc-boehm`.
 *
 * What the embedding program must do (docs/boehm.md says why):
 * - build with bdwgc's thread support and call GC_INIT() on the main
 *   thread before clgc_boehm_install();
 * - before GC_INIT(), move bdwgc's restart signal off SIGXCPU
 *   (GC_set_thr_restart_signal(SIGRTMIN + 2)): LLVM, inside PoCL, answers
 *   SIGXCPU during a build by deleting its temporary files;
 * - keep every collectable object it hands to OpenCL (a host buffer, the
 *   user_data of a raw cl* call, a closure's data) reachable from memory
 *   the collector scans: PoCL's threads are never scanned. The data
 *   pointers given to clgc's own calls (clgc_event_notify, clgc_event_post,
 *   clgc_queue_post, the callback-taking wrappers) need no root: clgc's
 *   records that hold them are uncollectable, until the handler has run;
 * - not let a finalizer release an OpenCL object on PoCL's threads (use
 *   GC_set_finalize_on_demand(1) and run finalizers on a thread of its
 *   own), since a release can wait for work queued on PoCL's thread. */

#include "clgc/runtime.h"

CLGC_BEGIN_DECLS

/* Install bdwgc as clgc's runtime: safe regions through GC_do_blocking,
 * re-entry through GC_call_with_gc_active. A thread that bdwgc does not
 * know (PoCL's) is registered with GC_register_my_thread the first time it
 * enters the runtime (clgc_call_active or clgc_thread_attach), stays
 * registered, and is unregistered when it exits. clgc's records that hold
 * a program's data pointer are GC_malloc_uncollectable'd (on a registered
 * thread, with bdwgc active) and GC_free'd (on any thread), so bdwgc keeps
 * the data until its handler has run; on a thread bdwgc does not know,
 * clgc uses malloc for them instead. flags are CLGC_RUNTIME_*:
 * CLGC_RUNTIME_SKIP_NONBLOCKING runs the calls that never block outside
 * any region, which saves GC_do_blocking's cost (a few hundred ns, serialised
 * on the allocator lock) on cheap calls.
 *
 * Call it once, on a thread registered with bdwgc, after GC_INIT() and
 * before any other clgc call; it calls GC_allow_register_threads().
 * Returns clgc_runtime_install()'s codes. */
CLGC_EXTERN int clgc_boehm_install(unsigned flags);

CLGC_END_DECLS

#endif /* CLGC_BOEHM_H */
