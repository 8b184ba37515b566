/* lua-bench BENCH.LUA: the Lua binding against C, measured in one run.
 *
 * 1. A launch + wait of a 64-element saxpy from C through clgc
 *    (clgc_clEnqueueNDRangeKernel + clgc_wait_for_events), best of five
 *    rounds, against the same from Lua (bench.lua, run in this process).
 * 2. 100 C threads each doing raw clEnqueueNDRangeKernel + clWaitForEvents
 *    on one queue, against 100 coroutines of the binding's scheduler doing
 *    the same through clgc on one thread: completions per second.
 *
 * Prints each figure and the ratios. BENCH_N sets the launches per round
 * (default 2000). */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "clgc.h"

static const char *src =
    "__kernel void saxpy(float a, __global const float *x, __global float *y)"
    "{ size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }";

static cl_command_queue queue;
static cl_kernel kernel;
static int per_thread;

static double
now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
setup(void)
{
    cl_platform_id ps[8];
    cl_uint np = 0;
    cl_device_id dev = NULL;
    cl_context ctx;
    cl_program prog;
    cl_mem x, y;
    float a = 2;
    cl_int err;

    clGetPlatformIDs(8, ps, &np);
    for (cl_uint i = 0; i < np && dev == NULL; i++) {
        char name[256] = "";

        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof(name), name, NULL);
        if (strstr(name, "Portable Computing Language") != NULL &&
            clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) !=
                CL_SUCCESS)
            dev = NULL;
    }
    if (dev == NULL)
        return -1;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    queue = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (clBuildProgram(prog, 1, &dev, NULL, NULL, NULL) != CL_SUCCESS)
        return -1;
    kernel = clCreateKernel(prog, "saxpy", &err);
    x = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * 4, NULL, &err);
    y = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * 4, NULL, &err);
    clSetKernelArg(kernel, 0, sizeof(a), &a);
    clSetKernelArg(kernel, 1, sizeof(x), &x);
    clSetKernelArg(kernel, 2, sizeof(y), &y);
    return kernel != NULL ? 0 : -1;
}

static void
launch_wait_clgc(int n)
{
    size_t g = 64;

    for (int i = 0; i < n; i++) {
        cl_event ev;

        clgc_clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &g, NULL, 0, NULL,
                                    &ev);
        clgc_wait_for_events(1, &ev);
        clgc_clReleaseEvent(ev);
    }
}

static void *
raw_thread(void *arg)
{
    size_t g = 64;

    (void)arg;
    for (int i = 0; i < per_thread; i++) {
        cl_event ev;

        clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &g, NULL, 0, NULL, &ev);
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
    }
    return NULL;
}

/* Call bench.lua's round function `name` with arg; return its number. */
static double
lua_round(lua_State *L, const char *name, int arg)
{
    double r;

    lua_getfield(L, -1, name);
    lua_pushinteger(L, arg);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        fprintf(stderr, "lua-bench: %s\n", lua_tostring(L, -1));
        exit(1);
    }
    r = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return r;
}

static double
c_threads_round(void)
{
    pthread_t threads[100];
    double t0 = now();

    for (int i = 0; i < 100; i++)
        pthread_create(&threads[i], NULL, raw_thread, NULL);
    for (int i = 0; i < 100; i++)
        pthread_join(threads[i], NULL);
    return 100.0 * per_thread / (now() - t0);
}

int
main(int argc, char **argv)
{
    const char *env = getenv("BENCH_N");
    int n = env != NULL ? atoi(env) : 2000;
    double c_launch = 1e9, lua_launch = 1e9, c_rate = 0, lua_rate = 0, t0, r;
    lua_State *L;

    if (argc != 2 || n < 100) {
        fprintf(stderr, "usage: lua-bench BENCH.LUA (BENCH_N >= 100)\n");
        return 2;
    }
    if (setup() != 0) {
        fprintf(stderr, "lua-bench: no PoCL device\n");
        return 1;
    }
    L = luaL_newstate();
    luaL_openlibs(L);
    lua_pushboolean(L, 1);
    lua_setglobal(L, "BENCH_HOST");
    if (luaL_dofile(L, argv[1]) != LUA_OK || !lua_istable(L, -1)) {
        fprintf(stderr, "lua-bench: %s\n", lua_tostring(L, -1));
        return 1;
    }
    launch_wait_clgc(200);
    /* Rounds alternate, C then Lua, so that both see the same machine:
     * the best of each is compared. */
    for (int i = 0; i < 5; i++) {
        t0 = now();
        launch_wait_clgc(n / 5);
        r = (now() - t0) / (n / 5);
        c_launch = r < c_launch ? r : c_launch;
        r = lua_round(L, "launch", n / 5);
        lua_launch = r < lua_launch ? r : lua_launch;
    }
    per_thread = n / 100;
    for (int i = 0; i < 3; i++) {
        r = c_threads_round();
        c_rate = r > c_rate ? r : c_rate;
        r = lua_round(L, "coroutines", per_thread);
        lua_rate = r > lua_rate ? r : lua_rate;
    }
    lua_close(L);

    printf("launch + wait, 64-element saxpy (best of 5 rounds of %d each):\n",
           n / 5);
    printf("  C through clgc   %8.1f us\n", c_launch * 1e6);
    printf("  Lua through clgc %8.1f us\n", lua_launch * 1e6);
    printf("  Lua / C          %8.2fx\n", lua_launch / c_launch);
    printf("100 concurrent waiters, %d launches each (best of 3):\n",
           per_thread);
    printf("  C threads, raw clWaitForEvents  %8.0f completions/s\n", c_rate);
    printf("  Lua coroutines, clgc scheduler  %8.0f completions/s\n", lua_rate);
    printf("  coroutines / threads            %8.2fx\n", lua_rate / c_rate);
    return 0;
}
