/* The forwarding checks shared by check_forward.c and check_ffi.c (see
 * fwutil.h). */

#include <string.h>

#include "fwutil.h"

struct stub_control *fw_ctl;
cl_platform_id fw_stub_platform, fw_refusing_platform;

void
fw_setup(void)
{
    fw_stub_platform = test_platform(STUB_PLATFORM_NAME);
    fw_refusing_platform = test_platform(STUB_REFUSING_NAME);
    ck_assert_int_eq(clGetPlatformInfo(fw_stub_platform, STUB_PLATFORM_CONTROL,
                                       sizeof(fw_ctl), &fw_ctl, NULL),
                     CL_SUCCESS);
    ck_assert_ptr_nonnull(fw_ctl);
    fw_ctl->probe = test_rt_hook_depth;
    fw_ctl->reset();
}

void
fw_teardown(void)
{
    if (fw_ctl != NULL)
        fw_ctl->probe = NULL;
}

/* A pattern for a scalar, distinct for every (command, parameter) and
 * with high bits set, so that a truncated or swapped argument cannot go
 * unnoticed. */
static uint64_t
fw_pattern(const struct test_forward_case *c, unsigned i)
{
    uint64_t low = ((uint64_t)c->index << 8) | i;

    switch (c->kinds[i]) {
    case TEST_ARG_SCALAR32:
        return 0x80000000u | low;
    case TEST_ARG_SCALAR64:
        return 0xA5A5000000000000u | low;
    default: /* TEST_ARG_SIZE */
        return (0x5A5A000000000000u & (uint64_t)SIZE_MAX) | low;
    }
}

static uint64_t
fw_object(cl_platform_id platform, unsigned i)
{
    void *obj = fw_ctl->object(platform, i);

    ck_assert_ptr_nonnull(obj);
    return (uint64_t)(uintptr_t)obj;
}

void
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
        case TEST_ARG_FUNCTION:
            a->bits[i] = 0;
            break;
        default:
            a->bits[i] = fw_pattern(c, i);
            break;
        }
    }
    /* The wrapper reads the array again after the command: its count is
     * the array's. */
    if (c->after_count >= 0)
        a->bits[c->after_count] =
            sizeof(a->objects[0]) / sizeof(a->objects[0][0]);
}

uint64_t
fw_stub_result(const struct test_forward_case *c)
{
    switch (c->result) {
    case TEST_RESULT_INT32:
        return (uint32_t)stub_result_bits(c->index);
    case TEST_RESULT_POINTER:
        if (c->result_object)
            return (uint64_t)(uintptr_t)fw_ctl->made_context;
        return stub_result_bits(c->index);
    default:
        return 0;
    }
}

uint64_t
fw_call(const struct test_forward_case *c, const struct fw_args *a,
        fw_caller call)
{
    unsigned long before = test_rt_safe_calls();
    uint64_t r = call(c, a);

    ck_assert_msg(test_rt_safe_calls() - before == 1,
                  "%s: %lu safe regions, expected 1", c->name,
                  test_rt_safe_calls() - before);
    ck_assert_int_eq(test_rt_hook_depth(), 0);
    return r;
}

void
fw_expect_recorded(const struct test_forward_case *c, const struct fw_args *a)
{
    const struct stub_call *call = &fw_ctl->log[0];

    ck_assert_msg(fw_ctl->calls == 1 ||
                      (c->after_count >= 0 && fw_ctl->calls > 1),
                  "%s: the stub received %lu calls", c->name, fw_ctl->calls);
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

void
fw_expect_error(const struct test_forward_case *c, const struct fw_args *a,
                uint64_t r, cl_int err)
{
    cl_int got;

    ck_assert_msg(fw_ctl->calls == 0, "%s: the stub was called", c->name);
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

void
fw_check_stub(const struct test_forward_case *c, fw_caller call)
{
    struct fw_args a;
    uint64_t r;

    fw_build(c, fw_stub_platform, &a);
    fw_ctl->reset();
    r = fw_call(c, &a, call);
    fw_expect_recorded(c, &a);
    ck_assert_msg(r == fw_stub_result(c), "%s: returned %#llx, not %#llx",
                  c->name, (unsigned long long)r,
                  (unsigned long long)fw_stub_result(c));
}

/* The first platform, in the loader's order, that has the extension
 * function name: the one clgc takes when no argument names a platform. */
static cl_platform_id
fw_first_with(const char *name)
{
    cl_platform_id ids[16];
    cl_uint n = 0;

    ck_assert_int_eq(clGetPlatformIDs(16, ids, &n), CL_SUCCESS);
    for (cl_uint i = 0; i < n && i < 16; i++)
        if (clGetExtensionFunctionAddressForPlatform(ids[i], name) != NULL)
            return ids[i];
    return NULL;
}

void
fw_check_elsewhere(const struct test_forward_case *c, fw_caller call)
{
    struct fw_args a, b;
    unsigned long before;
    uint64_t r, raw;
    int stub_first;

    ck_assert_ptr_nonnull(c->raw);
    /* The other platform listed first may lack the function (Oclgrind
     * has no clIcdGetPlatformIDsKHR): then clgc and the raw call both
     * take the stub, rightly, and only their results are compared. */
    stub_first = fw_first_with(c->name) == fw_stub_platform;
    fw_build(c, fw_stub_platform, &a);
    fw_build(c, fw_stub_platform, &b);
    fw_ctl->reset();
    r = fw_call(c, &a, call);
    before = test_rt_safe_calls();
    raw = c->raw(b.bits);
    ck_assert_uint_eq(test_rt_safe_calls(), before);
    ck_assert_msg(stub_first || (fw_ctl->calls == 0 && fw_ctl->hooked == 0),
                  "%s: the stub was called (%s)", c->name, c->why);
    ck_assert_int_eq((cl_int)(uint32_t)raw, CL_SUCCESS);
    ck_assert_msg(r == raw, "%s: returned %#llx, the raw call %#llx", c->name,
                  (unsigned long long)r, (unsigned long long)raw);
    for (unsigned i = 0; i < c->nparams; i++)
        ck_assert_msg(
            memcmp(a.scratch[i], b.scratch[i], sizeof(a.scratch[i])) == 0,
            "%s: output %s differs from the raw call's", c->name, c->names[i]);
}
