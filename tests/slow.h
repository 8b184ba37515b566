#ifndef CLGC_TESTS_SLOW_H
#define CLGC_TESTS_SLOW_H

/* The source of a kernel that PoCL takes a while to build, shared by the
 * tests, clgc-bench and clgc-demo: whatever must happen during a build (a
 * collection, a callback) has time to. */

#include <stddef.h>

/* The deepest nesting slow_source writes; a deeper request gets this. */
#define SLOW_MAX_DEPTH 8

/* Writes into buf (size bytes) the OpenCL C source of a kernel named
 * "slow", taking a __global float *, whose body is 4^depth copies of a
 * statement, by macro: PoCL takes about 0.3 s to build it at depth 5 and
 * 0.5 s at depth 6 on the machines this was written on. Every call's
 * source is unique (a constant made of the process id and a count)
 * because PoCL's kernel cache (POCL_CACHE_DIR) is keyed on the
 * preprocessed source: a unique comment would not do, and a source seen
 * before would not be compiled again. Any thread. Returns what snprintf
 * returns: the length of the whole source, truncated if that is size or
 * more. */
int slow_source(char *buf, size_t size, unsigned depth);

#endif /* CLGC_TESTS_SLOW_H */
