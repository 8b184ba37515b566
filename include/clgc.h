#ifndef CLGC_H
#define CLGC_H

/* clgc: call OpenCL from managed runtimes without stalling their garbage
 * collector. Include this header; it includes the OpenCL headers and every
 * clgc topic header:
 *
 *   clgc/common.h    export macro, version, error codes
 *   clgc/runtime.h   the runtime interface: safe regions, thread attach
 *   clgc/commands.h  metadata about every OpenCL command
 *   clgc/wrappers.h  clgc_<name> for every OpenCL command (generated)
 *   clgc/wait.h      the cooperative wait, notifications, queues
 *   clgc/callback.h  OpenCL's callbacks: threads, lifetimes, errors
 *   clgc/ffi.h       closures of any signature, generic calls (libffi)
 *
 * clgc/dropin.h additionally maps every clXxx name to clgc_clXxx. */

#include "clgc/common.h"
#include "clgc/runtime.h"
#include "clgc/commands.h"
#include "clgc/wrappers.h"
#include "clgc/wait.h"
#include "clgc/callback.h"
#include "clgc/ffi.h"

#endif /* CLGC_H */
