/* Every wrapper forwards its arguments and result unchanged, inside exactly
 * one safe region: each command is called through clgc_<name> with
 * distinct arguments, and the stub ICD (tests/stub), which the real ICD
 * loader loads, records what arrives. Extension commands reach the stub
 * through the real lookup path (clgc's resolver, the loader, the stub's
 * clGetExtensionFunctionAddressForPlatform).
 *
 * Needs OCL_ICD_VENDORS naming a directory with the stub's .icd file (the
 * build makes tests/vendors/). */

#include <stdint.h>
#include <string.h>

#include "gen/forward.h"
#include "stub/stub.h"
#include "testutil.h"

/* Room for the largest output any call here writes: the platform lists of
 * clGetPlatformIDs and clIcdGetPlatformIDsKHR. */
#define FW_SCRATCH_WORDS 16

/* The arguments of one call: the patterns passed, and the memory that the
 * pointers among them point to. */
struct fw_args {
    uint64_t bits[TEST_MAX_PARAMS];
    uint64_t scratch[TEST_MAX_PARAMS][FW_SCRATCH_WORDS];
    void *objects[TEST_MAX_PARAMS][2];
};

static struct stub_control *ctl;
static cl_platform_id stub_platform, refusing_platform;

/* Indices of the cases each looped test covers, chosen when the suite is
 * made (so forked tests inherit them). */
static unsigned fw_refusable[TEST_FORWARD_N], fw_n_refusable;
static unsigned fw_nullable[TEST_FORWARD_N], fw_n_nullable;

static void
fw_setup(void)
{
    stub_platform = test_platform(STUB_PLATFORM_NAME);
    refusing_platform = test_platform(STUB_REFUSING_NAME);
    ck_assert_int_eq(clGetPlatformInfo(stub_platform, STUB_PLATFORM_CONTROL,
                                       sizeof(ctl), &ctl, NULL),
                     CL_SUCCESS);
    ck_assert_ptr_nonnull(ctl);
    ctl->probe = test_rt_hook_depth;
    ctl->reset();
}

static void
fw_teardown(void)
{
    if (ctl != NULL)
        ctl->probe = NULL;
}

/* A pattern for a scalar, distinct for every (command, parameter) and
 * with high bits set, so that a truncated or swapped argument cannot go
 * unnoticed. Callbacks are NULL, which a wrapper passes on unchanged (a
 * real one is replaced by clgc's trampoline: check_callback.c). */
static uint64_t
fw_pattern(const struct test_forward_case *c, unsigned i)
{
    uint64_t low = ((uint64_t)c->index << 8) | i;

    switch (c->kinds[i]) {
    case TEST_ARG_SCALAR32:
        return 0x80000000u | low;
    case TEST_ARG_SCALAR64:
        return 0xA5A5000000000000u | low;
    case TEST_ARG_SIZE:
        return (0x5A5A000000000000u & (uint64_t)SIZE_MAX) | low;
    default: /* TEST_ARG_FUNCTION */
        return 0;
    }
}

static uint64_t
fw_object(cl_platform_id platform, unsigned i)
{
    void *obj = ctl->object(platform, i);

    ck_assert_ptr_nonnull(obj);
    return (uint64_t)(uintptr_t)obj;
}

/* Arguments for case c on a stub platform: real objects of that platform
 * where the loader or clgc reads the dispatch pointer, zeroed scratch
 * memory (a zero-terminated list of any property type) for other
 * pointers. */
static void
fw_build(const struct test_forward_case *c, cl_platform_id platform,
         struct fw_args *a)
{
    memset(a, 0, sizeof(*a));
    for (unsigned i = 0; i < c->nparams; i++) {
        switch (c->kinds[i]) {
        case TEST_ARG_PLATFORM:
            a->bits[i] = (uint64_t)(uintptr_t)platform;
            break;
        case TEST_ARG_OBJECT:
            a->bits[i] = fw_object(platform, i);
            break;
        case TEST_ARG_OBJECTS:
            /* Objects TEST_MAX_PARAMS and up: never one passed directly. */
            for (unsigned k = 0; k < 2; k++)
                a->objects[i][k] = (void *)(uintptr_t)fw_object(
                    platform, TEST_MAX_PARAMS + 2 * i + k);
            a->bits[i] = (uint64_t)(uintptr_t)a->objects[i];
            break;
        case TEST_ARG_CONTEXT_PROPERTIES:
            a->scratch[i][0] = CL_CONTEXT_PLATFORM;
            a->scratch[i][1] = (uint64_t)(uintptr_t)platform;
            a->bits[i] = (uint64_t)(uintptr_t)a->scratch[i];
            break;
        case TEST_ARG_POINTER:
            a->bits[i] = (uint64_t)(uintptr_t)a->scratch[i];
            break;
        default:
            a->bits[i] = fw_pattern(c, i);
            break;
        }
    }
}

/* The result the stub returns for c, as the case function reports it. */
static uint64_t
fw_stub_result(const struct test_forward_case *c)
{
    switch (c->result) {
    case TEST_RESULT_INT32:
        return (uint32_t)stub_result_bits(c->index);
    case TEST_RESULT_POINTER:
        if (c->result_object)
            return (uint64_t)(uintptr_t)ctl->made_context;
        return stub_result_bits(c->index);
    default:
        return 0;
    }
}

/* Call c's wrapper and check that it entered exactly one safe region and
 * left the thread outside any. */
static uint64_t
fw_call(const struct test_forward_case *c, const struct fw_args *a)
{
    unsigned long before = test_rt_safe_calls();
    uint64_t r = c->call(a->bits);

    ck_assert_msg(test_rt_safe_calls() - before == 1,
                  "%s: %lu safe regions, expected 1", c->name,
                  test_rt_safe_calls() - before);
    ck_assert_int_eq(test_rt_hook_depth(), 0);
    return r;
}

/* The stub received exactly one call, of c, with exactly a's arguments,
 * inside exactly one safe region. */
static void
fw_expect_recorded(const struct test_forward_case *c, const struct fw_args *a)
{
    const struct stub_call *call = &ctl->log[0];

    ck_assert_msg(ctl->calls == 1, "%s: the stub received %lu calls", c->name,
                  ctl->calls);
    ck_assert_msg(call->index == c->index, "%s: the stub received command %u",
                  c->name, call->index);
    ck_assert_uint_eq(call->nargs, c->nparams);
    for (unsigned i = 0; i < c->nparams; i++)
        ck_assert_msg(call->args[i] == a->bits[i],
                      "%s: argument %s arrived as %#llx, passed %#llx", c->name,
                      c->names[i], (unsigned long long)call->args[i],
                      (unsigned long long)a->bits[i]);
    ck_assert_msg(call->probe == 1, "%s: ran at hook depth %d, expected 1",
                  c->name, call->probe);
}

/* The wrapper failed with err without calling anything: err is the
 * result, or the result is NULL and err is in *errcode_ret. */
static void
fw_expect_error(const struct test_forward_case *c, const struct fw_args *a,
                uint64_t r, cl_int err)
{
    cl_int got;

    ck_assert_msg(ctl->calls == 0, "%s: the stub was called", c->name);
    if (c->result == TEST_RESULT_INT32) {
        ck_assert_msg((cl_int)(uint32_t)r == err, "%s: returned %d, not %d",
                      c->name, (cl_int)(uint32_t)r, err);
    } else if (c->result == TEST_RESULT_POINTER) {
        ck_assert_msg(r == 0, "%s: returned %#llx, not NULL", c->name,
                      (unsigned long long)r);
    }
    if (c->result != TEST_RESULT_INT32 && c->errcode >= 0) {
        memcpy(&got, a->scratch[c->errcode], sizeof(got));
        ck_assert_msg(got == err, "%s: *errcode_ret is %d, not %d", c->name,
                      got, err);
    }
}

static void
fw_check_stub(const struct test_forward_case *c)
{
    struct fw_args a;
    uint64_t r;

    fw_build(c, stub_platform, &a);
    ctl->reset();
    r = fw_call(c, &a);
    fw_expect_recorded(c, &a);
    ck_assert_msg(r == fw_stub_result(c), "%s: returned %#llx, not %#llx",
                  c->name, (unsigned long long)r,
                  (unsigned long long)fw_stub_result(c));
}

/* The stub never sees c: the wrapper must give what the raw call gives,
 * result and output alike. */
static void
fw_check_elsewhere(const struct test_forward_case *c)
{
    struct fw_args a, b;
    unsigned long before;
    uint64_t r, raw;

    ck_assert_ptr_nonnull(c->raw);
    fw_build(c, stub_platform, &a);
    fw_build(c, stub_platform, &b);
    ctl->reset();
    r = fw_call(c, &a);
    before = test_rt_safe_calls();
    raw = c->raw(b.bits);
    ck_assert_uint_eq(test_rt_safe_calls(), before);
    ck_assert_msg(ctl->calls == 0 && ctl->hooked == 0,
                  "%s: the stub was called (%s)", c->name, c->why);
    ck_assert_int_eq((cl_int)(uint32_t)raw, CL_SUCCESS);
    ck_assert_msg(r == raw, "%s: returned %#llx, the raw call %#llx", c->name,
                  (unsigned long long)r, (unsigned long long)raw);
    for (unsigned i = 0; i < c->nparams; i++)
        ck_assert_msg(
            memcmp(a.scratch[i], b.scratch[i], sizeof(a.scratch[i])) == 0,
            "%s: output %s differs from the raw call's", c->name, c->names[i]);
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
        fw_check_stub(c);
        break;
    case TEST_ROUTE_ELSEWHERE:
        fw_check_elsewhere(c);
        break;
    case TEST_ROUTE_CLGC:
        /* Hand-written wrappers: see the lookup tests below. */
        ck_assert_ptr_nonnull(c->why);
        break;
    }
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

    fw_build(c, refusing_platform, &a);
    ctl->reset();
    r = fw_call(c, &a);
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

    fw_build(c, stub_platform, &a);
    a.bits[c->vendor] = 0;
    ctl->reset();
    r = fw_call(c, &a);
    fw_expect_error(c, &a, r, c->null_error);
}
END_TEST

/* clgc's own lookup hands out its wrapper for a function the platform
 * has (asking the platform through the loader), and NULL otherwise. */
START_TEST(lookup_for_platform_hands_out_wrappers)
{
    unsigned long before = test_rt_safe_calls();
    void *fn = clgc_clGetExtensionFunctionAddressForPlatform(
        stub_platform, "clHostMemAllocINTEL");

    ck_assert_ptr_eq(fn, (void *)clgc_clHostMemAllocINTEL);
    ck_assert_uint_eq(ctl->lookups, 1);
    fn = clgc_clGetExtensionFunctionAddressForPlatform(refusing_platform,
                                                       "clHostMemAllocINTEL");
    ck_assert_ptr_null(fn);
    ck_assert_uint_eq(ctl->lookups, 2);
    ck_assert_uint_eq(test_rt_safe_calls() - before, 2);
    ck_assert_uint_eq(ctl->calls, 0);
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
    ck_assert_uint_eq(ctl->calls, 0);
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

/* Which cases the looped tests cover. */
static void
fw_select_cases(void)
{
    fw_n_refusable = fw_n_nullable = 0;
    for (unsigned i = 0; i < TEST_FORWARD_N; i++) {
        const struct test_forward_case *c = &test_forward_cases[i];

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
    TCase *tc = tcase_create(name);

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
    tc = fw_tcase("refused");
    tcase_add_loop_test(tc, refused_extension_fails_cleanly, 0,
                        (int)fw_n_refusable);
    suite_add_tcase(s, tc);
    tc = fw_tcase("null");
    tcase_add_loop_test(tc, null_object_fails_cleanly, 0, (int)fw_n_nullable);
    suite_add_tcase(s, tc);
    tc = fw_tcase("lookup");
    tcase_add_test(tc, lookup_for_platform_hands_out_wrappers);
    tcase_add_test(tc, lookup_hands_out_wrappers);
    tcase_add_test(tc, looped_tests_cover_extensions);
    suite_add_tcase(s, tc);
    return s;
}
