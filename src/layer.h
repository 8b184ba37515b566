#ifndef CLGC_LAYER_H
#define CLGC_LAYER_H

/* Between the OpenCL layer's two halves: src/layer.c (the layer interface,
 * the waits, the choice of runtime) and src/gen/layer.c (generated: a
 * dispatch entry for every command of the ICD dispatch table). */

#include "internal.h"

#include <stddef.h>

#include <CL/cl_icd.h>
#include <CL/cl_layer.h>

/* The next layer's or the driver's table, as clInitLayer received it (the
 * slots past the count it gave are NULL). Every entry calls through it,
 * never through the loader, which would come back to the layer. */
extern struct _cl_icd_dispatch clgc__next;

/* Set while clgc's cooperative wait runs on this thread: the OpenCL calls
 * it makes itself (clGetEventInfo, clSetEventCallback, clWaitForEvents...)
 * come back through the loader to the layer, which sends them straight on
 * instead of opening a second region or waiting cooperatively again. */
extern __thread int clgc__layer_inner;

/* Whether `member` lies among the first n slots of a dispatch table. */
#define CLGC__LAYER_SLOT(member, n)                                            \
    (offsetof(struct _cl_icd_dispatch, member) / sizeof(void *) < (n))

/* Generated: put the layer's entries into `table` (a copy of the next one,
 * n slots filled). */
void clgc__layer_fill(struct _cl_icd_dispatch *table, cl_uint n);

#endif /* CLGC_LAYER_H */
