-- 10,000 callbacks and 10,000 completions, with full collections in
-- between and the handles dropped as soon as they are registered: every
-- handler runs exactly once, none is lost, nothing crashes; then 100
-- coroutines each launching and awaiting kernels.
local clgc = require "clgc"
local lib = require "lib"

local _, ctx, q = lib.pocl()
local N = 10000
local calls, posts = {}, {}

for i = 1, N do
    local u = clgc.user_event(ctx)
    u:on(function(status)
        lib.eq(status, 0, "callback status")
        calls[i] = (calls[i] or 0) + 1
    end)
    u:post(function(status)
        lib.eq(status, 0, "completion status")
        posts[i] = (posts[i] or 0) + 1
    end)
    u:set_status("complete")
    u = nil -- dropped: the posted handler keeps what it needs
    if i % 97 == 0 then
        collectgarbage()
    end
    if i % 1000 == 0 then
        clgc.drain()
    end
end
collectgarbage()
-- Completions arrive from PoCL's and clgc's threads: drain until all came.
local function count(t)
    local n = 0
    for _, v in pairs(t) do
        n = n + v
    end
    return n
end
lib.wait_until("every callback and completion", function()
    return count(calls) >= N and count(posts) >= N
end, function()
    clgc.poll(1)
    clgc.drain()
    collectgarbage("step")
end)
for i = 1, N do
    lib.eq(calls[i], 1, "callback " .. i)
    lib.eq(posts[i], 1, "completion " .. i)
end
clgc.drain()
lib.eq(count(calls) + count(posts), 2 * N, "exactly once each")

-- 100 coroutines, each launching and awaiting 10 kernels.
local k = ctx:program(lib.saxpy_src):build():kernel("saxpy")
local x, y = ctx:buffer(64 * 4), ctx:buffer(64 * 4)
k:args({ "float", 1 }, x, y)
local finished = 0
for _ = 1, 100 do
    clgc.spawn(function()
        for _ = 1, 10 do
            clgc.wait(q:launch(k, 64))
            collectgarbage("step")
        end
        finished = finished + 1
    end)
end
clgc.run()
lib.eq(finished, 100, "coroutines finished")
lib.done("stress")
