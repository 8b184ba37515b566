--! oclgrind
-- A queue on an OpenCL 1.2 device (Oclgrind), which has no
-- clCreateCommandQueueWithProperties: Context:queue falls back to
-- clCreateCommandQueue, and a kernel runs on it, blocking in the main
-- chunk and awaited by a coroutine of the scheduler.
local clgc = require "clgc"
local lib = require "lib"

local dev, ctx, q = clgc.open("Oclgrind")
lib.ok(dev:info("version"):find("^OpenCL 1%."),
    "Oclgrind's device is OpenCL 1.x, got " .. dev:info("version"))
-- The profiling property goes through as clCreateCommandQueue's bit.
local pq = ctx:queue(dev, { profiling = true })
lib.eq(pq:info("properties")[1], "CL_QUEUE_PROFILING_ENABLE",
    "the 1.x queue's properties")

local k = ctx:program(lib.saxpy_src):build():kernel("saxpy")
local n = 64
local xs, ys = {}, {}
for i = 1, n do
    xs[i], ys[i] = i, 10 * i
end
local x, y = ctx:buffer(4 * n), ctx:buffer(4 * n)
q:write(x, xs, "float")
q:write(y, ys, "float")
k:args({ "float", 2 }, x, y)
clgc.wait(q:launch(k, n))
local got = q:read(y, "float")
for i = 1, n do
    lib.eq(got[i], 12.0 * i, "y[" .. i .. "] after saxpy on Oclgrind")
end

-- The same from a coroutine, on the profiling queue.
local done = false
clgc.run(function()
    local ev = pq:launch(k, n)
    clgc.wait(ev)
    lib.ok(ev:profile("end") >= ev:profile("start"),
        "the kernel's profile on Oclgrind")
    local again = pq:read(y, "float")
    lib.eq(again[n], 14.0 * n, "y[n] after the second saxpy")
    done = true
end)
lib.ok(done, "the coroutine ran to its end")
print("ok: a 1.2 queue on Oclgrind ran saxpy, blocking and in a coroutine")
