/* libclgc-layer: an OpenCL layer (the Khronos layer interface, CL/cl_layer.h)
 * that puts every dispatched OpenCL call of a program that does not know
 * clgc through clgc's safe regions, and makes clWaitForEvents and clFinish
 * clgc's cooperative wait. The loader (ocl-icd, or the Khronos loader)
 * loads it from OPENCL_LAYERS and calls clInitLayer once with the next
 * dispatch table; the entries (src/gen/layer.c) call through that table.
 * docs/layer.md says how to use it and what it cannot do. */

/* dladdr, to find libclgc-boehm beside this library. */
#define _GNU_SOURCE 1

#include "layer.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgc/wait.h"

struct _cl_icd_dispatch clgc__next;
__thread int clgc__layer_inner;

/* The table the loader calls: written once by the first clInitLayer,
 * read-only afterwards. */
static struct _cl_icd_dispatch clgc__layer_table;
static atomic_int clgc__layer_taken;

/* clFinish inside one region, for the cases the cooperative one hands
 * back (see clgc__layer_finish). */
static cl_api_clFinish clgc__layer_region_finish;

#define CLGC__LAYER_NAME "clgc (GC-safe OpenCL, libclgc-layer)"

static void
clgc__layer_say(const char *what, const char *detail)
{
    fprintf(stderr, "clgc layer: %s%s\n", what, detail != NULL ? detail : "");
}

/* clWaitForEvents as clgc's cooperative wait. */
static cl_int CL_API_CALL
clgc__layer_wait(cl_uint num_events, const cl_event *event_list)
{
    cl_int ret;

    if (clgc__layer_inner)
        return clgc__next.clWaitForEvents(num_events, event_list);
    clgc__layer_inner = 1;
    ret = clgc_wait_for_events(num_events, event_list);
    clgc__layer_inner = 0;
    return ret;
}

/* clFinish as a marker and clgc's cooperative wait for it: the marker
 * completes when every command enqueued before it has. Where the marker
 * cannot be made, or the wait reports a failed command, the driver's own
 * clFinish (inside a region) gives the answer clFinish would. */
static cl_int CL_API_CALL
clgc__layer_finish(cl_command_queue command_queue)
{
    cl_event marker;
    cl_int ret;

    if (clgc__layer_inner)
        return clgc__next.clFinish(command_queue);
    if (clgc__next.clEnqueueMarkerWithWaitList(command_queue, 0, NULL,
                                               &marker) != CL_SUCCESS)
        return clgc__layer_region_finish(command_queue);
    clgc__layer_inner = 1;
    ret = clgc_wait_for_events(1, &marker);
    clgc__layer_inner = 0;
    clgc__next.clReleaseEvent(marker);
    if (ret != CL_SUCCESS)
        return clgc__layer_region_finish(command_queue);
    return CL_SUCCESS;
}

/* Whether fn lies in a copy of this layer: OPENCL_LAYERS naming the layer
 * twice under one path loads it once (ocl-icd compares the handles), but
 * two copies of the file are two libraries, and the second would wrap the
 * first. The library fn lies in answers clGetLayerInfo with this name. */
static int
clgc__layer_is_ours(const void *fn)
{
    cl_int(CL_API_CALL * info)(cl_layer_info, size_t, void *, size_t *);
    char name[sizeof CLGC__LAYER_NAME];
    Dl_info where;
    void *lib;
    int ours;

    if (fn == NULL || dladdr(fn, &where) == 0 || where.dli_fname == NULL)
        return 0;
    lib = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (lib == NULL)
        return 0;
    *(void **)&info = dlsym(lib, "clGetLayerInfo");
    ours = info != NULL &&
           info(CL_LAYER_NAME, sizeof name, name, NULL) == CL_SUCCESS &&
           memcmp(name, CLGC__LAYER_NAME, sizeof name) == 0;
    dlclose(lib);
    return ours;
}

/* CLGC_RUNTIME=boehm: install the Boehm adapter (libclgc-boehm, beside
 * this library) when the process already has bdwgc. The adapter links
 * bdwgc, so loading it in a process without one would bring in a
 * collector nobody initialised: the layer looks for GC_do_blocking first. */
static void
clgc__layer_boehm(void)
{
    int (*install)(unsigned);
    char path[PATH_MAX];
    const char *slash;
    Dl_info self;
    void *lib = NULL;
    int rc;

    if (dlsym(RTLD_DEFAULT, "GC_do_blocking") == NULL) {
        clgc__layer_say("CLGC_RUNTIME=boehm, but this process has no bdwgc "
                        "(no GC_do_blocking): the layer installs no runtime",
                        NULL);
        return;
    }
    if (dladdr((void *)clgc__layer_boehm, &self) != 0 &&
        self.dli_fname != NULL &&
        (slash = strrchr(self.dli_fname, '/')) != NULL &&
        (size_t)(slash - self.dli_fname) + sizeof "/libclgc-boehm.so.0" <=
            sizeof path) {
        memcpy(path, self.dli_fname, (size_t)(slash - self.dli_fname));
        strcpy(path + (slash - self.dli_fname), "/libclgc-boehm.so.0");
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (lib == NULL)
        lib = dlopen("libclgc-boehm.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        clgc__layer_say("CLGC_RUNTIME=boehm, but libclgc-boehm cannot be "
                        "loaded: ",
                        dlerror());
        return;
    }
    *(void **)&install = dlsym(lib, "clgc_boehm_install");
    if (install == NULL) {
        clgc__layer_say("libclgc-boehm lacks clgc_boehm_install", NULL);
        return;
    }
    rc = install(0);
    if (rc == CLGC_EALREADY)
        return; /* the program installed its own runtime: it stays */
    if (rc != CLGC_OK)
        clgc__layer_say("the Boehm adapter refused to install: ",
                        clgc_strerror(rc));
}

/* The runtime: the program's own if it installed one (clgc_runtime_install
 * then answers CLGC_EALREADY, and it stays), else CLGC_RUNTIME's. */
static void
clgc__layer_runtime(void)
{
    const char *want = getenv("CLGC_RUNTIME");

    if (want == NULL || *want == '\0' || strcmp(want, "none") == 0)
        return;
    if (strcmp(want, "boehm") == 0) {
        clgc__layer_boehm();
        return;
    }
    clgc__layer_say("CLGC_RUNTIME is none or boehm; ignoring ", want);
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clGetLayerInfo(cl_layer_info param_name, size_t param_value_size,
               void *param_value, size_t *param_value_size_ret)
{
    cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    const void *value;
    size_t size;

    switch (param_name) {
    case CL_LAYER_API_VERSION:
        value = &version;
        size = sizeof version;
        break;
    case CL_LAYER_NAME:
        value = CLGC__LAYER_NAME;
        size = sizeof CLGC__LAYER_NAME;
        break;
    default:
        return CL_INVALID_VALUE;
    }
    if (param_value != NULL) {
        if (param_value_size < size)
            return CL_INVALID_VALUE;
        memcpy(param_value, value, size);
    }
    if (param_value_size_ret != NULL)
        *param_value_size_ret = size;
    return CL_SUCCESS;
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clInitLayer(cl_uint num_entries, const cl_icd_dispatch *target_dispatch,
            cl_uint *num_entries_ret,
            const cl_icd_dispatch **layer_dispatch_ret)
{
    const cl_uint slots = sizeof clgc__layer_table / sizeof(void *);
    const char *wait = getenv("CLGC_LAYER_WAIT");
    cl_uint n = num_entries < slots ? num_entries : slots;

    if (target_dispatch == NULL || num_entries_ret == NULL ||
        layer_dispatch_ret == NULL)
        return CL_INVALID_VALUE;
    if (atomic_exchange(&clgc__layer_taken, 1) ||
        (CLGC__LAYER_SLOT(clFlush, num_entries) &&
         clgc__layer_is_ours((const void *)target_dispatch->clFlush))) {
        /* Initialised twice, or a second copy above the first: wrapping
         * its own table would loop, wrapping the other copy's would put
         * every call in two regions. It hands calls straight on. */
        clgc__layer_say("loaded twice; the second instance passes calls "
                        "straight through",
                        NULL);
        *num_entries_ret = num_entries;
        *layer_dispatch_ret = target_dispatch;
        return CL_SUCCESS;
    }
    memcpy(&clgc__next, target_dispatch, n * sizeof(void *));
    clgc__layer_table = clgc__next;
    clgc__layer_fill(&clgc__layer_table, n);
    clgc__layer_region_finish = clgc__layer_table.clFinish;
    if (wait == NULL || strcmp(wait, "plain") != 0) {
        if (wait != NULL && *wait != '\0' && strcmp(wait, "clgc") != 0)
            clgc__layer_say("CLGC_LAYER_WAIT is clgc or plain; using clgc "
                            "for ",
                            wait);
        if (CLGC__LAYER_SLOT(clWaitForEvents, n) &&
            clgc__next.clWaitForEvents != NULL)
            clgc__layer_table.clWaitForEvents = clgc__layer_wait;
        if (CLGC__LAYER_SLOT(clEnqueueMarkerWithWaitList, n) &&
            clgc__next.clFinish != NULL &&
            clgc__next.clEnqueueMarkerWithWaitList != NULL &&
            clgc__next.clReleaseEvent != NULL)
            clgc__layer_table.clFinish = clgc__layer_finish;
    }
    clgc__layer_runtime();
    *num_entries_ret = n;
    *layer_dispatch_ret = &clgc__layer_table;
    return CL_SUCCESS;
}
