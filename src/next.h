#ifndef CLGC_NEXT_H
#define CLGC_NEXT_H

/* Which OpenCL clgc's own calls go to (src/next.c): a service at the
 * bottom of the library, below the waits, the watcher and the callbacks
 * that make those calls, and below the layer's table (src/dispatch.c),
 * which fills it. */

#include "internal.h"

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

#endif /* CLGC_NEXT_H */
