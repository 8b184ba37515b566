-- The test helpers against what could hang a test: a state of the
-- multi-state host that fails while another waits for it in barrier()
-- (the host must end at once, failed), and lib.wait_until's bound.
local lib = require "lib"

-- A script for the host: state 1 fails, state 2 waits for it.
local script = os.tmpname()
local f = assert(io.open(script, "w"))
f:write([[
if STATE == 1 then
    error("state 1 fails")
end
barrier()
]])
f:close()
local host = os.getenv("CLGC_LUA_BUILDDIR") .. "/tests/lua-threads"
local out = assert(io.popen(("%q 2 %q 2>&1"):format(host, script)))
local said = out:read("a")
local ok, how, code = out:close()
os.remove(script)
lib.eq(ok, nil, "the host with a failing state: its exit")
lib.eq(how .. " " .. code, "exit 1", "the host with a failing state")
lib.ok(said:find("state 1: ", 1, true) and said:find("state 1 fails", 1, true),
    "the host names the failing state and its error, not: " .. said)

-- A wait that never ends gives up, saying what it waited for.
lib.wait_bound = 1
local steps = 0
local err = lib.raises(function()
    lib.wait_until("what never comes", function() return false end,
        function() steps = steps + 1 end)
end, "gave up after 1 s waiting for what never comes")
lib.ok(steps > 0, "it stepped while it waited")
lib.ok(err:find("test-harness.lua", 1, true), "the error points here: " .. err)

lib.done("harness")
