-- Helpers for the binding's tests: PoCL's device, a context and a queue,
-- assertions that say what they expected, and the kernels.
local clgc = require "clgc"

local lib = {}

-- The binding's internals, which its module does not export: the tests
-- reach them as clgc.lua does, through the registry.
lib.internal = debug.getregistry()["clgc.internal"]

function lib.pocl(queue_options)
    return clgc.open("Portable Computing Language", queue_options)
end

function lib.eq(got, want, what)
    if got ~= want then
        error(("%s: got %s, want %s"):format(what, tostring(got),
            tostring(want)), 2)
    end
end

function lib.ok(cond, what)
    if not cond then
        error(what, 2)
    end
end

-- Wait for another thread's progress: call step() until cond() holds.
-- The bound is no timing assertion: far above what any wait takes, it
-- turns a wait that would never end into an error that says what was
-- awaited. CLGC_TEST_WAIT_BOUND: the bound in seconds (default 120).
lib.wait_bound = tonumber(os.getenv("CLGC_TEST_WAIT_BOUND")) or 120
function lib.wait_until(what, cond, step)
    local deadline = os.time() + lib.wait_bound
    while not cond() do
        if os.time() > deadline then
            error(("gave up after %d s waiting for %s"):format(
                lib.wait_bound, what), 2)
        end
        step()
    end
end

-- f() must raise an error whose message contains every pattern (plain).
function lib.raises(f, ...)
    local ok, err = pcall(f)
    if ok then
        error("expected an error, got none", 2)
    end
    err = tostring(err)
    for _, p in ipairs({ ... }) do
        if not err:find(p, 1, true) then
            error(("error %q does not contain %q"):format(err, p), 2)
        end
    end
    return err
end

-- f() must raise an error object (a failure of OpenCL or clgc) of the
-- OpenCL error `name`, for the documented function func; returns it.
function lib.fails(f, name, func)
    local ok, err = pcall(f)
    if ok then
        error("expected an error, got none", 2)
    end
    if type(err) ~= "table" or err.name ~= name or err.func ~= func or
        clgc.error_name(err.code) ~= name or tostring(err) ~= err.message then
        error(("expected an error object of %s from %s, got %s %s"):format(
            name, func, type(err), tostring(err)), 2)
    end
    return err
end

-- f() must raise a string (misuse), containing every pattern (plain).
function lib.misuse(f, ...)
    local ok, err = pcall(f)
    if ok or type(err) ~= "string" then
        error(("expected a string error, got %s"):format(
            ok and "none" or type(err) .. " " .. tostring(err)), 2)
    end
    return lib.raises(function() error(err, 0) end, ...)
end

lib.saxpy_src = [[
__kernel void saxpy(float a, __global const float *x, __global float *y)
{
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
]]

-- Each work item spins n times: a launch takes as long as a test needs.
lib.spin_src = [[
__kernel void spin(__global float *x, int n)
{
    size_t i = get_global_id(0);
    float v = x[i];
    for (int k = 0; k < n; k++)
        v = v * 0.999f + 0.001f;
    x[i] = v;
}
]]

-- A large program: many kernels, so that its build takes a while.
function lib.large_src(n)
    local parts = {}
    for i = 1, n do
        parts[#parts + 1] = ([[
__kernel void k%d(__global float *x, int n)
{
    size_t i = get_global_id(0);
    float v = x[i];
    for (int k = 0; k < n; k++)
        v = sin(v) * %d.0f + cos(v * k);
    x[i] = v;
}
]]):format(i, i)
    end
    return table.concat(parts)
end

-- Give PoCL time to drop its own references to ev (it drops them after
-- the command's callbacks and dependents are done with it): a process
-- that exits before that can crash in PoCL's threads (as
-- tests/testutil.h's test_event_let_go says). Our handle holds one. PoCL
-- may also keep an event for good (a queue's or a buffer's last event),
-- so this gives up after a while: it asserts nothing.
function lib.let_go(ev)
    local CL_EVENT_REFERENCE_COUNT = 0x11D2
    local m = clgc.memory(4)
    for _ = 1, 2000 do
        lib.eq(clgc.call("clGetEventInfo", ev, CL_EVENT_REFERENCE_COUNT, 4,
            m, nil), 0, "clGetEventInfo")
        if m:get("uint", 0) <= 1 then
            return
        end
        clgc.sleep(0.001)
    end
end

function lib.done(name)
    print(name .. ": ok")
end

return lib
