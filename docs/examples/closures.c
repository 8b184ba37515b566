/* Closures and generic calls (docs/ffi.md), what a binding builds its
 * callbacks and calls on:
 *
 * - a closure of signature "i(pp)" is a real int (*)(const void *, const
 *   void *): four threads the runtime never saw sort with it as qsort's
 *   comparator, and each is attached once, on its first call, and
 *   detached when it exits;
 * - generic calls reach any command by name from tagged values, checked
 *   against its metadata first: clGetPlatformInfo, then clSetEventCallback
 *   with a "v(pip)" closure as the callback, fired by clSetUserEventStatus.
 *
 * It exits 0 when every array came out sorted, every comparison ran with
 * the runtime active, the attach and detach counts are 4, the generic
 * calls returned what the direct ones would and refused bad arguments.
 *
 *   cc closures.c -o closures $(pkg-config --cflags --libs clgc) -pthread
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clgc.h>

#include "pocl.h"

#define THREADS 4
#define ITEMS 1000

static int bad;

static void
check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    bad |= !ok;
}

/* --- A runtime that knows only the threads it attached (and main), as
 * bdwgc does, and counts. */
static __thread int known;
static atomic_int attaches, detaches;

static void *
region(clgc_fn_t fn, void *arg)
{
    return fn(arg);
}

static int
is_known(void *data)
{
    return known;
}

static int
attach(void *data)
{
    atomic_fetch_add(&attaches, 1);
    known = 1;
    return CLGC_OK;
}

static void
detach(void *data)
{
    atomic_fetch_add(&detaches, 1);
    known = 0;
}

static const clgc_runtime_t runtime = {
    .version = CLGC_RUNTIME_VERSION,
    .name = "counting",
    .safe_region = region,
    .active_region = region,
    .attach_thread = attach,
    .detach_thread = detach,
    .thread_known = is_known,
};

/* --- The comparator's handler: args[i] points at the i-th argument. */
static atomic_long comparisons, outside_runtime;

static void
compare(void *result, void *const *args, void *data)
{
    const int *a = *(const int *const *)args[0];
    const int *b = *(const int *const *)args[1];

    atomic_fetch_add(&comparisons, 1);
    if (!known || clgc_thread_in_region())
        atomic_fetch_add(&outside_runtime, 1);
    *(int32_t *)result = (*a > *b) - (*a < *b);
}

struct sorter {
    int (*cmp)(const void *, const void *);
    int items[ITEMS];
    int sorted;
};

static void *
sort_thread(void *arg)
{
    struct sorter *s = arg;

    qsort(s->items, ITEMS, sizeof(int), s->cmp);
    s->sorted = 1;
    for (int i = 1; i < ITEMS; i++)
        s->sorted &= s->items[i - 1] <= s->items[i];
    return NULL; /* clgc detaches the thread as it exits */
}

/* --- The event callback's handler: cl_event, cl_int, void *. */
static void
on_event(void *result, void *const *args, void *data)
{
    *(cl_int *)data = *(cl_int *)args[1] == CL_COMPLETE && known;
}

int
main(void)
{
    static struct sorter sorters[THREADS];
    clgc_closure_t *closure;
    clgc_function_t code;
    pthread_t threads[THREADS];
    unsigned seed = 1;
    int all_sorted = 1;

    known = 1; /* the runtime's own thread */
    if (clgc_runtime_install(&runtime) != CLGC_OK)
        return 1;

    /* One closure, shared by every thread. */
    if (clgc_closure_create("i(pp)", compare, NULL, &closure, &code) != CLGC_OK)
        return 1;
    for (int t = 0; t < THREADS; t++) {
        sorters[t].cmp = (int (*)(const void *, const void *))code;
        for (int i = 0; i < ITEMS; i++)
            sorters[t].items[i] =
                (int)((seed = seed * 1103515245u + 12345u) >> 8);
        pthread_create(&threads[t], NULL, sort_thread, &sorters[t]);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        all_sorted &= sorters[t].sorted;
    }
    clgc_closure_free(closure); /* nothing can call it any more */
    check(all_sorted, "qsort with a closure as comparator, on 4 threads");
    check(atomic_load(&outside_runtime) == 0,
          "every comparison ran with the runtime active");
    printf("     %ld comparisons\n", atomic_load(&comparisons));
    check(atomic_load(&attaches) == THREADS &&
              atomic_load(&detaches) == THREADS,
          "each thread attached once, detached as it exited");

    /* Generic calls: clGetPlatformInfo(platform, CL_PLATFORM_NAME, size,
     * name, NULL) from tagged values, as an interpreter would make it. */
    {
        struct pocl p;
        cl_platform_id platform;
        char name[256] = "";
        clgc_value_t r;
        clgc_arg_t args[5];

        if (pocl_open(&p, NULL) != 0)
            return 1;
        clgc_clGetDeviceInfo(p.device, CL_DEVICE_PLATFORM, sizeof(platform),
                             &platform, NULL);
        args[0] = (clgc_arg_t){CLGC_CTYPE_POINTER, {.p = platform}};
        args[1] = (clgc_arg_t){CLGC_CTYPE_UINT32, {.u32 = CL_PLATFORM_NAME}};
        args[2] = (clgc_arg_t){CLGC_CTYPE_SIZE, {.size = sizeof(name)}};
        args[3] = (clgc_arg_t){CLGC_CTYPE_POINTER, {.p = name}};
        args[4] = (clgc_arg_t){CLGC_CTYPE_POINTER, {.p = NULL}};
        check(clgc_command_call_by_name("clGetPlatformInfo", 5, args, &r) ==
                      CLGC_OK &&
                  r.i32 == CL_SUCCESS && strstr(name, POCL_PLATFORM) != NULL,
              "clGetPlatformInfo by name");
        printf("     CL_PLATFORM_NAME: %s\n", name);

        /* Checked before anything is called. */
        args[1].ctype = CLGC_CTYPE_INT32;
        check(clgc_command_call_by_name("clGetPlatformInfo", 5, args, &r) ==
                  CLGC_ETYPE,
              "a cl_uint passed as an int32: CLGC_ETYPE");
        check(clgc_command_call_by_name("clGetPlatformInfo", 4, args, &r) ==
                  CLGC_EARITY,
              "four arguments for five: CLGC_EARITY");
        check(clgc_command_call_by_name("clNoSuchCommand", 0, NULL, &r) ==
                  CLGC_ENOCOMMAND,
              "an unknown name: CLGC_ENOCOMMAND");

        /* A closure as an OpenCL callback, through generic calls: the
         * callback runs inside clSetUserEventStatus, on this thread, in
         * that wrapper's safe region; clgc brings the runtime back. */
        {
            const clgc_command_t *set = clgc_command_find("clSetEventCallback");
            cl_int err, fired = -1;
            cl_event user = clgc_clCreateUserEvent(p.context, &err);

            clgc_closure_create("v(pip)", on_event, &fired, &closure, &code);
            args[0] = (clgc_arg_t){CLGC_CTYPE_POINTER, {.p = user}};
            args[1] = (clgc_arg_t){CLGC_CTYPE_INT32, {.i32 = CL_COMPLETE}};
            args[2] = (clgc_arg_t){CLGC_CTYPE_FUNCTION, {.fn = code}};
            args[3] = (clgc_arg_t){CLGC_CTYPE_POINTER, {.p = NULL}};
            check((set->flags & CLGC_COMMAND_CALLBACK) &&
                      set->params[2].ctype == CLGC_CTYPE_FUNCTION &&
                      clgc_command_call(set, 4, args, &r) == CLGC_OK &&
                      r.i32 == CL_SUCCESS,
                  "clSetEventCallback with a closure, by metadata");
            args[1] = (clgc_arg_t){CLGC_CTYPE_INT32, {.i32 = CL_COMPLETE}};
            check(clgc_command_call_by_name("clSetUserEventStatus", 2, args,
                                            &r) == CLGC_OK &&
                      r.i32 == CL_SUCCESS && fired == 1,
                  "clSetUserEventStatus: the closure ran, runtime active");
            clgc_closure_free(closure); /* its one call has come */
            clgc_clReleaseEvent(user);
        }
        pocl_close(&p);
    }
    return bad;
}
