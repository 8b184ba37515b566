-- Timers (clgc.after, clgc.sleep) live in the scheduler itself: one heap
-- and one timerfd behind the fd clgc.fd() gives, no thread per timer.
local clgc = require "clgc"
local lib = require "lib"

-- The process's threads, as the kernel counts them.
local function threads()
    for line in io.lines("/proc/self/status") do
        local n = line:match("^Threads:%s*(%d+)")
        if n then
            return tonumber(n)
        end
    end
    error("no Threads: line in /proc/self/status")
end

-- 100 sleeps pending at once start no thread.
do
    local before = threads()
    local woke, during = 0, nil
    for i = 1, 100 do
        clgc.spawn(function()
            clgc.sleep(0.001 * (i % 7))
            woke = woke + 1
        end)
    end
    clgc.spawn(function()
        clgc.yield() -- every sleeper has started its sleep
        during = threads()
    end)
    clgc.run()
    lib.eq(during - before, 0,
        "threads more while 100 sleeps were pending (before " .. before ..
        ")")
    lib.eq(woke, 100, "sleepers woken")
end

-- Timers fire in the order of their deadlines, not of their setting.
do
    local order = {}
    for _, d in ipairs({ 0.03, 0.01, 0.02, 0 }) do
        clgc.after(d, function()
            order[#order + 1] = d
        end)
    end
    lib.wait_until("four timers", function() return #order == 4 end,
        function()
            clgc.poll()
            clgc.drain()
        end)
    lib.eq(table.concat(order, " "), "0 0.01 0.02 0.03", "timers' order")
end

-- An expired timer makes the fd readable (what luv and cqueues poll), and
-- the drain that runs it ends it: poll(0) then says nothing is pending.
do
    local ran = 0
    clgc.after(0, function() ran = ran + 1 end)
    lib.eq(clgc.poll(lib.wait_bound), true, "the fd after a timer expired")
    lib.eq(clgc.drain(), 1, "handlers the drain ran")
    lib.eq(ran, 1, "the timer ran")
    lib.eq(clgc.poll(0), false, "the fd once the timer ran")
end

-- A timer's handler that sets a timer for 0 s: it runs in the next drain,
-- so a drain always ends.
do
    local n = 0
    local function again()
        n = n + 1
        if n < 3 then
            clgc.after(0, again)
        end
    end
    clgc.after(0, again)
    clgc.poll(lib.wait_bound)
    lib.eq(clgc.drain(), 1, "the first drain ran one handler")
    lib.eq(n, 1, "handlers run after one drain")
    lib.wait_until("three timers in a row", function() return n == 3 end,
        function()
            clgc.poll()
            clgc.drain()
        end)
end

-- clgc.sleep outside a coroutine: the thread drains until then.
do
    local ran = false
    clgc.post(function() ran = true end)
    local before = threads()
    clgc.sleep(0.02)
    lib.ok(ran, "a post ran during a sleep in the main chunk")
    lib.eq(threads() - before, 0, "threads started by a main-chunk sleep")
end

-- A timer's error is a failure like any callback's.
do
    clgc.after(0, function() error("timer boom") end)
    clgc.poll(lib.wait_bound)
    lib.raises(function() clgc.drain() end, "timer boom")
end

lib.done("timers")
