-- Info queries by name on PoCL: every name of every family the binding
-- answers, each value of the Lua type its registry type gives; spot
-- values; handles that info returns hold references of their own; unknown
-- names and error codes.
local clgc = require "clgc"
local lib = require "lib"

local dev, ctx, q = lib.pocl({ profiling = true })
local prog = ctx:program(lib.saxpy_src):build("-cl-std=CL1.2")
local k = prog:kernel("saxpy")
local buf = ctx:buffer(64, "r")
local ev = q:launch(k:args({ "float", 2 }, buf, ctx:buffer(64)), 16)
clgc.wait(ev)
local plat = dev:info("CL_DEVICE_PLATFORM")

local function is_int(v) return math.type(v) == "integer" end
local function all(t, pred)
    for _, v in ipairs(t) do
        if not pred(v) then return false end
    end
    return true
end
local function is_handle(v) return type(v) == "userdata" end

-- What each registry type looks like in Lua.
local shape = {
    string = function(v) return type(v) == "string" end,
    bytes = function(v) return type(v) == "string" end,
    bool = function(v) return type(v) == "boolean" end,
    int = is_int, uint = is_int, ulong = is_int, size = is_int,
    float = function(v) return math.type(v) == "float" end,
    pointer = function(v) return v == nil or type(v) == "userdata" end,
    uint_array = function(v) return all(v, is_int) end,
    ulong_array = function(v) return all(v, is_int) end,
    size_array = function(v) return all(v, is_int) end,
    properties = function(v) return all(v, is_int) end,
    properties_intptr = function(v) return all(v, is_int) end,
    string_array = function(v) return all(v, function(s)
        return type(s) == "string" end) end,
    bitfield = function(v) return all(v, function(f)
        return type(f) == "string" and f:match("^CL_") or is_int(f) end) end,
    enum = function(v) return type(v) == "string" and v:match("^CL_")
        or is_int(v) end,
    enum_array = function(v) return all(v, function(e)
        return type(e) == "string" or is_int(e) end) end,
    handle = function(v) return v == nil or is_handle(v) end,
    handle_array = function(v) return all(v, is_handle) end,
    name_version_array = function(v) return all(v, function(nv)
        return type(nv.name) == "string" and is_int(nv.version)
            and nv.major == nv.version >> 22 end) end,
    binaries = function(v) return all(v, function(b)
        return type(b) == "string" and #b > 0 end) end,
}

-- Queries that the specification refuses with another code than
-- CL_INVALID_VALUE in some cases: CL_QUEUE_SIZE of a host queue.
local refusals = { CL_QUEUE_SIZE = "CL_INVALID_COMMAND_QUEUE" }

-- Every name of a family through call(name): a value of its type, or
-- CL_INVALID_VALUE for a query the device does not support.
local function every(family, call)
    local names, types = clgc.info_names(family)
    local answered, refused = 0, 0
    lib.ok(#names > 0, family .. " has names")
    for _, name in ipairs(names) do
        local ok, v = pcall(call, name)
        if ok then
            local check = shape[types[name]]
            lib.ok(check, family .. ": no shape for type " .. types[name])
            if type(v) == "table" or check(v) then
                lib.ok(type(v) ~= "table" or check(v),
                    ("%s: %s (%s) has elements of the wrong type"):format(
                        family, name, types[name]))
            else
                error(("%s: %s (%s) gave a %s"):format(family, name,
                    types[name], type(v)))
            end
            answered = answered + 1
        else
            lib.ok(tostring(v):find(refusals[name] or "CL_INVALID_VALUE", 1,
                    true),
                ("%s: %s failed otherwise: %s"):format(family, name, v))
            refused = refused + 1
        end
    end
    print(("%s: %d answered, %d refused with CL_INVALID_VALUE"):format(
        family, answered, refused))
    return answered
end

local arg_names = {}
local families = {
    { "cl_platform_info", function(n) return plat:info(n) end, 8 },
    { "cl_device_info", function(n) return dev:info(n) end, 90 },
    { "cl_context_info", function(n) return ctx:info(n) end, 4 },
    { "cl_command_queue_info", function(n) return q:info(n) end, 6 },
    { "cl_mem_info", function(n) return buf:info(n) end, 10 },
    { "cl_program_info", function(n) return prog:info(n) end, 9 },
    { "cl_program_build_info",
        function(n) return prog:build_info(dev, n) end, 5 },
    { "cl_kernel_info", function(n) return k:info(n) end, 6 },
    { "cl_kernel_work_group_info",
        function(n) return k:work_group_info(dev, n) end, 5 },
    { "cl_kernel_arg_info", function(n)
        local v = k:arg_info(1, n)
        arg_names[n] = v
        return v
    end, 5 },
    { "cl_event_info", function(n) return ev:info(n) end, 5 },
}
for _, f in ipairs(families) do
    local answered = every(f[1], f[2])
    lib.ok(answered >= f[3], ("%s: %d answered, at least %d expected"):format(
        f[1], answered, f[3]))
end

-- Spot values.
lib.eq(plat:info("CL_PLATFORM_NAME"), "Portable Computing Language",
    "platform name")
local cpu = false
for _, flag in ipairs(dev:info("CL_DEVICE_TYPE")) do
    cpu = cpu or flag == "CL_DEVICE_TYPE_CPU"
end
lib.ok(cpu, "CL_DEVICE_TYPE includes CL_DEVICE_TYPE_CPU")
lib.eq(dev:info("name"), dev:info("CL_DEVICE_NAME"), "a short name")
lib.eq(dev:info("driver-version"), dev:info("CL_DRIVER_VERSION"),
    "a short name without the family's prefix")
lib.ok(dev:info("CL_DEVICE_MAX_COMPUTE_UNITS") >= 1, "compute units")
lib.eq(#dev:info("CL_DEVICE_MAX_WORK_ITEM_SIZES"),
    dev:info("CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS"), "work-item sizes")
lib.eq(ctx:info("CL_CONTEXT_DEVICES")[1]:info("CL_DEVICE_NAME"),
    dev:info("CL_DEVICE_NAME"), "a context's device")
lib.eq(q:info("CL_QUEUE_PROPERTIES")[1], "CL_QUEUE_PROFILING_ENABLE",
    "queue properties")
lib.eq(buf:info("CL_MEM_SIZE"), 64, "buffer size")
lib.eq(buf:info("CL_MEM_TYPE"), "CL_MEM_OBJECT_BUFFER", "mem type")
lib.eq(buf:info("CL_MEM_FLAGS")[1], "CL_MEM_READ_ONLY", "mem flags")
lib.eq(prog:build_info(dev, "CL_PROGRAM_BUILD_STATUS"), "CL_BUILD_SUCCESS",
    "build status")
lib.eq(#prog:info("CL_PROGRAM_BINARIES"), 1, "one binary per device")
lib.eq(k:info("CL_KERNEL_FUNCTION_NAME"), "saxpy", "kernel name")
lib.eq(k:info("CL_KERNEL_NUM_ARGS"), 3, "kernel arguments")
lib.eq(arg_names.CL_KERNEL_ARG_NAME, "x", "argument 1's name")
lib.eq(arg_names.CL_KERNEL_ARG_ADDRESS_QUALIFIER,
    "CL_KERNEL_ARG_ADDRESS_GLOBAL", "argument 1's address space")
lib.eq(arg_names.CL_KERNEL_ARG_TYPE_QUALIFIER[1], "CL_KERNEL_ARG_TYPE_CONST",
    "argument 1's qualifier")
lib.eq(ev:info("CL_EVENT_COMMAND_EXECUTION_STATUS"), "CL_COMPLETE",
    "event status")
lib.eq(ev:info("CL_EVENT_COMMAND_TYPE"), "CL_COMMAND_NDRANGE_KERNEL",
    "event command")

-- A handle info returns holds a reference of its own: releasing it leaves
-- the object the binding already had.
local refs = q:info("CL_QUEUE_REFERENCE_COUNT")
local q2 = ev:info("CL_EVENT_COMMAND_QUEUE")
lib.ok(tostring(q2):find("clgc.Queue", 1, true), "the event's queue")
lib.eq(q:info("CL_QUEUE_REFERENCE_COUNT"), refs + 1, "retained once")
q2:release()
lib.eq(q:info("CL_QUEUE_REFERENCE_COUNT"), refs, "released once")
q:finish()

-- Unknown names, other families' names, wrong objects and indices.
lib.raises(function() dev:info("colour") end,
    "clgc.Device:info: unknown info name 'colour'")
lib.raises(function() dev:info("CL_PLATFORM_NAME") end,
    "unknown info name 'CL_PLATFORM_NAME' (not a cl_device_info)")
lib.raises(function() dev.info(ctx, "name") end,
    "clgc.Device:info")
lib.raises(function() k:arg_info(-1, "CL_KERNEL_ARG_NAME") end,
    "clgc.Kernel:arg_info", "out of range")
lib.raises(function() k:arg_info(1 << 40, "CL_KERNEL_ARG_NAME") end,
    "clgc.Kernel:arg_info", "out of range")
lib.raises(function() k:arg_info(7, "CL_KERNEL_ARG_NAME") end,
    "clgc.Kernel:arg_info", "CL_INVALID_ARG_INDEX")
lib.raises(function() prog:build_info(ctx, "CL_PROGRAM_BUILD_LOG") end,
    "clgc.Program:build_info")
lib.raises(function() clgc.info_names("cl_colour_info") end,
    "clgc.info_names: unknown info family 'cl_colour_info'")

-- Error names come from the registry's table of every code.
lib.eq(clgc.error_name(0), "CL_SUCCESS", "error_name(0)")
lib.eq(clgc.error_name(-30), "CL_INVALID_VALUE", "error_name(-30)")
lib.eq(clgc.error_name(-1142), "CL_INVALID_SEMAPHORE_KHR",
    "an extension's code")
lib.eq(clgc.error_name(-1107), "CL_PIPE_EMPTY_INTEL",
    "error_name(-1107), listed only by the registry's error-code blocks")
lib.eq(clgc.error_name(1 << 40), "CL_UNKNOWN_ERROR", "error_name(1 << 40)")
lib.eq(clgc.error_name(12345), "CL_UNKNOWN_ERROR", "an unknown code")

for _, h in ipairs({ ev, k, prog, buf, q, ctx }) do
    h:release()
end
lib.done("test-info")
