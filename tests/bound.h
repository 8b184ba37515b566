#ifndef CLGC_BOUND_H
#define CLGC_BOUND_H

/* The one bound of every Check test: a test that runs past it has hung.
 * It is no measure of speed: the slowest test takes a tenth of it on a
 * quiet machine under valgrind, and a loaded machine must not reach it
 * (docs/environment.md). Check multiplies it by CK_TIMEOUT_MULTIPLIER.
 * Every test case is made by test_case, so Check's default of 4 s is in
 * force nowhere. The whole program is bounded too, by tests/bounded.sh,
 * above the sum of its tests. */

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
