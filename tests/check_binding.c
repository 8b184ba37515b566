/* A kernel's argument table (clgc/binding.h) on the real PoCL: every kind
 * of argument refuses every other kind with a sentence that names the
 * kernel and the argument, the objects set are held until replaced or the
 * table freed (a destructor callback tells when one is freed), and a
 * launch with an argument not set is refused. */

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
                   CL_INVALID_ARG_INDEX, "argument 7 of kernel kinds: it has 7");
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
    suite_add_tcase(s, tc);
    return s;
}
