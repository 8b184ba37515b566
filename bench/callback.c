/* clgc-bench callback: what a call through a clgc closure costs on a
 * thread the runtime does not know, against a raw C function pointer to
 * the same handler.
 *
 *   clgc-bench callback [--samples N] [--calls N] [--threads N]
 *
 * The closure has the signature "i(i)"; its handler reads the argument
 * and stores the result. The raw call is a C function of the same
 * signature that calls the same handler through a pointer, as the
 * closure does. A third, bare libffi closure whose function calls the
 * handler directly shows libffi's own share. All are called through
 * function pointers on plain pthreads, as PoCL calls its callbacks on
 * threads of its own:
 *
 *   first   the first call on a new thread: the closure's includes
 *           attaching the thread to the runtime. The median over
 *           --threads new threads for each, alternating.
 *   cached  later calls on one such thread, attached by its first: the
 *           median over the samples of the mean of a sample's calls.
 *
 * Runtimes, each in a child process of its own (a runtime installs once
 * per process):
 *
 *   none       no runtime: the thread needs no attaching
 *   safepoint  the reference VM (tests/refvm.c): attaching registers the
 *              thread as a mutator with a state word
 *   boehm      bdwgc through the Boehm adapter: attaching is
 *              GC_register_my_thread (and detaching at thread exit
 *              GC_unregister_my_thread) */

#include "config.h"

#include <ffi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_BDWGC
/* Threads are created with the plain pthread_create: bdwgc must not know
 * them until clgc attaches them. */
#define GC_THREADS 1
#define GC_NO_THREAD_REDIRECTS 1
#include <gc/gc.h>

#include "clgc/boehm.h"
#endif

#include "../tests/refvm.h"
#include "bench.h"
#include "clgc.h"

typedef int32_t (*int_fn)(int32_t);

static int samples = 51;
static long ncalls = 200000;
static int nthreads = 201;

static void
handler(void *result, void *const *args, void *data)
{
    *(int32_t *)result = *(const int32_t *)args[0] + 1;
}

/* Called through a pointer, by the raw function as by the closure: the
 * compiler cannot inline it into the raw function. */
static clgc_closure_cb volatile raw_handler = handler;

static int32_t
raw_call(int32_t x)
{
    void *args[1] = {&x};
    int32_t r;

    raw_handler(&r, args, NULL);
    return r;
}

/* The bare libffi closure's function. */
static void
bare_entry(ffi_cif *cif, void *ret, void **args, void *data)
{
    int32_t r;

    raw_handler(&r, args, NULL);
    *(ffi_sarg *)ret = r;
}

static volatile int32_t sink;

/* Mean ns per call of fn over ncalls calls. */
static double
time_calls(int_fn fn)
{
    double t0 = bench_now_ns();
    int32_t acc = 0;

    for (long i = 0; i < ncalls; i++)
        acc += fn((int32_t)i);
    sink = acc;
    return (bench_now_ns() - t0) / (double)ncalls;
}

/* The three ways to call the handler, in table order. */
enum { RAW, CLGC, BARE, N_WAYS };

struct cached {
    int_fn fn[N_WAYS];
    double *v[N_WAYS], *diff;
    int failed;
};

/* On a new plain thread: attach with a first call, then the samples. */
static void *
cached_main(void *p)
{
    struct cached *c = p;

    for (int k = 0; k < N_WAYS; k++) {
        if (c->fn[k](1) != 2)
            c->failed = 1;
        time_calls(c->fn[k]); /* warm up */
    }
    for (int s = 0; s < samples; s++) {
        for (int k = 0; k < N_WAYS; k++)
            c->v[k][s] = time_calls(c->fn[k]);
        c->diff[s] = c->v[CLGC][s] - c->v[RAW][s];
    }
    return NULL;
}

struct first {
    int_fn fn;
    double ns;
    int failed;
};

static void *
first_main(void *p)
{
    struct first *f = p;
    double t0 = bench_now_ns();
    int32_t r = f->fn(1);

    f->ns = bench_now_ns() - t0;
    f->failed = r != 2;
    return NULL;
}

/* The first call on a new thread: its time. */
static double
first_call(int_fn fn)
{
    struct first f = {fn, 0, 0};
    pthread_t t;

    if (pthread_create(&t, NULL, first_main, &f) != 0 ||
        pthread_join(t, NULL) != 0 || f.failed)
        exit(3);
    return f.ns;
}

static void
row(const char *runtime, const char *what, double *v[N_WAYS], double *diff,
    int n)
{
    double m[N_WAYS];

    for (int k = 0; k < N_WAYS; k++)
        m[k] = bench_median(v[k], n);
    printf("%-10s %-7s %9.1f %9.1f %8.2fx %+9.1f %9.1f %+9.1f\n", runtime, what,
           m[RAW], m[CLGC], m[CLGC] / m[RAW], bench_median(diff, n), m[BARE],
           m[CLGC] - m[BARE]);
}

static int
install(const char *name)
{
    if (strcmp(name, "none") == 0)
        return 0;
    if (strcmp(name, "safepoint") == 0)
        return refvm_install();
#ifdef HAVE_BDWGC
    if (strcmp(name, "boehm") == 0) {
        GC_INIT();
        return clgc_boehm_install(0);
    }
#endif
    return -1;
}

static int
run_callback(const void *arg)
{
    const char *runtime = arg;
    int n = samples > nthreads ? samples : nthreads;
    double *v[N_WAYS], *diff;
    ffi_type *int32 = &ffi_type_sint32;
    struct cached c;
    clgc_closure_t *closure;
    clgc_function_t code;
    ffi_closure *bare;
    void *bare_code;
    ffi_cif cif;
    pthread_t t;

    if (install(runtime) != 0 ||
        clgc_closure_create("i(i)", handler, NULL, &closure, &code) != CLGC_OK)
        return 1;
    bare = ffi_closure_alloc(sizeof(ffi_closure), &bare_code);
    if (bare == NULL ||
        ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 1, int32, &int32) != FFI_OK ||
        ffi_prep_closure_loc(bare, &cif, bare_entry, NULL, bare_code) != FFI_OK)
        return 1;
    memset(&c, 0, sizeof(c));
    c.fn[RAW] = raw_call;
    c.fn[CLGC] = (int_fn)code;
    c.fn[BARE] = (int_fn)bare_code;
    for (int k = 0; k < N_WAYS; k++)
        if ((c.v[k] = calloc((size_t)n, sizeof(double))) == NULL)
            return 2;
    if ((c.diff = diff = calloc((size_t)n, sizeof(double))) == NULL)
        return 2;
    memcpy(v, c.v, sizeof(v));

    for (int k = 0; k < N_WAYS; k++)
        first_call(c.fn[k]); /* warm up: the process's first threads */
    for (int i = 0; i < nthreads; i++) {
        for (int k = 0; k < N_WAYS; k++)
            v[k][i] = first_call(c.fn[k]);
        diff[i] = v[CLGC][i] - v[RAW][i];
    }
    row(runtime, "first", v, diff, nthreads);

    if (pthread_create(&t, NULL, cached_main, &c) != 0 ||
        pthread_join(t, NULL) != 0 || c.failed)
        return 3;
    row(runtime, "cached", v, diff, samples);

    clgc_closure_free(closure);
    ffi_closure_free(bare);
    for (int k = 0; k < N_WAYS; k++)
        free(v[k]);
    free(diff);
    return 0;
}

static void
callback_usage(FILE *f)
{
    fprintf(f, "usage: clgc-bench callback [--samples N] [--calls N] "
               "[--threads N]\n"
               "Times a call through a clgc closure on a plain thread "
               "against a raw C\nfunction pointer to the same handler and a "
               "bare libffi closure: the first\ncall on a new thread (median "
               "over N threads, default 201) and cached calls\n(median of N "
               "samples (default 51) of N calls (default 200000)).\n");
}

int
bench_callback(int argc, char **argv)
{
    static const char *runtimes[] = {"none", "safepoint",
#ifdef HAVE_BDWGC
                                     "boehm"
#endif
    };
    int failed = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            callback_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
            samples = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
            ncalls = atol(argv[++i]);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            nthreads = atoi(argv[++i]);
        } else {
            callback_usage(stderr);
            return 2;
        }
    }
    if (samples < 1 || ncalls < 1 || nthreads < 1) {
        callback_usage(stderr);
        return 2;
    }
    printf("# ns per call on a plain thread: first call on a new thread "
           "(median of %d threads),\n# cached calls (median of %d samples "
           "of %ld calls); over raw: median of the paired differences\n",
           nthreads, samples, ncalls);
    printf("%-10s %-7s %9s %9s %9s %9s %9s %9s\n", "runtime", "call", "raw",
           "clgc", "ratio", "over raw", "libffi", "over ffi");
    fflush(stdout);
    for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
        failed |= bench_in_child(run_callback, runtimes[i], runtimes[i]);
    return failed;
}
