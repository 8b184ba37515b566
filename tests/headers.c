/* One cell of the public headers' compile test (tests/headers.sh): the
 * script includes every header under clgc/ and clgc.h before this file
 * (-include), with one OpenCL header release, language standard, beta switch
 * and CL_TARGET_OPENCL_VERSION, and compiles it as C or C++ with warnings as
 * errors. tests/newest.c builds the same checks into a program and runs
 * them. */

#include "clgc.h"

/* Before the drop-in header: each OpenCL name has its wrapper's type. */
#include "gen/signatures.h"

#include "clgc/dropin.h"

/* After it: the names it maps, and the wrappers taken through them. */
#include "gen/mapped.h"

/* The number of wrappers the cell declares is what docs/wrappers.md gives
 * (TEST_EXPECTED, from tests/headers.sh). test_wrappers ends with
 * {NULL, NULL}. */
#ifdef TEST_EXPECTED
#define TEST_DECLARED (sizeof(test_wrappers) / sizeof(test_wrappers[0]) - 1)
#define TEST_WHY "not the number of wrappers docs/wrappers.md gives"
#if defined(__cplusplus)
static_assert(TEST_DECLARED == TEST_EXPECTED, TEST_WHY);
#elif __STDC_VERSION__ >= 201112L
_Static_assert(TEST_DECLARED == TEST_EXPECTED, TEST_WHY);
#else
/* C99: a negative array size instead. */
typedef char test_expected_count[TEST_DECLARED == TEST_EXPECTED ? 1 : -1];
#endif
#endif

int
main(void)
{
    int n = 0;

    for (const struct test_wrapper *w = test_wrappers; w->name != NULL; w++)
        n += w->fn != NULL;
    return n > 0 ? 0 : 1;
}
