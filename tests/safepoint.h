#ifndef CLGC_TESTS_SAFEPOINT_H
#define CLGC_TESTS_SAFEPOINT_H

/* What check_safepoint's files share (tests/safepoint.c): the reference
 * VM installed once per process, its counters, a thread's state word,
 * PoCL's device, and two small functions for clgc's calls. */

#include "refvm.h"
#include "testutil.h"

#define POCL "Portable Computing Language"

/* Install the VM, once per process. */
void vm_setup(void);

/* The VM's counters now (refvm_stats). */
struct refvm_stats vm_stats(void);

/* A thread's state word (refvm_state_word), read with acquire. */
int word_of(const int *word);

/* PoCL's CPU device (or CLGC_TEST_PLATFORM's) and a context on it,
 * opened with the raw calls. */
struct pocl {
    cl_device_id device;
    cl_context context;
};
void pocl_open(struct pocl *p);

/* Returns arg: a function for clgc_call_safe and clgc_call_active that
 * does nothing. */
void *nothing(void *arg);

/* A cheap wrapped call: the platform's name, read and dropped. */
cl_int platform_name(cl_platform_id platform);

/* The suites, one a file, for check_safepoint.c's main, in the order it
 * runs them. */
Suite *clgc_make_safepoint_install_suite(void);
Suite *clgc_make_safepoint_order_suite(void);
Suite *clgc_make_safepoint_regions_suite(void);
Suite *clgc_make_safepoint_threads_suite(void);
Suite *clgc_make_safepoint_callbacks_suite(void);

#endif /* CLGC_TESTS_SAFEPOINT_H */
