/* Info queries by name (Platform:info, Device:info, ..., Event:info): every
 * query of the registry's families, each value converted by the type that
 * clgc's generated tables give it (clgc/names.h). An event's profiling
 * times are Event:profile's (levent.c). */

#include <stdint.h>
#include <string.h>

#include "lclgc.h"

/* What a method asks besides its object: nothing, a device, or an argument
 * index. */
enum lclgc_info_extra { EXTRA_NONE, EXTRA_DEVICE, EXTRA_ARG };

struct lclgc_info_method {
    const char *fn;     /* "clgc.Device:info" */
    const char *family; /* "cl_device_info" */
    enum lclgc_info_extra extra;
};

/* The Lua class of each object kind an info value may be, and how to take
 * a reference of the binding's own on it. Platforms and root devices have
 * no reference count (the binding makes no sub-devices). A kind without
 * a class comes back as a light userdata, not retained. */
static const struct {
    const char *kind;
    const char *class;
    cl_int (*retain)(void *obj);
} lclgc_info_kinds[] = {
    {"platform", LCLGC_PLATFORM, NULL},
    {"device", LCLGC_DEVICE, NULL},
    {"context", LCLGC_CONTEXT, (cl_int(*)(void *))clgc_clRetainContext},
    {"command_queue", LCLGC_QUEUE,
     (cl_int(*)(void *))clgc_clRetainCommandQueue},
    {"mem", LCLGC_BUFFER, (cl_int(*)(void *))clgc_clRetainMemObject},
    {"program", LCLGC_PROGRAM, (cl_int(*)(void *))clgc_clRetainProgram},
    {"kernel", LCLGC_KERNEL, (cl_int(*)(void *))clgc_clRetainKernel},
    {"event", LCLGC_EVENT, (cl_int(*)(void *))clgc_clRetainEvent},
    {"sampler", LCLGC_SAMPLER, (cl_int(*)(void *))clgc_clRetainSampler},
};

/* Push the handle obj of kind (nil for NULL), retained first: the handle
 * releases it when collected, and the object it came from keeps its own
 * reference. */
static void
lclgc_info_push_handle(lua_State *L, const char *kind, void *obj,
                       const char *fn)
{
    cl_int err;

    if (obj == NULL) {
        lua_pushnil(L);
        return;
    }
    for (size_t i = 0; i < sizeof(lclgc_info_kinds) / sizeof(*lclgc_info_kinds);
         i++) {
        if (strcmp(lclgc_info_kinds[i].kind, kind) != 0)
            continue;
        if (lclgc_info_kinds[i].retain != NULL &&
            (err = lclgc_info_kinds[i].retain(obj)) != CL_SUCCESS)
            lclgc_cl_error(L, fn, err);
        lclgc_push_handle(L, lclgc_info_kinds[i].class, obj);
        return;
    }
    lua_pushlightuserdata(L, obj);
}

/* A 32-bit enum value: its name in the group, or the number where the
 * group has no name for it (a negative execution status is an error). */
static void
lclgc_info_push_enum(lua_State *L, const char *group, int32_t v)
{
    const char *name = clgc_enum_name(clgc_enum_group_find(group), v);

    if (name != NULL)
        lua_pushstring(L, name);
    else
        lua_pushinteger(L, v);
}

/* A bitfield: the names of its set flags in a sequence, each bit the
 * group does not name as its value. */
static void
lclgc_info_push_bits(lua_State *L, const char *group, uint64_t bits)
{
    const clgc_enum_group_t *g = clgc_enum_group_find(group);
    lua_Integer n = 0;

    lua_createtable(L, 4, 0);
    for (int b = 0; b < 64; b++) {
        uint64_t bit = (uint64_t)1 << b;
        const char *name;

        if (!(bits & bit))
            continue;
        name = clgc_enum_name(g, (int64_t)bit);
        if (name != NULL)
            lua_pushstring(L, name);
        else
            lua_pushinteger(L, (lua_Integer)bit);
        lua_rawseti(L, -2, ++n);
    }
}

static void
lclgc_info_push_name_versions(lua_State *L, const void *buf, size_t n)
{
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        const cl_name_version *nv = (const cl_name_version *)buf + i;

        lua_createtable(L, 0, 5);
        lua_pushlstring(L, nv->name, strnlen(nv->name, sizeof(nv->name)));
        lua_setfield(L, -2, "name");
        lua_pushinteger(L, nv->version);
        lua_setfield(L, -2, "version");
        lua_pushinteger(L, CL_VERSION_MAJOR(nv->version));
        lua_setfield(L, -2, "major");
        lua_pushinteger(L, CL_VERSION_MINOR(nv->version));
        lua_setfield(L, -2, "minor");
        lua_pushinteger(L, CL_VERSION_PATCH(nv->version));
        lua_setfield(L, -2, "patch");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* A sequence of the n unsigned integers at buf, each `unit` bytes (a
 * 64-bit one past 2^63 wraps negative, as a negative intptr_t comes
 * back). */
static void
lclgc_info_push_ints(lua_State *L, const char *buf, size_t n, size_t unit)
{
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_Integer v;

        if (unit == 4)
            v = *(const uint32_t *)(const void *)(buf + i * unit);
        else
            v = (lua_Integer) *
                (const uint64_t *)(const void *)(buf + i * unit);
        lua_pushinteger(L, v);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* Push the value of `info`, size bytes at buf, as its type says. */
static void
lclgc_info_push(lua_State *L, const clgc_info_t *info, const char *buf,
                size_t size, const char *fn)
{
    size_t unit = clgc_info_type_size(info->type),
           n = unit ? size / unit : size;
    const void *v = buf;

    switch (info->type) {
    case CLGC_INFO_STRING:
        lua_pushlstring(L, buf, strnlen(buf, size));
        return;
    case CLGC_INFO_BYTES:
        lua_pushlstring(L, buf, size);
        return;
    case CLGC_INFO_STRING_ARRAY:
        lua_createtable(L, (int)n, 0);
        for (size_t i = 0; i < n; i++) {
            lua_pushstring(L, ((const char *const *)v)[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        return;
    case CLGC_INFO_UINT_ARRAY:
    case CLGC_INFO_ULONG_ARRAY:
    case CLGC_INFO_SIZE_ARRAY:
    case CLGC_INFO_PROPERTIES:
    case CLGC_INFO_PROPERTIES_INTPTR:
        lclgc_info_push_ints(L, buf, n, unit);
        return;
    case CLGC_INFO_ENUM_ARRAY:
        lua_createtable(L, (int)n, 0);
        for (size_t i = 0; i < n; i++) {
            lclgc_info_push_enum(L, info->group, ((const int32_t *)v)[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        return;
    case CLGC_INFO_HANDLE_ARRAY:
        lua_createtable(L, (int)n, 0);
        for (size_t i = 0; i < n; i++) {
            lclgc_info_push_handle(L, info->group, ((void *const *)v)[i], fn);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        return;
    case CLGC_INFO_NAME_VERSION_ARRAY:
        lclgc_info_push_name_versions(L, buf, n);
        return;
    default:
        break;
    }
    /* A bitfield in 32 bits: PoCL 3.1 answers
     * CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES so. */
    if (info->type == CLGC_INFO_BITFIELD && size == 4) {
        lclgc_info_push_bits(L, info->group, *(const uint32_t *)v);
        return;
    }
    /* One value, which the driver must have given whole. */
    if (n < 1)
        lclgc_error(L, "%s: %s: the driver returned %d bytes, %d expected", fn,
                    info->name, (int)size, (int)unit);
    switch (info->type) {
    case CLGC_INFO_BOOL:
        lua_pushboolean(L, *(const cl_bool *)v != CL_FALSE);
        break;
    case CLGC_INFO_INT:
        lua_pushinteger(L, *(const int32_t *)v);
        break;
    case CLGC_INFO_UINT:
        lua_pushinteger(L, *(const uint32_t *)v);
        break;
    case CLGC_INFO_ULONG:
        lua_pushinteger(L, (lua_Integer) * (const uint64_t *)v);
        break;
    case CLGC_INFO_SIZE:
        lua_pushinteger(L, (lua_Integer) * (const size_t *)v);
        break;
    case CLGC_INFO_FLOAT:
        lua_pushnumber(L, *(const cl_float *)v);
        break;
    case CLGC_INFO_POINTER:
        if (*(void *const *)v == NULL)
            lua_pushnil(L);
        else
            lua_pushlightuserdata(L, *(void *const *)v);
        break;
    case CLGC_INFO_BITFIELD:
        lclgc_info_push_bits(L, info->group, *(const uint64_t *)v);
        break;
    case CLGC_INFO_ENUM:
        lclgc_info_push_enum(L, info->group, *(const int32_t *)v);
        break;
    case CLGC_INFO_HANDLE:
        lclgc_info_push_handle(L, info->group, *(void *const *)v, fn);
        break;
    case CLGC_INFO_IMAGE_FORMAT:
        lua_createtable(L, 0, 2);
        lclgc_info_push_enum(
            L, "cl_channel_order",
            (int32_t)((const cl_image_format *)v)->image_channel_order);
        lua_setfield(L, -2, "order");
        lclgc_info_push_enum(
            L, "cl_channel_type",
            (int32_t)((const cl_image_format *)v)->image_channel_data_type);
        lua_setfield(L, -2, "type");
        break;
    default:
        lclgc_error(L, "%s: %s: no conversion for its type", fn, info->name);
    }
}

/* CL_PROGRAM_BINARIES: one string per device of the program, each as
 * long as CL_PROGRAM_BINARY_SIZES says (the caller allocates them). */
static int
lclgc_info_binaries(lua_State *L, const struct lclgc_info_method *m,
                    const clgc_info_family_t *f, void *obj)
{
    size_t size = 0, n;
    size_t *sizes;
    char **bins;
    cl_int err =
        clgc_info_get(f, obj, NULL, CL_PROGRAM_BINARY_SIZES, 0, NULL, &size);

    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, m->fn, err);
    n = size / sizeof(size_t);
    sizes = lua_newuserdatauv(L, size + sizeof(size_t), 0);
    err =
        clgc_info_get(f, obj, NULL, CL_PROGRAM_BINARY_SIZES, size, sizes, NULL);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, m->fn, err);
    bins = lua_newuserdatauv(L, (n + 1) * sizeof(*bins), 0);
    for (size_t i = 0; i < n; i++)
        bins[i] = lua_newuserdatauv(L, sizes[i] + 1, 0); /* kept on stack */
    err = clgc_info_get(f, obj, NULL, CL_PROGRAM_BINARIES, n * sizeof(*bins),
                        bins, NULL);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, m->fn, err);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushlstring(L, bins[i], sizes[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* obj:<method>([extra,] name) -> the value of the query called name. */
static int
lclgc_info_call(lua_State *L, const struct lclgc_info_method *m,
                const char *class)
{
    void *obj = lclgc_check(L, 1, class, m->fn);
    const clgc_info_family_t *f = clgc_info_family_find(m->family);
    clgc_info_extra_t extra = {NULL, 0, 0, NULL};
    int at = 2;
    const char *name;
    const clgc_info_t *info;
    size_t size = 0;
    char *buf;
    cl_int err;

    if (m->extra == EXTRA_DEVICE) {
        extra.device = lclgc_check(L, at++, LCLGC_DEVICE, m->fn);
    } else if (m->extra == EXTRA_ARG) {
        lua_Integer i = lclgc_checkint(L, at++, m->fn);

        if (i < 0 || i > UINT32_MAX)
            return lclgc_error(L, "%s: argument #2: index %I out of range",
                               m->fn, i);
        extra.arg_index = (cl_uint)i;
    }
    name = lclgc_checkstr(L, at, NULL, m->fn);
    info = clgc_info_find(f, name);
    if (info == NULL)
        return lclgc_error(L, "%s: unknown info name '%s' (not a %s)", m->fn,
                           name, m->family);
    if (info->type == CLGC_INFO_BINARIES)
        return lclgc_info_binaries(L, m, f, obj);
    err = clgc_info_get(f, obj, &extra, info->value, 0, NULL, &size);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, m->fn, err);
    buf = lua_newuserdatauv(L, size + 1, 0); /* freed by Lua's collector */
    /* An empty value is not asked for again: PoCL 3.1 copies
     * CL_CONTEXT_PROPERTIES from NULL when the context has none. */
    if (size > 0 && (err = clgc_info_get(f, obj, &extra, info->value, size, buf,
                                         NULL)) != CL_SUCCESS)
        return lclgc_cl_error(L, m->fn, err);
    buf[size] = '\0';
    lclgc_info_push(L, info, buf, size, m->fn);
    return 1;
}

#define METHOD(f, class, fn, family, extra)                                    \
    static int f(lua_State *L)                                                 \
    {                                                                          \
        static const struct lclgc_info_method m = {fn, family, extra};         \
                                                                               \
        return lclgc_info_call(L, &m, class);                                  \
    }
METHOD(lclgc_platform_info, LCLGC_PLATFORM, "clgc.Platform:info",
       "cl_platform_info", EXTRA_NONE)
METHOD(lclgc_device_info, LCLGC_DEVICE, "clgc.Device:info", "cl_device_info",
       EXTRA_NONE)
METHOD(lclgc_context_info, LCLGC_CONTEXT, "clgc.Context:info",
       "cl_context_info", EXTRA_NONE)
METHOD(lclgc_queue_info, LCLGC_QUEUE, "clgc.Queue:info",
       "cl_command_queue_info", EXTRA_NONE)
METHOD(lclgc_buffer_info, LCLGC_BUFFER, "clgc.Buffer:info", "cl_mem_info",
       EXTRA_NONE)
METHOD(lclgc_program_info, LCLGC_PROGRAM, "clgc.Program:info",
       "cl_program_info", EXTRA_NONE)
METHOD(lclgc_program_build_info, LCLGC_PROGRAM, "clgc.Program:build_info",
       "cl_program_build_info", EXTRA_DEVICE)
METHOD(lclgc_kernel_info, LCLGC_KERNEL, "clgc.Kernel:info", "cl_kernel_info",
       EXTRA_NONE)
METHOD(lclgc_kernel_work_group_info, LCLGC_KERNEL,
       "clgc.Kernel:work_group_info", "cl_kernel_work_group_info", EXTRA_DEVICE)
METHOD(lclgc_kernel_arg_info, LCLGC_KERNEL, "clgc.Kernel:arg_info",
       "cl_kernel_arg_info", EXTRA_ARG)
METHOD(lclgc_event_info, LCLGC_EVENT, "clgc.Event:info", "cl_event_info",
       EXTRA_NONE)
METHOD(lclgc_image_info, LCLGC_IMAGE, "clgc.Image:info", "cl_image_info",
       EXTRA_NONE)
METHOD(lclgc_image_mem_info, LCLGC_IMAGE, "clgc.Image:mem_info", "cl_mem_info",
       EXTRA_NONE)
METHOD(lclgc_sampler_info, LCLGC_SAMPLER, "clgc.Sampler:info",
       "cl_sampler_info", EXTRA_NONE)
#undef METHOD

/* info_names(family) -> { name... }, { [name] = type }: the registry's names
 * of a family ("cl_device_info") in its order, and the type of each value
 * ("string", "bitfield", ...: clgc/names.h's clgc_info_type_t). */
static int
lclgc_info_names(lua_State *L)
{
    const char *fn = "clgc.info_names";
    const char *name = lclgc_checkstr(L, 1, NULL, fn);
    const clgc_info_family_t *f = clgc_info_family_find(name);

    if (f == NULL)
        return lclgc_error(L, "%s: unknown info family '%s'", fn, name);
    lua_createtable(L, (int)f->count, 0);
    lua_createtable(L, 0, (int)f->count);
    for (size_t i = 0; i < f->count; i++) {
        lua_pushstring(L, f->infos[i].name);
        lua_rawseti(L, -3, (lua_Integer)i + 1);
        lua_pushstring(L, clgc_info_type_name(f->infos[i].type));
        lua_setfield(L, -2, f->infos[i].name);
    }
    return 2;
}

void
lclgc_open_info(lua_State *L)
{
    static const struct {
        const char *class;
        luaL_Reg methods[4];
    } classes[] = {
        {LCLGC_PLATFORM, {{"info", lclgc_platform_info}}},
        {LCLGC_DEVICE, {{"info", lclgc_device_info}}},
        {LCLGC_CONTEXT, {{"info", lclgc_context_info}}},
        {LCLGC_QUEUE, {{"info", lclgc_queue_info}}},
        {LCLGC_BUFFER, {{"info", lclgc_buffer_info}}},
        {LCLGC_PROGRAM,
         {{"info", lclgc_program_info},
          {"build_info", lclgc_program_build_info}}},
        {LCLGC_KERNEL,
         {{"info", lclgc_kernel_info},
          {"work_group_info", lclgc_kernel_work_group_info},
          {"arg_info", lclgc_kernel_arg_info}}},
        {LCLGC_EVENT, {{"info", lclgc_event_info}}},
        {LCLGC_IMAGE,
         {{"info", lclgc_image_info}, {"mem_info", lclgc_image_mem_info}}},
        {LCLGC_SAMPLER, {{"info", lclgc_sampler_info}}},
    };

    for (size_t i = 0; i < sizeof(classes) / sizeof(*classes); i++)
        lclgc_add_methods(L, classes[i].class, classes[i].methods);
    lua_pushcfunction(L, lclgc_info_names);
    lua_setfield(L, -2, "info_names");
}
