/* Platforms, devices, and the info queries by the registry's names and
 * types (clgc/names.h). */

#include <libguile.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guile-clgc.h"

static SCM
platforms_body(void)
{
    cl_uint n = 0;
    cl_platform_id ids[16];
    cl_int err;
    SCM l = SCM_EOL;

    guile_clgc_signals_note(); /* the first call loads PoCL */
    err = clgc_clGetPlatformIDs(16, ids, &n);
    guile_clgc_signals_restore();

    if (err == CL_PLATFORM_NOT_FOUND_KHR)
        return SCM_EOL;
    CHECK_CL(err, "platforms");
    if (n > 16)
        n = 16;
    while (n-- > 0)
        l = scm_cons(guile_clgc_wrap(K_PLATFORM, ids[n]), l);
    return l;
}
GUILE_CLGC_HELD0(platforms)

static SCM
devices_body(SCM platform, SCM type)
{
    void *p = guile_clgc_unwrap(K_PLATFORM, platform, 1, "devices");
    cl_device_type t = CL_DEVICE_TYPE_ALL;
    cl_device_id ids[16];
    cl_uint n = 0;
    cl_int err;
    SCM l = SCM_EOL;

    if (!SCM_UNBNDP(type)) {
        SCM_ASSERT_TYPE(scm_is_symbol(type), type, 2, "devices", "symbol");
        if (guile_clgc_sym_is(type, "cpu"))
            t = CL_DEVICE_TYPE_CPU;
        else if (guile_clgc_sym_is(type, "gpu"))
            t = CL_DEVICE_TYPE_GPU;
        else if (guile_clgc_sym_is(type, "accelerator"))
            t = CL_DEVICE_TYPE_ACCELERATOR;
        else if (guile_clgc_sym_is(type, "default"))
            t = CL_DEVICE_TYPE_DEFAULT;
        else if (!guile_clgc_sym_is(type, "all"))
            scm_misc_error("devices", "unknown device type: ~S",
                           scm_list_1(type));
    }
    guile_clgc_signals_note(); /* opening the device starts LLVM */
    err = clgc_clGetDeviceIDs(p, t, 16, ids, &n);
    guile_clgc_signals_restore();
    if (err == CL_DEVICE_NOT_FOUND)
        return SCM_EOL;
    CHECK_CL(err, "devices");
    if (n > 16)
        n = 16;
    while (n-- > 0)
        l = scm_cons(guile_clgc_wrap(K_DEVICE, ids[n]), l);
    return l;
}
GUILE_CLGC_HELD2(devices)

/* ------------------------------------------------------------------------
 * Info queries, by the registry's names and types (clgc/names.h) */

/* What a query asks besides its object: nothing, a device, or an argument
 * index. */
enum info_extra { EXTRA_NONE, EXTRA_DEVICE, EXTRA_ARG };

struct info_proc {
    const char *who;    /* "device-info" */
    const char *family; /* "cl_device_info" */
    enum kind kind;
    enum info_extra extra;
};

/* The query through clgc_info_get: extra is the device or a pointer to
 * the argument's index, as p->extra says. */
static cl_int
proc_get(const struct info_proc *p, void *obj, const void *extra, cl_uint param,
         size_t size, void *value, size_t *size_ret)
{
    clgc_info_extra_t x = {NULL, 0, 0, NULL};

    if (p->extra == EXTRA_DEVICE)
        x.device = (void *)extra;
    else if (p->extra == EXTRA_ARG)
        x.arg_index = *(const cl_uint *)extra;
    return clgc_info_get(clgc_info_family_find(p->family), obj, &x, param, size,
                         value, size_ret);
}

/* The binding's kind of each object kind of clgc's tables, and how to take
 * a reference of the wrapper's own on one (platforms and root devices have
 * none; the binding makes no sub-devices). A kind the binding lacks comes
 * back as a pointer. */
static const struct {
    const char *name;
    enum kind kind;
    cl_int (*retain)(void *obj);
} info_kinds[] = {
    {"platform", K_PLATFORM, NULL},
    {"device", K_DEVICE, NULL},
    {"context", K_CONTEXT, (cl_int(*)(void *))clgc_clRetainContext},
    {"command_queue", K_QUEUE, (cl_int(*)(void *))clgc_clRetainCommandQueue},
    {"mem", K_MEM, (cl_int(*)(void *))clgc_clRetainMemObject},
    {"program", K_PROGRAM, (cl_int(*)(void *))clgc_clRetainProgram},
    {"kernel", K_KERNEL, (cl_int(*)(void *))clgc_clRetainKernel},
    {"event", K_EVENT, (cl_int(*)(void *))clgc_clRetainEvent},
    {"sampler", K_SAMPLER, (cl_int(*)(void *))clgc_clRetainSampler},
};

/* The handle h of kind name as an object holding its own reference, or #f
 * for NULL. */
static SCM
info_handle(const char *name, void *h, const char *who)
{
    if (h == NULL)
        return SCM_BOOL_F;
    for (size_t i = 0; i < sizeof(info_kinds) / sizeof(info_kinds[0]); i++) {
        if (strcmp(info_kinds[i].name, name) != 0)
            continue;
        if (info_kinds[i].retain != NULL)
            CHECK_CL(info_kinds[i].retain(h), who);
        return guile_clgc_wrap(info_kinds[i].kind, h);
    }
    return scm_from_pointer(h, NULL);
}

/* A 32-bit enum value: its name as a symbol, or the integer where the
 * group has no name for it (a negative execution status is an error). */
static SCM
info_enum(const char *group, int32_t v)
{
    const char *name = clgc_enum_name(clgc_enum_group_find(group), v);

    return name != NULL ? scm_from_utf8_symbol(name) : scm_from_int32(v);
}

/* A bitfield: the names of its set flags as symbols, in bit order; a bit
 * the group does not name as its value. */
static SCM
info_bits(const char *group, uint64_t bits)
{
    const clgc_enum_group_t *g = clgc_enum_group_find(group);
    SCM l = SCM_EOL;

    for (int b = 63; b >= 0; b--) {
        uint64_t bit = (uint64_t)1 << b;
        const char *name;

        if (!(bits & bit))
            continue;
        name = clgc_enum_name(g, (int64_t)bit);
        l = scm_cons(name != NULL ? scm_from_utf8_symbol(name)
                                  : scm_from_uint64(bit),
                     l);
    }
    return l;
}

/* The i-th of the elements of `unit` bytes at buf, as the type says. */
static SCM
info_element(const clgc_info_t *info, const char *buf, size_t i, size_t unit,
             const char *who)
{
    const void *v = buf + i * unit;

    switch (info->type) {
    case CLGC_INFO_STRING_ARRAY:
        return guile_clgc_str_or_false(*(const char *const *)v);
    case CLGC_INFO_UINT_ARRAY:
        return scm_from_uint32(*(const uint32_t *)v);
    case CLGC_INFO_ULONG_ARRAY:
    case CLGC_INFO_PROPERTIES:
        return scm_from_uint64(*(const uint64_t *)v);
    case CLGC_INFO_SIZE_ARRAY:
        return scm_from_size_t(*(const size_t *)v);
    case CLGC_INFO_PROPERTIES_INTPTR:
        return scm_from_intptr_t(*(const intptr_t *)v);
    case CLGC_INFO_ENUM_ARRAY:
        return info_enum(info->group, *(const int32_t *)v);
    case CLGC_INFO_HANDLE_ARRAY:
        return info_handle(info->group, *(void *const *)v, who);
    case CLGC_INFO_NAME_VERSION_ARRAY: {
        const cl_name_version *nv = v;

        return scm_cons(scm_from_utf8_stringn(
                            nv->name, strnlen(nv->name, sizeof(nv->name))),
                        scm_from_uint32(nv->version));
    }
    default:
        return SCM_BOOL_F;
    }
}

/* One value of a scalar type, whole at v. */
static SCM
info_scalar(const clgc_info_t *info, const void *v, const char *who)
{
    switch (info->type) {
    case CLGC_INFO_BOOL:
        return scm_from_bool(*(const cl_bool *)v != CL_FALSE);
    case CLGC_INFO_INT:
        return scm_from_int32(*(const int32_t *)v);
    case CLGC_INFO_UINT:
        return scm_from_uint32(*(const uint32_t *)v);
    case CLGC_INFO_ULONG:
        return scm_from_uint64(*(const uint64_t *)v);
    case CLGC_INFO_SIZE:
        return scm_from_size_t(*(const size_t *)v);
    case CLGC_INFO_FLOAT:
        return scm_from_double(*(const cl_float *)v);
    case CLGC_INFO_POINTER:
        return *(void *const *)v == NULL
                   ? SCM_BOOL_F
                   : scm_from_pointer(*(void *const *)v, NULL);
    case CLGC_INFO_BITFIELD:
        return info_bits(info->group, *(const uint64_t *)v);
    case CLGC_INFO_ENUM:
        return info_enum(info->group, *(const int32_t *)v);
    case CLGC_INFO_HANDLE:
        return info_handle(info->group, *(void *const *)v, who);
    case CLGC_INFO_IMAGE_FORMAT: {
        const cl_image_format *f = v;

        return scm_cons(
            info_enum("cl_channel_order", (int32_t)f->image_channel_order),
            info_enum("cl_channel_type", (int32_t)f->image_channel_data_type));
    }
    default:
        scm_misc_error(who, "~A: no conversion for its type",
                       scm_list_1(scm_from_utf8_string(info->name)));
        return SCM_BOOL_F;
    }
}

/* The value of info, size bytes at buf (malloc'd: freed on a non-local
 * exit by the dynwind the caller opened). */
static SCM
info_value(const clgc_info_t *info, const char *buf, size_t size,
           const char *who)
{
    size_t unit = clgc_info_type_size(info->type),
           n = unit ? size / unit : size;
    SCM l = SCM_EOL;

    switch (info->type) {
    case CLGC_INFO_STRING:
        return scm_from_utf8_stringn(buf, strnlen(buf, size));
    case CLGC_INFO_BYTES: {
        SCM bv = scm_c_make_bytevector(size);

        memcpy(SCM_BYTEVECTOR_CONTENTS(bv), buf, size);
        return bv;
    }
    case CLGC_INFO_STRING_ARRAY:
    case CLGC_INFO_UINT_ARRAY:
    case CLGC_INFO_ULONG_ARRAY:
    case CLGC_INFO_SIZE_ARRAY:
    case CLGC_INFO_PROPERTIES:
    case CLGC_INFO_PROPERTIES_INTPTR:
    case CLGC_INFO_ENUM_ARRAY:
    case CLGC_INFO_HANDLE_ARRAY:
    case CLGC_INFO_NAME_VERSION_ARRAY:
        while (n-- > 0)
            l = scm_cons(info_element(info, buf, n, unit, who), l);
        return l;
    default:
        break;
    }
    /* A bitfield in 32 bits: PoCL 3.1 answers
     * CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES so. */
    if (info->type == CLGC_INFO_BITFIELD && size == 4)
        return info_bits(info->group, *(const uint32_t *)(const void *)buf);
    if (n < 1)
        scm_misc_error(who, "~A: the driver returned ~A bytes, ~A expected",
                       scm_list_3(scm_from_utf8_string(info->name),
                                  scm_from_size_t(size),
                                  scm_from_size_t(unit)));
    return info_scalar(info, buf, who);
}

/* CL_PROGRAM_BINARIES in *out: one bytevector per device of the program
 * (clgc_program_binaries), empty for a device it has none for. Returns
 * OpenCL's code. */
static cl_int
info_binaries(void *obj, SCM *out)
{
    clgc_binaries_t *b;
    cl_int err = clgc_program_binaries(obj, &b);

    if (err != CL_SUCCESS)
        return err;
    scm_dynwind_begin(0);
    scm_dynwind_free(b); /* also if making a bytevector throws */
    *out = SCM_EOL;
    for (cl_uint i = b->count; i-- > 0;) {
        SCM bv = scm_c_make_bytevector(b->lengths[i]);

        if (b->lengths[i] > 0)
            memcpy(SCM_BYTEVECTOR_CONTENTS(bv), b->binaries[i], b->lengths[i]);
        *out = scm_cons(bv, *out);
    }
    scm_dynwind_end();
    return CL_SUCCESS;
}

/* The value of the query info of obj in *out; returns OpenCL's code. */
static cl_int
info_fetch(const struct info_proc *p, void *obj, const void *extra,
           const clgc_info_t *info, SCM *out)
{
    size_t size = 0;
    char *buf;
    cl_int err;

    if (info->type == CLGC_INFO_BINARIES)
        return info_binaries(obj, out);
    err = proc_get(p, obj, extra, info->value, 0, NULL, &size);
    if (err != CL_SUCCESS)
        return err;
    scm_dynwind_begin(0);
    buf = scm_malloc(size + 1);
    scm_dynwind_free(buf);
    /* An empty value is not asked for again: PoCL 3.1 copies
     * CL_CONTEXT_PROPERTIES from NULL when the context has none. */
    if (size > 0)
        err = proc_get(p, obj, extra, info->value, size, buf, NULL);
    buf[size] = '\0';
    if (err == CL_SUCCESS)
        *out = info_value(info, buf, size, p->who);
    scm_dynwind_end();
    return err;
}

/* The query of p's family that key (a symbol) names. */
static const clgc_info_t *
info_lookup(const struct info_proc *p, SCM key, int pos)
{
    const clgc_info_t *info;
    char *name;

    SCM_ASSERT_TYPE(scm_is_symbol(key), key, pos, p->who, "symbol");
    name = guile_clgc_cstring(scm_symbol_to_string(key), pos, p->who);
    info = clgc_info_find(clgc_info_family_find(p->family), name);
    free(name);
    if (info == NULL)
        scm_misc_error(p->who, "unknown info key ~S (not a ~A)",
                       scm_list_2(key, scm_from_utf8_string(p->family)));
    return info;
}

/* (<proc> obj [extra] key) for the procedure p. */
static SCM
info_call(const struct info_proc *p, SCM obj, SCM extra, SCM key)
{
    void *h = guile_clgc_unwrap(p->kind, obj, 1, p->who);
    const void *x = NULL;
    cl_uint index = 0;

    /* PoCL answers a buffer's width 0 rather than refuse it. */
    if (strcmp(p->family, "cl_image_info") == 0 &&
        clgc_mem_kind(h) != CLGC_ARG_IMAGE)
        scm_wrong_type_arg_msg(p->who, 1, obj, "image");

    if (p->extra == EXTRA_DEVICE) {
        x = guile_clgc_unwrap(K_DEVICE, extra, 2, p->who);
    } else if (p->extra == EXTRA_ARG) {
        index = (cl_uint)guile_clgc_to_unsigned(extra, UINT32_MAX, 2, p->who);
        x = &index;
    }
    const clgc_info_t *info;
    SCM v = SCM_BOOL_F;

    info = info_lookup(p, key, p->extra == EXTRA_NONE ? 2 : 3);
    cl_int err;

    err = info_fetch(p, h, x, info, &v);
    guile_clgc_signals_restore();
    CHECK_CL(err, p->who);
    return v;
}

/* The procedures, by index; the first of each kind is the family of its
 * object (info-alist's). */
static const struct info_proc info_procs[] = {
    {"platform-info", "cl_platform_info", K_PLATFORM, EXTRA_NONE},
    {"device-info", "cl_device_info", K_DEVICE, EXTRA_NONE},
    {"context-info", "cl_context_info", K_CONTEXT, EXTRA_NONE},
    {"command-queue-info", "cl_command_queue_info", K_QUEUE, EXTRA_NONE},
    {"mem-info", "cl_mem_info", K_MEM, EXTRA_NONE},
    {"program-info", "cl_program_info", K_PROGRAM, EXTRA_NONE},
    {"kernel-info", "cl_kernel_info", K_KERNEL, EXTRA_NONE},
    {"event-info", "cl_event_info", K_EVENT, EXTRA_NONE},
    {"event-profiling-info", "cl_profiling_info", K_EVENT, EXTRA_NONE},
    {"program-build-info", "cl_program_build_info", K_PROGRAM, EXTRA_DEVICE},
    {"kernel-work-group-info", "cl_kernel_work_group_info", K_KERNEL,
     EXTRA_DEVICE},
    {"kernel-arg-info", "cl_kernel_arg_info", K_KERNEL, EXTRA_ARG},
    {"sampler-info", "cl_sampler_info", K_SAMPLER, EXTRA_NONE},
    {"image-info", "cl_image_info", K_MEM, EXTRA_NONE},
};

#define INFO_PROC(f, i)                                                        \
    static SCM f##_body(SCM obj, SCM key)                                      \
    {                                                                          \
        return info_call(&info_procs[i], obj, SCM_UNDEFINED, key);             \
    }                                                                          \
    GUILE_CLGC_HELD2(f)
INFO_PROC(platform_info, 0)
INFO_PROC(device_info, 1)
INFO_PROC(context_info, 2)
INFO_PROC(command_queue_info, 3)
INFO_PROC(mem_info, 4)
INFO_PROC(program_info, 5)
INFO_PROC(kernel_info, 6)
INFO_PROC(event_info, 7)
INFO_PROC(event_profiling_info, 8)
INFO_PROC(sampler_info, 12)
INFO_PROC(image_info, 13)
#undef INFO_PROC
#define INFO_PROC(f, i)                                                        \
    static SCM f##_body(SCM obj, SCM extra, SCM key)                           \
    {                                                                          \
        return info_call(&info_procs[i], obj, extra, key);                     \
    }                                                                          \
    GUILE_CLGC_HELD3(f)
INFO_PROC(program_build_info, 9)
INFO_PROC(kernel_work_group_info, 10)
INFO_PROC(kernel_arg_info, 11)
#undef INFO_PROC

/* (info-names family): the registry's names of a family ('cl_device_info)
 * in its order, each with the type of its value: ((CL_DEVICE_TYPE .
 * bitfield) ...), the types of clgc/names.h. */
static SCM
info_names_body(SCM family)
{
    const clgc_info_family_t *f;
    char *name;
    SCM l = SCM_EOL;

    SCM_ASSERT_TYPE(scm_is_symbol(family), family, 1, "info-names", "symbol");
    name = scm_to_utf8_string(scm_symbol_to_string(family));
    f = clgc_info_family_find(name);
    free(name);
    if (f == NULL)
        scm_misc_error("info-names", "unknown info family ~S",
                       scm_list_1(family));
    for (size_t i = f->count; i-- > 0;)
        l = scm_acons(
            scm_from_utf8_symbol(f->infos[i].name),
            scm_from_utf8_symbol(clgc_info_type_name(f->infos[i].type)), l);
    return l;
}
GUILE_CLGC_HELD1(info_names)

/* (info-alist obj): every query of obj's family (platform, device,
 * context, command queue, mem object, program, kernel or event) that the
 * driver answers, as (CL_NAME . value) in the registry's order. A query it
 * refuses (one the device lacks) is left out. */
static SCM
info_alist_body(SCM obj)
{
    int k = guile_clgc_kind_of(obj);
    const struct info_proc *p = NULL;
    const clgc_info_family_t *f;
    SCM l = SCM_EOL;

    for (size_t i = 0; k >= 0 && i < sizeof(info_procs) / sizeof(info_procs[0]);
         i++)
        if (info_procs[i].kind == (enum kind)k) {
            p = &info_procs[i];
            break;
        }
    if (p == NULL)
        scm_wrong_type_arg_msg("info-alist", 1, obj, "OpenCL object");
    f = clgc_info_family_find(p->family);
    for (size_t i = f->count; i-- > 0;) {
        SCM v = SCM_BOOL_F;

        if (info_fetch(p, guile_clgc_unwrap(p->kind, obj, 1, "info-alist"),
                       NULL, &f->infos[i], &v) == CL_SUCCESS)
            l = scm_acons(scm_from_utf8_symbol(f->infos[i].name), v, l);
    }
    return l;
}
GUILE_CLGC_HELD1(info_alist)

const struct guile_clgc_proc guile_clgc_info_procs[] = {
    {"platforms", 0, 0, 0, platforms,
     "(platforms) -> the OpenCL platforms, a list of cl-platform objects."},
    {"platform-info", 2, 0, 0, platform_info,
     "(platform-info platform key) -> the value of the cl_platform_info query "
     "key (a symbol: 'CL_PLATFORM_NAME or 'name)."},
    {"devices", 1, 1, 0, devices,
     "(devices platform [type]) -> the platform's devices of type all "
     "(default), cpu, gpu, accelerator or default."},
    {"device-info", 2, 0, 0, device_info,
     "(device-info device key) -> the value of the cl_device_info query key "
     "('max-compute-units, 'CL_DEVICE_NAME, ...)."},
    {"context-info", 2, 0, 0, context_info,
     "(context-info context key) -> the value of the cl_context_info query "
     "key."},
    {"command-queue-info", 2, 0, 0, command_queue_info,
     "(command-queue-info queue key) -> the value of the cl_command_queue_info "
     "query key."},
    {"mem-info", 2, 0, 0, mem_info,
     "(mem-info buffer key) -> the value of the cl_mem_info query key."},
    {"program-info", 2, 0, 0, program_info,
     "(program-info program key) -> the value of the cl_program_info query key "
     "(CL_PROGRAM_BINARIES: a list of bytevectors)."},
    {"program-build-info", 3, 0, 0, program_build_info,
     "(program-build-info program device key) -> the value of the "
     "cl_program_build_info query key for device."},
    {"kernel-info", 2, 0, 0, kernel_info,
     "(kernel-info kernel key) -> the value of the cl_kernel_info query key."},
    {"kernel-work-group-info", 3, 0, 0, kernel_work_group_info,
     "(kernel-work-group-info kernel device key) -> the value of the "
     "cl_kernel_work_group_info query key for device."},
    {"sampler-info", 2, 0, 0, sampler_info,
     "(sampler-info sampler key) -> the value of the cl_sampler_info query "
     "key ('addressing-mode, 'CL_SAMPLER_FILTER_MODE, ...)."},
    {"image-info", 2, 0, 0, image_info,
     "(image-info image key) -> the value of the cl_image_info query key "
     "('width, 'CL_IMAGE_FORMAT, ...)."},
    {"kernel-arg-info", 3, 0, 0, kernel_arg_info,
     "(kernel-arg-info kernel index key) -> the value of the "
     "cl_kernel_arg_info query key for argument index (from 0)."},
    {"event-info", 2, 0, 0, event_info,
     "(event-info event key) -> the value of the cl_event_info query key."},
    {"event-profiling-info", 2, 0, 0, event_profiling_info,
     "(event-profiling-info event key) -> the value of the cl_profiling_info "
     "query key (the queue needs profiling)."},
    {"info-alist", 1, 0, 0, info_alist,
     "(info-alist obj) -> every query of obj's family the driver answers, as "
     "((CL_NAME . value) ...)."},
    {"info-names", 1, 0, 0, info_names,
     "(info-names family) -> the names of an info family ('cl_device_info) "
     "with their value types, ((CL_DEVICE_TYPE . bitfield) ...)."},
    {NULL, 0, 0, 0, NULL, NULL}};
