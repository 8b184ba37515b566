/* The generic path: any of the registry's commands by name, arguments
 * converted and checked by the command's metadata (clgc/ffi.h); and
 * adopting the handles it makes. */

#define _GNU_SOURCE /* process_vm_readv */
#include <libguile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "guile-clgc.h"

/* Whether p can be an OpenCL object: its first word is readable (read
 * with process_vm_readv, which fails instead of faulting) and is the
 * dispatch table of one of the platforms, as every ICD object's is. It
 * cannot tell a released object from a live one of the same vendor. */
static int
object_plausible(void *p)
{
    void *dispatch = NULL, *pd = NULL;
    struct iovec local = {&dispatch, sizeof(dispatch)};
    struct iovec remote = {p, sizeof(dispatch)};
    cl_platform_id ids[16];
    cl_uint n = 0;

    if (p == NULL || ((uintptr_t)p & (sizeof(void *) - 1)) != 0 ||
        process_vm_readv(getpid(), &local, 1, &remote, 1, 0) !=
            (ssize_t)sizeof(dispatch) ||
        dispatch == NULL)
        return 0;
    if (clgc_clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
        return 0;
    for (cl_uint i = 0; i < n && i < 16; i++) {
        memcpy(&pd, (void *)ids[i], sizeof(pd));
        if (pd == dispatch)
            return 1;
    }
    return 0;
}

/* The binding's kind of an OpenCL handle type ("cl_command_queue"), or -1
 * for a type the binding has no objects of. */
static int
kind_of_type(const char *type)
{
    static const char *const names[K_CQ] = {[K_PLATFORM] = "cl_platform_id",
                                            [K_DEVICE] = "cl_device_id",
                                            [K_CONTEXT] = "cl_context",
                                            [K_QUEUE] = "cl_command_queue",
                                            [K_PROGRAM] = "cl_program",
                                            [K_KERNEL] = "cl_kernel",
                                            [K_MEM] = "cl_mem",
                                            [K_EVENT] = "cl_event",
                                            [K_SAMPLER] = "cl_sampler"};

    for (int k = 0; k < K_CQ; k++)
        if (strcmp(names[k], type) == 0)
            return k;
    return -1;
}

/* Whether an OpenCL handle type of clgc's tables that the binding has no
 * objects of (cl_sampler, cl_command_buffer_khr, ...). */
static int
foreign_handle_type(const char *type)
{
    for (size_t i = 0; i < clgc_object_kind_count(); i++)
        if (strcmp(clgc_object_kind_at(i)->type, type) == 0)
            return 1;
    return 0;
}

/* A handle parameter (no '*' in its type) of command-call: #f (NULL), or
 * an object of the parameter's kind, never a raw pointer: an address
 * that is no object of that kind is dereferenced by the ICD loader. A
 * handle of a kind the binding has no objects of (a sampler, made by a
 * generic call) is a pointer that passes the object check. */
static void *
generic_handle(const clgc_param_t *param, SCM v, int pos)
{
    const char *who = "command-call";
    int want = kind_of_type(param->type);
    char what[96];

    if (scm_is_false(v))
        return NULL;
    if (want >= 0) {
        if (SCM_IS_A_P(v, guile_clgc_types[want]))
            return guile_clgc_unwrap((enum kind)want, v, pos, who);
        snprintf(what, sizeof(what), "%s or #f for %s %s",
                 guile_clgc_kinds[want].name, param->type, param->name);
        scm_wrong_type_arg_msg(who, pos, v, what);
    }
    if (SCM_POINTER_P(v) && foreign_handle_type(param->type)) {
        if (!object_plausible(SCM_POINTER_VALUE(v)))
            guile_clgc_raise_error("CL_INVALID_VALUE", CL_INVALID_VALUE, who,
                                   SCM_BOOL_F, SCM_BOOL_F,
                                   "the pointer is no OpenCL object");
        return SCM_POINTER_VALUE(v);
    }
    snprintf(what, sizeof(what), "%s or #f", param->type);
    scm_wrong_type_arg_msg(who, pos, v, what);
    return NULL;
}

/* A bytevector for pointer parameter i of the converted arguments a:
 * refused unless it holds all the command may read or write there
 * (clgc_command_reach; a const char * one must hold its NUL). */
static void
check_reach(const clgc_command_t *cmd, const clgc_arg_t *a, unsigned i, SCM bv)
{
    const char *who = "command-call";
    size_t have = SCM_BYTEVECTOR_LENGTH(bv);
    int64_t need = clgc_command_reach(cmd, i, a);
    int pos = (int)i + 2;

    if (need < 0 && strcmp(cmd->params[i].type, "const char *") == 0) {
        if (memchr(SCM_BYTEVECTOR_CONTENTS(bv), 0, have) == NULL)
            scm_misc_error(
                who, "argument ~A (~A ~A): no NUL in the bytevector",
                scm_list_3(scm_from_int(pos),
                           scm_from_utf8_string(cmd->params[i].type),
                           scm_from_utf8_string(cmd->params[i].name)));
        return;
    }
    if (need < 0)
        scm_misc_error(
            who,
            "argument ~A (~A ~A): the size it needs is not known (~A): "
            "pass a pointer (bytevector->pointer)",
            scm_list_4(scm_from_int(pos),
                       scm_from_utf8_string(cmd->params[i].type),
                       scm_from_utf8_string(cmd->params[i].name),
                       scm_from_utf8_string(cmd->params[i].unknown != NULL
                                                ? cmd->params[i].unknown
                                                : "a count of no integer")));
    if ((uint64_t)need > have)
        scm_misc_error(
            who, "argument ~A (~A ~A): ~A bytes needed, the bytevector has ~A",
            scm_list_5(scm_from_int(pos),
                       scm_from_utf8_string(cmd->params[i].type),
                       scm_from_utf8_string(cmd->params[i].name),
                       scm_from_int64(need), scm_from_size_t(have)));
}

/* Note the handles a generic call made (guile_clgc_seen_note): its result, when
 * its type is a kind's, and the first element of an out-parameter of one
 * (cl_event *event, cl_mem *, ...) of a call that returned CL_SUCCESS. */
static void
note_generic_handles(const clgc_command_t *cmd, const clgc_arg_t *a,
                     const clgc_value_t *r)
{
    int k = kind_of_type(cmd->result_type);
    char type[64];

    if (k >= 0)
        guile_clgc_seen_note((enum kind)k, r->p);
    /* Out-parameters are written only by a call that succeeded. */
    if (cmd->result_ctype != CLGC_CTYPE_INT32 || r->i32 != CL_SUCCESS)
        return;
    for (unsigned i = 0; i < cmd->nparams; i++) {
        const char *t = cmd->params[i].type, *star = strchr(t, '*');
        size_t n = star != NULL ? (size_t)(star - t) : 0;
        void *h = NULL;

        if (star == NULL || star[1] != '\0' || strncmp(t, "const ", 6) == 0 ||
            a[i].value.p == NULL || n == 0 || n >= sizeof(type))
            continue;
        memcpy(type, t, n);
        while (n > 0 && type[n - 1] == ' ')
            n--;
        type[n] = '\0';
        if ((k = kind_of_type(type)) < 0)
            continue;
        memcpy(&h, a[i].value.p, sizeof(h));
        guile_clgc_seen_note((enum kind)k, h);
    }
}

/* A bytevector a memory object was made over (CL_MEM_USE_HOST_PTR),
 * protected until OpenCL destroys the object: its destructor callback,
 * which clgc runs in Guile mode. */
static void CL_CALLBACK
unprotect_destroyed(cl_mem mem, void *bv)
{
    (void)mem;
    scm_gc_unprotect_object(SCM_PACK((scm_t_bits)bv));
}

/* Keep the bytevectors of a call that succeeded while OpenCL uses them
 * (clgc_command_keep): until the command's event completes, or until the
 * memory object made over one is destroyed. */
static void
keep_generic_memory(const clgc_command_t *cmd, const clgc_keep_t *keep,
                    SCM args, cl_event event, const clgc_value_t *r)
{
    unsigned i = 0;

    for (SCM l = args; !scm_is_null(l); l = scm_cdr(l), i++) {
        if (keep[i] == CLGC_KEEP_COMMAND && event != NULL)
            guile_clgc_keep_until_complete(event, scm_car(l));
        if (keep[i] == CLGC_KEEP_OBJECT && r->p != NULL &&
            strcmp(cmd->result_type, "cl_mem") == 0) {
            SCM bv = scm_gc_protect_object(scm_car(l));

            if (clgc_clSetMemObjectDestructorCallback(r->p, unprotect_destroyed,
                                                      (void *)SCM_UNPACK(bv)) !=
                CL_SUCCESS)
                scm_gc_unprotect_object(bv); /* a bad object: none made */
        }
    }
}

static SCM
command_call_body(SCM name, SCM args)
{
    const char *who = "command-call";
    char *n;
    const clgc_command_t *cmd;
    clgc_arg_t a[CLGC_CLOSURE_MAX_ARGS];
    clgc_keep_t keep[CLGC_CLOSURE_MAX_ARGS];
    cl_event own = NULL, *event = NULL;
    unsigned i = 0, until_done = 0;
    clgc_value_t r;
    int err, e;

    n = guile_clgc_cstring(name, 1, who);
    cmd = clgc_command_find(n);
    free(n);
    if (cmd == NULL)
        guile_clgc_raise_error("CLGC_ENOCOMMAND", CLGC_ENOCOMMAND, who,
                               SCM_BOOL_F, SCM_BOOL_F,
                               "no OpenCL command of that name");
    if (scm_ilength(args) != (long)cmd->nparams)
        guile_clgc_raise_error("CLGC_EARITY", CLGC_EARITY, who, SCM_BOOL_F,
                               SCM_BOOL_F,
                               "wrong number of arguments for the command");
    for (SCM l = args; !scm_is_null(l); l = scm_cdr(l), i++) {
        SCM v = scm_car(l);
        clgc_ctype_t t = cmd->params[i].ctype;
        int pos = (int)i + 2;

        a[i].ctype = t;
        memset(&a[i].value, 0, sizeof(a[i].value));
        if (scm_is_bool(v) && t != CLGC_CTYPE_POINTER &&
            t != CLGC_CTYPE_FUNCTION) {
            a[i].value.u64 = scm_is_true(v);
            continue;
        }
        switch (t) {
        case CLGC_CTYPE_INT8:
        case CLGC_CTYPE_INT16:
        case CLGC_CTYPE_INT32:
        case CLGC_CTYPE_INT64:
        case CLGC_CTYPE_INTPTR: {
            if (t == CLGC_CTYPE_INT8)
                a[i].value.i8 = (int8_t)guile_clgc_to_signed(
                    v, INT8_MIN, INT8_MAX, pos, who);
            else if (t == CLGC_CTYPE_INT16)
                a[i].value.i16 = (int16_t)guile_clgc_to_signed(
                    v, INT16_MIN, INT16_MAX, pos, who);
            else if (t == CLGC_CTYPE_INT32)
                a[i].value.i32 = (int32_t)guile_clgc_to_signed(
                    v, INT32_MIN, INT32_MAX, pos, who);
            else
                a[i].value.i64 =
                    guile_clgc_to_signed(v, INT64_MIN, INT64_MAX, pos, who);
            break;
        }
        case CLGC_CTYPE_UINT8:
            a[i].value.u8 =
                (uint8_t)guile_clgc_to_unsigned(v, UINT8_MAX, pos, who);
            break;
        case CLGC_CTYPE_UINT16:
            a[i].value.u16 =
                (uint16_t)guile_clgc_to_unsigned(v, UINT16_MAX, pos, who);
            break;
        case CLGC_CTYPE_UINT32:
            a[i].value.u32 =
                (uint32_t)guile_clgc_to_unsigned(v, UINT32_MAX, pos, who);
            break;
        case CLGC_CTYPE_UINT64:
            a[i].value.u64 = guile_clgc_to_unsigned(v, UINT64_MAX, pos, who);
            break;
        case CLGC_CTYPE_SIZE:
            a[i].value.size = guile_clgc_to_unsigned(v, SIZE_MAX, pos, who);
            break;
        case CLGC_CTYPE_FLOAT:
            a[i].value.f = (float)scm_to_double(v);
            break;
        case CLGC_CTYPE_DOUBLE:
            a[i].value.d = scm_to_double(v);
            break;
        case CLGC_CTYPE_POINTER:
            if (strchr(cmd->params[i].type, '*') == NULL)
                a[i].value.p = generic_handle(&cmd->params[i], v, pos);
            else if (scm_is_false(v))
                a[i].value.p = NULL;
            else if (SCM_POINTER_P(v))
                a[i].value.p = SCM_POINTER_VALUE(v);
            else if (scm_is_bytevector(v))
                a[i].value.p = SCM_BYTEVECTOR_CONTENTS(v);
            else
                scm_wrong_type_arg_msg(who, pos, v,
                                       "pointer, bytevector or #f");
            break;
        case CLGC_CTYPE_FUNCTION:
            if (scm_is_false(v))
                a[i].value.p = NULL;
            else if (SCM_IS_A_P(v, guile_clgc_types[K_CLOSURE]))
                a[i].value.fn = guile_clgc_closure_code(v, pos, who);
            else
                scm_wrong_type_arg_msg(who, pos, v, "closure or #f");
            break;
        default:
            scm_wrong_type_arg_msg(who, pos, v, "value");
        }
    }
    /* The sizes are known once every argument is converted. */
    i = 0;
    for (SCM l = args; !scm_is_null(l); l = scm_cdr(l), i++) {
        keep[i] = CLGC_KEEP_CALL;
        if (cmd->params[i].ctype == CLGC_CTYPE_POINTER &&
            scm_is_bytevector(scm_car(l))) {
            check_reach(cmd, a, i, scm_car(l));
            keep[i] = clgc_command_keep(cmd, i, a);
            until_done += keep[i] == CLGC_KEEP_COMMAND;
        }
    }
    /* A bytevector the command uses until it completes is kept by its
     * event: the binding's own where the call passes #f. */
    if (until_done > 0) {
        if ((e = clgc_command_event(cmd)) < 0)
            guile_clgc_raise_error("CL_INVALID_OPERATION", CL_INVALID_OPERATION,
                                   who, SCM_BOOL_F, SCM_BOOL_F,
                                   "the command has no event to keep its "
                                   "bytevector by");
        if (a[e].value.p == NULL)
            a[e].value.p = &own;
        event = a[e].value.p;
    }
    memset(&r, 0, sizeof(r));
    guile_clgc_signals_note();
    err = clgc_command_call(cmd, i, a, &r);
    guile_clgc_signals_restore();
    if (err == CLGC_OK)
        keep_generic_memory(cmd, keep, args, event != NULL ? *event : NULL, &r);
    if (own != NULL)
        clgc_clReleaseEvent(own);
    scm_remember_upto_here_1(args);
    if (err != CLGC_OK)
        guile_clgc_raise_clgc(err, who);
    note_generic_handles(cmd, a, &r);
    switch (cmd->result_ctype) {
    case CLGC_CTYPE_VOID:
        return SCM_UNSPECIFIED;
    case CLGC_CTYPE_INT32:
        return scm_from_int32(r.i32);
    case CLGC_CTYPE_UINT32:
        return scm_from_uint32(r.u32);
    case CLGC_CTYPE_INT64:
        return scm_from_int64(r.i64);
    case CLGC_CTYPE_UINT64:
        return scm_from_uint64(r.u64);
    case CLGC_CTYPE_SIZE:
        return scm_from_size_t(r.size);
    case CLGC_CTYPE_POINTER:
    case CLGC_CTYPE_FUNCTION:
        return scm_from_pointer(r.p, NULL);
    default:
        return scm_from_int64(r.i64);
    }
}
GUILE_CLGC_HELD2(command_call)

/* Whether h is an object of kind k: one the binding saw made as one
 * (guile_clgc_seen_kind), still an object (object_plausible), and a platform of
 * the list or one the kind's info query answers. */
static int
object_of_kind(int k, void *h)
{
    cl_platform_id ids[16];
    cl_uint n = 0, u = 0;
    cl_device_type t = 0;

    if (guile_clgc_seen_kind(h) != k || !object_plausible(h))
        return 0;
    switch (k) {
    case K_PLATFORM:
        if (clgc_clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
            return 0;
        for (cl_uint i = 0; i < n && i < 16; i++)
            if ((void *)ids[i] == h)
                return 1;
        return 0;
    case K_DEVICE:
        return clgc_clGetDeviceInfo(h, CL_DEVICE_TYPE, sizeof(t), &t, NULL) ==
               CL_SUCCESS;
    case K_CONTEXT:
        return clgc_clGetContextInfo(h, CL_CONTEXT_REFERENCE_COUNT, sizeof(u),
                                     &u, NULL) == CL_SUCCESS;
    case K_QUEUE:
        return clgc_clGetCommandQueueInfo(h, CL_QUEUE_REFERENCE_COUNT,
                                          sizeof(u), &u, NULL) == CL_SUCCESS;
    case K_PROGRAM:
        return clgc_clGetProgramInfo(h, CL_PROGRAM_REFERENCE_COUNT, sizeof(u),
                                     &u, NULL) == CL_SUCCESS;
    case K_KERNEL:
        return clgc_clGetKernelInfo(h, CL_KERNEL_REFERENCE_COUNT, sizeof(u), &u,
                                    NULL) == CL_SUCCESS;
    case K_MEM:
        return clgc_clGetMemObjectInfo(h, CL_MEM_REFERENCE_COUNT, sizeof(u), &u,
                                       NULL) == CL_SUCCESS;
    case K_EVENT:
        return clgc_clGetEventInfo(h, CL_EVENT_REFERENCE_COUNT, sizeof(u), &u,
                                   NULL) == CL_SUCCESS;
    case K_SAMPLER:
        return clgc_clGetSamplerInfo(h, CL_SAMPLER_REFERENCE_COUNT, sizeof(u),
                                     &u, NULL) == CL_SUCCESS;
    default:
        return 0;
    }
}

/* (pointer->object kind pointer): adopt a handle a generic call made, for
 * release and the typed procedures. kind: context queue program kernel
 * buffer event. The object owns the reference. */
static SCM
pointer_to_object_body(SCM kind, SCM pointer)
{
    static const char *names[K_CQ] = {
        [K_PLATFORM] = "platform", [K_DEVICE] = "device",
        [K_CONTEXT] = "context",   [K_QUEUE] = "queue",
        [K_PROGRAM] = "program",   [K_KERNEL] = "kernel",
        [K_MEM] = "buffer",        [K_EVENT] = "event",
        [K_SAMPLER] = "sampler"};

    guile_clgc_validate("pointer->object", SCM_POINTER_P(pointer), pointer, 2,
                        "pointer");
    for (int k = 0; k < K_CQ; k++)
        if (guile_clgc_sym_is(kind, names[k])) {
            void *h = SCM_POINTER_VALUE(pointer);

            if (!object_of_kind(k, h))
                guile_clgc_raise_error(
                    guile_clgc_cl_error_name(guile_clgc_kinds[k].invalid),
                    guile_clgc_kinds[k].invalid, "pointer->object", SCM_BOOL_F,
                    SCM_BOOL_F, "the pointer is no OpenCL object of that kind");
            return guile_clgc_wrap(k, h);
        }
    scm_wrong_type_arg_msg("pointer->object", 1, kind, "object kind symbol");
    return SCM_UNSPECIFIED;
}
GUILE_CLGC_HELD2(pointer_to_object)

const struct guile_clgc_proc guile_clgc_generic_procs[] = {
    {"pointer->object", 2, 0, 0, pointer_to_object,
     "(pointer->object kind pointer) adopts a handle of kind platform device "
     "context queue program kernel buffer event sampler that the binding saw "
     "made; the "
     "object owns the reference."},
    {"command-call", 1, 0, 1, command_call,
     "(command-call name arg ...) calls the OpenCL command called name through "
     "its clgc wrapper, arguments converted and checked by the command's "
     "metadata; returns its result."},
    {NULL, 0, 0, 0, NULL, NULL}};
