-- The state's completion queue and the scheduler: posts run in a drain,
-- on this thread; the fd is readable while anything is pending; a
-- coroutine that waits yields and is resumed through the queue, so that
-- another coroutine can complete what it waits for.
local clgc = require "clgc"
local lib = require "lib"

local _, ctx, q = lib.pocl()
local me = clgc.thread_id()

local function readable()
    return clgc.poll(0)
end

-- Posts: nothing runs before the drain; each runs once, in order.
lib.eq(clgc.drain(), 0, "drain of nothing")
lib.ok(not readable(), "nothing pending: the fd is not readable")
local seen = {}
for i = 1, 5 do
    clgc.post(function(status, arg)
        lib.eq(status, 0, "a post's status")
        seen[#seen + 1] = arg
        lib.eq(clgc.thread_id(), me, "a post runs on the owner thread")
    end, i)
end
lib.eq(#seen, 0, "posts wait for the drain")
lib.ok(readable(), "pending: the fd is readable")
lib.eq(clgc.drain(2), 2, "a bounded drain")
lib.ok(readable(), "still pending after a bounded drain: readable")
lib.eq(clgc.drain(), 3, "the rest")
lib.eq(table.concat(seen, ","), "1,2,3,4,5", "order")
lib.ok(not readable(), "drained: not readable")

-- An event's completion, posted.
local ev = q:marker()
local status
ev:post(function(s) status = s end)
clgc.wait(ev) -- the blocking wait drains the queue afterwards
lib.eq(status, 0, "an event's completion")

-- A drain inside a handler is refused, and the refusal is reported as the
-- handler's failure at the next drain.
clgc.post(function() clgc.drain() end)
lib.raises(function() clgc.drain() end, "clgc.drain: a callback (clgc.post)",
    "called from a handler of this state's queue")

-- A coroutine waiting on a user event yields; another completes it.
local order = {}
local u = clgc.user_event(ctx)
clgc.spawn(function()
    order[#order + 1] = "wait"
    clgc.wait(u)
    order[#order + 1] = "resumed"
end)
clgc.spawn(function()
    order[#order + 1] = "set"
    u:set_status("complete")
end)
clgc.run()
lib.eq(table.concat(order, ","), "wait,set,resumed", "order of coroutines")
lib.eq(clgc.alive(), 0, "no coroutine left")

-- The cqueues protocol: pollfd, events, timeout.
lib.eq(clgc.queue:pollfd(), clgc.fd(), "pollfd")
lib.eq(clgc.queue:events(), "r", "events")
lib.eq(clgc.queue:timeout(), nil, "no timeout while nothing is ready")

-- step() by hand, as an event loop calls it: spawn makes the fd readable.
local ran = false
clgc.spawn(function() ran = true end)
lib.ok(readable(), "spawn wakes the loop")
lib.eq(clgc.step(), 0, "step runs it to the end")
lib.ok(ran, "the coroutine ran")

-- A coroutine's error comes out of run, and the others still run.
local other = false
lib.raises(function()
    clgc.run(function()
        clgc.spawn(function() other = true end)
        error("boom in a coroutine")
    end)
end, "boom in a coroutine")
clgc.run()
lib.ok(other, "the other coroutine ran")

-- sleep: inside a coroutine it yields, outside it drains.
local ticks = 0
clgc.run(function()
    clgc.spawn(function()
        for _ = 1, 3 do
            ticks = ticks + 1
            clgc.yield()
        end
    end)
    clgc.sleep(0.01)
end)
lib.eq(ticks, 3, "a coroutine ran during sleep")
clgc.sleep(0.001)
lib.done("queue")
