/* Waits and notifications on a driver whose callbacks come late, over the
 * real PoCL: the program is linked with the late-callback vehicle
 * (tests/latecb.c), whose clSetEventCallback and clWaitForEvents libclgc's
 * calls reach before the loader's. Each test sets the vehicle's delay
 * itself: 0 (callbacks untouched, PoCL as it is), a delay, or held until
 * the test releases them, which makes "the wait ended by its own look"
 * and "the watcher delivered it" certain rather than likely: a callback
 * that is held cannot have done it; and, where it matters, whether
 * clWaitForEvents busy-waits. Nothing here measures time. */

#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "latecb.h"
#include "testutil.h"

static clgc_wait_driver_t
learned(struct test_device *d)
{
    return test_driver_info(d).learned;
}

/* Learn afresh, a late platform tried again now and then (tries) or
 * never: the tests that check how a late platform's waits end turn the
 * tries off, as a try ends its wait by its callbacks. */
static void
learn(int tries)
{
    if (tries)
        unsetenv("CLGC_WAIT_TRIES");
    else
        setenv("CLGC_WAIT_TRIES", "off", 1);
    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_LEARN), CLGC_OK);
}

/* Open d under callbacks ms late (ms < 0: held until released), the
 * vehicle's clWaitForEvents busy or not, and learn its platform late,
 * never to be tried again. */
static void
open_learned_late(struct test_device *d, long ms, int busy)
{
    latecb_set_ms(ms);
    latecb_set_busy_wait(busy);
    test_device_open(d, 64);
    learn(0);
    test_learn_driver(d);
    ck_assert_int_eq(learned(d), CLGC_WAIT_DRIVER_LATE);
}

/* Open d under prompt callbacks and learn its platform prompt, to be
 * tried again once late. */
static void
open_learned_prompt(struct test_device *d)
{
    latecb_set_ms(0);
    test_device_open(d, 64);
    learn(1);
    test_learn_driver(d);
    ck_assert_int_eq(learned(d), CLGC_WAIT_DRIVER_PROMPT);
}

static unsigned
samples(struct test_device *d)
{
    clgc_wait_driver_info_t info = test_driver_info(d);

    return info.prompt + info.late;
}

/* Every callback registered is made by the driver (the commands all
 * complete) and then delivered, so none comes later. */
static void
release_all(void)
{
    while (latecb_unmade() != 0)
        sched_yield();
    latecb_release();
    ck_assert_int_eq(latecb_held(), 0);
}

/* Launch an n-trip kernel on d and wait for it. */
static void
launch_and_wait(struct test_device *d, int n)
{
    cl_event ev = test_launch(d, n);

    ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
    clReleaseEvent(ev);
}

/* When a gate opens: once the waiter sleeps with a timeout (the
 * backoff's sleeps), once it sleeps in the driver's clWaitForEvents, or
 * once it sleeps on a futex at all (a wait on its callbacks too). */
enum gate_when { WHEN_TIMED, WHEN_IN_OWN_WAIT, WHEN_ASLEEP };

struct gate {
    cl_event event;
    pid_t waiter;
    cl_int status; /* what it is set to */
    enum gate_when when;
};

static int
gate_may_open(const struct gate *g)
{
    if (g->when == WHEN_TIMED)
        return test_sleeps_timed(g->waiter);
    return test_sleeps_in_futex(g->waiter) &&
           (g->when == WHEN_ASLEEP || latecb_waiting() != 0);
}

static void *
open_when_asleep(void *arg)
{
    struct gate *g = arg;

    /* In the wait, not in a lock on its way there: under TSan a gate
     * opened while the waiter slept before its wait began, and the wait's
     * first look saw the kernel done (POLL, in pocl_is_learned_prompt). */
    while (!gate_may_open(g))
        sched_yield();
    clgc_clSetUserEventStatus(g->event, g->status);
    return NULL;
}

/* Wait for an n-trip kernel that starts only once the waiter sleeps as
 * when says (so its first looks cannot see it done), or fails then with a
 * gate set to status < 0; check what the wait returns, and return how it
 * ended. */
static clgc_wait_path_t
wait_gated_to(struct test_device *d, cl_int status, enum gate_when when, int n)
{
    struct gate g = {NULL, gettid(), status, when};
    size_t global = 64;
    pthread_t t;
    cl_event ev;
    cl_int err;

    g.event = clCreateUserEvent(d->context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(d->kernel, 1, sizeof(n), &n), 0);
    ck_assert_int_eq(clEnqueueNDRangeKernel(d->queue, d->kernel, 1, NULL,
                                            &global, NULL, 1, &g.event, &ev),
                     CL_SUCCESS);
    ck_assert_int_eq(pthread_create(&t, NULL, open_when_asleep, &g), 0);
    ck_assert_int_eq(clgc_wait_for_events(1, &ev),
                     status < 0 ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
                                : CL_SUCCESS);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    clReleaseEvent(ev);
    clReleaseEvent(g.event);
    return clgc_wait_last_path();
}

static clgc_wait_path_t
wait_gated(struct test_device *d)
{
    return wait_gated_to(d, CL_COMPLETE, WHEN_TIMED, 2000);
}

/* PoCL calls back at once: learned prompt, and waits then sleep until
 * the callback, as they did before clgc learned anything. */
START_TEST(pocl_is_learned_prompt)
{
    struct test_device d;
    clgc_wait_driver_info_t info;

    latecb_set_ms(0);
    test_device_open(&d, 64);
    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_LEARN), CLGC_OK);
    ck_assert_int_eq(learned(&d), CLGC_WAIT_DRIVER_LEARNING);
    test_learn_driver(&d);
    info = test_driver_info(&d);
    ck_assert_int_eq(info.learned, CLGC_WAIT_DRIVER_PROMPT);
    ck_assert_int_eq(info.strategy, CLGC_WAIT_CALLBACK);
    ck_assert_uint_gt(info.prompt, info.late);
    /* Each wait sleeps until the callback, unless it is one of the waits
     * picked at random to sample the platform again: those poll, and
     * leave a sample. */
    for (int i = 0; i < 16; i++) {
        unsigned before = samples(&d);
        clgc_wait_path_t path = wait_gated(&d);

        ck_assert(path == CLGC_WAIT_PATH_CALLBACK || samples(&d) > before);
    }
    test_device_close(&d);
}
END_TEST

/* Kernels of this many trips run milliseconds: long commands whatever
 * the load. */
#define LONG_TRIPS 20000

static unsigned
polls(struct test_device *d)
{
    clgc_wait_driver_info_t info = test_driver_info(d);

    return info.polls_done + info.polls_missed;
}

/* Whether a wait on done, an event complete already, polls when it
 * follows a short wait: its own, on done too. That wait is short unless
 * the machine took the CPU from it for 200 us; then it is tried again (a
 * bound on the tries, not a time). */
static int
a_wait_after_a_short_one_polls(struct test_device *d, cl_event done)
{
    for (int i = 0; i < 100; i++) {
        unsigned before;

        ck_assert_int_eq(clgc_wait_for_events(1, &done), CL_SUCCESS);
        before = test_driver_info(d).polls_done;
        ck_assert_int_eq(clgc_wait_for_events(1, &done), CL_SUCCESS);
        if (test_driver_info(d).polls_done == before + 1) {
            ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_POLL);
            return 1;
        }
    }
    return 0;
}

/* On a prompt platform a wait that follows a short one polls its events
 * for 10 us before it sleeps until the callbacks (the seed's strategy,
 * which wins for short commands); one that follows a long wait does not,
 * as its command is likely long too and the poll would cost CPU for
 * nothing. */
START_TEST(waits_after_short_ones_poll_first)
{
    struct test_device d;
    cl_event done;
    cl_int err;
    unsigned before;

    open_learned_prompt(&d);
    done = clCreateUserEvent(d.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(done, CL_COMPLETE), CL_SUCCESS);
    ck_assert(a_wait_after_a_short_one_polls(&d, done));
    ck_assert_int_eq(test_driver_info(&d).poll_ns, 10000);
    /* After a long command's wait, the next wait does not poll (the
     * command starts once its waiter sleeps: a wait that began late, past
     * its end, would be short). */
    (void)wait_gated_to(&d, CL_COMPLETE, WHEN_ASLEEP, LONG_TRIPS);
    before = polls(&d);
    ck_assert_int_eq(clgc_wait_for_events(1, &done), CL_SUCCESS);
    ck_assert_uint_eq(polls(&d), before);
    /* Short waits again: the next one polls. */
    ck_assert(a_wait_after_a_short_one_polls(&d, done));
    /* Not under a strategy set by hand. */
    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_CALLBACK), CLGC_OK);
    ck_assert_int_eq(test_driver_info(&d).poll_ns, 0);
    clReleaseEvent(done);
    test_device_close(&d);
}
END_TEST

/* A driver whose callbacks are prompt at first and late later (those of
 * long commands, as NVIDIA's) is learned prompt, then late from the waits
 * that sample it again. Once they are prompt again (the vehicle off), the
 * waits that try them alone find them so, and 8 more such tries than
 * others turn it prompt: a platform convicted by a bad spell (its own
 * waiters crowding the CPUs its callbacks need, say) recovers. Samples
 * alone never turn it back, as a sampling wait's own looks can make
 * NVIDIA call back on time. Short commands' callbacks stay prompt: the
 * waits here are all long, so only the long class is tried, and a short
 * class late too would keep the platform late (on 2 cores a waiter that
 * got no CPU while its kernel ran sees it done within 200 us of its
 * start, and samples the short class with it). A bound on the waits, not
 * a time. */
START_TEST(a_platform_late_for_a_while_recovers)
{
    struct test_device d;
    clgc_wait_driver_info_t info;
    int waits = 0;

    open_learned_prompt(&d);
    latecb_set_ms(20);
    latecb_set_split_us(100);
    for (; waits < 40000 && learned(&d) == CLGC_WAIT_DRIVER_PROMPT; waits++)
        launch_and_wait(&d, LONG_TRIPS);
    ck_assert_int_eq(learned(&d), CLGC_WAIT_DRIVER_LATE);
    latecb_set_ms(0);
    latecb_set_split_us(0);
    release_all();
    for (waits = 0; waits < 40000 && learned(&d) == CLGC_WAIT_DRIVER_LATE;
         waits++)
        launch_and_wait(&d, LONG_TRIPS);
    info = test_driver_info(&d);
    ck_assert_msg(info.learned == CLGC_WAIT_DRIVER_PROMPT,
                  "still late after %d waits: short %d, long %d, tried %u, "
                  "%u prompt, own wait %d",
                  waits, info.learned_short, info.learned_long, info.tried,
                  info.tried_prompt, info.own);
    ck_assert_uint_ge(info.tried_prompt, 8);
    ck_assert_uint_ge(info.tried, info.tried_prompt);
    release_all();
    test_device_close(&d);
}
END_TEST

/* PoCL's short commands, learned late for a while (their callbacks 20 ms
 * late while the platform is learned): a try of one (a wait on its
 * callback) takes about twice a polled wait, more than the eighth the
 * tries allow, so the class stays late while its waits poll. Once PoCL's
 * own clWaitForEvents is learned to sleep, the late plan's short waits
 * are PoCL's own, which the tries match: the class, and with it the
 * platform, recovers. Waits that see their 1-trip kernels done only past
 * 200 us (a loaded machine, a sanitizer) may teach the long class late
 * first: the platform is then late before the short class is learned,
 * which no wait samples after that (a try's time, a late callback's, is
 * a long command's); the platform is learned again then, a few times at
 * most. A bound on the waits, not a time. */
START_TEST(a_short_class_recovers_once_the_own_wait_sleeps)
{
    struct test_device d;
    clgc_wait_driver_info_t info;
    int waits = 0;

    latecb_set_ms(20);
    test_device_open(&d, 64);
    for (int again = 0; again < 8 && test_driver_info(&d).learned_short !=
                                         CLGC_WAIT_DRIVER_LATE;
         again++) {
        learn(1);
        for (waits = 0;
             waits < 4000 &&
             test_driver_info(&d).learned_short == CLGC_WAIT_DRIVER_LEARNING &&
             learned(&d) != CLGC_WAIT_DRIVER_LATE;
             waits++)
            launch_and_wait(&d, 1);
    }
    ck_assert_int_eq(test_driver_info(&d).learned_short, CLGC_WAIT_DRIVER_LATE);
    latecb_set_ms(0);
    release_all();
    test_learn_own_wait(&d);
    ck_assert_int_eq(test_driver_info(&d).own, CLGC_WAIT_OWN_USED);
    for (waits = 0; waits < 40000 && learned(&d) == CLGC_WAIT_DRIVER_LATE;
         waits++)
        launch_and_wait(&d, 1);
    info = test_driver_info(&d);
    ck_assert_msg(info.learned_short == CLGC_WAIT_DRIVER_PROMPT &&
                      info.learned == CLGC_WAIT_DRIVER_PROMPT,
                  "after %d waits: short %d, long %d, tried %u, %u prompt, "
                  "own wait %d",
                  waits, info.learned_short, info.learned_long, info.tried,
                  info.tried_prompt, info.own);
    ck_assert_uint_ge(info.tried_prompt, 8);
    release_all();
    test_device_close(&d);
}
END_TEST

/* Kernels of this many trips run long, but not so long that their time
 * is a millisecond (in the plain build). */
#define SHARE_TRIPS (LONG_TRIPS / 4)

/* A driver whose callbacks come as long after their commands end as the
 * commands took: for these never a millisecond late, but a wait that
 * slept until them would take twice one that polled (NVIDIA's ~1 ms
 * commands' and saxpy's callbacks, hundreds and tens of microseconds
 * late, made its sleeping waits that much slower). The tries find them
 * late, and the late class stays late; with a try held prompt within a
 * millisecond, 8 such tries turned it prompt. Every command starts once
 * its waiter sleeps, so that a try's command and a polled wait's start
 * at the same point of their waits, and a try registers its callbacks
 * before its command runs, as NVIDIA's do. A bound on the waits, not a
 * time. */
START_TEST(callbacks_late_for_their_commands_stay_late)
{
    struct test_device d;
    clgc_wait_driver_info_t info;

    latecb_set_ms(20);
    test_device_open(&d, 64);
    learn(1);
    /* Under TSan the short class may be learned first (its samples
     * come from the same kernels, when one ends within 200 us), and the
     * long one then only from the waits that try the platform: a bound
     * on the waits well above what that takes. */
    for (int i = 0; i < 2000 && test_driver_info(&d).learned_long ==
                                    CLGC_WAIT_DRIVER_LEARNING;
         i++)
        (void)wait_gated_to(&d, CL_COMPLETE, WHEN_ASLEEP, SHARE_TRIPS);
    info = test_driver_info(&d);
    ck_assert_msg(info.learned_long == CLGC_WAIT_DRIVER_LATE,
                  "long class %d (short %d), %u prompt, %u late, %u tried",
                  info.learned_long, info.learned_short, info.prompt, info.late,
                  info.tried);
    latecb_set_ms(0);
    release_all();
    latecb_set_share(100);
    for (int i = 0; i < 600; i++)
        (void)wait_gated_to(&d, CL_COMPLETE, WHEN_ASLEEP, SHARE_TRIPS);
    info = test_driver_info(&d);
    ck_assert_uint_ge(info.tried, 1);
    ck_assert_int_eq(info.learned_long, CLGC_WAIT_DRIVER_LATE);
    latecb_set_share(0);
    release_all();
    test_device_close(&d);
}
END_TEST

/* A driver late for good (every callback 15 ms late): each try finds its
 * callbacks late, and halves how often tries come, so that over 2000
 * waits they are a handful (one in 16 all along would be about 125, and
 * each costs a callback's lateness); the platform stays late. A bound on
 * the waits, not a time. */
START_TEST(a_driver_late_for_good_is_tried_ever_more_rarely)
{
    struct test_device d;
    clgc_wait_driver_info_t info;

    latecb_set_ms(15);
    test_device_open(&d, 64);
    learn(1);
    test_learn_driver(&d);
    ck_assert_int_eq(learned(&d), CLGC_WAIT_DRIVER_LATE);
    for (int i = 0; i < 2000; i++)
        launch_and_wait(&d, 1);
    info = test_driver_info(&d);
    ck_assert_int_eq(info.learned, CLGC_WAIT_DRIVER_LATE);
    ck_assert_uint_ge(info.tried, 1);
    ck_assert_uint_le(info.tried, 16);
    ck_assert_uint_eq(info.tried_prompt, 0);
    latecb_set_ms(0);
    release_all();
    test_device_close(&d);
}
END_TEST

/* Opens g's gate a millisecond after the waiter sleeps, with a timeout or
 * without (in the driver's own wait, where the long class is late and the
 * driver's wait sleeps: CI's machine had it there, and a gate that waited
 * for a timed sleep never opened): the command ends about that long
 * after its wait began, a long one whatever the load. */
static void *
open_late(void *arg)
{
    struct gate *g = arg;
    struct timespec ms = {0, 1000000L};

    while (!test_sleeps_in_futex(g->waiter))
        sched_yield();
    nanosleep(&ms, NULL);
    clgc_clSetUserEventStatus(g->event, CL_COMPLETE);
    return NULL;
}

static void
wait_long(struct test_device *d)
{
    struct gate g = {NULL, gettid(), CL_COMPLETE, WHEN_TIMED};
    size_t global = 64;
    int n = 1;
    pthread_t t;
    cl_event ev;
    cl_int err;

    g.event = clCreateUserEvent(d->context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(d->kernel, 1, sizeof(n), &n), 0);
    ck_assert_int_eq(clEnqueueNDRangeKernel(d->queue, d->kernel, 1, NULL,
                                            &global, NULL, 1, &g.event, &ev),
                     CL_SUCCESS);
    ck_assert_int_eq(pthread_create(&t, NULL, open_late, &g), 0);
    ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    clReleaseEvent(ev);
    clReleaseEvent(g.event);
}

/* NVIDIA's split, on the vehicle: callbacks late only for commands that
 * end 100 us or more after their registration. The long commands' class
 * is learned late, and however many short commands call back promptly,
 * it stays late: their samples are the short class's. (The short ones'
 * class is not asserted: under load a short kernel may run long.) Before
 * the classes, the prompt samples of the short ones decided for both. A
 * bound on the waits, not a time. */
START_TEST(prompt_short_commands_leave_long_ones_late)
{
    struct test_device d;
    int waits = 0;

    latecb_set_ms(15);
    latecb_set_split_us(100);
    test_device_open(&d, 64);
    learn(0);
    for (; waits < 4000 &&
           test_driver_info(&d).learned_long != CLGC_WAIT_DRIVER_LATE;
         waits++) {
        launch_and_wait(&d, 1);
        wait_long(&d);
    }
    ck_assert_int_eq(test_driver_info(&d).learned_long, CLGC_WAIT_DRIVER_LATE);
    for (int i = 0; i < 2000; i++)
        launch_and_wait(&d, 1);
    ck_assert_int_eq(test_driver_info(&d).learned_long, CLGC_WAIT_DRIVER_LATE);
    /* A long wait ends by its own look (or the driver's wait). */
    wait_long(&d);
    ck_assert_int_ne(clgc_wait_last_path(), CLGC_WAIT_PATH_CALLBACK);
    latecb_set_split_us(0);
    latecb_set_ms(0);
    release_all();
    test_device_close(&d);
}
END_TEST

/* A program of short commands alone, whose callbacks come late for them
 * (twice the command's time, as NVIDIA's saxpy's come ~25 us after a
 * ~14 us command): never a millisecond late, but late for their
 * commands, so the platform is learned late and its waits poll. Before,
 * only callbacks a millisecond late were, and such a program waited
 * 2.9x raw on NVIDIA for as long as it ran. A bound on the waits, not a
 * time. */
START_TEST(short_commands_late_for_themselves_are_learned_late)
{
    struct test_device d;
    int waits = 0;

    latecb_set_ms(0);
    latecb_set_share(200);
    test_device_open(&d, 64);
    learn(0);
    for (; waits < 4000 && learned(&d) != CLGC_WAIT_DRIVER_LATE; waits++)
        launch_and_wait(&d, 1);
    ck_assert_int_eq(learned(&d), CLGC_WAIT_DRIVER_LATE);
    launch_and_wait(&d, 1);
    ck_assert_int_ne(clgc_wait_last_path(), CLGC_WAIT_PATH_CALLBACK);
    latecb_set_share(0);
    release_all();
    test_device_close(&d);
}
END_TEST

/* The waits that sample a prompt platform again never fall in step with
 * the program's own period. Here every fourth wait is a command whose
 * callback comes late (as NVIDIA's ~1 ms commands among saxpy launches),
 * placed two waits after the last wait that was sampled: sampling every
 * 16th wait would only ever sample the prompt ones (as clgc-bench wait's
 * saxpy launches on the H200) and never turn the platform late, and so
 * would any fixed sequence of picks whose gaps are never 2 modulo 4. A
 * bound on the waits, not a time. */
START_TEST(a_late_command_in_every_four_turns_the_platform_late)
{
    struct test_device d;
    int waits = 0, last = -1;

    latecb_set_ms(0);
    test_device_open(&d, 64);
    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_LEARN), CLGC_OK);
    test_learn_driver(&d);
    ck_assert_int_eq(learned(&d), CLGC_WAIT_DRIVER_PROMPT);
    for (; waits < 40000 && learned(&d) == CLGC_WAIT_DRIVER_PROMPT; waits++) {
        unsigned before = samples(&d);
        cl_event ev;

        latecb_set_ms(last >= 0 && (waits - last) % 4 == 2 ? 20 : 0);
        ev = test_launch(&d, 2000);
        ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
        clReleaseEvent(ev);
        if (samples(&d) != before)
            last = waits;
    }
    ck_assert_int_ge(last, 0);
    ck_assert_int_eq(learned(&d), CLGC_WAIT_DRIVER_LATE);
    latecb_set_ms(0);
    release_all();
    test_device_close(&d);
}
END_TEST

/* Callbacks 20 ms late: learned late from the callbacks' own lateness. */
START_TEST(late_callbacks_are_learned_late)
{
    struct test_device d;
    clgc_wait_driver_info_t info;

    open_learned_late(&d, 20, 1);
    info = test_driver_info(&d);
    ck_assert_int_eq(info.learned, CLGC_WAIT_DRIVER_LATE);
    ck_assert_int_eq(info.strategy, CLGC_WAIT_BACKOFF);
    ck_assert_uint_gt(info.late, info.prompt);
    ck_assert_int_ge(info.lateness_ns, 1000000L);
    /* Its clWaitForEvents busy-waits, as NVIDIA's does: avoided. */
    test_learn_own_wait(&d);
    info = test_driver_info(&d);
    ck_assert_int_eq(info.own, CLGC_WAIT_OWN_AVOIDED);
    ck_assert_uint_gt(info.own_busy, info.own_sleeps);

    /* The waits now end by their own look: with the callbacks held, they
     * cannot end any other way. */
    latecb_set_ms(-1);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(wait_gated(&d), CLGC_WAIT_PATH_BACKOFF);
    /* The held callbacks, stale now, change nothing. */
    release_all();
    ck_assert_int_eq(wait_gated(&d), CLGC_WAIT_PATH_BACKOFF);
    release_all();
    ck_assert_int_eq(learned(&d), CLGC_WAIT_DRIVER_LATE);
    latecb_set_busy_wait(0);
    test_device_close(&d);
}
END_TEST

/* A late driver whose own clWaitForEvents sleeps (PoCL's, under the
 * vehicle's late callbacks) is learned so, and the waits then end in it:
 * with the callbacks held, and no look of clgc's, even one whose kernel
 * starts only once the waiter sleeps; a gate that fails ends it too.
 * CLGC_WAIT_LEARN forgets it with the rest. */
START_TEST(a_late_driver_whose_own_wait_sleeps_is_waited_in)
{
    struct test_device d;
    clgc_wait_driver_info_t info;

    open_learned_late(&d, 20, 0);
    ck_assert_int_eq(test_driver_info(&d).own, CLGC_WAIT_OWN_LEARNING);
    test_learn_own_wait(&d);
    info = test_driver_info(&d);
    ck_assert_int_eq(info.own, CLGC_WAIT_OWN_USED);
    ck_assert_uint_gt(info.own_sleeps, info.own_busy);
    ck_assert_int_eq(info.strategy, CLGC_WAIT_BACKOFF); /* the watcher's */

    latecb_set_ms(-1);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(wait_gated_to(&d, CL_COMPLETE, WHEN_IN_OWN_WAIT, 2000),
                         CLGC_WAIT_PATH_OWN);
    ck_assert_int_eq(wait_gated_to(&d, -5, WHEN_IN_OWN_WAIT, 2000),
                     CLGC_WAIT_PATH_OWN);
    /* A wait whose short commands are still learned registers its
     * callbacks, and PoCL never calls back for the failed command: what
     * was made is delivered, the rest never will be. */
    latecb_release();

    learn(0);
    info = test_driver_info(&d);
    ck_assert_int_eq(info.own, CLGC_WAIT_OWN_LEARNING);
    ck_assert_uint_eq(info.own_sleeps + info.own_busy, 0);
    test_device_close(&d);
}
END_TEST

/* A thread that waits, on a queue of its own, until the own wait is
 * known (a bound on the waits), and counts the waits that failed. */
struct own_waiter {
    struct test_device d;
    pthread_t thread;
    int failed;
};

static void *
wait_until_own_known(void *p)
{
    struct own_waiter *w = p;

    for (int i = 0;
         i < 64 && test_driver_info(&w->d).own == CLGC_WAIT_OWN_LEARNING; i++) {
        cl_event ev = test_launch(&w->d, 1000000);

        w->failed += clgc_wait_for_events(1, &ev) != CL_SUCCESS;
        clReleaseEvent(ev);
    }
    return NULL;
}

/* Four threads wait at once while the own wait is learned: every wait
 * succeeds, and their samples, counted under the learner's lock, decide
 * it once: exactly 4 conclusive ones, whichever threads left them. */
START_TEST(the_own_wait_is_learned_from_many_threads)
{
    struct own_waiter w[4];
    clgc_wait_driver_info_t info;

    latecb_set_ms(20);
    latecb_set_busy_wait(0);
    for (int i = 0; i < 4; i++)
        test_device_open(&w[i].d, 64);
    learn(0);
    test_learn_driver(&w[0].d);
    ck_assert_int_eq(learned(&w[0].d), CLGC_WAIT_DRIVER_LATE);
    for (int i = 0; i < 4; i++) {
        w[i].failed = 0;
        ck_assert_int_eq(
            pthread_create(&w[i].thread, NULL, wait_until_own_known, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(pthread_join(w[i].thread, NULL), 0);
        ck_assert_int_eq(w[i].failed, 0);
    }
    info = test_driver_info(&w[0].d);
    ck_assert_int_eq(info.own, CLGC_WAIT_OWN_USED);
    ck_assert_uint_eq(info.own_sleeps + info.own_busy, 4);
    release_all();
    for (int i = 0; i < 4; i++)
        test_device_close(&w[i].d);
}
END_TEST

/* A late driver whose own wait never tells how it waits (each wait handed
 * to it ends at once: the vehicle sets the waited user event first) is
 * given up after 32 sampled waits, and avoided: the waits after end by
 * clgc's own look. */
START_TEST(an_own_wait_that_never_tells_is_avoided)
{
    struct test_device d;
    clgc_wait_driver_info_t info;
    cl_int err;
    int tries = 0;

    open_learned_late(&d, 20, 0);
    latecb_set_wait_completes(1);
    while (tries < 64 && test_driver_info(&d).own == CLGC_WAIT_OWN_LEARNING) {
        cl_event gate = clCreateUserEvent(d.context, &err);

        ck_assert_int_eq(err, CL_SUCCESS);
        ck_assert_int_eq(clgc_wait_for_events(1, &gate), CL_SUCCESS);
        ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_OWN);
        ck_assert_int_eq(test_event_status(gate), CL_COMPLETE);
        clReleaseEvent(gate);
        tries++;
    }
    latecb_set_wait_completes(0);
    info = test_driver_info(&d);
    ck_assert_int_eq(info.own, CLGC_WAIT_OWN_AVOIDED);
    ck_assert_int_eq(tries, 32);
    ck_assert_uint_lt(info.own_sleeps + info.own_busy, 4);
    latecb_set_ms(-1); /* no callback can end it */
    ck_assert_int_eq(wait_gated(&d), CLGC_WAIT_PATH_BACKOFF);
    release_all();
    test_device_close(&d);
}
END_TEST

/* Sets a user event a millisecond after the waiter has entered the
 * driver's clWaitForEvents: each sample of the own wait is at least that
 * long, long enough to tell (not a measure: a lower bound). This thread
 * sleeps meanwhile, and nothing else runs: the waiter spins alone. */
static void *
set_once_in_own_wait(void *event)
{
    struct timespec ms = {0, 1000000};
    struct test_await w = test_await_start();

    while (latecb_waiting() == 0)
        test_await_nap(&w, "the waiter to enter clWaitForEvents");
    nanosleep(&ms, NULL);
    clgc_clSetUserEventStatus(event, CL_COMPLETE);
    return NULL;
}

/* A driver's wait that spins on an idle CPU, never switched out (NVIDIA's,
 * on 16 cores), is busy, every sample of it. Read from Linux's schedstat,
 * the time on a CPU of the running thread is brought up to date only at
 * a tick or a switch, and such a wait read as asleep: NVIDIA's was
 * learned to sleep, and its waits spun a core in it. */
START_TEST(an_own_wait_that_spins_alone_is_busy)
{
    struct test_device d;
    clgc_wait_driver_info_t info;
    cl_int err;
    int waits = 0;

    open_learned_late(&d, 20, 1);
    while (waits < 32 && test_driver_info(&d).own == CLGC_WAIT_OWN_LEARNING) {
        cl_event gate = clCreateUserEvent(d.context, &err);
        pthread_t t;

        ck_assert_int_eq(err, CL_SUCCESS);
        ck_assert_int_eq(pthread_create(&t, NULL, set_once_in_own_wait, gate),
                         0);
        ck_assert_int_eq(clgc_wait_for_events(1, &gate), CL_SUCCESS);
        ck_assert_int_eq(clgc_wait_last_path(), CLGC_WAIT_PATH_OWN);
        ck_assert_int_eq(pthread_join(t, NULL), 0);
        clReleaseEvent(gate);
        waits++;
    }
    info = test_driver_info(&d);
    ck_assert_int_eq(info.own, CLGC_WAIT_OWN_AVOIDED);
    ck_assert_uint_eq(info.own_sleeps, 0);
    ck_assert_uint_eq(info.own_busy, 4);
    ck_assert_int_eq(waits, 4);
    latecb_set_busy_wait(0);
    test_device_close(&d);
}
END_TEST

/* Callbacks that never come while clgc learns: late as well (a probe
 * left unanswered for a millisecond counts), and no wait hangs. */
START_TEST(held_callbacks_are_learned_late)
{
    struct test_device d;

    open_learned_late(&d, -1, 1);
    test_learn_own_wait(&d);
    ck_assert_int_eq(test_driver_info(&d).own, CLGC_WAIT_OWN_AVOIDED);
    ck_assert_int_eq(wait_gated(&d), CLGC_WAIT_PATH_BACKOFF);
    release_all();
    latecb_set_busy_wait(0);
    test_device_close(&d);
}
END_TEST

static atomic_int ran;
static sem_t ran_sem;
static atomic_long delivered_then = -1, delivered_before;

static void
note(cl_event event, cl_int status, void *data)
{
    (void)event;
    *(cl_int *)data = status;
    /* Nothing the vehicle held has been delivered yet: the watcher did
     * this, not the callback. */
    atomic_store(&delivered_then, latecb_delivered());
    atomic_fetch_add(&ran, 1);
    sem_post(&ran_sem);
}

static void CL_CALLBACK
note_cl(cl_event event, cl_int status, void *data)
{
    note(event, status, data);
}

/* A notification, a post to a completion queue and a callback registered
 * through clgc_clSetEventCallback on a late platform are delivered by the
 * watcher's looks, with the callbacks held; each once, with
 * CL_COMPLETE, and the callbacks, released afterwards, run nothing more
 * and leave the queue free to close. */
static void
deliveries_without_callbacks(struct test_device *d)
{
    cl_int s1 = 1, s2 = 1, s3 = 1;
    cl_event e1, e2, e3;
    clgc_queue_t *q;
    struct pollfd p;

    /* Hold from now on, and let the callbacks of earlier waits come
     * first, so that any delivered later is one of these. */
    latecb_set_ms(-1);
    release_all();
    atomic_store(&ran, 0);
    atomic_store(&delivered_before, latecb_delivered());
    sem_init(&ran_sem, 0, 0);
    ck_assert_int_eq(clgc_queue_create(&q), CLGC_OK);
    e1 = test_launch(d, 20000);
    e2 = test_launch(d, 20000);
    e3 = test_launch(d, 20000);
    ck_assert_int_eq(clgc_event_notify(e1, CLGC_NOTIFY_RAW, note, &s1),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_event_post(e2, q, note, &s2), CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetEventCallback(e3, CL_COMPLETE, note_cl, &s3),
                     CL_SUCCESS);
    sem_wait(&ran_sem);
    sem_wait(&ran_sem);
    ck_assert_int_eq(atomic_load(&delivered_then),
                     atomic_load(&delivered_before));
    p = (struct pollfd){clgc_queue_fd(q), POLLIN, 0};
    while (atomic_load(&ran) < 3) {
        ck_assert_int_eq(poll(&p, 1, -1), 1);
        ck_assert_int_ge(clgc_queue_drain(q, 0), 0);
    }
    ck_assert_int_eq(atomic_load(&delivered_then),
                     atomic_load(&delivered_before));
    ck_assert_int_eq(s1, CL_COMPLETE);
    ck_assert_int_eq(s2, CL_COMPLETE);
    ck_assert_int_eq(s3, CL_COMPLETE);

    release_all();
    ck_assert_int_ge(latecb_delivered(), atomic_load(&delivered_before) + 3);
    ck_assert_int_eq(clgc_queue_drain(q, 0), 0);
    ck_assert_int_eq(atomic_load(&ran), 3);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    clReleaseEvent(e1);
    clReleaseEvent(e2);
    clReleaseEvent(e3);
    sem_destroy(&ran_sem);
}

START_TEST(the_watcher_delivers_on_a_late_platform)
{
    struct test_device d;

    latecb_set_ms(20);
    test_device_open(&d, 64);
    learn(0);
    test_learn_driver(&d);
    ck_assert_int_eq(learned(&d), CLGC_WAIT_DRIVER_LATE);
    deliveries_without_callbacks(&d);
    test_device_close(&d);
}
END_TEST

/* On a late platform the watcher's look that delivers a notification
 * leaves a probe, which the event's callback answers with its lateness;
 * not on a user event, whose callback the program's clSetUserEventStatus
 * makes. The callbacks are held until the notifications are delivered,
 * then released: a probe left would be answered then, a sample. */
START_TEST(notifications_on_user_events_teach_nothing)
{
    struct test_device d;
    unsigned before;

    open_learned_late(&d, 20, 0);
    latecb_set_ms(-1);
    release_all();
    before = samples(&d);
    sem_init(&ran_sem, 0, 0);
    for (int i = 0; i < 3; i++) {
        cl_int status = 1, err;
        cl_event user = clCreateUserEvent(d.context, &err);

        ck_assert_int_eq(err, CL_SUCCESS);
        ck_assert_int_eq(
            clgc_event_notify(user, CLGC_NOTIFY_RAW, note, &status),
            CL_SUCCESS);
        ck_assert_int_eq(clSetUserEventStatus(user, CL_COMPLETE), CL_SUCCESS);
        sem_wait(&ran_sem);
        ck_assert_int_eq(status, CL_COMPLETE);
        release_all();
        clReleaseEvent(user);
    }
    ck_assert_uint_eq(samples(&d), before);
    sem_destroy(&ran_sem);
    latecb_set_ms(0);
    test_device_close(&d);
}
END_TEST

/* CLGC_WAIT_BACKOFF polls every platform, whatever was learned. */
START_TEST(the_backoff_strategy_polls)
{
    struct test_device d;

    latecb_set_ms(-1);
    test_device_open(&d, 64);
    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_BACKOFF), CLGC_OK);
    ck_assert_int_eq(wait_gated(&d), CLGC_WAIT_PATH_BACKOFF);
    release_all();
    deliveries_without_callbacks(&d);
    test_device_close(&d);
}
END_TEST

/* The strategy and the driver information refuse what they cannot use. */
/* A crowd of waits (more than the CPUs) making their first waits at once
 * on one command, which starts once they all wait: the driver's callbacks
 * come late only because the waiters take its threads' time, which says
 * nothing of the driver. One
 * wait at a time samples a platform, so the crowd leaves one sample at
 * most, and the waits after it learn PoCL prompt. It failed before the
 * sampler: the crowd's samples made PoCL late. */
#define CROWD 200

static atomic_int crowd_in;
static _Atomic pid_t crowd_tid[CROWD]; /* 0 until the thread writes it */

static void *
crowd_wait(void *arg)
{
    cl_event ev = arg;

    atomic_store(&crowd_tid[atomic_fetch_add(&crowd_in, 1)], gettid());
    ck_assert_int_eq(clgc_wait_for_events(1, &ev), CL_SUCCESS);
    return NULL;
}

START_TEST(a_crowd_of_first_waits_teaches_nothing)
{
    struct test_device d;
    pthread_t t[CROWD];
    clgc_wait_driver_info_t info;
    cl_event gate, ev;
    cl_int err, n = 1;
    size_t global = 64;

    latecb_set_ms(0);
    test_device_open(&d, 64);
    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_LEARN), CLGC_OK);
    gate = clCreateUserEvent(d.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(d.kernel, 1, sizeof(n), &n), 0);
    ck_assert_int_eq(clEnqueueNDRangeKernel(d.queue, d.kernel, 1, NULL, &global,
                                            NULL, 1, &gate, &ev),
                     CL_SUCCESS);
    for (int i = 0; i < CROWD; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, crowd_wait, ev), 0);
    while (atomic_load(&crowd_in) < CROWD)
        sched_yield();
    /* Each in its wait, its plan taken (a wait's own sleeps are timed). */
    for (int i = 0; i < CROWD; i++)
        while (atomic_load(&crowd_tid[i]) == 0 ||
               !test_sleeps_timed(atomic_load(&crowd_tid[i])))
            sched_yield();
    ck_assert_int_eq(clgc_clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    for (int i = 0; i < CROWD; i++)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    info = test_driver_info(&d);
    ck_assert_uint_le(info.prompt + info.late, 1);
    ck_assert_int_eq(info.learned, CLGC_WAIT_DRIVER_LEARNING);
    test_learn_driver(&d);
    ck_assert_int_eq(learned(&d), CLGC_WAIT_DRIVER_PROMPT);
    clReleaseEvent(ev);
    clReleaseEvent(gate);
    test_device_close(&d);
}
END_TEST

/* Waits on user events teach nothing: their callbacks are made by the
 * program's clSetUserEventStatus (PoCL's on the spot), and their time is
 * no command's. With every callback 20 ms late, waits on user events
 * that another thread sets once the waiter sleeps leave the platform
 * unlearned, where they made it late when they sampled it. */
static void
wait_on_user_event(struct test_device *d)
{
    struct gate g = {NULL, gettid(), CL_COMPLETE, WHEN_ASLEEP};
    pthread_t t;
    cl_int err;

    g.event = clCreateUserEvent(d->context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(pthread_create(&t, NULL, open_when_asleep, &g), 0);
    ck_assert_int_eq(clgc_wait_for_events(1, &g.event), CL_SUCCESS);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    clReleaseEvent(g.event);
}

START_TEST(waits_on_user_events_teach_nothing)
{
    struct test_device d;
    clgc_wait_driver_info_t info;

    latecb_set_ms(20);
    test_device_open(&d, 64);
    learn(1);
    for (int i = 0; i < 20; i++)
        wait_on_user_event(&d);
    info = test_driver_info(&d);
    ck_assert_msg(info.learned == CLGC_WAIT_DRIVER_LEARNING &&
                      info.prompt + info.late == 0 && info.tried == 0,
                  "learned %d from %u prompt and %u late samples, %u tried",
                  info.learned, info.prompt, info.late, info.tried);
    latecb_set_ms(0);
    release_all();
    test_device_close(&d);
}
END_TEST

/* A long command's wait samples only once an earlier long wait has
 * shown how long such commands run: the sample sleeps half the shortest
 * of those before it looks (a look while the command runs sees nothing
 * but costs the waiter's CPU). So the process's first long wait takes
 * no sample unless its own look saw the command done (a loaded machine
 * may hold the waiter past the command's end); and a command much
 * shorter than those before ends its sample before any look, which
 * teaches nothing but makes the next samples look sooner: the class is
 * still learned (a bound on the waits, not a time). */
START_TEST(a_long_class_is_sampled_once_its_commands_are_timed)
{
    struct test_device d;
    clgc_wait_driver_info_t info;
    int waits = 0;

    latecb_set_ms(0);
    test_device_open(&d, 64);
    learn(1);
    launch_and_wait(&d, LONG_TRIPS * 8);
    if (clgc_wait_last_path() == CLGC_WAIT_PATH_CALLBACK)
        ck_assert_uint_eq(samples(&d), 0);
    while (test_driver_info(&d).learned_long == CLGC_WAIT_DRIVER_LEARNING &&
           waits++ < 2000)
        launch_and_wait(&d, LONG_TRIPS);
    info = test_driver_info(&d);
    ck_assert_msg(info.learned_long == CLGC_WAIT_DRIVER_PROMPT,
                  "long class %d after %d waits: %u prompt, %u late",
                  info.learned_long, waits, info.prompt, info.late);
    test_device_close(&d);
}
END_TEST

/* After a long wait, while neither class is learned, a wait samples the
 * long class from its start (no looks for the short one in its first
 * 200 us): it sleeps through the quiet, but looks once at 200 us, and a
 * command done by then is a short one, which teaches nothing (the first
 * look after the quiet would have counted it long, and late, its
 * callbacks held). A short command that the machine held past 200 us is
 * a long one to the sampler, so each try learns afresh from a long wait
 * (a bound on the tries, not a time). */
START_TEST(a_short_command_after_a_long_one_teaches_nothing)
{
    struct test_device d;
    unsigned before = 0;
    int tries, clean = 0;

    latecb_set_ms(0);
    test_device_open(&d, 64);
    for (tries = 0; !clean && tries < 100; tries++) {
        latecb_set_ms(0);
        learn(1);
        launch_and_wait(&d, LONG_TRIPS);
        before = samples(&d);
        latecb_set_ms(-1);
        launch_and_wait(&d, 1);
        clean = samples(&d) == before &&
                clgc_wait_last_path() == CLGC_WAIT_PATH_BACKOFF;
    }
    ck_assert_msg(clean, "%d tries: %u samples, then %u", tries, before,
                  samples(&d));
    latecb_set_ms(0);
    release_all();
    test_device_close(&d);
}
END_TEST

START_TEST(bad_input_is_refused)
{
    clgc_wait_driver_info_t info;
    cl_platform_id pocl = test_platform("Portable Computing Language");
    int not_a_platform[8] = {0};

    ck_assert_int_eq(clgc_wait_set_strategy((clgc_wait_strategy_t)7),
                     CLGC_EINVAL);
    ck_assert_int_eq(clgc_wait_set_strategy((clgc_wait_strategy_t)-1),
                     CLGC_EINVAL);
    ck_assert_int_eq(clgc_wait_driver_info(NULL, &info), CLGC_EINVAL);
    ck_assert_int_eq(clgc_wait_driver_info(pocl, NULL), CLGC_EINVAL);
    ck_assert_int_eq(
        clgc_wait_driver_info((cl_platform_id)(void *)not_a_platform, &info),
        CLGC_EINVAL);
    ck_assert_int_eq(clgc_wait_set_strategy(CLGC_WAIT_LEARN), CLGC_OK);
    ck_assert_int_eq(clgc_wait_driver_info(pocl, &info), CLGC_OK);
    ck_assert_int_eq(info.learned, CLGC_WAIT_DRIVER_LEARNING);
    ck_assert_int_eq(info.strategy, CLGC_WAIT_BACKOFF);
    ck_assert_int_eq(info.lateness_ns, -1);
    ck_assert_int_eq(info.own, CLGC_WAIT_OWN_LEARNING);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("late");
    TCase *tc = test_case("late");
    SRunner *sr;
    int failed, err = test_rt_install();

    if (err != CLGC_OK) {
        fprintf(stderr, "installing the test runtime: %s\n",
                clgc_strerror(err));
        return EXIT_FAILURE;
    }
    tcase_set_tags(tc, TEST_TAG_THREADED);
    tcase_add_test(tc, pocl_is_learned_prompt);
    tcase_add_test(tc, waits_after_short_ones_poll_first);
    tcase_add_test(tc, a_crowd_of_first_waits_teaches_nothing);
    tcase_add_test(tc, waits_on_user_events_teach_nothing);
    tcase_add_test(tc, a_long_class_is_sampled_once_its_commands_are_timed);
    tcase_add_test(tc, a_short_command_after_a_long_one_teaches_nothing);
    tcase_add_test(tc, late_callbacks_are_learned_late);
    tcase_add_test(tc, a_late_driver_whose_own_wait_sleeps_is_waited_in);
    tcase_add_test(tc, the_own_wait_is_learned_from_many_threads);
    tcase_add_test(tc, an_own_wait_that_never_tells_is_avoided);
    tcase_add_test(tc, an_own_wait_that_spins_alone_is_busy);
    tcase_add_test(tc, a_platform_late_for_a_while_recovers);
    tcase_add_test(tc, a_driver_late_for_good_is_tried_ever_more_rarely);
    tcase_add_test(tc, a_short_class_recovers_once_the_own_wait_sleeps);
    tcase_add_test(tc, callbacks_late_for_their_commands_stay_late);
    tcase_add_test(tc, prompt_short_commands_leave_long_ones_late);
    tcase_add_test(tc, short_commands_late_for_themselves_are_learned_late);
    tcase_add_test(tc, a_late_command_in_every_four_turns_the_platform_late);
    tcase_add_test(tc, held_callbacks_are_learned_late);
    tcase_add_test(tc, the_watcher_delivers_on_a_late_platform);
    tcase_add_test(tc, notifications_on_user_events_teach_nothing);
    tcase_add_test(tc, the_backoff_strategy_polls);
    tcase_add_test(tc, bad_input_is_refused);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
