/* check_safepoint, regions: safe and active regions nest, with the
 * thread's state word right at every level; clgc_call_active leaves a VM
 * thread that runs VM code running; a callback that detaches its own
 * thread; threads that exit inside a region. */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "safepoint.h"

/* Test c: safe, active, safe, active, safe. */
struct seen {
    unsigned depth;
    int in_region, word;
};

struct nest {
    int level;
    int n;
    struct seen seen[16];
};

static void
nest_observe(struct nest *n)
{
    n->seen[n->n++] =
        (struct seen){clgc_thread_region_depth(), clgc_thread_in_region(),
                      word_of(refvm_state_word())};
}

static void *nest_safe(void *arg);

static void *
nest_active(void *arg)
{
    struct nest *n = arg;

    nest_observe(n);
    refvm_alloc(0, n->level); /* active again: the heap is ours */
    clgc_call_safe(nest_safe, n);
    nest_observe(n);
    return NULL;
}

static void *
nest_safe(void *arg)
{
    struct nest *n = arg;

    n->level++;
    nest_observe(n);
    if (n->level < 3 && clgc_call_active(nest_active, n, NULL) != CLGC_OK)
        n->level = 100; /* fails the count below */
    nest_observe(n);
    return NULL;
}

START_TEST(regions_nest_to_depth_three)
{
    /* depth, in region, word: on the way in, then on the way out. */
    static const struct seen want[] = {
        {0, 0, CLGC_STATE_RUNNING}, {1, 1, CLGC_STATE_SAFE},
        {1, 0, CLGC_STATE_RUNNING}, {2, 1, CLGC_STATE_SAFE},
        {2, 0, CLGC_STATE_RUNNING}, {3, 1, CLGC_STATE_SAFE},
        {3, 1, CLGC_STATE_SAFE},    {2, 0, CLGC_STATE_RUNNING},
        {2, 1, CLGC_STATE_SAFE},    {1, 0, CLGC_STATE_RUNNING},
        {1, 1, CLGC_STATE_SAFE},    {0, 0, CLGC_STATE_RUNNING}};
    const int nwant = (int)(sizeof(want) / sizeof(want[0]));
    struct nest n;

    memset(&n, 0, sizeof(n));
    vm_setup();
    refvm_register();
    nest_observe(&n);
    clgc_call_safe(nest_safe, &n);
    nest_observe(&n);
    ck_assert_int_eq(refvm_load(0), 2); /* allocated at level 2 */
    refvm_unregister();

    ck_assert_int_eq(n.level, 3);
    ck_assert_int_eq(n.n, nwant);
    for (int i = 0; i < nwant; i++) {
        ck_assert_msg(n.seen[i].depth == want[i].depth &&
                          n.seen[i].in_region == want[i].in_region &&
                          n.seen[i].word == want[i].word,
                      "step %d: depth %u in_region %d word %d", i,
                      n.seen[i].depth, n.seen[i].in_region, n.seen[i].word);
    }
    ck_assert_uint_eq(vm_stats().violations, 0);
}
END_TEST

/* A VM thread of the VM's own, running VM code, stays RUNNING after
 * clgc_call_active: only a thread that was in native code goes back to
 * it. */
static void *
record_word(void *arg)
{
    *(int *)arg = word_of(refvm_state_word());
    return NULL;
}

START_TEST(call_active_leaves_a_running_thread_running)
{
    int inside = -1, after;

    vm_setup();
    refvm_register();
    ck_assert_int_eq(clgc_call_active(record_word, &inside, NULL), CLGC_OK);
    after = word_of(refvm_state_word());
    refvm_unregister();
    ck_assert_int_eq(inside, CLGC_STATE_RUNNING);
    ck_assert_int_eq(after, CLGC_STATE_RUNNING);
    ck_assert_uint_eq(vm_stats().violations, 0);
}
END_TEST

/* A foreign thread whose callback detaches it: clgc must not touch the
 * word it gave back (a generated wrapper called then must not take its
 * inline path, which stores into it), and the next call attaches the
 * thread again. */
struct detaching {
    cl_platform_id platform;
    int detach, registered_after, attached_after, rc_again, registered_again;
    cl_int wrapped_detached, wrapped_again;
};

static void *
detach_self(void *arg)
{
    struct detaching *d = arg;

    d->detach = clgc_thread_detach();
    return NULL;
}

static void *
detaching_thread(void *arg)
{
    struct detaching *d = arg;

    if (clgc_call_active(detach_self, d, NULL) != CLGC_OK)
        d->detach = -100;
    d->registered_after = refvm_registered();
    d->attached_after = clgc_thread_attached();
    d->wrapped_detached = platform_name(d->platform);
    d->rc_again = clgc_call_active(nothing, NULL, NULL);
    d->registered_again = refvm_registered();
    d->wrapped_again = platform_name(d->platform);
    return NULL;
}

START_TEST(callback_that_detaches_its_thread)
{
    struct detaching d = {NULL, -1, -1, -1, -1, -1, -1, -1};
    struct refvm_stats before, after;
    pthread_t t;

    vm_setup();
    d.platform = test_platform(POCL);
    before = vm_stats();
    ck_assert_int_eq(pthread_create(&t, NULL, detaching_thread, &d), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    after = vm_stats();
    ck_assert_int_eq(d.detach, CLGC_OK);
    ck_assert_int_eq(d.registered_after, 0);
    ck_assert_int_eq(d.attached_after, 0);
    ck_assert_int_eq(d.wrapped_detached, CL_SUCCESS);
    ck_assert_int_eq(d.rc_again, CLGC_OK);
    ck_assert_int_eq(d.registered_again, 1);
    ck_assert_int_eq(d.wrapped_again, CL_SUCCESS);
    ck_assert_uint_eq(after.attaches - before.attaches, 2);
    ck_assert_uint_eq(after.detaches - before.detaches, 2);
    ck_assert_uint_eq(after.threads, before.threads);
    ck_assert_uint_eq(after.violations, 0);
}
END_TEST

/* Issue 25, item 6: an attached thread that exits inside a safe region,
 * and one that exits inside an active region entered from one. clgc's
 * exit destructor leaves its regions first, then detaches the thread:
 * the VM drops it, and a collection afterwards waits for no one. A probe
 * of the test's own, a thread-exit destructor, looks once clgc's has run
 * (destructors run in no set order: it asks to run again until then). */
struct exiting {
    int active; /* exit from an active region inside the safe one */
    unsigned depth_inside;
    int word_inside;
    int rounds;
    int attached_at_exit, registered_at_exit, word_at_exit;
    unsigned depth_at_exit;
};

static pthread_key_t exiting_key;

static void
exiting_probe(void *arg)
{
    struct exiting *e = arg;

    if (clgc_thread_attached() && e->rounds++ < 8) {
        pthread_setspecific(exiting_key, e);
        return;
    }
    e->attached_at_exit = clgc_thread_attached();
    e->registered_at_exit = refvm_registered();
    e->depth_at_exit = clgc_thread_region_depth();
    e->word_at_exit = word_of(refvm_state_word());
}

static void *
exit_here(void *arg)
{
    struct exiting *e = arg;

    e->depth_inside = clgc_thread_region_depth();
    e->word_inside = word_of(refvm_state_word());
    pthread_exit(NULL);
}

static void *
exit_from_active(void *arg)
{
    ck_assert_int_eq(clgc_call_active(exit_here, arg, NULL), CLGC_OK);
    return NULL;
}

static void *
exiting_thread(void *arg)
{
    struct exiting *e = arg;

    pthread_setspecific(exiting_key, e);
    ck_assert_int_eq(clgc_thread_attach(), CLGC_OK);
    clgc_call_safe(e->active ? exit_from_active : exit_here, e);
    return NULL; /* never reached */
}

static void
exit_inside(int active)
{
    struct exiting e = {.active = active,
                        .attached_at_exit = -1,
                        .registered_at_exit = -1,
                        .word_at_exit = -1};
    struct refvm_stats before, after;
    pthread_t t;

    vm_setup();
    ck_assert_int_eq(pthread_key_create(&exiting_key, exiting_probe), 0);
    before = vm_stats();
    ck_assert_int_eq(pthread_create(&t, NULL, exiting_thread, &e), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    refvm_collect(); /* would wait for ever for a thread left registered */
    after = vm_stats();
    ck_assert_uint_eq(e.depth_inside, 1);
    ck_assert_int_eq(e.word_inside,
                     active ? CLGC_STATE_RUNNING : CLGC_STATE_SAFE);
    ck_assert_int_eq(e.attached_at_exit, 0);
    ck_assert_int_eq(e.registered_at_exit, 0);
    ck_assert_uint_eq(e.depth_at_exit, 0);
    /* The word as the exit left it: the VM's detach made it SAFE. */
    ck_assert_int_eq(e.word_at_exit, CLGC_STATE_SAFE);
    ck_assert_uint_eq(after.attaches - before.attaches, 1);
    ck_assert_uint_eq(after.detaches - before.detaches, 1);
    ck_assert_uint_eq(after.threads, before.threads);
    ck_assert_uint_eq(after.collections - before.collections, 1);
    ck_assert_uint_eq(after.violations, before.violations);
    pthread_key_delete(exiting_key);
}

START_TEST(thread_exiting_inside_a_region_is_detached)
{
    exit_inside(0);
}
END_TEST

START_TEST(thread_exiting_inside_an_active_region_is_detached)
{
    exit_inside(1);
}
END_TEST

Suite *
clgc_make_safepoint_regions_suite(void)
{
    Suite *s = suite_create("safepoint");
    TCase *tc = test_case("regions");

    tcase_add_test(tc, regions_nest_to_depth_three);
    tcase_add_test(tc, call_active_leaves_a_running_thread_running);
    tcase_add_test(tc, callback_that_detaches_its_thread);
    tcase_add_test(tc, thread_exiting_inside_a_region_is_detached);
    tcase_add_test(tc, thread_exiting_inside_an_active_region_is_detached);
    suite_add_tcase(s, tc);
    return s;
}
