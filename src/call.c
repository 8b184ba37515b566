/* Generic calls (include/clgc/ffi.h): a call of a command's wrapper with
 * a libffi call description made from the command's metadata. The
 * registry's commands' descriptions are prepared once, together, on the
 * first generic call; any other command's is built on the stack for each
 * call. */

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctypes.h"
#include "gen/commands.h"

/* Describe a call of command to libffi, with types[] room for its
 * parameters' types. Returns CLGC_EINVAL for a command clgc cannot call:
 * an invalid ctype, or one libffi refuses. */
static int
clgc__command_prep(const clgc_command_t *command, ffi_cif *cif,
                   ffi_type **types)
{
    clgc_ctype_t rt = command->result_ctype;

    if (rt != CLGC_CTYPE_VOID && !clgc__value_ctype(rt))
        return CLGC_EINVAL;
    for (unsigned i = 0; i < command->nparams; i++) {
        if (!clgc__value_ctype(command->params[i].ctype))
            return CLGC_EINVAL;
        types[i] = clgc__ffi_types[command->params[i].ctype];
    }
    if (ffi_prep_cif(cif, FFI_DEFAULT_ABI, command->nparams,
                     clgc__ffi_types[rt], types) != FFI_OK)
        return CLGC_EINVAL;
    return CLGC_OK;
}

/* The registry's commands' call descriptions. Preparing one classifies
 * every argument, a cost of the order of the call's own (prepared once:
 * docs/ffi.md). One allocation for the life of the process;
 * without it every call prepares its own. */
struct clgc__cifs {
    ffi_cif cif[CLGC__N_COMMANDS];
    unsigned char ok[CLGC__N_COMMANDS];
    ffi_type *types[]; /* every command's parameters, one after another */
};

static struct clgc__cifs *clgc__cifs;
static pthread_once_t clgc__cifs_once = PTHREAD_ONCE_INIT;

static void
clgc__cifs_prepare(void)
{
    struct clgc__cifs *c;
    size_t n = 0;

    for (size_t i = 0; i < CLGC__N_COMMANDS; i++)
        n += clgc__commands[i].nparams;
    c = malloc(sizeof(*c) + n * sizeof(ffi_type *));
    if (c == NULL)
        return;
    n = 0;
    for (size_t i = 0; i < CLGC__N_COMMANDS; i++) {
        c->ok[i] = clgc__command_prep(&clgc__commands[i], &c->cif[i],
                                      &c->types[n]) == CLGC_OK;
        n += clgc__commands[i].nparams;
    }
    clgc__cifs = c;
}

/* The prepared description of command, if it is one of the registry's;
 * else NULL. */
static ffi_cif *
clgc__command_cif(const clgc_command_t *command)
{
    uintptr_t at = (uintptr_t)command, first = (uintptr_t)clgc__commands;
    size_t i;

    if (at < first || at >= (uintptr_t)(clgc__commands + CLGC__N_COMMANDS))
        return NULL;
    i = (at - first) / sizeof(*command);
    pthread_once(&clgc__cifs_once, clgc__cifs_prepare);
    return clgc__cifs != NULL && clgc__cifs->ok[i] ? &clgc__cifs->cif[i] : NULL;
}

int
clgc_command_call(const clgc_command_t *command, unsigned nargs,
                  const clgc_arg_t *args, clgc_value_t *result)
{
    ffi_type *types[CLGC_CLOSURE_MAX_ARGS];
    void *values[CLGC_CLOSURE_MAX_ARGS];
    union clgc__ffi_result r;
    ffi_cif own, *cif;
    int err;

    if (command == NULL || result == NULL || (args == NULL && nargs > 0) ||
        command->wrapper == NULL || command->nparams > CLGC_CLOSURE_MAX_ARGS ||
        (command->nparams > 0 && command->params == NULL))
        return CLGC_EINVAL;
    cif = clgc__command_cif(command);
    if (cif == NULL) {
        err = clgc__command_prep(command, &own, types);
        if (err != CLGC_OK)
            return err;
        cif = &own;
    }
    if (nargs != command->nparams)
        return CLGC_EARITY;
    for (unsigned i = 0; i < nargs; i++) {
        if (args[i].ctype != command->params[i].ctype)
            return CLGC_ETYPE;
        /* Every member of the union starts at its first byte. libffi
         * only reads through these. */
        values[i] = (void *)&args[i].value;
    }
    ffi_call(cif, command->wrapper, &r, values);
    if (command->result_ctype != CLGC_CTYPE_VOID)
        clgc__result_narrow(command->result_ctype, &r, result);
    return CLGC_OK;
}

int
clgc_command_call_by_name(const char *name, unsigned nargs,
                          const clgc_arg_t *args, clgc_value_t *result)
{
    const clgc_command_t *command;

    if (name == NULL)
        return CLGC_EINVAL;
    command = clgc_command_find(name);
    if (command == NULL)
        return CLGC_ENOCOMMAND;
    return clgc_command_call(command, nargs, args, result);
}

/* An integer argument's value, or -1 for a negative one or a ctype that
 * is no integer; saturated at INT64_MAX. */
static int64_t
clgc__count_of(const clgc_arg_t *a)
{
    switch (a->ctype) {
    case CLGC_CTYPE_INT8:
        return a->value.i8;
    case CLGC_CTYPE_UINT8:
        return a->value.u8;
    case CLGC_CTYPE_INT16:
        return a->value.i16;
    case CLGC_CTYPE_UINT16:
        return a->value.u16;
    case CLGC_CTYPE_INT32:
        return a->value.i32;
    case CLGC_CTYPE_UINT32:
        return a->value.u32;
    case CLGC_CTYPE_INT64:
        return a->value.i64;
    case CLGC_CTYPE_UINT64:
        return a->value.u64 > (uint64_t)INT64_MAX ? INT64_MAX
                                                  : (int64_t)a->value.u64;
    case CLGC_CTYPE_INTPTR:
        return a->value.iptr;
    case CLGC_CTYPE_SIZE:
        return a->value.size > (size_t)INT64_MAX ? INT64_MAX
                                                 : (int64_t)a->value.size;
    default:
        return -1;
    }
}

int64_t
clgc_command_reach(const clgc_command_t *command, unsigned i,
                   const clgc_arg_t *args)
{
    const clgc_param_t *p;
    int64_t n;

    if (command == NULL || i >= command->nparams || command->params == NULL)
        return -1;
    p = &command->params[i];
    if (p->elem_size == 0)
        return -1;
    if (p->count_param < 0)
        return (int64_t)p->elem_size;
    if (args == NULL || (unsigned)p->count_param >= command->nparams)
        return -1;
    n = clgc__count_of(&args[p->count_param]);
    if (n < 0)
        return -1;
    return (uint64_t)n > (uint64_t)INT64_MAX / p->elem_size
               ? INT64_MAX
               : n * (int64_t)p->elem_size;
}

/* The index of command's parameter called name, or -1. */
static int
clgc__param_index(const clgc_command_t *command, const char *name)
{
    for (unsigned i = 0; i < command->nparams; i++)
        if (strcmp(command->params[i].name, name) == 0)
            return (int)i;
    return -1;
}

clgc_keep_t
clgc_command_keep(const clgc_command_t *command, unsigned i,
                  const clgc_arg_t *args)
{
    static const char *const blocking[] = {"blocking_read", "blocking_write",
                                           "blocking_copy", "blocking"};
    const char *name;
    int b;

    if (command == NULL || i >= command->nparams || command->params == NULL ||
        command->params[i].ctype != CLGC_CTYPE_POINTER || args == NULL)
        return CLGC_KEEP_CALL;
    name = command->params[i].name;
    if (strncmp(command->name, "clEnqueue", 9) == 0 &&
        (strcmp(name, "ptr") == 0 || strcmp(name, "dst_ptr") == 0 ||
         strcmp(name, "src_ptr") == 0)) {
        for (size_t k = 0; k < sizeof(blocking) / sizeof(*blocking); k++)
            if ((b = clgc__param_index(command, blocking[k])) >= 0)
                return clgc__count_of(&args[b]) > 0 ? CLGC_KEEP_CALL
                                                    : CLGC_KEEP_COMMAND;
        return CLGC_KEEP_COMMAND;
    }
    if (strcmp(name, "host_ptr") == 0 &&
        (strncmp(command->name, "clCreateBuffer", 14) == 0 ||
         strncmp(command->name, "clCreateImage", 13) == 0) &&
        (b = clgc__param_index(command, "flags")) >= 0 &&
        (clgc__count_of(&args[b]) & CL_MEM_USE_HOST_PTR) != 0)
        return CLGC_KEEP_OBJECT;
    return CLGC_KEEP_CALL;
}

int
clgc_command_event(const clgc_command_t *command)
{
    int e;

    if (command == NULL || command->params == NULL ||
        (e = clgc__param_index(command, "event")) < 0)
        return -1;
    return strcmp(command->params[e].type, "cl_event *") == 0 ? e : -1;
}
