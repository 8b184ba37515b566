"""Exceptions to the registry's regular shape, kept as data.

Each table says what is special about some commands and why; the templates in
generate.py read these tables and never test a command's name themselves.
"""

# Commands that clgc writes by hand in src/ instead of generating: they hand
# out clgc's own wrappers rather than the platform's raw function pointers.
HANDWRITTEN = {
    "clGetExtensionFunctionAddress": "returns clgc_<name> for registry commands",
    "clGetExtensionFunctionAddressForPlatform": "returns clgc_<name> for registry commands",
    "clSetEventCallback": "watches its callbacks for failures PoCL never calls back for (src/handwritten.c, src/callback.c)",
    "clSetUserEventStatus": "a failure set through clgc wakes the waits and the watcher (src/handwritten.c)",
}

# What a wrapper (and the layer's entry) does once the command has made its
# object, besides returning it: a call in src/ on the command's parameters
# and its result, ret (never NULL there); the parameter that counts the
# array the call reads (the forwarding tests pass a count that matches
# their array, and let the call reach the platform after the command);
# and why.
AFTER = {
    "clCreateContext": (
        "clgc__context_keep_devices(ret, num_devices, devices)",
        "num_devices",
        "retains its sub-devices while it lives: PoCL 3.1 crashes once a "
        "sub-device is released before the context, queues and memory made "
        "on it (src/subdevice.c)"),
}

# Commands that may block the calling thread for longer than a lock round
# trip: the runtime's collector must not wait for a thread inside them.
# Commands with a `blocking_*` parameter are added by rule (see generate.py).
MAY_BLOCK = {
    "clBuildProgram": "compiles",
    "clCompileProgram": "compiles",
    "clLinkProgram": "links",
    "clCreateProgramWithBinary": "may finish a compilation",
    "clCreateProgramWithIL": "translates SPIR-V",
    "clCreateProgramWithILKHR": "translates SPIR-V",
    "clCreateProgramWithBuiltInKernels": "may compile built-ins",
    "clCreateKernelsInProgram": "may compile kernels lazily",
    "clCreateKernel": "may compile the kernel lazily",
    "clWaitForEvents": "waits",
    "clFinish": "waits",
    "clFlush": "runs commands inline on PoCL's basic device",
    "clSetUserEventStatus": "runs event callbacks inline",
    "clReleaseCommandQueue": "finishes the queue",
    "clReleaseContext": "tears down devices",
    "clReleaseMemObject": "runs destructor callbacks inline",
    "clReleaseProgram": "runs release callbacks inline",
    "clReleaseEvent": "may wait for the command",
    "clReleaseKernel": "frees device code",
    "clGetPlatformIDs": "loads every ICD on first use",
    "clIcdGetPlatformIDsKHR": "loads the platform on first use",
    "clGetDeviceIDs": "probes devices on first use",
    "clCreateContext": "initialises devices",
    "clCreateContextFromType": "initialises devices",
    "clGetProgramInfo": "CL_PROGRAM_BINARIES may compile",
    "clEnqueueSVMFree": "may run the free callback inline",
    "clFinalizeCommandBufferKHR": "compiles the recorded commands",
    "clEnqueueWaitSemaphoresKHR": "may wait on the host",
    "clTerminateContextKHR": "waits for the device to stop",
}

# Every command that takes a callback, and how long the registration lives
# (enum clgc__lifetime in src/internal.h; include/clgc/callback.h has the
# table for users):
#   ONCE      called at most once, with plain values: may be deferred
#   ONCE_NOW  called at most once, with arguments that live only for the call
#   CONTEXT   called until the context it came with is destroyed
#   NATIVE    called at most once, without user data: a one-shot libffi
#             closure stands in for the function (src/callback.c)
CALLBACKS = {
    "clSetEventCallback": "ONCE",
    "clBuildProgram": "ONCE",
    "clCompileProgram": "ONCE",
    "clLinkProgram": "ONCE",
    "clSetMemObjectDestructorCallback": "ONCE",
    "clSetMemObjectDestructorAPPLE": "ONCE",
    "clSetContextDestructorCallback": "ONCE",
    "clSetProgramReleaseCallback": "ONCE",
    "clEnqueueSVMFree": "ONCE_NOW",
    "clEnqueueSVMFreeARM": "ONCE_NOW",
    "clCreateContext": "CONTEXT",
    "clCreateContextFromType": "CONTEXT",
    "clEnqueueNativeKernel": "NATIVE",
}

# The object a wrapper checks (core commands: the one the loader will
# dereference to dispatch) or finds its platform by (extension commands), with
# the error for an unknown one. By default it is the first parameter of an
# object type; these commands have none, or have a better one.
DISPATCH_OBJECT = {
    # The loader dispatches on the first device (or the properties' platform).
    "clCreateContext": (
        "clgc__first_object(num_devices, (const void *const *)devices)",
        "CL_INVALID_DEVICE"),
    "clWaitForEvents": (
        "clgc__first_object(num_events, (const void *const *)event_list)",
        "CL_INVALID_EVENT"),
    # The first queue is the one the command buffer records for.
    "clCreateCommandBufferKHR": (
        "clgc__first_object(num_queues, (const void *const *)queues)",
        "CL_INVALID_COMMAND_QUEUE"),
    # The platform is named in the properties, if at all.
    "clGetGLContextInfoKHR": (
        "clgc__properties_platform(properties)", "0"),
}

# Object types whose handles start with the vendor's dispatch table pointer
# (the cl_khr_icd contract), with the error for a NULL or unknown one.
ICD_OBJECTS = {
    "cl_platform_id": "CL_INVALID_PLATFORM",
    "cl_device_id": "CL_INVALID_DEVICE",
    "cl_context": "CL_INVALID_CONTEXT",
    "cl_command_queue": "CL_INVALID_COMMAND_QUEUE",
    "cl_mem": "CL_INVALID_MEM_OBJECT",
    "cl_program": "CL_INVALID_PROGRAM",
    "cl_kernel": "CL_INVALID_KERNEL",
    "cl_event": "CL_INVALID_EVENT",
    "cl_sampler": "CL_INVALID_SAMPLER",
}

# Extension object types: the ICD contract does not promise a dispatch
# pointer in them, so the platform is a hint; NULL is still an error.
EXTENSION_OBJECTS = {
    "cl_command_buffer_khr": "CL_INVALID_COMMAND_BUFFER_KHR",
    "cl_mutable_command_khr": "CL_INVALID_MUTABLE_COMMAND_KHR",
    "cl_semaphore_khr": "CL_INVALID_SEMAPHORE_KHR",
    "cl_accelerator_intel": "CL_INVALID_ACCELERATOR_INTEL",
}

# Extensions whose CL header needs a platform header that Linux lacks
# (Direct3D, VA-API). Their wrappers are compiled and exported with opaque
# stand-ins for the foreign types; the public header declares them only when
# the application has included the CL header named here (its include guard).
PLATFORM_EXTENSIONS = {
    "cl_khr_d3d10_sharing": "__OPENCL_CL_D3D10_H",
    "cl_khr_d3d11_sharing": "__OPENCL_CL_D3D11_H",
    "cl_khr_dx9_media_sharing": "__OPENCL_CL_DX9_MEDIA_SHARING_H",
    "cl_intel_dx9_media_sharing": "__OPENCL_CL_DX9_MEDIA_SHARING_H",
    "cl_intel_va_api_media_sharing": "__OPENCL_CL_VA_API_MEDIA_SHARING_INTEL_H",
    "cl_intel_sharing_format_query_d3d10": "__OPENCL_CL_D3D10_H",
    "cl_intel_sharing_format_query_d3d11": "__OPENCL_CL_D3D11_H",
    "cl_intel_sharing_format_query_dx9": "__OPENCL_CL_DX9_MEDIA_SHARING_H",
    "cl_intel_sharing_format_query_va_api":
        "__OPENCL_CL_VA_API_MEDIA_SHARING_INTEL_H",
}

# Stand-ins for the foreign platform types those wrappers pass on. Only the
# ABI matters: they are passed by value as these types or by pointer.
FOREIGN_TYPES = {
    "UINT": "typedef unsigned int UINT;",
    "HANDLE": "typedef void *HANDLE;",
}
# Any other foreign type is only ever passed by pointer: an incomplete struct.

# The core versions whose commands the ICD loader exports as symbols
# (ocl-icd 2.3.1, the system's, predates OpenCL 3.1). A core command of a
# later version has no loader symbol to link against: its wrapper takes the
# function from the platform, as an extension command's does, and returns
# CL_INVALID_OPERATION where the platform lacks it.
LOADER_FEATURES = {
    "CL_VERSION_1_0", "CL_VERSION_1_1", "CL_VERSION_1_2", "CL_VERSION_2_0",
    "CL_VERSION_2_1", "CL_VERSION_2_2", "CL_VERSION_3_0",
}

# Core versions whose dispatch slots an older driver may fill with the
# loader's own exported functions: Oclgrind, an OpenCL 1.2 driver, links
# against libOpenCL and so puts the loader's clCreateCommandQueueWithProperties
# (and every 2.0 to 3.0 command) in its table, which the loader dispatches
# back to the driver: the loader alone spins, and through the layer each
# round adds a frame until the stack overflows. The wrappers and the layer's
# entries of these versions' commands look for that and answer
# CL_INVALID_OPERATION, as for a function the platform lacks.
LOOP_BACK_FEATURES = {
    "CL_VERSION_2_0", "CL_VERSION_2_1", "CL_VERSION_2_2", "CL_VERSION_3_0",
}

# Features and extensions that every OpenCL header release provides
# whatever CL_TARGET_OPENCL_VERSION says: their types and commands need no
# condition in clgc/wrappers.h.
ALWAYS_PROVIDED = {"CL_VERSION_1_0"}

# Types that a later revision of a ratified extension added, with that
# extension and revision: header releases that declare an earlier revision
# define the extension's name but not the type. Found by the compile test
# (tests/headers.sh): Debian 12's headers lack the first, v2024.10.24's
# (cl_loader_layers 1.0.0) the second.
TYPE_SINCE = {
    "cl_semaphore_reimport_properties_khr": (
        "cl_khr_external_semaphore_sync_fd", "1.0.0"),
    "cl_layer_properties": ("cl_loader_layers", "1.0.1"),
}

# Experimental extensions: earlier revisions than the registry's whose C
# signatures are the registry's, so that headers at those revisions get
# the wrappers too (clgc/wrappers.h, CLGC_HAVE_<extension>). These are the
# revisions of OpenCL-Headers v2024.10.24; tests/headers.sh compiles every
# wrapper against that release and redeclares each command with its
# wrapper's type, which fails on any difference.
SAME_SIGNATURES = {
    "cl_khr_command_buffer": ["0.9.5"],
    "cl_khr_command_buffer_mutable_dispatch": ["0.9.3"],
    "cl_khr_command_buffer_multi_device": ["0.9.1"],
}

# Extensions that header releases before the generated ones (2023.02.06,
# Debian 12's, and earlier) declare without defining their name: the include
# guard of the header that declares them there stands for it. The guards
# of later releases are spelt differently.
OLD_HEADER_GUARDS = {
    "cl_khr_gl_event": "__OPENCL_CL_GL_H",
    "cl_loader_layers": "OPENCL_CL_LAYER_H",
}

# Headers that declare everything else.
CL_HEADERS = ["CL/cl.h", "CL/cl_ext.h", "CL/cl_gl.h", "CL/cl_egl.h", "CL/cl_layer.h"]

# How each C scalar type is passed, for the metadata's ctype column.
BASE_CTYPES = {
    "void": "VOID",
    "char": "INT8",
    "unsigned char": "UINT8",
    "int": "INT32",
    "unsigned int": "UINT32",
    "int8_t": "INT8",
    "uint8_t": "UINT8",
    "int16_t": "INT16",
    "uint16_t": "UINT16",
    "int32_t": "INT32",
    "uint32_t": "UINT32",
    "int64_t": "INT64",
    "uint64_t": "UINT64",
    "intptr_t": "INTPTR",
    "size_t": "SIZE",
    "float": "FLOAT",
    "double": "DOUBLE",
    "UINT": "UINT32",
    "HANDLE": "POINTER",
}

# What each shared library exports, for its linker map (generate.py writes
# both maps): one version node per interface version, oldest first, each
# later one inheriting the one before, and every symbol named, so that a new
# export lands in the node it is put in and never slips into a released one.
# A node is (name, registry commands, hand-written calls): the first node
# takes the wrappers (clgc_<command>) of every registry command that no later
# node names, and says how many there are; a later node lists its commands
# by name. generate.py stops when the registry's commands do not add up to
# that (a cl.xml with new commands), and when a public header declares a
# call that no node exports, or a node a call that no header declares.
# tests/exports.sh checks that each library exports exactly its map.
#
# Once a version is released its node is frozen: a later call or command
# goes in a new node, ("CLGC_1", ["clNewCommandKHR"], ["clgc_new_call"]),
# with the -version-info bump that configure.ac describes.
EXPORTS = {
    "src/clgc.map": [
        ("CLGC_0", 235, [
            # versions and errors
            "clgc_err_name", "clgc_strerror", "clgc_version",
            # the runtime interface, safe regions, threads
            "clgc_call_active", "clgc_call_safe", "clgc_runtime_current",
            "clgc_runtime_data", "clgc_runtime_install",
            "clgc_safepoint_barrier", "clgc_thread_attach",
            "clgc_thread_attached", "clgc_thread_detach",
            "clgc_thread_in_region", "clgc_thread_region_depth",
            # command metadata
            "clgc_command_at", "clgc_command_count", "clgc_command_find",
            # waits and notifications
            "clgc_event_notify", "clgc_wait_driver_info",
            "clgc_wait_for_events", "clgc_wait_get_poll_ns",
            "clgc_wait_last_path", "clgc_wait_set_mode",
            "clgc_wait_set_poll_ns", "clgc_wait_set_strategy",
            # completion queues
            "clgc_event_post", "clgc_queue_close", "clgc_queue_create",
            "clgc_queue_drain", "clgc_queue_fd", "clgc_queue_post",
            # callbacks
            "clgc_callback_error_take", "clgc_callback_fail",
            "clgc_callbacks_defer", "clgc_callbacks_deferred_to",
            # closures and generic calls (libffi)
            "clgc_closure_create", "clgc_closure_free", "clgc_command_call",
            "clgc_command_call_by_name",
        ]),
        # The commands that OpenCL 3.1.1's registry added to 3.0.13's, and
        # the tables the bindings share.
        ("CLGC_1", [
            "clCancelCommandsIMG", "clCommandSVMMemFillKHR",
            "clCommandSVMMemcpyKHR", "clDeinitLayer",
            "clGetICDLoaderInfoOCLICD", "clGetKernelSuggestedLocalWorkSize",
            "clGetSVMPointerInfoKHR", "clGetSVMSuggestedTypeIndexKHR",
            "clIcdGetFunctionAddressForPlatformKHR",
            "clIcdSetPlatformDispatchDataKHR", "clInitLayerWithProperties",
            "clReImportSemaphoreSyncFdKHR", "clRemapCommandBufferKHR",
            "clSVMAllocWithPropertiesKHR", "clSVMFreeWithPropertiesKHR",
            "clSetKernelArgDevicePointerEXT", "clSetPerfHintQCOM",
        ], [
            # the tables the bindings share (clgc/names.h)
            "clgc_cl_error_at", "clgc_cl_error_count", "clgc_cl_error_name",
            "clgc_enum_find", "clgc_enum_group_find", "clgc_enum_name",
            "clgc_info_family_at",
            "clgc_info_family_count", "clgc_info_family_find",
            "clgc_info_get",
            "clgc_info_find", "clgc_info_type_name", "clgc_info_type_size",
            "clgc_object_kind_at",
            "clgc_object_kind_count", "clgc_object_kind_find",
            # OpenCL the same on every version, and the checks every
            # binding makes before OpenCL sees a box (clgc/portable.h)
            "clgc_create_command_queue", "clgc_image_box", "clgc_image_desc",
            "clgc_image_shape", "clgc_rect_check",
            # how far, and how long, a command uses a pointer argument (clgc/ffi.h)
            "clgc_command_reach",
            "clgc_command_keep",
            # a kernel's argument table, and boxes (clgc/binding.h)
            "clgc_box_free", "clgc_box_get", "clgc_box_new",
            "clgc_box_release", "clgc_box_released", "clgc_holds_back_to",
            "clgc_holds_end", "clgc_holds_mark", "clgc_mem_kind",
            "clgc_kernel_args_check", "clgc_kernel_args_count",
            "clgc_kernel_args_free",
            "clgc_kernel_args_kernel", "clgc_kernel_args_kind",
            "clgc_kernel_args_message", "clgc_kernel_args_new",
            "clgc_kernel_args_ready", "clgc_kernel_args_set_local",
            "clgc_kernel_args_set_mem", "clgc_kernel_args_set_sampler",
            "clgc_kernel_args_set_value", "clgc_program_binaries",
            "clgc_program_with_binaries",
        ]),
        # After 0.1.0: what each binding had looked up for itself.
        ("CLGC_2", [], [
            # a command's event parameter (clgc/ffi.h)
            "clgc_command_event",
            # how a fill reads its color (clgc/portable.h)
            "clgc_image_fill_color",
        ]),
        # For clgc's own libraries only: libclgc-layer hands libclgc the
        # loader's table (src/layer.h). Not part of the interface.
        ("CLGC_PRIVATE", [], ["clgc__layer_init"]),
    ],
    # The Boehm GC adapter (libclgc-boehm), a library of its own.
    "src/clgc-boehm.map": [
        ("CLGC_0", 0, ["clgc_boehm_install"]),
    ],
    # The OpenCL layer (libclgc-layer): the two entry points of the Khronos
    # layer interface (CL/cl_layer.h), which the ICD loader looks up.
    "src/clgc-layer.map": [
        ("CLGC_0", 0, ["clGetLayerInfo", "clInitLayer"]),
        ("CLGC_1", [], ["clInitLayerWithProperties"]),
    ],
}


# The members of the ICD dispatch table (struct _cl_icd_dispatch, CL/cl_icd.h),
# in its order: the commands an OpenCL layer sees (libclgc-layer, src/gen/layer.c).
ICD_DISPATCH = [
    "clGetPlatformIDs", "clGetPlatformInfo", "clGetDeviceIDs",
    "clGetDeviceInfo", "clCreateContext", "clCreateContextFromType",
    "clRetainContext", "clReleaseContext", "clGetContextInfo",
    "clCreateCommandQueue", "clRetainCommandQueue", "clReleaseCommandQueue",
    "clGetCommandQueueInfo", "clSetCommandQueueProperty", "clCreateBuffer",
    "clCreateImage2D", "clCreateImage3D", "clRetainMemObject",
    "clReleaseMemObject", "clGetSupportedImageFormats", "clGetMemObjectInfo",
    "clGetImageInfo", "clCreateSampler", "clRetainSampler", "clReleaseSampler",
    "clGetSamplerInfo", "clCreateProgramWithSource",
    "clCreateProgramWithBinary", "clRetainProgram", "clReleaseProgram",
    "clBuildProgram", "clUnloadCompiler", "clGetProgramInfo",
    "clGetProgramBuildInfo", "clCreateKernel", "clCreateKernelsInProgram",
    "clRetainKernel", "clReleaseKernel", "clSetKernelArg", "clGetKernelInfo",
    "clGetKernelWorkGroupInfo", "clWaitForEvents", "clGetEventInfo",
    "clRetainEvent", "clReleaseEvent", "clGetEventProfilingInfo", "clFlush",
    "clFinish", "clEnqueueReadBuffer", "clEnqueueWriteBuffer",
    "clEnqueueCopyBuffer", "clEnqueueReadImage", "clEnqueueWriteImage",
    "clEnqueueCopyImage", "clEnqueueCopyImageToBuffer",
    "clEnqueueCopyBufferToImage", "clEnqueueMapBuffer", "clEnqueueMapImage",
    "clEnqueueUnmapMemObject", "clEnqueueNDRangeKernel", "clEnqueueTask",
    "clEnqueueNativeKernel", "clEnqueueMarker", "clEnqueueWaitForEvents",
    "clEnqueueBarrier", "clGetExtensionFunctionAddress",
    "clCreateFromGLBuffer", "clCreateFromGLTexture2D",
    "clCreateFromGLTexture3D", "clCreateFromGLRenderbuffer",
    "clGetGLObjectInfo", "clGetGLTextureInfo", "clEnqueueAcquireGLObjects",
    "clEnqueueReleaseGLObjects", "clGetGLContextInfoKHR",
    "clGetDeviceIDsFromD3D10KHR", "clCreateFromD3D10BufferKHR",
    "clCreateFromD3D10Texture2DKHR", "clCreateFromD3D10Texture3DKHR",
    "clEnqueueAcquireD3D10ObjectsKHR", "clEnqueueReleaseD3D10ObjectsKHR",
    "clSetEventCallback", "clCreateSubBuffer",
    "clSetMemObjectDestructorCallback", "clCreateUserEvent",
    "clSetUserEventStatus", "clEnqueueReadBufferRect",
    "clEnqueueWriteBufferRect", "clEnqueueCopyBufferRect",
    "clCreateSubDevicesEXT", "clRetainDeviceEXT", "clReleaseDeviceEXT",
    "clCreateEventFromGLsyncKHR", "clCreateSubDevices", "clRetainDevice",
    "clReleaseDevice", "clCreateImage", "clCreateProgramWithBuiltInKernels",
    "clCompileProgram", "clLinkProgram", "clUnloadPlatformCompiler",
    "clGetKernelArgInfo", "clEnqueueFillBuffer", "clEnqueueFillImage",
    "clEnqueueMigrateMemObjects", "clEnqueueMarkerWithWaitList",
    "clEnqueueBarrierWithWaitList", "clGetExtensionFunctionAddressForPlatform",
    "clCreateFromGLTexture", "clGetDeviceIDsFromD3D11KHR",
    "clCreateFromD3D11BufferKHR", "clCreateFromD3D11Texture2DKHR",
    "clCreateFromD3D11Texture3DKHR", "clCreateFromDX9MediaSurfaceKHR",
    "clEnqueueAcquireD3D11ObjectsKHR", "clEnqueueReleaseD3D11ObjectsKHR",
    "clGetDeviceIDsFromDX9MediaAdapterKHR",
    "clEnqueueAcquireDX9MediaSurfacesKHR",
    "clEnqueueReleaseDX9MediaSurfacesKHR", "clCreateFromEGLImageKHR",
    "clEnqueueAcquireEGLObjectsKHR", "clEnqueueReleaseEGLObjectsKHR",
    "clCreateEventFromEGLSyncKHR", "clCreateCommandQueueWithProperties",
    "clCreatePipe", "clGetPipeInfo", "clSVMAlloc", "clSVMFree",
    "clEnqueueSVMFree", "clEnqueueSVMMemcpy", "clEnqueueSVMMemFill",
    "clEnqueueSVMMap", "clEnqueueSVMUnmap", "clCreateSamplerWithProperties",
    "clSetKernelArgSVMPointer", "clSetKernelExecInfo",
    "clGetKernelSubGroupInfoKHR", "clCloneKernel", "clCreateProgramWithIL",
    "clEnqueueSVMMigrateMem", "clGetDeviceAndHostTimer", "clGetHostTimer",
    "clGetKernelSubGroupInfo", "clSetDefaultDeviceCommandQueue",
    "clSetProgramReleaseCallback", "clSetProgramSpecializationConstant",
    "clCreateBufferWithProperties", "clCreateImageWithProperties",
    "clSetContextDestructorCallback",
]

# Dispatch entries the layer leaves as the next table has them: the loader
# answers platform enumeration and extension lookups itself, and what they
# return must be what the program sees without the layer (docs/layer.md).
LAYER_PASSTHROUGH = {
    "clGetPlatformIDs", "clGetExtensionFunctionAddress",
    "clGetExtensionFunctionAddressForPlatform", "clIcdGetPlatformIDsKHR",
}



# ---------------------------------------------------------------------------
# The tables that the bindings share (gen/names.py writes them into libclgc
# as src/gen/names.c; include/clgc/names.h declares them).

# The error codes: every enum that a feature or extension requires under a
# require block whose comment matches one of these (re.search).
ERROR_CODE_COMMENTS = [r"^Error codes$", r"^Error type for "]

# Then every enum of the registry's error-code blocks (<enums> named like
# this) that no require block lists (CL_PIPE_FULL_INTEL, CL_PIPE_EMPTY_INTEL:
# an extension the registry does not describe), except the placeholders a
# vendor reserves its range with, which name no error.
ERROR_CODE_BLOCKS = r"^ErrorCodes\."
ERROR_CODE_PLACEHOLDERS = r"^CL_ERROR_RESERVED\d+_"

# The kinds of OpenCL object: (kind, C type, info command, retain, release).
# The CL_INVALID_* code of each comes from ICD_OBJECTS or EXTENSION_OBJECTS.
# Platforms have no reference count.
OBJECT_KINDS = [
    ("platform", "cl_platform_id", "clGetPlatformInfo", None, None),
    ("device", "cl_device_id", "clGetDeviceInfo", "clRetainDevice",
     "clReleaseDevice"),
    ("context", "cl_context", "clGetContextInfo", "clRetainContext",
     "clReleaseContext"),
    ("command_queue", "cl_command_queue", "clGetCommandQueueInfo",
     "clRetainCommandQueue", "clReleaseCommandQueue"),
    ("mem", "cl_mem", "clGetMemObjectInfo", "clRetainMemObject",
     "clReleaseMemObject"),
    ("program", "cl_program", "clGetProgramInfo", "clRetainProgram",
     "clReleaseProgram"),
    ("kernel", "cl_kernel", "clGetKernelInfo", "clRetainKernel",
     "clReleaseKernel"),
    ("event", "cl_event", "clGetEventInfo", "clRetainEvent", "clReleaseEvent"),
    ("sampler", "cl_sampler", "clGetSamplerInfo", "clRetainSampler",
     "clReleaseSampler"),
    ("command_buffer_khr", "cl_command_buffer_khr", "clGetCommandBufferInfoKHR",
     "clRetainCommandBufferKHR", "clReleaseCommandBufferKHR"),
    ("semaphore_khr", "cl_semaphore_khr", "clGetSemaphoreInfoKHR",
     "clRetainSemaphoreKHR", "clReleaseSemaphoreKHR"),
]

# The info families: (family, command, object kind, short-name prefix,
# require comments). A family's names are the enums that features and
# extensions require under a comment matching one of the patterns
# (re.search); the prefix is what clgc_info_find() puts before a short
# name ("name" -> CL_DEVICE_NAME).
INFO_FAMILIES = [
    ("cl_platform_info", "clGetPlatformInfo", "platform", "CL_PLATFORM_",
     [r"\bcl_platform_info\b"]),
    ("cl_device_info", "clGetDeviceInfo", "device", "CL_DEVICE_",
     [r"\bcl_device_info\b"]),
    ("cl_context_info", "clGetContextInfo", "context", "CL_CONTEXT_",
     [r"^cl_context_info$"]),
    ("cl_command_queue_info", "clGetCommandQueueInfo", "command_queue",
     "CL_QUEUE_", [r"^cl_command_queue_info$"]),
    ("cl_mem_info", "clGetMemObjectInfo", "mem", "CL_MEM_",
     [r"^cl_mem_info$"]),
    ("cl_image_info", "clGetImageInfo", "mem", "CL_IMAGE_",
     [r"\bcl_image_info\b"]),
    ("cl_pipe_info", "clGetPipeInfo", "mem", "CL_PIPE_", [r"^cl_pipe_info$"]),
    ("cl_sampler_info", "clGetSamplerInfo", "sampler", "CL_SAMPLER_",
     [r"^cl_sampler_info$"]),
    ("cl_program_info", "clGetProgramInfo", "program", "CL_PROGRAM_",
     [r"\bcl_program_info\b", r"^clGetProgramInfo param_name$"]),
    ("cl_program_build_info", "clGetProgramBuildInfo", "program",
     "CL_PROGRAM_", [r"^cl_program_build_info$"]),
    ("cl_kernel_info", "clGetKernelInfo", "kernel", "CL_KERNEL_",
     [r"^cl_kernel_info$"]),
    ("cl_kernel_work_group_info", "clGetKernelWorkGroupInfo", "kernel",
     "CL_KERNEL_", [r"^cl_kernel_work_?group_info$"]),
    ("cl_kernel_arg_info", "clGetKernelArgInfo", "kernel", "CL_KERNEL_ARG_",
     [r"^cl_kernel_arg_info$"]),
    ("cl_kernel_sub_group_info", "clGetKernelSubGroupInfo", "kernel",
     "CL_KERNEL_", [r"^cl_kernel_sub_group_info$"]),
    ("cl_event_info", "clGetEventInfo", "event", "CL_EVENT_",
     [r"^cl_event_info$"]),
    ("cl_profiling_info", "clGetEventProfilingInfo", "event",
     "CL_PROFILING_COMMAND_", [r"^cl_profiling_info$"]),
]

# The enum groups that info values name (BITFIELD and ENUM types below):
# group -> the registry's sources of its values, each an <enums> block's
# name or a require comment. A bitfield group's names are the values of
# single bits (its masks, CL_DEVICE_TYPE_ALL, are left out).
ENUM_GROUPS = {
    "cl_device_type": ["cl_device_type"],
    "cl_device_fp_config": ["cl_device_fp_config"],
    "cl_device_exec_capabilities": ["cl_device_exec_capabilities"],
    "cl_device_svm_capabilities": ["cl_device_svm_capabilities"],
    "cl_device_atomic_capabilities": ["cl_device_atomic_capabilities"],
    "cl_device_device_enqueue_capabilities": [
        "cl_device_device_enqueue_capabilities"],
    "cl_command_queue_properties": ["cl_command_queue_properties"],
    "cl_device_affinity_domain": ["cl_device_affinity_domain"],
    "cl_device_terminate_capability_khr": [
        "cl_device_terminate_capability_khr"],
    "cl_device_integer_dot_product_capabilities": [
        "cl_device_integer_dot_product_capabilities"],
    "cl_device_unified_shared_memory_capabilities_intel": [
        "cl_device_unified_shared_memory_capabilities_intel"],
    "cl_device_scheduling_controls_capabilities_arm": [
        "cl_device_scheduling_controls_capabilities_arm"],
    "cl_device_scheduling_controls_capabilities_img": [
        "cl_device_scheduling_controls_capabilities_img"],
    "cl_device_controlled_termination_capabilities_arm": [
        "cl_device_controlled_termination_capabilities_arm"],
    "cl_device_svm_capabilities_arm": ["cl_arm_device_svm_capabilities.flags"],
    "cl_device_feature_capabilities_intel": [
        "cl_device_feature_capabilities_intel"],
    "cl_device_command_buffer_capabilities_khr": [
        "cl_device_command_buffer_capabilities_khr "],
    "cl_platform_command_buffer_capabilities_khr": [
        "cl_platform_command_buffer_capabilities_khr "],
    "cl_mutable_dispatch_fields_khr": ["cl_mutable_dispatch_fields_khr"],
    "cl_device_fp_atomic_capabilities_ext": [
        "cl_device_fp_atomic_capabilities_ext"],
    "cl_device_kernel_clock_capabilities_khr": [
        "cl_device_kernel_clock_capabilities_khr"],
    "cl_mem_flags": ["cl_mem_flags"],
    "cl_kernel_arg_type_qualifier": ["cl_kernel_arg_type_qualifier"],
    "cl_device_mem_cache_type": ["cl_device_mem_cache_type"],
    "cl_device_local_mem_type": ["cl_device_local_mem_type"],
    "cl_build_status": ["cl_build_status"],
    "cl_program_binary_type": ["cl_program_binary_type"],
    "cl_command_execution_status": ["clCommandExecutionStatus"],
    "cl_mem_object_type": ["cl_mem_object_type"],
    "cl_channel_order": ["cl_channel_order"],
    "cl_channel_type": ["cl_channel_type"],
    "cl_addressing_mode": ["cl_addressing_mode"],
    "cl_filter_mode": ["cl_filter_mode"],
    "cl_kernel_arg_address_qualifier": ["cl_kernel_arg_address_qualifier"],
    "cl_kernel_arg_access_qualifier": ["cl_kernel_arg_access_qualifier"],
    "cl_command_type": ["cl_command_type"],
    "cl_command_termination_reason_arm": [
        "cl_command_termination_reason_arm"],
    "cl_semaphore_type_khr": ["cl_semaphore_type_khr"],
    "cl_external_semaphore_handle_type_khr": [
        "cl_external_semaphore_handle_type_khr"],
    "cl_external_memory_handle_type_khr": [
        "cl_external_memory_handle_type_khr"],
}

# The type of each info value, which the registry does not give: from the
# OpenCL 3.1 specification's query tables and each extension's own. A name
# without an entry takes the type of a name of its family with the same
# value (CL_DEVICE_UUID_KHR: CL_DEVICE_UUID's); generate.py stops at a name
# that has neither. "TYPE group" names the enum group (ENUM_GROUPS) of a
# BITFIELD, ENUM or ENUM_ARRAY, the object kind (OBJECT_KINDS) of a HANDLE
# or HANDLE_ARRAY, the property type of PROPERTIES (cl_ulong elements) and
# PROPERTIES_INTPTR (intptr_t elements). BYTES: a structure, a union or an
# opaque value, as the driver gives it. (enum clgc_info_type in
# include/clgc/names.h says how each type is laid out.)
INFO_TYPES = {
    "cl_platform_info": {
        "CL_PLATFORM_PROFILE": "STRING",
        "CL_PLATFORM_VERSION": "STRING",
        "CL_PLATFORM_NAME": "STRING",
        "CL_PLATFORM_VENDOR": "STRING",
        "CL_PLATFORM_EXTENSIONS": "STRING",
        "CL_PLATFORM_HOST_TIMER_RESOLUTION": "ULONG",
        "CL_PLATFORM_NUMERIC_VERSION": "UINT",
        "CL_PLATFORM_EXTENSIONS_WITH_VERSION": "NAME_VERSION_ARRAY",
        "CL_PLATFORM_ICD_SUFFIX_KHR": "STRING",
        "CL_PLATFORM_UNLOADABLE_KHR": "BOOL",
        "CL_PLATFORM_SEMAPHORE_TYPES_KHR": "ENUM_ARRAY cl_semaphore_type_khr",
        "CL_PLATFORM_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR":
            "ENUM_ARRAY cl_external_semaphore_handle_type_khr",
        "CL_PLATFORM_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR":
            "ENUM_ARRAY cl_external_semaphore_handle_type_khr",
        "CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR":
            "ENUM_ARRAY cl_external_memory_handle_type_khr",
        "CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR":
            "BITFIELD cl_platform_command_buffer_capabilities_khr",
        "CL_PLATFORM_SVM_TYPE_CAPABILITIES_KHR": "ULONG_ARRAY",
    },
    "cl_device_info": {
        "CL_DEVICE_TYPE": "BITFIELD cl_device_type",
        "CL_DEVICE_VENDOR_ID": "UINT",
        "CL_DEVICE_MAX_COMPUTE_UNITS": "UINT",
        "CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS": "UINT",
        "CL_DEVICE_MAX_WORK_GROUP_SIZE": "SIZE",
        "CL_DEVICE_MAX_WORK_ITEM_SIZES": "SIZE_ARRAY",
        "CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR": "UINT",
        "CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT": "UINT",
        "CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT": "UINT",
        "CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG": "UINT",
        "CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT": "UINT",
        "CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE": "UINT",
        "CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF": "UINT",
        "CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR": "UINT",
        "CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT": "UINT",
        "CL_DEVICE_NATIVE_VECTOR_WIDTH_INT": "UINT",
        "CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG": "UINT",
        "CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT": "UINT",
        "CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE": "UINT",
        "CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF": "UINT",
        "CL_DEVICE_MAX_CLOCK_FREQUENCY": "UINT",
        "CL_DEVICE_ADDRESS_BITS": "UINT",
        "CL_DEVICE_MAX_READ_IMAGE_ARGS": "UINT",
        "CL_DEVICE_MAX_WRITE_IMAGE_ARGS": "UINT",
        "CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS": "UINT",
        "CL_DEVICE_MAX_MEM_ALLOC_SIZE": "ULONG",
        "CL_DEVICE_IMAGE2D_MAX_WIDTH": "SIZE",
        "CL_DEVICE_IMAGE2D_MAX_HEIGHT": "SIZE",
        "CL_DEVICE_IMAGE3D_MAX_WIDTH": "SIZE",
        "CL_DEVICE_IMAGE3D_MAX_HEIGHT": "SIZE",
        "CL_DEVICE_IMAGE3D_MAX_DEPTH": "SIZE",
        "CL_DEVICE_IMAGE_MAX_BUFFER_SIZE": "SIZE",
        "CL_DEVICE_IMAGE_MAX_ARRAY_SIZE": "SIZE",
        "CL_DEVICE_IMAGE_SUPPORT": "BOOL",
        "CL_DEVICE_IMAGE_PITCH_ALIGNMENT": "UINT",
        "CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT": "UINT",
        "CL_DEVICE_MAX_PARAMETER_SIZE": "SIZE",
        "CL_DEVICE_MAX_SAMPLERS": "UINT",
        "CL_DEVICE_MEM_BASE_ADDR_ALIGN": "UINT",
        "CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE": "UINT",
        "CL_DEVICE_SINGLE_FP_CONFIG": "BITFIELD cl_device_fp_config",
        "CL_DEVICE_DOUBLE_FP_CONFIG": "BITFIELD cl_device_fp_config",
        "CL_DEVICE_HALF_FP_CONFIG": "BITFIELD cl_device_fp_config",
        "CL_DEVICE_GLOBAL_MEM_CACHE_TYPE": "ENUM cl_device_mem_cache_type",
        "CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE": "UINT",
        "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE": "ULONG",
        "CL_DEVICE_GLOBAL_MEM_SIZE": "ULONG",
        "CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE": "ULONG",
        "CL_DEVICE_MAX_CONSTANT_ARGS": "UINT",
        "CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE": "SIZE",
        "CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE": "SIZE",
        "CL_DEVICE_LOCAL_MEM_TYPE": "ENUM cl_device_local_mem_type",
        "CL_DEVICE_LOCAL_MEM_SIZE": "ULONG",
        "CL_DEVICE_ERROR_CORRECTION_SUPPORT": "BOOL",
        "CL_DEVICE_HOST_UNIFIED_MEMORY": "BOOL",
        "CL_DEVICE_PROFILING_TIMER_RESOLUTION": "SIZE",
        "CL_DEVICE_ENDIAN_LITTLE": "BOOL",
        "CL_DEVICE_AVAILABLE": "BOOL",
        "CL_DEVICE_COMPILER_AVAILABLE": "BOOL",
        "CL_DEVICE_LINKER_AVAILABLE": "BOOL",
        "CL_DEVICE_EXECUTION_CAPABILITIES":
            "BITFIELD cl_device_exec_capabilities",
        "CL_DEVICE_QUEUE_PROPERTIES": "BITFIELD cl_command_queue_properties",
        "CL_DEVICE_QUEUE_ON_HOST_PROPERTIES":
            "BITFIELD cl_command_queue_properties",
        "CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES":
            "BITFIELD cl_command_queue_properties",
        "CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE": "UINT",
        "CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE": "UINT",
        "CL_DEVICE_MAX_ON_DEVICE_QUEUES": "UINT",
        "CL_DEVICE_MAX_ON_DEVICE_EVENTS": "UINT",
        "CL_DEVICE_BUILT_IN_KERNELS": "STRING",
        "CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION": "NAME_VERSION_ARRAY",
        "CL_DEVICE_PLATFORM": "HANDLE platform",
        "CL_DEVICE_NAME": "STRING",
        "CL_DEVICE_VENDOR": "STRING",
        "CL_DRIVER_VERSION": "STRING",
        "CL_DEVICE_PROFILE": "STRING",
        "CL_DEVICE_VERSION": "STRING",
        "CL_DEVICE_NUMERIC_VERSION": "UINT",
        "CL_DEVICE_OPENCL_C_VERSION": "STRING",
        "CL_DEVICE_OPENCL_C_ALL_VERSIONS": "NAME_VERSION_ARRAY",
        "CL_DEVICE_OPENCL_C_FEATURES": "NAME_VERSION_ARRAY",
        "CL_DEVICE_EXTENSIONS": "STRING",
        "CL_DEVICE_EXTENSIONS_WITH_VERSION": "NAME_VERSION_ARRAY",
        "CL_DEVICE_IL_VERSION": "STRING",
        "CL_DEVICE_ILS_WITH_VERSION": "NAME_VERSION_ARRAY",
        "CL_DEVICE_PRINTF_BUFFER_SIZE": "SIZE",
        "CL_DEVICE_PREFERRED_INTEROP_USER_SYNC": "BOOL",
        "CL_DEVICE_PARENT_DEVICE": "HANDLE device",
        "CL_DEVICE_PARTITION_MAX_SUB_DEVICES": "UINT",
        "CL_DEVICE_PARTITION_PROPERTIES":
            "PROPERTIES_INTPTR cl_device_partition_property",
        "CL_DEVICE_PARTITION_AFFINITY_DOMAIN":
            "BITFIELD cl_device_affinity_domain",
        "CL_DEVICE_PARTITION_TYPE":
            "PROPERTIES_INTPTR cl_device_partition_property",
        "CL_DEVICE_REFERENCE_COUNT": "UINT",
        "CL_DEVICE_SVM_CAPABILITIES": "BITFIELD cl_device_svm_capabilities",
        "CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT": "UINT",
        "CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT": "UINT",
        "CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT": "UINT",
        "CL_DEVICE_MAX_PIPE_ARGS": "UINT",
        "CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS": "UINT",
        "CL_DEVICE_PIPE_MAX_PACKET_SIZE": "UINT",
        "CL_DEVICE_PIPE_SUPPORT": "BOOL",
        "CL_DEVICE_MAX_NUM_SUB_GROUPS": "UINT",
        "CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS": "BOOL",
        "CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES":
            "BITFIELD cl_device_atomic_capabilities",
        "CL_DEVICE_ATOMIC_FENCE_CAPABILITIES":
            "BITFIELD cl_device_atomic_capabilities",
        "CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT": "BOOL",
        "CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT": "BOOL",
        "CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT": "BOOL",
        "CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES":
            "BITFIELD cl_device_device_enqueue_capabilities",
        "CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE": "SIZE",
        "CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED": "STRING",
        "CL_DEVICE_UUID": "BYTES",
        "CL_DRIVER_UUID": "BYTES",
        "CL_DEVICE_LUID_VALID": "BOOL",
        "CL_DEVICE_LUID": "BYTES",
        "CL_DEVICE_NODE_MASK": "UINT",
        "CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES":
            "BITFIELD cl_device_integer_dot_product_capabilities",
        "CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_8BIT": "BYTES",
        "CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_4x8BIT_PACKED":
            "BYTES",
        "CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS": "STRING_ARRAY",
        "CL_DEVICE_SPIRV_EXTENSIONS": "STRING_ARRAY",
        "CL_DEVICE_SPIRV_CAPABILITIES": "UINT_ARRAY",
        "CL_DEVICE_MAX_WORK_GROUP_SIZES": "SIZE_ARRAY",
        "CL_DEVICE_TERMINATE_CAPABILITY_KHR":
            "BITFIELD cl_device_terminate_capability_khr",
        "CL_DEVICE_SPIR_VERSIONS": "STRING",
        "CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV": "UINT",
        "CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV": "UINT",
        "CL_DEVICE_REGISTERS_PER_BLOCK_NV": "UINT",
        "CL_DEVICE_WARP_SIZE_NV": "UINT",
        "CL_DEVICE_GPU_OVERLAP_NV": "BOOL",
        "CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV": "BOOL",
        "CL_DEVICE_INTEGRATED_MEMORY_NV": "BOOL",
        "CL_DEVICE_PROFILING_TIMER_OFFSET_AMD": "ULONG",
        "CL_DEVICE_TOPOLOGY_AMD": "BYTES",
        "CL_DEVICE_BOARD_NAME_AMD": "STRING",
        "CL_DEVICE_GLOBAL_FREE_MEMORY_AMD": "SIZE_ARRAY",
        "CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD": "UINT",
        "CL_DEVICE_SIMD_WIDTH_AMD": "UINT",
        "CL_DEVICE_SIMD_INSTRUCTION_WIDTH_AMD": "UINT",
        "CL_DEVICE_WAVEFRONT_WIDTH_AMD": "UINT",
        "CL_DEVICE_GLOBAL_MEM_CHANNELS_AMD": "UINT",
        "CL_DEVICE_GLOBAL_MEM_CHANNEL_BANKS_AMD": "UINT",
        "CL_DEVICE_GLOBAL_MEM_CHANNEL_BANK_WIDTH_AMD": "UINT",
        "CL_DEVICE_LOCAL_MEM_SIZE_PER_COMPUTE_UNIT_AMD": "UINT",
        "CL_DEVICE_LOCAL_MEM_BANKS_AMD": "UINT",
        "CL_DEVICE_THREAD_TRACE_SUPPORTED_AMD": "BOOL",
        "CL_DEVICE_GFXIP_MAJOR_AMD": "UINT",
        "CL_DEVICE_GFXIP_MINOR_AMD": "UINT",
        "CL_DEVICE_AVAILABLE_ASYNC_QUEUES_AMD": "UINT",
        "CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_AMD": "SIZE",
        "CL_DEVICE_MAX_WORK_GROUP_SIZE_AMD": "SIZE",
        "CL_DEVICE_PREFERRED_CONSTANT_BUFFER_SIZE_AMD": "SIZE",
        "CL_DEVICE_PCIE_ID_AMD": "UINT",
        "CL_DEVICE_PARENT_DEVICE_EXT": "HANDLE device",
        "CL_DEVICE_PARTITION_TYPES_EXT":
            "PROPERTIES cl_device_partition_property_ext",
        "CL_DEVICE_AFFINITY_DOMAINS_EXT":
            "PROPERTIES cl_device_partition_property_ext",
        "CL_DEVICE_REFERENCE_COUNT_EXT": "UINT",
        "CL_DEVICE_PARTITION_STYLE_EXT":
            "PROPERTIES cl_device_partition_property_ext",
        "CL_DEVICE_EXT_MEM_PADDING_IN_BYTES_QCOM": "SIZE",
        "CL_DEVICE_PAGE_SIZE_QCOM": "SIZE",
        "CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR": "UINT",
        "CL_DEVICE_SVM_CAPABILITIES_ARM":
            "BITFIELD cl_device_svm_capabilities_arm",
        "CL_DEVICE_COMPUTE_UNITS_BITFIELD_ARM": "ULONG",
        "CL_DEVICE_ME_VERSION_INTEL": "UINT",
        "CL_DEVICE_SIMULTANEOUS_INTEROPS_INTEL": "UINT_ARRAY",
        "CL_DEVICE_NUM_SIMULTANEOUS_INTEROPS_INTEL": "UINT",
        "CL_DEVICE_SUB_GROUP_SIZES_INTEL": "SIZE_ARRAY",
        "CL_DEVICE_PLANAR_YUV_MAX_WIDTH_INTEL": "SIZE",
        "CL_DEVICE_PLANAR_YUV_MAX_HEIGHT_INTEL": "SIZE",
        "CL_DEVICE_AVC_ME_VERSION_INTEL": "UINT",
        "CL_DEVICE_AVC_ME_SUPPORTS_TEXTURE_SAMPLER_USE_INTEL": "BOOL",
        "CL_DEVICE_AVC_ME_SUPPORTS_PREEMPTION_INTEL": "BOOL",
        "CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL":
            "BITFIELD cl_device_unified_shared_memory_capabilities_intel",
        "CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL":
            "BITFIELD cl_device_unified_shared_memory_capabilities_intel",
        "CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL":
            "BITFIELD cl_device_unified_shared_memory_capabilities_intel",
        "CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL":
            "BITFIELD cl_device_unified_shared_memory_capabilities_intel",
        "CL_DEVICE_SHARED_SYSTEM_MEM_CAPABILITIES_INTEL":
            "BITFIELD cl_device_unified_shared_memory_capabilities_intel",
        "CL_DEVICE_SCHEDULING_CONTROLS_CAPABILITIES_ARM":
            "BITFIELD cl_device_scheduling_controls_capabilities_arm",
        "CL_DEVICE_SUPPORTED_REGISTER_ALLOCATIONS_ARM": "UINT_ARRAY",
        "CL_DEVICE_MAX_WARP_COUNT_ARM": "UINT",
        "CL_DEVICE_CXX_FOR_OPENCL_NUMERIC_VERSION_EXT": "UINT",
        "CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR": "UINT",
        "CL_DEVICE_MEMORY_CAPABILITIES_IMG": "ULONG",
        "CL_DEVICE_WORKGROUP_PROTECTION_SVM_CAPABILITIES_IMG":
            "BITFIELD cl_device_svm_capabilities",
        "CL_DEVICE_WORKGROUP_PROTECTION_DEVICE_ENQUEUE_CAPABILITIES_IMG":
            "BITFIELD cl_device_device_enqueue_capabilities",
        "CL_DEVICE_SAFETY_MEM_SIZE_IMG": "BYTES",
        "CL_DEVICE_CONTROLLED_TERMINATION_CAPABILITIES_ARM":
            "BITFIELD cl_device_controlled_termination_capabilities_arm",
        "CL_DEVICE_QUEUE_FAMILY_PROPERTIES_INTEL": "BYTES",
        "CL_DEVICE_PCI_BUS_INFO_KHR": "BYTES",
        "CL_DEVICE_IP_VERSION_INTEL": "UINT",
        "CL_DEVICE_ID_INTEL": "UINT",
        "CL_DEVICE_NUM_SLICES_INTEL": "UINT",
        "CL_DEVICE_NUM_SUB_SLICES_PER_SLICE_INTEL": "UINT",
        "CL_DEVICE_NUM_EUS_PER_SUB_SLICE_INTEL": "UINT",
        "CL_DEVICE_NUM_THREADS_PER_EU_INTEL": "UINT",
        "CL_DEVICE_FEATURE_CAPABILITIES_INTEL":
            "BITFIELD cl_device_feature_capabilities_intel",
        "CL_DEVICE_SEMAPHORE_TYPES_KHR": "ENUM_ARRAY cl_semaphore_type_khr",
        "CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR":
            "ENUM_ARRAY cl_external_semaphore_handle_type_khr",
        "CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR":
            "ENUM_ARRAY cl_external_semaphore_handle_type_khr",
        "CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR":
            "ENUM_ARRAY cl_external_memory_handle_type_khr",
        "CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR":
            "ENUM_ARRAY cl_external_memory_handle_type_khr",
        "CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR":
            "BITFIELD cl_device_command_buffer_capabilities_khr",
        "CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR":
            "BITFIELD cl_command_queue_properties",
        "CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR":
            "BITFIELD cl_command_queue_properties",
        "CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT":
            "BITFIELD cl_device_fp_atomic_capabilities_ext",
        "CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT":
            "BITFIELD cl_device_fp_atomic_capabilities_ext",
        "CL_DEVICE_HALF_FP_ATOMIC_CAPABILITIES_EXT":
            "BITFIELD cl_device_fp_atomic_capabilities_ext",
        "CL_DEVICE_JOB_SLOTS_ARM": "UINT",
        "CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR":
            "BITFIELD cl_mutable_dispatch_fields_khr",
        "CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR": "UINT",
        "CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR": "HANDLE_ARRAY device",
        "CL_DEVICE_KERNEL_CLOCK_CAPABILITIES_KHR":
            "BITFIELD cl_device_kernel_clock_capabilities_khr",
        "CL_DEVICE_SVM_TYPE_CAPABILITIES_KHR": "ULONG_ARRAY",
        "CL_DEVICE_SCHEDULING_CONTROLS_CAPABILITIES_IMG":
            "BITFIELD cl_device_scheduling_controls_capabilities_img",
    },
    "cl_context_info": {
        "CL_CONTEXT_REFERENCE_COUNT": "UINT",
        "CL_CONTEXT_DEVICES": "HANDLE_ARRAY device",
        "CL_CONTEXT_PROPERTIES": "PROPERTIES_INTPTR cl_context_properties",
        "CL_CONTEXT_NUM_DEVICES": "UINT",
        "CL_CONTEXT_D3D10_DEVICE_KHR": "POINTER",
        "CL_CONTEXT_D3D10_PREFER_SHARED_RESOURCES_KHR": "BOOL",
        "CL_CONTEXT_D3D11_DEVICE_KHR": "POINTER",
        "CL_CONTEXT_D3D11_PREFER_SHARED_RESOURCES_KHR": "BOOL",
        "CL_CONTEXT_ADAPTER_D3D9_KHR": "POINTER",
        "CL_CONTEXT_ADAPTER_D3D9EX_KHR": "POINTER",
        "CL_CONTEXT_ADAPTER_DXVA_KHR": "POINTER",
        "CL_CONTEXT_VA_API_DISPLAY_INTEL": "POINTER",
        "CL_CONTEXT_D3D9_DEVICE_INTEL": "POINTER",
        "CL_CONTEXT_D3D9EX_DEVICE_INTEL": "POINTER",
        "CL_CONTEXT_DXVA_DEVICE_INTEL": "POINTER",
        "CL_CONTEXT_PERF_HINT_QCOM": "UINT",
    },
    "cl_command_queue_info": {
        "CL_QUEUE_CONTEXT": "HANDLE context",
        "CL_QUEUE_DEVICE": "HANDLE device",
        "CL_QUEUE_REFERENCE_COUNT": "UINT",
        "CL_QUEUE_PROPERTIES": "BITFIELD cl_command_queue_properties",
        "CL_QUEUE_SIZE": "UINT",
        "CL_QUEUE_DEVICE_DEFAULT": "HANDLE command_queue",
        "CL_QUEUE_PROPERTIES_ARRAY": "PROPERTIES cl_queue_properties",
    },
    "cl_mem_info": {
        "CL_MEM_TYPE": "ENUM cl_mem_object_type",
        "CL_MEM_FLAGS": "BITFIELD cl_mem_flags",
        "CL_MEM_SIZE": "SIZE",
        "CL_MEM_HOST_PTR": "POINTER",
        "CL_MEM_MAP_COUNT": "UINT",
        "CL_MEM_REFERENCE_COUNT": "UINT",
        "CL_MEM_CONTEXT": "HANDLE context",
        "CL_MEM_ASSOCIATED_MEMOBJECT": "HANDLE mem",
        "CL_MEM_OFFSET": "SIZE",
        "CL_MEM_USES_SVM_POINTER": "BOOL",
        "CL_MEM_PROPERTIES": "PROPERTIES cl_mem_properties",
        "CL_MEM_D3D10_RESOURCE_KHR": "POINTER",
        "CL_MEM_D3D11_RESOURCE_KHR": "POINTER",
        "CL_MEM_DX9_MEDIA_ADAPTER_TYPE_KHR": "UINT",
        "CL_MEM_DX9_MEDIA_SURFACE_INFO_KHR": "BYTES",
        "CL_MEM_USES_SVM_POINTER_ARM": "BOOL",
        "CL_MEM_VA_API_MEDIA_SURFACE_INTEL": "POINTER",
        "CL_MEM_DX9_RESOURCE_INTEL": "POINTER",
        "CL_MEM_DX9_SHARED_HANDLE_INTEL": "POINTER",
        "CL_MEM_DEVICE_ADDRESS_EXT": "ULONG_ARRAY",
    },
    "cl_image_info": {
        "CL_IMAGE_FORMAT": "IMAGE_FORMAT",
        "CL_IMAGE_ELEMENT_SIZE": "SIZE",
        "CL_IMAGE_ROW_PITCH": "SIZE",
        "CL_IMAGE_SLICE_PITCH": "SIZE",
        "CL_IMAGE_WIDTH": "SIZE",
        "CL_IMAGE_HEIGHT": "SIZE",
        "CL_IMAGE_DEPTH": "SIZE",
        "CL_IMAGE_ARRAY_SIZE": "SIZE",
        "CL_IMAGE_BUFFER": "HANDLE mem",
        "CL_IMAGE_NUM_MIP_LEVELS": "UINT",
        "CL_IMAGE_NUM_SAMPLES": "UINT",
        "CL_IMAGE_D3D10_SUBRESOURCE_KHR": "UINT",
        "CL_IMAGE_D3D11_SUBRESOURCE_KHR": "UINT",
        "CL_IMAGE_DX9_MEDIA_PLANE_KHR": "UINT",
        "CL_IMAGE_VA_API_PLANE_INTEL": "UINT",
        "CL_IMAGE_DX9_PLANE_INTEL": "UINT",
    },
    "cl_pipe_info": {
        "CL_PIPE_PACKET_SIZE": "UINT",
        "CL_PIPE_MAX_PACKETS": "UINT",
        "CL_PIPE_PROPERTIES": "PROPERTIES_INTPTR cl_pipe_properties",
    },
    "cl_sampler_info": {
        "CL_SAMPLER_REFERENCE_COUNT": "UINT",
        "CL_SAMPLER_CONTEXT": "HANDLE context",
        "CL_SAMPLER_NORMALIZED_COORDS": "BOOL",
        "CL_SAMPLER_ADDRESSING_MODE": "ENUM cl_addressing_mode",
        "CL_SAMPLER_FILTER_MODE": "ENUM cl_filter_mode",
        "CL_SAMPLER_MIP_FILTER_MODE": "ENUM cl_filter_mode",
        "CL_SAMPLER_LOD_MIN": "FLOAT",
        "CL_SAMPLER_LOD_MAX": "FLOAT",
        "CL_SAMPLER_PROPERTIES": "PROPERTIES cl_sampler_properties",
    },
    "cl_program_info": {
        "CL_PROGRAM_REFERENCE_COUNT": "UINT",
        "CL_PROGRAM_CONTEXT": "HANDLE context",
        "CL_PROGRAM_NUM_DEVICES": "UINT",
        "CL_PROGRAM_DEVICES": "HANDLE_ARRAY device",
        "CL_PROGRAM_SOURCE": "STRING",
        "CL_PROGRAM_BINARY_SIZES": "SIZE_ARRAY",
        "CL_PROGRAM_BINARIES": "BINARIES",
        "CL_PROGRAM_NUM_KERNELS": "SIZE",
        "CL_PROGRAM_KERNEL_NAMES": "STRING",
        "CL_PROGRAM_IL": "BYTES",
        "CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT": "BOOL",
        "CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT": "BOOL",
        "CL_PROGRAM_NUM_HOST_PIPES_INTEL": "SIZE",
        "CL_PROGRAM_HOST_PIPE_NAMES_INTEL": "STRING",
    },
    "cl_program_build_info": {
        "CL_PROGRAM_BUILD_STATUS": "ENUM cl_build_status",
        "CL_PROGRAM_BUILD_OPTIONS": "STRING",
        "CL_PROGRAM_BUILD_LOG": "STRING",
        "CL_PROGRAM_BINARY_TYPE": "ENUM cl_program_binary_type",
        "CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE": "SIZE",
    },
    "cl_kernel_info": {
        "CL_KERNEL_FUNCTION_NAME": "STRING",
        "CL_KERNEL_NUM_ARGS": "UINT",
        "CL_KERNEL_REFERENCE_COUNT": "UINT",
        "CL_KERNEL_CONTEXT": "HANDLE context",
        "CL_KERNEL_PROGRAM": "HANDLE program",
        "CL_KERNEL_ATTRIBUTES": "STRING",
        "CL_KERNEL_MAX_WARP_COUNT_ARM": "UINT",
    },
    "cl_kernel_work_group_info": {
        "CL_KERNEL_WORK_GROUP_SIZE": "SIZE",
        "CL_KERNEL_COMPILE_WORK_GROUP_SIZE": "SIZE_ARRAY",
        "CL_KERNEL_LOCAL_MEM_SIZE": "ULONG",
        "CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE": "SIZE",
        "CL_KERNEL_PRIVATE_MEM_SIZE": "ULONG",
        "CL_KERNEL_GLOBAL_WORK_SIZE": "SIZE_ARRAY",
        "CL_KERNEL_SPILL_MEM_SIZE_INTEL": "ULONG",
        "CL_KERNEL_ALLOCATIONS_INFO_INTEL": "BYTES",
    },
    "cl_kernel_arg_info": {
        "CL_KERNEL_ARG_ADDRESS_QUALIFIER":
            "ENUM cl_kernel_arg_address_qualifier",
        "CL_KERNEL_ARG_ACCESS_QUALIFIER":
            "ENUM cl_kernel_arg_access_qualifier",
        "CL_KERNEL_ARG_TYPE_NAME": "STRING",
        "CL_KERNEL_ARG_TYPE_QUALIFIER":
            "BITFIELD cl_kernel_arg_type_qualifier",
        "CL_KERNEL_ARG_NAME": "STRING",
    },
    "cl_kernel_sub_group_info": {
        "CL_KERNEL_MAX_NUM_SUB_GROUPS": "SIZE",
        "CL_KERNEL_COMPILE_NUM_SUB_GROUPS": "SIZE",
        "CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE": "SIZE",
        "CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE": "SIZE",
        "CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT": "SIZE_ARRAY",
        "CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL": "SIZE",
    },
    "cl_event_info": {
        "CL_EVENT_COMMAND_QUEUE": "HANDLE command_queue",
        "CL_EVENT_COMMAND_TYPE": "ENUM cl_command_type",
        "CL_EVENT_REFERENCE_COUNT": "UINT",
        # A negative status is an error code.
        "CL_EVENT_COMMAND_EXECUTION_STATUS":
            "ENUM cl_command_execution_status",
        "CL_EVENT_CONTEXT": "HANDLE context",
        "CL_EVENT_COMMAND_TERMINATION_REASON_ARM":
            "ENUM cl_command_termination_reason_arm",
    },
    "cl_profiling_info": {
        "CL_PROFILING_COMMAND_QUEUED": "ULONG",
        "CL_PROFILING_COMMAND_SUBMIT": "ULONG",
        "CL_PROFILING_COMMAND_START": "ULONG",
        "CL_PROFILING_COMMAND_END": "ULONG",
        "CL_PROFILING_COMMAND_COMPLETE": "ULONG",
    },
}


# How far a pointer parameter reaches (clgc_param_t's count_param,
# elem_size and unknown; clgc_command_reach): the bytes a command may read
# or write through it, from the parameters OpenCL's conventions pair it
# with. The size of each element type clgc knows, as a C expression.
POINTEE_SIZES = {
    "char": "1", "unsigned char": "1", "cl_char": "1", "cl_uchar": "1",
    "cl_int": "4", "cl_uint": "4", "cl_bool": "4", "cl_build_status": "4",
    "cl_long": "8", "cl_ulong": "8", "size_t": "sizeof(size_t)",
    "cl_context_properties": "sizeof(intptr_t)",
    "cl_device_partition_property": "sizeof(intptr_t)",
    "cl_queue_properties": "8", "cl_mem_properties": "8",
    "cl_sampler_properties": "8", "cl_pipe_properties": "sizeof(intptr_t)",
    "cl_image_format": "sizeof(cl_image_format)",
    "cl_platform_id": "sizeof(void *)", "cl_device_id": "sizeof(void *)",
    "cl_context": "sizeof(void *)", "cl_command_queue": "sizeof(void *)",
    "cl_program": "sizeof(void *)", "cl_kernel": "sizeof(void *)",
    "cl_mem": "sizeof(void *)", "cl_event": "sizeof(void *)",
    "cl_sampler": "sizeof(void *)",
}
# Integer parameters that count the typed pointer after them.
COUNTS = ("count", "work_dim")


def pointer_reach(params, i):
    """(count, size, unknown) for parameter i of a command's params: the
    index of the integer parameter whose value counts its elements (-1:
    one element), the C expression of an element's size ("0": no reach),
    and where it cannot be known, why (None otherwise). A handle or a
    callback has no reach and no reason: it points at nothing the caller
    sizes."""
    p = params[i]
    if p.ctype != "POINTER" or "*" not in p.type:
        return -1, "0", None
    names = [q.name for q in params]
    bare = p.type[6:] if p.type.startswith("const ") else p.type
    star = bare.index("*")
    if bare == "void *" or bare == "void*":
        for n in (p.name + "_size",
                  p.name[:-6] + "_size" if p.name.endswith("_value") else "",
                  "size"):
            if n and n in names and params[names.index(n)].ctype != "POINTER":
                return names.index(n), "1", None
        return -1, "0", "no parameter gives its size"
    if p.type == "const char *":
        return -1, "0", "a NUL-terminated string"
    if "*" in bare[star + 1:]:
        size = "sizeof(void *)"                 # an array of pointers
    else:
        elem = bare[:star].strip()
        if elem not in POINTEE_SIZES:
            return -1, "0", "the size of %s is not in clgc's table" % elem
        size = POINTEE_SIZES[elem]
    if (p.name.endswith("_ret") or p.name.startswith("num_") or
            p.name == "event"):
        return -1, size, None
    for j in range(i - 1, -1, -1):
        q = params[j]
        if q.ctype != "POINTER" and (q.name.startswith("num_") or
                                     q.name in COUNTS):
            return j, size, None
    return -1, "0", "no parameter counts it"

