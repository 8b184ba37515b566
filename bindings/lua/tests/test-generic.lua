-- Every other command through clgc's metadata and generic call: a Lua
-- program is never stuck for want of a method.
local clgc = require "clgc"
local lib = require "lib"

local CL_PLATFORM_NAME = 0x0902
local CL_MEM_SIZE = 0x1102
local CL_MEM_READ_WRITE = 1

local names = clgc.commands()
lib.ok(#names >= 235, "commands in the registry: " .. #names)
lib.eq(names[1]:sub(1, 2), "cl", "names")
local b = clgc.command("clBuildProgram")
lib.eq(b.result, "cl_int", "result type")
lib.eq(#b.params, 6, "parameters")
lib.eq(b.params[5].name, "pfn_notify", "5th parameter")
lib.eq(b.params[5].ctype, "function", "a callback")
lib.ok(b.may_block and b.callback and not b.extension, "flags")
lib.eq(clgc.command("clNoSuchThing"), nil, "unknown command")

-- A query through the generic path, into raw memory.
local dev, ctx, q = lib.pocl()
local plats = clgc.platforms()
local name = clgc.memory(256)
local size = clgc.memory(8)
lib.eq(clgc.call("clGetPlatformInfo", plats[1], CL_PLATFORM_NAME, 256, name,
    size), 0, "clGetPlatformInfo")
lib.eq(name:string(), plats[1]:info("name"), "the same name")
lib.eq(size:get("size_t", 0), #name:string() + 1, "size with its NUL")

-- An object made through the generic path, then wrapped as a handle.
local err = clgc.memory(4)
local p = clgc.call("clCreateBuffer", ctx, CL_MEM_READ_WRITE, 128, nil, err)
lib.eq(err:get("int", 0), 0, "errcode_ret")
lib.ok(type(p) == "userdata", "a pointer")
local buf = clgc.wrap("Buffer", p)
lib.eq(buf:size(), 128, "the wrapped buffer's size")
q:write(buf, { 1, 2, 3 }, "int")
local r = q:read(buf, { type = "int", count = 3 })
lib.eq(table.concat(r, ","), "1,2,3", "through the wrapped buffer")
-- A command with no method: clEnqueueFillBuffer.
local pattern = clgc.memory(4)
pattern:set("int", 0, 7)
local evm = clgc.memory(8)
lib.eq(clgc.call("clEnqueueFillBuffer", q, buf, pattern, 4, 0, 128, 0, nil,
    evm), 0, "clEnqueueFillBuffer")
-- The event came back in raw memory: a handle takes it over.
local ev = clgc.wrap("Event", evm:pointer(0))
clgc.wait(ev)
r = q:read(buf, { type = "int", count = 2 })
lib.eq(table.concat(r, ","), "7,7", "filled")
ev:release()
lib.eq(clgc.call("clRetainEvent", nil), -58, "CL_INVALID_EVENT, as a code")
-- Memory a command uses after the call (clgc_command_keep) is kept until
-- it completes: a non-blocking read into a block and a write from a
-- string, held back by a barrier on a user event while both are dropped
-- and collected; a buffer over a block (CL_MEM_USE_HOST_PTR), the block
-- dropped. Freed memory written would be valgrind's error.
local gate = clgc.user_event(ctx)
q:barrier({ gate })
lib.eq(clgc.call("clEnqueueReadBuffer", q, buf, 0, 0, 64, clgc.memory(64), 0,
    nil, nil), 0, "a non-blocking read into a block, dropped")
lib.eq(clgc.call("clEnqueueWriteBuffer", q, buf, 0, 64, 8,
    string.rep("\5", 8), 0, nil, nil), 0, "a non-blocking write of a string")
collectgarbage()
collectgarbage()
gate:set_status("complete")
q:finish()
r = q:read(buf, { type = "int", count = 18 })
lib.eq(r[17], 0x05050505, "the string's bytes written")
local over = clgc.memory(16)
over:set("int", 3, 42)
local p2 = clgc.call("clCreateBuffer", ctx, 9 --[[READ_WRITE | USE_HOST_PTR]],
    16, over, nil)
over = nil
collectgarbage()
collectgarbage()
local buf2 = clgc.wrap("Buffer", p2)
r = q:read(buf2, { type = "int", count = 4 })
lib.eq(r[4], 42, "a buffer over a collected block")
buf2:release()
buf:release()
lib.ok(dev:info("available"), "device available")
lib.done("generic")
