/* Look-ups in the tables the bindings share (src/gen/names.c). */

#include <ctype.h>
#include <string.h>

#include "names.h"

const char *
clgc_cl_error_name(int32_t code)
{
    for (size_t i = 0; i < clgc__n_cl_errors; i++)
        if (clgc__cl_errors[i].code == code)
            return clgc__cl_errors[i].name;
    return NULL;
}

size_t
clgc_cl_error_count(void)
{
    return clgc__n_cl_errors;
}

const char *
clgc_cl_error_at(size_t i, int32_t *code)
{
    if (i >= clgc__n_cl_errors)
        return NULL;
    if (code != NULL)
        *code = clgc__cl_errors[i].code;
    return clgc__cl_errors[i].name;
}

const char *
clgc_info_type_name(clgc_info_type_t type)
{
    static const char *const names[] = {"string",
                                        "string_array",
                                        "bool",
                                        "int",
                                        "uint",
                                        "ulong",
                                        "size",
                                        "float",
                                        "pointer",
                                        "uint_array",
                                        "ulong_array",
                                        "size_array",
                                        "bitfield",
                                        "enum",
                                        "enum_array",
                                        "handle",
                                        "handle_array",
                                        "properties",
                                        "properties_intptr",
                                        "name_version_array",
                                        "image_format",
                                        "binaries",
                                        "bytes"};

    _Static_assert(sizeof(names) / sizeof(names[0]) == CLGC_INFO_BYTES + 1,
                   "a name for every clgc_info_type_t");
    return (unsigned)type <= CLGC_INFO_BYTES ? names[type] : NULL;
}

size_t
clgc_info_type_size(clgc_info_type_t type)
{
    switch (type) {
    case CLGC_INFO_STRING_ARRAY:
    case CLGC_INFO_POINTER:
    case CLGC_INFO_HANDLE:
    case CLGC_INFO_HANDLE_ARRAY:
        return sizeof(void *);
    case CLGC_INFO_BOOL:
        return sizeof(cl_bool);
    case CLGC_INFO_INT:
    case CLGC_INFO_UINT:
    case CLGC_INFO_UINT_ARRAY:
    case CLGC_INFO_ENUM:
    case CLGC_INFO_ENUM_ARRAY:
        return sizeof(cl_uint);
    case CLGC_INFO_ULONG:
    case CLGC_INFO_ULONG_ARRAY:
    case CLGC_INFO_BITFIELD:
    case CLGC_INFO_PROPERTIES:
        return sizeof(cl_ulong);
    case CLGC_INFO_SIZE:
    case CLGC_INFO_SIZE_ARRAY:
        return sizeof(size_t);
    case CLGC_INFO_FLOAT:
        return sizeof(cl_float);
    case CLGC_INFO_PROPERTIES_INTPTR:
        return sizeof(intptr_t);
    case CLGC_INFO_NAME_VERSION_ARRAY:
        return sizeof(cl_name_version);
    case CLGC_INFO_IMAGE_FORMAT:
        return sizeof(cl_image_format);
    default:
        return 0;
    }
}

size_t
clgc_info_family_count(void)
{
    return clgc__n_info_families;
}

const clgc_info_family_t *
clgc_info_family_at(size_t i)
{
    return i < clgc__n_info_families ? &clgc__info_families[i] : NULL;
}

const clgc_info_family_t *
clgc_info_family_find(const char *name)
{
    for (size_t i = 0; name != NULL && i < clgc__n_info_families; i++)
        if (strcmp(clgc__info_families[i].name, name) == 0)
            return &clgc__info_families[i];
    return NULL;
}

static const clgc_info_t *
info_exact(const clgc_info_family_t *family, const char *name)
{
    for (size_t i = 0; i < family->count; i++)
        if (strcmp(family->infos[i].name, name) == 0)
            return &family->infos[i];
    return NULL;
}

/* A short name ("max-compute-units") as the registry spells it after
 * `prefix` ("CL_DEVICE_MAX_COMPUTE_UNITS"), in out; 0 if it does not fit.
 * Registry names are upper case but for a few letters ("CL_sRGB",
 * "..._4x8BIT_..."), which the exact look-up finds. */
static int
info_long_name(const char *prefix, const char *name, char *out, size_t size)
{
    size_t n = strlen(prefix);

    if (n + strlen(name) + 1 > size)
        return 0;
    memcpy(out, prefix, n);
    for (const char *c = name; *c != '\0'; c++)
        out[n++] = *c == '-' ? '_' : (char)toupper((unsigned char)*c);
    out[n] = '\0';
    return 1;
}

const clgc_info_t *
clgc_info_find(const clgc_info_family_t *family, const char *name)
{
    char full[128];
    const clgc_info_t *info;

    if (family == NULL || name == NULL)
        return NULL;
    if ((info = info_exact(family, name)) != NULL)
        return info;
    if (strncmp(name, "CL_", 3) == 0)
        return NULL;
    if (info_long_name(family->prefix, name, full, sizeof(full)) &&
        (info = info_exact(family, full)) != NULL)
        return info;
    if (info_long_name("CL_", name, full, sizeof(full)))
        return info_exact(family, full);
    return NULL;
}

const clgc_enum_group_t *
clgc_enum_group_find(const char *name)
{
    size_t lo = 0, hi = clgc__n_enum_groups;

    if (name == NULL)
        return NULL;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, clgc__enum_groups[mid].name);

        if (c == 0)
            return &clgc__enum_groups[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

const char *
clgc_enum_name(const clgc_enum_group_t *group, int64_t value)
{
    for (size_t i = 0; group != NULL && i < group->count; i++)
        if (group->values[i].value == value)
            return group->values[i].name;
    return NULL;
}

/* How many leading characters every name of group shares, up to and
 * with an '_': "CL_ADDRESS_" of cl_addressing_mode. */
static size_t
enum_prefix(const clgc_enum_group_t *group)
{
    const char *first = group->values[0].name;
    size_t n = strlen(first);

    for (size_t i = 1; i < group->count; i++)
        while (n > 0 && strncmp(first, group->values[i].name, n) != 0)
            n--;
    while (n > 0 && first[n - 1] != '_')
        n--;
    return n;
}

/* Whether short, in either case and with '-' for '_', is full. */
static int
enum_short_is(const char *full, const char *short_name)
{
    for (; *full != '\0'; full++, short_name++) {
        char c = *short_name == '-' ? '_' : *short_name;

        if (toupper((unsigned char)c) != toupper((unsigned char)*full))
            return 0;
    }
    return *short_name == '\0';
}

int
clgc_enum_find(const clgc_enum_group_t *group, const char *name, int64_t *value)
{
    size_t prefix;

    if (group == NULL || name == NULL || value == NULL || group->count == 0)
        return 0;
    for (size_t i = 0; i < group->count; i++)
        if (strcmp(group->values[i].name, name) == 0) {
            *value = group->values[i].value;
            return 1;
        }
    prefix = enum_prefix(group);
    for (size_t i = 0; i < group->count; i++) {
        const char *n = group->values[i].name;

        if (enum_short_is(n, name) || enum_short_is(n + prefix, name)) {
            *value = group->values[i].value;
            return 1;
        }
    }
    return 0;
}

size_t
clgc_object_kind_count(void)
{
    return clgc__n_object_kinds;
}

const clgc_object_kind_t *
clgc_object_kind_at(size_t i)
{
    return i < clgc__n_object_kinds ? &clgc__object_kinds[i] : NULL;
}

const clgc_object_kind_t *
clgc_object_kind_find(const char *name)
{
    for (size_t i = 0; name != NULL && i < clgc__n_object_kinds; i++)
        if (strcmp(clgc__object_kinds[i].name, name) == 0)
            return &clgc__object_kinds[i];
    return NULL;
}
