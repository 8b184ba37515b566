--! lua-threads 2
-- Two Lua states on two threads at once (run by the lua-threads host, as a
-- multi-state program or luv's threads run them), each with its own queue:
-- each gets exactly its own completions and callbacks, on its own thread,
-- and its own callbacks' failures, even when the other state's drain is
-- the one that takes them from clgc's process-wide list.
local clgc = require "clgc"
local lib = require "lib"

local me, other = STATE, 3 - STATE
local thread = clgc.thread_id()
local _, ctx, q = lib.pocl()

-- Completions and callbacks: all of this state's, none of the other's.
local N = 2000
local calls, posts = 0, 0
barrier()
for i = 1, N do
    local u = clgc.user_event(ctx)
    u:on(function()
        lib.eq(clgc.thread_id(), thread, "callback on this state's thread")
        calls = calls + 1
    end)
    u:post(function()
        lib.eq(clgc.thread_id(), thread, "completion on this state's thread")
        posts = posts + 1
    end)
    u:set_status("complete")
    if i % 100 == 0 then
        clgc.drain()
    end
end
lib.wait_until("state " .. me .. "'s callbacks and completions", function()
    return calls >= N and posts >= N
end, function()
    clgc.poll(1)
    clgc.drain()
end)
lib.eq(calls, N, "state " .. me .. ": its callbacks")
lib.eq(posts, N, "state " .. me .. ": its completions")
barrier()

-- Failures: the failing state's first handler fails; its second holds
-- the drain open while the other state drains, which takes the failure
-- from clgc's list and must hand it over, not raise it.
local function round(failer)
    local routed = lib.internal.failures_routed()
    local own_ok, own_err = true, nil
    if me == failer then
        local a, b = clgc.user_event(ctx), clgc.user_event(ctx)
        a:on(function() error("boom from state " .. me) end)
        b:on(function()
            barrier() -- 1: the failure is in clgc's list
            barrier() -- 2: the other state has drained
        end)
        a:set_status("complete")
        b:set_status("complete")
        barrier() -- 0
        own_ok, own_err = pcall(lib.raises, function() clgc.drain() end,
            "clgc.drain", "a callback (clgc.Event:on) failed",
            "boom from state " .. me)
    end
    -- Errors are kept until the end of the round: a state that stopped
    -- here would leave the other waiting at a barrier for ever.
    local ok, err = true, nil
    if me ~= failer then
        barrier() -- 0
        barrier() -- 1
        ok, err = pcall(clgc.drain) -- takes the other's failure
        barrier() -- 2
    end
    barrier() -- 3
    local routed_now = lib.internal.failures_routed()
    barrier() -- 4
    lib.ok(ok, "state " .. me .. " raised another state's failure: " ..
        tostring(err))
    lib.ok(own_ok, "state " .. me .. ": " .. tostring(own_err))
    lib.eq(routed_now, routed + 1, "one failure taken by the other state")
end
round(1)
round(2)
lib.eq(clgc.drain(), 0, "nothing left")
print(("state %d: %d callbacks, %d completions, its own failure"):format(
    me, calls, posts))
