/* Images, their formats and transfers, and samplers (clgc_ml.h). Formats,
 * addressing and filter modes are the registry's names or short ones
 * ("rgba", "CL_FLOAT", "clamp_to_edge": clgc_enum_find); an image's
 * description, and every box a transfer reads or writes, the library's
 * (clgc_image_desc, clgc_image_box), checked before OpenCL sees them. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgc_ml.h"

/* The image types of Clgc.image_type, in the order of its constructors;
 * 0 (none given): by the number of sizes. */
static const cl_mem_object_type ml_image_types[] = {
    CL_MEM_OBJECT_IMAGE1D, CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE3D,
    CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_MEM_OBJECT_IMAGE2D_ARRAY};

static cl_mem_object_type
ml_image_type(value kind)
{
    return Is_block(kind) ? ml_image_types[Long_val(Field(kind, 0))] : 0;
}

/* The value of name in enum group (Invalid_argument naming both if it
 * has none). */
static cl_uint
ml_enum(value name, const char *group, const char *who)
{
    int64_t v;

    if (!caml_string_is_c_safe(name) ||
        !clgc_enum_find(clgc_enum_group_find(group), String_val(name), &v)) {
        char message[200];

        snprintf(message, sizeof(message), "%s: \"%.80s\" is no name of %s",
                 who, String_val(name), group);
        caml_invalid_argument(message);
    }
    return (cl_uint)v;
}

static value
ml_enum_name(const char *group, cl_uint v)
{
    const char *name = clgc_enum_name(clgc_enum_group_find(group), v);
    char number[16];

    if (name == NULL) {
        snprintf(number, sizeof(number), "%u", v);
        name = number;
    }
    return caml_copy_string(name);
}

/* image context flags (order, channel) kind sizes */
value
ml_clgc_image(value context, value flags, value format, value kind, value sizes)
{
    CAMLparam5(context, flags, format, kind, sizes);
    ML_STUB;
    const char *who = "Clgc.image";
    void *c = clgc_ml_get(context, ML_CONTEXT, who);
    cl_image_format f = {ml_enum(Field(format, 0), "cl_channel_order", who),
                         ml_enum(Field(format, 1), "cl_channel_type", who)};
    size_t d[3];
    cl_uint n = clgc_ml_sizes(sizes, d, who);
    cl_image_desc desc;
    const char *wrong = clgc_image_desc(ml_image_type(kind), d, n, &desc);
    cl_int err;
    cl_mem m;

    if (wrong != NULL) {
        char message[160];

        snprintf(message, sizeof(message), "%s: %s", who, wrong);
        caml_invalid_argument(message);
    }
    m = clgc_clCreateImage(c, (cl_mem_flags)Int64_val(flags), &f, &desc, NULL,
                           &err);
    ML_CHECK(err, "clCreateImage");
    ML_RETURN(clgc_ml_wrap(ML_MEM, m));
}

/* image_formats context flags kind -> (order, channel) array */
value
ml_clgc_image_formats(value context, value flags, value kind)
{
    CAMLparam3(context, flags, kind);
    CAMLlocal2(r, pair);
    ML_STUB;
    void *c = clgc_ml_get(context, ML_CONTEXT, "Clgc.image_formats");
    cl_mem_object_type t = ml_image_type(kind);
    cl_image_format *fs;
    cl_uint n = 0;
    cl_int err;

    if (t == 0)
        t = CL_MEM_OBJECT_IMAGE2D;
    err = clgc_clGetSupportedImageFormats(c, (cl_mem_flags)Int64_val(flags), t,
                                          0, NULL, &n);
    ML_CHECK(err, "clGetSupportedImageFormats");
    if ((fs = calloc(n + 1, sizeof(*fs))) == NULL)
        caml_raise_out_of_memory();
    err = clgc_clGetSupportedImageFormats(c, (cl_mem_flags)Int64_val(flags), t,
                                          n, fs, &n);
    if (err != CL_SUCCESS) {
        free(fs);
        clgc_ml_raise(err, "clGetSupportedImageFormats", NULL);
    }
    r = caml_alloc(n, 0);
    for (cl_uint i = 0; i < n; i++) {
        pair = caml_alloc_tuple(2);
        Store_field(
            pair, 0,
            ml_enum_name("cl_channel_order", fs[i].image_channel_order));
        Store_field(
            pair, 1,
            ml_enum_name("cl_channel_type", fs[i].image_channel_data_type));
        Store_field(r, i, pair);
    }
    free(fs);
    ML_RETURN(r);
}

/* 1 to 3 sizes of an optional int array into out[3], the axes it does
 * not give rest (0 for an origin, 1 for a region); whether one was. */
static int
ml_opt_sizes(value opt, size_t out[3], size_t rest, const char *who)
{
    out[0] = out[1] = out[2] = rest;
    if (!Is_block(opt))
        return 0;
    clgc_ml_sizes(Field(opt, 0), out, who);
    return 1;
}

/* The shape of image m (a handle the stub holds). */
static void
ml_shape(void *m, clgc_image_shape_t *shape)
{
    ML_CHECK(clgc_image_shape(m, shape), "clGetImageInfo");
}

/* The box of an image of that shape at origin and region (both
 * optional: the corner, the rest of the image; given: a region already
 * known, a copy's source's, used when region is None), checked before
 * OpenCL sees it (clgc_image_box): CL_INVALID_VALUE as call's, saying
 * what is wrong, after "side: " where side is not NULL. Its size in
 * bytes, packed. */
static size_t
ml_box(const clgc_image_shape_t *shape, value origin, value region,
       const size_t *given, size_t o[3], size_t box[3], const char *call,
       const char *side, const char *who)
{
    size_t r[3], bytes = 0;
    const char *wrong;

    ml_opt_sizes(origin, o, 0, who);
    if (ml_opt_sizes(region, r, 1, who))
        given = r;
    wrong = clgc_image_box(shape, o, given, box, &bytes);
    if (wrong != NULL && side != NULL) {
        char message[160];

        snprintf(message, sizeof(message), "%s: %s", side, wrong);
        clgc_ml_raise(CL_INVALID_VALUE, call, message);
    }
    if (wrong != NULL)
        clgc_ml_raise(CL_INVALID_VALUE, call, wrong);
    return bytes;
}

/* image_transfer queue image ba origin region blocking write wait: the
 * box of origin and region (both optional: the corner, the rest of the
 * image) packed in the Bigarray, which must hold at least its bytes. */
value
ml_clgc_image_transfer(value queue, value image, value ba, value origin,
                       value region, value blocking, value write, value wait)
{
    CAMLparam5(queue, image, ba, origin, region);
    CAMLxparam3(blocking, write, wait);
    ML_STUB;
    const char *who = Bool_val(write) ? "Clgc.write_image" : "Clgc.read_image";
    const char *call =
        Bool_val(write) ? "clEnqueueWriteImage" : "clEnqueueReadImage";
    void *q = clgc_ml_get(queue, ML_QUEUE, who);
    void *m = clgc_ml_get_mem(image, CLGC_ARG_IMAGE, who);
    cl_bool block = Bool_val(blocking) ? CL_TRUE : CL_FALSE;
    clgc_image_shape_t shape;
    size_t o[3], box[3];
    cl_uint n;
    cl_event *w, ev = NULL;
    cl_int err;

    ml_shape(m, &shape);
    if (caml_ba_byte_size(Caml_ba_array_val(ba)) <
        ml_box(&shape, origin, region, NULL, o, box, call, NULL, who))
        clgc_ml_raise(CL_INVALID_VALUE, call,
                      "the Bigarray is smaller than the region");
    w = clgc_ml_events(wait, &n, who);
    if (Bool_val(write))
        err = clgc_clEnqueueWriteImage(q, m, block, o, box, 0, 0,
                                       Caml_ba_data_val(ba), n, w, &ev);
    else
        err = clgc_clEnqueueReadImage(q, m, block, o, box, 0, 0,
                                      Caml_ba_data_val(ba), n, w, &ev);
    free(w);
    ML_RETURN(clgc_ml_transferred(err, ev, block, ba, call));
}

value
ml_clgc_image_transfer_bc(value *argv, int argn)
{
    (void)argn;
    return ml_clgc_image_transfer(argv[0], argv[1], argv[2], argv[3], argv[4],
                                  argv[5], argv[6], argv[7]);
}

/* is_image mem */
value
ml_clgc_is_image(value mem)
{
    CAMLparam1(mem);
    ML_STUB;
    void *m = clgc_ml_get(mem, ML_MEM, "Clgc.is_image");

    ML_RETURN(Val_bool(clgc_mem_kind(m) == CLGC_ARG_IMAGE));
}

/* sampler context normalized addressing filter: clCreateSampler, which
 * every driver has (1.x ones lack the 2.0 call with properties). */
value
ml_clgc_sampler(value context, value normalized, value addressing, value filter)
{
    CAMLparam4(context, normalized, addressing, filter);
    ML_STUB;
    const char *who = "Clgc.sampler";
    void *c = clgc_ml_get(context, ML_CONTEXT, who);
    cl_addressing_mode a = ml_enum(addressing, "cl_addressing_mode", who);
    cl_filter_mode f = ml_enum(filter, "cl_filter_mode", who);
    cl_int err;
    cl_sampler s;

    s = clgc_clCreateSampler(c, Bool_val(normalized) ? CL_TRUE : CL_FALSE, a, f,
                             &err);
    ML_CHECK(err, "clCreateSampler");
    ML_RETURN(clgc_ml_wrap(ML_SAMPLER, s));
}

/* fill_image queue image color origin region wait: color Float4 (floats)
 * for a normalized or float format, Int4 (int32s) for an integer one, as
 * OpenCL reads the 16 bytes by the image's channel type. */
value
ml_clgc_fill_image(value queue, value image, value color, value origin,
                   value region, value wait)
{
    CAMLparam5(queue, image, color, origin, region);
    CAMLxparam1(wait);
    ML_STUB;
    const char *who = "Clgc.fill_image", *call = "clEnqueueFillImage";
    void *q = clgc_ml_get(queue, ML_QUEUE, who);
    void *m = clgc_ml_get_mem(image, CLGC_ARG_IMAGE, who);
    value c = Field(color, 0);
    union {
        cl_float f[4];
        cl_int i[4];
    } pattern;
    clgc_image_shape_t shape;
    size_t o[3], box[3];
    int integer;
    cl_uint n;
    cl_event *w, ev = NULL;
    cl_int err;

    ml_shape(m, &shape);
    integer = clgc_image_fill_color(&shape.format) != CLGC_FILL_FLOAT;
    if (Tag_val(color) != (integer ? 1 : 0))
        caml_invalid_argument(integer ? "Clgc.fill_image: an integer format "
                                        "is filled with Int4, not Float4"
                                      : "Clgc.fill_image: a float or "
                                        "normalized format is filled with "
                                        "Float4, not Int4");
    if ((integer ? Wosize_val(c) : Wosize_val(c) / Double_wosize) != 4)
        caml_invalid_argument("Clgc.fill_image: a color of 4 channels");
    for (int k = 0; k < 4; k++)
        if (integer)
            pattern.i[k] = Int32_val(Field(c, k));
        else
            pattern.f[k] = (cl_float)Double_flat_field(c, k);
    ml_box(&shape, origin, region, NULL, o, box, call, "the image", who);
    w = clgc_ml_events(wait, &n, who);
    err = clgc_clEnqueueFillImage(q, m, &pattern, o, box, n, w, &ev);
    free(w);
    ML_CHECK(err, call);
    ML_RETURN(clgc_ml_wrap(ML_EVENT, ev));
}

value
ml_clgc_fill_image_bc(value *argv, int argn)
{
    (void)argn;
    return ml_clgc_fill_image(argv[0], argv[1], argv[2], argv[3], argv[4],
                              argv[5]);
}

/* copy_image queue src dst src_origin dst_origin region wait: region (the
 * rest of src by default) checked against both images. */
value
ml_clgc_copy_image(value queue, value src, value dst, value src_origin,
                   value dst_origin, value region, value wait)
{
    CAMLparam5(queue, src, dst, src_origin, dst_origin);
    CAMLxparam2(region, wait);
    ML_STUB;
    const char *who = "Clgc.copy_image", *call = "clEnqueueCopyImage";
    void *q = clgc_ml_get(queue, ML_QUEUE, who);
    void *s = clgc_ml_get_mem(src, CLGC_ARG_IMAGE, who);
    void *d = clgc_ml_get_mem(dst, CLGC_ARG_IMAGE, who);
    clgc_image_shape_t ss, ds;
    size_t so[3], dorig[3], box[3], dbox[3];
    cl_uint n;
    cl_event *w, ev = NULL;
    cl_int err;

    ml_shape(s, &ss);
    ml_shape(d, &ds);
    ml_box(&ss, src_origin, region, NULL, so, box, call, "the source", who);
    ml_box(&ds, dst_origin, Val_none, box, dorig, dbox, call, "the destination",
           who);
    w = clgc_ml_events(wait, &n, who);
    err = clgc_clEnqueueCopyImage(q, s, d, so, dorig, box, n, w, &ev);
    free(w);
    ML_CHECK(err, call);
    ML_RETURN(clgc_ml_wrap(ML_EVENT, ev));
}

value
ml_clgc_copy_image_bc(value *argv, int argn)
{
    (void)argn;
    return ml_clgc_copy_image(argv[0], argv[1], argv[2], argv[3], argv[4],
                              argv[5], argv[6]);
}

/* image_buffer_copy queue image buffer origin region offset to_buffer
 * wait: the box of the image, packed, to or from the buffer at offset,
 * which must hold it. */
value
ml_clgc_image_buffer_copy(value queue, value image, value buffer, value origin,
                          value region, value offset, value to_buffer,
                          value wait)
{
    CAMLparam5(queue, image, buffer, origin, region);
    CAMLxparam3(offset, to_buffer, wait);
    ML_STUB;
    int to = Bool_val(to_buffer);
    const char *who =
        to ? "Clgc.copy_image_to_buffer" : "Clgc.copy_buffer_to_image";
    const char *call =
        to ? "clEnqueueCopyImageToBuffer" : "clEnqueueCopyBufferToImage";
    void *q = clgc_ml_get(queue, ML_QUEUE, who);
    void *m = clgc_ml_get_mem(image, CLGC_ARG_IMAGE, who);
    void *b = clgc_ml_get_mem(buffer, CLGC_ARG_BUFFER, who);
    clgc_image_shape_t shape;
    size_t o[3], box[3], bytes, size;
    cl_uint n;
    cl_event *w, ev = NULL;
    cl_int err;

    if (Long_val(offset) < 0)
        caml_invalid_argument("Clgc.copy_image_to_buffer/copy_buffer_to_image: "
                              "a negative offset");
    ml_shape(m, &shape);
    bytes =
        ml_box(&shape, origin, region, NULL, o, box, call, "the image", who);
    size = clgc_ml_mem_size(b);
    if ((size_t)Long_val(offset) > size ||
        size - (size_t)Long_val(offset) < bytes)
        clgc_ml_raise(CL_INVALID_VALUE, call,
                      "the buffer: the region, packed, reaches past its end");
    w = clgc_ml_events(wait, &n, who);
    if (to)
        err = clgc_clEnqueueCopyImageToBuffer(
            q, m, b, o, box, (size_t)Long_val(offset), n, w, &ev);
    else
        err = clgc_clEnqueueCopyBufferToImage(q, b, m, (size_t)Long_val(offset),
                                              o, box, n, w, &ev);
    free(w);
    ML_CHECK(err, call);
    ML_RETURN(clgc_ml_wrap(ML_EVENT, ev));
}

value
ml_clgc_image_buffer_copy_bc(value *argv, int argn)
{
    (void)argn;
    return ml_clgc_image_buffer_copy(argv[0], argv[1], argv[2], argv[3],
                                     argv[4], argv[5], argv[6], argv[7]);
}
