/* A kernel's argument table (include/clgc/binding.h): what each argument
 * takes is read once, from the kernel's argument info, and every value a
 * binding sets is checked against it before clSetKernelArg sees it. */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgc/binding.h"
#include "clgc/names.h"
#include "internal.h"

struct clgc__arg {
    clgc_arg_kind_t kind;
    int set;
    size_t size;  /* a value's, from its type's name; 0: not told */
    size_t local; /* a local argument's size, once set */
    void *held;   /* the buffer, image or sampler set, retained */
    int sampler;  /* held is a sampler */
    char name[32];
    char type[32];
};

struct clgc_kernel_args {
    cl_kernel kernel;
    cl_uint n;
    cl_ulong local_limit; /* 0: not known */
    char kernel_name[48];
    char message[256];
    struct clgc__arg arg[];
};

/* src into dst of n bytes, cut to fit: names in messages. */
static void
clgc__copy_name(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);

    if (len >= n)
        len = n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* Whether a by-value type is one of OpenCL C's opaque ones (its size is
 * a pointer's, and bytes given for it would be taken for one). */
static int
clgc__opaque_type(const char *type)
{
    static const char *const opaque[] = {
        "sampler_t", "queue_t", "clk_event_t", "reserve_id_t", "event_t", NULL};

    if (strncmp(type, "image", 5) == 0)
        return 1;
    for (int i = 0; opaque[i] != NULL; i++)
        if (strcmp(type, opaque[i]) == 0)
            return 1;
    return 0;
}

/* The size of a by-value argument of the type OpenCL C calls name
 * ("float4", "uint"), or 0 for a type whose size the name does not tell
 * (a structure, a typedef). */
static size_t
clgc__value_type_size(const char *name)
{
    static const struct {
        const char *name;
        size_t size;
    } types[] = {{"char", 1},
                 {"uchar", 1},
                 {"short", 2},
                 {"ushort", 2},
                 {"int", 4},
                 {"uint", 4},
                 {"long", 8},
                 {"ulong", 8},
                 {"float", 4},
                 {"double", 8},
                 {"half", 2},
                 {"bool", 1},
                 {"size_t", sizeof(size_t)}};
    size_t len = strlen(name), blen = len, n = 1;

    while (blen > 0 && name[blen - 1] >= '0' && name[blen - 1] <= '9')
        blen--;
    if (blen < len)
        n = (size_t)strtoul(name + blen, NULL, 10);
    if (n != 1 && n != 2 && n != 3 && n != 4 && n != 8 && n != 16)
        return 0;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
        if (strlen(types[t].name) == blen &&
            strncmp(types[t].name, name, blen) == 0)
            return (n == 3 ? 4 : n) * types[t].size;
    return 0;
}

/* What argument i of k takes, and its name and type; CLGC_ARG_UNKNOWN
 * where the driver keeps no argument info. */
static cl_int
clgc__arg_read(cl_kernel k, cl_uint i, struct clgc__arg *a)
{
    cl_kernel_arg_address_qualifier aq = 0;
    cl_kernel_arg_type_qualifier tq = 0;
    cl_int err = clgc_clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
                                         sizeof(aq), &aq, NULL);
    char type[256] = "", name[256] = "";

    if (err == CL_KERNEL_ARG_INFO_NOT_AVAILABLE) {
        a->kind = CLGC_ARG_UNKNOWN;
        return CL_SUCCESS;
    }
    if (err == CL_SUCCESS)
        err = clgc_clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME,
                                      sizeof(type) - 1, type, NULL);
    if (err == CL_SUCCESS)
        err = clgc_clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER,
                                      sizeof(tq), &tq, NULL);
    if (err != CL_SUCCESS)
        return err;
    if (clgc_clGetKernelArgInfo(k, i, CL_KERNEL_ARG_NAME, sizeof(name) - 1,
                                name, NULL) != CL_SUCCESS)
        name[0] = '\0';
    clgc__copy_name(a->name, sizeof(a->name), name);
    clgc__copy_name(a->type, sizeof(a->type), type);
    if ((tq & CL_KERNEL_ARG_TYPE_PIPE) != 0)
        a->kind = CLGC_ARG_OTHER;
    else if (strchr(type, '*') != NULL)
        a->kind = aq == CL_KERNEL_ARG_ADDRESS_LOCAL ? CLGC_ARG_LOCAL
                  : aq == CL_KERNEL_ARG_ADDRESS_GLOBAL ||
                          aq == CL_KERNEL_ARG_ADDRESS_CONSTANT
                      ? CLGC_ARG_BUFFER
                      : CLGC_ARG_OTHER;
    else if (strncmp(type, "image", 5) == 0)
        a->kind = CLGC_ARG_IMAGE;
    else if (strcmp(type, "sampler_t") == 0)
        a->kind = CLGC_ARG_SAMPLER;
    else if (aq == CL_KERNEL_ARG_ADDRESS_PRIVATE && !clgc__opaque_type(type))
        a->kind = CLGC_ARG_VALUE, a->size = clgc__value_type_size(type);
    else
        a->kind = CLGC_ARG_OTHER;
    return CL_SUCCESS;
}

/* The least local memory of the devices of k's program; 0 if a query
 * fails (the driver's check alone). */
static cl_ulong
clgc__local_limit(cl_kernel k)
{
    cl_program p = NULL;
    cl_device_id ids[64];
    size_t size = 0;
    cl_ulong least = 0;

    if (clgc_clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof(p), &p, NULL) !=
            CL_SUCCESS ||
        clgc_clGetProgramInfo(p, CL_PROGRAM_DEVICES, sizeof(ids), ids, &size) !=
            CL_SUCCESS)
        return 0;
    for (size_t d = 0; d < size / sizeof(ids[0]); d++) {
        cl_ulong n = 0;

        if (clgc_clGetDeviceInfo(ids[d], CL_DEVICE_LOCAL_MEM_SIZE, sizeof(n),
                                 &n, NULL) != CL_SUCCESS)
            return 0;
        if (d == 0 || n < least)
            least = n;
    }
    return least;
}

clgc_kernel_args_t *
clgc_kernel_args_new(cl_kernel kernel, cl_int *errcode_ret)
{
    clgc_kernel_args_t *t = NULL;
    cl_uint n = 0;
    cl_int err;
    char name[256] = "";

    err = kernel == NULL || !clgc__object_ok(kernel)
              ? CL_INVALID_KERNEL
              : clgc_clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof(n), &n,
                                     NULL);
    if (err == CL_SUCCESS &&
        (t = calloc(1, sizeof(*t) + n * sizeof(t->arg[0]))) == NULL)
        err = CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; err == CL_SUCCESS && i < n; i++)
        err = clgc__arg_read(kernel, i, &t->arg[i]);
    if (err == CL_SUCCESS)
        err = clgc_clRetainKernel(kernel);
    if (errcode_ret != NULL)
        *errcode_ret = err;
    if (err != CL_SUCCESS) {
        free(t);
        return NULL;
    }
    if (clgc_clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(name) - 1,
                             name, NULL) != CL_SUCCESS)
        name[0] = '\0';
    clgc__copy_name(t->kernel_name, sizeof(t->kernel_name), name);
    t->kernel = kernel;
    t->n = n;
    t->local_limit = clgc__local_limit(kernel);
    return t;
}

/* Let go of what argument a holds. */
static void
clgc__arg_drop(struct clgc__arg *a)
{
    void *held = a->held;

    a->held = NULL;
    if (held != NULL && a->sampler)
        (void)clgc_clReleaseSampler(held);
    else if (held != NULL)
        (void)clgc_clReleaseMemObject(held);
}

void
clgc_kernel_args_free(clgc_kernel_args_t *t)
{
    if (t == NULL)
        return;
    for (cl_uint i = 0; i < t->n; i++)
        clgc__arg_drop(&t->arg[i]);
    (void)clgc_clReleaseKernel(t->kernel);
    free(t);
}

cl_kernel
clgc_kernel_args_kernel(const clgc_kernel_args_t *t)
{
    return t->kernel;
}

cl_uint
clgc_kernel_args_count(const clgc_kernel_args_t *t)
{
    return t->n;
}

clgc_arg_kind_t
clgc_kernel_args_kind(const clgc_kernel_args_t *t, cl_uint index)
{
    return index < t->n ? t->arg[index].kind : CLGC_ARG_OTHER;
}

const char *
clgc_kernel_args_message(const clgc_kernel_args_t *t)
{
    return t->message;
}

/* Fail with err and a sentence about argument i: "argument 1 (y) of
 * kernel saxpy " and what follows. */
static cl_int
clgc__arg_fail(clgc_kernel_args_t *t, cl_uint i, cl_int err, const char *fmt,
               ...)
{
    int n;
    va_list ap;

    if (i < t->n && t->arg[i].name[0] != '\0')
        n = snprintf(t->message, sizeof(t->message),
                     "argument %u (%s) of kernel %s ", i, t->arg[i].name,
                     t->kernel_name);
    else
        n = snprintf(t->message, sizeof(t->message),
                     "argument %u of kernel %s ", i, t->kernel_name);
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof(t->message))
        vsnprintf(t->message + n, sizeof(t->message) - (size_t)n, fmt, ap);
    va_end(ap);
    return err;
}

/* What kind k takes, as a sentence says it. */
static const char *
clgc__kind_wants(clgc_arg_kind_t k)
{
    switch (k) {
    case CLGC_ARG_BUFFER:
        return "a __global or __constant pointer: a buffer";
    case CLGC_ARG_LOCAL:
        return "a __local pointer: a size of local memory";
    case CLGC_ARG_VALUE:
        return "a value";
    case CLGC_ARG_IMAGE:
        return "an image";
    case CLGC_ARG_SAMPLER:
        return "a sampler";
    default:
        return "of a kind clgc cannot set (a pipe, a queue, ...)";
    }
}

cl_int
clgc_kernel_args_check(clgc_kernel_args_t *t, cl_uint i, clgc_arg_kind_t given)
{
    static const char *const what[] = {
        [CLGC_ARG_BUFFER] = "a buffer",
        [CLGC_ARG_LOCAL] = "a size of local memory",
        [CLGC_ARG_VALUE] = "a value",
        [CLGC_ARG_IMAGE] = "an image",
        [CLGC_ARG_SAMPLER] = "a sampler",
        [CLGC_ARG_OTHER] = "a pipe"};
    clgc_arg_kind_t k;

    t->message[0] = '\0';
    if (i >= t->n) {
        snprintf(t->message, sizeof(t->message),
                 "argument %u of kernel %s: it has %u", i, t->kernel_name,
                 t->n);
        return CL_INVALID_ARG_INDEX;
    }
    if (given <= CLGC_ARG_UNKNOWN || given > CLGC_ARG_OTHER)
        given = CLGC_ARG_OTHER;
    k = t->arg[i].kind;
    if (k == given || k == CLGC_ARG_UNKNOWN)
        return CL_SUCCESS;
    if (k == CLGC_ARG_VALUE)
        return clgc__arg_fail(t, i, CL_INVALID_ARG_VALUE,
                              "is a value (%s), not %s", t->arg[i].type,
                              what[given]);
    return clgc__arg_fail(t, i, CL_INVALID_ARG_VALUE, "is %s, not %s",
                          clgc__kind_wants(k), what[given]);
}

/* Set argument i to size bytes at value, which holds held (retained
 * already, NULL: none): the old held object goes once it is set. */
static cl_int
clgc__arg_set(clgc_kernel_args_t *t, cl_uint i, size_t size, const void *value,
              void *held, int sampler)
{
    struct clgc__arg *a = &t->arg[i];
    cl_int err = clgc_clSetKernelArg(t->kernel, i, size, value);

    if (err != CL_SUCCESS) {
        struct clgc__arg given = {.held = held, .sampler = sampler};

        clgc__arg_drop(&given);
        return clgc__arg_fail(t, i, err, "was refused: %s",
                              clgc_cl_error_name(err));
    }
    clgc__arg_drop(a);
    a->held = held;
    a->sampler = sampler;
    a->set = 1;
    a->local = value == NULL ? size : 0;
    return CL_SUCCESS;
}

clgc_arg_kind_t
clgc_mem_kind(cl_mem mem)
{
    cl_mem_object_type type = 0;

    if (mem == NULL || !clgc__object_ok(mem) ||
        clgc_clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof(type), &type, NULL) !=
            CL_SUCCESS)
        return CLGC_ARG_UNKNOWN;
    switch (type) {
    case CL_MEM_OBJECT_BUFFER:
        return CLGC_ARG_BUFFER;
    case CL_MEM_OBJECT_IMAGE2D:
    case CL_MEM_OBJECT_IMAGE3D:
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER:
        return CLGC_ARG_IMAGE;
    default:
        return CLGC_ARG_OTHER;
    }
}

cl_int
clgc_kernel_args_set_mem(clgc_kernel_args_t *t, cl_uint index, cl_mem mem)
{
    clgc_arg_kind_t given = clgc_mem_kind(mem);
    cl_int err;

    if (given == CLGC_ARG_UNKNOWN) {
        err = clgc_kernel_args_check(t, index, CLGC_ARG_BUFFER);
        if (err == CL_SUCCESS || err == CL_INVALID_ARG_VALUE)
            err = clgc__arg_fail(t, index, CL_INVALID_MEM_OBJECT,
                                 "was given no valid memory object");
        return err;
    }
    err = clgc_kernel_args_check(t, index, given);
    if (err != CL_SUCCESS)
        return err;
    if ((err = clgc_clRetainMemObject(mem)) != CL_SUCCESS)
        return clgc__arg_fail(t, index, err,
                              "was given no valid memory object");
    return clgc__arg_set(t, index, sizeof(mem), &mem, mem, 0);
}

cl_int
clgc_kernel_args_set_sampler(clgc_kernel_args_t *t, cl_uint index,
                             cl_sampler sampler)
{
    cl_int err = clgc_kernel_args_check(t, index, CLGC_ARG_SAMPLER);

    if (err != CL_SUCCESS)
        return err;
    if (sampler == NULL || !clgc__object_ok(sampler) ||
        clgc_clRetainSampler(sampler) != CL_SUCCESS)
        return clgc__arg_fail(t, index, CL_INVALID_SAMPLER,
                              "was given no valid sampler");
    return clgc__arg_set(t, index, sizeof(sampler), &sampler, sampler, 1);
}

cl_int
clgc_kernel_args_set_local(clgc_kernel_args_t *t, cl_uint index, size_t size)
{
    cl_int err = clgc_kernel_args_check(t, index, CLGC_ARG_LOCAL);
    cl_ulong total = size;

    if (err != CL_SUCCESS)
        return err;
    if (size == 0)
        return clgc__arg_fail(t, index, CL_INVALID_ARG_SIZE,
                              "is local memory of 0 bytes");
    for (cl_uint i = 0; i < t->n; i++)
        if (i != index)
            total += t->arg[i].local;
    if (t->local_limit != 0 &&
        (size > t->local_limit || total > t->local_limit))
        return clgc__arg_fail(t, index, CL_INVALID_ARG_SIZE,
                              "would make %llu bytes of local memory, more "
                              "than the device's %llu",
                              size > t->local_limit ? (unsigned long long)size
                                                    : (unsigned long long)total,
                              (unsigned long long)t->local_limit);
    return clgc__arg_set(t, index, size, NULL, NULL, 0);
}

cl_int
clgc_kernel_args_set_value(clgc_kernel_args_t *t, cl_uint index, size_t size,
                           const void *value)
{
    cl_int err = clgc_kernel_args_check(t, index, CLGC_ARG_VALUE);

    if (err != CL_SUCCESS)
        return err;
    if (value == NULL || size == 0)
        return clgc__arg_fail(t, index, CL_INVALID_ARG_VALUE,
                              "was given no bytes");
    if (t->arg[index].size != 0 && t->arg[index].size != size)
        return clgc__arg_fail(t, index, CL_INVALID_ARG_SIZE,
                              "is a %s (%zu bytes), not %zu bytes",
                              t->arg[index].type, t->arg[index].size, size);
    return clgc__arg_set(t, index, size, value, NULL, 0);
}

cl_int
clgc_kernel_args_ready(clgc_kernel_args_t *t)
{
    t->message[0] = '\0';
    for (cl_uint i = 0; i < t->n; i++)
        if (!t->arg[i].set)
            return clgc__arg_fail(t, i, CL_INVALID_KERNEL_ARGS, "is not set");
    return CL_SUCCESS;
}

/* PoCL's binaries, version 9 (PoCL 3.1's), as PoCL writes them: its
 * magic, the device's hash, the version and the count of kernels, flags,
 * the program's build hash, then the size of the program.bc section and
 * that section (a path and the bitcode, each a 32-bit length and its
 * bytes), then each kernel's record, which starts with its own size and
 * the size of the files at its end (each file a path and content, lengths
 * first). PoCL reads all of it trusting those sizes, and asserts (aborts
 * the process) on a binary cut short anywhere past the header. Little
 * endian throughout. */
#define CLGC__POCL_MAGIC "poclbin"
#define CLGC__POCL_VERSION 9
#define CLGC__POCL_HEADER 85 /* through the program.bc section's size */

static uint64_t
clgc__le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;

    while (n-- > 0)
        v = v << 8 | p[n];
    return v;
}

/* Whether [at, at + 4 + its length) fits before end, a 32-bit length
 * and its bytes; *at moves past it. */
static int
clgc__pocl_string(const unsigned char *b, size_t *at, size_t end)
{
    uint64_t n;

    if (end - *at < 4)
        return 0;
    n = clgc__le(b + *at, 4);
    if (n > end - *at - 4)
        return 0;
    *at += 4 + (size_t)n;
    return 1;
}

/* Whether a PoCL binary of the version known here is whole: every size it
 * gives stays within len. Any other binary passes (the driver checks it;
 * padding keeps a short one's header read in bounds). */
static int
clgc__pocl_binary_whole(const unsigned char *b, size_t len)
{
    uint64_t kernels, section, rec, files;
    size_t at = CLGC__POCL_HEADER, end;

    if (len < 24 || memcmp(b, CLGC__POCL_MAGIC, 8) != 0 ||
        clgc__le(b + 16, 4) != CLGC__POCL_VERSION)
        return 1;
    if (len < CLGC__POCL_HEADER)
        return 0;
    kernels = clgc__le(b + 20, 4);
    section = clgc__le(b + CLGC__POCL_HEADER - 8, 8);
    if (section > len - at)
        return 0;
    end = at + (size_t)section;
    if (!clgc__pocl_string(b, &at, end) || !clgc__pocl_string(b, &at, end) ||
        at != end)
        return 0;
    for (uint64_t k = 0; k < kernels; k++) {
        size_t start = at;

        if (len - at < 20)
            return 0;
        rec = clgc__le(b + at, 8);
        files = clgc__le(b + at + 8, 8);
        if (rec < 20 || rec > len - at || files > rec - 20)
            return 0;
        end = start + (size_t)rec;
        for (at = end - (size_t)files; at < end;)
            if (!clgc__pocl_string(b, &at, end) ||
                !clgc__pocl_string(b, &at, end))
                return 0;
        at = end;
    }
    return 1;
}

cl_program
clgc_program_with_binaries(cl_context context, cl_uint n,
                           const cl_device_id *devices, const size_t *lengths,
                           const unsigned char **binaries, cl_int *status,
                           cl_int *errcode_ret)
{
    unsigned char **copies;
    cl_program p = NULL;
    cl_int err = CL_SUCCESS;

    if (n == 0 || devices == NULL || lengths == NULL || binaries == NULL)
        err = CL_INVALID_VALUE;
    for (cl_uint i = 0; err == CL_SUCCESS && i < n; i++)
        if (binaries[i] == NULL || lengths[i] == 0 ||
            lengths[i] > SIZE_MAX - CLGC_BINARY_PAD)
            err = CL_INVALID_VALUE;
    /* PoCL's own format, cut short: refused before PoCL asserts on it. */
    for (cl_uint i = 0; err == CL_SUCCESS && i < n; i++)
        if (!clgc__pocl_binary_whole(binaries[i], lengths[i])) {
            err = CL_INVALID_BINARY;
            for (cl_uint j = 0; status != NULL && j < n; j++)
                status[j] = j == i ? CL_INVALID_BINARY : CL_SUCCESS;
        }
    if (err != CL_SUCCESS) {
        if (errcode_ret != NULL)
            *errcode_ret = err;
        return NULL;
    }
    copies = calloc(n, sizeof(*copies));
    for (cl_uint i = 0; copies != NULL && i < n; i++) {
        if ((copies[i] = malloc(lengths[i] + CLGC_BINARY_PAD)) == NULL) {
            err = CL_OUT_OF_HOST_MEMORY;
            break;
        }
        memcpy(copies[i], binaries[i], lengths[i]);
        memset(copies[i] + lengths[i], 0, CLGC_BINARY_PAD);
    }
    if (copies == NULL)
        err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS)
        p = clgc_clCreateProgramWithBinary(context, n, devices, lengths,
                                           (const unsigned char **)copies,
                                           status, &err);
    for (cl_uint i = 0; copies != NULL && i < n; i++)
        free(copies[i]);
    free(copies);
    if (errcode_ret != NULL)
        *errcode_ret = err;
    return p;
}

cl_int
clgc_program_binaries(cl_program program, clgc_binaries_t **out)
{
    cl_uint n = 0;
    size_t *sizes = NULL, total = 0, head;
    clgc_binaries_t *b = NULL;
    unsigned char *data;
    cl_int err;

    if (out == NULL)
        return CL_INVALID_VALUE;
    *out = NULL;
    err = clgc_clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof(n), &n,
                                NULL);
    if (err == CL_SUCCESS && (sizes = calloc(n + 1, sizeof(*sizes))) == NULL)
        err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS)
        err = clgc_clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES,
                                    n * sizeof(*sizes), sizes, NULL);
    for (cl_uint i = 0; err == CL_SUCCESS && i < n; i++)
        if ((total += sizes[i]) < sizes[i])
            err = CL_OUT_OF_HOST_MEMORY;
    /* The record, then the devices, lengths and pointers, then the data. */
    head = sizeof(*b) + n * (sizeof(cl_device_id) + sizeof(size_t) +
                             sizeof(unsigned char *));
    if (err == CL_SUCCESS &&
        (total > SIZE_MAX - head || (b = malloc(head + total)) == NULL))
        err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS) {
        b->count = n;
        b->devices = (cl_device_id *)(b + 1);
        b->lengths = (size_t *)(b->devices + n);
        b->binaries = (unsigned char **)(b->lengths + n);
        data = (unsigned char *)(b->binaries + n);
        for (cl_uint i = 0; i < n; i++) {
            b->lengths[i] = sizes[i];
            b->binaries[i] = sizes[i] > 0 ? data : NULL;
            data += sizes[i];
        }
        err = clgc_clGetProgramInfo(program, CL_PROGRAM_DEVICES,
                                    n * sizeof(cl_device_id), b->devices, NULL);
    }
    if (err == CL_SUCCESS)
        err = clgc_clGetProgramInfo(program, CL_PROGRAM_BINARIES,
                                    n * sizeof(unsigned char *), b->binaries,
                                    NULL);
    free(sizes);
    if (err != CL_SUCCESS) {
        free(b);
        return err;
    }
    *out = b;
    return CL_SUCCESS;
}
