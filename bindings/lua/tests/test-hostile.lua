-- Every function and method of the module, called with hostile values:
-- wrong types, nil, NaN, infinities, negative and huge numbers, foreign
-- userdata, released handles. Each call that the function's contract does
-- not allow must raise a Lua error with a message string; none may crash.
-- valgrind runs this script too.
local clgc = require "clgc"
local lib = require "lib"

local dev, ctx, q = lib.pocl()
local prog = ctx:program(lib.saxpy_src):build()

local hostile = {
    nil, true, "x", {}, function() end, 0 / 0, math.huge, -math.huge, -1,
    1.5, 2 ^ 53, 1 << 62, math.maxinteger, math.mininteger, io.stdout,
    clgc.local_mem(64), clgc.memory(4), coroutine.create(function() end),
}
local NH = 18 -- the table has holes (nil): count it by hand

-- Fresh, valid objects of each class, and a released one of each.
local function fresh(kind)
    if kind == "Platform" then return clgc.platforms()[1] end
    if kind == "Device" then return dev end
    if kind == "Context" then return clgc.context(dev) end
    if kind == "Queue" then return ctx:queue(dev) end
    if kind == "Program" then return ctx:program(lib.saxpy_src) end
    if kind == "Kernel" then return prog:kernel("saxpy") end
    if kind == "Buffer" then return ctx:buffer(16) end
    if kind == "Event" then return clgc.user_event(ctx) end
    if kind == "Image" then
        return ctx:image{ format = { "rgba", "float" }, width = 2, height = 2 }
    end
    if kind == "Sampler" then return ctx:sampler() end
end
local kinds = { "Platform", "Device", "Context", "Queue", "Program",
    "Kernel", "Buffer", "Event", "Image", "Sampler" }

local calls, errors = 0, 0
-- f(...) must not crash; if must_fail, it must raise a message string
-- (misuse) or an error object (a failure of OpenCL, with its code).
local function try(what, must_fail, f, ...)
    calls = calls + 1
    local ok, err = pcall(f, ...)
    if not ok then
        errors = errors + 1
        lib.ok(type(err) == "string" or (type(err) == "table" and
            math.type(err.code) == "integer" and type(err.name) == "string"
            and tostring(err) == err.message),
            what .. ": an error message string or object, got " ..
            tostring(err))
    elseif must_fail then
        error(what .. ": no error", 2)
    end
    clgc.drain()
end

-- Module functions: each argument position in turn gets each hostile
-- value; the others stay absent. Functions that take no argument, or
-- accept anything at a position, are called but need not fail there.
local lenient = {
    -- Their arguments are optional or free: nothing must fail.
    fd = true, now = true, thread_id = true, wake = true, commands = true,
    platforms = true, alive = true,
    ready = true, wait_mode = true, yield = true, drain = true, step = true,
    run = true, poll = true, open = true, command = true, version = true,
}
local skip = {
    -- Would block or wait on purpose with a valid value.
    sleep = false,
}
local names = {}
for name, v in pairs(clgc) do
    if type(v) == "function" then names[#names + 1] = name end
end
table.sort(names)
for _, name in ipairs(names) do
    local f = clgc[name]
    for pos = 1, 3 do
        for i = 1, NH do
            local v = hostile[i]
            local args = {}
            args[pos] = v
            -- poll: make the fd readable, so that no value may block.
            if name == "poll" then clgc.wake() end
            -- A hostile value at a later position after valid-looking
            -- absent ones: most functions fail on the first position.
            local must = not lenient[name] and pos == 1 and skip[name] == nil
            if name == "post" and type(v) == "function" then must = false end
            if name == "spawn" and type(v) == "function" then must = false end
            if name == "set_wait_mode" then must = true end
            if name == "error_name" and math.type(v) == "integer" then must = false end
            if name == "error_name" and v == 2 ^ 53 then must = false end
            if name == "wait" and pos == 1 and v == nil then must = true end
            if name == "on_error" and (v == nil or type(v) == "function") then
                must = false
            end
            -- A positive whole number is a size local_mem takes.
            if name == "local_mem" and type(v) == "number" and v > 0 and
                math.tointeger(v) then must = false end
            try(("clgc.%s(#%d = %s)"):format(name, pos, tostring(v)), must,
                f, table.unpack(args, 1, pos))
            clgc.on_error(nil) -- a handler the sweep set: none for the rest
        end
    end
end
clgc.run()
clgc.drain()

-- Methods: with a hostile self, a released self, and each argument
-- position hostile on a valid self.
local methods = {}
for _, kind in ipairs(kinds) do
    local m = lib.internal.methods("clgc." .. kind)
    for mname in pairs(m) do
        methods[#methods + 1] = { kind, mname }
    end
end
table.sort(methods, function(a, b)
    return a[1] .. a[2] < b[1] .. b[2]
end)
-- Methods that take no arguments but self, or only optional ones.
local no_args = {
    release = true, ptr = true, size = true, status = true, flush = true,
    finish = true, devices = true, log = true, marker = true, args = true,
}
for _, km in ipairs(methods) do
    local kind, mname = km[1], km[2]
    local f = lib.internal.methods("clgc." .. kind)[mname]
    -- A hostile self.
    for i = 1, NH do
        try(("%s.%s(self = %s)"):format(kind, mname, tostring(hostile[i])),
            true, f, hostile[i])
    end
    for _, other in ipairs(kinds) do
        if other ~= kind then
            local o = fresh(other)
            try(("%s.%s(self = %s)"):format(kind, mname, other), true, f, o)
            if other ~= "Platform" and other ~= "Device" then o:release() end
        end
    end
    -- A released self (release itself is idempotent).
    local r = fresh(kind)
    if kind ~= "Platform" and kind ~= "Device" then
        if kind == "Event" then r:set_status("complete") end
        r:release()
        try(("%s.%s(released self)"):format(kind, mname), mname ~= "release",
            f, r)
    end
    -- Each argument hostile on a valid self.
    if mname ~= "release" and mname ~= "ptr" then
        for pos = 2, 4 do
            for i = 1, NH do
                local self = fresh(kind)
                local args = { self }
                args[pos] = hostile[i]
                -- No method takes these for its first argument; any
                -- other value may be valid somewhere, and must only not
                -- crash.
                local v = hostile[i]
                local must = pos == 2 and not no_args[mname] and
                    (v == io.stdout or type(v) == "thread" or v ~= v or
                        (type(v) == "userdata" and mname ~= "arg"))
                try(("%s:%s(#%d = %s)"):format(kind, mname, pos,
                    tostring(hostile[i])), must, f,
                    table.unpack(args, 1, pos))
                if kind == "Event" then pcall(self.set_status, self, "complete") end
                if kind ~= "Platform" and kind ~= "Device" then self:release() end
            end
        end
    end
end
clgc.drain()

-- Memory's methods: a hostile self and hostile indices.
local mem = clgc.memory(16)
for _, mname in ipairs({ "get", "set", "string", "ptr", "pointer" }) do
    local f = mem[mname]
    for i = 1, NH do
        try("Memory." .. mname .. "(self hostile)", i ~= 17,
            f, hostile[i], "int", 0, 1)
        if mname ~= "ptr" then
            local v = hostile[i]
            local must = v ~= nil and not (type(v) == "number" and
                math.tointeger(v))
            if mname == "get" or mname == "set" then
                try("Memory:" .. mname .. "(index hostile)",
                    hostile[i] ~= nil or mname == "set",
                    f, mem, "int", hostile[i], 1)
            elseif mname == "pointer" then
                try("Memory:pointer(hostile)", hostile[i] ~= nil, f, mem,
                    hostile[i])
            else
                try("Memory:string(hostile)", must, f, mem, hostile[i])
            end
        end
    end
end

-- View's methods (lxfer.c): a hostile self, hostile arguments, and a view
-- whose mapping has ended; none may touch memory it does not hold.
do
    local vb = ctx:buffer(string.rep("\0", 16))
    local view = q:map(vb)
    local ended = q:map(vb)
    clgc.wait(q:unmap(ended))
    local gate = clgc.user_event(ctx)
    local _, pending = q:read_async(vb, { wait = gate })
    for _, mname in ipairs({ "get", "set", "numbers", "string", "put",
        "size", "active" }) do
        local f = view[mname]
        for i = 1, NH do
            local v = hostile[i]
            try("View." .. mname .. "(self hostile)", true, f, v, "int", 0, 1)
            -- get, set, numbers, string and put with each argument hostile.
            for pos = 2, 4 do
                local args = { view, "int", 0, 1 }
                if mname == "put" then args = { view, 0, "x" } end
                if mname == "string" then args = { view, 0, 1 } end
                args[pos] = v
                local must = (pos == 2 and mname ~= "size" and
                    mname ~= "active" and mname ~= "string") or
                    (mname == "string" and v ~= nil and
                        not (math.type(v) == "integer" and v >= 0 and v <= 16))
                if mname == "get" and pos == 4 then must = false end
                if mname == "numbers" and pos > 2 then must = false end
                if mname == "set" and pos == 4 and v == 1.5 then
                    must = false
                end
                if (mname == "set" or mname == "get") and pos == 3 and
                    math.type(v) == "integer" and v >= 0 and v < 4 then
                    must = false
                end
                if mname == "set" and pos == 4 and type(v) == "number" and
                    (math.type(v) == "integer" or v ~= v) then
                    must = math.type(v) ~= "integer" and v ~= 1.5 and v == v
                end
                if mname == "put" and pos == 3 and v == "x" then must = false end
                if mname == "put" and pos == 2 and math.type(v) == "integer" and
                    v >= 0 and v < 16 then must = false end
                if mname == "put" and pos == 4 then must = false end
                if mname == "string" and pos == 4 then must = false end
                try(("View:%s(#%d = %s)"):format(mname, pos, tostring(v)),
                    must, f, table.unpack(args, 1, 4))
            end
        end
        if mname ~= "size" and mname ~= "active" then
            try("View:" .. mname .. "(ended)", true, f, ended, "int", 0, 1)
            try("View:" .. mname .. "(pending)", true, f, pending, "int", 0, 1)
        end
    end
    gate:set_status("complete")
    clgc.wait(q:unmap(view))
    vb:release()
end

-- Hostile tables: lengths that lie, holes, hostile elements.
local liars = {
    setmetatable({}, { __len = function() return 1 << 62 end }),
    setmetatable({}, { __len = function() return -1 end }),
    setmetatable({}, { __len = function() return 0 / 0 end }),
    setmetatable({}, { __index = function() return io.stdout end }),
    { io.stdout }, { 1, nil, 3 }, { 0 / 0 }, { math.huge },
}
-- Written at its creation: a fresh buffer's bytes are undefined, and
-- valgrind would see them read.
local b = ctx:buffer(string.rep("\0", 16))
local k = prog:kernel("saxpy")
local img = ctx:image{ format = { "rgba", "float" }, width = 2, height = 2 }
local vk = ctx:program("__kernel void v(float4 x) {}"):build():kernel("v")
for i, t in ipairs(liars) do
    try("wait(liar " .. i .. ")", true, clgc.wait, t)
    try("marker(liar " .. i .. ")", false, function()
        local e = q:marker(t)
        clgc.wait(e)
    end)
    try("write(liar " .. i .. ")", false, q.write, q, b, t, "float")
    try("read(liar " .. i .. ")", false, q.read, q, b, t)
    try("launch(liar " .. i .. ")", true, q.launch, q, k, t)
    try("context(liar " .. i .. ")", true, clgc.context, t)
    -- The functions of lxfer.c, limage.c and lbinary.c with lying
    -- tables for their lists, regions and origins.
    try("barrier(liar " .. i .. ")", false, function()
        clgc.wait(q:barrier(t))
    end)
    try("fill wait (liar " .. i .. ")", false, function()
        clgc.wait(q:fill(b, "\0", { wait = t }))
    end)
    try("read_rect region (liar " .. i .. ")", true, q.read_rect, q, b,
        { region = t })
    try("read_rect origin (liar " .. i .. ")", false, q.read_rect, q, b,
        { region = { 1 }, origin = t })
    try("read_image region (liar " .. i .. ")", false, q.read_image, q, img,
        { region = t })
    try("write_async (liar " .. i .. ")", false, function()
        clgc.wait(q:write_async(b, t, "float"))
    end)
    try("link (liar " .. i .. ")", true, ctx.link, ctx, t)
    try("program_binaries (liar " .. i .. ")", true, ctx.program_binaries,
        ctx, dev, t)
    try("vector arg (liar " .. i .. ")", true, vk.arg, vk, 0, t, "float4")
end
b:release()
k:release()
img:release()
vk:release()

print(("hostile: %d calls, %d errors"):format(calls, errors))
prog:release()

-- Nothing test-only or internal is exported: not in clgc's table, not in
-- clgc.core's, not among a Program's methods.
for _, name in ipairs({ "check_events", "methods", "failures_routed",
    "reapers", "build_start", "build_check" }) do
    lib.eq(clgc[name], nil, "clgc." .. name)
    lib.eq(require("clgc.core")[name], nil, "clgc.core." .. name)
end
do
    local _, ctx = lib.pocl()
    local p = ctx:program(lib.saxpy_src)
    lib.eq(p.build_start, nil, "Program:build_start")
    lib.eq(p.build_check, nil, "Program:build_check")
    p:release()
end
lib.done("hostile")
