/* Images (1D, 2D, 3D and arrays of them) with their formats by the
 * registry's names, their transfers, fills and copies, and samplers.
 * Optional arguments by keyword: #:origin, #:region, #:wait, ... Boxes are
 * checked before OpenCL sees them (clgc_image_box). image-info and
 * sampler-info are info.c's. */

#include <libguile.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guile-clgc.h"

/* An enum of group by the registry's name or a short one, from a symbol
 * or a string ('rgba, "CL_FLOAT", 'clamp-to-edge: clgc_enum_find). */
static cl_uint
enum_arg(SCM v, const char *group, int pos, const char *who)
{
    const clgc_enum_group_t *g = clgc_enum_group_find(group);
    char *name;
    int64_t value;
    int found;

    if (scm_is_symbol(v))
        v = scm_symbol_to_string(v);
    guile_clgc_validate(who, scm_is_string(v), v, pos, "symbol or string");
    name = scm_to_utf8_string(v);
    found = clgc_enum_find(g, name, &value);
    free(name);
    if (!found)
        scm_misc_error(who, "~S is no name of ~A",
                       scm_list_2(v, scm_from_utf8_string(group)));
    return (cl_uint)value;
}

static SCM
enum_scm(const char *group, cl_uint v)
{
    const char *name = clgc_enum_name(clgc_enum_group_find(group), v);

    return name != NULL ? scm_from_utf8_symbol(name) : scm_from_uint32(v);
}

/* A format: a list of two names, (order type): '(rgba float). */
static cl_image_format
format_arg(SCM format, int pos, const char *who)
{
    cl_image_format f;

    guile_clgc_validate(who, scm_ilength(format) == 2, format, pos,
                        "list (order type)");
    f.image_channel_order =
        enum_arg(scm_car(format), "cl_channel_order", pos, who);
    f.image_channel_data_type =
        enum_arg(scm_cadr(format), "cl_channel_type", pos, who);
    return f;
}

/* (make-image context format dimensions #:type #:flags): dimensions, 1
 * to 3 sizes, with an array's size last; type 1d 2d 3d 1d-array 2d-array
 * (by default by the number of dimensions). */
static SCM
make_image_body(SCM context, SCM format, SCM dims, SCM rest)
{
    const char *who = "make-image";
    void *c = guile_clgc_unwrap(K_CONTEXT, context, 1, who);
    cl_image_format f = format_arg(format, 2, who);
    SCM type = SCM_UNDEFINED, flags = SCM_UNDEFINED;
    cl_image_desc desc;
    cl_mem_object_type t;
    size_t d[3];
    int n = guile_clgc_sizes(dims, d, 0, 3, who);
    const char *wrong;
    cl_int err = CL_SUCCESS;
    cl_mem m;

    scm_c_bind_keyword_arguments(who, rest, 0, guile_clgc_kw("type"), &type,
                                 guile_clgc_kw("flags"), &flags, SCM_UNDEFINED);
    if (SCM_UNBNDP(type))
        t = 0;
    else if (guile_clgc_sym_is(type, "1d"))
        t = CL_MEM_OBJECT_IMAGE1D;
    else if (guile_clgc_sym_is(type, "2d"))
        t = CL_MEM_OBJECT_IMAGE2D;
    else if (guile_clgc_sym_is(type, "3d"))
        t = CL_MEM_OBJECT_IMAGE3D;
    else if (guile_clgc_sym_is(type, "1d-array"))
        t = CL_MEM_OBJECT_IMAGE1D_ARRAY;
    else if (guile_clgc_sym_is(type, "2d-array"))
        t = CL_MEM_OBJECT_IMAGE2D_ARRAY;
    else
        scm_misc_error(who, "unknown image type: ~S", scm_list_1(type));
    if ((wrong = clgc_image_desc(t, d, (unsigned)n, &desc)) != NULL)
        scm_misc_error(who, "~S: ~A",
                       scm_list_2(dims, scm_from_utf8_string(wrong)));
    m = clgc_clCreateImage(c,
                           SCM_UNBNDP(flags)
                               ? CL_MEM_READ_WRITE
                               : guile_clgc_mem_flags(flags, 4, who),
                           &f, &desc, NULL, &err);
    CHECK_CL(err, who);
    return guile_clgc_wrap(K_MEM, m);
}
GUILE_CLGC_HELD4(make_image)

/* (image-formats context [flags] [type]) -> ((CL_RGBA CL_FLOAT) ...) */
static SCM
image_formats_body(SCM context, SCM flags, SCM type)
{
    const char *who = "image-formats";
    void *c = guile_clgc_unwrap(K_CONTEXT, context, 1, who);
    cl_mem_flags f = SCM_UNBNDP(flags) ? CL_MEM_READ_WRITE
                                       : guile_clgc_mem_flags(flags, 2, who);
    cl_mem_object_type t = CL_MEM_OBJECT_IMAGE2D;
    cl_image_format *fs;
    cl_uint n = 0;
    SCM l = SCM_EOL;

    if (!SCM_UNBNDP(type) && guile_clgc_sym_is(type, "1d"))
        t = CL_MEM_OBJECT_IMAGE1D;
    else if (!SCM_UNBNDP(type) && guile_clgc_sym_is(type, "3d"))
        t = CL_MEM_OBJECT_IMAGE3D;
    else if (!SCM_UNBNDP(type) && !guile_clgc_sym_is(type, "2d"))
        scm_misc_error(who, "unknown image type: ~S", scm_list_1(type));
    CHECK_CL(clgc_clGetSupportedImageFormats(c, f, t, 0, NULL, &n), who);
    fs = scm_gc_malloc_pointerless((n ? n : 1) * sizeof(*fs), "formats");
    CHECK_CL(clgc_clGetSupportedImageFormats(c, f, t, n, fs, &n), who);
    while (n-- > 0)
        l = scm_cons(
            scm_list_2(
                enum_scm("cl_channel_order", fs[n].image_channel_order),
                enum_scm("cl_channel_type", fs[n].image_channel_data_type)),
            l);
    return l;
}
GUILE_CLGC_HELD3(image_formats)

static clgc_image_shape_t
shape_of(void *image, const char *who)
{
    clgc_image_shape_t s;

    CHECK_CL(clgc_image_shape(image, &s), who);
    return s;
}

/* The box of #:origin (or its name) and #:region checked against shape
 * (clgc_image_box): the region, and its packed size in *bytes. */
static void
box_arg(const clgc_image_shape_t *shape, SCM origin, SCM region,
        size_t out_origin[3], size_t box[3], size_t *bytes, const char *who)
{
    size_t r[3];
    const char *wrong;

    if (SCM_UNBNDP(origin))
        out_origin[0] = out_origin[1] = out_origin[2] = 0;
    else
        guile_clgc_sizes(origin, out_origin, 0, 0, who);
    if (!SCM_UNBNDP(region))
        guile_clgc_sizes(region, r, 1, 0, who);
    wrong = clgc_image_box(shape, out_origin, SCM_UNBNDP(region) ? NULL : r,
                           box, bytes);
    if (wrong != NULL)
        guile_clgc_raise_error("CL_INVALID_VALUE", CL_INVALID_VALUE, who,
                               SCM_BOOL_F, SCM_BOOL_F, wrong);
}

/* A read or write of the region of an image from or into bv, tightly
 * packed (the bytevector holds at least the region's bytes); with block,
 * waited for as read-buffer! waits, else the event, bv kept alive until
 * it completes. */
static SCM
image_transfer(SCM queue, SCM image, SCM bv, SCM rest, int write, int block,
               const char *who)
{
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, who);
    void *m = guile_clgc_unwrap(K_MEM, image, 2, who);
    SCM origin = SCM_UNDEFINED, region = SCM_UNDEFINED, wait = SCM_UNDEFINED;
    size_t o[3], box[3], bytes;
    clgc_image_shape_t shape;
    cl_uint n = 0;
    void **w, *buf[16];
    cl_event ev = NULL;
    cl_int err;

    guile_clgc_validate(who, scm_is_bytevector(bv), bv, 3, "bytevector");
    scm_c_bind_keyword_arguments(who, rest, 0, guile_clgc_kw("origin"), &origin,
                                 guile_clgc_kw("region"), &region,
                                 guile_clgc_kw("wait"), &wait, SCM_UNDEFINED);
    shape = shape_of(m, who);
    box_arg(&shape, origin, region, o, box, &bytes, who);
    if (SCM_BYTEVECTOR_LENGTH(bv) < bytes)
        guile_clgc_raise_error("CL_INVALID_VALUE", CL_INVALID_VALUE, who,
                               SCM_BOOL_F, SCM_BOOL_F,
                               "the bytevector is shorter than the region");
    w = guile_clgc_wait_list(wait, 0, who, &n, buf);
    if (write)
        err = clgc_clEnqueueWriteImage(q, m, CL_FALSE, o, box, 0, 0,
                                       SCM_BYTEVECTOR_CONTENTS(bv), n,
                                       (cl_event *)w, &ev);
    else
        err = clgc_clEnqueueReadImage(q, m, CL_FALSE, o, box, 0, 0,
                                      SCM_BYTEVECTOR_CONTENTS(bv), n,
                                      (cl_event *)w, &ev);
    guile_clgc_free_array(w, buf);
    CHECK_CL(err, who);
    return guile_clgc_transfer_done(ev, bv, block, who);
}

static SCM
read_image_body(SCM queue, SCM image, SCM bv, SCM rest)
{
    return image_transfer(queue, image, bv, rest, 0, 1, "read-image!");
}
GUILE_CLGC_HELD4(read_image)

static SCM
write_image_body(SCM queue, SCM image, SCM bv, SCM rest)
{
    return image_transfer(queue, image, bv, rest, 1, 1, "write-image!");
}
GUILE_CLGC_HELD4(write_image)

static SCM
enqueue_read_image_body(SCM queue, SCM image, SCM bv, SCM rest)
{
    return image_transfer(queue, image, bv, rest, 0, 0, "enqueue-read-image");
}
GUILE_CLGC_HELD4(enqueue_read_image)

static SCM
enqueue_write_image_body(SCM queue, SCM image, SCM bv, SCM rest)
{
    return image_transfer(queue, image, bv, rest, 1, 0, "enqueue-write-image");
}
GUILE_CLGC_HELD4(enqueue_write_image)

/* (enqueue-fill-image queue image colour #:origin #:region #:wait): colour,
 * four numbers, floats or integers as the image's channel type is. */
static SCM
enqueue_fill_image_body(SCM queue, SCM image, SCM colour, SCM rest)
{
    const char *who = "enqueue-fill-image";
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, who);
    void *m = guile_clgc_unwrap(K_MEM, image, 2, who);
    SCM origin = SCM_UNDEFINED, region = SCM_UNDEFINED, wait = SCM_UNDEFINED;
    union {
        cl_float f[4];
        cl_int i[4];
        cl_uint u[4];
    } c;
    size_t o[3], box[3];
    clgc_image_shape_t shape;
    cl_uint n = 0;
    void **w, *buf[16];
    cl_event ev = NULL;
    cl_int err;

    guile_clgc_validate(who, scm_ilength(colour) == 4, colour, 3,
                        "list of 4 numbers");
    scm_c_bind_keyword_arguments(who, rest, 0, guile_clgc_kw("origin"), &origin,
                                 guile_clgc_kw("region"), &region,
                                 guile_clgc_kw("wait"), &wait, SCM_UNDEFINED);
    shape = shape_of(m, who);
    for (int i = 0; i < 4; i++, colour = scm_cdr(colour)) {
        SCM v = scm_car(colour);

        switch (clgc_image_fill_color(&shape.format)) {
        case CLGC_FILL_INT:
            c.i[i] =
                (cl_int)guile_clgc_to_signed(v, INT32_MIN, INT32_MAX, 3, who);
            break;
        case CLGC_FILL_UINT:
            c.u[i] = (cl_uint)guile_clgc_to_unsigned(v, UINT32_MAX, 3, who);
            break;
        default:
            guile_clgc_validate(who, scm_is_real(v), v, 3, "real number");
            c.f[i] = (cl_float)scm_to_double(v);
        }
    }
    box_arg(&shape, origin, region, o, box, NULL, who);
    w = guile_clgc_wait_list(wait, 0, who, &n, buf);
    err = clgc_clEnqueueFillImage(q, m, &c, o, box, n, (cl_event *)w, &ev);
    guile_clgc_free_array(w, buf);
    CHECK_CL(err, who);
    return guile_clgc_wrap(K_EVENT, ev);
}
GUILE_CLGC_HELD4(enqueue_fill_image)

/* (enqueue-copy-image queue src dst #:src-origin #:dst-origin #:region
 * #:wait): the region (by default the rest of src) must fit both. */
static SCM
enqueue_copy_image_body(SCM queue, SCM src, SCM dst, SCM rest)
{
    const char *who = "enqueue-copy-image";
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, who);
    void *s = guile_clgc_unwrap(K_MEM, src, 2, who);
    void *d = guile_clgc_unwrap(K_MEM, dst, 3, who);
    SCM so = SCM_UNDEFINED, dor = SCM_UNDEFINED, region = SCM_UNDEFINED,
        wait = SCM_UNDEFINED;
    size_t o1[3], o2[3], box[3], box2[3];
    clgc_image_shape_t ss, ds;
    SCM boxed;
    cl_uint n = 0;
    void **w, *buf[16];
    cl_event ev = NULL;
    cl_int err;

    scm_c_bind_keyword_arguments(who, rest, 0, guile_clgc_kw("src-origin"), &so,
                                 guile_clgc_kw("dst-origin"), &dor,
                                 guile_clgc_kw("region"), &region,
                                 guile_clgc_kw("wait"), &wait, SCM_UNDEFINED);
    ss = shape_of(s, who);
    ds = shape_of(d, who);
    box_arg(&ss, so, region, o1, box, NULL, who);
    boxed = scm_list_3(scm_from_size_t(box[0]), scm_from_size_t(box[1]),
                       scm_from_size_t(box[2]));
    box_arg(&ds, dor, boxed, o2, box2, NULL, who);
    w = guile_clgc_wait_list(wait, 0, who, &n, buf);
    err = clgc_clEnqueueCopyImage(q, s, d, o1, o2, box, n, (cl_event *)w, &ev);
    guile_clgc_free_array(w, buf);
    CHECK_CL(err, who);
    return guile_clgc_wrap(K_EVENT, ev);
}
GUILE_CLGC_HELD4(enqueue_copy_image)

/* (make-sampler context #:normalized? #:addressing #:filter) */
static SCM
make_sampler_body(SCM context, SCM rest)
{
    const char *who = "make-sampler";
    void *c = guile_clgc_unwrap(K_CONTEXT, context, 1, who);
    SCM norm = SCM_BOOL_F, addr = SCM_UNDEFINED, filter = SCM_UNDEFINED;
    cl_int err = CL_SUCCESS;
    cl_sampler s;

    scm_c_bind_keyword_arguments(who, rest, 0, guile_clgc_kw("normalized?"),
                                 &norm, guile_clgc_kw("addressing"), &addr,
                                 guile_clgc_kw("filter"), &filter,
                                 SCM_UNDEFINED);
    /* clCreateSampler, which every driver has (1.x ones lack the 2.0
     * call with properties). */
    s = clgc_clCreateSampler(
        c, scm_is_true(norm) ? CL_TRUE : CL_FALSE,
        SCM_UNBNDP(addr) ? CL_ADDRESS_CLAMP_TO_EDGE
                         : enum_arg(addr, "cl_addressing_mode", 0, who),
        SCM_UNBNDP(filter) ? CL_FILTER_NEAREST
                           : enum_arg(filter, "cl_filter_mode", 0, who),
        &err);
    CHECK_CL(err, who);
    return guile_clgc_wrap(K_SAMPLER, s);
}
GUILE_CLGC_HELD2(make_sampler)

const struct guile_clgc_proc guile_clgc_image_procs[] = {
    {"make-image", 3, 0, 1, make_image,
     "(make-image context format dimensions #:type #:flags) -> a cl-mem "
     "image; format: (order type), as '(rgba float); dimensions: 1 to 3 "
     "sizes, an array's size last; #:type 1d 2d 3d 1d-array 2d-array (by "
     "default by the dimensions); #:flags as make-buffer's."},
    {"image-formats", 1, 2, 0, image_formats,
     "(image-formats context [flags] [type]) -> the formats the context "
     "supports for images of type 2d (default), 1d or 3d: ((CL_RGBA "
     "CL_FLOAT) ...)."},
    {"read-image!", 3, 0, 1, read_image,
     "(read-image! queue image bytevector #:origin #:region #:wait) reads "
     "the region (default: the rest of the image from origin) into "
     "bytevector, tightly packed, and returns it once done."},
    {"write-image!", 3, 0, 1, write_image,
     "(write-image! queue image bytevector #:origin #:region #:wait) writes "
     "the region from bytevector, tightly packed, and returns it once done."},
    {"enqueue-read-image", 3, 0, 1, enqueue_read_image,
     "(enqueue-read-image queue image bytevector #:origin #:region #:wait) "
     "-> a cl-event, without blocking; the bytevector is kept alive until "
     "the command completes."},
    {"enqueue-write-image", 3, 0, 1, enqueue_write_image,
     "(enqueue-write-image queue image bytevector #:origin #:region #:wait) "
     "-> a cl-event, without blocking; the bytevector is kept alive until "
     "the command completes."},
    {"enqueue-fill-image", 3, 0, 1, enqueue_fill_image,
     "(enqueue-fill-image queue image colour #:origin #:region #:wait) -> a "
     "cl-event; colour: 4 numbers, integers for an integer channel type."},
    {"enqueue-copy-image", 3, 0, 1, enqueue_copy_image,
     "(enqueue-copy-image queue src dst #:src-origin #:dst-origin #:region "
     "#:wait) -> a cl-event; the region defaults to the rest of src."},
    {"make-sampler", 1, 0, 1, make_sampler,
     "(make-sampler context #:normalized? #:addressing #:filter) -> a "
     "cl-sampler; addressing: none clamp-to-edge (default) clamp repeat "
     "mirrored-repeat; filter: nearest (default) linear."},
    {NULL, 0, 0, 0, NULL, NULL}};
