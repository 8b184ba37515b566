-- Bad input raises a clear Lua error naming the function, the OpenCL error
-- and its code; nothing crashes.
local clgc = require "clgc"
local lib = require "lib"

local dev, ctx, q = lib.pocl()
local prog = ctx:program(lib.saxpy_src):build()
local k = prog:kernel("saxpy")
local buf = ctx:buffer(16)

-- Wrong types.
lib.raises(function() ctx:buffer("x", "nonsense") end, "invalid option")
lib.raises(function() q:write(42, "abcd") end, "clgc.Queue:write",
    "argument #2: clgc.Buffer expected, got number")
lib.raises(function() q:write(buf, 42) end, "clgc.Queue:write",
    "string or table expected")
lib.raises(function() q:write(buf, { 1, 2 }) end, "needs an element type")
lib.raises(function() q:write(buf, { 1, "x" }, "float") end,
    "number expected for float")
lib.raises(function() q:write(buf, { 1.5 }, "int") end, "not an integer")
lib.raises(function() q:read(buf, "quux") end, "unknown type 'quux'")
lib.raises(function() q:launch(buf, 4) end, "clgc.Queue:launch",
    "clgc.Kernel expected, got clgc.Buffer")
lib.raises(function() k:arg(0, 2.0) end, "a number needs a type")
lib.raises(function() k:arg(1, {}) end, "clgc.Kernel:arg",
    "argument 1 (x) of kernel saxpy is a __global or __constant pointer: "
    .. "a buffer, not a value", "got table")
lib.raises(function() k:arg(0, io.stdout) end, "clgc.Kernel:arg",
    "argument #3", "number, table or string expected, got FILE*")
lib.raises(function() k:arg(0, {}) end, "clgc.Kernel:arg",
    "a table needs a vector type")
lib.raises(function() dev:info("colour") end, "unknown info name 'colour'")
lib.raises(function() clgc.context({}) end, "clgc.context", "no devices")
lib.raises(function() clgc.context({ 1 }) end,
    "clgc.context: a list of clgc.Device expected")
lib.raises(function() clgc.wait() end, "clgc.wait", "CL_INVALID_VALUE (-30)")
lib.raises(function() clgc.wait("e") end, "clgc.wait",
    "clgc.Event or a table of them expected, got string")

-- OpenCL's own errors, by name and code.
lib.raises(function() k:arg(7, buf) end, "clgc.Kernel:arg",
    "CL_INVALID_ARG_INDEX (-49)")
lib.raises(function() k:arg(-1, buf) end, "CL_INVALID_ARG_INDEX (-49)")
lib.raises(function() k:arg(0, buf) end, "clgc.Kernel:arg",
    "argument 0 (a) of kernel saxpy is a value (float), not a buffer")
lib.raises(function() k:arg(0, 1, "double") end, "clgc.Kernel:arg",
    "CL_INVALID_ARG_SIZE (-51)")
lib.raises(function() ctx:buffer(0) end, "CL_INVALID_BUFFER_SIZE (-61)")
lib.raises(function() prog:kernel("nope") end, "clgc.Program:kernel",
    "CL_INVALID_KERNEL_NAME (-46)", "'nope'")
lib.raises(function() q:launch(k, 4) end, "clgc.Queue:launch",
    "CL_INVALID_KERNEL_ARGS (-52)")
lib.raises(function() q:launch(k, { 4, 4 }, { ["local"] = { 2 } }) end,
    "CL_INVALID_WORK_DIMENSION (-53)")
lib.raises(function() q:read(buf, { offset = 17 }) end, "CL_INVALID_VALUE")
lib.raises(function() q:write(buf, string.rep("x", 32)) end,
    "clgc.Queue:write", "CL_INVALID_VALUE (-30)")

-- A build error: the message has the code and the compiler's log.
local bad = ctx:program("__kernel void f(__global float *x) { x[0] = y; }")
local err = lib.raises(function() bad:build() end, "clgc.Program:build",
    "CL_BUILD_PROGRAM_FAILURE (-11)")
lib.ok(err:find("undeclared identifier", 1, true), "the log: " .. err)
-- The same in a coroutine, where the build runs on a worker thread.
clgc.run(function()
    local err2 = lib.raises(function() bad:build() end, "clgc.Program:build",
        "CL_BUILD_PROGRAM_FAILURE (-11)")
    lib.ok(err2:find("undeclared identifier", 1, true), "the log: " .. err2)
end)
lib.raises(function() bad:build("-no-such-option") end, "clgc.Program:build",
    "CL_INVALID_BUILD_OPTIONS (-43)")

-- Waits on released events, outside and inside a coroutine.
local ev = q:marker()
ev:release()
lib.raises(function() clgc.wait(ev) end, "clgc.wait",
    "the clgc.Event has been released")
lib.raises(function() ev:status() end, "clgc.Event:status",
    "has been released")
clgc.run(function()
    lib.raises(function() clgc.wait({ ev }) end, "clgc.wait",
        "a clgc.Event in the list has been released")
end)

-- A failed event: the wait says so as clWaitForEvents does. A user event
-- set to an error status, waited for itself: with a command queued behind
-- it, PoCL 3.1 aborted now and then at exit ("PTHREAD ERROR in
-- pocl_lock_events_inorder"), whatever the order of the releases.
local u = clgc.user_event(ctx)
u:set_status(-5)
lib.raises(function() clgc.wait(u) end, "clgc.wait",
    "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST (-14)")
lib.raises(function() u:set_status(1) end, "clgc.Event:set_status",
    "CL_INVALID_VALUE")
u:release()
-- The same in a coroutine: the completion comes through the queue with
-- the real, negative status (clgc's watcher reports what PoCL does not).
clgc.run(function()
    local u2 = clgc.user_event(ctx)
    u2:set_status(-5)
    lib.raises(function() clgc.wait(u2) end, "clgc.wait",
        "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST (-14)")
    u2:release()
end)

-- The generic path checks its arguments against the metadata.
lib.raises(function() clgc.call("clNoSuchThing") end,
    "no OpenCL command named 'clNoSuchThing'")
lib.raises(function() clgc.call("clFinish") end,
    "clgc.call: clFinish takes 1 arguments, got 0")
lib.raises(function() clgc.call("clFlush", 12) end,
    "argument #2 (cl_command_queue command_queue): clgc.Queue or a light",
    "got number")
lib.raises(function() clgc.call("clGetPlatformInfo", nil, "x", 0, nil, nil) end,
    "uint32 expected, got string")
lib.raises(function() clgc.wrap("Buffer", nil) end)
lib.raises(function() clgc.spawn(3) end, "clgc.spawn: function expected")
lib.raises(function() clgc.yield() end, "clgc.yield: not in a coroutine")
-- The error objects: what a program branches on, and a message that
-- points at the line here that called.
local here = debug.getinfo(1, "S").short_src
local function caught(f)
    local ok, e = pcall(f)
    lib.ok(not ok, "expected an error")
    return e
end
local function is_object(e, code, name, func, line)
    lib.eq(type(e), "table", "an OpenCL failure's error: " .. tostring(e))
    lib.eq(e.code, code, "the error's code")
    lib.eq(e.name, name, "the error's name")
    lib.eq(e.func, func, "the error's function")
    lib.eq(tostring(e), e.message, "tostring of the error")
    local want = ("%s:%d: %s: %s (%d)"):format(here, line, func, name, code)
    lib.eq(e.message:sub(1, #want), want, "the message's start")
end
do
    local line = debug.getinfo(1, "l").currentline + 1
    local e = caught(function() ctx:buffer(0) end)
    is_object(e, -61, "CL_INVALID_BUFFER_SIZE", "clgc.Context:buffer", line)
    lib.eq(e.log, nil, "no log but a build's")
    line = debug.getinfo(1, "l").currentline + 1
    e = caught(function() bad:build() end)
    is_object(e, -11, "CL_BUILD_PROGRAM_FAILURE", "clgc.Program:build", line)
    lib.ok(e.log:find("undeclared identifier", 1, true), "the build log: " ..
        tostring(e.log))
    clgc.run(function()
        line = debug.getinfo(1, "l").currentline + 1
        e = caught(function() bad:build() end)
        is_object(e, -11, "CL_BUILD_PROGRAM_FAILURE", "clgc.Program:build",
            line)
        lib.ok(e.log:find("undeclared identifier", 1, true),
            "the build log on a worker")
        -- A failed command awaited in a coroutine: clWaitForEvents' error.
        local u = clgc.user_event(ctx)
        u:set_status(-5)
        line = debug.getinfo(1, "l").currentline + 1
        e = caught(function() clgc.wait(u) end)
        is_object(e, -14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
            "clgc.wait", line)
    end)
    -- Misuse is a message string, at the caller's line, arguments counted
    -- as passed (Kernel:args' second value is its argument #3).
    line = debug.getinfo(1, "l").currentline + 1
    e = caught(function() k:args({ "float", 2 }, 5) end)
    lib.eq(type(e), "string", "misuse raises a string")
    local want = ("%s:%d: clgc.Kernel:args: argument #3:"):format(here, line)
    lib.eq(e:sub(1, #want), want, "Kernel:args' message")
    clgc.run(function()
        line = debug.getinfo(1, "l").currentline + 1
        e = caught(function() q:read(buf, { wait = 5 }) end)
        want = ("%s:%d: clgc.Queue:read:"):format(here, line)
        lib.eq(e:sub(1, #want), want, "Queue:read's wait list in a coroutine")
    end)
    line = debug.getinfo(1, "l").currentline + 1
    e = caught(function() clgc.open("no such platform, surely") end)
    is_object(e, -1, "CL_DEVICE_NOT_FOUND", "clgc.open", line)
    e = caught(function() k:arg(0, clgc.local_mem(4)) end)
    lib.ok(not e:find("clgc.Local", 1, true) and
        e:find("clgc.local_mem", 1, true), "local_mem by its name: " .. e)
end

lib.done("errors")
