/* Contexts, command queues, programs (their builds outside Guile mode),
 * kernels and their arguments. */

#include <libguile.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guile-clgc.h"

static SCM
make_context_body(SCM devs)
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
GUILE_CLGC_HELD1(make_context)

static SCM
make_queue_body(SCM context, SCM device, SCM profiling)
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
GUILE_CLGC_HELD3(make_queue)

static SCM
make_program_body(SCM context, SCM source)
{
    void *c = guile_clgc_unwrap(K_CONTEXT, context, 1, "make-program");
    char *src;
    cl_int err = CL_SUCCESS;
    cl_program p;

    src = guile_clgc_cstring(source, 2, "make-program");
    p = clgc_clCreateProgramWithSource(c, 1, (const char **)&src, NULL, &err);
    free(src);
    CHECK_CL(err, "make-program");
    return guile_clgc_wrap(K_PROGRAM, p);
}
GUILE_CLGC_HELD2(make_program)

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
program_build_log_body(SCM program, SCM device)
{
    return build_log(
        guile_clgc_unwrap(K_PROGRAM, program, 1, "program-build-log"),
        guile_clgc_unwrap(K_DEVICE, device, 2, "program-build-log"));
}
GUILE_CLGC_HELD2(program_build_log)

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

/* An options string (#f or unbound: none), malloc'd or NULL; one with a
 * NUL inside is refused (OpenCL would read it cut short). */
static char *
options_arg(SCM options, int pos, const char *who)
{
    if (SCM_UNBNDP(options) || scm_is_false(options))
        return NULL;
    return guile_clgc_cstring(options, pos, who);
}

/* The options of a build or a compile: the user's, plus
 * -cl-kernel-arg-info, without which a driver may keep no argument info
 * and the kernels' argument tables (clgc/binding.h) could not tell a
 * pointer from a number. malloc'd. */
static char *
compile_options(SCM options, int pos, const char *who)
{
    static const char flag[] = "-cl-kernel-arg-info";
    char *user = options_arg(options, pos, who), *all;
    size_t n = user != NULL ? strlen(user) : 0;

    all = malloc(n + sizeof(flag) + 1);
    if (all == NULL) {
        free(user);
        scm_report_out_of_memory();
    }
    snprintf(all, n + sizeof(flag) + 1, "%s%s%s", user != NULL ? user : "",
             n > 0 ? " " : "", flag);
    free(user);
    return all;
}

static void CL_CALLBACK
build_notify(cl_program program, void *data)
{
    (void)program;
    scm_with_guile(build_guarded, data);
}

static SCM
build_program_body(SCM program, SCM options, SCM notify)
{
    void *p = guile_clgc_unwrap(K_PROGRAM, program, 1, "build-program");
    char *opts = NULL;
    SCM pair = SCM_BOOL_F, failure = SCM_BOOL_F;
    cl_int err;

    opts = compile_options(options, 2, "build-program");
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
GUILE_CLGC_HELD3(build_program)

/* (make-program-with-binaries context devices binaries) -> program: one
 * bytevector per device, as (program-info p 'binaries) gives them. A
 * binary the driver refuses raises its error (CL_INVALID_BINARY); an
 * empty one CL_INVALID_VALUE; junk is padded so that PoCL reads no past
 * its end (clgc_program_with_binaries, clgc/binding.h). */
static SCM
make_program_with_binaries_body(SCM context, SCM devices, SCM binaries)
{
    const char *who = "make-program-with-binaries";
    void *c = guile_clgc_unwrap(K_CONTEXT, context, 1, who);
    cl_uint n = 0;
    void *dbuf[16],
        **d = guile_clgc_handle_array(K_DEVICE, devices, 2, who, &n, dbuf, 16);
    size_t sizes[16];
    const unsigned char *bins[16];
    cl_int err = CL_SUCCESS, status[16];
    cl_program p;
    SCM l = binaries;

    if (d != dbuf) {
        guile_clgc_free_array(d, dbuf);
        scm_misc_error(who, "more than 16 devices", SCM_EOL);
    }
    if (n == 0 || scm_ilength(binaries) != (long)n)
        scm_wrong_type_arg_msg(who, 3, binaries,
                               "list of one bytevector per device");
    for (cl_uint i = 0; i < n; i++, l = scm_cdr(l)) {
        guile_clgc_validate(who, scm_is_bytevector(scm_car(l)), binaries, 3,
                            "list of bytevectors");
        sizes[i] = SCM_BYTEVECTOR_LENGTH(scm_car(l));
        bins[i] = (const unsigned char *)SCM_BYTEVECTOR_CONTENTS(scm_car(l));
    }
    guile_clgc_signals_note();
    p = clgc_program_with_binaries(c, n, (cl_device_id *)d, sizes, bins, status,
                                   &err);
    guile_clgc_signals_restore();
    scm_remember_upto_here_1(binaries);
    CHECK_CL(err, who);
    return guile_clgc_wrap(K_PROGRAM, p);
}
GUILE_CLGC_HELD3(make_program_with_binaries)

/* (compile-program program #:options #:headers): compiles for its
 * devices, outside Guile mode; headers: an alist of (include name .
 * program of source). Raises CL_COMPILE_PROGRAM_FAILURE with the logs. */
static SCM
compile_program_body(SCM program, SCM rest)
{
    const char *who = "compile-program";
    void *p = guile_clgc_unwrap(K_PROGRAM, program, 1, who);
    SCM options = SCM_UNDEFINED, headers = SCM_EOL, l;
    void *hprogs[16];
    const char *names[16];
    char *opts;
    long nh;
    cl_int err;

    scm_c_bind_keyword_arguments(who, rest, 0, guile_clgc_kw("options"),
                                 &options, guile_clgc_kw("headers"), &headers,
                                 SCM_UNDEFINED);
    nh = scm_ilength(headers);
    if (nh < 0 || nh > 16)
        scm_wrong_type_arg_msg(who, 0, headers,
                               "alist of up to 16 (name . program)");
    l = headers;
    for (long i = 0; i < nh; i++, l = scm_cdr(l)) {
        SCM h = scm_car(l);

        guile_clgc_validate(who, scm_is_pair(h) && scm_is_string(scm_car(h)),
                            headers, 0, "alist of (name . program)");
        hprogs[i] = guile_clgc_unwrap(K_PROGRAM, scm_cdr(h), 0, who);
    }
    opts = compile_options(options, 0, who);
    scm_dynwind_begin(0);
    if (opts != NULL)
        scm_dynwind_free(opts);
    l = headers;
    for (long i = 0; i < nh; i++, l = scm_cdr(l)) {
        char *name = scm_to_utf8_string(scm_car(scm_car(l)));

        scm_dynwind_free(name);
        names[i] = name;
    }
    guile_clgc_signals_note();
    err = clgc_clCompileProgram(p, 0, NULL, opts, (cl_uint)nh,
                                nh > 0 ? (cl_program *)hprogs : NULL,
                                nh > 0 ? names : NULL, NULL, NULL);
    guile_clgc_signals_restore();
    scm_dynwind_end();
    scm_remember_upto_here_1(headers);
    if (err != CL_SUCCESS)
        guile_clgc_raise_error(
            guile_clgc_cl_error_name(err), err, who,
            err == CL_COMPILE_PROGRAM_FAILURE ? all_build_logs(p) : SCM_BOOL_F,
            SCM_BOOL_F, NULL);
    return program;
}
GUILE_CLGC_HELD2(compile_program)

/* (link-program context programs #:options) -> a new program from
 * compiled ones, for the context's devices, outside Guile mode; raises
 * CL_LINK_PROGRAM_FAILURE (with the logs where the driver made a
 * program). */
static SCM
link_program_body(SCM context, SCM programs, SCM rest)
{
    const char *who = "link-program";
    void *c = guile_clgc_unwrap(K_CONTEXT, context, 1, who);
    SCM options = SCM_UNDEFINED;
    cl_uint n = 0;
    void *buf[16], **ps;
    char *opts;
    cl_int err = CL_SUCCESS;
    cl_program p;
    SCM logs = SCM_BOOL_F;

    scm_c_bind_keyword_arguments(who, rest, 0, guile_clgc_kw("options"),
                                 &options, SCM_UNDEFINED);
    ps = guile_clgc_handle_array(K_PROGRAM, programs, 2, who, &n, buf, 16);
    opts = options_arg(options, 0, who);
    guile_clgc_signals_note();
    p = clgc_clLinkProgram(c, 0, NULL, opts, n, (cl_program *)ps, NULL, NULL,
                           &err);
    guile_clgc_signals_restore();
    free(opts);
    guile_clgc_free_array(ps, buf);
    if (err != CL_SUCCESS) {
        if (p != NULL) {
            logs = all_build_logs(p);
            clgc_clReleaseProgram(p);
        }
        guile_clgc_raise_error(guile_clgc_cl_error_name(err), err, who, logs,
                               SCM_BOOL_F, NULL);
    }
    return guile_clgc_wrap(K_PROGRAM, p);
}
GUILE_CLGC_HELD3(link_program)

static SCM
make_kernel_body(SCM program, SCM name)
{
    void *p = guile_clgc_unwrap(K_PROGRAM, program, 1, "make-kernel");
    char *n;
    cl_int err = CL_SUCCESS;
    cl_kernel k;

    n = guile_clgc_cstring(name, 2, "make-kernel");
    guile_clgc_signals_note();
    k = clgc_clCreateKernel(p, n, &err);
    guile_clgc_signals_restore();
    free(n);
    CHECK_CL(err, "make-kernel");
    return guile_clgc_wrap(K_KERNEL, k);
}
GUILE_CLGC_HELD2(make_kernel)

/* Raise the table's failure err with its sentence: a kind the argument
 * does not take as wrong-type-arg (a misuse, as a wrong Scheme type is),
 * the rest as &clgc-error. */
static void
raise_args(clgc_kernel_args_t *t, cl_int err, SCM value, int pos,
           const char *who)
{
    if (err == CL_INVALID_ARG_VALUE)
        scm_wrong_type_arg_msg(who, pos, value, clgc_kernel_args_message(t));
    guile_clgc_raise_error(guile_clgc_cl_error_name(err), err, who, SCM_BOOL_F,
                           SCM_BOOL_F, clgc_kernel_args_message(t));
}

void
guile_clgc_kernel_ready(SCM kernel, int pos, const char *who)
{
    clgc_kernel_args_t *t = guile_clgc_kernel_args(kernel, 0, pos, who);
    cl_int err = t != NULL ? clgc_kernel_args_ready(t) : CL_SUCCESS;

    if (err != CL_SUCCESS)
        raise_args(t, err, kernel, pos, who);
}

/* (set-kernel-arg! kernel index value [type]): a buffer or an image; a
 * sampler; a bytevector (its bytes); a number with its type, one of int
 * uint long ulong float double; or (set-kernel-arg! k i size 'local) for
 * local memory. Checked against what the kernel declares, and the
 * objects held until replaced, by the library's argument table
 * (clgc/binding.h). */
static SCM
set_kernel_arg_body(SCM kernel, SCM index, SCM value, SCM type)
{
    const char *who = "set-kernel-arg!";
    clgc_kernel_args_t *t = guile_clgc_kernel_args(kernel, 1, 1, who);
    cl_uint i = (cl_uint)guile_clgc_to_unsigned(index, UINT32_MAX, 2, who);
    union {
        cl_int i;
        cl_uint u;
        cl_long l;
        cl_ulong ul;
        cl_float f;
        cl_double d;
    } v;
    size_t size = 0;
    const void *ptr = &v;
    clgc_arg_kind_t given = CLGC_ARG_VALUE;
    cl_int err;

    if (SCM_UNBNDP(type)) {
        if (SCM_IS_A_P(value, guile_clgc_types[K_MEM]))
            given = CLGC_ARG_BUFFER; /* or an image: the library asks */
        else if (SCM_IS_A_P(value, guile_clgc_types[K_SAMPLER]))
            given = CLGC_ARG_SAMPLER;
        else if (!scm_is_bytevector(value))
            scm_wrong_type_arg_msg(
                who, 3, value,
                "buffer, image, sampler, bytevector, or number with type");
    } else {
        SCM_ASSERT_TYPE(scm_is_symbol(type), type, 4, who, "symbol");
        if (guile_clgc_sym_is(type, "local"))
            given = CLGC_ARG_LOCAL;
    }
    /* A kind the kernel does not declare, before the value is read. */
    err = given == CLGC_ARG_BUFFER ? CL_SUCCESS
                                   : clgc_kernel_args_check(t, i, given);
    if (err == CL_SUCCESS && given == CLGC_ARG_BUFFER)
        err = clgc_kernel_args_set_mem(t, i,
                                       guile_clgc_unwrap(K_MEM, value, 3, who));
    else if (err == CL_SUCCESS && given == CLGC_ARG_SAMPLER)
        err = clgc_kernel_args_set_sampler(
            t, i, guile_clgc_unwrap(K_SAMPLER, value, 3, who));
    else if (err == CL_SUCCESS && given == CLGC_ARG_LOCAL)
        err = clgc_kernel_args_set_local(
            t, i, guile_clgc_to_unsigned(value, SIZE_MAX, 3, who));
    else if (err == CL_SUCCESS) {
        if (SCM_UNBNDP(type)) {
            ptr = SCM_BYTEVECTOR_CONTENTS(value);
            size = SCM_BYTEVECTOR_LENGTH(value);
        } else if (guile_clgc_sym_is(type, "int")) {
            v.i = (cl_int)guile_clgc_to_signed(value, INT32_MIN, INT32_MAX, 3,
                                               who),
            size = sizeof(cl_int);
        } else if (guile_clgc_sym_is(type, "uint")) {
            v.u = (cl_uint)guile_clgc_to_unsigned(value, UINT32_MAX, 3, who),
            size = sizeof(cl_uint);
        } else if (guile_clgc_sym_is(type, "long")) {
            v.l = guile_clgc_to_signed(value, INT64_MIN, INT64_MAX, 3, who),
            size = sizeof(cl_long);
        } else if (guile_clgc_sym_is(type, "ulong")) {
            v.ul = guile_clgc_to_unsigned(value, UINT64_MAX, 3, who),
            size = sizeof(cl_ulong);
        } else if (guile_clgc_sym_is(type, "float")) {
            v.f = (cl_float)scm_to_double(value), size = sizeof(cl_float);
        } else if (guile_clgc_sym_is(type, "double")) {
            v.d = scm_to_double(value), size = sizeof(cl_double);
        } else {
            scm_misc_error(who, "unknown argument type: ~S", scm_list_1(type));
            return SCM_UNSPECIFIED;
        }
        err = clgc_kernel_args_set_value(t, i, size, ptr);
    }
    if (err != CL_SUCCESS)
        raise_args(t, err, value, 3, who);
    scm_remember_upto_here_1(value);
    return SCM_UNSPECIFIED;
}
GUILE_CLGC_HELD4(set_kernel_arg)

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
    {"make-program-with-binaries", 3, 0, 0, make_program_with_binaries,
     "(make-program-with-binaries context devices binaries) -> a cl-program "
     "from one bytevector per device, as (program-info p 'binaries) gives "
     "them; build it before use."},
    {"compile-program", 1, 0, 1, compile_program,
     "(compile-program program #:options #:headers) -> program, compiled "
     "for its devices outside Guile mode; headers: ((\"name.h\" . program) "
     "...). Raises CL_COMPILE_PROGRAM_FAILURE with the logs."},
    {"link-program", 2, 0, 1, link_program,
     "(link-program context programs #:options) -> a new cl-program linked "
     "from compiled ones (and libraries, with #:options \"-create-library\"), "
     "outside Guile mode."},
    {"make-kernel", 2, 0, 0, make_kernel,
     "(make-kernel program name) -> the cl-kernel called name."},
    {"set-kernel-arg!", 3, 1, 0, set_kernel_arg,
     "(set-kernel-arg! kernel index value [type]) sets argument index: a "
     "buffer or image, a sampler, a bytevector (its bytes), a number with type "
     "int uint long ulong "
     "float double, or a size with 'local."},
    {NULL, 0, 0, 0, NULL, NULL}};
