/* check_boehm, records: the data a program hands clgc (a notification's,
 * a posted function's, a callback's user_data) is kept alive by clgc's
 * records, which the adapter allocates uncollectable, until the handler
 * has run; where clgc calls the record hooks, and on which threads. */

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "boehm.h"

/* ------------------------------------------------------------------------
 * Data the program hands clgc (a notification's, a posted function's, a
 * callback's user_data) is kept alive by clgc's record until the
 * handler has run: the adapter allocates the records uncollectable. Each
 * test hands clgc BOEHM_DATA objects that nothing else refers to, holds
 * the handlers back behind a user event (or an undrained queue), runs
 * collections and allocates, and checks that bdwgc reclaimed none of
 * them, that every handler got its own object intact, and that the
 * records were freed once the handlers had run.
 */

#define BOEHM_DATA 2000
#define BOEHM_DATA_MAGIC 0x5eedf00du
/* Builds are slower than registrations: fewer objects for them. */
#define BOEHM_DATA_BUILDS 64

struct boehm_datum {
    unsigned magic, index;
    unsigned words[BOEHM_WORDS - 2];
};

/* Cleared by bdwgc when it reclaims object i (hidden pointers: they do
 * not keep the objects alive). */
static void *boehm_data_links[BOEHM_DATA];
/* Deliveries per object, intact or not. */
static atomic_uint boehm_data_intact[BOEHM_DATA];
static atomic_uint boehm_data_broken, boehm_data_calls;

static struct boehm_datum *
boehm_datum_new(unsigned i)
{
    struct boehm_datum *d = GC_MALLOC(sizeof(*d));

    ck_assert_ptr_nonnull(d);
    d->magic = BOEHM_DATA_MAGIC;
    d->index = i;
    for (unsigned k = 0; k < BOEHM_WORDS - 2; k++)
        d->words[k] = i * 31u + k;
    boehm_data_links[i] = (void *)GC_HIDE_POINTER(d);
    ck_assert_int_eq(
        GC_general_register_disappearing_link(&boehm_data_links[i], d),
        GC_SUCCESS);
    return d;
}

/* What every handler does with its data: count it as delivered intact, or
 * as broken (reclaimed and reused, or never the object handed over). No
 * Check assertion: handlers may run on PoCL's threads. */
static void
boehm_datum_seen(const void *data)
{
    const struct boehm_datum *d = data;
    int ok = d != NULL && d->magic == BOEHM_DATA_MAGIC && d->index < BOEHM_DATA;

    for (unsigned k = 0; ok && k < BOEHM_WORDS - 2; k++)
        ok = d->words[k] == d->index * 31u + k;
    if (ok)
        atomic_fetch_add(&boehm_data_intact[d->index], 1);
    else
        atomic_fetch_add(&boehm_data_broken, 1);
    atomic_fetch_add(&boehm_data_calls, 1);
}

/* How many of the first n objects bdwgc reclaimed. */
static unsigned
boehm_data_lost(unsigned n)
{
    unsigned lost = 0;

    for (unsigned i = 0; i < n; i++)
        lost += boehm_data_links[i] == NULL;
    return lost;
}

/* How many of the first n objects bdwgc reclaimed before their handlers
 * had them intact: those not delivered yet, and those delivered broken.
 * Once a handler has run, clgc frees its record and the object may go. */
static unsigned
boehm_data_lost_early(unsigned n)
{
    unsigned lost = 0;

    for (unsigned i = 0; i < n; i++)
        lost += boehm_data_links[i] == NULL &&
                atomic_load(&boehm_data_intact[i]) == 0;
    return lost;
}

/* How many handlers have run. */
static unsigned
boehm_data_ran(void)
{
    return atomic_load(&boehm_data_calls);
}

/* Until n handlers have run: on PoCL they have, inside
 * clSetUserEventStatus; on NVIDIA its own thread runs them later. */
static void
boehm_data_await(unsigned n)
{
    struct test_await w = test_await_start();

    while (boehm_data_ran() < n)
        test_await_nap(&w, "%u handlers to run (%u ran)", n, boehm_data_ran());
}

/* Collect, and allocate objects of the same size, filled with something
 * else, so that a reclaimed object's memory is reused before its handler
 * reads it. */
static void
boehm_data_churn(void)
{
    for (unsigned round = 0; round < 4; round++) {
        boehm_collect(2);
        for (unsigned i = 0; i < BOEHM_DATA; i++) {
            unsigned *junk = GC_MALLOC(sizeof(struct boehm_datum));

            ck_assert_ptr_nonnull(junk);
            for (unsigned k = 0; k < BOEHM_WORDS; k++)
                junk[k] = 0xdeadu;
        }
    }
    boehm_collect(2);
}

/* Every one of the first n objects was delivered once, intact. (That
 * none was reclaimed before: boehm_data_lost_early.) */
static void
boehm_data_check(unsigned n)
{
    unsigned ran = boehm_data_ran(), broken = atomic_load(&boehm_data_broken);

    ck_assert_uint_eq(ran, n);
    ck_assert_uint_eq(broken, 0);
    for (unsigned i = 0; i < n; i++) {
        unsigned intact = atomic_load(&boehm_data_intact[i]);

        ck_assert_msg(intact == 1, "object %u of %u delivered intact %u times",
                      i, n, intact);
    }
}

/* clgc_queue_create and clgc_queue_drain, in one place each. */
static clgc_queue_t *
boehm_queue_new(void)
{
    clgc_queue_t *q;

    ck_assert_int_eq(clgc_queue_create(&q), CLGC_OK);
    return q;
}

static unsigned
boehm_drain(clgc_queue_t *q)
{
    int ran = clgc_queue_drain(q, 0);

    ck_assert_int_ge(ran, 0);
    return (unsigned)ran;
}

static void
boehm_data_event_handler(cl_event event, cl_int status, void *data)
{
    (void)event;
    (void)status;
    boehm_datum_seen(data);
}

static void CL_CALLBACK
boehm_data_cl_callback(cl_event event, cl_int status, void *data)
{
    (void)event;
    (void)status;
    boehm_datum_seen(data);
}

static void CL_CALLBACK
boehm_data_build_notify(cl_program program, void *data)
{
    (void)program;
    boehm_datum_seen(data);
}

static void
boehm_data_posted(void *data)
{
    boehm_datum_seen(data);
}

enum boehm_data_path {
    BOEHM_NOTIFY_RAW,
    BOEHM_NOTIFY_ACTIVE,
    BOEHM_EVENT_POST,
    BOEHM_QUEUE_POST,
    BOEHM_SET_EVENT_CALLBACK,
    BOEHM_SET_EVENT_CALLBACK_DEFERRED,
    BOEHM_BUILD_DEFERRED
};

/* Hand object i to clgc on the given path. The handler cannot run before
 * the gate completes or the queue is drained. */
static void
boehm_data_register(enum boehm_data_path path, unsigned i, cl_event gate,
                    clgc_queue_t *q, cl_program program, cl_device_id device)
{
    struct boehm_datum *d = boehm_datum_new(i);

    switch (path) {
    case BOEHM_NOTIFY_RAW:
        ck_assert_int_eq(clgc_event_notify(gate, CLGC_NOTIFY_RAW,
                                           boehm_data_event_handler, d),
                         CL_SUCCESS);
        break;
    case BOEHM_NOTIFY_ACTIVE:
        ck_assert_int_eq(clgc_event_notify(gate, CLGC_NOTIFY_ACTIVE,
                                           boehm_data_event_handler, d),
                         CL_SUCCESS);
        break;
    case BOEHM_EVENT_POST:
        ck_assert_int_eq(clgc_event_post(gate, q, boehm_data_event_handler, d),
                         CL_SUCCESS);
        break;
    case BOEHM_QUEUE_POST:
        ck_assert_int_eq(clgc_queue_post(q, boehm_data_posted, d), CLGC_OK);
        break;
    case BOEHM_SET_EVENT_CALLBACK:
    case BOEHM_SET_EVENT_CALLBACK_DEFERRED:
        ck_assert_int_eq(clgc_clSetEventCallback(gate, CL_COMPLETE,
                                                 boehm_data_cl_callback, d),
                         CL_SUCCESS);
        break;
    case BOEHM_BUILD_DEFERRED:
        test_assert_built(clgc_clBuildProgram(program, 1, &device, "",
                                              boehm_data_build_notify, d),
                          program, device);
        break;
    }
}

/* The whole run of one path: n objects handed over, collections before
 * the handlers run (and, for queues, again between completion and drain),
 * then the checks. Returns how many objects bdwgc reclaimed before their
 * handlers could run; with the adapter's record hooks, asserts that there
 * were none, and that the objects are reclaimed once the handlers ran.
 *
 * The driver calls clgc back when the gate completes: PoCL inside
 * clSetUserEventStatus, on the thread that sets the status; NVIDIA later,
 * on a thread of its own. So the test waits for the handlers (bounded),
 * and drains a queue until every handler has run in it, with collections
 * before each drain. */
static unsigned
boehm_data_run(enum boehm_data_path path, unsigned n, int hooks)
{
    int queued = path == BOEHM_EVENT_POST || path == BOEHM_QUEUE_POST ||
                 path == BOEHM_SET_EVENT_CALLBACK_DEFERRED ||
                 path == BOEHM_BUILD_DEFERRED;
    int deferred = path == BOEHM_SET_EVENT_CALLBACK_DEFERRED ||
                   path == BOEHM_BUILD_DEFERRED;
    cl_program program = NULL;
    clgc_queue_t *q = NULL;
    struct boehm_cl cl;
    unsigned lost;
    cl_event gate;
    cl_int err;

    boehm_cl_open(&cl);
    gate = clgc_clCreateUserEvent(cl.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    if (path == BOEHM_BUILD_DEFERRED)
        program = boehm_program(&cl);
    if (queued)
        q = boehm_queue_new();

    if (deferred)
        ck_assert_int_eq(clgc_callbacks_defer(q), CLGC_OK);
    for (unsigned i = 0; i < n; i++)
        boehm_data_register(path, i, gate, q, program, cl.device);
    if (deferred)
        ck_assert_int_eq(clgc_callbacks_defer(NULL), CLGC_OK);

    /* Nothing has run: the only references to the objects are in clgc's
     * records. */
    boehm_data_churn();
    ck_assert_uint_eq(boehm_data_ran(), 0);
    lost = boehm_data_lost_early(n);
    ck_assert_int_eq(clgc_clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    if (queued) {
        struct test_await w = test_await_start();
        unsigned drained = 0;

        /* The handlers run in the drains only, whenever the driver has
         * called clgc back. */
        ck_assert_uint_eq(boehm_data_ran(), 0);
        for (;;) {
            boehm_data_churn();
            lost = boehm_data_lost_early(n);
            drained += boehm_drain(q);
            if (drained >= n)
                break;
            test_await_nap(&w, "%u handlers to reach the queue (%u drained)", n,
                           drained);
        }
        ck_assert_uint_eq(drained, n);
        ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    }
    boehm_data_await(n);
    ck_assert_uint_eq(boehm_data_ran(), n);
    /* clgc and the driver let go of the gate once the handlers are over. */
    test_event_let_go(gate);
    if (hooks) {
        ck_assert_uint_eq(lost, 0);
        boehm_data_check(n);
        /* The handlers have run, so clgc has freed the records, and
         * nothing holds the objects any more: bdwgc reclaims them, but
         * for the odd stale copy on a stack that it scans conservatively.
         * Records that were never freed would keep every one. */
        boehm_data_churn();
        ck_assert_uint_gt(boehm_data_lost(n), n / 2);
    }

    if (program != NULL)
        ck_assert_int_eq(clgc_clReleaseProgram(program), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseEvent(gate), CL_SUCCESS);
    boehm_cl_close(&cl);
    return lost;
}

START_TEST(test_data_notify_raw_is_kept)
{
    boehm_setup(0);
    boehm_data_run(BOEHM_NOTIFY_RAW, BOEHM_DATA, 1);
}
END_TEST

START_TEST(test_data_notify_active_is_kept)
{
    boehm_setup(0);
    boehm_data_run(BOEHM_NOTIFY_ACTIVE, BOEHM_DATA, 1);
}
END_TEST

START_TEST(test_data_event_post_is_kept)
{
    boehm_setup(0);
    boehm_data_run(BOEHM_EVENT_POST, BOEHM_DATA, 1);
}
END_TEST

START_TEST(test_data_queue_post_is_kept)
{
    boehm_setup(0);
    boehm_data_run(BOEHM_QUEUE_POST, BOEHM_DATA, 1);
}
END_TEST

START_TEST(test_data_event_callback_is_kept)
{
    boehm_setup(0);
    boehm_data_run(BOEHM_SET_EVENT_CALLBACK, BOEHM_DATA, 1);
}
END_TEST

START_TEST(test_data_deferred_event_callback_is_kept)
{
    boehm_setup(0);
    boehm_data_run(BOEHM_SET_EVENT_CALLBACK_DEFERRED, BOEHM_DATA, 1);
}
END_TEST

START_TEST(test_data_deferred_build_notify_is_kept)
{
    boehm_setup(0);
    boehm_data_run(BOEHM_BUILD_DEFERRED, BOEHM_DATA_BUILDS, 1);
}
END_TEST

/* With CLGC_RUNTIME_SKIP_NONBLOCKING the callback-taking wrappers that
 * never block run outside any region: their records are allocated
 * directly, not through GC_call_with_gc_active. */
START_TEST(test_data_event_callback_is_kept_when_skipping)
{
    boehm_setup(CLGC_RUNTIME_SKIP_NONBLOCKING);
    boehm_data_run(BOEHM_SET_EVENT_CALLBACK, BOEHM_DATA, 1);
}
END_TEST

/* A runtime of the program's own around bdwgc, as a program written
 * against an older clgc has, or one that counts the record hooks. */
static int
boehm_own_known(void *data)
{
    (void)data;
    return GC_thread_is_registered();
}

static int
boehm_own_attach(void *data)
{
    struct GC_stack_base sb;

    (void)data;
    if (GC_get_stack_base(&sb) != GC_SUCCESS)
        return CLGC_EATTACH;
    return GC_register_my_thread(&sb) == GC_SUCCESS ? CLGC_OK : CLGC_KNOWN;
}

static void
boehm_own_detach(void *data)
{
    (void)data;
    GC_unregister_my_thread();
}

/* What the counting hooks saw. */
static atomic_ulong boehm_rec_allocs, boehm_rec_frees;
static atomic_ulong boehm_rec_allocs_in_region, boehm_rec_allocs_unknown;
static atomic_ulong boehm_rec_frees_in_region, boehm_rec_frees_unknown;

static void *
boehm_count_alloc(size_t size, void *data)
{
    (void)data;
    atomic_fetch_add(&boehm_rec_allocs, 1);
    if (clgc_thread_in_region())
        atomic_fetch_add(&boehm_rec_allocs_in_region, 1);
    if (!GC_thread_is_registered())
        atomic_fetch_add(&boehm_rec_allocs_unknown, 1);
    return GC_malloc_uncollectable(size);
}

static void
boehm_count_free(void *record, void *data)
{
    (void)data;
    if (clgc_thread_in_region())
        atomic_fetch_add(&boehm_rec_frees_in_region, 1);
    if (!GC_thread_is_registered())
        atomic_fetch_add(&boehm_rec_frees_unknown, 1);
    GC_free(record);
    atomic_fetch_add(&boehm_rec_frees, 1);
}

static void
boehm_own_setup(int version)
{
    const clgc_runtime_t rt = {.version = version,
                               .name = "own",
                               .safe_region = GC_do_blocking,
                               .active_region = GC_call_with_gc_active,
                               .attach_thread = boehm_own_attach,
                               .detach_thread = boehm_own_detach,
                               .thread_known = boehm_own_known,
                               .record_alloc = boehm_count_alloc,
                               .record_free = boehm_count_free};

    GC_set_thr_restart_signal(SIGRTMIN + 2);
    GC_INIT();
    GC_allow_register_threads();
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_OK);
    boehm_count_suspensions();
}

/* A version 3 runtime has no record hooks (clgc reads none of the fields
 * past its version, though this struct sets them): the records come from
 * malloc, which bdwgc does not scan, and it reclaims the data under them.
 * This is what the tests above would see without the hooks. */
START_TEST(test_data_without_record_hooks_is_reclaimed)
{
    boehm_own_setup(3);
    ck_assert_uint_gt(boehm_data_run(BOEHM_QUEUE_POST, BOEHM_DATA, 0), 0);
    ck_assert_uint_eq(atomic_load(&boehm_rec_allocs), 0);
    ck_assert_uint_eq(atomic_load(&boehm_rec_frees), 0);
}
END_TEST

/* The thread that sets a user event's status, while it does: a handler
 * that runs there then runs inside clgc_clSetUserEventStatus, as PoCL
 * runs a user event's callbacks. */
static pthread_t boehm_setter;
static atomic_int boehm_setting;
static atomic_uint boehm_calls_inline;

static void
boehm_count_handler(cl_event event, cl_int status, void *data)
{
    (void)event;
    (void)status;
    (void)data;
    if (atomic_load(&boehm_setting) &&
        pthread_equal(pthread_self(), boehm_setter))
        atomic_fetch_add(&boehm_calls_inline, 1);
    atomic_fetch_add(&boehm_data_calls, 1);
}

/* How many records the hook has freed. */
static unsigned long
boehm_rec_freed(void)
{
    return atomic_load(&boehm_rec_frees);
}

/* Until the hook has freed n records: the handlers' threads free them
 * once the handlers return. */
static void
boehm_rec_await_frees(unsigned long n)
{
    struct test_await w = test_await_start();

    while (boehm_rec_freed() < n)
        test_await_nap(&w, "%lu records to be freed (%lu freed)", n,
                       boehm_rec_freed());
}

/* Drain q until n handlers have run in it: the driver posts them when it
 * calls clgc back. */
static void
boehm_drain_await(clgc_queue_t *q, unsigned n)
{
    struct test_await w = test_await_start();
    unsigned drained = 0;

    while ((drained += boehm_drain(q)) < n)
        test_await_nap(&w, "%u handlers to reach the queue (%u drained)", n,
                       drained);
    ck_assert_uint_eq(drained, n);
}

static void CL_CALLBACK
boehm_count_callback(cl_event event, cl_int status, void *data)
{
    boehm_count_handler(event, status, data);
}

static void
boehm_count_posted(void *data)
{
    boehm_count_handler(NULL, 0, data);
}

/* Where clgc calls the record hooks. Allocation: always on a thread bdwgc
 * knows and with bdwgc active, even for the wrappers, which allocate
 * inside their GC_do_blocking. Freeing: wherever the last reference goes,
 * here on the driver's own thread, which bdwgc does not know, and inside
 * a wrapper's region where the driver calls back inside it (PoCL runs a
 * user event's callbacks inside clgc_clSetUserEventStatus; NVIDIA on its
 * own thread, later). Every record allocated is freed once its handler
 * has run. */
START_TEST(test_records_are_allocated_active_and_freed_anywhere)
{
    struct boehm_cl cl;
    cl_program program;
    cl_kernel kernel;
    cl_event gate, done;
    clgc_queue_t *q;
    size_t one = 1;
    cl_int err;
    unsigned long expect = 0, allocs, allocs_in_region, allocs_unknown;
    unsigned long freed_unknown, freed_in_region, ran_inline;

    boehm_own_setup(CLGC_RUNTIME_VERSION);
    boehm_cl_open(&cl);
    program = boehm_program(&cl);
    kernel = boehm_nop_kernel(&cl, program);
    q = boehm_queue_new();

    /* A kernel's completion, on PoCL's thread: a RAW handler keeps it
     * unknown to bdwgc, and the notification is freed there. */
    gate = clgc_clCreateUserEvent(cl.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clgc_clEnqueueNDRangeKernel(cl.queue, kernel, 1, NULL,
                                                 &one, NULL, 1, &gate, &done),
                     CL_SUCCESS);
    ck_assert_int_eq(
        clgc_event_notify(done, CLGC_NOTIFY_RAW, boehm_count_handler, NULL),
        CL_SUCCESS);
    expect++;
    ck_assert_int_eq(clgc_clFlush(cl.queue), CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    boehm_rec_await_frees(expect);
    freed_unknown = atomic_load(&boehm_rec_frees_unknown);
    ck_assert_uint_eq(freed_unknown, 1);
    test_event_let_go(done);
    ck_assert_int_eq(clgc_clReleaseEvent(done), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseEvent(gate), CL_SUCCESS);

    /* Every path, behind a user event. */
    gate = clgc_clCreateUserEvent(cl.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(
        clgc_event_notify(gate, CLGC_NOTIFY_RAW, boehm_count_handler, NULL),
        CL_SUCCESS);
    ck_assert_int_eq(
        clgc_event_notify(gate, CLGC_NOTIFY_ACTIVE, boehm_count_handler, NULL),
        CL_SUCCESS);
    ck_assert_int_eq(clgc_event_post(gate, q, boehm_count_handler, NULL),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_queue_post(q, boehm_count_posted, NULL), CLGC_OK);
    ck_assert_int_eq(
        clgc_clSetEventCallback(gate, CL_COMPLETE, boehm_count_callback, NULL),
        CL_SUCCESS);
    ck_assert_int_eq(clgc_callbacks_defer(q), CLGC_OK);
    ck_assert_int_eq(
        clgc_clSetEventCallback(gate, CL_COMPLETE, boehm_count_callback, NULL),
        CL_SUCCESS);
    ck_assert_int_eq(clgc_callbacks_defer(NULL), CLGC_OK);
    expect += 6;
    allocs = atomic_load(&boehm_rec_allocs);
    ck_assert_uint_eq(allocs, expect);
    ck_assert_uint_eq(boehm_rec_freed(), 1);
    boehm_setter = pthread_self();
    atomic_store(&boehm_setting, 1);
    ck_assert_int_eq(clgc_clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    atomic_store(&boehm_setting, 0);
    /* The posted function, the posted notification and the deferred
     * callback run in the drains; the RAW and ACTIVE notifications and
     * the callback that was not deferred where the driver calls back. */
    boehm_drain_await(q, 3);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    boehm_data_await((unsigned)expect);
    ck_assert_uint_eq(boehm_data_ran(), expect);
    boehm_rec_await_frees(expect);
    test_event_let_go(gate);

    allocs = atomic_load(&boehm_rec_allocs);
    ck_assert_uint_eq(allocs, expect);
    ck_assert_uint_eq(boehm_rec_freed(), expect);
    allocs_in_region = atomic_load(&boehm_rec_allocs_in_region);
    ck_assert_uint_eq(allocs_in_region, 0);
    allocs_unknown = atomic_load(&boehm_rec_allocs_unknown);
    ck_assert_uint_eq(allocs_unknown, 0);
    /* The records of the handlers that ran inside
     * clgc_clSetUserEventStatus were freed in its region (PoCL: the RAW
     * and ACTIVE notifications and the callback that was not deferred;
     * NVIDIA: none), the others outside any region. */
    freed_in_region = atomic_load(&boehm_rec_frees_in_region);
    ran_inline = atomic_load(&boehm_calls_inline);
    ck_assert_uint_eq(freed_in_region, ran_inline);

    ck_assert_int_eq(clgc_clReleaseEvent(gate), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseKernel(kernel), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseProgram(program), CL_SUCCESS);
    boehm_cl_close(&cl);
}
END_TEST

/* A thread bdwgc does not know hands clgc data. */
struct boehm_stranger {
    cl_event gate;
    clgc_queue_t *queue;
    int posted, notified, registered_cb;
    int registered, attached; /* bdwgc's and clgc's view, after */
};

static void *
boehm_stranger_main(void *arg)
{
    struct boehm_stranger *s = arg;

    s->posted = clgc_queue_post(s->queue, boehm_count_posted, NULL);
    s->notified =
        clgc_event_notify(s->gate, CLGC_NOTIFY_RAW, boehm_count_handler, NULL);
    s->registered_cb = clgc_clSetEventCallback(s->gate, CL_COMPLETE,
                                               boehm_count_callback, NULL);
    s->registered = GC_thread_is_registered();
    s->attached = clgc_thread_attached();
    return NULL;
}

/* On a thread the runtime does not know, clgc does not call record_alloc
 * (bdwgc would abort on a collection from it) and attaches nothing: the
 * records come from malloc, and are freed with free, not the hook (ASan
 * and valgrind would see a mismatch or a leak). */
START_TEST(test_records_of_unknown_thread_are_malloced)
{
    struct boehm_stranger s = {.posted = -1};
    unsigned long allocs;
    struct boehm_cl cl;
    cl_int err;

    boehm_own_setup(CLGC_RUNTIME_VERSION);
    boehm_cl_open(&cl);
    s.gate = clgc_clCreateUserEvent(cl.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    s.queue = boehm_queue_new();
    ck_assert_int_eq(
        pthread_join(boehm_plain_thread(boehm_stranger_main, &s), NULL), 0);
    ck_assert_int_eq(s.posted, CLGC_OK);
    ck_assert_int_eq(s.notified, CL_SUCCESS);
    ck_assert_int_eq(s.registered_cb, CL_SUCCESS);
    ck_assert_int_eq(s.registered, 0);
    ck_assert_int_eq(s.attached, 0);
    ck_assert_uint_eq(atomic_load(&boehm_rec_allocs), 0);

    ck_assert_int_eq(clgc_clSetUserEventStatus(s.gate, CL_COMPLETE),
                     CL_SUCCESS);
    /* The posted function in the drain, the notification and the callback
     * where the driver calls back. */
    ck_assert_uint_eq(boehm_drain(s.queue), 1);
    ck_assert_int_eq(clgc_queue_close(s.queue), CLGC_OK);
    boehm_data_await(3);
    ck_assert_uint_eq(boehm_data_ran(), 3);
    test_event_let_go(s.gate);
    allocs = atomic_load(&boehm_rec_allocs);
    ck_assert_uint_eq(allocs, 0);
    ck_assert_uint_eq(boehm_rec_freed(), 0);
    ck_assert_int_eq(clgc_clReleaseEvent(s.gate), CL_SUCCESS);
    boehm_cl_close(&cl);
}
END_TEST

/* ------------------------------------------------------------------------ */

Suite *
clgc_make_boehm_records_suite(void)
{
    Suite *s = suite_create("boehm");

    boehm_add(s, "data notify raw", test_data_notify_raw_is_kept);
    boehm_add(s, "data notify active", test_data_notify_active_is_kept);
    boehm_add(s, "data event post", test_data_event_post_is_kept);
    boehm_add(s, "data queue post", test_data_queue_post_is_kept);
    boehm_add(s, "data event callback", test_data_event_callback_is_kept);
    boehm_add(s, "data event callback skip",
              test_data_event_callback_is_kept_when_skipping);
    boehm_add(s, "data deferred event callback",
              test_data_deferred_event_callback_is_kept);
    boehm_add(s, "data deferred build notify",
              test_data_deferred_build_notify_is_kept);
    boehm_add(s, "data without record hooks",
              test_data_without_record_hooks_is_reclaimed);
    boehm_add_premised(s, "records active, freed anywhere",
                       test_records_are_allocated_active_and_freed_anywhere,
                       TEST_DRIVER_THREADS,
                       "it flushes a kernel behind a user event it sets "
                       "afterwards, on the same thread");
    boehm_add(s, "records of unknown thread",
              test_records_of_unknown_thread_are_malloced);
    return s;
}
