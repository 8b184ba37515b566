/* The environment (docs/environment.md): print what is in force for this
 * process, the variables clgc reads and those of the OpenCL stack around
 * it, and check that clgc did what its own variables ask:
 *
 * - CLGC_WAIT=blocking makes every wait a plain clWaitForEvents (any
 *   other value is ignored);
 * - CLGC_WAIT_POLL_NS=ns sets the polling budget when ns is a decimal
 *   integer from 0 to CLGC_WAIT_POLL_MAX_NS, one second (anything else is
 *   ignored; default 0).
 *
 * Both are read once, at the first wait or the first call of
 * clgc_wait_set_mode, clgc_wait_set_poll_ns or clgc_wait_get_poll_ns.
 * docs/examples/environment.sh runs this under several settings.
 *
 *   cc environment.c -o environment $(pkg-config --cflags --libs clgc)
 *   CLGC_WAIT=blocking ./environment
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clgc.h>

#include "pocl.h"

static const char *
env(const char *name)
{
    const char *v = getenv(name);

    return v != NULL ? v : "(unset)";
}

/* The budget CLGC_WAIT_POLL_NS asks for, by the rule above. */
static long
poll_ns_wanted(void)
{
    const char *v = getenv("CLGC_WAIT_POLL_NS");
    char *end;
    long ns;

    /* strtol would skip leading space and take a sign: a decimal integer
     * starts with a digit. */
    if (v == NULL || *v < '0' || *v > '9')
        return 0;
    ns = strtol(v, &end, 10);
    return *end == '\0' && ns >= 0 && ns <= CLGC_WAIT_POLL_MAX_NS ? ns : 0;
}

int
main(void)
{
    const char *vars[] = {"CLGC_WAIT", "CLGC_WAIT_POLL_NS", "OCL_ICD_VENDORS",
                          "POCL_DEVICES", "POCL_CACHE_DIR"};
    int blocking_wanted = getenv("CLGC_WAIT") != NULL &&
                          strcmp(getenv("CLGC_WAIT"), "blocking") == 0;
    cl_platform_id ids[16];
    cl_uint n = 0;
    struct pocl p;
    cl_event done;
    cl_int err;
    char name[256];
    int blocking, bad = 0;
    long poll_ns;

    printf("clgc %s, runtime %s\n", clgc_version(),
           clgc_runtime_current()->name);
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        printf("  %-18s %s\n", vars[i], env(vars[i]));

    /* What the OpenCL loader found with that environment. */
    clgc_clGetPlatformIDs(16, ids, &n);
    for (cl_uint i = 0; i < n && i < 16; i++) {
        cl_device_id devices[8];
        cl_uint nd = 0;

        clgc_clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof(name), name,
                               NULL);
        printf("platform %u: %s\n", i, name);
        clgc_clGetDeviceIDs(ids[i], CL_DEVICE_TYPE_ALL, 8, devices, &nd);
        for (cl_uint j = 0; j < nd && j < 8; j++) {
            clgc_clGetDeviceInfo(devices[j], CL_DEVICE_NAME, sizeof(name), name,
                                 NULL);
            printf("  device %u: %s\n", j, name);
        }
    }

    /* How waits wait: there is no getter for the mode, so wait for an
     * event that is complete already and ask how the wait finished. */
    if (pocl_open(&p, NULL) != 0)
        return 1;
    done = clgc_clCreateUserEvent(p.context, &err);
    clgc_clSetUserEventStatus(done, CL_COMPLETE);
    err = clgc_wait_for_events(1, &done);
    blocking = clgc_wait_last_path() == CLGC_WAIT_PATH_BLOCKING;
    poll_ns = clgc_wait_get_poll_ns();
    printf("waits: %s, polling budget %ld ns\n",
           blocking ? "blocking (clWaitForEvents)" : "cooperative", poll_ns);
    if (err != CL_SUCCESS || blocking != blocking_wanted ||
        poll_ns != poll_ns_wanted()) {
        fprintf(stderr, "expected %s waits and a budget of %ld ns\n",
                blocking_wanted ? "blocking" : "cooperative", poll_ns_wanted());
        bad = 1;
    }
    clgc_clReleaseEvent(done);
    pocl_close(&p);
    return bad;
}
