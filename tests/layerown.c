/* A program that links clgc and installs its own runtime, then calls
 * OpenCL directly (not through the wrappers) with the layer loaded
 * (tests/layer.sh): the layer uses the program's runtime, whatever
 * CLGC_RUNTIME says. The runtime here counts its safe regions; each call
 * on the stub must come in exactly one of them. */

#include <stdio.h>
#include <string.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include "clgc/runtime.h"
#include "stub/stub.h"

static unsigned long regions;

static void *
counting_region(clgc_fn_t fn, void *arg)
{
    regions++;
    return fn(arg);
}

static void *
counting_active(clgc_fn_t fn, void *arg)
{
    return fn(arg);
}

int
main(void)
{
    static const clgc_runtime_t counting = {.version = CLGC_RUNTIME_VERSION,
                                            .name = "counting",
                                            .safe_region = counting_region,
                                            .active_region = counting_active};
    cl_platform_id ids[16], p = NULL;
    struct stub_control *ctl = NULL;
    cl_uint n = 0;
    int failures = 0;

    if (clgc_runtime_install(&counting) != CLGC_OK) {
        printf("FAIL: cannot install the counting runtime\n");
        return 1;
    }
    if (clGetPlatformIDs(16, ids, &n) != CL_SUCCESS)
        return 1;
    for (cl_uint i = 0; i < n && i < 16; i++) {
        char name[64] = "";

        clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strcmp(name, STUB_PLATFORM_NAME) == 0)
            p = ids[i];
    }
    if (p == NULL || clGetPlatformInfo(p, STUB_PLATFORM_CONTROL, sizeof ctl,
                                       &ctl, NULL) != CL_SUCCESS) {
        printf("FAIL: no stub platform\n");
        return 1;
    }
    for (unsigned i = 1; i <= 3; i++) {
        ctl->reset();
        regions = 0;
        clFlush(ctl->object(p, i));
        if (ctl->calls != 1 || regions != 1) {
            printf("FAIL: clFlush: %lu stub calls in %lu regions\n", ctl->calls,
                   regions);
            failures++;
        }
    }
    if (strcmp(clgc_runtime_current()->name, "counting") != 0) {
        printf("FAIL: the runtime is now %s\n", clgc_runtime_current()->name);
        failures++;
    }
    printf("%s\n", failures ? "FAIL" : "ok");
    return failures != 0;
}
