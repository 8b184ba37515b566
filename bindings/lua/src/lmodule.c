/* The hub: clgc.core's entry, which builds the module from the service
 * (lclgc.c) and the areas (lplatform.c, lprogram.c, ...). Nothing calls
 * it but Lua's require; the areas call the service, never this. */

#define _GNU_SOURCE 1 /* dladdr, RTLD_NODELETE */
#include <dlfcn.h>

#include "lclgc.h"

CLGC_EXTERN int luaopen_clgc_core(lua_State *L);

int
luaopen_clgc_core(lua_State *L)
{
    static int pinned;
    Dl_info info;

    /* lua_close unloads the C modules it loaded, and with this one
     * libclgc, while threads may still run their code: PoCL's, calling a
     * trampoline; clgc's watcher; a reaper of ours. Pin the module (and so
     * libclgc) for the life of the process. */
    if (!__atomic_exchange_n(&pinned, 1, __ATOMIC_ACQ_REL) &&
        dladdr((void *)luaopen_clgc_core, &info) != 0 && info.dli_fname != NULL)
        (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NODELETE);
    (void)lclgc_state_get(L);
    lua_newtable(L);
    lclgc_open_core(L);
    lclgc_open_platform(L);
    lclgc_open_program(L);
    lclgc_open_mem(L);
    lclgc_open_event(L);
    lclgc_open_generic(L);
    lclgc_open_xfer(L);
    lclgc_open_image(L);
    lclgc_open_binary(L);
    lclgc_open_info(L);
    lua_getfield(L, LUA_REGISTRYINDEX, "clgc.internal");
    lclgc_internal_program(L);
    lua_pop(L, 1);
    return 1;
}
