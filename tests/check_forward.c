/* Every wrapper forwards its arguments and result unchanged, inside exactly
 * one safe region: each command is called through clgc_<name> with
 * distinct arguments, and the stub ICD (tests/stub), which the real ICD
 * loader loads, records what arrives. Extension commands, and the core
 * commands newer than the loader (OpenCL 3.1's), reach the stub through the
 * real lookup path (clgc's resolver, the loader, the stub's
 * clGetExtensionFunctionAddressForPlatform). The checks themselves are in
 * fwutil.c, which check_ffi.c shares. */

#include <pthread.h>
#include <string.h>

#include "fwutil.h"

/* Indices of the cases each looped test covers, chosen when the suite is
 * made (so forked tests inherit them). */
static unsigned fw_refusable[TEST_FORWARD_N], fw_n_refusable;
static unsigned fw_nullable[TEST_FORWARD_N], fw_n_nullable;
static unsigned fw_callbacks[TEST_FORWARD_N], fw_n_callbacks;

/* The wrapper, called directly. */
static uint64_t
fw_direct(const struct test_forward_case *c, const struct fw_args *a)
{
    return c->call(a->bits);
}

START_TEST(every_wrapper_forwards)
{
    const struct test_forward_case *c = &test_forward_cases[_i];
    const clgc_command_t *cmd = clgc_command_at((size_t)_i);

    ck_assert_uint_eq(c->index, (unsigned)_i);
    ck_assert_ptr_nonnull(cmd);
    ck_assert_str_eq(c->name, cmd->name);
    ck_assert_uint_eq(c->nparams, cmd->nparams);
    switch (c->route) {
    case TEST_ROUTE_STUB:
        fw_check_stub(c, fw_direct);
        break;
    case TEST_ROUTE_ELSEWHERE:
        fw_check_elsewhere(c, fw_direct);
        break;
    case TEST_ROUTE_CLGC:
        /* Hand-written wrappers: see the lookup tests below. */
        ck_assert_ptr_nonnull(c->why);
        break;
    }
}
END_TEST

/* What a callback the stub called saw. */
static struct {
    int calls;
    void *data;
    int in_region, hook_depth;
    pthread_t thread;
    unsigned long active_calls;
} fw_seen;

static void
fw_saw(void *data)
{
    fw_seen.calls++;
    fw_seen.data = data;
    fw_seen.in_region = clgc_thread_in_region();
    fw_seen.hook_depth = test_rt_hook_depth();
    fw_seen.thread = pthread_self();
    fw_seen.active_calls = test_rt_active_calls();
}

static void CL_CALLBACK
fw_on_object(void *object, void *data)
{
    fw_saw(data);
}

static void CL_CALLBACK
fw_on_event(cl_event event, cl_int status, void *data)
{
    fw_saw(data);
}

static void CL_CALLBACK
fw_on_context_error(const char *errinfo, const void *info, size_t cb,
                    void *data)
{
    fw_saw(data);
}

static void CL_CALLBACK
fw_on_svm_free(cl_command_queue queue, cl_uint n, void *pointers[], void *data)
{
    fw_saw(data);
}

static void CL_CALLBACK
fw_on_native(void *args)
{
    fw_saw(args);
}

/* A callback of the type the registry gives, e.g. "void (CL_CALLBACK
 * *)(cl_program program, void *user_data)". The callbacks whose only
 * argument besides user_data is an object share one. */
static uint64_t
fw_callback_for(const char *type)
{
    void *fn;

    if (strstr(type, "cl_int event_command_status") != NULL)
        fn = (void *)fw_on_event;
    else if (strstr(type, "const char *errinfo") != NULL)
        fn = (void *)fw_on_context_error;
    else if (strstr(type, "svm_pointers") != NULL)
        fn = (void *)fw_on_svm_free;
    else if (strstr(type, "(void *)") != NULL)
        fn = (void *)fw_on_native;
    else
        fn = (void *)fw_on_object;
    return (uint64_t)(uintptr_t)fn;
}

/* The stub calls every callback it is given once, inline: clgc's
 * trampoline must reach the user's function with its data, on this
 * thread, re-entering the runtime through the active hook from inside the
 * wrapper's region. What the stub received is clgc's trampoline, not the
 * user's function. */
START_TEST(every_callback_is_delivered_active)
{
    const struct test_forward_case *c = &test_forward_cases[fw_callbacks[_i]];
    const clgc_command_t *cmd = clgc_command_at(c->index);
    unsigned long active0;
    int fn = -1, data = -1;
    struct fw_args a;
    uint64_t r;

    fw_build(c, fw_stub_platform, &a);
    for (unsigned i = 0; i < c->nparams; i++) {
        if (c->kinds[i] == TEST_ARG_FUNCTION)
            fn = (int)i;
        if (strcmp(c->names[i], "user_data") == 0 ||
            strcmp(c->names[i], "args") == 0)
            data = (int)i;
    }
    ck_assert_int_ge(fn, 0);
    ck_assert_int_ge(data, 0);
    a.bits[fn] = fw_callback_for(cmd->params[fn].type);
    memset(&fw_seen, 0, sizeof(fw_seen));
    fw_ctl->reset();
    active0 = test_rt_active_calls();
    r = c->call(a.bits);
    ck_assert_msg(fw_seen.calls == 1, "%s: the callback ran %d times", c->name,
                  fw_seen.calls);
    ck_assert_msg(fw_seen.data == (void *)(uintptr_t)a.bits[data],
                  "%s: the callback got data %p", c->name, fw_seen.data);
    ck_assert(pthread_equal(fw_seen.thread, pthread_self()));
    ck_assert_int_eq(fw_seen.in_region, 0);
    ck_assert_int_eq(fw_seen.hook_depth, 0);
    ck_assert_uint_eq(fw_seen.active_calls - active0, 1);
    ck_assert_uint_ge(fw_ctl->calls, 1);
    ck_assert_uint_eq(fw_ctl->log[0].index, c->index);
    ck_assert_msg(fw_ctl->log[0].args[fn] != a.bits[fn],
                  "%s: the stub got the user's function", c->name);
    ck_assert_uint_eq(r, fw_stub_result(c));
    ck_assert_int_eq(test_rt_hook_depth(), 0);
}
END_TEST

/* On the refusing platform every extension lookup answers NULL: the
 * wrapper fails with CL_INVALID_OPERATION and calls nothing, except for
 * the functions ocl-icd hands out itself, which reach the platform's
 * dispatch table whatever the platform says. */
START_TEST(refused_extension_fails_cleanly)
{
    const struct test_forward_case *c = &test_forward_cases[fw_refusable[_i]];
    struct fw_args a;
    uint64_t r;

    fw_build(c, fw_refusing_platform, &a);
    fw_ctl->reset();
    r = fw_call(c, &a, fw_direct);
    if (c->loader_fn) {
        fw_expect_recorded(c, &a);
        ck_assert_uint_eq(r, fw_stub_result(c));
    } else {
        fw_expect_error(c, &a, r, CL_INVALID_OPERATION);
    }
}
END_TEST

/* A NULL object where clgc looks for the platform: the object's CL error,
 * and nothing called. */
START_TEST(null_object_fails_cleanly)
{
    const struct test_forward_case *c = &test_forward_cases[fw_nullable[_i]];
    struct fw_args a;
    uint64_t r;

    fw_build(c, fw_stub_platform, &a);
    a.bits[c->vendor] = 0;
    fw_ctl->reset();
    r = fw_call(c, &a, fw_direct);
    fw_expect_error(c, &a, r, c->null_error);
}
END_TEST

/* Issue 25, item 4: a driver may leave an entry of its dispatch table NULL
 * (PoCL 3.1 has no clSetCommandQueueProperty), and the loader calls
 * through it unchecked: OpenCL-CTS's set_command_queue_property jumped to
 * address 0. Through clgc the call is CL_INVALID_OPERATION and nothing is
 * called. The refusing platform is never the first one, so its calls take
 * the out-of-line check, which reads the object's table each time; the
 * first platform's inline check is the PoCL test in check_pocl.c. One
 * command of each shape: an int result, an object result with
 * errcode_ret, a callback, a blocking one, a list of objects. */
static const struct {
    const char *name;
    size_t offset;
} fw_null_entries[] = {
#define FW_ENTRY(name)                                                         \
    {                                                                          \
#name, offsetof(struct _cl_icd_dispatch, name)                         \
    }
    FW_ENTRY(clSetCommandQueueProperty),
    FW_ENTRY(clCreateBuffer),
    FW_ENTRY(clBuildProgram),
    FW_ENTRY(clFinish),
    FW_ENTRY(clWaitForEvents),
    FW_ENTRY(clEnqueueNDRangeKernel),
#undef FW_ENTRY
};

START_TEST(null_entry_fails_cleanly)
{
    const struct test_forward_case *c = NULL;
    struct fw_args a;
    uint64_t r;

    for (unsigned i = 0; i < TEST_FORWARD_N && c == NULL; i++)
        if (strcmp(test_forward_cases[i].name, fw_null_entries[_i].name) == 0)
            c = &test_forward_cases[i];
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->route, TEST_ROUTE_STUB);
    /* The entry is there until cleared: the call reaches the stub. */
    fw_build(c, fw_refusing_platform, &a);
    fw_ctl->reset();
    r = fw_call(c, &a, fw_direct);
    fw_expect_recorded(c, &a);
    ck_assert_uint_eq(r, fw_stub_result(c));
    fw_ctl->clear_entry(fw_null_entries[_i].offset);
    fw_build(c, fw_refusing_platform, &a);
    fw_ctl->reset();
    r = fw_call(c, &a, fw_direct);
    fw_expect_error(c, &a, r, CL_INVALID_OPERATION);
}
END_TEST

/* clgc's own lookup hands out its wrapper for a function the platform
 * has (asking the platform through the loader), and NULL otherwise. */
START_TEST(lookup_for_platform_hands_out_wrappers)
{
    unsigned long before = test_rt_safe_calls();
    void *fn = clgc_clGetExtensionFunctionAddressForPlatform(
        fw_stub_platform, "clHostMemAllocINTEL");

    ck_assert_ptr_eq(fn, (void *)clgc_clHostMemAllocINTEL);
    ck_assert_uint_eq(fw_ctl->lookups, 1);
    fn = clgc_clGetExtensionFunctionAddressForPlatform(fw_refusing_platform,
                                                       "clHostMemAllocINTEL");
    ck_assert_ptr_null(fn);
    ck_assert_uint_eq(fw_ctl->lookups, 2);
    ck_assert_uint_eq(test_rt_safe_calls() - before, 2);
    ck_assert_uint_eq(fw_ctl->calls, 0);
}
END_TEST

/* Without a platform ocl-icd only knows its own functions (and names with
 * a platform's suffix): clgc hands out its wrapper for those. */
START_TEST(lookup_hands_out_wrappers)
{
    unsigned long before = test_rt_safe_calls();

    ck_assert_ptr_eq(clgc_clGetExtensionFunctionAddress("clRetainDeviceEXT"),
                     (void *)clgc_clRetainDeviceEXT);
    ck_assert_ptr_null(clgc_clGetExtensionFunctionAddress("clgcNoSuchKHR"));
    ck_assert_uint_eq(test_rt_safe_calls() - before, 2);
    ck_assert_uint_eq(fw_ctl->calls, 0);
}
END_TEST

/* The looped tests above cover something: a generator that lost track of
 * the objects would otherwise make them pass by running zero times. */
START_TEST(looped_tests_cover_extensions)
{
    unsigned n_ext = 0;

    for (unsigned i = 0; i < TEST_FORWARD_N; i++)
        n_ext += test_forward_cases[i].extension;
    ck_assert_uint_gt(n_ext, 0);
    ck_assert_uint_gt(fw_n_refusable, n_ext / 2);
    ck_assert_uint_gt(fw_n_nullable, n_ext / 2);
}
END_TEST

/* The stub's clIcdGetPlatformIDsKHR, as the loader calls it, writes its
 * own platforms and nothing past them, however much room it is told of:
 * the loader may tell it of more than it has. */
START_TEST(stub_platform_ids_fill_only_its_platforms)
{
    typedef cl_int(CL_API_CALL * get_ids_fn)(cl_uint, cl_platform_id *,
                                             cl_uint *);
    get_ids_fn get_ids = (get_ids_fn)clGetExtensionFunctionAddressForPlatform(
        fw_stub_platform, "clIcdGetPlatformIDsKHR");
    cl_platform_id mark = (cl_platform_id)&mark, ids[8];
    cl_uint n = 0;

    ck_assert_ptr_nonnull(get_ids);
    for (int i = 0; i < 8; i++)
        ids[i] = mark;
    ck_assert_int_eq(get_ids(8, ids, &n), CL_SUCCESS);
    ck_assert_uint_eq(n, 2);
    ck_assert(ids[0] != mark && ids[1] != mark && ids[0] != ids[1]);
    for (int i = 2; i < 8; i++)
        ck_assert_ptr_eq(ids[i], mark);
}
END_TEST

/* Which cases the looped tests cover. */
static void
fw_select_cases(void)
{
    fw_n_refusable = fw_n_nullable = fw_n_callbacks = 0;
    for (unsigned i = 0; i < TEST_FORWARD_N; i++) {
        const struct test_forward_case *c = &test_forward_cases[i];

        if ((clgc_command_at(i)->flags & CLGC_COMMAND_CALLBACK) &&
            c->route == TEST_ROUTE_STUB)
            fw_callbacks[fw_n_callbacks++] = i;
        if (!c->extension || c->route != TEST_ROUTE_STUB)
            continue;
        /* Without an object clgc asks every platform in turn. */
        if (c->has_vendor)
            fw_refusable[fw_n_refusable++] = i;
        if (c->vendor >= 0)
            fw_nullable[fw_n_nullable++] = i;
    }
}

static TCase *
fw_tcase(const char *name)
{
    TCase *tc = test_case(name);

    tcase_add_checked_fixture(tc, fw_setup, fw_teardown);
    return tc;
}

Suite *
clgc_make_forward_suite(void)
{
    Suite *s = suite_create("forward");
    TCase *tc;

    fw_select_cases();
    tc = fw_tcase("forward");
    tcase_add_loop_test(tc, every_wrapper_forwards, 0, TEST_FORWARD_N);
    suite_add_tcase(s, tc);
    tc = fw_tcase("callbacks");
    tcase_add_loop_test(tc, every_callback_is_delivered_active, 0,
                        (int)fw_n_callbacks);
    suite_add_tcase(s, tc);
    tc = fw_tcase("refused");
    tcase_add_loop_test(tc, refused_extension_fails_cleanly, 0,
                        (int)fw_n_refusable);
    suite_add_tcase(s, tc);
    tc = fw_tcase("null");
    tcase_add_loop_test(tc, null_object_fails_cleanly, 0, (int)fw_n_nullable);
    suite_add_tcase(s, tc);
    tc = fw_tcase("null entry");
    tcase_add_loop_test(
        tc, null_entry_fails_cleanly, 0,
        (int)(sizeof(fw_null_entries) / sizeof(fw_null_entries[0])));
    suite_add_tcase(s, tc);
    tc = fw_tcase("lookup");
    tcase_add_test(tc, lookup_for_platform_hands_out_wrappers);
    tcase_add_test(tc, stub_platform_ids_fill_only_its_platforms);
    tcase_add_test(tc, lookup_hands_out_wrappers);
    tcase_add_test(tc, looped_tests_cover_extensions);
    suite_add_tcase(s, tc);
    return s;
}
