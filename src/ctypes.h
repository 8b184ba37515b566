#ifndef CLGC_CTYPES_H
#define CLGC_CTYPES_H

/* libffi's view of clgc's ctypes (clgc_ctype_t), shared by the closures
 * (ffi.c) and the generic calls (call.c). */

#include <ffi.h>

#include "internal.h"

#define CLGC__N_CTYPES (CLGC_CTYPE_FUNCTION + 1)

/* libffi's type for each ctype, in clgc_ctype_t order. */
extern ffi_type *const clgc__ffi_types[CLGC__N_CTYPES];

/* Whether t is a ctype a value may have (every ctype but VOID). */
int clgc__value_ctype(clgc_ctype_t t);

/* A value of ctype t as libffi returns it: integers narrower than ffi_arg
 * widened to a whole ffi_arg, other types as they are. */
union clgc__ffi_result {
    ffi_arg word;
    clgc_value_t value;
};

/* From what libffi stores for a call's result to the clgc_value_t member
 * of type t. */
void clgc__result_narrow(clgc_ctype_t t, const union clgc__ffi_result *r,
                         clgc_value_t *v);

#endif /* CLGC_CTYPES_H */
