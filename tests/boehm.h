#ifndef CLGC_TESTS_BOEHM_H
#define CLGC_TESTS_BOEHM_H

/* What check_boehm's files share (tests/boehm.c): each test's setup in its
 * own process, collections, threads bdwgc knows and threads it does not,
 * objects that only a static root holds, PoCL's device, a helper thread
 * that collects on request, the stub ICD's probe, and the suites' test
 * cases. */

/* Threads the tests create for bdwgc go through GC_pthread_create by name,
 * so that the plain pthread_create stays available for the threads that
 * must be unknown to it. */
#define GC_THREADS
#define GC_NO_THREAD_REDIRECTS
#include <gc/gc.h>

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "clgc/boehm.h"
#include "gcevents.h"
#include "stub/stub.h"
#include "testutil.h"

#define BOEHM_POCL "Portable Computing Language"

/* Collections per counted window: enough that "suspended at least once
 * per collection" cannot hold by accident. */
#define BOEHM_COLLECTIONS 8

/* Words in each object a test allocates and checks after collections. */
#define BOEHM_WORDS 16

/* Every test first, in its own process: GC_INIT, clgc_boehm_install(flags),
 * and bdwgc's count of suspensions. */
void boehm_setup(unsigned flags);

/* Collections and threads. */
void boehm_collect(unsigned n);
void boehm_sem_wait(sem_t *s);
pthread_t boehm_gc_thread(void *(*fn)(void *), void *arg);
void boehm_gc_join(pthread_t t);
pthread_t boehm_plain_thread(void *(*fn)(void *), void *arg);

/* Objects that only a static root refers to. */
unsigned *boehm_new_object(unsigned tag);
void boehm_check_object(const unsigned *obj, void *const *link, unsigned tag);
int boehm_link(void **link, unsigned *obj);

/* PoCL's device (or CLGC_TEST_PLATFORM's), through clgc's wrappers, and a
 * program of one empty kernel, boehm_nop. */
struct boehm_cl {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
};
void boehm_cl_open(struct boehm_cl *cl);
void boehm_cl_close(struct boehm_cl *cl);
cl_program boehm_program(struct boehm_cl *cl);
/* Build program (boehm_program's) through clgc, and its kernel
 * "boehm_nop". */
cl_kernel boehm_nop_kernel(struct boehm_cl *cl, cl_program program);

/* A helper thread that runs one collection on request and reports how
 * many times it suspended the test's thread. */
struct boehm_collector {
    pthread_t target;
    sem_t request, reply;
    atomic_int stop;
    unsigned long suspended;
};
void *boehm_collector_main(void *arg);
unsigned long boehm_collect_elsewhere(struct boehm_collector *c);

/* The stub ICD, with a probe that records the region depth each call runs
 * at. */
extern struct stub_control *boehm_stub;
extern cl_platform_id boehm_stub_platform;
void boehm_stub_open(void);
int boehm_stub_depth(void *object, cl_int result);

/* A test case of its own for a test. boehm_add_pocl:
 * for a test whose premise is what PoCL does and OpenCL does not promise
 * (why): left out, with a line on stderr, where CLGC_TEST_PLATFORM chose
 * a platform (test_add_pocl_test). boehm_add_premised: for a test that
 * holds only where the driver does what premise says: left out, with a
 * line on stderr, where the chosen platform's driver does not
 * (test_add_premised_test). */
void boehm_add(Suite *s, const char *name, const TTest *test);
void boehm_add_pocl(Suite *s, const char *name, const TTest *test,
                    const char *why);
void boehm_add_premised(Suite *s, const char *name, const TTest *test,
                        enum test_premise premise, const char *why);

/* The suites, one a file, for check_boehm.c's main. */
Suite *clgc_make_boehm_regions_suite(void);
Suite *clgc_make_boehm_threads_suite(void);
Suite *clgc_make_boehm_callbacks_suite(void);
Suite *clgc_make_boehm_records_suite(void);

#endif /* CLGC_TESTS_BOEHM_H */
