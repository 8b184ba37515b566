#ifndef CLGC_H
#define CLGC_H

/* clgc: call OpenCL from managed runtimes without stalling their garbage
 * collector. Include this header; it includes the OpenCL headers and every
 * clgc topic header:
 *
 *   clgc/common.h    export macro, version, error codes
 *   clgc/runtime.h   the runtime interface: safe regions, thread attach
 *   clgc/commands.h  metadata about every OpenCL command
 *   clgc/names.h     error names, info queries and their types, object kinds
 *   clgc/portable.h  OpenCL the same on every version: command queues
 *   clgc/binding.h   a binding's safety: kernel argument tables
 *   clgc/wrappers.h  clgc_<name> for every OpenCL command (generated)
 *   clgc/queue.h     completion queues: work run on the owner thread
 *   clgc/wait.h      the cooperative wait, event notifications
 *   clgc/callback.h  OpenCL's callbacks: threads, lifetimes, errors
 *   clgc/ffi.h       closures of any signature, generic calls (libffi)
 *
 * clgc/dropin.h additionally maps every clXxx name to clgc_clXxx.
 *
 * How calls report errors, one convention per kind of call:
 *
 * - OpenCL-shaped calls (the clgc_cl* wrappers, clgc_wait_for_events,
 *   clgc_event_notify, clgc_event_post) return cl_int, or take a cl_int *
 *   where the OpenCL call they mirror does: OpenCL's codes, CL_SUCCESS on
 *   success.
 * - clgc's own calls return int: CLGC_OK (0) on success or a negative
 *   CLGC_E* code (clgc/common.h; clgc_strerror describes each). One that
 *   counts (clgc_queue_drain, clgc_callback_error_take) returns the count,
 *   0 or more, or a negative code. One that makes an object gives it through an
 * out-parameter (clgc_queue_create(&queue)); none returns NULL with errno.
 * Where a system call failed the code is CLGC_ESYSTEM and errno is kept. The
 * one other success value is CLGC_KNOWN (1) from clgc_thread_attach.
 * - Getters that cannot fail (clgc_queue_fd, clgc_strerror,
 *   clgc_command_find, clgc_cl_error_name, clgc_thread_attached, ...)
 *   return their value, with -1 or NULL for "none" where their comment
 *   says so; clgc_call_safe returns what its function returned.
 *
 * Every handler clgc runs (an OpenCL callback given to a clgc_cl* wrapper,
 * a notification's, a queue's, a closure's) must return: no longjmp, no
 * exception and no pthread_exit may unwind through it. The frames below it
 * (OpenCL's, when the driver calls back inline; clgc's, holding the call's
 * record, its event reference, a closure's count of running calls) are
 * never undone, and clgc does not undo part of them. A function run by
 * clgc_call_safe or clgc_call_active may end its thread: a thread clgc
 * attached is detached at its exit, inside a region or not. */

#include "clgc/common.h"
#include "clgc/runtime.h"
#include "clgc/commands.h"
#include "clgc/names.h"
#include "clgc/portable.h"
#include "clgc/binding.h"
#include "clgc/wrappers.h"
#include "clgc/queue.h"
#include "clgc/wait.h"
#include "clgc/callback.h"
#include "clgc/ffi.h"

#endif /* CLGC_H */
