/* clgc-platforms: what the ICD loader offers, one platform a line with its
 * devices under it, for the bundle's runner (tools/bundle-run.sh) on a
 * machine without clinfo. Raw OpenCL calls only: it checks the loader and
 * the drivers, not clgc.
 *
 *   clgc-platforms          P: name | version, then "  P:D type name | version"
 *   clgc-platforms --names  the platforms' names alone, one a line
 *
 * Exits 1 when the loader finds no platform. */

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

static const char *
type_name(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU)
        return "gpu";
    if (t & CL_DEVICE_TYPE_CPU)
        return "cpu";
    if (t & CL_DEVICE_TYPE_ACCELERATOR)
        return "accelerator";
    return "other";
}

int
main(int argc, char **argv)
{
    int names = argc > 1 && strcmp(argv[1], "--names") == 0;
    cl_platform_id platforms[16];
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(16, platforms, &np);

    if (err != CL_SUCCESS || np == 0) {
        fprintf(stderr, "clgc-platforms: no OpenCL platform (error %d)\n",
                (int)err);
        return 1;
    }
    for (cl_uint p = 0; p < np && p < 16; p++) {
        char name[256] = "", version[256] = "";
        cl_device_id devices[16];
        cl_uint nd = 0;

        clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof(name), name,
                          NULL);
        clGetPlatformInfo(platforms[p], CL_PLATFORM_VERSION, sizeof(version),
                          version, NULL);
        if (names) {
            printf("%s\n", name);
            continue;
        }
        printf("%u: %s | %s\n", p, name, version);
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 16, devices,
                           &nd) != CL_SUCCESS)
            nd = 0;
        for (cl_uint d = 0; d < nd && d < 16; d++) {
            char dname[256] = "", dversion[256] = "";
            cl_device_type type = 0;
            cl_uint units = 0;

            clGetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof(dname), dname,
                            NULL);
            clGetDeviceInfo(devices[d], CL_DEVICE_VERSION, sizeof(dversion),
                            dversion, NULL);
            clGetDeviceInfo(devices[d], CL_DEVICE_TYPE, sizeof(type), &type,
                            NULL);
            clGetDeviceInfo(devices[d], CL_DEVICE_MAX_COMPUTE_UNITS,
                            sizeof(units), &units, NULL);
            printf("  %u:%u %s %s | %s | %u compute units\n", p, d,
                   type_name(type), dname, dversion, units);
        }
    }
    return 0;
}
