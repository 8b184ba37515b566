/* The runtime interface with the recording runtime installed, and the
 * generated command metadata. */

#include "config.h" /* PACKAGE_VERSION */

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

START_TEST(install_again_is_refused)
{
    clgc_runtime_t rt = {.version = CLGC_RUNTIME_VERSION, .name = "second"};

    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EALREADY);
    ck_assert_str_eq(clgc_runtime_current()->name, "recording");
}
END_TEST

START_TEST(install_checks_its_argument)
{
    clgc_runtime_t rt = {.version = 0, .name = "v0"};

    ck_assert_int_eq(clgc_runtime_install(NULL), CLGC_EINVAL);
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EVERSION);
    rt.version = CLGC_RUNTIME_VERSION + 1;
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EVERSION);
}
END_TEST

static void *
pass_through(clgc_fn_t fn, void *arg)
{
    return fn(arg);
}

static int word, stop;

static int *
my_word(void *data)
{
    return &word;
}

static void
wait_nothing(void *data)
{
}

START_TEST(install_refuses_mixed_forms)
{
    clgc_runtime_t rt = {.version = CLGC_RUNTIME_VERSION,
                         .safe_region = pass_through,
                         .thread_state = my_word,
                         .stop_requested = &stop,
                         .safepoint = wait_nothing};

    /* Both forms at once, then part of the safepoint form. */
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EINVAL);
    rt.safe_region = NULL;
    rt.safepoint = NULL;
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EINVAL);
    /* A version 1 struct has no safepoint fields: clgc does not read
     * them, so the install fails only for being the second. */
    rt.version = 1;
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EALREADY);
}
END_TEST

static void *
no_alloc(size_t size, void *data)
{
    return NULL;
}

static void
no_free(void *record, void *data)
{
}

/* Version 4's record hooks come as a pair: a record is freed by the
 * allocator that made it. clgc reads a struct only as far as its version
 * goes, so the same struct with an older version is not refused for them
 * (only for being the second install), and the size of every version is
 * right: a field past a version's end that clgc did read would make the
 * install fail with CLGC_EINVAL. */
START_TEST(install_reads_only_its_version)
{
    clgc_runtime_t half_records = {.version = CLGC_RUNTIME_VERSION,
                                   .record_alloc = no_alloc};
    clgc_runtime_t half_safepoint = {.version = CLGC_RUNTIME_VERSION,
                                     .thread_state = my_word};

    ck_assert_int_eq(CLGC_RUNTIME_VERSION, 4);
    ck_assert_int_eq(clgc_runtime_install(&half_records), CLGC_EINVAL);
    half_records.record_alloc = NULL;
    half_records.record_free = no_free;
    ck_assert_int_eq(clgc_runtime_install(&half_records), CLGC_EINVAL);
    for (int v = 1; v <= 3; v++) {
        half_records.version = v;
        ck_assert_int_eq(clgc_runtime_install(&half_records), CLGC_EALREADY);
    }
    /* Version 2's fields: read from version 2 on. */
    for (int v = 1; v <= CLGC_RUNTIME_VERSION; v++) {
        half_safepoint.version = v;
        ck_assert_int_eq(clgc_runtime_install(&half_safepoint),
                         v == 1 ? CLGC_EALREADY : CLGC_EINVAL);
    }
}
END_TEST

START_TEST(installed_copy_is_in_force)
{
    const clgc_runtime_t *rt = clgc_runtime_current();

    ck_assert_int_eq(rt->version, CLGC_RUNTIME_VERSION);
    ck_assert_ptr_nonnull(rt->safe_region);
    ck_assert_ptr_nonnull(clgc_runtime_data());
    /* The recording runtime has none: records come from malloc. */
    ck_assert_ptr_null(rt->record_alloc);
    ck_assert_ptr_null(rt->record_free);
}
END_TEST

/* Each level checks the thread's state as clgc and the runtime see it,
 * then goes one level deeper: safe, active, safe, active, safe. */
struct level {
    int n;
    unsigned max_depth;
};

static void *descend(void *arg);

static void *
check_level(void *arg)
{
    struct level *l = arg;
    int safe = l->n % 2 == 0;
    unsigned depth = (unsigned)(l->n / 2 + 1);

    ck_assert_int_eq(clgc_thread_in_region(), safe);
    ck_assert_uint_eq(clgc_thread_region_depth(), depth);
    ck_assert_int_eq(test_rt_hook_depth(), safe ? 1 : 0);
    if (depth > l->max_depth)
        l->max_depth = depth;
    l->n++;
    return l->n < 5 ? descend(l) : l;
}

static void *
descend(void *arg)
{
    struct level *l = arg;

    void *result = NULL;

    if (l->n % 2 == 0)
        return clgc_call_safe(check_level, l);
    ck_assert_int_eq(clgc_call_active(check_level, l, &result), CLGC_OK);
    return result;
}

START_TEST(regions_nest_to_depth_three)
{
    unsigned long safe0 = test_rt_safe_calls();
    unsigned long active0 = test_rt_active_calls();
    struct level l = {0, 0};

    ck_assert_ptr_eq(descend(&l), &l);
    ck_assert_int_eq(l.n, 5);
    ck_assert_uint_eq(l.max_depth, 3);
    ck_assert_uint_eq(test_rt_safe_calls() - safe0, 3);
    ck_assert_uint_eq(test_rt_active_calls() - active0, 2);
    ck_assert_uint_eq(clgc_thread_region_depth(), 0);
    ck_assert_int_eq(clgc_thread_in_region(), 0);
    ck_assert_int_eq(test_rt_hook_depth(), 0);
}
END_TEST

static void *
return_arg(void *arg)
{
    return arg;
}

START_TEST(active_outside_a_region_calls_directly)
{
    unsigned long active0 = test_rt_active_calls();
    int x;

    void *result = NULL;

    ck_assert_int_eq(clgc_call_active(return_arg, &x, &result), CLGC_OK);
    ck_assert_ptr_eq(result, &x);
    ck_assert_uint_eq(test_rt_active_calls(), active0);
}
END_TEST

START_TEST(attach_is_idempotent_and_detach_undoes_it)
{
    unsigned long a0 = test_rt_attach_calls(), d0 = test_rt_detach_calls();

    ck_assert_int_eq(clgc_thread_attached(), 0);
    ck_assert_int_eq(clgc_thread_detach(), CLGC_ENOTATTACHED);
    ck_assert_int_eq(clgc_thread_attach(), CLGC_OK);
    ck_assert_int_eq(clgc_thread_attach(), CLGC_OK);
    ck_assert_int_eq(clgc_thread_attached(), 1);
    ck_assert_uint_eq(test_rt_attach_calls() - a0, 1);
    ck_assert_int_eq(clgc_thread_detach(), CLGC_OK);
    ck_assert_int_eq(clgc_thread_attached(), 0);
    ck_assert_uint_eq(test_rt_detach_calls() - d0, 1);
    ck_assert_int_eq(clgc_thread_detach(), CLGC_ENOTATTACHED);
    ck_assert_uint_eq(test_rt_detach_calls() - d0, 1);
}
END_TEST

static void *
detach_inside(void *arg)
{
    return (void *)(intptr_t)clgc_thread_detach();
}

START_TEST(detach_inside_a_region_is_refused)
{
    ck_assert_int_eq(clgc_thread_attach(), CLGC_OK);
    ck_assert_int_eq((int)(intptr_t)clgc_call_safe(detach_inside, NULL),
                     CLGC_EINVAL);
    ck_assert_int_eq(clgc_thread_attached(), 1);
    ck_assert_int_eq(clgc_thread_detach(), CLGC_OK);
}
END_TEST

static void *
attach_and_exit(void *arg)
{
    *(int *)arg = clgc_thread_attach();
    return NULL;
}

START_TEST(exiting_thread_is_detached)
{
    unsigned long a0 = test_rt_attach_calls(), d0 = test_rt_detach_calls();
    pthread_t t;
    int err = -100;

    ck_assert_int_eq(pthread_create(&t, NULL, attach_and_exit, &err), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(err, CLGC_OK);
    ck_assert_uint_eq(test_rt_attach_calls() - a0, 1);
    ck_assert_uint_eq(test_rt_detach_calls() - d0, 1);
}
END_TEST

START_TEST(refused_attach_leaves_thread_detached)
{
    unsigned long d0 = test_rt_detach_calls();

    test_rt_set_attach_result(CLGC_ENOMEM);
    ck_assert_int_eq(clgc_thread_attach(), CLGC_ENOMEM);
    ck_assert_int_eq(clgc_thread_attached(), 0);
    test_rt_set_attach_result(2);
    ck_assert_int_eq(clgc_thread_attach(), CLGC_EATTACH);
    ck_assert_int_eq(clgc_thread_attached(), 0);
    test_rt_set_attach_result(CLGC_OK);
    ck_assert_uint_eq(test_rt_detach_calls(), d0);
}
END_TEST

/* A thread the runtime knew already: nothing for clgc to undo. */
START_TEST(attach_of_a_known_thread_is_not_undone)
{
    unsigned long d0 = test_rt_detach_calls();

    test_rt_set_attach_result(CLGC_KNOWN);
    ck_assert_int_eq(clgc_thread_attach(), CLGC_KNOWN);
    test_rt_set_attach_result(CLGC_OK);
    ck_assert_int_eq(clgc_thread_attached(), 0);
    ck_assert_int_eq(clgc_thread_detach(), CLGC_ENOTATTACHED);
    ck_assert_uint_eq(test_rt_detach_calls(), d0);
}
END_TEST

START_TEST(every_error_has_a_name_and_message)
{
    /* Every code of the table, so that a new one is covered as added. */
#define CODE(name, value, message) CLGC_##name,
    static const int codes[] = {CLGC_OK, CLGC_ERRNO_MAP(CODE)};
#undef CODE

    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        ck_assert_str_ne(clgc_err_name(codes[i]), "UNKNOWN");
        ck_assert_str_ne(clgc_strerror(codes[i]), "unknown clgc error");
        /* Distinct and consecutive: -1, -2, ... in table order. */
        ck_assert_int_eq(codes[i], -(int)i);
    }
    ck_assert_str_eq(clgc_err_name(CLGC_ENOCOMMAND), "ENOCOMMAND");
    ck_assert_str_eq(clgc_err_name(CLGC_EALREADY), "EALREADY");
    ck_assert_str_eq(clgc_err_name(12345), "UNKNOWN");
    ck_assert_str_eq(clgc_strerror(12345), "unknown clgc error");
    ck_assert_str_eq(clgc_version(), CLGC_VERSION_STRING);
}
END_TEST

/* The version is written once, as three numbers in clgc/common.h: the
 * header's string, the library's and configure's package version (read
 * from the header by configure.ac) must all be those numbers. */
START_TEST(version_is_the_headers_numbers)
{
    char numbers[64];

    snprintf(numbers, sizeof(numbers), "%d.%d.%d", CLGC_VERSION_MAJOR,
             CLGC_VERSION_MINOR, CLGC_VERSION_PATCH);
    ck_assert_str_eq(CLGC_VERSION_STRING, numbers);
    ck_assert_str_eq(clgc_version(), numbers);
    ck_assert_str_eq(PACKAGE_VERSION, numbers);
}
END_TEST

Suite *
clgc_make_runtime_suite(void)
{
    Suite *s = suite_create("runtime");
    TCase *tc = test_case("install");

    tcase_add_test(tc, install_again_is_refused);
    tcase_add_test(tc, install_checks_its_argument);
    tcase_add_test(tc, install_refuses_mixed_forms);
    tcase_add_test(tc, install_reads_only_its_version);
    tcase_add_test(tc, installed_copy_is_in_force);
    suite_add_tcase(s, tc);
    tc = test_case("regions");
    tcase_add_test(tc, regions_nest_to_depth_three);
    tcase_add_test(tc, active_outside_a_region_calls_directly);
    suite_add_tcase(s, tc);
    tc = test_case("threads");
    tcase_add_test(tc, attach_is_idempotent_and_detach_undoes_it);
    tcase_add_test(tc, detach_inside_a_region_is_refused);
    tcase_add_test(tc, exiting_thread_is_detached);
    tcase_add_test(tc, refused_attach_leaves_thread_detached);
    tcase_add_test(tc, attach_of_a_known_thread_is_not_undone);
    suite_add_tcase(s, tc);
    tc = test_case("errors");
    tcase_add_test(tc, every_error_has_a_name_and_message);
    suite_add_tcase(s, tc);
    tc = test_case("version");
    tcase_add_test(tc, version_is_the_headers_numbers);
    suite_add_tcase(s, tc);
    return s;
}

/* The metadata generated from the registry. */

START_TEST(commands_are_all_there_in_order)
{
    size_t n = clgc_command_count(), ext = 0, cb = 0;

    ck_assert_uint_eq(n, 252);
    for (size_t i = 0; i < n; i++) {
        const clgc_command_t *c = clgc_command_at(i);

        ck_assert_ptr_nonnull(c->wrapper);
        ck_assert_ptr_eq(clgc_command_find(c->name), c);
        if (i > 0)
            ck_assert_int_lt(strcmp(clgc_command_at(i - 1)->name, c->name), 0);
        ext += (c->flags & CLGC_COMMAND_EXTENSION) != 0;
        cb += (c->flags & CLGC_COMMAND_CALLBACK) != 0;
        for (unsigned p = 0; p < c->nparams; p++)
            ck_assert_int_eq(c->params[p].ctype == CLGC_CTYPE_FUNCTION,
                             strstr(c->params[p].type, "CL_CALLBACK") != NULL);
    }
    ck_assert_uint_eq(ext, 137);
    ck_assert_uint_eq(cb, 13);
    ck_assert_ptr_null(clgc_command_at(n));
    ck_assert_ptr_null(clgc_command_find("clNoSuchCommand"));
    ck_assert_ptr_null(clgc_command_find(NULL));
}
END_TEST

START_TEST(command_metadata_matches_the_api)
{
    const clgc_command_t *c = clgc_command_find("clBuildProgram");

    ck_assert_ptr_eq(c->wrapper, (clgc_function_t)clgc_clBuildProgram);
    ck_assert_str_eq(c->result_type, "cl_int");
    ck_assert_int_eq(c->result_ctype, CLGC_CTYPE_INT32);
    ck_assert_uint_eq(c->nparams, 6);
    ck_assert_str_eq(c->params[4].name, "pfn_notify");
    ck_assert_int_eq(c->params[4].ctype, CLGC_CTYPE_FUNCTION);
    ck_assert_uint_eq(c->flags, CLGC_COMMAND_MAY_BLOCK | CLGC_COMMAND_CALLBACK);
    ck_assert_str_eq(c->origin, "CL_VERSION_1_0");

    /* Blocking by rule: it has a blocking_read parameter. */
    c = clgc_command_find("clEnqueueReadBuffer");
    ck_assert_uint_ne(c->flags & CLGC_COMMAND_MAY_BLOCK, 0);
    c = clgc_command_find("clGetPlatformInfo");
    ck_assert_uint_eq(c->flags, 0);
    ck_assert_int_eq(c->params[2].ctype, CLGC_CTYPE_SIZE);
    c = clgc_command_find("clCreateBuffer");
    ck_assert_int_eq(c->params[1].ctype, CLGC_CTYPE_UINT64);
    ck_assert_int_eq(c->result_ctype, CLGC_CTYPE_POINTER);
    c = clgc_command_find("clSetContentSizeBufferPoCL");
    ck_assert_uint_eq(c->flags, CLGC_COMMAND_EXTENSION);
    ck_assert_str_eq(c->origin, "cl_pocl_content_size");
}
END_TEST

/* A command queue on any OpenCL version: PoCL's 3.0 device takes the 2.0
 * call, Oclgrind's 1.2 one (run's Oclgrind stage) the 1.x call, which
 * takes the CL_QUEUE_PROPERTIES bits and refuses any other property. */
START_TEST(a_command_queue_on_any_version)
{
    cl_platform_id platform = test_platform(TEST_POCL);
    cl_ulong profiling[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_ulong sized[] = {CL_QUEUE_SIZE, 1024, 0};
    cl_command_queue_properties got = 0;
    char version[1024] = "";
    cl_device_id device;
    cl_context context;
    cl_command_queue q;
    cl_int err = 1;

    ck_assert_int_eq(
        clGetDeviceIDs(platform, test_device_type(), 1, &device, NULL), 0);
    ck_assert_int_eq(clGetDeviceInfo(device, CL_DEVICE_VERSION,
                                     sizeof(version) - 1, version, NULL),
                     CL_SUCCESS);
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);

    q = clgc_create_command_queue(context, device, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_ptr_nonnull(q);
    ck_assert_int_eq(clReleaseCommandQueue(q), CL_SUCCESS);
    q = clgc_create_command_queue(context, device, profiling, NULL);
    ck_assert_ptr_nonnull(q);
    ck_assert_int_eq(
        clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof(got), &got, NULL),
        CL_SUCCESS);
    ck_assert(got & CL_QUEUE_PROFILING_ENABLE);
    ck_assert_int_eq(clReleaseCommandQueue(q), CL_SUCCESS);
    if (strncmp(version, "OpenCL 1.", 9) == 0) {
        err = 1;
        ck_assert_ptr_null(
            clgc_create_command_queue(context, device, sized, &err));
        ck_assert_int_eq(err, CL_INVALID_QUEUE_PROPERTIES);
    }
    err = 1;
    ck_assert_ptr_null(clgc_create_command_queue(context, NULL, NULL, &err));
    ck_assert_int_eq(err, CL_INVALID_DEVICE);
    err = 1;
    ck_assert_ptr_null(clgc_create_command_queue(NULL, device, NULL, &err));
    ck_assert_int_eq(err, CL_INVALID_CONTEXT);
    clReleaseContext(context);
}
END_TEST

/* An image's shape, as a transfer needs it (the layers of an array on
 * their axis), and boxes checked against it: the rest of the image by
 * default, and a box past it or too large refused with the reason. */
START_TEST(image_shapes_and_boxes)
{
    cl_platform_id platform = test_platform(TEST_POCL);
    cl_image_format rgba = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = {0};
    size_t origin[3] = {1, 2, 0}, region[3] = {2, 3, 1}, box[3], bytes = 0;
    clgc_image_shape_t shape;
    cl_device_id device;
    cl_context context;
    cl_mem image, buffer;
    cl_int err = 1;

    ck_assert_int_eq(
        clGetDeviceIDs(platform, test_device_type(), 1, &device, NULL), 0);
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    desc.image_type = CL_MEM_OBJECT_IMAGE1D_ARRAY;
    desc.image_width = 8;
    desc.image_array_size = 5;
    image = clCreateImage(context, CL_MEM_READ_WRITE, &rgba, &desc, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clgc_image_shape(image, &shape), CL_SUCCESS);
    ck_assert_uint_eq(shape.extent[0], 8);
    ck_assert_uint_eq(shape.extent[1], 5); /* the layers */
    ck_assert_uint_eq(shape.extent[2], 1);
    ck_assert_uint_eq(shape.element, 4);
    ck_assert_uint_eq(shape.format.image_channel_order, CL_RGBA);

    ck_assert_ptr_null(clgc_image_box(&shape, NULL, NULL, box, &bytes));
    ck_assert_uint_eq(box[0] * box[1] * box[2], 40);
    ck_assert_uint_eq(bytes, 160);
    ck_assert_ptr_null(clgc_image_box(&shape, origin, NULL, box, &bytes));
    ck_assert_uint_eq(box[0], 7);
    ck_assert_uint_eq(box[1], 3);
    ck_assert_uint_eq(bytes, 7 * 3 * 4);
    ck_assert_ptr_null(clgc_image_box(&shape, origin, region, box, &bytes));
    ck_assert_uint_eq(bytes, 2 * 3 * 4);
    region[1] = 4;
    ck_assert_str_eq(clgc_image_box(&shape, origin, region, box, NULL),
                     "the region reaches past the image");
    region[1] = 0;
    ck_assert_str_eq(clgc_image_box(&shape, origin, region, box, NULL),
                     "the region reaches past the image");
    origin[0] = 8;
    ck_assert_str_eq(clgc_image_box(&shape, origin, NULL, box, NULL),
                     "the origin lies outside the image");
    shape.extent[0] = shape.extent[1] = (size_t)1 << 40;
    region[0] = region[1] = (size_t)1 << 40;
    ck_assert_str_eq(clgc_image_box(&shape, NULL, region, box, NULL),
                     "the region is too large");

    buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clgc_image_shape(buffer, &shape), CL_INVALID_MEM_OBJECT);
    clReleaseMemObject(buffer);
    clReleaseMemObject(image);
    clReleaseContext(context);
}
END_TEST

/* Rectangles for the clEnqueue*BufferRect commands: the pitches filled
 * when 0, and each way a rectangle can be wrong refused with its reason
 * (8 rows of 8 bytes). */
START_TEST(rectangles_are_checked)
{
    size_t origin[3] = {2, 1, 0}, region[3] = {4, 3, 1}, row = 0, slice = 0;

    ck_assert_ptr_null(clgc_rect_check(origin, region, &row, &slice, 64));
    ck_assert_uint_eq(row, 4);
    ck_assert_uint_eq(slice, 12);
    row = 8, slice = 0;
    ck_assert_ptr_null(clgc_rect_check(origin, region, &row, &slice, 64));
    ck_assert_uint_eq(slice, 24);
    origin[1] = 6; /* rows 6 to 8: one past the last */
    row = 8, slice = 0;
    ck_assert_str_eq(clgc_rect_check(origin, region, &row, &slice, 64),
                     "the rectangle reaches past the buffer's end");
    origin[1] = 5; /* the last byte is 63 */
    origin[0] = 4;
    row = 8, slice = 0;
    ck_assert_ptr_null(clgc_rect_check(origin, region, &row, &slice, 64));
    row = 2, slice = 0;
    ck_assert_str_eq(clgc_rect_check(origin, region, &row, &slice, 64),
                     "the row pitch is less than the region's width");
    row = 8, slice = 16;
    ck_assert_str_eq(clgc_rect_check(origin, region, &row, &slice, 64),
                     "the slice pitch is less than the row pitch times the "
                     "region's height");
    region[1] = 0;
    ck_assert_str_eq(clgc_rect_check(origin, region, &row, &slice, 64),
                     "the region is empty");
    region[0] = (size_t)1 << 62, region[1] = 8, row = 0, slice = 0;
    ck_assert_str_eq(clgc_rect_check(origin, region, &row, &slice, 64),
                     "the rectangle is too large");
}
END_TEST

/* Every pointer to data of every command says how far the command
 * reaches through it, or why that cannot be known; nothing else claims a
 * reach; and a count names an integer parameter. */
START_TEST(every_pointer_has_a_reach_or_a_reason)
{
    size_t known = 0, unknown = 0;

    for (size_t i = 0; i < clgc_command_count(); i++) {
        const clgc_command_t *c = clgc_command_at(i);

        for (unsigned j = 0; j < c->nparams; j++) {
            const clgc_param_t *p = &c->params[j];
            int data =
                p->ctype == CLGC_CTYPE_POINTER && strchr(p->type, '*') != NULL;

            ck_assert_msg(!data || (p->elem_size > 0) != (p->unknown != NULL),
                          "%s %s: a reach or a reason", c->name, p->name);
            ck_assert_msg(data || (p->elem_size == 0 && p->unknown == NULL),
                          "%s %s: no reach", c->name, p->name);
            ck_assert_int_lt(p->count_param, (int)c->nparams);
            ck_assert_int_ne(p->count_param, (int)j);
            if (p->count_param >= 0) {
                clgc_ctype_t t = c->params[p->count_param].ctype;

                ck_assert_msg(
                    t != CLGC_CTYPE_POINTER && t != CLGC_CTYPE_FUNCTION &&
                        t != CLGC_CTYPE_FLOAT && t != CLGC_CTYPE_DOUBLE,
                    "%s %s: counted by an integer", c->name, p->name);
            }
            known += p->elem_size > 0;
            unknown += p->unknown != NULL;
        }
    }
    ck_assert_uint_gt(known, 300);
    ck_assert_uint_gt(unknown, 0);
}
END_TEST

/* clgc_command_reach over the arguments of a call. */
START_TEST(a_pointer_reaches_what_its_count_says)
{
    const clgc_command_t *info = clgc_command_find("clGetDeviceInfo"),
                         *nd = clgc_command_find("clEnqueueNDRangeKernel"),
                         *src = clgc_command_find("clCreateProgramWithSource");
    clgc_arg_t a[9];

    memset(a, 0, sizeof(a));
    a[2] = (clgc_arg_t){CLGC_CTYPE_SIZE, {.size = 24}};
    ck_assert_int_eq(clgc_command_reach(info, 3, a), 24);
    ck_assert_int_eq(clgc_command_reach(info, 4, a), (int64_t)sizeof(size_t));
    ck_assert_int_eq(clgc_command_reach(info, 0, a), -1); /* a handle */
    ck_assert_int_eq(clgc_command_reach(info, 2, a), -1); /* a value */
    ck_assert_int_eq(clgc_command_reach(info, 5, a), -1); /* no such */
    a[2].value.size = SIZE_MAX;
    ck_assert_int_eq(clgc_command_reach(info, 3, a), INT64_MAX);

    memset(a, 0, sizeof(a));
    a[2] = (clgc_arg_t){CLGC_CTYPE_UINT32, {.u32 = 3}};
    a[6] = (clgc_arg_t){CLGC_CTYPE_UINT32, {.u32 = 2}};
    ck_assert_str_eq(nd->params[4].name, "global_work_size");
    ck_assert_int_eq(clgc_command_reach(nd, 4, a), 3 * (int64_t)sizeof(size_t));
    ck_assert_str_eq(nd->params[7].name, "event_wait_list");
    ck_assert_int_eq(clgc_command_reach(nd, 7, a), 2 * (int64_t)sizeof(void *));
    ck_assert_int_eq(clgc_command_reach(nd, 8, a), (int64_t)sizeof(void *));

    memset(a, 0, sizeof(a));
    a[1] = (clgc_arg_t){CLGC_CTYPE_UINT32, {.u32 = 4}};
    ck_assert_str_eq(src->params[2].name, "strings");
    ck_assert_int_eq(clgc_command_reach(src, 2, a),
                     4 * (int64_t)sizeof(void *));
    ck_assert_int_eq(clgc_command_reach(NULL, 0, a), -1);
    ck_assert_str_eq(
        clgc_command_find("clGetExtensionFunctionAddress")->params[0].unknown,
        "a NUL-terminated string");
}
END_TEST

/* clgc_command_keep: how long a binding keeps the memory it passes. */
START_TEST(memory_is_kept_as_long_as_the_command_uses_it)
{
    const clgc_command_t *read = clgc_command_find("clEnqueueReadBuffer"),
                         *fill = clgc_command_find("clEnqueueFillBuffer"),
                         *svm = clgc_command_find("clEnqueueSVMMemcpy"),
                         *create = clgc_command_find("clCreateBuffer"),
                         *info = clgc_command_find("clGetDeviceInfo");
    clgc_arg_t a[9];

    memset(a, 0, sizeof(a));
    a[2] = (clgc_arg_t){CLGC_CTYPE_UINT32, {.u32 = CL_FALSE}};
    ck_assert_str_eq(read->params[5].name, "ptr");
    ck_assert_int_eq(clgc_command_keep(read, 5, a), CLGC_KEEP_COMMAND);
    a[2].value.u32 = CL_TRUE;
    ck_assert_int_eq(clgc_command_keep(read, 5, a), CLGC_KEEP_CALL);
    ck_assert_int_eq(clgc_command_keep(read, 7, a), CLGC_KEEP_CALL);
    ck_assert_int_eq(clgc_command_keep(read, 1, a), CLGC_KEEP_CALL);
    ck_assert_str_eq(fill->params[2].name, "pattern"); /* copied */
    ck_assert_int_eq(clgc_command_keep(fill, 2, a), CLGC_KEEP_CALL);
    memset(a, 0, sizeof(a));
    ck_assert_str_eq(svm->params[3].name, "src_ptr");
    ck_assert_int_eq(clgc_command_keep(svm, 3, a), CLGC_KEEP_COMMAND);

    memset(a, 0, sizeof(a));
    a[1] = (clgc_arg_t){CLGC_CTYPE_UINT64, {.u64 = CL_MEM_COPY_HOST_PTR}};
    ck_assert_int_eq(clgc_command_keep(create, 3, a), CLGC_KEEP_CALL);
    a[1].value.u64 = CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR;
    ck_assert_int_eq(clgc_command_keep(create, 3, a), CLGC_KEEP_OBJECT);
    ck_assert_int_eq(clgc_command_keep(info, 3, a), CLGC_KEEP_CALL);
    ck_assert_int_eq(clgc_command_keep(NULL, 0, a), CLGC_KEEP_CALL);
    ck_assert_int_eq(clgc_command_keep(create, 9, a), CLGC_KEEP_CALL);

    /* What keeps a command's memory: its event, the caller's or one of
     * the binding's own. */
    ck_assert_int_eq(clgc_command_event(read), 8);
    ck_assert_int_eq(clgc_command_event(svm), 7);
    ck_assert_int_eq(clgc_command_event(clgc_command_find("clEnqueueMarker")),
                     1);
    ck_assert_int_eq(clgc_command_event(create), -1);
    ck_assert_int_eq(clgc_command_event(info), -1);
    ck_assert_int_eq(clgc_command_event(NULL), -1);
    for (size_t i = 0; i < clgc_command_count(); i++) {
        const clgc_command_t *c = clgc_command_at(i);
        int e = clgc_command_event(c);

        if (e >= 0)
            ck_assert_str_eq(c->params[e].type, "cl_event *");
    }
}
END_TEST

/* clgc_image_fill_color: the type a fill's color is read as. */
START_TEST(a_fill_reads_its_color_by_channel_type)
{
    static const struct {
        cl_channel_type type;
        clgc_fill_color_t color;
    } cases[] = {
        {CL_UNORM_INT8, CLGC_FILL_FLOAT},
        {CL_SNORM_INT16, CLGC_FILL_FLOAT},
        {CL_HALF_FLOAT, CLGC_FILL_FLOAT},
        {CL_FLOAT, CLGC_FILL_FLOAT},
        {CL_SIGNED_INT8, CLGC_FILL_INT},
        {CL_SIGNED_INT32, CLGC_FILL_INT},
        {CL_UNSIGNED_INT16, CLGC_FILL_UINT},
        {CL_UNSIGNED_INT32, CLGC_FILL_UINT},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cl_image_format f = {CL_RGBA, cases[i].type};

        ck_assert_int_eq(clgc_image_fill_color(&f), cases[i].color);
    }
    ck_assert_int_eq(clgc_image_fill_color(NULL), CLGC_FILL_FLOAT);
}
END_TEST

Suite *
clgc_make_commands_suite(void)
{
    Suite *s = suite_create("commands");
    TCase *tc = test_case("metadata");

    tcase_add_test(tc, commands_are_all_there_in_order);
    tcase_add_test(tc, command_metadata_matches_the_api);
    tcase_add_test(tc, a_command_queue_on_any_version);
    tcase_add_test(tc, image_shapes_and_boxes);
    tcase_add_test(tc, rectangles_are_checked);
    tcase_add_test(tc, every_pointer_has_a_reach_or_a_reason);
    tcase_add_test(tc, a_pointer_reaches_what_its_count_says);
    tcase_add_test(tc, memory_is_kept_as_long_as_the_command_uses_it);
    tcase_add_test(tc, a_fill_reads_its_color_by_channel_type);
    suite_add_tcase(s, tc);
    return s;
}
