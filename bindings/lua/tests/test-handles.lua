-- Handles: release, __close and __gc are one idempotent release; a dropped
-- handle is released exactly once (OpenCL's reference count says so);
-- methods on a released handle raise a clear error.
local clgc = require "clgc"
local lib = require "lib"

local CL_MEM_REFERENCE_COUNT = 0x1105

local function refcount(ptr)
    local m = clgc.memory(4)
    lib.eq(clgc.call("clGetMemObjectInfo", ptr, CL_MEM_REFERENCE_COUNT, 4, m,
        nil), 0, "clGetMemObjectInfo")
    return m:get("uint", 0)
end

local _, ctx, q = lib.pocl()

-- An extra reference of our own keeps the object alive to be counted.
local function counted()
    local b = ctx:buffer(64)
    local p = b:ptr()
    lib.eq(clgc.call("clRetainMemObject", p), 0, "retain")
    lib.eq(refcount(p), 2, "two references")
    return b, p
end

-- release(), twice: one release.
local b, p = counted()
b:release()
lib.eq(refcount(p), 1, "after release")
b:release()
lib.eq(refcount(p), 1, "after a second release")
lib.raises(function() q:read(b) end, "clgc.Queue:read", "clgc.Buffer",
    "has been released")
lib.raises(function() b:size() end, "clgc.Buffer:size", "has been released")
lib.ok(tostring(b):find("released", 1, true), "tostring says released")
lib.eq(clgc.call("clReleaseMemObject", p), 0, "our reference")

-- __close: a to-be-closed variable releases at the end of its scope, and
-- an explicit release inside the scope does not make it release twice.
do
    local b2, p2 = counted()
    do
        local c <close> = b2
        c:release()
    end
    lib.eq(refcount(p2), 1, "release then __close")
    clgc.call("clReleaseMemObject", p2)
end
do
    local b3, p3 = counted()
    do
        local c <close> = b3
    end
    lib.eq(refcount(p3), 1, "__close")
    b3 = nil
    collectgarbage()
    collectgarbage()
    lib.eq(refcount(p3), 1, "__gc after __close")
    clgc.call("clReleaseMemObject", p3)
end

-- A dropped handle: the collector's __gc releases it, once.
do
    local ptrs = {}
    for i = 1, 100 do
        local bi, pi = counted()
        ptrs[i] = pi
        if i % 2 == 0 then
            bi:release() -- some explicitly, the rest by the collector
        end
    end
    collectgarbage()
    collectgarbage()
    for i = 1, 100 do
        lib.eq(refcount(ptrs[i]), 1, "dropped handle " .. i)
        clgc.call("clReleaseMemObject", ptrs[i])
    end
end

-- A kernel keeps the buffers set as its arguments (its argument table,
-- clgc/binding.h): clSetKernelArg does not retain them, and a launch after
-- the collector released one would use freed memory.
do
    local kprog = ctx:program(lib.saxpy_src):build()
    local kk = kprog:kernel("saxpy")
    local bx, px = counted()
    local by, py = counted()
    kk:args({ "float", 2 }, bx, by)
    bx, by = nil, nil
    collectgarbage()
    collectgarbage()
    -- Not launched: a command would hold references of PoCL's own for a
    -- while, and the counts would depend on when it lets them go. Two:
    -- ours and the kernel's argument table's.
    lib.eq(refcount(px), 2, "an argument outlives its dropped handle")
    lib.eq(refcount(py), 2, "an argument outlives its dropped handle")
    kk:release()
    kk = nil
    collectgarbage()
    collectgarbage()
    lib.eq(refcount(px), 1, "released with the kernel's handle")
    lib.eq(refcount(py), 1, "released with the kernel's handle")
    clgc.call("clReleaseMemObject", px)
    clgc.call("clReleaseMemObject", py)
    -- And a launch with an argument whose handle is gone computes.
    local k2 = kprog:kernel("saxpy")
    local y = ctx:buffer(string.pack("<ff", 10, 20))
    k2:args({ "float", 2 }, ctx:buffer(string.pack("<ff", 1, 2)), y)
    collectgarbage()
    collectgarbage()
    clgc.wait(q:launch(k2, 2))
    lib.eq(table.concat(q:read(y, "float"), ","), "12.0,24.0",
        "computed with a dropped handle")
    kprog:release()
end

-- Every kind has release, __close and __gc.
local prog = ctx:program(lib.saxpy_src):build()
local k = prog:kernel("saxpy")
local ev = q:marker()
clgc.wait(ev)
for _, h in ipairs({ ev, k, prog, q, ctx }) do
    lib.eq(getmetatable(h), false, "a protected metatable")
    local mt = debug.getmetatable(h)
    lib.ok(mt.__gc and mt.__close and h.release, "methods of " .. tostring(h))
    h:release()
    h:release()
end
lib.raises(function() k:arg(0, 1, "float") end, "clgc.Kernel:arg",
    "the clgc.Kernel has been released")
lib.raises(function() ctx:buffer(4) end, "clgc.Context:buffer",
    "the clgc.Context has been released")
lib.done("handles")
