-- clgc: OpenCL for Lua 5.4 through clgc, where coroutines keep running
-- while kernels run and programs build.
--
-- This front module is clgc.core (the C module) plus a small scheduler:
-- clgc.spawn(fn, ...) makes a coroutine the scheduler runs; clgc.step()
-- drains the state's completion queue and resumes the coroutines whose
-- completions came in; clgc.run(main) steps until every coroutine is done,
-- sleeping in poll(2) on the queue's fd in between. An event loop drives the
-- same with clgc.fd() (luv: uv.new_poll) or clgc.queue (cqueues' polling
-- protocol) and a call to clgc.step() on each wakeup.
--
-- Inside a coroutine the scheduler runs, waits (clgc.wait, Program:build,
-- and the transfers and finish that would wait behind a queue's earlier
-- commands) yield until their completion is drained; anywhere else they
-- block the thread through clgc_wait_for_events. With CLGC_WAIT=blocking or
-- clgc.set_wait_mode("blocking") they block everywhere, for comparison.

local core = require "clgc.core"
-- What only this module and the tests use: kept out of clgc's table.
local internal = require("debug").getregistry()["clgc.internal"]

local M = {}
for k, v in pairs(core) do
    M[k] = v
end

local running, yield, resume = coroutine.running, coroutine.yield,
    coroutine.resume
local create, costatus = coroutine.create, coroutine.status
local pack, unpack = table.pack, table.unpack

local Event = internal.methods("clgc.Event")
local event_post, event_on = Event.post, Event.on

local owned = setmetatable({}, { __mode = "k" }) -- coroutines we run
local ready = {} -- packed {co, args...}, in the order they became ready
local alive = 0
local failed = setmetatable({}, { __mode = "k" }) -- co -> its callbacks' errors
local on_error -- clgc.on_error's handler
local in_run = false -- run() is stepping

-- Raise err, an error of the C function `from` that a function of this
-- module called for the documented function `to`, as to's: its name, and
-- its argument number shifted by `shift` where it names one. An error
-- object keeps its fields.
local function raise_as(err, from, to, shift)
    local function fix(msg)
        local head = from:gsub("%p", "%%%0") .. ": argument #(%d+)"
        msg = msg:gsub(head, function(n)
            return to .. ": argument #" .. (tonumber(n) + (shift or 0))
        end, 1)
        return (msg:gsub(from:gsub("%p", "%%%0") .. ":", to .. ":", 1))
    end
    if type(err) == "string" then
        err = fix(err)
    elseif type(err) == "table" and err.func == from then
        err.func, err.message = to, fix(err.message)
    end
    error(err, 0)
end

-- The calling coroutine, if the scheduler runs it.
local function current()
    local co, main = running()
    if not main and owned[co] then
        return co
    end
end

-- Whether waits here should yield.
local function yields()
    return current() ~= nil and core.wait_mode() ~= "blocking"
end

local function schedule(co, ...)
    ready[#ready + 1] = pack(co, ...)
end

-- Yield until the scheduler resumes us with token, the wait's own (a
-- resume meant for an earlier wait, one that an error cut short, is
-- ignored); return what came with it. A callback's error delivered to
-- this coroutine meanwhile is raised here instead.
local function await(token)
    local co = running()
    while true do
        local r = pack(yield())
        local errs = failed[co]
        if errs then
            local err = table.remove(errs, 1)
            if #errs == 0 then
                failed[co] = nil
            end
            error(err, 0)
        end
        if r[1] == token then
            return unpack(r, 2, r.n)
        end
    end
end

-- A callback's error: to the coroutine of the scheduler that registered
-- the callback, while it lives (raised at its current or next wait);
-- otherwise to clgc.on_error's handler; without one, to the state's next
-- wait or drain, as a failure of the callback (raised again here, inside
-- the drain's protection).
local function deliver(co, err)
    if co ~= nil and owned[co] and costatus(co) ~= "dead" then
        if running() == co then
            error(err, 0) -- a drain inside co: raised when it ends, in co
        end
        local errs = failed[co] or {}
        failed[co] = errs
        errs[#errs + 1] = err
        schedule(co, errs) -- a token no wait has: await raises the error
        return
    end
    if on_error ~= nil then
        return on_error(err)
    end
    error(err, 0)
end

-- fn, protected so that its error goes where deliver says, from the
-- coroutine that registers it; anything else is left as it is for the C
-- function's own check.
local function guard(fn)
    if type(fn) ~= "function" then
        return fn
    end
    local co = current()
    return function(...)
        local ok, err = pcall(fn, ...)
        if not ok then
            deliver(co, err)
        end
    end
end

--- clgc.on_error(handler): handler(err) gets the errors of callbacks
-- registered outside the scheduler's coroutines (or by one that has
-- ended); nil: they are raised at the state's next wait or drain. Returns
-- the previous handler.
function M.on_error(handler)
    if handler ~= nil and type(handler) ~= "function" then
        error("clgc.on_error: argument #1: function or nil expected, got " ..
            type(handler), 2)
    end
    local old = on_error
    on_error = handler
    return old
end

function M.post(fn, arg)
    return core.post(guard(fn), arg)
end

function M.after(seconds, fn)
    return core.after(seconds, guard(fn))
end

--- Run fn(...) in a new coroutine of the scheduler. Returns the coroutine.
function M.spawn(fn, ...)
    if type(fn) ~= "function" then
        error("clgc.spawn: function expected, got " .. type(fn), 2)
    end
    local co = create(fn)
    owned[co] = true
    alive = alive + 1
    schedule(co, ...)
    core.wake() -- an event loop polling the fd comes to step()
    return co
end

--- Drain the queue (at most max handlers, 0 or nil: all) and resume the
-- coroutines that are ready, once each. Never blocks. Raises the error of a
-- coroutine that failed (the others stay ready for the next step) or of a
-- callback that failed. Returns how many coroutines are still alive.
function M.step(max)
    if max ~= nil and math.type(max) ~= "integer" then
        error("clgc.step: argument #1: integer expected, got " .. type(max),
            2)
    end
    if max ~= nil and (max < 0 or max > 1000000000) then
        error("clgc.step: argument #1: a count of 0 to 10^9 expected, got "
            .. max, 2)
    end
    core.drain(max or 0)
    local batch = ready
    ready = {}
    for i = 1, #batch do
        local item = batch[i]
        local co = item[1]
        local ok, err = true, nil
        -- A coroutine may be in the batch twice (a wake and a callback's
        -- error): once dead, it is not resumed again.
        if costatus(co) ~= "dead" then
            ok, err = resume(co, unpack(item, 2, item.n))
        end
        if costatus(co) == "dead" and owned[co] then
            owned[co] = nil
            alive = alive - 1
        end
        if not ok then
            local rest = {}
            for j = i + 1, #batch do
                rest[#rest + 1] = batch[j]
            end
            for j = 1, #ready do
                rest[#rest + 1] = ready[j]
            end
            ready = rest
            if type(err) == "string" then
                err = debug.traceback(co, err)
            end
            error(err, 0)
        end
    end
    -- An event loop waits on the fd: keep it readable while coroutines are
    -- ready (run() looks at the ready list itself).
    if #ready > 0 and not in_run then
        core.wake()
    end
    return alive
end

--- Run main(...) (if given) in a coroutine and step until no coroutine of
-- the scheduler is alive, sleeping in poll(2) on the queue's fd whenever
-- none is ready.
function M.run(main, ...)
    if main ~= nil and type(main) ~= "function" then
        error("clgc.run: argument #1: function expected, got " .. type(main),
            2)
    end
    if main ~= nil then
        M.spawn(main, ...)
    end
    local outer = in_run
    in_run = true
    local ok, err = pcall(function()
        while alive > 0 do
            M.step()
            if alive > 0 and #ready == 0 then
                core.poll()
            end
        end
    end)
    in_run = outer
    if not ok then
        error(err, 0)
    end
end

--- How many coroutines of the scheduler are alive; whether any is ready.
function M.alive()
    return alive
end

function M.ready()
    return #ready > 0
end

--- The queue as cqueues polls it (its polling protocol: pollfd, events,
-- timeout as methods).
M.queue = setmetatable({}, {
    __index = {
        pollfd = function()
            return core.fd()
        end,
        events = function()
            return "r"
        end,
        timeout = function()
            if #ready > 0 then
                return 0
            end
        end,
    },
})

--- Let the other coroutines run, then go on.
function M.yield()
    local co = current()
    if not co then
        error("clgc.yield: not in a coroutine of clgc's scheduler", 2)
    end
    local token = {}
    schedule(co, token)
    return await(token)
end

--- Sleep for seconds: a coroutine yields; elsewhere the thread drains the
-- queue until then.
function M.sleep(seconds)
    -- Checked here so that the error names clgc.sleep; NaN fails the test.
    if type(seconds) ~= "number" or not (seconds >= 0 and seconds <= 1e6) then
        error(("clgc.sleep: argument #1: seconds from 0 to 1e6 expected, got %s")
            :format(tostring(seconds)), 2)
    end
    local co = current()
    if co then
        local token = {}
        core.after(seconds, function()
            schedule(co, token)
        end)
        return await(token)
    end
    local done = false
    core.after(seconds, function()
        done = true
    end)
    while not done do
        core.poll()
        core.drain()
    end
end

-- The events of wait(e1, e2, ...) or wait({e1, e2, ...}).
local function event_list(...)
    if select("#", ...) == 1 then
        return (...) -- an Event or a table of them: checked as given
    end
    return { ... }
end

--- Wait until every event is complete or has failed. Raises the error
-- object of CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST (-14) if a
-- command failed, as clWaitForEvents returns it.
function M.wait(...)
    local evs = event_list(...)
    if not yields() then
        return core.wait(evs)
    end
    internal.check_events(evs, "clgc.wait")
    if type(evs) ~= "table" then
        evs = { evs }
    end
    local co, bad = current(), false
    for i = 1, rawlen(evs) do
        local token = {}
        event_post(evs[i], function(status)
            schedule(co, token, status)
        end)
        local status = await(token)
        bad = bad or status < 0
    end
    if bad then
        -- Every event has ended: the blocking wait returns at once, and
        -- raises clWaitForEvents' own error object.
        core.wait(evs)
    end
end

function Event:post(fn)
    return event_post(self, guard(fn))
end

function Event:on(fn, when)
    return event_on(self, guard(fn), when)
end

for _, class in ipairs({ "clgc.Buffer", "clgc.Context" }) do
    local methods = internal.methods(class)
    local on_release = methods.on_release
    methods.on_release = function(self, fn)
        return on_release(self, guard(fn))
    end
end

local Program = internal.methods("clgc.Program")
local build_here = Program.build

--- Program:build([options [, notify]]): in a coroutine, on a worker
-- thread while the coroutine yields; notify(status, program) runs in a
-- drain when the build ends. Raises the build's error with its log.
function Program:build(options, notify)
    if not yields() then
        return build_here(self, options, guard(notify))
    end
    local co, token = current(), {}
    internal.build_start(self, options, function(status)
        schedule(co, token, status)
    end, guard(notify))
    local status = await(token)
    internal.build_check(self, status)
    return self
end

local Queue = internal.methods("clgc.Queue")
local read, write, finish = Queue.read, Queue.write, Queue.finish
local marker = Queue.marker

-- A blocking transfer waits behind the queue's earlier commands: in a
-- coroutine, wait for them (a marker) first, so that it yields instead.
-- The C marker checks q, whatever it is.
local function behind(q, opts, fn)
    if yields() then
        local wait = type(opts) == "table" and opts.wait or nil
        local ok, ev = pcall(marker, q, wait)
        if not ok then
            raise_as(ev, "clgc.Queue:marker", fn)
        end
        M.wait(ev)
    end
end

function Queue:read(buf, opts)
    behind(self, opts, "clgc.Queue:read")
    return read(self, buf, opts)
end

function Queue:write(buf, data, opts)
    behind(self, opts, "clgc.Queue:write")
    return write(self, buf, data, opts)
end

function Queue:finish()
    behind(self, nil, "clgc.Queue:finish")
    return finish(self)
end

-- The other blocking transfers (lxfer.c, limage.c) wait behind the
-- queue's earlier commands the same way. Their options are the last
-- argument.
for _, name in ipairs({ "map", "read_rect", "write_rect", "read_image",
    "write_image" }) do
    local f = Queue[name]
    Queue[name] = function(self, ...)
        local n = select("#", ...)
        behind(self, n > 0 and select(n, ...) or nil, "clgc.Queue:" .. name)
        return f(self, ...)
    end
end

local Kernel = internal.methods("clgc.Kernel")

--- Kernel:args(...): set every argument in order; a number goes with its
-- type as {"float", 2.5}.
local kernel_ptr = Kernel.ptr
function Kernel:args(...)
    -- self is checked even when there is nothing to set; the C check's
    -- message already points at the caller.
    local ok, err = pcall(kernel_ptr, self)
    if not ok then
        error((err:gsub("clgc%.Kernel:ptr", "clgc.Kernel:args", 1)), 0)
    end
    -- Kernel:arg's argument #3 (the value) is Kernel:args' argument i + 1.
    for i = 1, select("#", ...) do
        local v = select(i, ...)
        local ok, err
        if type(v) == "table" then
            ok, err = pcall(self.arg, self, i - 1, v[2], v[1])
        else
            ok, err = pcall(self.arg, self, i - 1, v)
        end
        if not ok then
            raise_as(err, "clgc.Kernel:arg", "clgc.Kernel:args", i - 2)
        end
    end
    return self
end

--- The first device of the first platform whose name contains pattern
-- (plain text), with a context and a queue on it.
function M.open(pattern, queue_options)
    if pattern ~= nil and type(pattern) ~= "string" then
        error("clgc.open: argument #1: string expected, got " .. type(pattern),
            2)
    end
    if queue_options ~= nil and type(queue_options) ~= "table" then
        error("clgc.open: argument #2: table expected, got "
            .. type(queue_options), 2)
    end
    for _, p in ipairs(core.platforms()) do
        if p:info("name"):find(pattern or "", 1, true) then
            local devs = p:devices()
            if #devs > 0 then
                local ctx = core.context(devs[1])
                return devs[1], ctx, ctx:queue(devs[1], queue_options)
            end
        end
    end
    internal.fail("clgc.open", -1, -- CL_DEVICE_NOT_FOUND
        ("no platform named like '%s' with a device"):format(
            tostring(pattern)))
end

M.local_mem = core.local_mem

return M
