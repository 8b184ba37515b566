"""Generate the forwarding tests: a stub ICD and the table of test cases.

tests/gen/stub_icd.c holds one recording function per registry command, the
stub's dispatch table and the table its extension lookup answers from;
tests/stub/stub.c is the hand-written rest of the ICD. tests/gen/forward.c
holds one case per command: a function that calls clgc_<name> with arguments
made from an array of 64-bit patterns, and what tests/check_forward.c needs
to know to build those arguments and judge the outcome.

Everything that is special about a command is in the tables below, with the
reason; the templates never test a command's name.
"""

import tables

# Commands the stub never sees, found with the real loader (ocl-icd 2.3.1)
# and PoCL 3.1. The test checks that the wrapper returns what the raw call
# returns, with the same output, inside one safe region, and that the stub
# saw nothing.
ANSWERED_ELSEWHERE = {
    "clGetPlatformIDs": "ocl-icd lists the platforms it loaded at start-up",
    "clUnloadCompiler": "ocl-icd returns CL_SUCCESS without calling any "
                        "platform",
    "clIcdGetPlatformIDsKHR": "no argument names a platform, so clgc takes "
                              "the first platform that has the function: "
                              "PoCL, which ocl-icd lists first (it sorts "
                              "platforms by device count)",
}

# Wrappers that do not forward: clgc hands out its own wrappers instead of
# the raw functions (tables.HANDWRITTEN). check_forward.c tests them by name.
CLGC_ANSWERS = tables.HANDWRITTEN

# Extension commands whose lookup ocl-icd answers with its own dispatching
# function (a KHR or EXT name in its table of loader functions) without
# asking the platform. A platform cannot refuse them: the call goes through
# the object's dispatch table whatever the platform says. Measured with the
# stub's refusing platform (check_forward.c, "refused" test).
LOADER_EXTENSIONS = {
    "clCreateEventFromEGLSyncKHR": "cl_khr_egl_event in ocl-icd's table",
    "clCreateEventFromGLsyncKHR": "cl_khr_gl_event in ocl-icd's table",
    "clCreateFromEGLImageKHR": "cl_khr_egl_image in ocl-icd's table",
    "clCreateSubDevicesEXT": "cl_ext_device_fission in ocl-icd's table",
    "clEnqueueAcquireEGLObjectsKHR": "cl_khr_egl_image in ocl-icd's table",
    "clEnqueueReleaseEGLObjectsKHR": "cl_khr_egl_image in ocl-icd's table",
    "clGetGLContextInfoKHR": "cl_khr_gl_sharing in ocl-icd's table",
    "clGetKernelSubGroupInfoKHR": "cl_khr_subgroups in ocl-icd's table",
    "clReleaseDeviceEXT": "cl_ext_device_fission in ocl-icd's table",
    "clRetainDeviceEXT": "cl_ext_device_fission in ocl-icd's table",
}

# Commands whose stub function first offers the call to a hand-written hook
# in tests/stub/stub.c (stub_hook_<name>, declared in tests/stub/stub.h).
# A call the hook answers is ICD plumbing and is counted, not recorded.
STUB_HOOKS = {
    "clGetPlatformInfo": "answers the loader's and clgc's queries (name, "
                         "suffix, extensions) and hands out the test's "
                         "control block",
    "clIcdGetPlatformIDsKHR": "lists the stub's platforms for the loader",
    "clGetExtensionFunctionAddress": "the loader's lookup of the stub's "
                                     "entry points",
    "clGetExtensionFunctionAddressForPlatform": "the per-platform lookup: "
                                                "the refusing platform has "
                                                "no extension function",
}

# Commands whose stub function returns a real object of the stub instead of
# a fake address, because clgc calls OpenCL on what they return.
STUB_RESULT_OBJECTS = {
    "clCreateContext": "clgc registers a destructor callback on the context "
                       "of an error callback (tests/stub/stub.c: "
                       "stub_made_context)",
    "clCreateContextFromType": "as clCreateContext",
}

# A stub function given a callback calls it once, inline, before it
# returns (check_callback.c). Each argument of the callback is the command's
# parameter of the same name, or else this value.
STUB_CALLBACK_VALUES = {
    "errinfo": '"clgc stub: a context error"',
    "private_info": "NULL",
    "cb": "0",
    "event_command_status": "CL_COMPLETE",
    "queue": "command_queue",
    "program": "(cl_program)(uintptr_t)stub_result_bits(%(index)d)",
    "arg0": "args",
}

# Extension commands that have a member in the ICD dispatch table (every
# core command has one). The loader calls them through it.
DISPATCH_EXTENSIONS = {
    "cl_khr_gl_sharing": [
        "clCreateFromGLBuffer", "clCreateFromGLTexture2D",
        "clCreateFromGLTexture3D", "clCreateFromGLRenderbuffer",
        "clGetGLObjectInfo", "clGetGLTextureInfo",
        "clEnqueueAcquireGLObjects", "clEnqueueReleaseGLObjects",
        "clGetGLContextInfoKHR", "clCreateFromGLTexture"],
    "cl_khr_gl_event": ["clCreateEventFromGLsyncKHR"],
    "cl_ext_device_fission": [
        "clCreateSubDevicesEXT", "clRetainDeviceEXT", "clReleaseDeviceEXT"],
    "cl_khr_egl_image": [
        "clCreateFromEGLImageKHR", "clEnqueueAcquireEGLObjectsKHR",
        "clEnqueueReleaseEGLObjectsKHR"],
    "cl_khr_egl_event": ["clCreateEventFromEGLSyncKHR"],
    "cl_khr_subgroups": ["clGetKernelSubGroupInfoKHR"],
    # On Linux these members are `void *` placeholders; they are filled all
    # the same, so a loader that calls through them reaches the stub.
    "cl_khr_d3d10_sharing": [
        "clGetDeviceIDsFromD3D10KHR", "clCreateFromD3D10BufferKHR",
        "clCreateFromD3D10Texture2DKHR", "clCreateFromD3D10Texture3DKHR",
        "clEnqueueAcquireD3D10ObjectsKHR", "clEnqueueReleaseD3D10ObjectsKHR"],
    "cl_khr_d3d11_sharing": [
        "clGetDeviceIDsFromD3D11KHR", "clCreateFromD3D11BufferKHR",
        "clCreateFromD3D11Texture2DKHR", "clCreateFromD3D11Texture3DKHR",
        "clEnqueueAcquireD3D11ObjectsKHR", "clEnqueueReleaseD3D11ObjectsKHR"],
    "cl_khr_dx9_media_sharing": [
        "clCreateFromDX9MediaSurfaceKHR",
        "clGetDeviceIDsFromDX9MediaAdapterKHR",
        "clEnqueueAcquireDX9MediaSurfacesKHR",
        "clEnqueueReleaseDX9MediaSurfacesKHR"],
}

# The stub keeps at most this many arguments per call (tests/stub/stub.h).
STUB_MAX_ARGS = 16

# How check_forward.c builds each kind of argument (see forward.h).
_SCALAR_KIND = {"UINT32": "SCALAR32", "INT32": "SCALAR32",
                "UINT64": "SCALAR64", "SIZE": "SIZE"}

# How a value of each C type becomes its 64-bit pattern, and back.
_TO_BITS = {"UINT32": "STUB_U32", "INT32": "STUB_U32", "UINT64": "STUB_U64",
            "SIZE": "STUB_U64", "POINTER": "STUB_PTR",
            "FUNCTION": "STUB_PTR"}

_HEADERS = ["#ifndef CL_TARGET_OPENCL_VERSION",
            "#define CL_TARGET_OPENCL_VERSION 300", "#endif"]
_HEADERS += ["#ifndef CL_USE_DEPRECATED_OPENCL_%s_APIS" % v +
             "\n#define CL_USE_DEPRECATED_OPENCL_%s_APIS\n#endif" % v
             for v in ("1_0", "1_1", "1_2", "2_0", "2_1", "2_2")]


def _objects():
    return dict(tables.ICD_OBJECTS, **tables.EXTENSION_OBJECTS)


def _kind(p):
    """How the test builds the argument for parameter p."""
    if p.ctype == "FUNCTION":
        return "FUNCTION"
    if p.ctype in _SCALAR_KIND:
        return _SCALAR_KIND[p.ctype]
    assert p.ctype == "POINTER", (p.name, p.ctype)
    pointer = "*" in p.type
    if not pointer and p.base == "cl_platform_id":
        return "PLATFORM"
    if not pointer and p.base in _objects():
        return "OBJECT"
    # The loader or clgc may read element 0 of an input array of objects
    # (the devices of clCreateContext, the queues of a command buffer).
    if p.type.startswith("const ") and p.type.count("*") == 1 \
            and p.base in _objects():
        return "OBJECTS"
    # The loader and clgc look for CL_CONTEXT_PLATFORM in these.
    if p.base == "cl_context_properties":
        return "CONTEXT_PROPERTIES"
    return "POINTER"


def _result_kind(c):
    return {"VOID": "VOID", "INT32": "INT32", "POINTER": "POINTER"}[
        c.result_ctype]


def _sep(t):
    return "" if t.endswith("*") else " "


def _dispatch_members(reg):
    ext = {n for names in DISPATCH_EXTENSIONS.values() for n in names}
    return [c for c in reg.sorted if not c.resolved or c.name in ext]


def _check_tables(reg):
    """Every name in the tables must be a registry command."""
    ext = [n for names in DISPATCH_EXTENSIONS.values() for n in names]
    for name in (list(ANSWERED_ELSEWHERE) + list(LOADER_EXTENSIONS) +
                 list(STUB_HOOKS) + list(CLGC_ANSWERS) + ext +
                 list(STUB_RESULT_OBJECTS)):
        assert name in reg.commands, name
    assert max(len(c.params) for c in reg.sorted) <= STUB_MAX_ARGS


# ---------------------------------------------------------------- stub_icd.c

def _stub_function(c, index):
    params = ", ".join(p.decl for p in c.params) or "void"
    out = ["/* %s */" % c.name,
           "static %s%sCL_API_CALL" % (c.result, _sep(c.result)),
           "stub_%s(%s)" % (c.name, params), "{"]
    if c.params:
        bits = ", ".join("%s(%s)" % (_TO_BITS[p.ctype], p.name)
                         for p in c.params)
        out.append("    const uint64_t stub_args[] = {%s};" % bits)
    if c.name in STUB_HOOKS:
        out += ["    %s%sstub_ret;" % (c.result, _sep(c.result)), "",
                "    if (stub_hook_%s(%s))" % (c.name, ", ".join(
                    [p.name for p in c.params] + ["&stub_ret"])),
                "        return stub_ret;"]
    else:
        out.append("")
    out.append("    stub_record(%d, %d, %s);" % (
        index, len(c.params), "stub_args" if c.params else "NULL"))
    cb = c.callback_param()
    if cb is not None:
        names = {p.name for p in c.params}
        values = [n if n in names else
                  STUB_CALLBACK_VALUES[n] % {"index": index}
                  for _, n in cb.cb_params]
        out += ["    if (%s != NULL)" % cb.name,
                "        %s(%s);" % (cb.name, ", ".join(values))]
    if c.name in STUB_RESULT_OBJECTS:
        out.append("    return (%s)stub_made_context();" % c.result)
    elif c.result_ctype == "INT32":
        out.append("    return (%s)stub_result_bits(%d);" % (c.result, index))
    elif c.result_ctype == "POINTER":
        out.append("    return (%s)(uintptr_t)stub_result_bits(%d);" % (
            c.result, index))
    out += ["}", ""]
    return out


def stub_icd_c(reg):
    out = ["/* The recording half of the stub ICD: one function per command"
           " of the", " * registry, each logging its arguments (see"
           " tests/stub/stub.c for the rest). */", ""]
    out += _HEADERS + [""]
    out += ["#include <stddef.h>", "#include <stdint.h>", ""]
    out += ["#include <%s>" % h for h in tables.CL_HEADERS]
    out += ["#include <CL/cl_icd.h>", "", '#include "../stub/stub.h"', ""]
    for cond, text in reg.fallback_types():
        out += ["#if !(%s)" % cond, text, "#endif"]
    out += ["", "/* Stand-ins for types from platform headers Linux lacks. */"]
    out += list(reg.foreign_types().values()) + [""]
    for i, c in enumerate(reg.sorted):
        out += _stub_function(c, i)
    out += ["/* The dispatch table that every stub object starts with. */",
            "const struct _cl_icd_dispatch stub_dispatch = {"]
    for c in _dispatch_members(reg):
        cast = "(void *)" if reg.guard(c) else ""
        out.append("    .%s = %sstub_%s," % (c.name, cast, c.name))
    out += ["};", "",
            "/* What the stub's extension lookup hands out, by name. */",
            "const struct stub_entry stub_extensions[] = {"]
    for c in reg.resolved:
        out.append('    {"%s", (stub_fn_t)stub_%s},' % (c.name, c.name))
    out += ["};", "const unsigned stub_n_extensions = %d;" % len(
        reg.resolved), ""]
    return "\n".join(out)


# ---------------------------------------------------------------- forward.c

def forward_h(reg):
    n = len(reg.sorted)
    out = ["#ifndef CLGC_TEST_FORWARD_H", "#define CLGC_TEST_FORWARD_H", "",
           "/* One forwarding case per registry command, for"
           " check_forward.c. */", "",
           "#include <stdint.h>", "", '#include "clgc.h"', "",
           "#define TEST_FORWARD_N %d" % n,
           "#define TEST_MAX_PARAMS %d" % max(len(c.params)
                                              for c in reg.sorted), "",
           "/* Who answers the call. */",
           "enum test_forward_route {",
           "    TEST_ROUTE_STUB,   /* forwarded to the platform of its"
           " objects */",
           "    TEST_ROUTE_ELSEWHERE, /* answered by the loader or another"
           " platform */",
           "    TEST_ROUTE_CLGC    /* answered by clgc (a hand-written"
           " wrapper) */", "};", "",
           "/* How the test builds an argument. */",
           "enum test_forward_arg {",
           "    TEST_ARG_SCALAR32,  /* a 32-bit integer */",
           "    TEST_ARG_SCALAR64,  /* a 64-bit integer */",
           "    TEST_ARG_SIZE,      /* a size_t */",
           "    TEST_ARG_PLATFORM,  /* the platform under test */",
           "    TEST_ARG_OBJECT,    /* one of the platform's objects */",
           "    TEST_ARG_OBJECTS,   /* an array of the platform's objects */",
           "    TEST_ARG_CONTEXT_PROPERTIES, /* {CL_CONTEXT_PLATFORM,"
           " platform, 0} */",
           "    TEST_ARG_POINTER,   /* a zeroed scratch buffer */",
           "    TEST_ARG_FUNCTION   /* a callback: NULL here */", "};", "",
           "enum test_forward_result { TEST_RESULT_VOID, TEST_RESULT_INT32,"
           " TEST_RESULT_POINTER };", "",
           "struct test_forward_case {",
           "    const char *name;",
           "    unsigned index;            /* in clgc_command_at() order */",
           "    enum test_forward_route route;",
           "    const char *why;           /* why the route is not"
           " TEST_ROUTE_STUB */",
           "    unsigned char extension;   /* resolved per platform by clgc"
           " */",
           "    unsigned char loader_fn;   /* ocl-icd hands out its own"
           " function */",
           "    unsigned char has_vendor;  /* clgc finds a platform from the"
           " arguments */",
           "    enum test_forward_result result;",
           "    unsigned char result_object; /* the stub returns"
           " stub_control.made_context */",
           "    unsigned nparams;",
           "    unsigned char kinds[TEST_MAX_PARAMS]; /* enum"
           " test_forward_arg */",
           "    const char *const *names;",
           "    int vendor;     /* the object parameter clgc checks, or -1 */",
           "    int errcode;    /* the errcode_ret parameter, or -1 */",
           "    cl_int null_error; /* the error for a NULL vendor object */",
           "    /* The parameter counting the array that the wrapper reads"
           " again once", "     * the command returns (gen/tables.py,"
           " AFTER), or -1: the platform may", "     * then receive more"
           " calls after the command's. */",
           "    int after_count;",
           "    /* Call clgc_<name> (or the raw function) with arguments made"
           " from the", "     * patterns; return the result's pattern"
           " (0 for void). */",
           "    uint64_t (*call)(const uint64_t *bits);",
           "    /* TEST_ROUTE_ELSEWHERE only: the same call without clgc. */",
           "    uint64_t (*raw)(const uint64_t *bits);",
           "};", "",
           "extern const struct test_forward_case"
           " test_forward_cases[TEST_FORWARD_N];", "",
           "#endif /* CLGC_TEST_FORWARD_H */"]
    return "\n".join(out) + "\n"


def _arg(p, i):
    if p.ctype in ("POINTER", "FUNCTION"):
        return "(%s)(uintptr_t)b[%d]" % (p.type, i)
    return "(%s)b[%d]" % (p.type, i)


def _call_function(c, fname, callee):
    args = ", ".join(_arg(p, i) for i, p in enumerate(c.params))
    out = ["static uint64_t", "%s(const uint64_t *b)" % fname, "{"]
    if not c.params:
        out.append("    (void)b;")
    call = "%s(%s)" % (callee, args)
    if c.result_ctype == "INT32":
        out.append("    return (uint64_t)(uint32_t)%s;" % call)
    elif c.result_ctype == "POINTER":
        out.append("    return (uint64_t)(uintptr_t)%s;" % call)
    else:
        out += ["    %s;" % call, "    return 0;"]
    out += ["}", ""]
    return out


def _raw_callee(c):
    """The raw function for a command the stub never sees: the loader's
    for a core command, else the one clgc's resolver finds for a command
    without an object (the first platform's that has it)."""
    if not c.resolved:
        return c.name
    args = ", ".join(p.type for p in c.params) or "void"
    return "((%s%s(CL_API_CALL *)(%s))test_first_function(\"%s\"))" % (
        c.result, _sep(c.result), args, c.name)


_FIRST_FUNCTION = """\
/* The extension function of the first platform that has it: what clgc
 * resolves for a command with no object to name a platform. */
static void *
test_first_function(const char *name)
{
    cl_platform_id ids[16];
    cl_uint n = 0;
    void *fn = NULL;

    if (clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
        n = 0;
    for (cl_uint i = 0; fn == NULL && i < n && i < 16; i++)
        fn = clGetExtensionFunctionAddressForPlatform(ids[i], name);
    return fn;
}
"""


def _route(c):
    if c.name in CLGC_ANSWERS:
        return "TEST_ROUTE_CLGC", CLGC_ANSWERS[c.name]
    if c.name in ANSWERED_ELSEWHERE:
        return "TEST_ROUTE_ELSEWHERE", ANSWERED_ELSEWHERE[c.name]
    return "TEST_ROUTE_STUB", None


def _vendor(c):
    """(parameter index or -1, error for NULL) of the object clgc checks,
    for extension commands whose object is a parameter of its own."""
    obj = c.dispatch_object()
    if not c.resolved or obj is None or obj[1] == "0":
        return -1, "0"
    # The expression is the parameter's name (older models: "a->name").
    expr = obj[0][3:] if obj[0].startswith("a->") else obj[0]
    names = [p.name for p in c.params]
    if expr not in names:
        return -1, "0"
    return names.index(expr), obj[1]


def _case(c, i):
    route, why = _route(c)
    vendor, err = _vendor(c)
    names = [p.name for p in c.params]
    errcode = names.index("errcode_ret") if "errcode_ret" in names else -1
    kinds = ", ".join("TEST_ARG_" + _kind(p) for p in c.params) or "0"
    raw = "test_raw_%s" % c.name if route == "TEST_ROUTE_ELSEWHERE" else "NULL"
    after = tables.AFTER.get(c.name)
    after_count = names.index(after[1]) if after else -1
    return ["    {\"%s\", %d, %s, %s," % (c.name, i, route,
                                          '"%s"' % why if why else "NULL"),
            "     %d, %d, %d, TEST_RESULT_%s, %d, %d," % (
                int(c.resolved), int(c.name in LOADER_EXTENSIONS),
                int(c.dispatch_object() is not None), _result_kind(c),
                int(c.name in STUB_RESULT_OBJECTS), len(c.params)),
            "     {%s}," % kinds,
            "     %s, %d, %d, %s, %d, test_call_%s, %s}," % (
                "test_names_%s" % c.name if c.params else "NULL",
                vendor, errcode, err, after_count, c.name, raw)]


def forward_c(reg):
    out = ["/* The forwarding cases: for each command, a call of its wrapper"
           " with", " * arguments made from 64-bit patterns, and what"
           " check_forward.c needs to", " * build them. */", ""]
    out += _HEADERS + [""]
    # The library's generated header declares the platform-only wrappers
    # (clgc.h hides them on Linux) with their foreign stand-in types.
    out += ['#include "forward.h"', '#include "gen/commands.h"', ""]
    if any(c.resolved for c in reg.sorted if c.name in ANSWERED_ELSEWHERE):
        out.append(_FIRST_FUNCTION)
    for c in reg.sorted:
        out += _call_function(c, "test_call_" + c.name, "clgc_" + c.name)
        if _route(c)[0] == "TEST_ROUTE_ELSEWHERE":
            out += _call_function(c, "test_raw_" + c.name, _raw_callee(c))
        if c.params:
            out.append("static const char *const test_names_%s[] = {%s};" % (
                c.name, ", ".join('"%s"' % p.name for p in c.params)))
            out.append("")
    out += ["const struct test_forward_case test_forward_cases"
            "[TEST_FORWARD_N] = {"]
    for i, c in enumerate(reg.sorted):
        out += _case(c, i)
    out += ["};"]
    return "\n".join(out) + "\n"


def outputs(reg):
    _check_tables(reg)
    return {
        "tests/gen/stub_icd.c": stub_icd_c(reg),
        "tests/gen/forward.h": forward_h(reg),
        "tests/gen/forward.c": forward_c(reg),
    }
