/* The command table (src/gen/commands.c), its look-ups, and the two
 * wrappers that hand out its wrappers: clGetExtensionFunctionAddress and
 * ...ForPlatform (gen/tables.py, HANDWRITTEN). The table points at those
 * wrappers and they look in the table, so the three are one object,
 * above every other wrapper (tests/callgraph.sh). */

#include <string.h>

#include "gen/commands.h"
#include "next.h"

#include "gen/commands.c"

size_t
clgc_command_count(void)
{
    return CLGC__N_COMMANDS;
}

const clgc_command_t *
clgc_command_at(size_t i)
{
    return i < CLGC__N_COMMANDS ? &clgc__commands[i] : NULL;
}

const clgc_command_t *
clgc_command_find(const char *name)
{
    size_t lo = 0, hi = CLGC__N_COMMANDS;

    if (name == NULL)
        return NULL;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, clgc__commands[mid].name);

        if (c == 0)
            return &clgc__commands[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* The wrapper to hand out for a function the platform gave us: clgc's own
 * for any command in the registry, the raw pointer for anything else
 * (clgc cannot know an unknown function's signature). */
static void *
clgc__wrapper_for(const char *name, void *raw)
{
    const clgc_command_t *cmd;

    if (raw == NULL || name == NULL)
        return raw;
    cmd = clgc_command_find(name);
    return cmd != NULL ? (void *)cmd->wrapper : raw;
}

struct clgc__lookup_args {
    cl_platform_id platform;
    const char *name;
    void *ret;
};

static void *
clgc__lookup_for_platform_body(void *p)
{
    struct clgc__lookup_args *a = p;

    a->ret = clGetExtensionFunctionAddressForPlatform(a->platform, a->name);
    return NULL;
}

static void *
clgc__lookup_body(void *p)
{
    struct clgc__lookup_args *a = p;

    a->ret = clGetExtensionFunctionAddress(a->name);
    return NULL;
}

void *CL_API_CALL
clgc_clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                              const char *func_name)
{
    struct clgc__lookup_args a = {platform, func_name, NULL};

    clgc_call_safe(clgc__lookup_for_platform_body, &a);
    return clgc__wrapper_for(func_name, a.ret);
}

void *CL_API_CALL
clgc_clGetExtensionFunctionAddress(const char *func_name)
{
    struct clgc__lookup_args a = {NULL, func_name, NULL};

    clgc_call_safe(clgc__lookup_body, &a);
    return clgc__wrapper_for(func_name, a.ret);
}
