-- Driven by luv (libuv for Lua, Debian's lua-luv): a poll handle on the
-- queue's fd wakes the loop, which steps the scheduler and so resumes the
-- coroutine whose kernel completed. luv makes the fd non-blocking, which
-- the state's epoll fd is already.
local uv = require "luv"
local clgc = require "clgc"
local lib = require "lib"

local _, ctx, q = lib.pocl()
local k = ctx:program(lib.spin_src):build():kernel("spin")
local buf = ctx:buffer(256 * 4)
k:args(buf, { "int", 200000 })

local wakeups, in_callback, resumed_in_callback, result = 0, false, nil, nil
local timer_ticks = 0

clgc.spawn(function()
    local ev = q:launch(k, 256)
    clgc.wait(ev) -- yields; the loop's fd wakeup resumes us
    resumed_in_callback = in_callback
    result = q:read(buf, { type = "float", count = 4 })
end)

local poll = uv.new_poll(clgc.fd())
local timer = uv.new_timer()
timer:start(1, 1, function() timer_ticks = timer_ticks + 1 end)
poll:start("r", function(err)
    assert(not err, err)
    wakeups = wakeups + 1
    in_callback = true
    local alive = clgc.step()
    in_callback = false
    if alive == 0 then
        poll:stop()
        poll:close()
        timer:stop()
        timer:close()
    end
end)
uv.run()

lib.ok(result ~= nil and #result == 4, "the coroutine finished")
lib.ok(resumed_in_callback, "resumed from the loop's fd callback")
lib.ok(wakeups >= 2, "woken for the spawn and for the completion: " ..
    wakeups)
lib.eq(clgc.alive(), 0, "no coroutine left")
print(("luv: %d wakeups on the fd, %d timer ticks meanwhile"):format(
    wakeups, timer_ticks))
lib.done("luv")
