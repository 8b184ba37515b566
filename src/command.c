/* Look-ups in the generated command table (src/gen/commands.c). */

#include <string.h>

#include "gen/commands.h"
#include "internal.h"

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
