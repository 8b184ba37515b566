-- Images (1D, 2D, 3D and arrays) with formats by name, their transfers
-- and info, and samplers passed to a kernel, on PoCL. valgrind runs this
-- script too.
local clgc = require "clgc"
local lib = require "lib"

local dev, ctx, q = lib.pocl()
lib.eq(dev:info("image_support"), true, "PoCL's device supports images")

-- Supported formats, by the registry's names.
local formats = ctx:image_formats("2d")
local has = {}
for _, f in ipairs(formats) do has[f.order .. "/" .. f.type] = true end
lib.ok(has["CL_RGBA/CL_FLOAT"], "RGBA float is a supported 2D format")
lib.ok(has["CL_RGBA/CL_UNORM_INT8"], "RGBA unorm8 is a supported 2D format")
lib.ok(#ctx:image_formats("3d", "r") > 0, "3D read-only formats")
lib.raises(function() ctx:image_formats("4d") end, "invalid option '4d'")

local function pack_floats(t)
    return string.pack(("<" .. ("f"):rep(#t)), table.unpack(t))
end
local function unpack_floats(s)
    local t = { string.unpack(("<" .. ("f"):rep(#s // 4)), s) }
    t[#t] = nil -- the next position
    return t
end

-- A 2D image: written, read back whole and in part, info, filled, copied.
do
    local img = ctx:image{ type = "2d", format = { "rgba", "float" },
        width = 4, height = 3 }
    lib.eq(img:info("width"), 4, "CL_IMAGE_WIDTH")
    lib.eq(img:info("height"), 3, "CL_IMAGE_HEIGHT")
    lib.eq(img:info("element_size"), 16, "CL_IMAGE_ELEMENT_SIZE")
    local f = img:info("format")
    lib.eq(f.order, "CL_RGBA", "CL_IMAGE_FORMAT's order")
    lib.eq(f.type, "CL_FLOAT", "CL_IMAGE_FORMAT's type")
    lib.eq(img:mem_info("type"), "CL_MEM_OBJECT_IMAGE2D", "CL_MEM_TYPE")
    lib.eq(img:mem_info("size") >= 4 * 3 * 16, true, "CL_MEM_SIZE")
    local px = {}
    for i = 1, 4 * 3 * 4 do px[i] = i end
    q:write_image(img, pack_floats(px))
    local back = unpack_floats(q:read_image(img))
    lib.eq(#back, 48, "read_image: 48 floats")
    for i = 1, 48 do lib.eq(back[i], i, ("pixel float %d"):format(i)) end
    -- The pixel at (1, 2): row 2, column 1.
    local one = unpack_floats(q:read_image(img, { origin = { 1, 2 },
        region = { 1, 1 } }))
    lib.eq(one[1], (2 * 4 + 1) * 4 + 1, "the pixel at (1, 2)")
    clgc.wait(q:fill_image(img, { 0.5, 0.25, 0, 1 }, { origin = { 2, 0 },
        region = { 2, 3 } }))
    local filled = unpack_floats(q:read_image(img, { origin = { 3, 2 },
        region = { 1, 1 } }))
    lib.eq(filled[1], 0.5, "a filled pixel's red")
    lib.eq(filled[2], 0.25, "a filled pixel's green")
    lib.eq(filled[4], 1.0, "a filled pixel's alpha")
    local copy = ctx:image{ format = { order = "CL_RGBA", type = "CL_FLOAT" },
        width = 2, height = 2 }
    clgc.wait(q:copy_image(img, copy, { src_origin = { 2, 1 },
        region = { 2, 2 } }))
    local c = unpack_floats(q:read_image(copy))
    lib.eq(c[1], 0.5, "copy_image: a filled pixel")
    -- Regions outside the image are refused before OpenCL sees them.
    lib.raises(function() q:read_image(img, { origin = { 4, 0 } }) end,
        "clgc.Queue:read_image", "outside the image")
    lib.fails(function() q:read_image(img, { origin = { 4, 0 } }) end,
        "CL_INVALID_VALUE", "clgc.Queue:read_image")
    lib.misuse(function() q:read_image(img, { origin = "x" }) end,
        "clgc.Queue:read_image")
    lib.raises(function() q:read_image(img, { region = { 5, 1 } }) end,
        "reaches past the image")
    lib.raises(function() q:read_image(img, { origin = { 3, 0 },
        region = { 2, 1 } }) end, "reaches past the image")
    lib.raises(function() q:read_image(img, { region = { 0, 1 } }) end,
        "reaches past the image")
    lib.raises(function() q:read_image(img, { region = { 1 << 62, 1 } }) end,
        "reaches past the image")
    lib.raises(function() q:write_image(img, "short") end,
        "argument #3: 5 bytes for a region of 192")
    lib.raises(function() q:copy_image(img, copy) end,
        "reaches past the destination")
    lib.raises(function() q:fill_image(img, { 1, 2 }) end,
        "number expected for float")
    lib.raises(function() q:read_image(ctx:buffer(16)) end,
        "argument #2: clgc.Image expected, got clgc.Buffer")
    lib.raises(function() q:read(img) end,
        "argument #2: clgc.Buffer expected, got clgc.Image")
    copy:release()
    img:release()
    lib.raises(function() img:info("width") end, "has been released")
end

-- A 1D array, a 2D array and a 3D image of integers.
do
    local a1 = ctx:image{ type = "1d_array", format = { "r", "unsigned_int8" },
        width = 8, array_size = 2 }
    q:write_image(a1, string.rep("\1", 8) .. string.rep("\2", 8))
    lib.eq(q:read_image(a1, { origin = { 0, 1 } }), string.rep("\2", 8),
        "the second layer of a 1D array")
    lib.eq(a1:info("array_size"), 2, "CL_IMAGE_ARRAY_SIZE")
    local a2 = ctx:image{ type = "2d_array", format = { "r", "signed_int32" },
        width = 2, height = 2, array_size = 3 }
    clgc.wait(q:fill_image(a2, { -7, 0, 0, 0 }))
    clgc.wait(q:fill_image(a2, { 9, 0, 0, 0 }, { origin = { 0, 0, 2 },
        region = { 2, 2, 1 } }))
    local layers = { string.unpack("<" .. ("i4"):rep(12), q:read_image(a2)) }
    lib.eq(layers[1], -7, "a 2D array's first layer, filled with ints")
    lib.eq(layers[9], 9, "its third layer")
    local v = ctx:image{ type = "3d", format = { "rgba", "unsigned_int16" },
        width = 2, height = 2, depth = 2 }
    lib.eq(v:info("depth"), 2, "CL_IMAGE_DEPTH")
    local vals = {}
    for i = 1, 32 do vals[i] = i end
    q:write_image(v, string.pack("<" .. ("I2"):rep(32), table.unpack(vals)))
    lib.eq(q:read_image(v, { origin = { 1, 1, 1 } }),
        string.pack("<I2I2I2I2", 29, 30, 31, 32),
        "the last voxel of a 3D image")
    lib.raises(function() q:read_image(v, { origin = { 0, 0, 2 } }) end,
        "outside the image")
    a1:release()
    a2:release()
    v:release()
end

-- Bad descriptions are errors.
lib.raises(function() ctx:image{ format = { "rgba", "float" }, width = 4 } end,
    "option 'height': a positive integer is required")
lib.raises(function() ctx:image{ format = { "rgba", "colour" }, width = 4,
    height = 4 } end, "unknown name 'colour' (not a cl_channel_type)")
lib.raises(function() ctx:image{ format = "rgba", width = 4, height = 4 } end,
    "format: a table {order, type} expected")
lib.raises(function() ctx:image{ type = "1d", format = { "r", "float" },
    width = 4, height = 2 } end, "CL_INVALID_IMAGE_DESCRIPTOR")
lib.raises(function() ctx:image{ format = { "rgba", "float" },
    width = 1 << 40, height = 1 } end, "CL_INVALID_IMAGE_SIZE")
lib.raises(function() ctx:image{ format = { "rgba", "float" },
    width = 0 / 0, height = 1 } end, "non-negative integer expected")
lib.raises(function() ctx:image{ format = { "rgba", "float" },
    width = 4, height = 4, access = "x" } end,
    "option 'access': invalid value 'x'")

-- Samplers: info, and one passed to a kernel with two images.
local s = ctx:sampler{ normalized = false, addressing = "clamp_to_edge",
    filter = "nearest" }
lib.eq(s:info("normalized_coords"), false, "CL_SAMPLER_NORMALIZED_COORDS")
lib.eq(s:info("addressing_mode"), "CL_ADDRESS_CLAMP_TO_EDGE",
    "CL_SAMPLER_ADDRESSING_MODE")
lib.eq(s:info("filter_mode"), "CL_FILTER_NEAREST", "CL_SAMPLER_FILTER_MODE")
local s2 = ctx:sampler()
lib.eq(s2:info("addressing_mode"), "CL_ADDRESS_CLAMP_TO_EDGE",
    "a default sampler")
s2:release()
lib.raises(function() ctx:sampler{ filter = "cubic" } end,
    "unknown name 'cubic' (not a cl_filter_mode)")
lib.raises(function() ctx:sampler{ normalized = 1 } end,
    "option 'normalized': a boolean expected")

local prog = ctx:program([[
__kernel void invert(__read_only image2d_t src, __write_only image2d_t dst,
                     sampler_t s)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imagef(dst, p, (float4)(1.0f) - read_imagef(src, s, p));
}
]]):build()
local k = prog:kernel("invert")
local src = ctx:image{ format = { "rgba", "float" }, width = 4, height = 4,
    access = "r" }
local dst = ctx:image{ format = { "rgba", "float" }, width = 4, height = 4,
    access = "w" }
local px = {}
for i = 1, 64 do px[i] = (i % 4) / 4 end
q:write_image(src, pack_floats(px))
k:args(src, dst, s)
-- Released by hand while set: the kernel keeps its own references.
s:release()
src:release()
clgc.wait(q:launch(k, { 4, 4 }))
local out = unpack_floats(q:read_image(dst))
for i = 1, 64 do
    lib.eq(out[i], 1 - (i % 4) / 4, ("inverted float %d"):format(i))
end
lib.raises(function() k:arg(0, ctx:buffer(16)) end,
    "argument 0 (src) of kernel invert is an image, not a buffer")
lib.raises(function() k:arg(2, dst) end,
    "is a sampler, not an image")
lib.raises(function() k:arg(2, 5, "int") end,
    "is a sampler, not a value")
lib.raises(function() k:arg(0, s) end, "is an image, not a sampler")
dst:release()
k:release()
prog:release()

-- In a coroutine the blocking image transfers yield behind the queue.
clgc.run(function()
    local img = ctx:image{ format = { "r", "unsigned_int8" }, width = 4,
        height = 1 }
    q:write_image(img, "abcd")
    lib.eq(q:read_image(img), "abcd", "an image's bytes in a coroutine")
    img:release()
end)

q:finish()
lib.done("images")
