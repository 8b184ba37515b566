-- The ticker, for each loop that can drive clgc: a coroutine waits for a
-- kernel of about 400 ms while another ticks every 10 ms with the loop's
-- own sleep; the figure is the ticks during the kernel over the ideal
-- (the kernel's time / 10 ms). Loops: clgc.run (clgc.sleep), luv (a uv
-- timer; the kernel's completion through a poll handle on clgc.fd()),
-- cqueues (cqueues.sleep; the completion through cqueues.poll(clgc.queue)).
-- Runs alternate between the loops; it prints each run and the median.
--
--   lua5.4 ticker.lua [runs] [loops...]     (default: 21 clgc luv cqueues)
local clgc = require "clgc"

local runs = tonumber(arg[1]) or 21
local loops = { select(2, ...) }
if #loops == 0 then
    loops = { "clgc", "luv", "cqueues" }
end
local PERIOD = 0.01

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
local k = ctx:program(src):build():kernel("spin")
local buf = ctx:buffer(256 * 4)

-- The iterations that make the kernel last about 400 ms here.
local iters = 100000
while true do
    k:args(buf, { "int", iters })
    local t0 = clgc.now()
    clgc.wait(q:launch(k, 256))
    local dt = clgc.now() - t0
    if dt >= 0.1 then
        iters = math.floor(iters * 0.4 / dt)
        break
    end
    iters = iters * 4
end
k:args(buf, { "int", iters })

-- The kernel's coroutine: launch, wait, and say how long it took.
local function kernel(state)
    local t0 = clgc.now()
    local ev = q:launch(k, 256)
    clgc.wait(ev)
    ev:release()
    state.elapsed = clgc.now() - t0
    state.done = true
end

local run = {}

function run.clgc()
    local state = { ticks = 0 }
    clgc.spawn(function()
        while not state.done do
            clgc.sleep(PERIOD)
            if not state.done then
                state.ticks = state.ticks + 1
            end
        end
    end)
    clgc.run(kernel, state)
    return state
end

function run.luv()
    local uv = require "luv"
    local state = { ticks = 0 }
    local timer = uv.new_timer()
    local resume
    local ticker = coroutine.wrap(function()
        while not state.done do
            timer:start(math.floor(PERIOD * 1000), 0, resume)
            coroutine.yield()
            if not state.done then
                state.ticks = state.ticks + 1
            end
        end
        timer:close()
    end)
    resume = ticker
    local poll = uv.new_poll(clgc.fd())
    poll:start("r", function()
        if clgc.step() == 0 then
            poll:stop()
            poll:close()
        end
    end)
    clgc.spawn(kernel, state)
    ticker()
    uv.run()
    return state
end

function run.cqueues()
    local cqueues = require "cqueues"
    local cq = cqueues.new()
    local state = { ticks = 0 }
    cq:wrap(function()
        while not state.done do
            cqueues.sleep(PERIOD)
            if not state.done then
                state.ticks = state.ticks + 1
            end
        end
    end)
    clgc.spawn(kernel, state)
    cq:wrap(function()
        while clgc.alive() > 0 do
            cqueues.poll(clgc.queue)
            clgc.step()
        end
    end)
    assert(cq:loop())
    return state
end

local function median(t)
    table.sort(t)
    local n = #t
    return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

local figures = {}
for _, name in ipairs(loops) do
    assert(run[name], "no loop named " .. name)
    figures[name] = {}
end
print(("kernel: %d iterations; %d runs of each loop, alternating"):format(
    iters, runs))
for i = 1, runs do
    for _, name in ipairs(loops) do
        local s = run[name]()
        local f = s.ticks / (s.elapsed / PERIOD)
        table.insert(figures[name], f)
        print(("run %2d %-8s kernel %.3f s, %3d ticks, %.3f of ideal"):format(
            i, name, s.elapsed, s.ticks, f))
    end
end
for _, name in ipairs(loops) do
    local t = figures[name]
    local lo, hi = math.min(table.unpack(t)), math.max(table.unpack(t))
    print(("%-8s median %.3f of ideal (min %.3f, max %.3f)"):format(name,
        median(t), lo, hi))
end
