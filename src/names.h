/* The tables of clgc/names.h: generated into src/gen/names.c (gen/names.py),
 * looked up by src/names.c. */

#ifndef CLGC_SRC_NAMES_H
#define CLGC_SRC_NAMES_H

#include "clgc.h"

struct clgc__cl_error {
    int32_t code;
    const char *name;
};

#pragma GCC visibility push(hidden)
extern const struct clgc__cl_error clgc__cl_errors[];
extern const size_t clgc__n_cl_errors;
extern const clgc_info_family_t clgc__info_families[];
extern const size_t clgc__n_info_families;
extern const clgc_enum_group_t clgc__enum_groups[]; /* sorted by name */
extern const size_t clgc__n_enum_groups;
extern const clgc_object_kind_t clgc__object_kinds[];
extern const size_t clgc__n_object_kinds;
#pragma GCC visibility pop

#endif /* CLGC_SRC_NAMES_H */
