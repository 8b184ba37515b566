--! lua-threads 2
-- A state that closes while completions are still promised to its queue
-- (a callback and a completion on a user event nobody has set yet): the
-- close neither blocks on them nor frees what they will touch. The queue
-- stays open, drained by a thread of the binding's, until they come; then
-- it closes, and the handlers, whose state is gone, run no Lua.
local clgc = require "clgc"
local lib = require "lib"

local _, ctx = lib.pocl()

if STATE == 1 then
    local u = clgc.user_event(ctx)
    lib.eq(clgc.call("clRetainEvent", u), 0, "a reference for state 2")
    share(u:ptr())
    u:on(function() error("ran in a closed state") end)
    u:post(function() error("ran in a closed state") end)
    barrier() -- 1: shared
    -- The script ends: lua_close closes this state with both promised.
else
    barrier() -- 1
    local u = shared()
    lib.ok(u ~= nil, "the shared event")
    -- State 1 is closing; its queue cannot close before the event is set.
    lib.wait_until("state 1's queue to be left open", function()
        return lib.internal.reapers() > 0
    end, function() clgc.sleep(0.001) end)
    lib.eq(lib.internal.reapers(), 1, "one queue left open by a closed state")
    lib.eq(clgc.call("clSetUserEventStatus", u, 0), 0, "set it complete")
    lib.wait_until("the orphaned queue to close", function()
        return lib.internal.reapers() == 0
    end, function() clgc.sleep(0.001) end)
    lib.eq(lib.internal.reapers(), 0, "the orphaned queue closed")
    lib.eq(clgc.call("clReleaseEvent", u), 0, "our reference")
    lib.eq(clgc.drain(), 0, "nothing reached this state")
    print("state 2: the closed state's queue closed after its completions")
end
