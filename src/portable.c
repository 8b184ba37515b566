/* OpenCL the same on every version and driver (include/clgc/portable.h),
 * above the wrappers it calls. */

#include <stdint.h>
#include <string.h>

#include "internal.h"

/* Whether device reports OpenCL 1.x (1), a later version (0), or, with
 * *err set, nothing: a NULL or invalid device, which the 2.0 call would
 * refuse too (on a 1.x driver it may not have the call to refuse it). */
static int
clgc__device_is_1x(cl_device_id device, cl_int *err)
{
    char version[1024] = "";

    *err = clgc_clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof(version) - 1,
                                version, NULL);
    return *err == CL_SUCCESS && strncmp(version, "OpenCL 1.", 9) == 0;
}

cl_command_queue
clgc_create_command_queue(cl_context context, cl_device_id device,
                          const cl_ulong *properties, cl_int *errcode_ret)
{
    cl_command_queue_properties bits = 0;
    cl_int err;

    if (!clgc__device_is_1x(device, &err)) {
        if (err != CL_SUCCESS) {
            if (errcode_ret != NULL)
                *errcode_ret = err;
            return NULL;
        }
        return clgc_clCreateCommandQueueWithProperties(context, device,
                                                       properties, errcode_ret);
    }
    for (const cl_ulong *p = properties; p != NULL && p[0] != 0; p += 2) {
        if (p[0] != CL_QUEUE_PROPERTIES) {
            if (errcode_ret != NULL)
                *errcode_ret = CL_INVALID_QUEUE_PROPERTIES;
            return NULL;
        }
        bits |= (cl_command_queue_properties)p[1];
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return clgc_clCreateCommandQueue(context, device, bits, errcode_ret);
#pragma GCC diagnostic pop
}

const char *
clgc_image_desc(cl_mem_object_type type, const size_t *sizes, unsigned n,
                cl_image_desc *desc)
{
    static const char *const takes[] = {NULL,
                                        "an image of this type takes 1 size",
                                        "an image of this type takes 2 sizes",
                                        "an image of this type takes 3 sizes"};
    unsigned need;

    memset(desc, 0, sizeof(*desc));
    if (type == 0 && n >= 1 && n <= 3)
        type = n == 1   ? CL_MEM_OBJECT_IMAGE1D
               : n == 2 ? CL_MEM_OBJECT_IMAGE2D
                        : CL_MEM_OBJECT_IMAGE3D;
    switch (type) {
    case CL_MEM_OBJECT_IMAGE1D:
        need = 1;
        break;
    case CL_MEM_OBJECT_IMAGE2D:
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        need = 2;
        break;
    case CL_MEM_OBJECT_IMAGE3D:
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        need = 3;
        break;
    default:
        return type == 0 ? "an image takes 1 to 3 sizes" : "not an image type";
    }
    if (n != need || sizes == NULL)
        return takes[need];
    desc->image_type = type;
    desc->image_width = sizes[0];
    if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY)
        desc->image_array_size = sizes[1];
    else if (need > 1)
        desc->image_height = sizes[1];
    if (type == CL_MEM_OBJECT_IMAGE2D_ARRAY)
        desc->image_array_size = sizes[2];
    else if (type == CL_MEM_OBJECT_IMAGE3D)
        desc->image_depth = sizes[2];
    return NULL;
}

cl_int
clgc_image_shape(cl_mem image, clgc_image_shape_t *shape)
{
    size_t w = 0, h = 0, d = 0, a = 0;
    cl_mem_object_type type = 0;
    cl_int err =
        clgc_clGetMemObjectInfo(image, CL_MEM_TYPE, sizeof(type), &type, NULL);

    if (err == CL_SUCCESS &&
        (type == CL_MEM_OBJECT_BUFFER || type == CL_MEM_OBJECT_PIPE))
        err = CL_INVALID_MEM_OBJECT;
    if (err == CL_SUCCESS)
        err = clgc_clGetImageInfo(image, CL_IMAGE_WIDTH, sizeof(w), &w, NULL);
    if (err == CL_SUCCESS)
        err = clgc_clGetImageInfo(image, CL_IMAGE_HEIGHT, sizeof(h), &h, NULL);
    if (err == CL_SUCCESS)
        err = clgc_clGetImageInfo(image, CL_IMAGE_DEPTH, sizeof(d), &d, NULL);
    if (err == CL_SUCCESS)
        err = clgc_clGetImageInfo(image, CL_IMAGE_ARRAY_SIZE, sizeof(a), &a,
                                  NULL);
    if (err == CL_SUCCESS)
        err =
            clgc_clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE,
                                sizeof(shape->element), &shape->element, NULL);
    if (err == CL_SUCCESS)
        err = clgc_clGetImageInfo(image, CL_IMAGE_FORMAT, sizeof(shape->format),
                                  &shape->format, NULL);
    if (err != CL_SUCCESS)
        return err;
    shape->extent[0] = w;
    shape->extent[1] = type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? a : h ? h : 1;
    shape->extent[2] = type == CL_MEM_OBJECT_IMAGE2D_ARRAY ? a : d ? d : 1;
    return CL_SUCCESS;
}

clgc_fill_color_t
clgc_image_fill_color(const cl_image_format *format)
{
    switch (format != NULL ? format->image_channel_data_type : 0) {
    case CL_SIGNED_INT8:
    case CL_SIGNED_INT16:
    case CL_SIGNED_INT32:
        return CLGC_FILL_INT;
    case CL_UNSIGNED_INT8:
    case CL_UNSIGNED_INT16:
    case CL_UNSIGNED_INT32:
        return CLGC_FILL_UINT;
    default:
        return CLGC_FILL_FLOAT;
    }
}

const char *
clgc_image_box(const clgc_image_shape_t *shape, const size_t origin[3],
               const size_t region[3], size_t box[3], size_t *bytes)
{
    static const size_t corner[3] = {0, 0, 0};
    size_t n = shape->element;

    if (origin == NULL)
        origin = corner;
    for (int i = 0; i < 3; i++)
        if (origin[i] >= shape->extent[i])
            return "the origin lies outside the image";
    for (int i = 0; i < 3; i++) {
        box[i] = region == NULL ? shape->extent[i] - origin[i] : region[i];
        if (box[i] == 0 || box[i] > shape->extent[i] - origin[i])
            return "the region reaches past the image";
        if (__builtin_mul_overflow(n, box[i], &n))
            return "the region is too large";
    }
    if (bytes != NULL)
        *bytes = n;
    return NULL;
}

const char *
clgc_rect_check(const size_t origin[3], const size_t region[3],
                size_t *row_pitch, size_t *slice_pitch, size_t size)
{
    size_t height, end, row_end;

    if (region[0] == 0 || region[1] == 0 || region[2] == 0)
        return "the region is empty";
    if (*row_pitch == 0)
        *row_pitch = region[0];
    if (*row_pitch < region[0])
        return "the row pitch is less than the region's width";
    if (__builtin_mul_overflow(*row_pitch, region[1], &height))
        return "the rectangle is too large";
    if (*slice_pitch == 0)
        *slice_pitch = height;
    if (*slice_pitch < height)
        return "the slice pitch is less than the row pitch times the "
               "region's height";
    /* One past the last byte reached. */
    if (__builtin_add_overflow(origin[2], region[2] - 1, &end) ||
        __builtin_mul_overflow(end, *slice_pitch, &end) ||
        __builtin_add_overflow(origin[1], region[1] - 1, &row_end) ||
        __builtin_mul_overflow(row_end, *row_pitch, &row_end) ||
        __builtin_add_overflow(end, row_end, &end) ||
        __builtin_add_overflow(end, origin[0], &end) ||
        __builtin_add_overflow(end, region[0], &end))
        return "the rectangle is too large";
    if (end > size)
        return "the rectangle reaches past the buffer's end";
    return NULL;
}
