-- A real kernel runs while a ticker coroutine keeps ticking.
--
-- One coroutine builds a program (on a worker thread), launches a kernel
-- that runs for a few hundred milliseconds and waits for it; another ticks
-- every 10 ms meanwhile. Both are coroutines of clgc's scheduler, on one
-- thread: the waits yield, and the completions come back through the
-- state's queue. Run it with CLGC_WAIT=blocking to see the ticker freeze.
--
--   lua5.4 ticker.lua
local clgc = require "clgc"

local src = [[
__kernel void spin(__global float *x, int n)
{
    size_t i = get_global_id(0);
    float v = x[i];
    for (int k = 0; k < n; k++)
        v = v * 0.999f + 0.001f;
    x[i] = v;
}
]]

local _, ctx, q = clgc.open("Portable Computing Language")
local ticks, done = 0, false
local during_build, during_kernel

clgc.spawn(function()
    while not done do
        ticks = ticks + 1
        clgc.sleep(0.01)
    end
end)

clgc.run(function()
    clgc.yield()
    local t0 = ticks
    -- A comment of its own, so that PoCL's cache does not skip the build.
    local prog = ctx:program(src .. "// " .. os.time() .. math.random())
        :build()
    during_build = ticks - t0
    local buf <close> = ctx:buffer(256 * 4)
    local k = prog:kernel("spin"):args(buf, { "int", 2500000 })
    t0 = ticks
    clgc.wait(q:launch(k, 256))
    during_kernel = ticks - t0
    local x = q:read(buf, { type = "float", count = 1 })[1]
    print(("kernel done (x[0] = %.4f)"):format(x))
    done = true
end)

print(("wait mode %s: the ticker ticked %d times during the build and %d "
    .. "times during the kernel"):format(clgc.wait_mode(), during_build,
    during_kernel))
if clgc.wait_mode() == "cooperative" and during_kernel == 0 then
    os.exit(1) -- what this example shows did not happen
end
