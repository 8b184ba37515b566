/* check_safepoint, regions: safe and active regions nest, with the
 * thread's state word right at every level; clgc_call_active leaves a VM
 * thread that runs VM code running; a callback that detaches its own
 * thread. */

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

Suite *
clgc_make_safepoint_regions_suite(void)
{
    Suite *s = suite_create("safepoint");
    TCase *tc = tcase_create("regions");

    tcase_add_test(tc, regions_nest_to_depth_three);
    tcase_add_test(tc, call_active_leaves_a_running_thread_running);
    tcase_add_test(tc, callback_that_detaches_its_thread);
    suite_add_tcase(s, tc);
    return s;
}
