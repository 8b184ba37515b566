#ifndef CLGC_PORTABLE_H
#define CLGC_PORTABLE_H

/* OpenCL the same on every version and driver: calls that a binding, a
 * demo or a test would otherwise write for each OpenCL version it meets,
 * once, through the clgc_cl* wrappers (so in a safe region, as any of
 * them). */

#include "clgc/common.h"
#include "clgc/wrappers.h"

CLGC_BEGIN_DECLS

/* A command queue on a device of any OpenCL version, with the signature
 * and the errors of clCreateCommandQueueWithProperties (OpenCL 2.0). On a
 * device that reports OpenCL 1.x (CL_DEVICE_VERSION "OpenCL 1.", whose
 * driver may lack the 2.0 call: Oclgrind's, 1.2), it is
 * clCreateCommandQueue with the bits of properties' CL_QUEUE_PROPERTIES;
 * any other property there is CL_INVALID_QUEUE_PROPERTIES, as a valid
 * property the device does not support. A NULL or invalid device is
 * CL_INVALID_DEVICE (what CL_DEVICE_VERSION's query says), whatever the
 * context. properties may be NULL, as
 * errcode_ret may; it is a cl_queue_properties list, spelled cl_ulong
 * (its type) for programs built for OpenCL 1.x, whose headers lack the
 * name. Any thread a wrapper may be called on. */
CLGC_EXTERN cl_command_queue
clgc_create_command_queue(cl_context context, cl_device_id device,
                          const cl_ulong *properties, cl_int *errcode_ret);

/* An image's description (zeroed, then filled) from its type and sizes as
 * a binding takes them: n sizes, the width first, then the height (for a
 * 1D array: the array's size), then the depth (for a 2D array: the
 * array's size); type CL_MEM_OBJECT_IMAGE1D, _IMAGE2D, _IMAGE3D,
 * _IMAGE1D_ARRAY or _IMAGE2D_ARRAY, or 0 for the one of n sizes (1D, 2D or
 * 3D). Returns NULL, or what is wrong, a sentence a binding can raise:
 * "an image of this type takes 2 sizes", "not an image type". */
#if defined(CL_VERSION_1_2) /* cl_image_desc */
CLGC_EXTERN const char *clgc_image_desc(cl_mem_object_type type,
                                        const size_t *sizes, unsigned n,
                                        cl_image_desc *desc);
#endif

/* What a transfer of an image's elements needs to know of the image: its
 * extent along each axis of an origin and a region (an array's layers on
 * the axis OpenCL puts them, the second for a 1D array and the third for a
 * 2D array; 1 along an axis the image lacks), the size of one element and
 * the format. */
typedef struct clgc_image_shape {
    size_t extent[3];
    size_t element;
    cl_image_format format;
} clgc_image_shape_t;

/* Fill *shape from image's queries: CL_SUCCESS, or the first query's
 * error (CL_INVALID_MEM_OBJECT for a buffer, or anything not an image). */
CLGC_EXTERN cl_int clgc_image_shape(cl_mem image, clgc_image_shape_t *shape);

/* How clEnqueueFillImage reads the fill color of an image of format:
 * four cl_int for CL_SIGNED_INT8, 16 and 32, four cl_uint for
 * CL_UNSIGNED_INT8, 16 and 32, four cl_float for every other channel
 * type (and for NULL). A binding converts the color it is given to that
 * type: read as another, its 16 bytes are another color. */
typedef enum clgc_fill_color {
    CLGC_FILL_FLOAT,
    CLGC_FILL_INT,
    CLGC_FILL_UINT
} clgc_fill_color_t;

CLGC_EXTERN clgc_fill_color_t
clgc_image_fill_color(const cl_image_format *format);

/* A box of the image for a transfer, checked before OpenCL sees it (a
 * driver may read past a region it was not asked to check): origin (NULL:
 * the corner) must lie in the image, and region (NULL: the rest of the
 * image from origin) be non-zero along every axis and fit; box gets the
 * region, and *bytes, if not NULL, its size packed tightly (element by
 * element, row by row). Returns NULL, or what is wrong, a sentence a
 * binding can raise with CL_INVALID_VALUE: "the origin lies outside the
 * image", "the region reaches past the image", "the region is too
 * large". */
CLGC_EXTERN const char *clgc_image_box(const clgc_image_shape_t *shape,
                                       const size_t origin[3],
                                       const size_t region[3], size_t box[3],
                                       size_t *bytes);

/* A rectangle of a buffer, or of the host memory, for the
 * clEnqueue*BufferRect commands, checked before OpenCL sees it (as a
 * box): region must be non-zero along every axis; *row_pitch (0: the
 * region's width, region[0]) at least the width; *slice_pitch (0: the row
 * pitch times the region's height, region[1]) at least that; and the
 * last byte reached, origin + region - 1 along each axis with those
 * pitches, within size bytes. The pitches left 0 are filled. Returns
 * NULL, or what is wrong, a sentence a binding can raise with
 * CL_INVALID_VALUE: "the region is empty", "the row pitch is less than the
 * region's width", "the slice pitch is less than the row pitch times the
 * region's height", "the rectangle reaches past the buffer's end", "the
 * rectangle is too large". */
CLGC_EXTERN const char *clgc_rect_check(const size_t origin[3],
                                        const size_t region[3],
                                        size_t *row_pitch, size_t *slice_pitch,
                                        size_t size);

CLGC_END_DECLS

#endif /* CLGC_PORTABLE_H */
