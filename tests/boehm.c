/* What the check_boehm tests share (tests/boehm.h). */

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "boehm.h"

static const char *boehm_src = "__kernel void boehm_nop(void)\n"
                               "{\n"
                               "}\n";

/* What every test does first, in its own process. */
void
boehm_setup(unsigned flags)
{
    /* bdwgc's default restart signal, SIGXCPU, is one LLVM (inside PoCL)
     * handles by deleting the compiler's temporary files: any collection
     * during a build would fail the build (docs/boehm.md). */
    GC_set_thr_restart_signal(SIGRTMIN + 2);
    GC_INIT();
    ck_assert_int_eq(clgc_boehm_install(flags), CLGC_OK);
    ck_assert_str_eq(clgc_runtime_current()->name, "boehm");
    boehm_count_suspensions();
}

/* Run n full collections on the calling thread, and check that bdwgc ran
 * them (GC_gcollect does nothing while collection is disabled). */
void
boehm_collect(unsigned n)
{
    GC_word before = GC_get_gc_no();

    for (unsigned i = 0; i < n; i++)
        GC_gcollect();
    ck_assert_uint_ge(GC_get_gc_no() - before, n);
}

/* sem_wait through the EINTR that a collection's suspend signal can cause
 * on a thread outside a safe region. No Check assertion: this runs on
 * threads other than the test's. */
void
boehm_sem_wait(sem_t *s)
{
    while (sem_wait(s) != 0 && errno == EINTR)
        continue;
}

/* A thread bdwgc knows from its start, as a runtime's own threads are. */
pthread_t
boehm_gc_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;

    ck_assert_int_eq(GC_pthread_create(&t, NULL, fn, arg), 0);
    return t;
}

void
boehm_gc_join(pthread_t t)
{
    ck_assert_int_eq(GC_pthread_join(t, NULL), 0);
}

/* A thread bdwgc does not know, as PoCL's are. */
pthread_t
boehm_plain_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;

    ck_assert_int_eq(pthread_create(&t, NULL, fn, arg), 0);
    return t;
}

/* A collectable object that only a static root refers to, filled with a
 * pattern that names it. */
unsigned *
boehm_new_object(unsigned tag)
{
    unsigned *obj = GC_MALLOC(BOEHM_WORDS * sizeof(*obj));

    if (obj != NULL)
        for (unsigned i = 0; i < BOEHM_WORDS; i++)
            obj[i] = tag * 1000u + i;
    return obj;
}

/* The object survived: bdwgc did not reclaim it (its disappearing link is
 * still set) and nothing reused its memory. Allocating objects of the same
 * size first gives a wrongly reclaimed object the chance to be reused. */
void
boehm_check_object(const unsigned *obj, void *const *link, unsigned tag)
{
    for (unsigned i = 0; i < 64; i++)
        (void)boehm_new_object(99);
    ck_assert_ptr_nonnull(obj);
    ck_assert_ptr_nonnull(*link);
    for (unsigned i = 0; i < BOEHM_WORDS; i++)
        ck_assert_uint_eq(obj[i], tag * 1000u + i);
}

/* Ask bdwgc to clear *link when obj becomes unreachable. The link holds
 * the pointer hidden, so that it does not keep obj alive itself. */
int
boehm_link(void **link, unsigned *obj)
{
    *link = (void *)GC_HIDE_POINTER(obj);
    return GC_general_register_disappearing_link(link, obj);
}

/* ------------------------------------------------------------------------
 * PoCL. */

void
boehm_cl_open(struct boehm_cl *cl)
{
    cl_platform_id platform = test_platform(BOEHM_POCL);
    cl_int err;

    ck_assert_int_eq(
        clgc_clGetDeviceIDs(platform, test_device_type(), 1, &cl->device, NULL),
        CL_SUCCESS);
    cl->context = clgc_clCreateContext(NULL, 1, &cl->device, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl->queue = test_queue_create(cl->context, cl->device);
}

void
boehm_cl_close(struct boehm_cl *cl)
{
    ck_assert_int_eq(clgc_clReleaseCommandQueue(cl->queue), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseContext(cl->context), CL_SUCCESS);
}

cl_program
boehm_program(struct boehm_cl *cl)
{
    cl_program program;
    cl_int err;

    program =
        clgc_clCreateProgramWithSource(cl->context, 1, &boehm_src, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    return program;
}

cl_kernel
boehm_nop_kernel(struct boehm_cl *cl, cl_program program)
{
    cl_kernel kernel;
    cl_int err;

    test_assert_built(
        clgc_clBuildProgram(program, 1, &cl->device, "", NULL, NULL), program,
        cl->device);
    kernel = clgc_clCreateKernel(program, "boehm_nop", &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    return kernel;
}

void *
boehm_collector_main(void *arg)
{
    struct boehm_collector *c = arg;

    for (;;) {
        boehm_sem_wait(&c->request);
        if (atomic_load(&c->stop))
            return NULL;
        boehm_watch(c->target);
        GC_gcollect();
        c->suspended = boehm_suspended();
        boehm_unwatch();
        sem_post(&c->reply);
    }
}

/* How many times a collection on the helper thread suspends this one. */
unsigned long
boehm_collect_elsewhere(struct boehm_collector *c)
{
    sem_post(&c->request);
    boehm_sem_wait(&c->reply);
    return c->suspended;
}

struct stub_control *boehm_stub;
cl_platform_id boehm_stub_platform;

static int
boehm_probe_depth(void)
{
    return (int)clgc_thread_region_depth();
}

void
boehm_stub_open(void)
{
    boehm_stub_platform = test_platform(STUB_PLATFORM_NAME);
    ck_assert_int_eq(clGetPlatformInfo(boehm_stub_platform,
                                       STUB_PLATFORM_CONTROL,
                                       sizeof(boehm_stub), &boehm_stub, NULL),
                     CL_SUCCESS);
    ck_assert_ptr_nonnull(boehm_stub);
    boehm_stub->probe = boehm_probe_depth;
}

/* The stub received exactly one call, with `object` first and the result
 * passed back; returns the region depth the call ran at. */
int
boehm_stub_depth(void *object, cl_int result)
{
    const struct stub_call *call = &boehm_stub->log[0];

    ck_assert_uint_eq(boehm_stub->calls, 1);
    ck_assert_uint_eq(call->args[0], (uint64_t)(uintptr_t)object);
    ck_assert_int_eq(result, (cl_int)stub_result_bits(call->index));
    return call->probe;
}

/* One test case per test, so that CK_RUN_CASE can pick exactly one. */
void
boehm_add(Suite *s, const char *name, const TTest *test)
{
    TCase *tc = test_case(name);

    tcase_add_test(tc, test);
    suite_add_tcase(s, tc);
}

void
boehm_add_pocl(Suite *s, const char *name, const TTest *test, const char *why)
{
    if (test_elsewhere() != NULL)
        test_add_pocl_only(NULL, test, test->name, why); /* says so */
    else
        boehm_add(s, name, test);
}

void
boehm_add_premised(Suite *s, const char *name, const TTest *test,
                   enum test_premise premise, const char *why)
{
    if (test_driver_does(premise))
        boehm_add(s, name, test);
    else
        test_add_premised(NULL, test, test->name, premise, why); /* says so */
}
