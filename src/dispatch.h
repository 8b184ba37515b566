#ifndef CLGC_DISPATCH_H
#define CLGC_DISPATCH_H

/* libclgc's side of the OpenCL layer (docs/layer.md): the layer's dispatch
 * table lives in libclgc (src/dispatch.c, and the generated entries in
 * src/gen/layer.c), so that its entries are the wrappers themselves, with
 * their inline transitions, object checks and callback trampolines;
 * libclgc-layer (src/layer.c) only answers the loader and chooses the
 * runtime. The layer's cooperative clWaitForEvents and clFinish live with
 * its table, above the waits; the table clgc's own calls go to is a
 * service below them (next.h). */

#include "internal.h"
#include "layer.h"
#include "next.h"

/* Generated (src/gen/layer.c): put the layer's entries into `table` (a copy
 * of the next one, n slots filled). */
void clgc__layer_fill(struct _cl_icd_dispatch *table, cl_uint n);

#endif /* CLGC_DISPATCH_H */
