#ifndef CLGC_COMMANDS_H
#define CLGC_COMMANDS_H

/* Metadata about every command in the OpenCL registry, generated with the
 * wrappers: enough for a binding to list the API, to see which calls may
 * block or take callbacks, and to call a wrapper without compiled glue. */

#include <stddef.h>

#include "clgc/common.h"

CLGC_BEGIN_DECLS

/* How a value is passed in C (the width and signedness a foreign-function
 * interface needs). OpenCL objects and arrays are POINTER; callbacks are
 * FUNCTION. */
typedef enum clgc_ctype {
    CLGC_CTYPE_VOID,
    CLGC_CTYPE_INT8,
    CLGC_CTYPE_UINT8,
    CLGC_CTYPE_INT16,
    CLGC_CTYPE_UINT16,
    CLGC_CTYPE_INT32,
    CLGC_CTYPE_UINT32,
    CLGC_CTYPE_INT64,
    CLGC_CTYPE_UINT64,
    CLGC_CTYPE_INTPTR,
    CLGC_CTYPE_SIZE,
    CLGC_CTYPE_FLOAT,
    CLGC_CTYPE_DOUBLE,
    CLGC_CTYPE_POINTER,
    CLGC_CTYPE_FUNCTION
} clgc_ctype_t;

/* One parameter: its C type as the registry spells it ("const cl_event *",
 * or a callback's full type), its name, and how it is passed. */
typedef struct clgc_param {
    const char *type;
    const char *name;
    clgc_ctype_t ctype;
} clgc_param_t;

/* Flags of a command. */
enum {
    /* Only an extension adds it: the wrapper resolves it per platform (as
     * it does the core commands newer than the ICD loader, OpenCL 3.1's
     * clGetKernelSuggestedLocalWorkSize, which lack this flag). */
    CLGC_COMMAND_EXTENSION = 1 << 0,
    /* It may block for longer than a lock round trip (builds, waits,
     * blocking transfers, finishes, releases that wait, first-use device
     * set-up): a runtime must never skip the safe region for it. */
    CLGC_COMMAND_MAY_BLOCK = 1 << 1,
    /* At least one parameter is a callback (ctype CLGC_CTYPE_FUNCTION). */
    CLGC_COMMAND_CALLBACK = 1 << 2
};

/* A generic function pointer; cast it to the command's real type. */
typedef void (*clgc_function_t)(void);

/* One command of the registry. */
typedef struct clgc_command {
    const char *name;        /* "clBuildProgram" */
    const char *result_type; /* "cl_int" */
    clgc_ctype_t result_ctype;
    unsigned nparams;
    const clgc_param_t *params; /* nparams entries, in order */
    unsigned flags;             /* CLGC_COMMAND_* */
    const char *origin;         /* "CL_VERSION_1_2" or the extension name */
    clgc_function_t wrapper;    /* clgc_<name> */
} clgc_command_t;

/* The number of commands (252 for the registry clgc was generated from,
 * OpenCL 3.1.1's), whatever the OpenCL headers of the program declare. */
CLGC_EXTERN size_t clgc_command_count(void);

/* The i-th command in name order, or NULL if i >= clgc_command_count(). */
CLGC_EXTERN const clgc_command_t *clgc_command_at(size_t i);

/* The command called name ("clFinish"), or NULL. Binary search. */
CLGC_EXTERN const clgc_command_t *clgc_command_find(const char *name);

CLGC_END_DECLS

#endif /* CLGC_COMMANDS_H */
