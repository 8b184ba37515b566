"""Exceptions to the registry's regular shape, kept as data.

Each table says what is special about some commands and why; the templates in
generate.py read these tables and never test a command's name themselves.
"""

# Commands that clgc writes by hand in src/ instead of generating: they hand
# out clgc's own wrappers rather than the platform's raw function pointers.
HANDWRITTEN = {
    "clGetExtensionFunctionAddress": "returns clgc_<name> for registry commands",
    "clGetExtensionFunctionAddressForPlatform": "returns clgc_<name> for registry commands",
    "clSetEventCallback": "watches its callbacks for failures PoCL never calls back for (src/callback.c)",
    "clSetUserEventStatus": "a failure set through clgc wakes the waits and the watcher (src/wait.c)",
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
        # The commands that OpenCL 3.1.1's registry added to 3.0.13's.
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
        ], []),
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

