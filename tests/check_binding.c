/* A binding's safety (clgc/binding.h) on the real PoCL. A kernel's
 * argument table: every kind of argument refuses every other kind with a
 * sentence that names the kernel and the argument, the objects set are
 * held until replaced or the table freed (a destructor callback tells when
 * one is freed), and a launch with an argument not set is refused. Boxes:
 * a release waits for the calls that hold the object, on any thread. */

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const char *kinds_src =
    "__kernel void kinds(__global float *g, __constant float *c,\n"
    "                  __local float *l, float4 v, int n,\n"
    "                  read_only image2d_t img, sampler_t s)\n"
    "{\n"
    "    g[0] = c[0] + l[0] + v.x + n + read_imagef(img, s, (int2)(0, 0)).x;\n"
    "}\n"
    "__kernel void add(__global float *y, float a)\n"
    "{\n"
    "    y[get_global_id(0)] += a;\n"
    "}\n";

struct fixture {
    struct test_device d;
    cl_device_id device;
    cl_program program;
    clgc_kernel_args_t *all, *add;
    cl_mem buf, img;
    cl_sampler sampler;
};

static clgc_kernel_args_t *
table(cl_program program, const char *name)
{
    cl_int err;
    cl_kernel k = clgc_clCreateKernel(program, name, &err);
    clgc_kernel_args_t *t;

    ck_assert_int_eq(err, CL_SUCCESS);
    t = clgc_kernel_args_new(k, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_ptr_nonnull(t);
    /* The table holds a reference of its own. */
    ck_assert_int_eq(clgc_clReleaseKernel(k), CL_SUCCESS);
    return t;
}

static void
fixture_open(struct fixture *f)
{
    cl_image_format format = {CL_RGBA, CL_FLOAT};
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D,
                          .image_width = 4,
                          .image_height = 4};
    cl_int err;

    test_device_open(&f->d, 64);
    ck_assert_int_eq(clgc_clGetContextInfo(f->d.context, CL_CONTEXT_DEVICES,
                                           sizeof(f->device), &f->device, NULL),
                     CL_SUCCESS);
    f->program =
        clgc_clCreateProgramWithSource(f->d.context, 1, &kinds_src, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    test_assert_built(clgc_clBuildProgram(f->program, 1, &f->device,
                                          "-cl-kernel-arg-info", NULL, NULL),
                      f->program, f->device);
    f->all = table(f->program, "kinds");
    f->add = table(f->program, "add");
    f->buf = clgc_clCreateBuffer(f->d.context, CL_MEM_READ_WRITE,
                                 64 * sizeof(float), NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    f->img = clgc_clCreateImage(f->d.context, CL_MEM_READ_ONLY, &format, &desc,
                                NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    f->sampler = clgc_clCreateSampler(f->d.context, CL_FALSE, CL_ADDRESS_NONE,
                                      CL_FILTER_NEAREST, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
}

static void
fixture_close(struct fixture *f)
{
    clgc_kernel_args_free(f->all);
    clgc_kernel_args_free(f->add);
    clgc_clReleaseMemObject(f->buf);
    clgc_clReleaseMemObject(f->img);
    clgc_clReleaseSampler(f->sampler);
    clgc_clReleaseProgram(f->program);
    test_device_close(&f->d);
}

/* The call fails with err and a message that has want in it. */
#define assert_refused(t, call, err, want)                                     \
    do {                                                                       \
        ck_assert_int_eq((call), (err));                                       \
        ck_assert_msg(strstr(clgc_kernel_args_message(t), (want)) != NULL,     \
                      "\"%s\" has no \"%s\"", clgc_kernel_args_message(t),     \
                      (want));                                                 \
    } while (0)

START_TEST(kinds_are_read_from_the_kernel)
{
    struct fixture f;
    static const clgc_arg_kind_t want[] = {
        CLGC_ARG_BUFFER, CLGC_ARG_BUFFER, CLGC_ARG_LOCAL,  CLGC_ARG_VALUE,
        CLGC_ARG_VALUE,  CLGC_ARG_IMAGE,  CLGC_ARG_SAMPLER};

    fixture_open(&f);
    ck_assert_uint_eq(clgc_kernel_args_count(f.all), 7);
    for (cl_uint i = 0; i < 7; i++)
        ck_assert_int_eq(clgc_kernel_args_kind(f.all, i), want[i]);
    ck_assert_int_eq(clgc_kernel_args_kind(f.all, 7), CLGC_ARG_OTHER);
    ck_assert_ptr_nonnull(clgc_kernel_args_kernel(f.all));
    fixture_close(&f);
}
END_TEST

/* Each kind refused where another is declared: the mix-ups that crash a
 * driver (a number for a pointer, a buffer for an image). */
START_TEST(every_kind_refuses_the_others)
{
    struct fixture f;
    cl_float4 v = {{1, 2, 3, 4}};
    cl_double d = 1;
    cl_long n = 12345;

    fixture_open(&f);
    assert_refused(f.all, clgc_kernel_args_set_value(f.all, 0, sizeof(n), &n),
                   CL_INVALID_ARG_VALUE,
                   "argument 0 (g) of kernel kinds is a __global or __constant "
                   "pointer: a buffer, not a value");
    assert_refused(f.all, clgc_kernel_args_set_mem(f.all, 0, f.img),
                   CL_INVALID_ARG_VALUE, "not an image");
    assert_refused(f.all, clgc_kernel_args_set_sampler(f.all, 1, f.sampler),
                   CL_INVALID_ARG_VALUE, "argument 1 (c)");
    assert_refused(
        f.all, clgc_kernel_args_set_mem(f.all, 2, f.buf), CL_INVALID_ARG_VALUE,
        "is a __local pointer: a size of local memory, not a buffer");
    assert_refused(f.all, clgc_kernel_args_set_mem(f.all, 3, f.buf),
                   CL_INVALID_ARG_VALUE,
                   "argument 3 (v) of kernel kinds is a value (float4), not a "
                   "buffer");
    assert_refused(f.all, clgc_kernel_args_set_value(f.all, 3, sizeof(d), &d),
                   CL_INVALID_ARG_SIZE, "is a float4 (16 bytes), not 8 bytes");
    assert_refused(f.all, clgc_kernel_args_set_local(f.all, 4, 16),
                   CL_INVALID_ARG_VALUE, "(n)");
    assert_refused(f.all, clgc_kernel_args_set_mem(f.all, 5, f.buf),
                   CL_INVALID_ARG_VALUE, "is an image, not a buffer");
    assert_refused(f.all, clgc_kernel_args_set_value(f.all, 5, sizeof(n), &n),
                   CL_INVALID_ARG_VALUE, "is an image, not a value");
    assert_refused(f.all, clgc_kernel_args_set_mem(f.all, 6, f.img),
                   CL_INVALID_ARG_VALUE, "is a sampler, not an image");
    /* What the kernel takes goes through. */
    ck_assert_int_eq(clgc_kernel_args_set_mem(f.all, 0, f.buf), CL_SUCCESS);
    ck_assert_int_eq(clgc_kernel_args_set_mem(f.all, 1, f.buf), CL_SUCCESS);
    ck_assert_int_eq(clgc_kernel_args_set_local(f.all, 2, 64), CL_SUCCESS);
    ck_assert_int_eq(clgc_kernel_args_set_value(f.all, 3, sizeof(v), &v),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_kernel_args_set_value(f.all, 4, 4, &n), CL_SUCCESS);
    ck_assert_int_eq(clgc_kernel_args_set_mem(f.all, 5, f.img), CL_SUCCESS);
    ck_assert_int_eq(clgc_kernel_args_set_sampler(f.all, 6, f.sampler),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_kernel_args_ready(f.all), CL_SUCCESS);
    ck_assert_str_eq(clgc_kernel_args_message(f.all), "");
    /* What a binding asks of a memory object it is given. */
    ck_assert_int_eq(clgc_mem_kind(f.buf), CLGC_ARG_BUFFER);
    ck_assert_int_eq(clgc_mem_kind(f.img), CLGC_ARG_IMAGE);
    ck_assert_int_eq(clgc_mem_kind(NULL), CLGC_ARG_UNKNOWN);
    /* PoCL answers CL_MEM_TYPE for a sampler with what it finds there. */
    ck_assert_int_ne(clgc_mem_kind((cl_mem)f.sampler), CLGC_ARG_BUFFER);
    ck_assert_int_ne(clgc_mem_kind((cl_mem)f.sampler), CLGC_ARG_IMAGE);
    fixture_close(&f);
}
END_TEST

/* Sizes and objects that are not there: zero, more local memory than the
 * device has, no object, an index past the last. */
START_TEST(bad_sizes_and_objects_are_refused)
{
    struct fixture f;
    cl_ulong limit = 0;
    cl_int err;

    fixture_open(&f);
    ck_assert_int_eq(clgc_clGetDeviceInfo(f.device, CL_DEVICE_LOCAL_MEM_SIZE,
                                          sizeof(limit), &limit, NULL),
                     CL_SUCCESS);
    assert_refused(f.all, clgc_kernel_args_set_local(f.all, 2, 0),
                   CL_INVALID_ARG_SIZE, "local memory of 0 bytes");
    assert_refused(f.all,
                   clgc_kernel_args_set_local(f.all, 2, (size_t)limit + 1),
                   CL_INVALID_ARG_SIZE, "more than the device's");
    ck_assert_int_eq(clgc_kernel_args_set_local(f.all, 2, (size_t)limit),
                     CL_SUCCESS);
    assert_refused(f.all, clgc_kernel_args_set_mem(f.all, 0, NULL),
                   CL_INVALID_MEM_OBJECT, "no valid memory object");
    assert_refused(f.all, clgc_kernel_args_set_sampler(f.all, 6, NULL),
                   CL_INVALID_SAMPLER, "no valid sampler");
    assert_refused(f.all, clgc_kernel_args_set_value(f.all, 4, 4, NULL),
                   CL_INVALID_ARG_VALUE, "no bytes");
    assert_refused(f.all, clgc_kernel_args_set_mem(f.all, 7, f.buf),
                   CL_INVALID_ARG_INDEX,
                   "argument 7 of kernel kinds: it has 7");
    ck_assert_ptr_null(clgc_kernel_args_new(NULL, &err));
    ck_assert_int_eq(err, CL_INVALID_KERNEL);
    clgc_kernel_args_free(NULL);
    fixture_close(&f);
}
END_TEST

static void CL_CALLBACK
freed(cl_mem mem, void *flag)
{
    (void)mem;
    __atomic_store_n((int *)flag, 1, __ATOMIC_RELEASE);
}

static cl_uint
mem_refs(cl_mem mem)
{
    cl_uint n = 0;

    ck_assert_int_eq(clgc_clGetMemObjectInfo(mem, CL_MEM_REFERENCE_COUNT,
                                             sizeof(n), &n, NULL),
                     CL_SUCCESS);
    return n;
}

/* A buffer set as an argument and then released by its owner (a binding's
 * release, or its collection) stays until the kernel is done with it: the
 * launch runs on it, and it is freed when the argument is set again. */
START_TEST(a_buffer_set_is_held_until_replaced)
{
    struct fixture f;
    int gone = 0;
    size_t global = 64;
    cl_float a = 1;
    cl_event ev;
    cl_int err;
    cl_mem y;

    fixture_open(&f);
    y = clgc_clCreateBuffer(f.d.context, CL_MEM_READ_WRITE, 64 * sizeof(float),
                            NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetMemObjectDestructorCallback(y, freed, &gone),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_kernel_args_set_mem(f.add, 0, y), CL_SUCCESS);
    ck_assert_uint_eq(mem_refs(y), 2);
    assert_refused(f.add, clgc_kernel_args_ready(f.add), CL_INVALID_KERNEL_ARGS,
                   "argument 1 (a) of kernel add is not set");
    ck_assert_int_eq(clgc_kernel_args_set_value(f.add, 1, sizeof(a), &a),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_kernel_args_ready(f.add), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseMemObject(y), CL_SUCCESS);
    ck_assert_int_eq(__atomic_load_n(&gone, __ATOMIC_ACQUIRE), 0);
    ck_assert_int_eq(
        clgc_clEnqueueNDRangeKernel(f.d.queue, clgc_kernel_args_kernel(f.add),
                                    1, NULL, &global, NULL, 0, NULL, &ev),
        CL_SUCCESS);
    ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseEvent(ev), CL_SUCCESS);
    ck_assert_int_eq(__atomic_load_n(&gone, __ATOMIC_ACQUIRE), 0);
    /* A refused setting keeps what was set. */
    ck_assert_int_eq(clgc_kernel_args_set_mem(f.add, 0, f.img),
                     CL_INVALID_ARG_VALUE);
    ck_assert_int_eq(__atomic_load_n(&gone, __ATOMIC_ACQUIRE), 0);
    ck_assert_int_eq(clgc_kernel_args_set_mem(f.add, 0, f.buf), CL_SUCCESS);
    ck_assert_int_eq(clgc_clFinish(f.d.queue), CL_SUCCESS);
    /* PoCL lets go of its command's reference on its own thread, which a
     * loaded machine may run after clFinish returned (CI's ASan stage
     * beside two CPU hogs saw it so). */
    {
        struct test_await w = test_await_start();

        while (__atomic_load_n(&gone, __ATOMIC_ACQUIRE) == 0)
            test_await_nap(&w, "the buffer's destructor callback");
    }
    ck_assert_int_eq(__atomic_load_n(&gone, __ATOMIC_ACQUIRE), 1);
    fixture_close(&f);
}
END_TEST

/* Freeing the table lets go of what it holds: the sampler's and the
 * image's references go back to their owner's alone. */
START_TEST(freeing_the_table_lets_go)
{
    struct fixture f;
    cl_uint n = 0;

    fixture_open(&f);
    ck_assert_int_eq(clgc_kernel_args_set_sampler(f.all, 6, f.sampler),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_kernel_args_set_mem(f.all, 5, f.img), CL_SUCCESS);
    ck_assert_int_eq(clgc_clGetSamplerInfo(f.sampler,
                                           CL_SAMPLER_REFERENCE_COUNT,
                                           sizeof(n), &n, NULL),
                     CL_SUCCESS);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(mem_refs(f.img), 2);
    clgc_kernel_args_free(f.all);
    f.all = NULL;
    ck_assert_int_eq(clgc_clGetSamplerInfo(f.sampler,
                                           CL_SAMPLER_REFERENCE_COUNT,
                                           sizeof(n), &n, NULL),
                     CL_SUCCESS);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(mem_refs(f.img), 1);
    fixture_close(&f);
}
END_TEST

/* Binaries cut short: PoCL asserts (aborts) on its own format cut
 * anywhere past the header; the library refuses them first, and the
 * whole binary still makes a program. Also an empty one. */
START_TEST(binaries_cut_short_are_refused)
{
    struct fixture f;
    size_t size = 0, cuts[6];
    unsigned char *bin;
    clgc_binaries_t *all, *nothing;
    cl_int err, status;
    cl_program p;

    fixture_open(&f);
    /* Read back as a binding reads them: one, for the program's device. */
    ck_assert_int_eq(clgc_program_binaries(f.program, &all), CL_SUCCESS);
    ck_assert_uint_eq(all->count, 1);
    ck_assert_ptr_eq(all->devices[0], f.device);
    size = all->lengths[0];
    ck_assert_uint_gt(size, 200);
    bin = all->binaries[0];
    ck_assert_int_eq(clgc_program_binaries(NULL, &nothing), CL_INVALID_PROGRAM);
    ck_assert_ptr_null(nothing);
    cuts[0] = 1, cuts[1] = 64, cuts[2] = 100, cuts[3] = size / 2,
    cuts[4] = size - 100, cuts[5] = size - 1;
    for (int i = 0; i < 6; i++) {
        const unsigned char *b = bin;

        p = clgc_program_with_binaries(f.d.context, 1, &f.device, &cuts[i], &b,
                                       &status, &err);
        if (p != NULL) { /* refused at the build, then */
            ck_assert_int_ne(
                clgc_clBuildProgram(p, 1, &f.device, NULL, NULL, NULL),
                CL_SUCCESS);
            clgc_clReleaseProgram(p);
        } else {
            ck_assert_int_eq(err, CL_INVALID_BINARY);
            ck_assert_int_eq(status, CL_INVALID_BINARY);
        }
    }
    {
        const unsigned char *b = bin;
        size_t none = 0;

        p = clgc_program_with_binaries(f.d.context, 1, &f.device, &size, &b,
                                       &status, &err);
        ck_assert_int_eq(err, CL_SUCCESS);
        ck_assert_int_eq(clgc_clBuildProgram(p, 1, &f.device, NULL, NULL, NULL),
                         CL_SUCCESS);
        clgc_clReleaseProgram(p);
        ck_assert_ptr_null(clgc_program_with_binaries(
            f.d.context, 1, &f.device, &none, &b, &status, &err));
        ck_assert_int_eq(err, CL_INVALID_VALUE);
    }
    free(all);
    fixture_close(&f);
}
END_TEST

/* A box's object: alive until released once. */
struct boxed {
    int alive;
    int releases;
};

static cl_int
release_boxed(void *object)
{
    struct boxed *o = object;

    ck_assert_int_eq(__atomic_exchange_n(&o->alive, 0, __ATOMIC_ACQ_REL), 1);
    __atomic_add_fetch(&o->releases, 1, __ATOMIC_ACQ_REL);
    return CL_SUCCESS;
}

static int
releases(struct boxed *o)
{
    return __atomic_load_n(&o->releases, __ATOMIC_ACQUIRE);
}

START_TEST(a_release_waits_for_the_last_hold)
{
    struct boxed o = {1, 0};
    clgc_box_t *b = clgc_box_new(&o, release_boxed);
    size_t mark = clgc_holds_mark();

    ck_assert_ptr_eq(clgc_box_get(b), &o);
    ck_assert_ptr_eq(clgc_box_get(b), &o);
    ck_assert_int_eq(clgc_box_release(b), 1);
    ck_assert_int_eq(clgc_box_release(b), 0);
    ck_assert(clgc_box_released(b));
    ck_assert_ptr_null(clgc_box_get(b));
    ck_assert_uint_eq(clgc_holds_mark(), mark + 2);
    clgc_holds_back_to(mark + 1);
    ck_assert_int_eq(releases(&o), 0);
    clgc_holds_back_to(mark);
    ck_assert_int_eq(releases(&o), 1);
    clgc_box_free(b);
    ck_assert_int_eq(releases(&o), 1);
    /* Unheld, a release is at once; a free releases too, and frees the
     * box after the last hold (ASan and valgrind see the box's memory). */
    o = (struct boxed){1, 0};
    b = clgc_box_new(&o, release_boxed);
    ck_assert_int_eq(clgc_box_release(b), 1);
    ck_assert_int_eq(releases(&o), 1);
    clgc_box_free(b);
    o = (struct boxed){1, 0};
    b = clgc_box_new(&o, release_boxed);
    ck_assert_ptr_eq(clgc_box_get(b), &o);
    clgc_box_free(b);
    ck_assert_int_eq(releases(&o), 0);
    clgc_holds_back_to(mark);
    ck_assert_int_eq(releases(&o), 1);
    clgc_box_free(NULL);
}
END_TEST

/* Past a thread's slots, holds are counted on the box: a release waits
 * for those too, whether the box is in a slot or not. */
START_TEST(holds_past_the_slots_count_too)
{
    struct boxed o[2] = {{1, 0}, {1, 0}};
    clgc_box_t *b[2];

    for (int k = 0; k < 2; k++)
        b[k] = clgc_box_new(&o[k], release_boxed);
    for (int i = 0; i < 40; i++)
        ck_assert_ptr_eq(clgc_box_get(b[0]), &o[0]);
    ck_assert_ptr_eq(clgc_box_get(b[1]), &o[1]);
    ck_assert_uint_eq(clgc_holds_mark(), 41);
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(clgc_box_release(b[k]), 1);
    ck_assert_ptr_null(clgc_box_get(b[0]));
    ck_assert_ptr_null(clgc_box_get(b[1]));
    clgc_holds_back_to(40);
    ck_assert_int_eq(releases(&o[1]), 1);
    clgc_holds_back_to(10);
    ck_assert_int_eq(releases(&o[0]), 0);
    clgc_holds_end();
    ck_assert_int_eq(releases(&o[0]), 1);
    for (int k = 0; k < 2; k++)
        clgc_box_free(b[k]);
}
END_TEST

struct race {
    clgc_box_t *box;
    struct test_device *d;
    int stop;
    long uses;
};

/* Ask OpenCL the held buffer's size until it is released (or stopped). */
static void *
use_until_released(void *arg)
{
    struct race *r = arg;
    cl_mem m;

    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE) &&
           (m = clgc_box_get(r->box)) != NULL) {
        size_t size = 0;

        ck_assert_int_eq(
            clgc_clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof(size), &size, NULL),
            CL_SUCCESS);
        ck_assert_uint_eq(size, 256);
        clgc_holds_end();
        __atomic_add_fetch(&r->uses, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static cl_int
release_mem(void *m)
{
    return clgc_clReleaseMemObject(m);
}

/* A buffer released on one thread while four others are in calls on it:
 * each call that held it gets its size; the buffer is freed once, after
 * the last of them (its destructor callback). Bounded by the uses, not a
 * time. */
START_TEST(a_release_racing_calls_frees_after_them)
{
    struct test_device d;
    struct race r = {NULL, &d, 0, 0};
    pthread_t t[4];
    int gone = 0;
    cl_int err;
    cl_mem m;

    test_device_open(&d, 64);
    for (int round = 0; round < 20; round++) {
        m = clgc_clCreateBuffer(d.context, CL_MEM_READ_WRITE, 256, NULL, &err);
        ck_assert_int_eq(err, CL_SUCCESS);
        gone = 0;
        ck_assert_int_eq(clgc_clSetMemObjectDestructorCallback(m, freed, &gone),
                         CL_SUCCESS);
        r.box = clgc_box_new(m, release_mem);
        r.uses = 0;
        for (int i = 0; i < 4; i++)
            ck_assert_int_eq(
                pthread_create(&t[i], NULL, use_until_released, &r), 0);
        while (__atomic_load_n(&r.uses, __ATOMIC_RELAXED) < 100)
            sched_yield();
        ck_assert_int_eq(clgc_box_release(r.box), 1);
        for (int i = 0; i < 4; i++)
            ck_assert_int_eq(pthread_join(t[i], NULL), 0);
        ck_assert_int_eq(__atomic_load_n(&gone, __ATOMIC_ACQUIRE), 1);
        clgc_box_free(r.box);
    }
    test_device_close(&d);
}
END_TEST

static void *
get_and_exit(void *box)
{
    ck_assert_ptr_nonnull(clgc_box_get(box));
    return NULL; /* no clgc_holds_end: the thread's exit lets go */
}

/* A thread's holds last until its clgc_holds_end, or its exit: a call
 * that ended by an exception keeps nothing for ever. */
START_TEST(a_threads_holds_end_with_it)
{
    struct boxed o = {1, 0};
    clgc_box_t *b = clgc_box_new(&o, release_boxed);
    pthread_t t;

    ck_assert_ptr_eq(clgc_box_get(b), &o);
    ck_assert_uint_eq(clgc_holds_mark(), 1);
    ck_assert_ptr_eq(clgc_box_get(b), &o);
    clgc_box_release(b);
    ck_assert_ptr_null(clgc_box_get(b));
    ck_assert_uint_eq(clgc_holds_mark(), 2);
    /* Back to a mark: the inner call's hold goes, the outer one's stays. */
    clgc_holds_back_to(1);
    ck_assert_int_eq(releases(&o), 0);
    clgc_holds_end();
    ck_assert_int_eq(releases(&o), 1);
    clgc_holds_end();
    clgc_box_free(b);
    o = (struct boxed){1, 0};
    b = clgc_box_new(&o, release_boxed);
    ck_assert_int_eq(pthread_create(&t, NULL, get_and_exit, b), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    clgc_box_release(b);
    ck_assert_int_eq(releases(&o), 1);
    clgc_box_free(b);
}
END_TEST

#define RACED 1000

struct raced {
    struct boxed o[RACED];
    clgc_box_t *box[RACED];
    int next; /* the first box not yet released */
};

/* Hold each box not yet released, in turn, until all are: an object seen
 * released while held fails the test. */
static void *
hold_until_all_released(void *arg)
{
    struct raced *r = arg;
    int k;

    while ((k = __atomic_load_n(&r->next, __ATOMIC_ACQUIRE)) < RACED) {
        for (; k < RACED; k++) {
            size_t mark = clgc_holds_mark();
            struct boxed *o = clgc_box_get(r->box[k]);

            if (o != NULL) {
                ck_assert_ptr_eq(o, &r->o[k]);
                ck_assert_int_eq(releases(o), 0);
            }
            clgc_holds_back_to(mark);
        }
    }
    return NULL;
}

/* Four threads hold boxes while this one releases them: no object is
 * released while a thread holds it, and each is released once. */
START_TEST(holds_race_releases)
{
    struct raced *r = calloc(1, sizeof(*r));
    pthread_t t[4];

    for (int k = 0; k < RACED; k++) {
        r->o[k] = (struct boxed){1, 0};
        r->box[k] = clgc_box_new(&r->o[k], release_boxed);
    }
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(
            pthread_create(&t[i], NULL, hold_until_all_released, r), 0);
    for (int k = 0; k < RACED; k++) {
        ck_assert_int_eq(clgc_box_release(r->box[k]), 1);
        __atomic_store_n(&r->next, k + 1, __ATOMIC_RELEASE);
    }
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    for (int k = 0; k < RACED; k++) {
        ck_assert_int_eq(releases(&r->o[k]), 1);
        clgc_box_free(r->box[k]);
    }
    free(r);
}
END_TEST

Suite *
clgc_make_binding_suite(void)
{
    Suite *s = suite_create("binding");
    TCase *tc = test_case("kernel_args");

    tcase_add_test(tc, kinds_are_read_from_the_kernel);
    tcase_add_test(tc, every_kind_refuses_the_others);
    tcase_add_test(tc, bad_sizes_and_objects_are_refused);
    tcase_add_test(tc, a_buffer_set_is_held_until_replaced);
    tcase_add_test(tc, freeing_the_table_lets_go);
    tcase_add_test(tc, binaries_cut_short_are_refused);
    suite_add_tcase(s, tc);
    tc = test_case("boxes");
    tcase_add_test(tc, a_release_waits_for_the_last_hold);
    tcase_add_test(tc, holds_past_the_slots_count_too);
    tcase_add_test(tc, a_threads_holds_end_with_it);
    suite_add_tcase(s, tc);
    /* Under TSan too. */
    tc = test_case("box_races");
    tcase_set_tags(tc, TEST_TAG_THREADED);
    tcase_add_test(tc, holds_race_releases);
    tcase_add_test(tc, a_release_racing_calls_frees_after_them);
    suite_add_tcase(s, tc);
    return s;
}
