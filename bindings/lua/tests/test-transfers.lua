-- Sub-buffers, fills, copies, rectangles, barriers and markers with wait
-- lists, non-blocking reads and writes, maps and their views, and the
-- out-of-order and profiling queue properties, on PoCL. valgrind runs this
-- script too.
local clgc = require "clgc"
local lib = require "lib"

local dev, ctx, q = lib.pocl()

local function floats(t, want, what)
    lib.eq(#t, #want, what .. ": count")
    for i = 1, #want do
        lib.eq(t[i], want[i], ("%s[%d]"):format(what, i))
    end
end

-- sub-buffers: a region shares the parent's memory; bad regions are
-- errors before OpenCL sees them.
do
    local b = ctx:buffer(string.rep("\0", 256))
    local s = b:sub(128, 64)
    lib.eq(s:size(), 64, "sub-buffer size")
    lib.eq(s:info("offset"), 128, "CL_MEM_OFFSET")
    lib.ok(s:info("associated_memobject") == b, "the sub-buffer's parent")
    q:write(s, { 1, 2, 3, 4 }, "float")
    floats(q:read(b, { type = "float", offset = 128, count = 4 }),
        { 1, 2, 3, 4 }, "the parent through the sub-buffer")
    lib.raises(function() b:sub(200, 64) end, "clgc.Buffer:sub",
        "past the end of the buffer")
    -- A failure of OpenCL (or one refused before OpenCL sees it) is an
    -- error object; misuse is a string.
    lib.fails(function() b:sub(0, 0) end, "CL_INVALID_VALUE", "clgc.Buffer:sub")
    lib.fails(function() b:sub(1, 4) end, "CL_MISALIGNED_SUB_BUFFER_OFFSET",
        "clgc.Buffer:sub")
    lib.misuse(function() b:sub(0, 4, "x") end, "clgc.Buffer:sub",
        "invalid option 'x'")
    lib.raises(function() b:sub(-1, 4) end, "CL_INVALID_VALUE")
    lib.raises(function() b:sub(1, 4) end, "CL_MISALIGNED_SUB_BUFFER_OFFSET")
    lib.raises(function() b:sub(0, 4, "x") end, "invalid option 'x'")
    -- The sub-buffer keeps its parent: the parent released by hand, the
    -- region is still read and written.
    b:release()
    q:write(s, { 5 }, "float")
    floats(q:read(s, { type = "float", count = 1 }), { 5 },
        "a sub-buffer whose parent handle was released")
    s:release()
    lib.raises(function() s:sub(0, 4) end, "has been released")
end

-- fill and copy, each an event; a later command waits for it in its wait
-- list.
do
    local a, b = ctx:buffer(64), ctx:buffer(64)
    local e1 = q:fill(a, 2.5, { type = "float" })
    local e2 = q:fill(b, string.rep("\1", 4), { offset = 16, size = 16 })
    local e3 = q:fill(b, "\0\0\0\0", { size = 16, wait = { e1, e2 } })
    clgc.wait(e3)
    floats(q:read(a, "float"), { 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5,
        2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5 }, "a filled with 2.5")
    lib.eq(q:read(b, { size = 32 }), string.rep("\0", 16) ..
        string.rep("\1", 16), "b filled in two parts")
    local e4 = q:copy(a, b, { src_offset = 0, dst_offset = 32, size = 32 })
    clgc.wait(e4)
    floats(q:read(b, { type = "float", offset = 32 }),
        { 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5 }, "copied into b")
    lib.raises(function() q:fill(a, "abc") end, "a pattern of 3 bytes")
    lib.fails(function() q:fill(a, "abc") end, "CL_INVALID_VALUE",
        "clgc.Queue:fill")
    lib.raises(function() q:fill(a, 1) end, "needs options.type")
    lib.raises(function() q:fill(a, "ab", { offset = 1 }) end,
        "multiples of the pattern")
    lib.raises(function() q:fill(a, "ab", { size = 66 }) end,
        "past the end of the buffer")
    lib.raises(function() q:fill(a, "ab", { offset = 1 << 62 }) end,
        "past the end of the buffer")
    lib.raises(function() q:fill(a, "ab", { size = 0 / 0 }) end,
        "option 'size': a non-negative integer expected")
    lib.raises(function() q:copy(a, b, { size = 65 }) end,
        "past the end of the buffer")
    lib.raises(function() q:copy(a, b, { dst_offset = 40, size = 32 }) end,
        "the destination")
    lib.raises(function() q:copy(a, b, { src_offset = -1 }) end,
        "non-negative integer")
    lib.raises(function() q:copy(a, io.stdout) end,
        "argument #3: clgc.Buffer expected")
    a:release()
    b:release()
end

-- Rectangles: a 4 x 3 block of bytes out of a buffer laid out as rows of
-- 8 bytes, written and read back, and copied between two buffers.
do
    local rows = {}
    for r = 0, 7 do
        rows[#rows + 1] = string.char(table.unpack({ r * 8, r * 8 + 1,
            r * 8 + 2, r * 8 + 3, r * 8 + 4, r * 8 + 5, r * 8 + 6, r * 8 + 7 }))
    end
    local b = ctx:buffer(table.concat(rows)) -- 8 rows of 8 bytes
    local rect = q:read_rect(b, { origin = { 2, 1 }, region = { 4, 3 },
        row_pitch = 8 })
    lib.eq(rect, string.char(10, 11, 12, 13, 18, 19, 20, 21, 26, 27, 28, 29),
        "read_rect of 4 x 3 at (2, 1)")
    q:write_rect(b, string.rep("\255", 4), { origin = { 0, 7 },
        region = { 4, 1 }, row_pitch = 8 })
    lib.eq(q:read(b, { offset = 56, size = 8 }), string.char(255, 255,
        255, 255, 60, 61, 62, 63), "write_rect of the last row")
    local c = ctx:buffer(string.rep("\0", 64))
    clgc.wait(q:copy_rect(b, c, { src_origin = { 2, 1 }, dst_origin = { 0, 0 },
        region = { 4, 3 }, src_row_pitch = 8, dst_row_pitch = 4 }))
    lib.eq(q:read(c, { size = 12 }), rect, "copy_rect, packed")
    lib.raises(function()
        q:read_rect(b, { origin = { 6, 7 }, region = { 4, 2 }, row_pitch = 8 })
    end, "clgc.Queue:read_rect", "reaches past the buffer's end")
    lib.raises(function() q:read_rect(b, { region = { 1 << 62, 2 } }) end,
        "too large")
    lib.raises(function() q:read_rect(b, {}) end, "'region' is required")
    lib.raises(function() q:read_rect(b, { region = { 0, 1 } }) end,
        "an empty region")
    lib.raises(function() q:read_rect(b, { region = { 4, 2 }, row_pitch = 2 })
    end, "the row pitch is less than the region's width")
    lib.raises(function()
        q:write_rect(b, "abc", { region = { 4, 1 }, row_pitch = 8 })
    end, "argument #3: 3 bytes for a region of 4")
    lib.raises(function()
        q:copy_rect(b, c, { region = { 8, 7 }, dst_origin = { 0, 2 } })
    end, "dst_rectangle: the rectangle reaches past the buffer's end")
    lib.raises(function()
        q:read_rect(b, { region = { 1, 1 }, origin = { 1 << 62, 1 << 62 } })
    end, "reaches past the buffer's end")
    b:release()
    c:release()
end

-- Barriers and markers with wait lists: nothing behind a barrier on a user
-- event runs until the event is set.
do
    local b = ctx:buffer(string.rep("\0", 16))
    local gate = clgc.user_event(ctx)
    local bar = q:barrier({ gate })
    local fill = q:fill(b, "\7")
    local mark = q:marker({ fill })
    q:flush()
    lib.eq(select(2, fill:status()) ~= "complete", true,
        "a fill behind a barrier on an unset user event is not complete")
    gate:set_status("complete")
    clgc.wait(mark)
    lib.eq(select(2, bar:status()), "complete", "the barrier once set")
    lib.eq(q:read(b), string.rep("\7", 16), "the fill ran after the barrier")
    local all = q:barrier()
    clgc.wait(all)
    lib.raises(function() q:barrier(io.stdout) end, "clgc.Queue:barrier")
    lib.raises(function() q:barrier({ io.stdout }) end, "a list of clgc.Event")
    b:release()
end

-- Non-blocking writes: the data is the binding's copy, so the Lua string
-- and table may be collected at once. Non-blocking reads: the view can be
-- read once the event has completed, not before.
do
    local b = ctx:buffer(4 * 1024)
    local gate = clgc.user_event(ctx)
    local vals = {}
    for i = 1, 1024 do vals[i] = i end
    local w = q:write_async(b, vals, { type = "float", wait = gate })
    vals = nil
    collectgarbage()
    local r, view = q:read_async(b, { wait = w })
    lib.eq(view:active(), false, "a view whose read waits on a gate")
    lib.raises(function() view:get("float", 0) end, "clgc.View:get",
        "has not completed: wait for its event first")
    gate:set_status("complete")
    clgc.wait(r)
    lib.eq(view:active(), true, "the view once read")
    lib.eq(#view, 4096, "the view's size")
    lib.eq(view:get("float", 0), 1.0, "view[0]")
    lib.eq(view:get("float", 1023), 1024.0, "view[1023]")
    local all = view:numbers("float")
    lib.eq(#all, 1024, "view:numbers")
    lib.eq(all[512], 512.0, "view:numbers()[512]")
    lib.raises(function() view:get("float", 1024) end, "index 1024 out of range")
    lib.raises(function() view:get("float", -1) end, "out of range")
    lib.raises(function() view:string(4000, 100) end, "past the end of the view")
    -- A string written without waiting, then the buffer released at once:
    -- the write keeps its memory, OpenCL the buffer.
    local w2 = q:write_async(b, string.rep("z", 16), { offset = 16 })
    local r2, v2 = q:read_async(b, { offset = 16, size = 16, wait = w2 })
    b:release()
    clgc.wait(r2)
    lib.eq(v2:string(), string.rep("z", 16), "a read after a non-blocking write")
    lib.raises(function() q:read_async(b) end, "has been released")
    local b2 = ctx:buffer(16)
    lib.raises(function() q:write_async(b2, string.rep("x", 17)) end,
        "past the end of the buffer")
    lib.raises(function() q:write_async(b2, { 1, 2, 3, 4, 5 }, "float") end,
        "past the end of the buffer")
    lib.raises(function() q:write_async(b2, { 1 }) end, "needs an element type")
    lib.raises(function() q:write_async(b2, { "x" }, "int") end,
        "number expected for int")
    lib.raises(function() q:read_async(b2, { size = 17 }) end,
        "past the end of the buffer")
    lib.raises(function() q:read_async(b2, { offset = 1 << 62 }) end,
        "past the end of the buffer")
    -- A failed read: the view says so.
    local bad = clgc.user_event(ctx)
    local r3, v3 = q:read_async(b2, { wait = bad })
    bad:set_status(-5)
    pcall(clgc.wait, r3)
    -- An error object whose code is the read's own (negative) status,
    -- whatever the driver made of the failed wait list.
    local ok, failed = pcall(v3.string, v3)
    lib.ok(not ok and type(failed) == "table" and failed.code < 0 and
        failed.func == "clgc.View:string" and
        failed.message:find("the read into the view failed", 1, true),
        "the failed read's error object: " .. tostring(failed))
    b2:release()
    -- A read left pending when the state closes: the block outlives it.
    local b3 = ctx:buffer(64)
    local gate3 = clgc.user_event(ctx)
    local r4, v4 = q:read_async(b3, { wait = gate3 })
    v4 = nil
    collectgarbage()
    gate3:set_status("complete")
    clgc.wait(r4)
    b3:release()
end

-- Maps: a view while mapped, written through and read back by the queue;
-- after the unmap every use of the view is a Lua error.
do
    local b = ctx:buffer(string.rep("\0", 64))
    local v = q:map(b, { flags = "w", offset = 16, size = 32 })
    lib.eq(#v, 32, "the mapped view's size")
    for i = 0, 7 do v:set("int", i, i * 3) end
    v:put(0, "\42\0\0\0")
    lib.raises(function() v:put(30, "abc") end, "past the end of the view")
    lib.raises(function() v:set("int", 8, 0) end, "index 8 out of range")
    clgc.wait(q:unmap(v))
    lib.eq(v:active(), false, "a view after its unmap")
    lib.raises(function() v:get("int", 0) end, "clgc.View:get",
        "the view has ended")
    lib.raises(function() v:set("int", 0, 1) end, "the view has ended")
    lib.raises(function() v:string() end, "the view has ended")
    lib.raises(function() v:numbers("int") end, "the view has ended")
    lib.raises(function() v:put(0, "x") end, "the view has ended")
    lib.raises(function() q:unmap(v) end, "has been unmapped")
    lib.eq(#v, 32, "the size of an ended view")
    local got = q:read(b, { type = "int", offset = 16, count = 8 })
    lib.eq(got[1], 42, "the first int, put through the view")
    for i = 2, 8 do lib.eq(got[i], (i - 1) * 3, ("int %d"):format(i - 1)) end
    -- A read-only map refuses writes; a map collected unmaps itself, and the
    -- buffer can be released while mapped.
    local r = q:map(b, { flags = "r" })
    lib.eq(r:get("int", 4), 42, "read through a read-only map")
    lib.raises(function() r:set("int", 0, 1) end, "the view is read-only")
    lib.raises(function() r:put(0, "x") end, "the view is read-only")
    b:release()
    lib.eq(r:get("int", 5), 3, "a mapping outlives the buffer's handle")
    local q2 = ctx:queue(dev)
    lib.raises(function() q2:unmap(r) end, "mapped on another queue")
    clgc.wait(q:unmap(r))
    q2:release()
    local b2 = ctx:buffer(16)
    local m2 = q:map(b2)
    m2 = nil
    collectgarbage() -- unmaps it
    q:finish()
    lib.raises(function() q:map(b2, { size = 17 }) end, "past the end")
    lib.raises(function() q:map(b2, { flags = "x" }) end, "option 'flags': invalid value 'x'")
    lib.raises(function() q:map(b2, { offset = 16 }) end, "nothing to map")
    -- In a coroutine the map first waits behind the queue (a marker on
    -- its wait list): a bad list is still the map's error.
    clgc.run(function()
        lib.misuse(function() q:map(b2, { wait = { io.stdout } }) end,
            "clgc.Queue:map", "a list of clgc.Event")
        lib.misuse(function() q:read_rect(b2, { wait = 5 }) end,
            "clgc.Queue:read_rect")
    end)
    lib.raises(function() q:unmap(b2) end, "clgc.View expected")
    b2:release()
    -- A view's methods with a foreign self.
    lib.raises(function() v.get(io.stdout, "int", 0) end, "clgc.View expected")
    lib.raises(function() v.size(b2) end, "clgc.View expected")
    lib.eq(getmetatable(v), false, "a view's metatable is protected")
end

-- Queue properties: out of order and profiling, with the profiling
-- times of an event.
do
    local oq = ctx:queue(dev, { out_of_order = true, profiling = true })
    local props = oq:info("properties")
    local set = {}
    for _, p in ipairs(props) do set[p] = true end
    lib.ok(set.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        "an out-of-order queue's properties: " .. table.concat(props, " "))
    lib.ok(set.CL_QUEUE_PROFILING_ENABLE, "profiling in the properties")
    local b = ctx:buffer(1024)
    local e1 = oq:fill(b, "\1", { size = 512 })
    local e2 = oq:fill(b, "\2", { offset = 512, size = 512 })
    local bar = oq:barrier({ e1, e2 })
    local e3 = oq:fill(b, "\3", { size = 1, wait = bar })
    clgc.wait(e3)
    lib.eq(oq:read(b, { size = 2 }), "\3\1", "out of order, ordered by waits")
    lib.eq(oq:read(b, { offset = 1023, size = 1 }), "\2", "the second fill")
    local t = {}
    for _, name in ipairs({ "queued", "submit", "start", "end" }) do
        t[#t + 1] = e3:profile(name)
        lib.ok(math.type(t[#t]) == "integer" and t[#t] > 0,
            "profile " .. name .. ": " .. tostring(t[#t]))
    end
    for i = 2, #t do
        lib.ok(t[i] >= t[i - 1], ("profiling times in order: %d >= %d")
            :format(t[i], t[i - 1]))
    end
    local plain = ctx:queue(dev)
    local e4 = plain:fill(b, "\0")
    clgc.wait(e4)
    lib.raises(function() e4:profile("start") end,
        "CL_PROFILING_INFO_NOT_AVAILABLE")
    lib.eq(#plain:info("properties"), 0, "a plain queue has no properties")
    b:release()
    oq:release()
    plain:release()
end

-- In a coroutine, the blocking ones yield behind the queue's commands.
clgc.run(function()
    local b = ctx:buffer(string.rep("\0", 16))
    local v = q:map(b)
    v:set("int", 1, 77)
    clgc.wait(q:unmap(v))
    lib.eq(q:read_rect(b, { origin = 4, region = 4 }), "\77\0\0\0",
        "read_rect in a coroutine")
    b:release()
end)

q:finish()
lib.done("transfers")
