/* Contexts, command queues, programs (their builds outside Guile mode),
 * kernels and their arguments. */

#include <libguile.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "guile-clgc.h"

static SCM
make_context(SCM devs)
{
    cl_uint n;
    void *buf[16];
    void **d =
        guile_clgc_handle_array(K_DEVICE, devs, 1, "make-context", &n, buf, 16);
    cl_int err = CL_SUCCESS;
    cl_context c;

    if (n == 0)
        guile_clgc_raise_error("CL_INVALID_VALUE", CL_INVALID_VALUE,
                               "make-context", SCM_BOOL_F, SCM_BOOL_F,
                               "no devices");
    guile_clgc_signals_note();
    c = clgc_clCreateContext(NULL, n, (cl_device_id *)d, NULL, NULL, &err);
    guile_clgc_signals_restore();
    guile_clgc_free_array(d, buf);
    CHECK_CL(err, "make-context");
    return guile_clgc_wrap(K_CONTEXT, c);
}

static SCM
make_queue(SCM context, SCM device, SCM profiling)
{
    void *c = guile_clgc_unwrap(K_CONTEXT, context, 1, "make-command-queue");
    void *d = guile_clgc_unwrap(K_DEVICE, device, 2, "make-command-queue");
    int prof = !SCM_UNBNDP(profiling) && scm_is_true(profiling);
    cl_ulong props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_int err = CL_SUCCESS;
    cl_command_queue q =
        clgc_create_command_queue(c, d, prof ? props : NULL, &err);

    CHECK_CL(err, "make-command-queue");
    return guile_clgc_wrap(K_QUEUE, q);
}

static SCM
make_program(SCM context, SCM source)
{
    void *c = guile_clgc_unwrap(K_CONTEXT, context, 1, "make-program");
    char *src;
    cl_int err = CL_SUCCESS;
    cl_program p;

    guile_clgc_validate("make-program", scm_is_string(source), source, 2,
                        "string");
    src = scm_to_utf8_string(source);
    p = clgc_clCreateProgramWithSource(c, 1, (const char **)&src, NULL, &err);
    free(src);
    CHECK_CL(err, "make-program");
    return guile_clgc_wrap(K_PROGRAM, p);
}

static SCM
build_log(void *p, void *d)
{
    size_t size = 0;
    char *buf;
    SCM s;

    if (clgc_clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, NULL,
                                   &size) != CL_SUCCESS)
        return SCM_BOOL_F;
    buf = malloc(size + 1);
    if (buf == NULL)
        return SCM_BOOL_F;
    if (clgc_clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, size, buf,
                                   NULL) != CL_SUCCESS)
        size = 0;
    buf[size] = 0;
    s = scm_from_utf8_string(buf);
    free(buf);
    return s;
}

static SCM
program_build_log(SCM program, SCM device)
{
    return build_log(
        guile_clgc_unwrap(K_PROGRAM, program, 1, "program-build-log"),
        guile_clgc_unwrap(K_DEVICE, device, 2, "program-build-log"));
}

/* The logs of every device of the program, concatenated. */
static SCM
all_build_logs(void *p)
{
    cl_device_id ids[16];
    size_t size = 0;
    SCM logs = scm_from_utf8_string("");

    if (clgc_clGetProgramInfo(p, CL_PROGRAM_DEVICES, sizeof(ids), ids, &size) !=
        CL_SUCCESS)
        return SCM_BOOL_F;
    for (size_t i = 0; i < size / sizeof(ids[0]); i++) {
        SCM l = build_log(p, ids[i]);

        if (scm_is_string(l))
            logs = scm_string_append(scm_list_2(logs, l));
    }
    return logs;
}
/* A build notification's data: #(proc args returned failure), kept alive
 * by clgc's record. returned is #t once build-program has returned;
 * failure is (exception) when the notification raised before that, for
 * build-program to raise. A notification that raises later (a driver
 * that calls back on a thread of its own after the build) is reported as
 * any callback's, at the next wait. build_lock orders the two. */
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

static SCM
build_body(void *data)
{
    SCM v = SCM_PACK_POINTER(data);
    SCM r = scm_call_2(scm_variable_ref(guile_clgc_guarded),
                       scm_c_vector_ref(v, 0), scm_c_vector_ref(v, 1));

    if (scm_is_true(scm_car(r)))
        return SCM_UNSPECIFIED;
    pthread_mutex_lock(&build_lock);
    if (scm_is_false(scm_c_vector_ref(v, 2))) {
        scm_c_vector_set_x(v, 3, scm_list_1(scm_cdr(r)));
        pthread_mutex_unlock(&build_lock);
    } else {
        pthread_mutex_unlock(&build_lock);
        guile_clgc_report_failure(scm_cdr(r));
    }
    return SCM_UNSPECIFIED;
}

static void *
build_guarded(void *data)
{
    scm_c_catch(SCM_BOOL_T, build_body, data, guile_clgc_call_handler, NULL,
                NULL, NULL);
    return NULL;
}

static void CL_CALLBACK
build_notify(cl_program program, void *data)
{
    (void)program;
    scm_with_guile(build_guarded, data);
}

static SCM
build_program(SCM program, SCM options, SCM notify)
{
    void *p = guile_clgc_unwrap(K_PROGRAM, program, 1, "build-program");
    char *opts = NULL;
    SCM pair = SCM_BOOL_F, failure = SCM_BOOL_F;
    cl_int err;

    if (!SCM_UNBNDP(options) && scm_is_true(options)) {
        guile_clgc_validate("build-program", scm_is_string(options), options, 2,
                            "string");
        opts = scm_to_utf8_string(options);
    }
    if (!SCM_UNBNDP(notify) && scm_is_true(notify)) {
        if (scm_is_false(scm_procedure_p(notify))) {
            free(opts);
            scm_wrong_type_arg_msg("build-program", 3, notify, "procedure");
        }
        pair = scm_c_make_vector(4, SCM_BOOL_F);
        scm_c_vector_set_x(pair, 0, notify);
        scm_c_vector_set_x(pair, 1, scm_list_1(program));
    }
    guile_clgc_signals_note();
    err = clgc_clBuildProgram(
        p, 0, NULL, opts, scm_is_true(pair) ? build_notify : NULL,
        scm_is_true(pair) ? SCM_UNPACK_POINTER(pair) : NULL);
    free(opts);
    guile_clgc_signals_restore();
    if (scm_is_true(pair)) {
        pthread_mutex_lock(&build_lock);
        scm_c_vector_set_x(pair, 2, SCM_BOOL_T);
        failure = scm_c_vector_ref(pair, 3);
        pthread_mutex_unlock(&build_lock);
    }
    scm_remember_upto_here_1(pair);
    if (scm_is_pair(failure) && err == CL_SUCCESS)
        guile_clgc_raise_clgc_named(CLGC_ECALLBACK, "clBuildProgram",
                                    scm_car(failure),
                                    "a Scheme callback raised an exception");
    if (scm_is_pair(failure)) {
        /* The build's own error first; the notification's at the next
         * wait, as any callback's. */
        clgc_callback_error_t e = {"clBuildProgram", CLGC_ECALLBACK,
                                   SCM_UNPACK_POINTER(scm_car(failure))};

        scm_gc_protect_object(scm_car(failure));
        guile_clgc_callback_failed(&e, NULL);
    }
    if (err != CL_SUCCESS)
        guile_clgc_raise_error(
            guile_clgc_cl_error_name(err), err, "build-program",
            err == CL_BUILD_PROGRAM_FAILURE ? all_build_logs(p) : SCM_BOOL_F,
            SCM_BOOL_F, NULL);
    guile_clgc_raise_pending(); /* an earlier callback's failure */
    return program;
}

static SCM
make_kernel(SCM program, SCM name)
{
    void *p = guile_clgc_unwrap(K_PROGRAM, program, 1, "make-kernel");
    char *n;
    cl_int err = CL_SUCCESS;
    cl_kernel k;

    guile_clgc_validate("make-kernel", scm_is_string(name), name, 2, "string");
    n = scm_to_utf8_string(name);
    guile_clgc_signals_note();
    k = clgc_clCreateKernel(p, n, &err);
    guile_clgc_signals_restore();
    free(n);
    CHECK_CL(err, "make-kernel");
    return guile_clgc_wrap(K_KERNEL, k);
}

/* (set-kernel-arg! kernel index value [type]): a buffer; a bytevector (its
 * bytes); or a number with its type, one of int uint long ulong float
 * double; or (set-kernel-arg! k i size 'local) for local memory. */
static SCM
set_kernel_arg(SCM kernel, SCM index, SCM value, SCM type)
{
    void *k = guile_clgc_unwrap(K_KERNEL, kernel, 1, "set-kernel-arg!");
    cl_uint i = (cl_uint)guile_clgc_to_unsigned(index, UINT32_MAX, 2,
                                                "set-kernel-arg!");
    union {
        cl_int i;
        cl_uint u;
        cl_long l;
        cl_ulong ul;
        cl_float f;
        cl_double d;
        cl_mem m;
        cl_sampler s;
    } v;
    size_t size;
    const void *ptr = &v;

    if (SCM_UNBNDP(type)) {
        if (SCM_IS_A_P(value, guile_clgc_types[K_MEM])) {
            v.m = guile_clgc_unwrap(K_MEM, value, 3, "set-kernel-arg!");
            size = sizeof(cl_mem);
        } else if (SCM_IS_A_P(value, guile_clgc_types[K_SAMPLER])) {
            v.s = guile_clgc_unwrap(K_SAMPLER, value, 3, "set-kernel-arg!");
            size = sizeof(cl_sampler);
        } else if (scm_is_bytevector(value)) {
            ptr = SCM_BYTEVECTOR_CONTENTS(value);
            size = SCM_BYTEVECTOR_LENGTH(value);
        } else {
            scm_wrong_type_arg_msg(
                "set-kernel-arg!", 3, value,
                "buffer, image, sampler, bytevector, or number with type");
        }
    } else {
        SCM_ASSERT_TYPE(scm_is_symbol(type), type, 4, "set-kernel-arg!",
                        "symbol");
        if (guile_clgc_sym_is(type, "local")) {
            ptr = NULL;
            size =
                guile_clgc_to_unsigned(value, SIZE_MAX, 3, "set-kernel-arg!");
        } else if (guile_clgc_sym_is(type, "int")) {
            v.i = (cl_int)guile_clgc_to_signed(value, INT32_MIN, INT32_MAX, 3,
                                               "set-kernel-arg!"),
            size = sizeof(cl_int);
        } else if (guile_clgc_sym_is(type, "uint")) {
            v.u = (cl_uint)guile_clgc_to_unsigned(value, UINT32_MAX, 3,
                                                  "set-kernel-arg!"),
            size = sizeof(cl_uint);
        } else if (guile_clgc_sym_is(type, "long")) {
            v.l = guile_clgc_to_signed(value, INT64_MIN, INT64_MAX, 3,
                                       "set-kernel-arg!"),
            size = sizeof(cl_long);
        } else if (guile_clgc_sym_is(type, "ulong")) {
            v.ul =
                guile_clgc_to_unsigned(value, UINT64_MAX, 3, "set-kernel-arg!"),
            size = sizeof(cl_ulong);
        } else if (guile_clgc_sym_is(type, "float")) {
            v.f = (cl_float)scm_to_double(value), size = sizeof(cl_float);
        } else if (guile_clgc_sym_is(type, "double")) {
            v.d = scm_to_double(value), size = sizeof(cl_double);
        } else {
            scm_misc_error("set-kernel-arg!", "unknown argument type: ~S",
                           scm_list_1(type));
            return SCM_UNSPECIFIED;
        }
    }
    CHECK_CL(clgc_clSetKernelArg(k, i, size, ptr), "set-kernel-arg!");
    scm_remember_upto_here_1(value);
    return SCM_UNSPECIFIED;
}

const struct guile_clgc_proc guile_clgc_program_procs[] = {
    {"make-context", 1, 0, 0, make_context,
     "(make-context devices) -> a cl-context for a list of devices."},
    {"make-command-queue", 2, 1, 0, make_queue,
     "(make-command-queue context device [profiling?]) -> a cl-command-queue."},
    {"make-program", 2, 0, 0, make_program,
     "(make-program context source) -> a cl-program from OpenCL C source (a "
     "string)."},
    {"build-program", 1, 2, 0, build_program,
     "(build-program program [options] [notify]) -> program, built for its "
     "devices outside Guile mode; notify: (lambda (program) ...). Raises "
     "CL_BUILD_PROGRAM_FAILURE with the build logs."},
    {"program-build-log", 2, 0, 0, program_build_log,
     "(program-build-log program device) -> the build log of program for "
     "device, a string."},
    {"make-kernel", 2, 0, 0, make_kernel,
     "(make-kernel program name) -> the cl-kernel called name."},
    {"set-kernel-arg!", 3, 1, 0, set_kernel_arg,
     "(set-kernel-arg! kernel index value [type]) sets argument index: a "
     "buffer or image, a sampler, a bytevector (its bytes), a number with type "
     "int uint long ulong "
     "float double, or a size with 'local."},
    {NULL, 0, 0, 0, NULL, NULL}};
