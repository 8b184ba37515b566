-- A ticker coroutine keeps ticking while another coroutine builds a large
-- program and waits for a long kernel (some 400 ms here); with the
-- blocking path forced it does not tick during the same work. Counts, not
-- durations: the worker yields (cooperative) or does not (blocking), and
-- the ticker, always ready, runs whenever the worker yields.
local clgc = require "clgc"
local lib = require "lib"

local _, ctx, q = lib.pocl()
local buf = ctx:buffer(256 * 4)

local function scenario(mode)
    clgc.set_wait_mode(mode)
    local ticks, done = 0, false
    local in_build, in_kernel
    clgc.spawn(function()
        while not done do
            ticks = ticks + 1
            clgc.yield()
        end
    end)
    clgc.run(function()
        clgc.yield() -- the ticker is running
        -- A source of its own each time: PoCL's cache must not build it.
        local src = lib.large_src(60) .. lib.spin_src ..
            ("\n// %s %d %f\n"):format(mode, os.time(), math.random())
        local t0 = ticks
        local prog = ctx:program(src):build()
        in_build = ticks - t0
        local k = prog:kernel("spin")
        k:args(buf, { "int", 2500000 })
        t0 = ticks
        local ev = q:launch(k, 256)
        clgc.wait(ev)
        in_kernel = ticks - t0
        lib.eq(ev:status(), 0, "the kernel completed")
        done = true
    end)
    return in_build, in_kernel
end

local b, k = scenario("cooperative")
print(("cooperative: %d ticks during the build, %d during the kernel"):format(
    b, k))
lib.ok(b > 0, "the ticker ticked during the build")
lib.ok(k > 0, "the ticker ticked during the kernel")

b, k = scenario("blocking")
print(("blocking: %d ticks during the build, %d during the kernel"):format(
    b, k))
lib.eq(b, 0, "no tick during a blocking build")
lib.eq(k, 0, "no tick during a blocking wait")
clgc.set_wait_mode("cooperative")
lib.done("ticker")
