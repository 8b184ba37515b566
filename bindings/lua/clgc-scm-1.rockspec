-- LuaRocks: the Lua 5.4 binding, built against an installed clgc. From the
-- top of the source tree: luarocks --lua-version 5.4 make
-- bindings/lua/clgc-scm-1.rockspec (CLGC_DIR=... if clgc is not found).
rockspec_format = "3.0"
package = "clgc"
version = "scm-1"
source = {
    -- `luarocks make` builds from the tree it runs in and fetches nothing;
    -- `luarocks build` takes the tarball `make dist` writes.
    url = "clgc-0.1.0.tar.gz",
    dir = "clgc-0.1.0",
}
description = {
    summary = "OpenCL for Lua 5.4 through clgc: coroutines keep running " ..
        "while kernels run and programs build",
    detailed = [[
Platforms, devices, contexts, queues, programs, kernels, buffers and
events as handles; waits and builds that yield inside coroutines of a
small scheduler and block elsewhere; OpenCL callbacks as Lua functions
run on the state's own thread; a completion queue any event loop (luv,
cqueues, poll) can drive through its file descriptor; every other
command through clgc's generic call. See docs/lua.md.
]],
    license = "MIT",
}
dependencies = {
    "lua >= 5.4, < 5.5",
}
external_dependencies = {
    CLGC = {
        header = "clgc.h",
        library = "clgc",
    },
}
build = {
    type = "builtin",
    modules = {
        clgc = "bindings/lua/clgc.lua",
        ["clgc.core"] = {
            sources = {
                "bindings/lua/src/lclgc.c",
                "bindings/lua/src/lplatform.c",
                "bindings/lua/src/lprogram.c",
                "bindings/lua/src/lmem.c",
                "bindings/lua/src/levent.c",
                "bindings/lua/src/lgeneric.c",
            },
            incdirs = { "$(CLGC_INCDIR)", "bindings/lua/src" },
            libdirs = { "$(CLGC_LIBDIR)" },
            libraries = { "clgc", "OpenCL", "pthread" },
        },
    },
}
