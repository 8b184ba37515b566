-- Lua callbacks for OpenCL callbacks run once, in a drain of the state's
-- queue, on the owner thread; one that raises is reported at the next
-- wait or drain, and none is lost.
local clgc = require "clgc"
local lib = require "lib"

local _, ctx, q = lib.pocl()
local me = clgc.thread_id()

-- PoCL calls a user event's callback inside clSetUserEventStatus: clgc
-- defers it, and it runs in the next drain.
local u = clgc.user_event(ctx)
local calls, got_status, got_event, thread = 0, nil, nil, nil
u:on(function(status, ev)
    calls = calls + 1
    got_status, got_event, thread = status, ev, clgc.thread_id()
end)
u:set_status("complete")
lib.eq(calls, 0, "deferred: not run inside set_status")
clgc.drain()
lib.eq(calls, 1, "run once in the drain")
lib.eq(got_status, 0, "status CL_COMPLETE")
lib.ok(got_event == u, "the event is passed")
lib.eq(thread, me, "on the owner thread")
clgc.drain()
lib.eq(calls, 1, "exactly once")

-- A kernel's completion callback, from PoCL's thread, also runs here.
local prog = ctx:program(lib.spin_src):build()
local k = prog:kernel("spin")
local buf = ctx:buffer(64 * 4)
k:args(buf, { "int", 1000 })
local ev = q:launch(k, 64)
local kthread
ev:on(function() kthread = clgc.thread_id() end)
clgc.wait(ev)
lib.eq(kthread, me, "a kernel's callback runs on the owner thread")

-- A callback that raises: reported at the next drain, with the message.
local u2 = clgc.user_event(ctx)
u2:on(function() error("boom in a callback") end)
u2:set_status("complete")
lib.raises(function() clgc.drain() end, "clgc.drain",
    "a callback (clgc.Event:on) failed", "boom in a callback")
lib.eq(clgc.drain(), 0, "raised once")

-- ... and at the next wait.
local u3 = clgc.user_event(ctx)
u3:on(function() error("boom before a wait") end)
u3:set_status("complete")
lib.raises(function() clgc.wait(q:marker()) end, "clgc.wait",
    "a callback (clgc.Event:on) failed", "boom before a wait")

-- Several failures: each raised once, in order, none lost.
local us = {}
for i = 1, 3 do
    us[i] = clgc.user_event(ctx)
    us[i]:on(function() error("failure " .. i, 0) end)
end
for i = 1, 3 do
    us[i]:set_status("complete")
end
for i = 1, 3 do
    lib.raises(function() clgc.drain() end, "failure " .. i)
end
clgc.drain()

-- A non-string error value comes back as it was.
local u4 = clgc.user_event(ctx)
local obj = { why = "a table" }
u4:on(function() error(obj) end)
u4:set_status("complete")
local ok, err = pcall(clgc.drain)
lib.ok(not ok and err == obj, "the error object itself")

-- Inside the scheduler: the failure comes out of run.
local u5 = clgc.user_event(ctx)
u5:on(function() error("boom under the scheduler") end)
lib.raises(function()
    clgc.run(function()
        u5:set_status("complete")
        clgc.yield()
    end)
end, "clgc.drain", "boom under the scheduler")
clgc.run() -- let the coroutine finish

-- Destructor callbacks: once the object is gone, in the drain.
do
    local b = ctx:buffer(64)
    local gone, gthread = 0, nil
    b:on_release(function(status)
        lib.eq(status, 0, "destructor status")
        gone, gthread = gone + 1, clgc.thread_id()
    end)
    b:release()
    lib.eq(gone, 0, "deferred: not inside the release")
    clgc.drain()
    lib.eq(gone, 1, "once, in the drain")
    lib.eq(gthread, me, "on the owner thread")
    -- Dropped: the collector's release, then the drain.
    local dropped = 0
    ctx:buffer(64):on_release(function() dropped = dropped + 1 end)
    collectgarbage()
    collectgarbage()
    clgc.drain()
    lib.eq(dropped, 1, "a dropped buffer's destructor")
    local c2 = clgc.context(lib.pocl())
    local cgone = 0
    c2:on_release(function() cgone = cgone + 1 end)
    c2:release()
    clgc.drain()
    lib.eq(cgone, 1, "a context's destructor")
end

-- The build notification, as a Lua function: once, with the program, on
-- this thread; outside and inside a coroutine.
local src = lib.saxpy_src .. "\n// callbacks " .. os.time() .. math.random()
local function build_with_notify()
    local p = ctx:program(src)
    local n, np, nt = 0, nil, nil
    p:build(nil, function(status, prog)
        n, np, nt = n + 1, prog, clgc.thread_id()
    end)
    clgc.drain()
    lib.eq(n, 1, "notified once")
    lib.ok(np == p, "with the program")
    lib.eq(nt, me, "on the owner thread")
end
build_with_notify()
clgc.run(build_with_notify)

-- A notification that raises, in a coroutine's build: the error is the
-- coroutine's, raised at its wait.
do
    local caught
    clgc.run(function()
        local ok, err = pcall(function()
            ctx:program(src):build(nil, function() error("boom in notify") end)
            clgc.yield()
        end)
        caught = not ok and err
    end)
    lib.ok(caught and caught:find("boom in notify", 1, true),
        "the notify's error in the coroutine that built: " .. tostring(caught))
end

-- A callback's error goes to the coroutine that registered it, at its
-- wait, not to another coroutine's wait nor out of clgc.run: the
-- registering coroutine catches it, the other runs on.
do
    local u = clgc.user_event(ctx)
    local a_caught, b_done, b_saw = nil, false, nil
    clgc.run(function()
        u:on(function() error({ why = "a's callback" }) end)
        local ok, err = pcall(function()
            u:set_status("complete")
            clgc.wait(u) -- completes, and the callback fails meanwhile
            clgc.yield()
            clgc.yield()
        end)
        a_caught = not ok and err
    end)
    lib.eq(type(a_caught), "table", "A got its callback's error object")
    lib.eq(a_caught.why, "a's callback", "A's error")
    u = clgc.user_event(ctx)
    local v = clgc.user_event(ctx)
    clgc.spawn(function()
        u:on(function() error("a's second callback") end)
        local ok, err = pcall(clgc.sleep, 1e6) -- the error cuts it short
        a_caught = not ok and err
    end)
    clgc.spawn(function()
        clgc.yield()
        u:set_status("complete")
        local ok, err = pcall(function()
            v:set_status("complete")
            clgc.wait(v)
            clgc.yield()
        end)
        b_saw = not ok and err or nil
        b_done = true
    end)
    clgc.run()
    lib.ok(a_caught and a_caught:find("a's second callback", 1, true),
        "A's second error, raised in its sleep: " .. tostring(a_caught))
    lib.eq(b_saw, nil, "B's waits raised nothing of A's")
    lib.ok(b_done, "B ran to its end")
end

-- Registered outside the scheduler's coroutines: clgc.on_error's handler
-- gets the error, and clgc.run goes on.
do
    local got, finished = {}, false
    local old = clgc.on_error(function(err) got[#got + 1] = err end)
    lib.eq(old, nil, "no handler before")
    local u = clgc.user_event(ctx)
    u:on(function() error("main's callback") end)
    clgc.post(function() error("main's post") end)
    clgc.run(function()
        u:set_status("complete")
        clgc.wait(u)
        clgc.sleep(0)
        finished = true
    end)
    lib.ok(finished, "clgc.run ran its coroutine to the end")
    lib.eq(#got, 2, "errors the handler got")
    lib.ok(got[1]:find("main's", 1, true) and got[2]:find("main's", 1, true),
        "the handler's errors: " .. tostring(got[1]) .. ", " ..
        tostring(got[2]))
    clgc.on_error(nil)
end
lib.done("callbacks")
