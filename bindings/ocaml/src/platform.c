/* Platforms, devices, contexts, queues, programs, kernels and the info
 * queries (clgc_ml.h). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgc_ml.h"

/* An array of handles of kind from a C array. */
static value
ml_handles(enum ml_kind kind, void **h, cl_uint n)
{
    CAMLparam0();
    CAMLlocal2(arr, v);

    arr = caml_alloc_tuple(n);
    for (cl_uint i = 0; i < n; i++) {
        v = clgc_ml_wrap(kind, h[i]);
        Store_field(arr, i, v);
    }
    CAMLreturn(arr);
}

value
ml_clgc_platforms(value unit)
{
    CAMLparam1(unit);
    CAMLlocal1(arr);
    ML_STUB;
    cl_uint n = 0;
    cl_platform_id *p;
    cl_int err;

    err = clgc_clGetPlatformIDs(0, NULL, &n);
    if (err == CL_PLATFORM_NOT_FOUND_KHR || n == 0)
        ML_RETURN(Atom(0));
    ML_CHECK(err, "clGetPlatformIDs");
    p = malloc(n * sizeof(*p));
    if (p == NULL)
        caml_raise_out_of_memory();
    err = clgc_clGetPlatformIDs(n, p, &n);
    if (err != CL_SUCCESS) {
        free(p);
        clgc_ml_raise(err, "clGetPlatformIDs", NULL);
    }
    arr = ml_handles(ML_PLATFORM, (void **)p, n);
    free(p);
    ML_RETURN(arr);
}

/* devices platform type_bits */
value
ml_clgc_devices(value platform, value type)
{
    CAMLparam2(platform, type);
    CAMLlocal1(arr);
    ML_STUB;
    void *p = clgc_ml_get(platform, ML_PLATFORM, "Clgc.devices");
    cl_device_type t = (cl_device_type)Int64_val(type);
    cl_uint n = 0;
    cl_device_id *d;
    cl_int err;

    err = clgc_clGetDeviceIDs(p, t, 0, NULL, &n);
    if (err == CL_DEVICE_NOT_FOUND || n == 0)
        ML_RETURN(Atom(0));
    ML_CHECK(err, "clGetDeviceIDs");
    d = malloc(n * sizeof(*d));
    if (d == NULL)
        caml_raise_out_of_memory();
    err = clgc_clGetDeviceIDs(p, t, n, d, &n);
    if (err != CL_SUCCESS) {
        free(d);
        clgc_ml_raise(err, "clGetDeviceIDs", NULL);
    }
    arr = ml_handles(ML_DEVICE, (void **)d, n);
    free(d);
    ML_RETURN(arr);
}

/* context devices (an array of handles) */
value
ml_clgc_context(value devices)
{
    CAMLparam1(devices);
    ML_STUB;
    mlsize_t n = Wosize_val(devices);
    cl_device_id *d;
    cl_context c;
    cl_int err;

    if (n == 0)
        clgc_ml_raise(CL_INVALID_VALUE, "clCreateContext", "no device");
    for (mlsize_t i = 0; i < n; i++)
        clgc_ml_get(Field(devices, i), ML_DEVICE, "Clgc.context");
    d = malloc(n * sizeof(*d));
    if (d == NULL)
        caml_raise_out_of_memory();
    for (mlsize_t i = 0; i < n; i++)
        d[i] = Handle_val(Field(devices, i))->h;
    c = clgc_clCreateContext(NULL, (cl_uint)n, d, NULL, NULL, &err);
    free(d);
    ML_CHECK(err, "clCreateContext");
    ML_RETURN(clgc_ml_wrap(ML_CONTEXT, c));
}

/* queue context device properties: CL_QUEUE_PROPERTIES' bits
 * (profiling, out of order), through clgc_create_command_queue, which
 * takes them on any OpenCL version. */
value
ml_clgc_queue(value context, value device, value properties)
{
    CAMLparam3(context, device, properties);
    ML_STUB;
    void *c = clgc_ml_get(context, ML_CONTEXT, "Clgc.queue");
    void *d = clgc_ml_get(device, ML_DEVICE, "Clgc.queue");
    cl_ulong props[3] = {CL_QUEUE_PROPERTIES, (cl_ulong)Int64_val(properties),
                         0};
    cl_command_queue q;
    cl_int err;

    q = clgc_create_command_queue(c, d, props[1] != 0 ? props : NULL, &err);
    ML_CHECK(err, "clCreateCommandQueueWithProperties");
    ML_RETURN(clgc_ml_wrap(ML_QUEUE, q));
}

value
ml_clgc_program(value context, value source)
{
    CAMLparam2(context, source);
    ML_STUB;
    void *c = clgc_ml_get(context, ML_CONTEXT, "Clgc.program");
    char *src = clgc_ml_strdup(source);
    const char *srcs[1] = {src};
    cl_program p;
    cl_int err;

    p = clgc_clCreateProgramWithSource(c, 1, srcs, NULL, &err);
    free(src);
    ML_CHECK(err, "clCreateProgramWithSource");
    ML_RETURN(clgc_ml_wrap(ML_PROGRAM, p));
}

/* binaries program -> (device handle * string) array: what the program
 * was built into, for each of its devices (clgc_program_binaries). */
value
ml_clgc_binaries(value program)
{
    CAMLparam1(program);
    CAMLlocal3(r, pair, v);
    ML_STUB;
    void *p = clgc_ml_get(program, ML_PROGRAM, "Clgc.binaries");
    clgc_binaries_t *b;
    cl_int err = clgc_program_binaries(p, &b);

    ML_CHECK(err, "clGetProgramInfo");
    r = caml_alloc(b->count, 0);
    for (cl_uint i = 0; i < b->count; i++) {
        v = caml_alloc_initialized_string(b->lengths[i],
                                          (const char *)b->binaries[i]);
        pair = caml_alloc_tuple(2);
        Store_field(pair, 0, clgc_ml_wrap(ML_DEVICE, b->devices[i]));
        Store_field(pair, 1, v);
        Store_field(r, i, pair);
    }
    free(b);
    ML_RETURN(r);
}

/* program_of_binaries context (device handle * string) array: through
 * clgc_program_with_binaries, which refuses an empty binary or one of
 * PoCL's cut short, and pads each (PoCL reads past a short one). The
 * strings are copied first: the call lets the runtime lock go. */
value
ml_clgc_program_of_binaries(value context, value binaries)
{
    CAMLparam2(context, binaries);
    ML_STUB;
    const char *who = "Clgc.program_of_binaries";
    void *c = clgc_ml_get(context, ML_CONTEXT, who);
    cl_uint n = (cl_uint)Wosize_val(binaries);
    cl_device_id *d = calloc(n + 1, sizeof(*d));
    size_t *lengths = calloc(n + 1, sizeof(*lengths));
    unsigned char **bins = calloc(n + 1, sizeof(*bins));
    cl_program p = NULL;
    cl_int err = CL_SUCCESS;

    if (d == NULL || lengths == NULL || bins == NULL)
        err = CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; err == CL_SUCCESS && i < n; i++) {
        value pair = Field(binaries, i), s = Field(pair, 1);

        d[i] = clgc_ml_get(Field(pair, 0), ML_DEVICE, who);
        lengths[i] = caml_string_length(s);
        if ((bins[i] = malloc(lengths[i] + 1)) == NULL)
            err = CL_OUT_OF_HOST_MEMORY;
        else
            memcpy(bins[i], String_val(s), lengths[i]);
    }
    if (err == CL_SUCCESS && n == 0)
        err = CL_INVALID_VALUE;
    if (err == CL_SUCCESS)
        p = clgc_program_with_binaries(
            c, n, d, lengths, (const unsigned char **)bins, NULL, &err);
    for (cl_uint i = 0; bins != NULL && i < n; i++)
        free(bins[i]);
    free(bins);
    free(lengths);
    free(d);
    ML_CHECK(err, "clCreateProgramWithBinary");
    ML_RETURN(clgc_ml_wrap(ML_PROGRAM, p));
}

/* The build logs of every device of p that has one, one after another,
 * malloc'd; NULL if there are none. */
char *
clgc_ml_build_logs(cl_program p)
{
    cl_uint n = 0;
    cl_device_id *d;
    char *all = NULL;
    size_t len = 0;

    if (clgc_clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof(n), &n, NULL) !=
            CL_SUCCESS ||
        n == 0)
        return NULL;
    d = malloc(n * sizeof(*d));
    if (d == NULL)
        return NULL;
    if (clgc_clGetProgramInfo(p, CL_PROGRAM_DEVICES, n * sizeof(*d), d, NULL) !=
        CL_SUCCESS)
        n = 0;
    for (cl_uint i = 0; i < n; i++) {
        size_t size = 0;
        char *grown;

        if (clgc_clGetProgramBuildInfo(p, d[i], CL_PROGRAM_BUILD_LOG, 0, NULL,
                                       &size) != CL_SUCCESS ||
            size <= 1)
            continue;
        grown = realloc(all, len + size + 1);
        if (grown == NULL)
            break;
        all = grown;
        if (clgc_clGetProgramBuildInfo(p, d[i], CL_PROGRAM_BUILD_LOG, size,
                                       all + len, NULL) != CL_SUCCESS)
            continue;
        len = strnlen(all + len, size) + len;
        all[len++] = '\n';
        all[len] = '\0';
    }
    free(d);
    return all;
}

/* build program options: a failure raises Clgc.Error with the logs. */
value
ml_clgc_build(value program, value options)
{
    CAMLparam2(program, options);
    ML_STUB;
    void *p = clgc_ml_get(program, ML_PROGRAM, "Clgc.build");
    char *opts = clgc_ml_strdup(options);
    cl_int err;

    err = clgc_clBuildProgram(p, 0, NULL, opts, NULL, NULL);
    free(opts);
    if (err != CL_SUCCESS) {
        clgc_ml_raise_owned(err, "clBuildProgram", clgc_ml_build_logs(p));
    }
    ML_RETURN(Val_unit);
}

/* compile program options headers: headers is an array of (include
 * name, program); the names are copied (the call lets the lock go), and
 * one with a NUL inside is refused. */
value
ml_clgc_compile(value program, value options, value headers)
{
    CAMLparam3(program, options, headers);
    ML_STUB;
    const char *who = "Clgc.compile";
    void *p = clgc_ml_get(program, ML_PROGRAM, who);
    cl_uint n = (cl_uint)Wosize_val(headers);
    cl_program *hs = calloc(n + 1, sizeof(*hs));
    char **names = calloc(n + 1, sizeof(*names));
    char *opts;
    cl_int err = CL_SUCCESS;

    if (hs == NULL || names == NULL) {
        free(hs);
        free(names);
        caml_raise_out_of_memory();
    }
    for (cl_uint i = 0; i < n; i++) {
        value pair = Field(headers, i);

        hs[i] = clgc_ml_get(Field(pair, 1), ML_PROGRAM, who);
        if (!caml_string_is_c_safe(Field(pair, 0)))
            err = CL_INVALID_VALUE;
        else if ((names[i] = strdup(String_val(Field(pair, 0)))) == NULL)
            err = CL_OUT_OF_HOST_MEMORY;
    }
    if (err == CL_INVALID_VALUE) {
        for (cl_uint i = 0; i < n; i++)
            free(names[i]);
        free(names);
        free(hs);
        caml_invalid_argument("Clgc.compile: a header name with a NUL inside");
    }
    opts = clgc_ml_strdup(options);
    if (err == CL_SUCCESS)
        err = clgc_clCompileProgram(p, 0, NULL, opts, n, n > 0 ? hs : NULL,
                                    n > 0 ? (const char **)names : NULL, NULL,
                                    NULL);
    free(opts);
    for (cl_uint i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(hs);
    if (err != CL_SUCCESS)
        clgc_ml_raise_owned(err, "clCompileProgram", clgc_ml_build_logs(p));
    ML_RETURN(Val_unit);
}

/* link context options programs library: a program (an executable, or a
 * library with library) of the compiled programs. */
value
ml_clgc_link(value context, value options, value programs, value library)
{
    CAMLparam4(context, options, programs, library);
    ML_STUB;
    const char *who = "Clgc.link";
    void *c = clgc_ml_get(context, ML_CONTEXT, who);
    cl_uint n = (cl_uint)Wosize_val(programs);
    cl_program *ps = calloc(n + 1, sizeof(*ps)), p;
    char *opts, *all;
    size_t len;
    cl_int err;

    if (ps == NULL)
        caml_raise_out_of_memory();
    for (cl_uint i = 0; i < n; i++)
        ps[i] = clgc_ml_get(Field(programs, i), ML_PROGRAM, who);
    opts = clgc_ml_strdup(options);
    len = strlen(opts);
    if ((all = malloc(len + 20)) == NULL) {
        free(opts);
        free(ps);
        caml_raise_out_of_memory();
    }
    snprintf(all, len + 20, "%s%s", opts,
             Bool_val(library) ? " -create-library" : "");
    free(opts);
    p = clgc_clLinkProgram(c, 0, NULL, all, n, n > 0 ? ps : NULL, NULL, NULL,
                           &err);
    free(all);
    free(ps);
    if (err != CL_SUCCESS) {
        if (p != NULL)
            clgc_clReleaseProgram(p);
        clgc_ml_raise(err, "clLinkProgram", NULL);
    }
    ML_RETURN(clgc_ml_wrap(ML_PROGRAM, p));
}

value
ml_clgc_build_log(value program, value device)
{
    CAMLparam2(program, device);
    CAMLlocal1(s);
    ML_STUB;
    void *p = clgc_ml_get(program, ML_PROGRAM, "Clgc.build_log");
    void *d = clgc_ml_get(device, ML_DEVICE, "Clgc.build_log");
    size_t size = 0;
    char *log;
    cl_int err;

    err =
        clgc_clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
    ML_CHECK(err, "clGetProgramBuildInfo");
    log = malloc(size + 1);
    if (log == NULL)
        caml_raise_out_of_memory();
    err =
        clgc_clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, size, log, NULL);
    if (err != CL_SUCCESS) {
        free(log);
        clgc_ml_raise(err, "clGetProgramBuildInfo", NULL);
    }
    log[size] = '\0';
    s = caml_copy_string(log);
    free(log);
    ML_RETURN(s);
}

value
ml_clgc_kernel(value program, value name)
{
    CAMLparam2(program, name);
    ML_STUB;
    void *p = clgc_ml_get(program, ML_PROGRAM, "Clgc.kernel");
    char *n = clgc_ml_strdup(name);
    cl_kernel k;
    cl_int err;

    k = clgc_clCreateKernel(p, n, &err);
    free(n);
    ML_CHECK(err, "clCreateKernel");
    ML_RETURN(clgc_ml_wrap(ML_KERNEL, k));
}

/* Raise the argument table's failure err with its sentence: a kind the
 * argument does not take as Invalid_argument (a misuse, as a wrong OCaml
 * value is), the rest as Clgc.Error. */
static void
ml_args_raise(clgc_kernel_args_t *t, cl_int err, const char *who)
{
    char message[320];

    if (err != CL_INVALID_ARG_VALUE)
        clgc_ml_raise(err, "clSetKernelArg", clgc_kernel_args_message(t));
    snprintf(message, sizeof(message), "%s: %s", who,
             clgc_kernel_args_message(t));
    caml_invalid_argument(message);
}

void
clgc_ml_kernel_ready(value kernel, const char *who)
{
    clgc_kernel_args_t *t = clgc_ml_kernel_args(kernel, 0, who);
    cl_int err = t != NULL ? clgc_kernel_args_ready(t) : CL_SUCCESS;

    if (err != CL_SUCCESS)
        clgc_ml_raise(err, "clEnqueueNDRangeKernel",
                      clgc_kernel_args_message(t));
}

/* set_arg kernel index arg: arg is Clgc.arg (the order of its
 * constructors: Mem, Int32, Int64, Float32, Float64, Local, Raw,
 * Sampler), checked and held by the kernel's argument table
 * (clgc/binding.h), which asks a memory object whether it is a buffer or
 * an image. */
value
ml_clgc_set_arg(value kernel, value index, value arg)
{
    CAMLparam3(kernel, index, arg);
    ML_STUB;
    clgc_kernel_args_t *t = clgc_ml_kernel_args(kernel, 1, "Clgc.set_arg");
    intnat i = Long_val(index);
    value a = Field(arg, 0);
    union {
        cl_int i32;
        cl_long i64;
        cl_float f32;
        cl_double f64;
    } u;
    const void *p = &u;
    size_t size;
    char *bytes = NULL;
    clgc_arg_kind_t given = Tag_val(arg) == 5 ? CLGC_ARG_LOCAL : CLGC_ARG_VALUE;
    cl_int err;

    if (i < 0 || i > UINT32_MAX)
        clgc_ml_raise(CL_INVALID_ARG_INDEX, "clSetKernelArg", NULL);
    /* Objects are checked as they are set. */
    if (Tag_val(arg) != 0 && Tag_val(arg) != 7 &&
        (err = clgc_kernel_args_check(t, (cl_uint)i, given)) != CL_SUCCESS)
        ml_args_raise(t, err, "Clgc.set_arg");
    switch (Tag_val(arg)) {
    case 0:
        err = clgc_kernel_args_set_mem(
            t, (cl_uint)i, clgc_ml_get(Field(a, 0), ML_MEM, "Clgc.set_arg"));
        if (err != CL_SUCCESS)
            ml_args_raise(t, err, "Clgc.set_arg");
        ML_RETURN(Val_unit);
    case 7:
        err = clgc_kernel_args_set_sampler(
            t, (cl_uint)i,
            clgc_ml_get(Field(a, 0), ML_SAMPLER, "Clgc.set_arg"));
        if (err != CL_SUCCESS)
            ml_args_raise(t, err, "Clgc.set_arg");
        ML_RETURN(Val_unit);
    case 1:
        u.i32 = Int32_val(a);
        size = sizeof(cl_int);
        break;
    case 2:
        u.i64 = Int64_val(a);
        size = sizeof(cl_long);
        break;
    case 3:
        u.f32 = (cl_float)Double_val(a);
        size = sizeof(cl_float);
        break;
    case 4:
        u.f64 = Double_val(a);
        size = sizeof(cl_double);
        break;
    case 5:
        if (Long_val(a) <= 0)
            caml_invalid_argument("Clgc.set_arg: Local of a size > 0");
        err = clgc_kernel_args_set_local(t, (cl_uint)i, (size_t)Long_val(a));
        if (err != CL_SUCCESS)
            ml_args_raise(t, err, "Clgc.set_arg");
        ML_RETURN(Val_unit);
    default: /* Raw */
        size = caml_string_length(a);
        bytes = malloc(size > 0 ? size : 1);
        if (bytes == NULL)
            caml_raise_out_of_memory();
        memcpy(bytes, Bytes_val(a), size);
        p = bytes;
    }
    err = clgc_kernel_args_set_value(t, (cl_uint)i, size, p);
    free(bytes);
    if (err != CL_SUCCESS)
        ml_args_raise(t, err, "Clgc.set_arg");
    ML_RETURN(Val_unit);
}
