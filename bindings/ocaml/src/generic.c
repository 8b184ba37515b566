/* The generic path (clgc_ml.h): any command of the registry by name, each
 * argument converted and checked by the command's metadata (clgc/ffi.h,
 * clgc/commands.h) before the call. The memory a command reads or
 * writes is a Bigarray's (it never moves while the lock is let go),
 * checked against what the command reaches there (clgc_command_reach),
 * and kept for as long as OpenCL may use it (clgc_command_keep): until
 * an enqueued command's event completes, or until a memory object made
 * over it is destroyed. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgc_ml.h"

/* Clgc.Generic.value's constructors with an argument, in their order
 * (Null is the constant one). */
enum { G_INT, G_FLOAT, G_OBJ, G_STRING, G_MEMORY, G_OUT, G_ADDRESS };
/* The stubs' result, Clgc.Generic.raw (R_null the constant one). */
enum { R_INT, R_FLOAT, R_OBJ, R_ADDRESS };

/* The type a single-element out parameter points to ("cl_event" of
 * "cl_event *"), in buf. */
static const char *
ml_pointee(const char *type, char *buf, size_t n)
{
    size_t len = strlen(type);

    if (len >= 2 && strcmp(type + len - 2, " *") == 0)
        len -= 2;
    snprintf(buf, n, "%.*s", (int)len, type);
    return buf;
}

/* An integer of ctype t as the raw result. */
static value
ml_raw_int(clgc_ctype_t t, const clgc_value_t *v)
{
    int64_t i;

    switch (t) {
    case CLGC_CTYPE_INT8:
        i = v->i8;
        break;
    case CLGC_CTYPE_UINT8:
        i = v->u8;
        break;
    case CLGC_CTYPE_INT16:
        i = v->i16;
        break;
    case CLGC_CTYPE_UINT16:
        i = v->u16;
        break;
    case CLGC_CTYPE_INT32:
        i = v->i32;
        break;
    case CLGC_CTYPE_UINT32:
        i = v->u32;
        break;
    case CLGC_CTYPE_INT64:
        i = v->i64;
        break;
    case CLGC_CTYPE_UINT64:
        i = (int64_t)v->u64;
        break;
    case CLGC_CTYPE_INTPTR:
        i = v->iptr;
        break;
    default:
        i = (int64_t)v->size;
        break;
    }
    return clgc_ml_some(R_INT, caml_copy_int64(i));
}

/* A handle or pointer of OpenCL type type as the raw result: an object
 * of the binding's kinds owns the reference. */
static value
ml_raw_pointer(const char *type, void *p)
{
    int k = clgc_ml_kind_of_type(type);

    if (p == NULL)
        return Val_int(0);
    if (k >= 0)
        return clgc_ml_some(R_OBJ, clgc_ml_wrap((enum ml_kind)k, p));
    return clgc_ml_some(R_ADDRESS, caml_copy_nativeint((intnat)p));
}

/* What an out slot got, by the type it points to. */
static value
ml_raw_out(const clgc_param_t *param, const uint64_t *slot)
{
    char buf[64];
    const char *t = ml_pointee(param->type, buf, sizeof(buf));
    clgc_value_t v;

    if (clgc_ml_kind_of_type(t) >= 0 || strchr(t, '*') != NULL)
        return ml_raw_pointer(t, *(void *const *)slot);
    memcpy(&v, slot, sizeof(v) < 8 ? sizeof(v) : 8);
    switch (param->elem_size) {
    case 1:
        return ml_raw_int(CLGC_CTYPE_UINT8, &v);
    case 2:
        return ml_raw_int(CLGC_CTYPE_UINT16, &v);
    case 4:
        if (strstr(t, "float") != NULL)
            return clgc_ml_some(R_FLOAT, caml_copy_double(v.f));
        return ml_raw_int(strcmp(t, "cl_int") == 0 || strcmp(t, "int") == 0
                              ? CLGC_CTYPE_INT32
                              : CLGC_CTYPE_UINT32,
                          &v);
    default:
        if (strstr(t, "double") != NULL)
            return clgc_ml_some(R_FLOAT, caml_copy_double(v.d));
        return ml_raw_int(CLGC_CTYPE_INT64, &v);
    }
}

#define ML_MAX_PARAMS 32

struct ml_call {
    const clgc_command_t *c;
    clgc_arg_t a[ML_MAX_PARAMS];
    char *strings[ML_MAX_PARAMS];
    uint64_t out[ML_MAX_PARAMS];
    char why[240];
};

/* Convert argument i (v) of command c into call->a[i]: 0, or -1 with
 * what is wrong in call->why. */
static int
ml_convert(struct ml_call *call, unsigned i, value v, const char *who)
{
    const clgc_param_t *p = &call->c->params[i];
    clgc_arg_t *a = &call->a[i];
    int tag = Is_block(v) ? Tag_val(v) : -1;
    int k;

    a->ctype = p->ctype;
    memset(&a->value, 0, sizeof(a->value));
    switch (p->ctype) {
    case CLGC_CTYPE_FLOAT:
    case CLGC_CTYPE_DOUBLE:
        if (tag != G_FLOAT)
            goto wrong;
        if (p->ctype == CLGC_CTYPE_FLOAT)
            a->value.f = (float)Double_val(Field(v, 0));
        else
            a->value.d = Double_val(Field(v, 0));
        return 0;
    case CLGC_CTYPE_FUNCTION:
        if (tag != -1)
            goto wrong;
        return 0;
    case CLGC_CTYPE_POINTER:
        break;
    default: /* every integer ctype */
        if (tag != G_INT)
            goto wrong;
        a->value.i64 = Int64_val(Field(v, 0));
        switch (p->ctype) {
        case CLGC_CTYPE_INT8:
        case CLGC_CTYPE_UINT8:
            a->value.u8 = (uint8_t)a->value.i64;
            break;
        case CLGC_CTYPE_INT16:
        case CLGC_CTYPE_UINT16:
            a->value.u16 = (uint16_t)a->value.i64;
            break;
        case CLGC_CTYPE_INT32:
        case CLGC_CTYPE_UINT32:
            a->value.u32 = (uint32_t)a->value.i64;
            break;
        default:
            break;
        }
        return 0;
    }
    if (tag == -1 || tag == G_ADDRESS) {
        a->value.p = tag == -1 ? NULL : (void *)Nativeint_val(Field(v, 0));
        return 0;
    }
    if ((k = clgc_ml_kind_of_type(p->type)) >= 0) { /* a handle */
        if (tag != G_OBJ)
            goto wrong;
        a->value.p = clgc_ml_get(Field(Field(v, 0), 0), (enum ml_kind)k, who);
        return 0;
    }
    switch (tag) {
    case G_MEMORY: /* checked once every count is known */
        a->value.p = Caml_ba_data_val(Field(v, 0));
        return 0;
    case G_STRING:
        if (strcmp(p->type, "const char *") != 0)
            goto wrong;
        if (!caml_string_is_c_safe(Field(v, 0))) {
            snprintf(call->why, sizeof(call->why),
                     "%s: argument %u (%s): a string with a NUL inside", who,
                     i + 1, p->name);
            return -1;
        }
        a->value.p = NULL; /* copied once nothing can raise */
        return 0;
    case G_OUT:
        if (p->elem_size == 0 || p->elem_size > sizeof(call->out[i]) ||
            p->count_param != -1)
            goto wrong;
        a->value.p = &call->out[i];
        return 0;
    }
wrong:
    snprintf(call->why, sizeof(call->why), "%s: argument %u (%s %s) takes %s",
             who, i + 1, p->type, p->name,
             p->ctype == CLGC_CTYPE_FUNCTION ? "Null only"
             : p->ctype == CLGC_CTYPE_FLOAT || p->ctype == CLGC_CTYPE_DOUBLE
                 ? "a Float"
             : p->ctype != CLGC_CTYPE_POINTER ? "an Int"
             : clgc_ml_kind_of_type(p->type) >= 0
                 ? "an Obj of its kind, Null or an Address"
             : strcmp(p->type, "const char *") == 0
                 ? "a String, Memory, Null or an Address"
             : p->elem_size != 0 && p->count_param == -1
                 ? "Out, Memory, Null or an Address"
                 : "Memory, Null or an Address");
    return -1;
}

/* call name args -> raw result, raw outs (one per argument) */
value
ml_clgc_call(value name, value args)
{
    CAMLparam2(name, args);
    CAMLlocal4(result, outs, out, pair);
    ML_STUB;
    struct ml_call call_, *call = &call_;
    const char *who = "Clgc.Generic.call";
    unsigned n = (unsigned)Wosize_val(args), until_done = 0, until_gone = 0;
    int failed = 0;
    cl_event event = NULL, *events = NULL;
    clgc_value_t r;

    memset(call, 0, sizeof(*call));
    call->c = caml_string_is_c_safe(name) ? clgc_command_find(String_val(name))
                                          : NULL;
    if (call->c == NULL)
        snprintf(call->why, sizeof(call->why), "%s: no command %.80s", who,
                 String_val(name));
    else if (n != call->c->nparams || n > ML_MAX_PARAMS)
        snprintf(call->why, sizeof(call->why),
                 "%s: %s takes %u arguments, not %u", who, call->c->name,
                 call->c->nparams, n);
    for (unsigned i = 0; call->why[0] == 0 && i < n; i++)
        ml_convert(call, i, Field(args, i), who);
    for (unsigned i = 0; call->why[0] == 0 && i < n; i++) {
        const clgc_param_t *p = &call->c->params[i];
        value v = Field(args, i);

        if (Is_block(v) && Tag_val(v) == G_MEMORY) {
            int64_t need = clgc_command_reach(call->c, i, call->a);
            size_t have = caml_ba_byte_size(Caml_ba_array_val(Field(v, 0)));

            switch (clgc_command_keep(call->c, i, call->a)) {
            case CLGC_KEEP_COMMAND:
                until_done++;
                break;
            case CLGC_KEEP_OBJECT:
                until_gone++;
                break;
            default:
                break;
            }
            if (need < 0)
                snprintf(call->why, sizeof(call->why),
                         "%s: argument %u (%s %s): the size it needs is not "
                         "known (%s): pass an Address",
                         who, i + 1, p->type, p->name,
                         p->unknown != NULL ? p->unknown
                                            : "a count of no integer");
            else if ((uint64_t)need > have)
                snprintf(call->why, sizeof(call->why),
                         "%s: argument %u (%s %s): the Bigarray holds %zu "
                         "bytes, the command reaches %lld",
                         who, i + 1, p->type, p->name, have, (long long)need);
        }
    }
    if (call->why[0] == 0 && until_done > 0) {
        int event_param = clgc_command_event(call->c);
        value v = event_param >= 0 ? Field(args, event_param) : Val_int(1);

        if (v == Val_int(0)) { /* Null: the binding's own, to keep memory */
            call->a[event_param].value.p = &event;
            events = &event;
        } else if (Is_block(v) && Tag_val(v) == G_OUT)
            events = (cl_event *)&call->out[event_param];
        else
            snprintf(call->why, sizeof(call->why),
                     "%s: %s uses a Bigarray until it completes: its event "
                     "takes Null or Out, so that the binding keeps the "
                     "Bigarray until then",
                     who, call->c->name);
    }
    for (unsigned i = 0; call->why[0] == 0 && i < n; i++) {
        value v = Field(args, i);

        if (Is_block(v) && Tag_val(v) == G_STRING) {
            size_t len = caml_string_length(Field(v, 0)) + 1;

            if ((call->strings[i] = malloc(len)) == NULL)
                snprintf(call->why, sizeof(call->why), "%s: out of memory",
                         who);
            else
                memcpy(call->strings[i], String_val(Field(v, 0)), len);
            call->a[i].value.p = call->strings[i];
        }
    }
    if (call->why[0] == 0 &&
        clgc_command_call(call->c, n, call->a, &r) != CLGC_OK)
        snprintf(call->why, sizeof(call->why), "%s: %s cannot be called", who,
                 call->c->name);
    for (unsigned i = 0; i < n && call->c != NULL; i++)
        free(call->strings[i]);
    if (call->why[0] != 0)
        caml_invalid_argument(call->why);

    /* The memory, kept while OpenCL may use it. */
    if (events != NULL) {
        cl_event e = *events;

        for (unsigned i = 0; e != NULL && i < n; i++) {
            value v = Field(args, i);

            if (Is_block(v) && Tag_val(v) == G_MEMORY &&
                clgc_command_keep(call->c, i, call->a) == CLGC_KEEP_COMMAND &&
                clgc_ml_keep_until_complete(e, Field(v, 0)) != CL_SUCCESS)
                failed = 1;
        }
        if (failed)
            clgc_wait_for_events(1, &e); /* kept by args, the stub's root */
    }
    if (event != NULL)
        clgc_clReleaseEvent(event);
    if (until_gone > 0 && strcmp(call->c->result_type, "cl_mem") == 0 &&
        r.p != NULL)
        for (unsigned i = 0; i < n; i++) {
            value v = Field(args, i);

            if (Is_block(v) && Tag_val(v) == G_MEMORY &&
                clgc_command_keep(call->c, i, call->a) == CLGC_KEEP_OBJECT &&
                clgc_ml_keep_until_destroyed(r.p, Field(v, 0)) != CL_SUCCESS) {
                clgc_clReleaseMemObject(r.p);
                caml_raise_out_of_memory();
            }
        }

    switch (call->c->result_ctype) {
    case CLGC_CTYPE_VOID:
        result = Val_int(0);
        break;
    case CLGC_CTYPE_POINTER:
        result = ml_raw_pointer(call->c->result_type, r.p);
        break;
    case CLGC_CTYPE_FLOAT:
        result = clgc_ml_some(R_FLOAT, caml_copy_double(r.f));
        break;
    case CLGC_CTYPE_DOUBLE:
        result = clgc_ml_some(R_FLOAT, caml_copy_double(r.d));
        break;
    default:
        result = ml_raw_int(call->c->result_ctype, &r);
    }
    outs = caml_alloc(n, 0);
    for (unsigned i = 0; i < n; i++) {
        value v = Field(args, i);

        if (Is_block(v) && Tag_val(v) == G_OUT) {
            out = ml_raw_out(&call->c->params[i], &call->out[i]);
            Store_field(outs, i, out);
        }
    }
    pair = caml_alloc_tuple(2);
    Store_field(pair, 0, result);
    Store_field(pair, 1, outs);
    ML_RETURN(pair);
}
