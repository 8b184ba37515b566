-- Program binaries (got and built again), separate compilation with
-- headers and libraries, and vector and structure kernel arguments, on
-- PoCL. valgrind runs this script too.
local clgc = require "clgc"
local lib = require "lib"

local dev, ctx, q = lib.pocl()

local function run_saxpy(prog, what)
    local k = prog:kernel("saxpy")
    local x = ctx:buffer(string.pack("<ffff", 1, 2, 3, 4))
    local y = ctx:buffer(string.pack("<ffff", 10, 20, 30, 40))
    k:args({ "float", 2 }, x, y)
    clgc.wait(q:launch(k, 4))
    local got = q:read(y, "float")
    for i = 1, 4 do
        lib.eq(got[i], 2 * i + 10 * i, ("%s: y[%d]"):format(what, i))
    end
    k:release()
    x:release()
    y:release()
end

-- Binaries: one per device, from Program:info("binaries"); a program
-- made from them builds and runs.
do
    local p = ctx:program(lib.saxpy_src):build()
    local bins = p:info("binaries")
    lib.eq(#bins, 1, "one binary for the one device")
    lib.ok(#bins[1] > 0, "a binary of some bytes")
    local pb = ctx:program_binaries(dev, bins):build()
    lib.eq(pb:build_info(dev, "binary_type"),
        "CL_PROGRAM_BINARY_TYPE_EXECUTABLE", "the binary's program type")
    run_saxpy(pb, "a program from its binary")
    local pb2 = ctx:program_binaries({ dev }, bins[1]):build()
    run_saxpy(pb2, "a binary given as a string")
    lib.raises(function() ctx:program_binaries(dev, {}) end,
        "clgc.Context:program_binaries", "0 binaries for 1 devices")
    lib.raises(function() ctx:program_binaries(dev, { "" }) end,
        "binary 1: a non-empty string expected")
    lib.raises(function() ctx:program_binaries(dev, { 42 }) end,
        "binary 1: a non-empty string expected")
    lib.raises(function() ctx:program_binaries(dev, { "not a binary" }) end,
        "CL_INVALID_BINARY")
    lib.fails(function() ctx:program_binaries(dev, { "not a binary" }) end,
        "CL_INVALID_BINARY", "clgc.Context:program_binaries")
    -- Junk that PoCL would read past (its header before the length) or
    -- assert on (a real binary cut short): a byte, a binary's first 16
    -- bytes, cut at 64, 1000 bytes, in half, one byte short; padded or
    -- refused by the library (clgc_program_with_binaries).
    local b = bins[1]
    for _, junk in ipairs({ "\1", b:sub(1, 16), b:sub(1, 64), b:sub(1, 1000),
        b:sub(1, #b // 2), b:sub(1, #b - 1) }) do
        lib.ok(not pcall(function()
            ctx:program_binaries(dev, { junk }):build()
        end), "junk of " .. #junk .. " bytes refused")
    end
    lib.raises(function() ctx:program_binaries({}, { "x" }) end, "no devices")
    lib.raises(function() ctx:program_binaries(io.stdout, "x") end,
        "argument #2: clgc.Device or a table of them expected")
    p:release()
    pb:release()
    pb2:release()
end

-- Separate compilation: a header given by name, a library, a link.
do
    local header = ctx:program([[
#define SCALE 3.0f
float scaled(float v);
]])
    local lib_src = ctx:program([[
#include "scale.h"
float scaled(float v) { return SCALE * v; }
]]):compile("", { ["scale.h"] = header })
    local main = ctx:program([[
#include "scale.h"
__kernel void apply(__global float *x)
{
    size_t i = get_global_id(0);
    x[i] = scaled(x[i]) + SCALE;
}
]]):compile(nil, { ["scale.h"] = header })
    local library = ctx:link({ lib_src }, "-create-library")
    lib.eq(library:build_info(dev, "binary_type"),
        "CL_PROGRAM_BINARY_TYPE_LIBRARY", "a library's binary type")
    local exe = ctx:link({ main, library })
    local k = exe:kernel("apply")
    local x = ctx:buffer(string.pack("<ff", 1, 2))
    k:arg(0, x)
    clgc.wait(q:launch(k, 2))
    local got = q:read(x, "float")
    lib.eq(got[1], 6.0, "linked: x[0] = 3 * 1 + 3")
    lib.eq(got[2], 9.0, "linked: x[1] = 3 * 2 + 3")
    -- A linked program's kernel still checks its arguments' kinds.
    lib.raises(function() k:arg(0, 5, "long") end,
        "is a __global or __constant pointer: a buffer, not a value")
    local obj = lib.fails(function()
        ctx:program("__kernel void f() { undeclared(); }"):compile()
    end, "CL_COMPILE_PROGRAM_FAILURE", "clgc.Program:compile")
    local err = tostring(obj)
    lib.ok(err:find("clgc.Program:compile: CL_COMPILE_PROGRAM_FAILURE (-15)",
        1, true) and err:find("undeclared", 1, true),
        "the compile log in the error: " .. err)
    lib.ok(type(obj.log) == "string" and obj.log:find("undeclared", 1, true),
        "the compile log as the error's log: " .. tostring(obj.log))
    lib.raises(function()
        ctx:program("#include \"missing.h\"\n"):compile()
    end, "CL_COMPILE_PROGRAM_FAILURE", "missing.h")
    lib.raises(function() main:compile("", { [1] = header }) end,
        "header names (strings) expected as keys")
    lib.raises(function() main:compile("", { ["a.h"] = io.stdout }) end,
        "header 'a.h': clgc.Program expected, got FILE*")
    lib.raises(function() main:compile(0 / 0) end, "argument #2")
    lib.raises(function() ctx:link({}) end, "no programs")
    lib.raises(function() ctx:link({ main, io.stdout }) end,
        "a list of clgc.Program expected")
    -- An undefined function: the link fails with its log.
    local lonely = ctx:program([[
float missing(float v);
__kernel void g(__global float *x) { x[0] = missing(x[0]); }
]]):compile()
    lib.fails(function() ctx:link(lonely) end, "CL_LINK_PROGRAM_FAILURE",
        "clgc.Context:link")
    for _, o in ipairs({ k, x, exe, library, main, lib_src, header, lonely }) do
        o:release()
    end
end

-- Vector and structure arguments.
do
    local p = ctx:program([[
typedef struct { float scale; int offset; float bias[2]; } params;
__kernel void vec(__global float *out, float4 v, int2 w, uchar3 u,
                  params s, double2 d)
{
    out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = v.w;
    out[4] = w.x; out[5] = w.y;
    out[6] = u.x; out[7] = u.y; out[8] = u.z;
    out[9] = s.scale; out[10] = s.offset;
    out[11] = s.bias[0]; out[12] = s.bias[1];
    out[13] = (float)d.x; out[14] = (float)d.y;
}
]]):build()
    local k = p:kernel("vec")
    local out = ctx:buffer(15 * 4)
    k:arg(0, out)
    k:arg(1, { 1.5, 2.5, 3.5, 4.5 }, "float4")
    k:arg(2, { -7, 8 }, "int2")
    k:arg(3, { 200, 201, 202 }, "uchar3")
    k:arg(4, string.pack("<fiff", 0.25, -3, 9.5, 10.5))
    k:arg(5, { 0.5, -0.5 }, "double2")
    clgc.wait(q:launch(k, 1))
    local got = q:read(out, "float")
    local want = { 1.5, 2.5, 3.5, 4.5, -7, 8, 200, 201, 202, 0.25, -3, 9.5,
        10.5, 0.5, -0.5 }
    for i = 1, #want do
        lib.eq(got[i], want[i], ("vector and struct arguments: out[%d]")
            :format(i - 1))
    end
    lib.raises(function() k:arg(1, { 1, 2, 3 }, "float4") end,
        "float4 takes 4 numbers, got a table of 3")
    lib.raises(function() k:arg(1, { 1, 2, 3, 4 }) end, "needs a vector type")
    lib.raises(function() k:arg(1, { 1, 2, 3, 4 }, "float5") end,
        "unknown vector type 'float5'")
    lib.raises(function() k:arg(1, { 1, 2, 3, 4 }, "size_t4") end,
        "unknown vector type 'size_t4'")
    lib.raises(function() k:arg(1, { 1, 2, 3, 4 }, "quux4") end,
        "unknown vector type")
    lib.raises(function() k:arg(1, { 1, "x", 3, 4 }, "float4") end,
        "number expected for float")
    lib.raises(function() k:arg(2, { 1.5, 2 }, "int2") end, "not an integer")
    -- A size that is not the argument's type's, where its name tells it.
    lib.raises(function() k:arg(1, { 1, 2 }, "float2") end,
        "CL_INVALID_ARG_SIZE", "is a float4 (16 bytes), not 8 bytes")
    lib.raises(function() k:arg(2, 5, "int") end, "CL_INVALID_ARG_SIZE",
        "int2 (8 bytes), not 4 bytes")
    lib.raises(function() k:arg(5, { 1, 2 }, "float2") end,
        "double2 (16 bytes)")
    lib.raises(function() k:arg(1, string.rep("x", 8)) end,
        "float4 (16 bytes), not 8 bytes")
    lib.raises(function() k:arg(4, "") end, "an empty string")
    lib.raises(function() k:arg(0, { 1, 2 }, "float2") end,
        "is a __global or __constant pointer: a buffer, not a value")
    k:release()
    out:release()
    p:release()
end

-- In a coroutine, a program from binaries builds on a worker like any.
clgc.run(function()
    local p = ctx:program(lib.saxpy_src):build()
    local pb = ctx:program_binaries(dev, p:info("binaries")):build()
    run_saxpy(pb, "in a coroutine")
    p:release()
    pb:release()
end)

q:finish()
lib.done("programs")
