/* The hand-written half of the stub ICD: its platforms and objects, the
 * answers the ICD loader needs (cl_khr_icd), the extension lookup and the
 * call log. tests/gen/stub_icd.c holds the recording function of every
 * command and the dispatch table. See stub.h. */

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stub.h"

/* Only the three entry points the loader looks up with dlsym are exported:
 * everything else is reached through the dispatch table, and an exported
 * clGetPlatformInfo of ours must never be what the test binary calls. */
#define STUB_EXPORT __attribute__((visibility("default")))

/* No registry command ends with it, so the loader never routes a lookup
 * by name suffix to the stub. */
#define STUB_ICD_SUFFIX "clgcSTUB"

struct _cl_platform_id {
    const struct _cl_icd_dispatch *dispatch;
    const char *name;
    int refusing; /* every extension lookup answers NULL */
};

/* Any OpenCL object of the stub: only the first word matters. */
struct stub_object {
    const struct _cl_icd_dispatch *dispatch;
    unsigned id;
};

/* The refusing platform's table is a copy, so that its objects carry a
 * dispatch pointer of their own. */
static struct _cl_icd_dispatch stub_refusing_dispatch;

static struct _cl_platform_id stub_platforms[2] = {
    {&stub_dispatch, STUB_PLATFORM_NAME, 0},
    {&stub_refusing_dispatch, STUB_REFUSING_NAME, 1},
};
#define STUB_N_PLATFORMS 2

static struct stub_object stub_objects[STUB_N_PLATFORMS][STUB_N_OBJECTS];
static struct stub_object stub_context = {&stub_dispatch, STUB_N_OBJECTS};
static void *stub_object(cl_platform_id platform, unsigned i);
static void stub_reset(void);
static void stub_clear_entry(size_t offset);
static struct stub_control stub_ctl = {
    .object = stub_object,
    .made_context = &stub_context,
    .reset = stub_reset,
    .clear_entry = stub_clear_entry,
};
static pthread_mutex_t stub_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t stub_once = PTHREAD_ONCE_INIT;

static void
stub_init(void)
{
    stub_refusing_dispatch = stub_dispatch;
    for (unsigned p = 0; p < STUB_N_PLATFORMS; p++) {
        for (unsigned i = 0; i < STUB_N_OBJECTS; i++) {
            stub_objects[p][i].dispatch = stub_platforms[p].dispatch;
            stub_objects[p][i].id = i;
        }
    }
}

/* The stub's index of a platform handle, or -1. */
static int
stub_platform_index(cl_platform_id platform)
{
    for (int p = 0; p < STUB_N_PLATFORMS; p++)
        if (platform == &stub_platforms[p])
            return p;
    return -1;
}

static void *
stub_object(cl_platform_id platform, unsigned i)
{
    int p = stub_platform_index(platform);

    if (p < 0 || i >= STUB_N_OBJECTS)
        return NULL;
    return &stub_objects[p][i];
}

void *
stub_made_context(void)
{
    return &stub_context;
}

static void
stub_reset(void)
{
    pthread_mutex_lock(&stub_lock);
    stub_ctl.calls = 0;
    stub_ctl.hooked = 0;
    stub_ctl.lookups = 0;
    memset(stub_ctl.log, 0, sizeof(stub_ctl.log));
    pthread_mutex_unlock(&stub_lock);
}

/* Only the refusing platform's table is writable; the test reaches the
 * stub through the other one, so the table is filled (stub_init) by now. */
static void
stub_clear_entry(size_t offset)
{
    if (offset + sizeof(void *) <= sizeof(stub_refusing_dispatch))
        memset((char *)&stub_refusing_dispatch + offset, 0, sizeof(void *));
}

void
stub_record(unsigned index, unsigned nargs, const uint64_t *args)
{
    /* The probe runs outside the lock: it is the test's code. */
    int probe = stub_ctl.probe != NULL ? stub_ctl.probe() : -1;
    struct stub_call *call;

    pthread_mutex_lock(&stub_lock);
    if (stub_ctl.calls < STUB_LOG_SIZE) {
        call = &stub_ctl.log[stub_ctl.calls];
        call->index = index;
        call->nargs = nargs < STUB_MAX_ARGS ? nargs : STUB_MAX_ARGS;
        if (call->nargs > 0)
            memcpy(call->args, args, call->nargs * sizeof(args[0]));
        call->probe = probe;
    }
    stub_ctl.calls++;
    pthread_mutex_unlock(&stub_lock);
}

static void
stub_count_hooked(void)
{
    pthread_mutex_lock(&stub_lock);
    stub_ctl.hooked++;
    pthread_mutex_unlock(&stub_lock);
}

/* Copy an info value the OpenCL way (size query, then the value). */
static cl_int
stub_info(const void *value, size_t size, size_t param_value_size,
          void *param_value, size_t *param_value_size_ret)
{
    if (param_value != NULL) {
        if (param_value_size < size)
            return CL_INVALID_VALUE;
        memcpy(param_value, value, size);
    }
    if (param_value_size_ret != NULL)
        *param_value_size_ret = size;
    return CL_SUCCESS;
}

static const char *
stub_platform_string(const struct _cl_platform_id *p, cl_platform_info name)
{
    switch (name) {
    case CL_PLATFORM_PROFILE:
        return "FULL_PROFILE";
    case CL_PLATFORM_VERSION:
        return "OpenCL 3.0 clgc-stub";
    case CL_PLATFORM_NAME:
        return p->name;
    case CL_PLATFORM_VENDOR:
        return "clgc tests";
    case CL_PLATFORM_EXTENSIONS:
        return "cl_khr_icd";
    case CL_PLATFORM_ICD_SUFFIX_KHR:
        return STUB_ICD_SUFFIX;
    default:
        return NULL;
    }
}

int
stub_hook_clGetPlatformInfo(cl_platform_id platform,
                            cl_platform_info param_name,
                            size_t param_value_size, void *param_value,
                            size_t *param_value_size_ret, cl_int *ret)
{
    int p = stub_platform_index(platform);
    struct stub_control *ctl = &stub_ctl;
    const char *s;

    if (p < 0)
        return 0;
    pthread_once(&stub_once, stub_init);
    if (param_name == STUB_PLATFORM_CONTROL) {
        *ret = stub_info(&ctl, sizeof(ctl), param_value_size, param_value,
                         param_value_size_ret);
    } else if ((s = stub_platform_string(&stub_platforms[p], param_name)) !=
               NULL) {
        *ret = stub_info(s, strlen(s) + 1, param_value_size, param_value,
                         param_value_size_ret);
    } else {
        /* Anything else is a call under test: record it. */
        return 0;
    }
    stub_count_hooked();
    return 1;
}

int
stub_hook_clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                 cl_uint *num_platforms, cl_int *ret)
{
    cl_uint fill =
        num_entries < STUB_N_PLATFORMS ? num_entries : STUB_N_PLATFORMS;

    pthread_once(&stub_once, stub_init);
    stub_count_hooked();
    if ((num_entries == 0 && platforms != NULL) ||
        (platforms == NULL && num_platforms == NULL)) {
        *ret = CL_INVALID_VALUE;
        return 1;
    }
    /* num_entries is the caller's room, not a count to fill: a driver
     * writes its own platforms only. ocl-icd has been seen to pass far
     * more room than its array holds (2147531008 entries, with Oclgrind's
     * ICD beside the stub's). */
    for (cl_uint i = 0; platforms != NULL && i < fill; i++)
        platforms[i] = &stub_platforms[i];
    if (num_platforms != NULL)
        *num_platforms = STUB_N_PLATFORMS;
    *ret = CL_SUCCESS;
    return 1;
}

static int
stub_entry_cmp(const void *key, const void *entry)
{
    return strcmp(key, ((const struct stub_entry *)entry)->name);
}

/* The stub's extension function called name, or NULL. Core commands are
 * not handed out: like a real ICD, the stub offers them only through its
 * dispatch table. */
static void *
stub_find(const char *name)
{
    const struct stub_entry *e = NULL;

    if (name != NULL)
        e = bsearch(name, stub_extensions, stub_n_extensions,
                    sizeof(stub_extensions[0]), stub_entry_cmp);
    return e != NULL ? (void *)e->fn : NULL;
}

static void
stub_count_lookup(void)
{
    pthread_mutex_lock(&stub_lock);
    stub_ctl.lookups++;
    stub_ctl.hooked++;
    pthread_mutex_unlock(&stub_lock);
}

int
stub_hook_clGetExtensionFunctionAddress(const char *func_name, void **ret)
{
    /* Without a platform the lookup cannot refuse: the loader uses it to
     * find clIcdGetPlatformIDsKHR before it knows any platform. */
    stub_count_lookup();
    *ret = stub_find(func_name);
    return 1;
}

int
stub_hook_clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                   const char *func_name,
                                                   void **ret)
{
    int p = stub_platform_index(platform);

    stub_count_lookup();
    *ret = p >= 0 && !stub_platforms[p].refusing ? stub_find(func_name) : NULL;
    return 1;
}

/* The entry points the loader finds with dlsym. */

STUB_EXPORT void *CL_API_CALL
clGetExtensionFunctionAddress(const char *func_name)
{
    void *fn;

    stub_hook_clGetExtensionFunctionAddress(func_name, &fn);
    return fn;
}

STUB_EXPORT cl_int CL_API_CALL
clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                       cl_uint *num_platforms)
{
    cl_int ret;

    stub_hook_clIcdGetPlatformIDsKHR(num_entries, platforms, num_platforms,
                                     &ret);
    return ret;
}

STUB_EXPORT cl_int CL_API_CALL
clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                  size_t param_value_size, void *param_value,
                  size_t *param_value_size_ret)
{
    cl_int ret = CL_INVALID_VALUE;

    /* The loader asks this one only for what the hook answers. */
    if (!stub_hook_clGetPlatformInfo(platform, param_name, param_value_size,
                                     param_value, param_value_size_ret, &ret))
        ret = CL_INVALID_VALUE;
    return ret;
}
