/* What the check_safepoint tests share (tests/safepoint.h). */

#include <stdlib.h>

#include "safepoint.h"

/* Install the VM, once per process. */
void
vm_setup(void)
{
    static int installed;

    if (!installed)
        ck_assert_int_eq(refvm_install(), CLGC_OK);
    installed = 1;
}

struct refvm_stats
vm_stats(void)
{
    struct refvm_stats s;

    refvm_stats(&s);
    return s;
}

int
word_of(const int *word)
{
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

void
pocl_open(struct pocl *p)
{
    cl_int err;

    ck_assert_int_eq(clGetDeviceIDs(test_platform(POCL), test_device_type(), 1,
                                    &p->device, NULL),
                     CL_SUCCESS);
    p->context = clCreateContext(NULL, 1, &p->device, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
}

void *
nothing(void *arg)
{
    return arg;
}

/* A cheap wrapped call: the platform's name, read and dropped. */
cl_int
platform_name(cl_platform_id platform)
{
    char name[128];

    return clgc_clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof(name),
                                  name, NULL);
}
