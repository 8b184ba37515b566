#ifndef CLGC_LAYER_H
#define CLGC_LAYER_H

/* Between libclgc-layer (src/layer.c: the layer interface the loader
 * calls, and the choice of runtime) and libclgc, which holds the layer's
 * table (src/dispatch.c). */

#include <stddef.h>

#include <CL/cl_icd.h>
#include <CL/cl_layer.h>

/* Whether `member` lies among the first n slots of a dispatch table. */
#define CLGC__LAYER_SLOT(member, n)                                            \
    (offsetof(struct _cl_icd_dispatch, member) / sizeof(void *) < (n))

/* Put clgc's entries in front of `target`, the next layer's or the
 * driver's table of num_entries slots, and hand back the layer's table
 * and its count in *table_ret and *num_entries_ret. cooperative: make
 * clWaitForEvents and clFinish clgc's cooperative wait (else the driver's,
 * each in one region). Exported by libclgc in its private version node,
 * for libclgc-layer only. Once per process, from clInitLayer (the
 * loader's first OpenCL call, on that thread). Returns CLGC_OK,
 * CLGC_EALREADY if the layer is in place already (nothing changes: the
 * caller should hand target back unchanged), or CLGC_EINVAL for a NULL
 * pointer. */
int clgc__layer_init(cl_uint num_entries, const cl_icd_dispatch *target,
                     int cooperative, cl_uint *num_entries_ret,
                     const cl_icd_dispatch **table_ret);

#endif /* CLGC_LAYER_H */
