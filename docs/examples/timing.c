/* What a wrapper costs (docs/performance.md), in miniature: the raw
 * clGetPlatformInfo and clgc_clGetPlatformInfo, alternately, with no
 * runtime installed. clgc-bench call does this properly (medians of many
 * samples, every runtime); this prints one rough figure and asserts
 * nothing about time, only that both calls gave the same answer.
 *
 *   cc timing.c -o timing $(pkg-config --cflags --libs clgc OpenCL)
 */

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <clgc.h>

#include "pocl.h"

#define CALLS 200000
#define ROUNDS 5

static double
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int
main(void)
{
    cl_platform_id platform;
    cl_device_id device = pocl_device();
    char raw[256], wrapped[256];
    double best_raw = 1e300, best_clgc = 1e300;
    cl_int err = CL_SUCCESS;

    if (device == NULL)
        return 1;
    clgc_clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof(platform),
                         &platform, NULL);
    /* The best of a few rounds: the least disturbed by other work. */
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_ns(), t1, t2;

        for (int i = 0; i < CALLS; i++)
            err |= clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof(raw),
                                     raw, NULL);
        t1 = now_ns();
        for (int i = 0; i < CALLS; i++)
            err |= clgc_clGetPlatformInfo(platform, CL_PLATFORM_VERSION,
                                          sizeof(wrapped), wrapped, NULL);
        t2 = now_ns();
        if ((t1 - t0) / CALLS < best_raw)
            best_raw = (t1 - t0) / CALLS;
        if ((t2 - t1) / CALLS < best_clgc)
            best_clgc = (t2 - t1) / CALLS;
    }
    printf("clGetPlatformInfo       %6.1f ns\n", best_raw);
    printf("clgc_clGetPlatformInfo  %6.1f ns  (%+.1f ns, %.2fx)\n", best_clgc,
           best_clgc - best_raw, best_clgc / best_raw);
    printf("(one rough run; clgc-bench call measures it properly)\n");
    return err != CL_SUCCESS || strcmp(raw, wrapped) != 0;
}
