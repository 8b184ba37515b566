-- Driven by cqueues (Debian's lua-cqueues): clgc.queue follows its
-- polling protocol (pollfd, events, timeout), so a cqueues coroutine
-- waits on it and steps clgc's scheduler when it is readable.
local cqueues = require "cqueues"
local clgc = require "clgc"
local lib = require "lib"

local _, ctx, q = lib.pocl()
local k = ctx:program(lib.spin_src):build():kernel("spin")
local buf = ctx:buffer(256 * 4)
k:args(buf, { "int", 200000 })

local result, resumed_by_cqueues, stepping = nil, nil, false
local polls = 0
clgc.spawn(function()
    clgc.wait(q:launch(k, 256))
    resumed_by_cqueues = stepping
    result = q:read(buf, { type = "float", count = 4 })
end)

local cq = cqueues.new()
local done = false
cq:wrap(function()
    while clgc.alive() > 0 do
        cqueues.poll(clgc.queue)
        polls = polls + 1
        stepping = true
        clgc.step()
        stepping = false
    end
    done = true
end)
local ticks = 0
cq:wrap(function()
    while not done do
        ticks = ticks + 1
        cqueues.sleep(0.001)
    end
end)
assert(cq:loop())

lib.ok(result ~= nil and #result == 4, "the coroutine finished")
lib.ok(resumed_by_cqueues, "resumed by the cqueues controller's step")
lib.ok(polls >= 2, "polled for the spawn and for the completion")
print(("cqueues: %d polls, %d ticks of another cqueues coroutine"):format(
    polls, ticks))
lib.done("cqueues")
