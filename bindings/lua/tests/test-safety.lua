-- Issue 23's defects, one section each: every one of these crashed, hung
-- or overran the heap before, and must now be a Lua error (or a bounded,
-- documented behaviour). valgrind runs this script too.
local clgc = require "clgc"
local lib = require "lib"

local dev, ctx, q = lib.pocl()
local prog = ctx:program(lib.saxpy_src):build()

-- 1. A build whose options the compiler rejects, with a notify, blocking
-- and in a coroutine: the notify ran after its record was freed. Now it
-- runs once, with the build's status.
do
    local got = {}
    local function build()
        lib.raises(function()
            ctx:program(lib.saxpy_src):build("-no-such-option",
                function(status) got[#got + 1] = status end)
        end, "clgc.Program:build", "CL_INVALID_BUILD_OPTIONS (-43)")
    end
    build()
    clgc.run(build)
    clgc.drain()
    lib.eq(#got, 2, "one notification per build")
    lib.eq(got[1], -43, "with the build's status")
end

-- 2. A buffer released while set as a kernel argument, then the kernel
-- launched: PoCL read freed memory. The kernel holds it until replaced.
do
    local k = prog:kernel("saxpy")
    local x = ctx:buffer(string.pack("<ffff", 1, 2, 3, 4))
    local y = ctx:buffer(string.pack("<ffff", 10, 20, 30, 40))
    k:args({ "float", 2 }, x, y)
    x:release()
    do
        local y2 <close> = y
    end
    lib.raises(function() y:size() end, "has been released")
    local ev = q:launch(k, 4)
    clgc.wait(ev)
    lib.let_go(ev)
    ev:release()
    k:arg(2, ctx:buffer(16)) -- y's last reference goes here
    k:release()
end

-- 3. Tables whose __len lies: the raw length counts.
do
    local b = ctx:buffer(16)
    local huge = setmetatable({ 1, 2, 3 }, { __len = function() return 1 << 62 end })
    q:write(b, huge, "float")
    lib.eq(table.concat(q:read(b, { type = "float", count = 3 }), ","),
        "1.0,2.0,3.0", "three written")
    local ev = q:marker()
    clgc.wait(ev)
    local neg = setmetatable({ ev }, { __len = function() return -1 end })
    clgc.wait(neg)
    local m = q:marker(neg)
    clgc.wait(m)
    lib.raises(function() clgc.wait(setmetatable({}, { __len = function() return -1 end })) end,
        "clgc.wait", "no events")
    clgc.run(function() clgc.wait(neg) end)
    b:release()
end

-- 4. Methods with a foreign self; protected metatables.
do
    local b = ctx:buffer(16)
    lib.raises(function() b.ptr(1) end, "clgc.Buffer:ptr: argument #1",
        "clgc.Buffer expected, got number")
    lib.raises(function() b.release(io.stdout) end, "clgc.Buffer:release",
        "got FILE*")
    lib.raises(function() b.release(clgc.local_mem(64)) end,
        "clgc.Buffer:release", "got clgc.local_mem")
    lib.raises(function() b.size(q) end, "clgc.Buffer:size",
        "clgc.Buffer expected, got clgc.Queue")
    lib.eq(getmetatable(b), false, "a protected metatable")
    lib.eq(getmetatable(clgc.memory(4)), false, "Memory's too")
    lib.eq(getmetatable(clgc.local_mem(4)), false, "Local's too")
    lib.raises(function() getmetatable(b).__gc(io.stdout) end, "index")
    lib.raises(function() setmetatable(b, {}) end)
    lib.ok(not (b == io.stdout), "== with a foreign userdata")
    b:release()
end

-- 5. NaN and infinities in timeouts: poll(NaN) blocked for ever.
lib.raises(function() clgc.poll(0 / 0) end, "clgc.poll", "NaN")
for _, t in ipairs({ 0 / 0, math.huge, -math.huge, -1, 1e7 }) do
    lib.raises(function() clgc.after(t, function() end) end, "clgc.after",
        "out of range")
    lib.raises(function() clgc.sleep(t) end, "clgc.sleep", "seconds")
end
clgc.wake()
lib.eq(clgc.poll(math.huge), true, "poll(math.huge): no bound, readable")
clgc.drain()
lib.eq(clgc.poll(0), false, "poll(0)")

-- 6. Closing a state waited out its timers (1e6 s for after(1e6)). A
-- child interpreter closes with one pending, under a bound far above any
-- close: the bound turns the old hang into a failure, it times nothing.
do
    local lua = os.getenv("LUA") or "lua5.4"
    local ok, how, code = os.execute(("timeout %d %s -e %q"):format(
        lib.wait_bound, lua,
        'local c = require "clgc"; c.after(1e6, function() end); ' ..
        'c.after(1e6, function() end)'))
    lib.ok(ok, ("the child closed its state (%s %s)"):format(how, code))
end

-- 7. A count whose size overflows.
do
    local b = ctx:buffer(16)
    for _, n in ipairs({ (1 << 62) + 1, 2 ^ 62, math.maxinteger, 5 }) do
        lib.raises(function() q:read(b, { count = n, type = "float" }) end,
            "clgc.Queue:read", "past the end")
    end
    lib.raises(function() q:read(b, { size = math.maxinteger }) end,
        "clgc.Queue:read", "past the end")
    lib.eq(#q:read(b, { count = 4, type = "float" }), 4, "a count that fits")
    b:release()
end

-- 8. Kernel-argument hazards: refused before PoCL sees them.
do
    local k = prog:kernel("saxpy")
    lib.raises(function() k:arg(1, 12345, "long") end, "clgc.Kernel:arg",
        "a __global or __constant pointer: a buffer, not a value")
    lib.raises(function() k:arg(2, clgc.local_mem(64)) end,
        "clgc.Kernel:arg",
        "a __global or __constant pointer: a buffer, not a size of local memory")
    lib.raises(function() k:arg(0, clgc.local_mem(4)) end, "clgc.Kernel:arg",
        "a value")
    local lp = ctx:program([[
__kernel void f(__local float *t, __local float *u, __global float *o)
{ t[0] = 1; u[0] = 2; o[0] = t[0] + u[0]; }]]):build()
    local lk = lp:kernel("f")
    local limit = dev:info("local_mem_size")
    lib.raises(function() lk:arg(0, clgc.local_mem(1 << 40)) end,
        "clgc.Kernel:arg", "CL_INVALID_ARG_SIZE", "local memory")
    lk:arg(0, clgc.local_mem(limit // 2 + 1))
    lib.raises(function() lk:arg(1, clgc.local_mem(limit // 2 + 1)) end,
        "clgc.Kernel:arg", "more than the device's")
    lk:arg(0, clgc.local_mem(4))
    lk:args(clgc.local_mem(4), clgc.local_mem(4), ctx:buffer(4))
    clgc.wait(q:launch(lk, 1))
    lk:release()
    lp:release()
    k:release()
end

-- 8b. A launch with an argument never set: refused before OpenCL sees it
-- (the library's argument table, clgc/binding.h).
do
    local k = prog:kernel("saxpy")
    k:arg(0, 2, "float")
    lib.raises(function() q:launch(k, 4) end, "clgc.Queue:launch",
        "CL_INVALID_KERNEL_ARGS", "argument 1 (x) of kernel saxpy is not set")
    k:release()
end

-- 9. The generic path: sizes checked against the memory, no strings for
-- outputs.
do
    local CL_DEVICE_NAME = 0x102B
    local m = clgc.memory(4)
    lib.raises(function()
        clgc.call("clGetDeviceInfo", dev, CL_DEVICE_NAME, 1000, m, nil)
    end, "clgc.call: argument #5", "1000 bytes needed", "has 4")
    local s = string.rep("x", 64)
    lib.raises(function()
        clgc.call("clGetDeviceInfo", dev, CL_DEVICE_NAME, #s, s, nil)
    end, "clgc.call: argument #5", "a string cannot be written into")
    lib.eq(s, string.rep("x", 64), "the string is untouched")
    lib.raises(function()
        clgc.call("clGetDeviceInfo", dev, CL_DEVICE_NAME, 0, nil, clgc.memory(4))
    end, "argument #6", "8 bytes needed")
    lib.raises(function() clgc.call("clRetainMemObject", q) end,
        "clgc.Buffer or a light userdata expected, got clgc.Queue")
    lib.raises(function()
        clgc.call("clCreateContext", clgc.memory(64), 1, dev, nil, nil, nil)
    end, "argument #2", "the size it needs is not known")
    local name = clgc.memory(256)
    lib.eq(clgc.call("clGetDeviceInfo", dev, CL_DEVICE_NAME, 256, name, nil),
        0, "a query that fits")
    lib.eq(name:string(), dev:info("name"), "the name")
end

-- 10. What a new user met: messages count the arguments passed, name the
-- function called, and a missing argument is "no value", not the type of
-- something the binding pushed.
do
    local p = ctx:program("__kernel void k(__global int *x) { x[0] = FOO; }")
    lib.eq(p:compile("-DFOO=7"), p, "compile(options) without headers")
    local b = ctx:buffer(64)
    lib.raises(function() q:read_rect(b) end,
        "clgc.Queue:read_rect: argument #3: table expected, got no value")
    lib.raises(function() q:write_rect(b) end,
        "clgc.Queue:write_rect: argument #3", "got no value")
    lib.raises(function() q:copy_rect(b, b) end,
        "clgc.Queue:copy_rect: argument #4", "got no value")
    lib.raises(function() ctx:image() end,
        "clgc.Context:image: argument #2: table expected, got no value")
    lib.raises(function() ctx:link() end,
        "clgc.Context:link: argument #2: table expected, got no value")
    lib.raises(function() clgc.wrap("Buffer") end,
        "argument #2", "got no value")
    lib.raises(function() q:map(b, { flags = "x" }) end,
        "clgc.Queue:map: option 'flags': invalid value 'x'")
    lib.raises(function() ctx:image({ type = "4d" }) end,
        "clgc.Context:image: option 'type': invalid value '4d'")
    lib.raises(function() clgc.open("Portable", "x") end,
        "clgc.open: argument #2: table expected, got string")
    lib.raises(function() clgc.step(-1) end,
        "clgc.step: argument #1: a count of 0 to 10^9 expected, got -1")
    local e = lib.raises(function() clgc.step(1 << 62) end,
        "clgc.step: argument #1: a count of 0 to 10^9 expected")
    lib.ok(not e:find("clgc.drain", 1, true), "step's own name: " .. e)
    local k = prog:kernel("saxpy")
    k:args({ "float", 2 }, b, b)
    lib.raises(function() q:launch(k, 4, { ["local"] = 0 / 0 }) end,
        "clgc.Queue:launch: local size: a non-negative integer expected")
    lib.raises(function() q:launch(k, 4, 0) end,
        "clgc.Queue:launch: local size: positive integers expected")
    k:release()
    lib.raises(function() prog:kernel("saxpy\0x") end,
        "clgc.Program:kernel: argument #2", "without a NUL")
    lib.raises(function() ctx:program(lib.saxpy_src):build("-DX=1\0 -DY") end,
        "clgc.Program:build", "without a NUL")
    lib.raises(function() dev:info("name\0x") end, "without a NUL")
    lib.raises(function() ctx:program_binaries(dev) end,
        "clgc.Context:program_binaries: argument #3", "got no value")
    b:release()
    p:release()
end

-- And: a code no cl_int holds has no name.
lib.eq(clgc.error_name(2 ^ 40), "CL_UNKNOWN_ERROR", "error_name(2^40)")
lib.eq(clgc.error_name(1 << 40), "CL_UNKNOWN_ERROR", "error_name(1<<40)")
lib.eq(clgc.error_name(-11), "CL_BUILD_PROGRAM_FAILURE", "error_name(-11)")

-- Errors point at this file, also through clgc.lua's wrappers.
local e = lib.raises(function() q:read(42) end, "clgc.Queue:read")
lib.ok(e:find("test-safety.lua", 1, true), "position in the caller: " .. e)
clgc.run(function()
    local e2 = lib.raises(function() q:read(42) end, "clgc.Queue")
    lib.ok(e2:find("test-safety.lua", 1, true), "in a coroutine: " .. e2)
end)
prog:release()
lib.done("safety")
