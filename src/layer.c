/* libclgc-layer: an OpenCL layer (the Khronos layer interface, CL/cl_layer.h)
 * that puts every dispatched OpenCL call of a program that does not know
 * clgc through clgc's safe regions, and makes clWaitForEvents and clFinish
 * clgc's cooperative wait. The loader (ocl-icd, or the Khronos loader)
 * loads it from OPENCL_LAYERS and calls clInitLayer once with the next
 * dispatch table. This library answers the loader and chooses the
 * runtime; the table and its entries are libclgc's (src/dispatch.c), so
 * that they are the wrappers themselves. docs/layer.md says how to use it
 * and what it cannot do. */

/* dladdr, to find libclgc-boehm beside this library. */
#define _GNU_SOURCE 1

#include "layer.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgc.h"

#define CLGC__LAYER_NAME "clgc (GC-safe OpenCL, libclgc-layer)"

static void
clgc__layer_say(const char *what, const char *detail)
{
    fprintf(stderr, "clgc layer: %s%s\n", what, detail != NULL ? detail : "");
}

/* Whether fn lies in a libclgc that has a layer's table: another copy of
 * the layer below this one, on this libclgc (whose clgc__layer_init would
 * refuse it too) or on another copy of libclgc. Wrapping it would put
 * every call in two regions. */
static int
clgc__layer_is_ours(const void *fn)
{
    Dl_info where;
    void *lib;
    int ours;

    if (fn == NULL || dladdr(fn, &where) == 0 || where.dli_fname == NULL)
        return 0;
    lib = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (lib == NULL)
        return 0;
    ours = dlsym(lib, "clgc__layer_init") != NULL;
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

/* CLGC_RUNTIME=guile: the Guile binding's runtime, for a Guile program
 * that calls libOpenCL through (system foreign). The layer asks Guile
 * itself to load the binding's extension (load-extension, which searches
 * GUILE_EXTENSIONS_PATH and Guile's extension directory; or the file
 * CLGC_GUILE_EXTENSION names, as the module does) with its runtime-only
 * init function, so that nothing of the binding's Scheme side is defined.
 * Guile's entry points are looked up, not linked: the layer must load into
 * processes without Guile. scm_with_guile enters Guile for the load (the
 * loader's first OpenCL call may come from any thread) and catches what
 * it throws (a missing extension), printing it. */
struct clgc__guile_load {
    void *(*with_guile)(void *(*)(void *), void *);
    void *(*from_utf8)(const char *);
    void *(*load_extension)(void *, void *);
    const char *file;
};

static void *
clgc__layer_guile_load(void *p)
{
    struct clgc__guile_load *g = p;

    g->load_extension(g->from_utf8(g->file),
                      g->from_utf8("scm_init_clgc_runtime"));
    return p;
}

static void
clgc__layer_guile(void)
{
    struct clgc__guile_load g;
    const char *name;

    *(void **)&g.with_guile = dlsym(RTLD_DEFAULT, "scm_with_guile");
    *(void **)&g.from_utf8 = dlsym(RTLD_DEFAULT, "scm_from_utf8_string");
    *(void **)&g.load_extension = dlsym(RTLD_DEFAULT, "scm_load_extension");
    if (g.with_guile == NULL || g.from_utf8 == NULL ||
        g.load_extension == NULL) {
        clgc__layer_say("CLGC_RUNTIME=guile, but this process has no Guile "
                        "(no scm_with_guile): the layer installs no runtime",
                        NULL);
        return;
    }
    g.file = getenv("CLGC_GUILE_EXTENSION");
    if (g.file == NULL || *g.file == '\0')
        g.file = "libguile-clgc-v-0";
    if (g.with_guile(clgc__layer_guile_load, &g) == NULL) {
        clgc__layer_say("CLGC_RUNTIME=guile, but the Guile binding's "
                        "extension cannot be loaded: ",
                        g.file);
        return;
    }
    name = clgc_runtime_current()->name;
    if (name == NULL || strcmp(name, "guile") != 0)
        clgc__layer_say("CLGC_RUNTIME=guile, but another runtime is "
                        "installed: ",
                        name != NULL ? name : "(unnamed)");
}

/* The runtime: the program's own if it installed one (installing then
 * answers CLGC_EALREADY, and it stays), else CLGC_RUNTIME's. */
static void
clgc__layer_runtime(void)
{
    const char *want = getenv("CLGC_RUNTIME");

    if (want == NULL || *want == '\0' || strcmp(want, "none") == 0)
        return;
    if (strcmp(want, "boehm") == 0)
        clgc__layer_boehm();
    else if (strcmp(want, "guile") == 0)
        clgc__layer_guile();
    else
        clgc__layer_say("CLGC_RUNTIME is none, boehm or guile; ignoring ",
                        want);
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
    const char *wait = getenv("CLGC_LAYER_WAIT");
    int cooperative = wait == NULL || strcmp(wait, "plain") != 0;
    int rc;

    if (target_dispatch == NULL || num_entries_ret == NULL ||
        layer_dispatch_ret == NULL)
        return CL_INVALID_VALUE;
    if (wait != NULL && *wait != '\0' && cooperative &&
        strcmp(wait, "clgc") != 0)
        clgc__layer_say("CLGC_LAYER_WAIT is clgc or plain; using clgc for ",
                        wait);
    rc = CLGC__LAYER_SLOT(clFlush, num_entries) &&
                 clgc__layer_is_ours((const void *)target_dispatch->clFlush)
             ? CLGC_EALREADY
             : clgc__layer_init(num_entries, target_dispatch, cooperative,
                                num_entries_ret, layer_dispatch_ret);
    if (rc == CLGC_EALREADY) {
        /* Initialised twice, or a second copy above the first: it hands
         * calls straight on. */
        clgc__layer_say("loaded twice; the second instance passes calls "
                        "straight through",
                        NULL);
        *num_entries_ret = num_entries;
        *layer_dispatch_ret = target_dispatch;
        return CL_SUCCESS;
    }
    if (rc != CLGC_OK)
        return CL_INVALID_VALUE;
    clgc__layer_runtime();
    return CL_SUCCESS;
}

/* The Khronos loader's newer entry (cl_loader_layers 1.0.1), which it
 * prefers where a layer has it. No layer property is defined yet: the
 * list must be empty (or NULL). Declared here, as headers before
 * v2024.10.24 lack it. */
CL_API_ENTRY cl_int CL_API_CALL clInitLayerWithProperties(
    cl_uint num_entries, const cl_icd_dispatch *target_dispatch,
    cl_uint *num_entries_ret, const cl_icd_dispatch **layer_dispatch_ret,
    const cl_properties *properties);

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clInitLayerWithProperties(cl_uint num_entries,
                          const cl_icd_dispatch *target_dispatch,
                          cl_uint *num_entries_ret,
                          const cl_icd_dispatch **layer_dispatch_ret,
                          const cl_properties *properties)
{
    if (properties != NULL && properties[0] != 0)
        return CL_INVALID_PROPERTY;
    return clInitLayer(num_entries, target_dispatch, num_entries_ret,
                       layer_dispatch_ret);
}
