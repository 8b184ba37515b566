#ifndef CLGC_NAMES_H
#define CLGC_NAMES_H

/* Tables that every binding needs and none should write by hand, generated
 * from the OpenCL registry with the wrappers (gen/names.py writes
 * src/gen/names.c): the names of OpenCL's error codes, the names of every
 * info query with the type of its value, the names of the enum and bitfield
 * values those queries return, and the kinds of OpenCL object.
 *
 * The counts below are those of the registry clgc was generated from
 * (OpenCL 3.1.1's). Every table is constant: any thread may read it at any
 * time, in or out of a safe region. The types are plain C, so that this
 * header means the same whatever OpenCL headers the program includes. */

#include <stddef.h>
#include <stdint.h>

#include "clgc/common.h"

CLGC_BEGIN_DECLS

/* The name of the OpenCL error code `code` ("CL_INVALID_VALUE"), or NULL
 * when the registry has no error code of that value. The table holds the
 * 111 error codes of the registry: the 109 names that its features and
 * extensions require as error codes (CL_SUCCESS, 105 negative codes and
 * three positive codes of cl_img_use_gralloc_ptr and
 * cl_img_safety_mechanisms), then the two that only its error-code blocks
 * list (CL_PIPE_FULL_INTEL, CL_PIPE_EMPTY_INTEL); the placeholders a vendor
 * reserves codes with (CL_ERROR_RESERVED0_IMG, ...) are none. Four values
 * have two names (a KHR one and an Intel one), and the first the registry
 * requires is returned. Take the code as the full int32_t: a wider integer
 * a binding was given must be checked first, never cast (2^40 is not 0). */
CLGC_EXTERN const char *clgc_cl_error_name(int32_t code);

/* The number of names in the error table (111), and the i-th of them in
 * the registry's order, or NULL if i >= clgc_cl_error_count(). */
CLGC_EXTERN size_t clgc_cl_error_count(void);
CLGC_EXTERN const char *clgc_cl_error_at(size_t i, int32_t *code);

/* How an info query's value is laid out, in the units the query's size
 * counts (arrays: as many elements as the size holds):
 *
 *   STRING              char[], NUL-terminated
 *   STRING_ARRAY        const char *[], strings the driver owns
 *   BOOL                cl_bool (uint32_t)
 *   INT                 cl_int (int32_t)
 *   UINT                cl_uint (uint32_t); cl_version values too
 *   ULONG               cl_ulong (uint64_t)
 *   SIZE                size_t
 *   FLOAT               cl_float
 *   POINTER             void *, an address
 *   UINT_ARRAY          cl_uint[]
 *   ULONG_ARRAY         cl_ulong[]
 *   SIZE_ARRAY          size_t[]
 *   BITFIELD            cl_bitfield (uint64_t): flags of the enum group
 *   ENUM                a 32-bit enum of the group (cl_uint or cl_int)
 *   ENUM_ARRAY          32-bit enums of the group
 *   HANDLE              an object of the kind (may be NULL)
 *   HANDLE_ARRAY        objects of the kind
 *   PROPERTIES          cl_ulong[]: a property list, 0-terminated where the
 *                       driver returns one
 *   PROPERTIES_INTPTR   intptr_t[]: the same with intptr_t elements
 *   NAME_VERSION_ARRAY  cl_name_version[]: a cl_version (uint32_t) and
 *                       char[64] each
 *   IMAGE_FORMAT        cl_image_format: two 32-bit enums, of the groups
 *                       cl_channel_order and cl_channel_type
 *   BINARIES            unsigned char *[]: the caller allocates one buffer
 *                       per device, of the sizes CL_PROGRAM_BINARY_SIZES
 *                       gives, and passes the array of their addresses
 *   BYTES               a structure, union or opaque value: bytes */
typedef enum clgc_info_type {
    CLGC_INFO_STRING,
    CLGC_INFO_STRING_ARRAY,
    CLGC_INFO_BOOL,
    CLGC_INFO_INT,
    CLGC_INFO_UINT,
    CLGC_INFO_ULONG,
    CLGC_INFO_SIZE,
    CLGC_INFO_FLOAT,
    CLGC_INFO_POINTER,
    CLGC_INFO_UINT_ARRAY,
    CLGC_INFO_ULONG_ARRAY,
    CLGC_INFO_SIZE_ARRAY,
    CLGC_INFO_BITFIELD,
    CLGC_INFO_ENUM,
    CLGC_INFO_ENUM_ARRAY,
    CLGC_INFO_HANDLE,
    CLGC_INFO_HANDLE_ARRAY,
    CLGC_INFO_PROPERTIES,
    CLGC_INFO_PROPERTIES_INTPTR,
    CLGC_INFO_NAME_VERSION_ARRAY,
    CLGC_INFO_IMAGE_FORMAT,
    CLGC_INFO_BINARIES,
    CLGC_INFO_BYTES
} clgc_info_type_t;

/* The name of an info type in lower case ("string", "size_array",
 * "name_version_array": the enum's name without CLGC_INFO_), or NULL for
 * a value that is none of them. */
CLGC_EXTERN const char *clgc_info_type_name(clgc_info_type_t type);

/* The size in bytes of a value of this type, of one element of an array
 * type, or 0 for the types whose size is the value's own (STRING, BYTES,
 * BINARIES) or a value that is no type: what a binding checks the size
 * the driver returned against. */
CLGC_EXTERN size_t clgc_info_type_size(clgc_info_type_t type);

/* One info query. `group`: for BITFIELD, ENUM and ENUM_ARRAY the enum
 * group its values belong to (clgc_enum_group_find); for HANDLE and
 * HANDLE_ARRAY the object kind ("device", clgc_object_kind_find); for
 * PROPERTIES and PROPERTIES_INTPTR the property type
 * ("cl_context_properties"); else NULL. The registry has no types: they
 * are kept in gen/tables.py (INFO_TYPES), from the specification. */
typedef struct clgc_info {
    const char *name; /* "CL_DEVICE_NAME" */
    uint32_t value;   /* 0x102B */
    clgc_info_type_t type;
    const char *group;
    const char *origin; /* "CL_VERSION_1_0" or the extension's name */
} clgc_info_t;

/* One family of info queries: the names the registry lists for one
 * clGet*Info command (its param_name type, "cl_device_info"), in the
 * registry's order. `kind` is the object kind the command queries (the
 * first argument; clGetProgramBuildInfo, clGetKernelWorkGroupInfo and
 * clGetKernelSubGroupInfo also take a device, clGetKernelArgInfo an
 * argument index); `prefix` what the family's short names leave out. */
typedef struct clgc_info_family {
    const char *name;    /* "cl_device_info" */
    const char *command; /* "clGetDeviceInfo" */
    const char *kind;    /* "device" */
    const char *prefix;  /* "CL_DEVICE_" */
    size_t count;
    const clgc_info_t *infos; /* count entries */
} clgc_info_family_t;

/* The number of families (16: platform, device, context, command queue,
 * mem object, image, pipe, sampler, program, program build, kernel,
 * kernel work-group, kernel argument, kernel sub-group, event, event
 * profiling), and the i-th of them, or NULL if i >= the count. */
CLGC_EXTERN size_t clgc_info_family_count(void);
CLGC_EXTERN const clgc_info_family_t *clgc_info_family_at(size_t i);

/* The family called name ("cl_device_info"), or NULL. */
CLGC_EXTERN const clgc_info_family_t *clgc_info_family_find(const char *name);

/* What a query of some families takes besides its object: the device
 * (cl_program_build_info, cl_kernel_work_group_info,
 * cl_kernel_sub_group_info; a cl_device_id), the argument's index
 * (cl_kernel_arg_info) and the input value (cl_kernel_sub_group_info). */
typedef struct clgc_info_extra {
    void *device;
    uint32_t arg_index;
    size_t input_size;
    const void *input;
} clgc_info_extra_t;

/* Make query param of family on object (its family's kind: a
 * cl_device_id for cl_device_info) through the family's command's clgc_
 * wrapper (clGetDeviceInfo's: in a safe region), with the command's size,
 * value and size_ret arguments, and return its code (a cl_int). extra is
 * read for the families that take more than the object; it may be NULL
 * for the others. CL_INVALID_VALUE (-30) for a NULL family, one that is
 * not the table's, or a missing extra. So a binding answers every info
 * query with one call, whatever the family. */
CLGC_EXTERN int32_t clgc_info_get(const clgc_info_family_t *family,
                                  void *object, const clgc_info_extra_t *extra,
                                  uint32_t param, size_t size, void *value,
                                  size_t *size_ret);

/* The query of `family` called `name`, or NULL if the family has none
 * (or either argument is NULL). `name` is the registry's name
 * ("CL_DEVICE_MAX_COMPUTE_UNITS") or a short one: without "CL_" and the
 * family's prefix, in either case, with '_' or '-' between words
 * ("max_compute_units", "max-compute-units"), or without "CL_" alone
 * ("driver_version" for CL_DRIVER_VERSION). */
CLGC_EXTERN const clgc_info_t *clgc_info_find(const clgc_info_family_t *family,
                                              const char *name);

/* One value of an enum group: a bitfield's single-bit flag (value
 * 1 << bit) or an enum's value. */
typedef struct clgc_enum_value {
    const char *name; /* "CL_DEVICE_TYPE_CPU" */
    int64_t value;
} clgc_enum_value_t;

/* An enum group that info values use (the registry's, by the name of its
 * C type): its values in the registry's order. */
typedef struct clgc_enum_group {
    const char *name; /* "cl_device_type" */
    int bitfield;     /* 1: a bitfield; 0: an enum */
    size_t count;
    const clgc_enum_value_t *values;
} clgc_enum_group_t;

/* The group called name ("cl_device_fp_config"), or NULL. */
CLGC_EXTERN const clgc_enum_group_t *clgc_enum_group_find(const char *name);

/* The name of `value` in an enum group (for a bitfield: of the flag whose
 * value it is), the first the registry lists, or NULL if the group has
 * none of that value or group is NULL. */
CLGC_EXTERN const char *clgc_enum_name(const clgc_enum_group_t *group,
                                       int64_t value);

/* The value of the enum of group called name, in *value: 1, or 0 if the
 * group has no such name (or an argument is NULL). name is the registry's
 * ("CL_RGBA", "CL_ADDRESS_CLAMP_TO_EDGE") or what follows the prefix all
 * the group's names share ("rgba", "clamp_to_edge"), either in either
 * case and with '_' or '-' between words ("clamp-to-edge"): what a
 * binding takes as a symbol or a string. */
CLGC_EXTERN int clgc_enum_find(const clgc_enum_group_t *group, const char *name,
                               int64_t *value);

/* One kind of OpenCL object: its C type, the command that queries it and
 * the family it answers (the kind's first family), the commands that
 * retain and release it (NULL for platforms, which have no reference
 * count), and the error a NULL or invalid one gives. */
typedef struct clgc_object_kind {
    const char *name;    /* "command_queue" */
    const char *type;    /* "cl_command_queue" */
    const char *info;    /* "clGetCommandQueueInfo" */
    const char *retain;  /* "clRetainCommandQueue" */
    const char *release; /* "clReleaseCommandQueue" */
    int32_t invalid;     /* CL_INVALID_COMMAND_QUEUE's value */
    const char *invalid_name;
} clgc_object_kind_t;

/* The number of kinds (11: platform, device, context, command_queue, mem,
 * program, kernel, event, sampler, command_buffer_khr, semaphore_khr), the
 * i-th of them or NULL, and the kind called name or NULL. */
CLGC_EXTERN size_t clgc_object_kind_count(void);
CLGC_EXTERN const clgc_object_kind_t *clgc_object_kind_at(size_t i);
CLGC_EXTERN const clgc_object_kind_t *clgc_object_kind_find(const char *name);

CLGC_END_DECLS

#endif /* CLGC_NAMES_H */
