#ifndef CLGC_BOUND_H
#define CLGC_BOUND_H

/* The one bound of every Check test: a test that runs past it has hung.
 * It is no measure of speed: it is at least ten times what any test takes
 * on a quiet machine, plain or, with the CK_TIMEOUT_MULTIPLIER that
 * ./run test sets for them, under valgrind and the sanitizers
 * (docs/environment.md); a loaded machine must not reach it. Every test
 * case is made by test_case, so Check's default of 4 s is in force
 * nowhere. tests/bounded.sh bounds each whole program besides. */

#include <check.h>

#define TEST_BOUND_S 300

static inline TCase *
test_case(const char *name)
{
    TCase *tc = tcase_create(name);

    tcase_set_timeout(tc, TEST_BOUND_S);
    return tc;
}

#endif
