#ifndef CLGC_TEST_FWUTIL_H
#define CLGC_TEST_FWUTIL_H

/* The forwarding checks, shared by check_forward.c, which calls every
 * command's wrapper directly, and check_ffi.c, which calls it through
 * clgc_command_call: build a case's arguments for a stub platform, make
 * the call one way or the other, and compare what the stub ICD received
 * and what came back with what was passed.
 *
 * Needs OCL_ICD_VENDORS naming a directory with the stub's .icd file (the
 * build makes tests/vendors/). */

#include <stdint.h>

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

/* Makes case c's call with a's arguments and returns the result's bits,
 * as test_forward_case.call does. */
typedef uint64_t (*fw_caller)(const struct test_forward_case *c,
                              const struct fw_args *a);

/* The stub's controls and its two platforms, set by fw_setup. */
extern struct stub_control *fw_ctl;
extern cl_platform_id fw_stub_platform, fw_refusing_platform;

/* A checked fixture: finds the stub and installs the recording runtime's
 * hook depth as its probe; fw_teardown removes the probe. */
void fw_setup(void);
void fw_teardown(void);

/* Arguments for case c on a stub platform: real objects of that platform
 * where the loader or clgc reads the dispatch pointer, zeroed scratch
 * memory (a zero-terminated list of any property type) for other
 * pointers, NULL for callbacks (a wrapper passes NULL on unchanged, and
 * replaces a real one by clgc's trampoline: the "callbacks" test),
 * distinct patterns for the rest. */
void fw_build(const struct test_forward_case *c, cl_platform_id platform,
              struct fw_args *a);

/* The result the stub returns for c, as the case function reports it. */
uint64_t fw_stub_result(const struct test_forward_case *c);

/* Make c's call with call and check that it entered exactly one safe
 * region and left the thread outside any. */
uint64_t fw_call(const struct test_forward_case *c, const struct fw_args *a,
                 fw_caller call);

/* The stub received exactly one call, of c, with exactly a's arguments,
 * inside exactly one safe region. */
void fw_expect_recorded(const struct test_forward_case *c,
                        const struct fw_args *a);

/* The call failed with err without calling anything: err is the result,
 * or the result is NULL and err is in *errcode_ret. */
void fw_expect_error(const struct test_forward_case *c, const struct fw_args *a,
                     uint64_t r, cl_int err);

/* The whole check of a TEST_ROUTE_STUB case made with call: arguments
 * arrive unchanged and the stub's result comes back. */
void fw_check_stub(const struct test_forward_case *c, fw_caller call);

/* The whole check of a TEST_ROUTE_ELSEWHERE case made with call: the
 * stub never sees it, and the result and the outputs are the raw
 * call's. */
void fw_check_elsewhere(const struct test_forward_case *c, fw_caller call);

#endif /* CLGC_TEST_FWUTIL_H */
