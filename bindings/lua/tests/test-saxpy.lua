-- saxpy end to end from Lua, result checked: once outside any coroutine
-- (waits block through clgc_wait_for_events) and once in a coroutine of
-- the scheduler (waits and the build yield); then info queries, local
-- memory, a wait list and profiling.
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

-- Platform and device queries, profiling, a wait list, local memory.
local plat = clgc.platforms()[1]
lib.ok(#plat:info("version") > 0, "platform version")
local dev, ctx, q = lib.pocl({ profiling = true })
lib.eq(dev:info("type")[1], "CL_DEVICE_TYPE_CPU", "PoCL's device type")
lib.ok(dev:info("global_mem_size") > 0, "global memory")
lib.ok(dev:info("available"), "available")
lib.eq(ctx:devices()[1], dev, "the context's device")
local prog = ctx:program([[
__kernel void sum(__global const float *x, __global float *out,
                  __local float *tmp)
{
    size_t l = get_local_id(0), n = get_local_size(0);
    tmp[l] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        float s = 0;
        for (size_t i = 0; i < n; i++)
            s += tmp[i];
        out[get_group_id(0)] = s;
    }
}
]]):build()
local xs = {}
for i = 1, 64 do
    xs[i] = i
end
local bx = ctx:buffer(string.pack(string.rep("<f", 64), table.unpack(xs)))
local bout = ctx:buffer(4 * 4)
local k = prog:kernel("sum"):args(bx, bout, clgc.local_mem(16 * 4))
-- Gated on a user event: it cannot start before the event is set.
local gate = clgc.user_event(ctx)
local ev = q:launch(k, 64, { ["local"] = 16, wait = { gate } })
lib.ok(ev:status() > 0, "gated: not complete yet")
gate:set_status("complete")
clgc.wait(ev)
local sums = q:read(bout, "float")
lib.eq(sums[1], (1 + 16) * 8, "group 1")
lib.eq(sums[4], (49 + 64) * 8, "group 4")
local t0, t1 = ev:profile("start"), ev:profile("end")
lib.ok(t0 > 0 and t1 >= t0, "profiling: start <= end")
lib.ok(ev:profile("queued") <= t0, "queued before start")
lib.done("saxpy")
