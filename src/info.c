/* One call for every info query (clgc_info_get, include/clgc/names.h),
 * above the wrappers it calls. */

#include <stdint.h>
#include <string.h>

#include "names.h"

typedef cl_int (*clgc__info_fn)(void *o, const clgc_info_extra_t *x, cl_uint p,
                                size_t s, void *v, size_t *r);

#define CLGC__GET(f, call)                                                     \
    static cl_int f(void *o, const clgc_info_extra_t *x, cl_uint p, size_t s,  \
                    void *v, size_t *r)                                        \
    {                                                                          \
        (void)x;                                                               \
        return call;                                                           \
    }
CLGC__GET(clgc__get_platform, clgc_clGetPlatformInfo(o, p, s, v, r))
CLGC__GET(clgc__get_device, clgc_clGetDeviceInfo(o, p, s, v, r))
CLGC__GET(clgc__get_context, clgc_clGetContextInfo(o, p, s, v, r))
CLGC__GET(clgc__get_queue, clgc_clGetCommandQueueInfo(o, p, s, v, r))
CLGC__GET(clgc__get_mem, clgc_clGetMemObjectInfo(o, p, s, v, r))
CLGC__GET(clgc__get_image, clgc_clGetImageInfo(o, p, s, v, r))
CLGC__GET(clgc__get_pipe, clgc_clGetPipeInfo(o, p, s, v, r))
CLGC__GET(clgc__get_sampler, clgc_clGetSamplerInfo(o, p, s, v, r))
CLGC__GET(clgc__get_program, clgc_clGetProgramInfo(o, p, s, v, r))
CLGC__GET(clgc__get_build, clgc_clGetProgramBuildInfo(o, x->device, p, s, v, r))
CLGC__GET(clgc__get_kernel, clgc_clGetKernelInfo(o, p, s, v, r))
CLGC__GET(clgc__get_work_group,
          clgc_clGetKernelWorkGroupInfo(o, x->device, p, s, v, r))
CLGC__GET(clgc__get_arg, clgc_clGetKernelArgInfo(o, x->arg_index, p, s, v, r))
CLGC__GET(clgc__get_sub_group,
          clgc_clGetKernelSubGroupInfo(o, x->device, p, x->input_size, x->input,
                                       s, v, r))
CLGC__GET(clgc__get_event, clgc_clGetEventInfo(o, p, s, v, r))
CLGC__GET(clgc__get_profiling, clgc_clGetEventProfilingInfo(o, p, s, v, r))
#undef CLGC__GET

/* Each family's command and whether it reads extra, by the command's name
 * (the families are gen/tables.py's INFO_FAMILIES). */
static const struct {
    const char *command;
    clgc__info_fn get;
    int extra;
} clgc__info_getters[] = {
    {"clGetPlatformInfo", clgc__get_platform, 0},
    {"clGetDeviceInfo", clgc__get_device, 0},
    {"clGetContextInfo", clgc__get_context, 0},
    {"clGetCommandQueueInfo", clgc__get_queue, 0},
    {"clGetMemObjectInfo", clgc__get_mem, 0},
    {"clGetImageInfo", clgc__get_image, 0},
    {"clGetPipeInfo", clgc__get_pipe, 0},
    {"clGetSamplerInfo", clgc__get_sampler, 0},
    {"clGetProgramInfo", clgc__get_program, 0},
    {"clGetProgramBuildInfo", clgc__get_build, 1},
    {"clGetKernelInfo", clgc__get_kernel, 0},
    {"clGetKernelWorkGroupInfo", clgc__get_work_group, 1},
    {"clGetKernelArgInfo", clgc__get_arg, 1},
    {"clGetKernelSubGroupInfo", clgc__get_sub_group, 1},
    {"clGetEventInfo", clgc__get_event, 0},
    {"clGetEventProfilingInfo", clgc__get_profiling, 0},
};

int32_t
clgc_info_get(const clgc_info_family_t *family, void *object,
              const clgc_info_extra_t *extra, uint32_t param, size_t size,
              void *value, size_t *size_ret)
{
    uintptr_t at = (uintptr_t)family, first = (uintptr_t)clgc__info_families;

    /* One of the table's, by its address: a pointer from elsewhere is not
     * read. */
    if (at < first ||
        at >= (uintptr_t)(clgc__info_families + clgc__n_info_families) ||
        (at - first) % sizeof(*family) != 0)
        return CL_INVALID_VALUE;
    for (size_t i = 0;
         i < sizeof(clgc__info_getters) / sizeof(clgc__info_getters[0]); i++)
        if (strcmp(clgc__info_getters[i].command, family->command) == 0) {
            if (clgc__info_getters[i].extra && extra == NULL)
                return CL_INVALID_VALUE;
            return clgc__info_getters[i].get(object, extra, param, size, value,
                                             size_ret);
        }
    return CL_INVALID_VALUE;
}
