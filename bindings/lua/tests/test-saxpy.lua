-- saxpy end to end from Lua, result checked: once outside any coroutine
-- (waits block through clgc_wait_for_events) and once in a coroutine of
-- the scheduler (waits and the build yield).
local clgc = require "clgc"
local lib = require "lib"

local n = 1024
local x, y = {}, {}
for i = 1, n do
    x[i], y[i] = i, 2 * i
end

local function saxpy()
    local dev, ctx, q = lib.pocl()
    lib.ok(dev:info("name") ~= "", "device name")
    lib.ok(dev:info("max_compute_units") >= 1, "compute units")
    local prog = ctx:program(lib.saxpy_src):build("-cl-std=CL1.2")
    local k = prog:kernel("saxpy")
    local bx = ctx:buffer(n * 4, "r")
    local by = ctx:buffer(n * 4)
    q:write(bx, x, "float")
    q:write(by, y, "float")
    k:args({ "float", 3 }, bx, by)
    local ev = q:launch(k, n)
    clgc.wait(ev)
    local code, name = ev:status()
    lib.eq(code, 0, "status")
    lib.eq(name, "complete", "status name")
    local r = q:read(by, "float")
    lib.eq(#r, n, "result length")
    for i = 1, n do
        lib.eq(r[i], 3 * x[i] + y[i], "y[" .. i .. "]")
    end
    -- The same bytes as a string.
    local s = q:read(by, { size = 8 })
    lib.eq(#s, 8, "bytes read")
    lib.eq(string.unpack("<f", s), 5.0, "y[1] as bytes")
    for _, h in ipairs({ ev, k, prog, bx, by, q, ctx }) do
        h:release()
    end
    return true
end

lib.ok(saxpy(), "blocking saxpy")
local done = false
clgc.run(function()
    done = saxpy()
end)
lib.ok(done, "saxpy in a coroutine")
lib.done("saxpy")
