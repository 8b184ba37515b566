/* Every info query, by name, through the generated tables (clgc/names.h):
 * one stub for every family, its value as a Clgc.info. */

#include <stdlib.h>
#include <string.h>

#include "clgc_ml.h"

/* Clgc.info's constructors with an argument, in order. */
enum {
    I_STRING,
    I_STRINGS,
    I_BOOL,
    I_INT,
    I_FLOAT,
    I_INTS,
    I_FLAGS,
    I_ENUM,
    I_ENUMS,
    I_HANDLES,
    I_BYTES
};

static value
ml_enum_string(const clgc_enum_group_t *g, int64_t v)
{
    const char *name = clgc_enum_name(g, v);
    char number[32];

    if (name != NULL)
        return caml_copy_string(name);
    snprintf(number, sizeof(number), "0x%llx", (unsigned long long)v);
    return caml_copy_string(number);
}

/* A list of strings, from the last element back. */
static value
ml_cons(value head, value tail)
{
    CAMLparam2(head, tail);
    CAMLlocal1(cell);

    cell = caml_alloc_small(2, 0);
    Field(cell, 0) = head;
    Field(cell, 1) = tail;
    CAMLreturn(cell);
}

/* A bitfield's flags by name; bits the group does not name as hex. */
static value
ml_flags(const clgc_enum_group_t *g, uint64_t bits)
{
    CAMLparam0();
    CAMLlocal2(list, s);

    list = Val_emptylist;
    for (int b = 63; b >= 0; b--) {
        if (!(bits >> b & 1))
            continue;
        s = ml_enum_string(g, (int64_t)1 << b);
        list = ml_cons(s, list);
    }
    CAMLreturn(list);
}

static value
ml_ints(const void *buf, size_t n, size_t width)
{
    CAMLparam0();
    CAMLlocal2(arr, x);

    arr = caml_alloc_tuple(n);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = (const unsigned char *)buf + i * width;
        int64_t v = 0;

        if (width == 4)
            v = *(const uint32_t *)(const void *)p;
        else if (width == 8)
            v = (int64_t) * (const uint64_t *)(const void *)p;
        x = caml_copy_int64(v);
        Store_field(arr, i, x);
    }
    CAMLreturn(arr);
}

/* The value of query q, size bytes at buf, as a Clgc.info. */
static value
ml_info_value(const clgc_info_t *q, const unsigned char *buf, size_t size)
{
    CAMLparam0();
    CAMLlocal3(v, list, s);
    const clgc_enum_group_t *g =
        q->group != NULL ? clgc_enum_group_find(q->group) : NULL;
    size_t width = clgc_info_type_size(q->type), n = width ? size / width : 0;

    switch (q->type) {
    case CLGC_INFO_STRING:
        v = caml_alloc_initialized_string(strnlen((const char *)buf, size),
                                          (const char *)buf);
        CAMLreturn(clgc_ml_some(I_STRING, v));
    case CLGC_INFO_STRING_ARRAY:
        list = Val_emptylist;
        for (size_t i = n; i-- > 0;) {
            s = caml_copy_string(((const char *const *)(const void *)buf)[i]);
            list = ml_cons(s, list);
        }
        CAMLreturn(clgc_ml_some(I_STRINGS, list));
    case CLGC_INFO_BOOL:
        CAMLreturn(clgc_ml_some(I_BOOL,
                                Val_bool(*(const cl_bool *)(const void *)buf)));
    case CLGC_INFO_INT:
        v = caml_copy_int64(*(const cl_int *)(const void *)buf);
        CAMLreturn(clgc_ml_some(I_INT, v));
    case CLGC_INFO_UINT:
    case CLGC_INFO_ULONG:
    case CLGC_INFO_SIZE:
    case CLGC_INFO_POINTER:
        v = caml_copy_int64(width == 4 ? *(const uint32_t *)(const void *)buf
                                       : *(const uint64_t *)(const void *)buf);
        CAMLreturn(clgc_ml_some(I_INT, v));
    case CLGC_INFO_FLOAT:
        v = caml_copy_double(*(const cl_float *)(const void *)buf);
        CAMLreturn(clgc_ml_some(I_FLOAT, v));
    case CLGC_INFO_UINT_ARRAY:
    case CLGC_INFO_ULONG_ARRAY:
    case CLGC_INFO_SIZE_ARRAY:
    case CLGC_INFO_PROPERTIES:
    case CLGC_INFO_PROPERTIES_INTPTR:
        v = ml_ints(buf, n, width);
        CAMLreturn(clgc_ml_some(I_INTS, v));
    case CLGC_INFO_BITFIELD:
        v = ml_flags(g, *(const uint64_t *)(const void *)buf);
        CAMLreturn(clgc_ml_some(I_FLAGS, v));
    case CLGC_INFO_ENUM:
        v = ml_enum_string(g, *(const uint32_t *)(const void *)buf);
        CAMLreturn(clgc_ml_some(I_ENUM, v));
    case CLGC_INFO_ENUM_ARRAY:
        list = Val_emptylist;
        for (size_t i = n; i-- > 0;) {
            s = ml_enum_string(g, ((const uint32_t *)(const void *)buf)[i]);
            list = ml_cons(s, list);
        }
        CAMLreturn(clgc_ml_some(I_ENUMS, list));
    case CLGC_INFO_HANDLE:
    case CLGC_INFO_HANDLE_ARRAY:
        v = caml_alloc_tuple(n);
        for (size_t i = 0; i < n; i++) {
            s = caml_copy_nativeint(
                (intnat)((void *const *)(const void *)buf)[i]);
            Store_field(v, i, s);
        }
        CAMLreturn(clgc_ml_some(I_HANDLES, v));
    default:
        v = caml_alloc_initialized_string(size, (const char *)buf);
        CAMLreturn(clgc_ml_some(I_BYTES, v));
    }
}

/* info object family query extra: extra is None for the families that
 * take nothing more, or Some of Clgc's extra: Device of a device (tag 0)
 * or Arg_index of an index (tag 1). */
value
ml_clgc_info(value object, value family, value query, value device)
{
    CAMLparam4(object, family, query, device);
    CAMLlocal1(r);
    ML_STUB;
    const clgc_info_family_t *f = clgc_info_family_find(String_val(family));
    /* A query with a NUL inside would be found cut short. */
    const clgc_info_t *q = f != NULL && caml_string_is_c_safe(query)
                               ? clgc_info_find(f, String_val(query))
                               : NULL;
    clgc_info_extra_t extra = {0};
    struct ml_handle *h = Handle_val(object);
    unsigned char *buf;
    size_t size = 0;
    cl_int err;

    if (q == NULL) {
        char message[200];

        snprintf(message, sizeof(message), "Clgc.info: no query %s of %s",
                 String_val(query), String_val(family));
        caml_invalid_argument(message);
    }
    if (q->type == CLGC_INFO_BINARIES)
        caml_invalid_argument("Clgc.info: binaries are not an info value");
    if (Is_block(device) && Tag_val(Field(device, 0)) == 0)
        extra.device =
            clgc_ml_get(Field(Field(device, 0), 0), ML_DEVICE, "Clgc.info");
    else if (Is_block(device)) {
        intnat i = Long_val(Field(Field(device, 0), 0));

        if (i < 0 || i > UINT32_MAX)
            clgc_ml_raise(CL_INVALID_ARG_INDEX, f->command, q->name);
        extra.arg_index = (uint32_t)i;
    }
    clgc_ml_get(object, (enum ml_kind)h->kind, "Clgc.info");
    err = clgc_info_get(f, Handle_val(object)->h, &extra, q->value, 0, NULL,
                        &size);
    buf = err == CL_SUCCESS ? malloc(size + 8) : NULL;
    if (err == CL_SUCCESS && buf == NULL)
        err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS) {
        memset(buf, 0, size + 8);
        err = clgc_info_get(f, Handle_val(object)->h, &extra, q->value, size,
                            buf, NULL);
    }
    if (err != CL_SUCCESS) {
        free(buf);
        clgc_ml_raise(err, f->command, q->name);
    }
    r = ml_info_value(q, buf, size);
    free(buf);
    ML_RETURN(r);
}
