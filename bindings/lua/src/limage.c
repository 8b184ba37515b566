/* Images (1D, 2D, 3D and arrays of them) with their formats by the
 * registry's names, their transfers, and samplers. Image:info and
 * Sampler:info are linfo.c's. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lclgc.h"

/* The value of the enum of group called name, by the registry's name or
 * a short one (clgc_enum_find: "CL_RGBA", "rgba", "clamp_to_edge"). */
static cl_uint
lclgc_enum_value(lua_State *L, int idx, const char *group, const char *what,
                 const char *fn)
{
    int64_t v;

    if (lua_type(L, idx) != LUA_TSTRING)
        lclgc_error(L, "%s: %s: a name of %s expected, got %s", fn, what, group,
                    lclgc_typename(L, idx));
    if (!clgc_enum_find(clgc_enum_group_find(group), lua_tostring(L, idx), &v))
        return (cl_uint)lclgc_error(L, "%s: %s: unknown name '%s' (not a %s)",
                                    fn, what, lua_tostring(L, idx), group);
    return (cl_uint)v;
}

static void
lclgc_push_enum(lua_State *L, const char *group, cl_uint v)
{
    const char *name = clgc_enum_name(clgc_enum_group_find(group), v);

    if (name != NULL)
        lua_pushstring(L, name);
    else
        lua_pushinteger(L, v);
}

/* A format: {order, type} or {order = , type = }. */
static void
lclgc_check_format(lua_State *L, int idx, cl_image_format *f, const char *fn)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TTABLE)
        lclgc_error(L, "%s: format: a table {order, type} expected, got %s", fn,
                    lclgc_typename(L, idx));
    if (lua_getfield(L, idx, "order") == LUA_TNIL) {
        lua_pop(L, 1);
        lua_rawgeti(L, idx, 1);
    }
    f->image_channel_order =
        lclgc_enum_value(L, -1, "cl_channel_order", "format order", fn);
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "type") == LUA_TNIL) {
        lua_pop(L, 1);
        lua_rawgeti(L, idx, 2);
    }
    f->image_channel_data_type =
        lclgc_enum_value(L, -1, "cl_channel_type", "format type", fn);
    lua_pop(L, 1);
}

static const char *const lclgc_image_types[] = {"1d",       "1d_array", "2d",
                                                "2d_array", "3d",       NULL};
static const cl_mem_object_type lclgc_image_cl_types[] = {
    CL_MEM_OBJECT_IMAGE1D, CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_MEM_OBJECT_IMAGE3D};

static size_t
lclgc_desc_size(lua_State *L, int idx, const char *name, size_t def, int need,
                const char *fn)
{
    size_t v = lclgc_opt_size(L, idx, name, 0, fn);

    if (v == 0 && need)
        lclgc_error(L, "%s: option '%s': a positive integer is required", fn,
                    name);
    if (v > ((size_t)1 << 32))
        lclgc_fail(L, fn, CL_INVALID_IMAGE_SIZE, "CL_INVALID_IMAGE_SIZE", NULL,
                   "%s %I", name, (lua_Integer)v);
    return v == 0 ? def : v;
}

/* Context:image{type = "2d", format = {"rgba", "float"}, width =,
 * height =, depth =, array_size =, access = "rw" | "r" | "w"} -> Image */
static int
lclgc_context_image(lua_State *L)
{
    static const char *const access[] = {"rw", "r", "w", NULL};
    static const cl_mem_flags flags[] = {CL_MEM_READ_WRITE, CL_MEM_READ_ONLY,
                                         CL_MEM_WRITE_ONLY};
    const char *fn = "clgc.Context:image";
    cl_context c = lclgc_check(L, 1, LCLGC_CONTEXT, fn);
    cl_image_format format;
    cl_image_desc desc;
    cl_mem_flags f;
    int t;
    cl_int err = CL_SUCCESS;
    cl_mem m;

    lclgc_checktype(L, 2, LUA_TTABLE, fn);
    t = lclgc_opt_choice(L, 2, "type", "2d", lclgc_image_types, fn);
    f = flags[lclgc_opt_choice(L, 2, "access", "rw", access, fn)];
    lua_getfield(L, 2, "format");
    lclgc_check_format(L, -1, &format, fn);
    lua_pop(L, 1);
    memset(&desc, 0, sizeof(desc));
    desc.image_type = lclgc_image_cl_types[t];
    desc.image_width = lclgc_desc_size(L, 2, "width", 0, 1, fn);
    desc.image_height = lclgc_desc_size(L, 2, "height", 0, t >= 2, fn);
    desc.image_depth = lclgc_desc_size(L, 2, "depth", 0, t == 4, fn);
    desc.image_array_size =
        lclgc_desc_size(L, 2, "array_size", 0, t == 1 || t == 3, fn);
    if ((t < 2 && desc.image_height != 0) ||
        (t != 4 && desc.image_depth != 0) ||
        (t != 1 && t != 3 && desc.image_array_size != 0))
        return lclgc_fail(L, fn, CL_INVALID_IMAGE_DESCRIPTOR,
                          "CL_INVALID_IMAGE_DESCRIPTOR", NULL,
                          "a size the type %s has not", lclgc_image_types[t]);
    m = clgc_clCreateImage(c, f, &format, &desc, NULL, &err);
    if (m == NULL)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_IMAGE, m);
    return 1;
}

/* Context:image_formats([type [, access]]) -> { {order =, type =}... }:
 * the formats the context supports, by the registry's names. */
static int
lclgc_context_image_formats(lua_State *L)
{
    static const char *const access[] = {"rw", "r", "w", NULL};
    static const cl_mem_flags flags[] = {CL_MEM_READ_WRITE, CL_MEM_READ_ONLY,
                                         CL_MEM_WRITE_ONLY};
    const char *fn = "clgc.Context:image_formats";
    cl_context c = lclgc_check(L, 1, LCLGC_CONTEXT, fn);
    int t = lclgc_checkopt(L, 2, "2d", lclgc_image_types, fn);
    cl_mem_flags f = flags[lclgc_checkopt(L, 3, "rw", access, fn)];
    cl_uint n = 0;
    cl_image_format *fs;
    cl_int err = clgc_clGetSupportedImageFormats(c, f, lclgc_image_cl_types[t],
                                                 0, NULL, &n);

    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    fs = lua_newuserdatauv(L, (n + 1) * sizeof(*fs), 0);
    if (n > 0 &&
        (err = clgc_clGetSupportedImageFormats(c, f, lclgc_image_cl_types[t], n,
                                               fs, NULL)) != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lua_createtable(L, (int)n, 0);
    for (cl_uint i = 0; i < n; i++) {
        lua_createtable(L, 0, 2);
        lclgc_push_enum(L, "cl_channel_order", fs[i].image_channel_order);
        lua_setfield(L, -2, "order");
        lclgc_push_enum(L, "cl_channel_type", fs[i].image_channel_data_type);
        lua_setfield(L, -2, "type");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static void
lclgc_image_get(lua_State *L, cl_mem m, clgc_image_shape_t *im, const char *fn)
{
    cl_int err = clgc_image_shape(m, im);

    if (err != CL_SUCCESS)
        lclgc_cl_error(L, fn, err);
}

/* origin (option "origin" or "src_origin", ...) and region of the options
 * at idx, checked against the image (clgc_image_box): a region given in
 * part takes the rest of the image along the other axes. Returns the
 * region's size in bytes, tightly packed. */
static size_t
lclgc_image_box(lua_State *L, int idx, const char *origin_name,
                const clgc_image_shape_t *im, size_t origin[3],
                size_t region[3], const char *fn)
{
    size_t given[3], bytes;
    const char *wrong;
    int has_region;

    origin[0] = origin[1] = origin[2] = 0;
    (void)lclgc_opt_triple(L, idx, origin_name, origin, fn);
    for (int i = 0; i < 3; i++)
        given[i] = origin[i] < im->extent[i] ? im->extent[i] - origin[i] : 0;
    has_region = lclgc_opt_triple(L, idx, "region", given, fn);
    wrong =
        clgc_image_box(im, origin, has_region ? given : NULL, region, &bytes);
    if (wrong != NULL)
        lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL, "%s: %s",
                   origin_name, wrong);
    return bytes;
}

/* Queue:write_image(image, string [, {origin=, region=, wait=}]): a
 * blocking write; the string holds exactly the region's elements, tightly
 * packed. */
static int
lclgc_queue_write_image(lua_State *L)
{
    const char *fn = "clgc.Queue:write_image";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem m = lclgc_check(L, 2, LCLGC_IMAGE, fn);
    size_t len, origin[3], region[3], bytes;
    const char *data = lclgc_checkstr(L, 3, &len, fn);
    clgc_image_shape_t im;
    cl_uint nwait;
    cl_event *wait;
    cl_int err;

    lclgc_check_opts(L, 4, fn);
    lclgc_image_get(L, m, &im, fn);
    bytes = lclgc_image_box(L, 4, "origin", &im, origin, region, fn);
    if (len != bytes)
        return lclgc_error(L, "%s: argument #3: %I bytes for a region of %I",
                           fn, (lua_Integer)len, (lua_Integer)bytes);
    wait = lclgc_opt_wait(L, 4, &nwait, fn);
    err = clgc_clEnqueueWriteImage(q, m, CL_TRUE, origin, region, 0, 0, data,
                                   nwait, wait, NULL);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    return 0;
}

/* Queue:read_image(image [, {origin=, region=, wait=}]) -> string */
static int
lclgc_queue_read_image(lua_State *L)
{
    const char *fn = "clgc.Queue:read_image";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem m = lclgc_check(L, 2, LCLGC_IMAGE, fn);
    size_t origin[3], region[3], bytes;
    clgc_image_shape_t im;
    cl_uint nwait;
    cl_event *wait;
    char *buf;
    cl_int err;

    lclgc_check_opts(L, 3, fn);
    lclgc_image_get(L, m, &im, fn);
    bytes = lclgc_image_box(L, 3, "origin", &im, origin, region, fn);
    wait = lclgc_opt_wait(L, 3, &nwait, fn);
    buf = lua_newuserdatauv(L, bytes, 0);
    err = clgc_clEnqueueReadImage(q, m, CL_TRUE, origin, region, 0, 0, buf,
                                  nwait, wait, NULL);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lua_pushlstring(L, buf, bytes);
    return 1;
}

/* Queue:copy_image(src, dst [, {src_origin=, dst_origin=, region=,
 * wait=}]) -> Event */
static int
lclgc_queue_copy_image(lua_State *L)
{
    const char *fn = "clgc.Queue:copy_image";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem src = lclgc_check(L, 2, LCLGC_IMAGE, fn);
    cl_mem dst = lclgc_check(L, 3, LCLGC_IMAGE, fn);
    size_t so[3], dor[3], region[3], dregion[3];
    clgc_image_shape_t si, di;
    cl_uint nwait;
    cl_event *wait, ev = NULL;
    cl_int err;

    lclgc_check_opts(L, 4, fn);
    lclgc_image_get(L, src, &si, fn);
    lclgc_image_get(L, dst, &di, fn);
    (void)lclgc_image_box(L, 4, "src_origin", &si, so, region, fn);
    (void)lclgc_image_box(L, 4, "dst_origin", &di, dor, dregion, fn);
    for (int i = 0; i < 3; i++)
        if (region[i] > dregion[i])
            return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                              "the region reaches past the destination");
    wait = lclgc_opt_wait(L, 4, &nwait, fn);
    err =
        clgc_clEnqueueCopyImage(q, src, dst, so, dor, region, nwait, wait, &ev);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_EVENT, ev);
    return 1;
}

/* Queue:fill_image(image, {r, g, b, a} [, {origin=, region=, wait=}]) ->
 * Event: the colour as floats, or integers for the formats of integers. */
static int
lclgc_queue_fill_image(lua_State *L)
{
    const char *fn = "clgc.Queue:fill_image";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem m = lclgc_check(L, 2, LCLGC_IMAGE, fn);
    size_t origin[3], region[3];
    clgc_image_shape_t im;
    union {
        cl_float f[4];
        cl_int i[4];
        cl_uint u[4];
    } colour;
    clgc_fill_color_t kind;
    cl_uint nwait;
    cl_event *wait, ev = NULL;
    cl_int err;

    lclgc_checktype(L, 3, LUA_TTABLE, fn);
    lclgc_check_opts(L, 4, fn);
    lclgc_image_get(L, m, &im, fn);
    kind = clgc_image_fill_color(&im.format);
    for (int c = 0; c < 4; c++) {
        lua_rawgeti(L, 3, c + 1);
        if (kind == CLGC_FILL_FLOAT)
            lclgc_store_scalar(L, -1, 8 /* float */, &colour.f[c], fn);
        else
            lclgc_store_scalar(L, -1, kind == CLGC_FILL_INT ? 4 : 5,
                               &colour.i[c], fn);
        lua_pop(L, 1);
    }
    (void)lclgc_image_box(L, 4, "origin", &im, origin, region, fn);
    wait = lclgc_opt_wait(L, 4, &nwait, fn);
    err = clgc_clEnqueueFillImage(q, m, &colour, origin, region, nwait, wait,
                                  &ev);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_EVENT, ev);
    return 1;
}

/* Context:sampler([{normalized = false, addressing = "clamp_to_edge",
 * filter = "nearest"}]) -> Sampler: the modes by the registry's names. */
static int
lclgc_context_sampler(lua_State *L)
{
    const char *fn = "clgc.Context:sampler";
    cl_context c = lclgc_check(L, 1, LCLGC_CONTEXT, fn);
    cl_sampler_properties props[7];
    cl_bool norm = CL_FALSE;
    cl_uint addr = CL_ADDRESS_CLAMP_TO_EDGE, filter = CL_FILTER_NEAREST;
    cl_int err = CL_SUCCESS;
    cl_sampler s;

    lclgc_check_opts(L, 2, fn);
    if (lua_type(L, 2) == LUA_TTABLE) {
        if (lua_getfield(L, 2, "normalized") != LUA_TNIL) {
            if (!lua_isboolean(L, -1))
                return lclgc_error(L,
                                   "%s: option 'normalized': a boolean "
                                   "expected",
                                   fn);
            norm = lua_toboolean(L, -1) ? CL_TRUE : CL_FALSE;
        }
        if (lua_getfield(L, 2, "addressing") != LUA_TNIL)
            addr = lclgc_enum_value(L, -1, "cl_addressing_mode",
                                    "option 'addressing'", fn);
        if (lua_getfield(L, 2, "filter") != LUA_TNIL)
            filter = lclgc_enum_value(L, -1, "cl_filter_mode",
                                      "option 'filter'", fn);
        lua_pop(L, 3);
    }
    props[0] = CL_SAMPLER_NORMALIZED_COORDS;
    props[1] = norm;
    props[2] = CL_SAMPLER_ADDRESSING_MODE;
    props[3] = addr;
    props[4] = CL_SAMPLER_FILTER_MODE;
    props[5] = filter;
    props[6] = 0;
    s = clgc_clCreateSamplerWithProperties(c, props, &err);
    if (s == NULL)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_SAMPLER, s);
    return 1;
}

void
lclgc_open_image(lua_State *L)
{
    static const luaL_Reg context[] = {
        {"image", lclgc_context_image},
        {"image_formats", lclgc_context_image_formats},
        {"sampler", lclgc_context_sampler},
        {NULL, NULL}};
    static const luaL_Reg queue[] = {{"write_image", lclgc_queue_write_image},
                                     {"read_image", lclgc_queue_read_image},
                                     {"copy_image", lclgc_queue_copy_image},
                                     {"fill_image", lclgc_queue_fill_image},
                                     {NULL, NULL}};

    lclgc_add_methods(L, LCLGC_CONTEXT, context);
    lclgc_add_methods(L, LCLGC_QUEUE, queue);
    lclgc_new_class(L, LCLGC_IMAGE, NULL);
    lclgc_new_class(L, LCLGC_SAMPLER, NULL);
}
