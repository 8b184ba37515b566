#ifndef CLGC_SHUFFLE_H
#define CLGC_SHUFFLE_H

/* The order in which clgc-bench wait and clgc-demo take the ways of
 * waiting they compare, drawn again every round, so that none always
 * follows the same one: on two CPUs a launch and wait depends on where the
 * last one left the threads (the waiter and the driver's worker on one
 * CPU or two), and a row that always followed another was measured up to
 * a quarter faster or slower than it was elsewhere (docs/wait.md). */

#include <stdint.h>

/* order[0..n) in a new order, from the xorshift state *x (not 0): the
 * same orders in every run. */
static inline void
bench_shuffle(int *order, int n, uint32_t *x)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j, t;

        *x ^= *x << 13;
        *x ^= *x >> 17;
        *x ^= *x << 5;
        j = (int)(*x % (uint32_t)(i + 1));
        t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

#endif
