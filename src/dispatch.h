#ifndef CLGC_DISPATCH_H
#define CLGC_DISPATCH_H

/* libclgc's side of the OpenCL layer (docs/layer.md): the layer's dispatch
 * table lives in libclgc (src/dispatch.c, and the generated entries in
 * src/gen/layer.c), so that its entries are the wrappers themselves, with
 * their inline transitions, object checks and callback trampolines;
 * libclgc-layer (src/layer.c) only answers the loader and chooses the
 * runtime. */

#include "internal.h"
#include "layer.h"

/* The next layer's or the driver's table, as clInitLayer received it (the
 * slots past the count it gave are NULL): the layer's entries call
 * through it, never through the loader, which would come back to them. */
extern struct _cl_icd_dispatch clgc__next;

/* Set (release) once clgc__next is filled: the loader now hands every
 * call to the layer first. */
extern atomic_int clgc__layered;

/* clgc's own OpenCL calls (the waits', the watcher's, the callbacks'
 * registrations): below the layer once it is there, since through the
 * loader they would come back to its entries, which would put them in a
 * region and their callbacks in a trampoline of their own. A slot the
 * next table lacks goes to the loader, as without the layer. */
#define CLGC__CL(name)                                                         \
    (CLGC_UNLIKELY(                                                            \
         atomic_load_explicit(&clgc__layered, memory_order_acquire) &&         \
         clgc__next.name != NULL)                                              \
         ? clgc__next.name                                                     \
         : name)

/* Generated (src/gen/layer.c): put the layer's entries into `table` (a copy
 * of the next one, n slots filled). */
void clgc__layer_fill(struct _cl_icd_dispatch *table, cl_uint n);

#endif /* CLGC_DISPATCH_H */
