-- The Lua side of the binding's benchmark (lua-bench.c runs it in the same
-- process as its C baselines and prints the ratios; run alone, it prints
-- its own figures):
--   launch: seconds per launch + wait of a 64-element saxpy from Lua,
--           outside any coroutine (clgc.wait: clgc_wait_for_events);
--   coroutines: completions per second of 100 coroutines of clgc's
--           scheduler, each launching and awaiting kernels.
local clgc = require "clgc"

local src = [[
__kernel void saxpy(float a, __global const float *x, __global float *y)
{
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
]]

local N = tonumber(os.getenv("BENCH_N")) or 2000
local _, ctx, q = clgc.open("Portable Computing Language")
local k = ctx:program(src):build():kernel("saxpy")
local x, y = ctx:buffer(64 * 4), ctx:buffer(64 * 4)
k:args({ "float", 2 }, x, y)

local function launch_wait(n)
    for _ = 1, n do
        local ev = q:launch(k, 64)
        clgc.wait(ev)
        ev:release()
    end
end

-- Seconds per launch + wait over a round of n.
local function launch_round(n)
    local t0 = clgc.now()
    launch_wait(n)
    return (clgc.now() - t0) / n
end

-- Completions per second of 100 coroutines doing per launches each.
local function coroutines_round(per)
    local t0 = clgc.now()
    for _ = 1, 100 do
        clgc.spawn(function()
            for _ = 1, per do
                local ev = q:launch(k, 64)
                clgc.wait(ev)
                ev:release()
            end
        end)
    end
    clgc.run()
    return 100 * per / (clgc.now() - t0)
end

launch_wait(200) -- warm up
if BENCH_HOST then -- lua-bench alternates these rounds with its own
    return { launch = launch_round, coroutines = coroutines_round }
end
local best, rate = math.huge, 0
for _ = 1, 5 do
    best = math.min(best, launch_round(N // 5))
end
for _ = 1, 3 do
    rate = math.max(rate, coroutines_round(N // 100))
end
print(("Lua launch + wait: %.1f us"):format(best * 1e6))
print(("100 coroutines: %.0f completions/s"):format(rate))
