/* check_boehm, callbacks: callbacks given to clgc's wrappers run with
 * bdwgc active wherever the driver calls them (on PoCL's thread, inside a
 * build), allocate, and keep what they allocate across collections. */

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "boehm.h"

/* ------------------------------------------------------------------------
 * Callbacks given to clgc's wrappers run with bdwgc active wherever
 * PoCL calls them: they allocate, their objects survive collections
 * made meanwhile by other threads and by themselves, and the program
 * reads what they stored.
 */

/* Nodes of the list a callback builds; each names its place in it. */
#define BOEHM_NODES 4000
/* Collections the list's allocation spans, at least. */
#define BOEHM_CHUNKS 8

struct boehm_node {
    struct boehm_node *next;
    unsigned index;
    unsigned pattern[5];
};

static struct boehm_node *
boehm_node_new(struct boehm_node *next, unsigned index)
{
    struct boehm_node *node = GC_MALLOC(sizeof(*node));

    if (node == NULL)
        return NULL;
    node->next = next;
    node->index = index;
    for (unsigned i = 0; i < 5; i++)
        node->pattern[i] = index * 7u + i;
    return node;
}

/* boehm_link for a node. */
static int
boehm_link_node(void **link, struct boehm_node *node)
{
    if (node == NULL)
        return GC_NO_MEMORY;
    *link = (void *)GC_HIDE_POINTER(node);
    return GC_general_register_disappearing_link(link, node);
}

/* How many nodes of a list built by prepending nodes 0 .. n-1 are where
 * and what they should be, from the head down: n unless one was
 * reclaimed (and its memory reused) or lost. */
static unsigned
boehm_list_intact(const struct boehm_node *head, unsigned n)
{
    unsigned good = 0;

    for (; head != NULL && good < n; head = head->next, good++) {
        if (head->index != n - 1 - good)
            break;
        for (unsigned i = 0; i < 5; i++)
            if (head->pattern[i] != head->index * 7u + i)
                return good;
    }
    return good;
}

/* A thread of bdwgc's that collects without pause from the moment it is
 * started until it is told to stop, and counts its collections. */
struct boehm_loop {
    sem_t start;
    atomic_int stop;
    atomic_ulong collections;
};

static void *
boehm_loop_main(void *arg)
{
    struct boehm_loop *l = arg;

    boehm_sem_wait(&l->start);
    while (!atomic_load(&l->stop)) {
        GC_gcollect();
        atomic_fetch_add(&l->collections, 1);
    }
    return NULL;
}

/* What a callback saw of its thread. */
struct boehm_cb_seen {
    int step; /* its place among the callbacks, from 1 */
    pthread_t thread;
    int registered, attached, in_region;
    unsigned depth;
};

/* Five callbacks on one kernel's completion event, which PoCL calls in
 * the order they were set, one after the other, on the thread that
 * completes the kernel: raw ones (probes, which never enter bdwgc) around
 * two given to clgc_clSetEventCallback. */
struct boehm_cbs {
    struct boehm_loop *loop;
    atomic_int steps, finished;
    struct boehm_cb_seen probe[3], wrapped[2];
    unsigned long loop_collections; /* seen by the list's builder */
    unsigned long suspended;        /* the builder, by the loop's ones */
    unsigned checks, bad_checks;    /* the list so far, after collections */
    sem_t done;
};

/* Where the callbacks leave their objects for the test's thread: static
 * roots, which bdwgc scans. */
static struct boehm_node *boehm_list;
static void *boehm_list_links[2]; /* the head and the last node */
static unsigned *boehm_cb_object;
static void *boehm_cb_link;

static void
boehm_cb_observe(struct boehm_cbs *c, struct boehm_cb_seen *s)
{
    s->step = atomic_fetch_add(&c->steps, 1) + 1;
    s->thread = pthread_self();
    s->registered = GC_thread_is_registered();
    s->attached = clgc_thread_attached();
    s->in_region = clgc_thread_in_region();
    s->depth = clgc_thread_region_depth();
}

/* The last of the five to return tells the test. */
static void
boehm_cb_finish(struct boehm_cbs *c)
{
    if (atomic_fetch_add(&c->finished, 1) + 1 == 5)
        sem_post(&c->done);
}

static void CL_CALLBACK
boehm_cb_probe(cl_event event, cl_int status, void *data)
{
    struct boehm_cbs *c = data;

    (void)event;
    (void)status;
    boehm_cb_observe(c, &c->probe[atomic_load(&c->steps) / 2]);
    boehm_cb_finish(c);
}

/* The first wrapped callback: with the loop collecting from its start, it
 * builds a list that only its own stack holds, chunk by chunk, and after
 * each chunk waits for a whole collection of the loop's (being
 * registered, it is stopped by each) and checks the list so far. Then it
 * stores the list in a static root. It never calls clgc_call_active:
 * clgc's trampoline has done that. */
static void CL_CALLBACK
boehm_cb_build_list(cl_event event, cl_int status, void *data)
{
    struct boehm_cbs *c = data;
    struct boehm_node *head = NULL, *last = NULL;
    unsigned long start, mark;

    (void)event;
    (void)status;
    boehm_cb_observe(c, &c->wrapped[0]);
    boehm_watch(pthread_self());
    start = atomic_load(&c->loop->collections);
    sem_post(&c->loop->start);
    for (unsigned k = 0; k < BOEHM_CHUNKS; k++) {
        for (unsigned i = k * BOEHM_NODES / BOEHM_CHUNKS;
             i < (k + 1) * BOEHM_NODES / BOEHM_CHUNKS; i++) {
            head = boehm_node_new(head, i);
            if (last == NULL)
                last = head;
        }
        /* The loop may have run ahead: the second collection from now
         * starts after the chunk was allocated. */
        mark = atomic_load(&c->loop->collections);
        while (atomic_load(&c->loop->collections) < mark + 2)
            sched_yield();
        c->checks++;
        if (boehm_list_intact(head, (k + 1) * BOEHM_NODES / BOEHM_CHUNKS) !=
            (k + 1) * BOEHM_NODES / BOEHM_CHUNKS)
            c->bad_checks++;
    }
    c->loop_collections = atomic_load(&c->loop->collections) - start;
    boehm_unwatch();
    c->suspended = boehm_suspended();
    boehm_list = head;
    if (boehm_link_node(&boehm_list_links[0], head) != GC_SUCCESS ||
        boehm_link_node(&boehm_list_links[1], last) != GC_SUCCESS)
        c->bad_checks++;
    boehm_cb_finish(c);
}

/* The second wrapped callback: the thread is still bdwgc's. */
static void CL_CALLBACK
boehm_cb_second(cl_event event, cl_int status, void *data)
{
    struct boehm_cbs *c = data;

    (void)event;
    (void)status;
    boehm_cb_observe(c, &c->wrapped[1]);
    boehm_cb_object = boehm_new_object(3);
    if (boehm_link(&boehm_cb_link, boehm_cb_object) != GC_SUCCESS)
        c->bad_checks++;
    boehm_cb_finish(c);
}

START_TEST(test_pocl_callback_allocates_during_collections)
{
    struct boehm_loop loop = {0};
    struct boehm_cbs c = {.loop = &loop};
    struct boehm_cl cl;
    cl_program program;
    cl_kernel kernel;
    cl_event gate, done;
    pthread_t collector;
    size_t one = 1;
    cl_int err;

    boehm_setup(0);
    boehm_cl_open(&cl);
    program = boehm_program(&cl);
    kernel = boehm_nop_kernel(&cl, program);
    ck_assert_int_eq(sem_init(&loop.start, 0, 0), 0);
    ck_assert_int_eq(sem_init(&c.done, 0, 0), 0);
    collector = boehm_gc_thread(boehm_loop_main, &loop);

    gate = clgc_clCreateUserEvent(cl.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clgc_clEnqueueNDRangeKernel(cl.queue, kernel, 1, NULL,
                                                 &one, NULL, 1, &gate, &done),
                     CL_SUCCESS);
    ck_assert_int_eq(clSetEventCallback(done, CL_COMPLETE, boehm_cb_probe, &c),
                     CL_SUCCESS);
    ck_assert_int_eq(
        clgc_clSetEventCallback(done, CL_COMPLETE, boehm_cb_build_list, &c),
        CL_SUCCESS);
    ck_assert_int_eq(clSetEventCallback(done, CL_COMPLETE, boehm_cb_probe, &c),
                     CL_SUCCESS);
    ck_assert_int_eq(
        clgc_clSetEventCallback(done, CL_COMPLETE, boehm_cb_second, &c),
        CL_SUCCESS);
    ck_assert_int_eq(clSetEventCallback(done, CL_COMPLETE, boehm_cb_probe, &c),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_clFlush(cl.queue), CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    boehm_sem_wait(&c.done);
    atomic_store(&loop.stop, 1);
    sem_post(&loop.start); /* in case the list's builder never ran */
    boehm_gc_join(collector);
    ck_assert_int_eq(clgc_clWaitForEvents(1, &done), CL_SUCCESS);

    /* One thread of PoCL's ran them all, in order. */
    ck_assert_int_eq(atomic_load(&c.steps), 5);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(c.probe[i].step, 2 * i + 1);
        ck_assert(pthread_equal(c.probe[i].thread, c.probe[0].thread));
    }
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(c.wrapped[i].step, 2 * i + 2);
        ck_assert(pthread_equal(c.wrapped[i].thread, c.probe[0].thread));
        ck_assert_int_eq(c.wrapped[i].registered, 1);
        ck_assert_int_eq(c.wrapped[i].attached, 1);
        ck_assert_int_eq(c.wrapped[i].in_region, 0);
        ck_assert_uint_eq(c.wrapped[i].depth, 0);
    }
    ck_assert_msg(!pthread_equal(c.probe[0].thread, pthread_self()),
                  "PoCL ran the completion callbacks on the test's thread");
    /* Unknown to bdwgc before the first wrapped callback, registered by
     * it, and still registered, by clgc, after it and after the second:
     * had clgc registered the thread again, bdwgc would have said
     * GC_DUPLICATE and clgc would no longer count it as attached. */
    ck_assert_int_eq(c.probe[0].registered, 0);
    ck_assert_int_eq(c.probe[0].attached, 0);
    ck_assert_int_eq(c.probe[1].registered, 1);
    ck_assert_int_eq(c.probe[1].attached, 1);
    ck_assert_int_eq(c.probe[2].registered, 1);
    ck_assert_int_eq(c.probe[2].attached, 1);

    /* The list was built across the loop's collections, each of which
     * stopped its builder, and it was whole after every one. */
    ck_assert_uint_ge(c.loop_collections, 2 * BOEHM_CHUNKS);
    ck_assert_uint_ge(c.suspended, BOEHM_CHUNKS);
    ck_assert_uint_eq(c.checks, BOEHM_CHUNKS);
    ck_assert_uint_eq(c.bad_checks, 0);

    /* Back in PoCL, PoCL's thread is bdwgc's still: each collection stops
     * it by signal wherever it waits there (bdwgc needs no region for
     * that), and the device works on after. */
    boehm_watch(c.probe[0].thread);
    boehm_collect(BOEHM_COLLECTIONS);
    ck_assert_uint_ge(boehm_suspended(), BOEHM_COLLECTIONS);
    boehm_unwatch();
    ck_assert_int_eq(clgc_clEnqueueNDRangeKernel(cl.queue, kernel, 1, NULL,
                                                 &one, NULL, 0, NULL, NULL),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_clFinish(cl.queue), CL_SUCCESS);

    /* This thread reads what the callbacks stored, after those
     * collections, and after allocating nodes that would reuse any
     * reclaimed one. */
    for (unsigned i = 0; i < BOEHM_NODES; i++)
        (void)boehm_node_new(NULL, BOEHM_NODES + i);
    ck_assert_ptr_nonnull(boehm_list_links[0]);
    ck_assert_ptr_nonnull(boehm_list_links[1]);
    ck_assert_uint_eq(boehm_list_intact(boehm_list, BOEHM_NODES), BOEHM_NODES);
    boehm_check_object(boehm_cb_object, &boehm_cb_link, 3);

    test_event_let_go(done);
    ck_assert_int_eq(clgc_clReleaseEvent(done), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseEvent(gate), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseKernel(kernel), CL_SUCCESS);
    ck_assert_int_eq(clgc_clReleaseProgram(program), CL_SUCCESS);
    boehm_cl_close(&cl);
    sem_destroy(&loop.start);
    sem_destroy(&c.done);
}
END_TEST

/* A build notification, which PoCL calls on the building thread inside
 * clgc_clBuildProgram's GC_do_blocking: clgc re-enters bdwgc with
 * GC_call_with_gc_active around it, so it may allocate and collect, and
 * another thread's collection stops it and scans its frame (a thread
 * still blocked would be neither stopped nor scanned below the point
 * where it blocked). The collections must keep what the stack holds on
 * both sides of the blocked stretch: the notification's own frame, and
 * the test's frame outside the wrapper. */
struct boehm_notify {
    struct boehm_collector *collector;
    unsigned long suspended; /* by the other thread's collection */
    pthread_t thread;
    int calls, in_region, registered;
    unsigned depth;
    GC_word gc_before, gc_after;
    int intact; /* its own object, after its collection */
};

static unsigned *boehm_notify_object;
static void *boehm_notify_link, *boehm_outer_link;

static void CL_CALLBACK
boehm_notify_collect(cl_program program, void *data)
{
    struct boehm_notify *n = data;
    unsigned *obj;

    (void)program;
    n->calls++;
    n->thread = pthread_self();
    n->registered = GC_thread_is_registered();
    n->in_region = clgc_thread_in_region();
    n->depth = clgc_thread_region_depth();
    /* Held by this frame only until the collection is over. */
    obj = boehm_new_object(8);
    if (obj == NULL || boehm_link(&boehm_notify_link, obj) != GC_SUCCESS)
        return;
    n->suspended = boehm_collect_elsewhere(n->collector);
    n->gc_before = GC_get_gc_no();
    GC_gcollect();
    n->gc_after = GC_get_gc_no();
    for (unsigned i = 0; i < 64; i++)
        (void)boehm_new_object(99);
    n->intact = boehm_notify_link != NULL;
    for (unsigned i = 0; i < BOEHM_WORDS; i++)
        if (obj[i] != 8 * 1000u + i)
            n->intact = 0;
    boehm_notify_object = obj;
}

START_TEST(test_build_notify_allocates_and_collects)
{
    struct boehm_collector c = {.target = pthread_self()};
    struct boehm_notify n = {
        .collector = &c, .registered = -1, .in_region = -1};
    struct boehm_cl cl;
    cl_program program;
    pthread_t helper;
    unsigned *outer;

    boehm_setup(0);
    ck_assert_int_eq(sem_init(&c.request, 0, 0), 0);
    ck_assert_int_eq(sem_init(&c.reply, 0, 0), 0);
    helper = boehm_gc_thread(boehm_collector_main, &c);
    boehm_cl_open(&cl);
    program = boehm_program(&cl);
    /* Held by this frame only, across the build. */
    outer = boehm_new_object(5);
    ck_assert_int_eq(boehm_link(&boehm_outer_link, outer), GC_SUCCESS);
    test_assert_built(clgc_clBuildProgram(program, 1, &cl.device, "",
                                          boehm_notify_collect, &n),
                      program, cl.device);
    atomic_store(&c.stop, 1);
    sem_post(&c.request);
    boehm_gc_join(helper);

    ck_assert_int_eq(n.calls, 1);
    ck_assert_msg(pthread_equal(n.thread, pthread_self()),
                  "PoCL ran the build notification on another thread");
    ck_assert_int_eq(n.registered, 1);
    ck_assert_int_eq(n.in_region, 0);
    ck_assert_uint_eq(n.depth, 1);
    ck_assert_uint_ge(n.suspended, 1);
    ck_assert_uint_gt(n.gc_after, n.gc_before);
    ck_assert_int_eq(n.intact, 1);
    boehm_collect(BOEHM_COLLECTIONS);
    boehm_check_object(outer, &boehm_outer_link, 5);
    boehm_check_object(boehm_notify_object, &boehm_notify_link, 8);
    ck_assert_int_eq(clgc_clReleaseProgram(program), CL_SUCCESS);
    boehm_cl_close(&cl);
    sem_destroy(&c.request);
    sem_destroy(&c.reply);
}
END_TEST

/* ------------------------------------------------------------------------ */

Suite *
clgc_make_boehm_callbacks_suite(void)
{
    Suite *s = suite_create("boehm");

    boehm_add_pocl(s, "pocl callback allocates",
                   test_pocl_callback_allocates_during_collections,
                   "PoCL calls one event's callbacks in order on one "
                   "thread");
    boehm_add(s, "build notify allocates",
              test_build_notify_allocates_and_collects);
    return s;
}
