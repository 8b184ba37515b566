#ifndef CLGC_DRIVER_H
#define CLGC_DRIVER_H

/* What clgc learns of each platform's driver (src/driver.c): whether its
 * completion callbacks come late, and whether its own clWaitForEvents
 * sleeps; the waits (wait.c) and the watcher (watch.c) ask it how to wait,
 * and tell it what they saw. A service below both. */

#include "internal.h"

/* What clgc learns of each platform's callbacks (driver.c): the index of
 * an object's platform (0 for an unknown one), whether its events are
 * polled (the strategy, or what was learned), and the samples that teach
 * it. A key names what polled (a wait's handle, a watch's id), as its
 * callbacks' user_data does. Any thread; nothing allocates. */
int clgc__driver_of(const void *object);
/* How to wait for a platform's events, and why: what a wait (wait.c)
 * does once its poll budget is spent, and whether the watcher (watch.c)
 * looks at a watch's events itself. */
enum clgc__plan_kind {
    /* Register a callback on each event and sleep until the last. */
    CLGC__PLAN_CALLBACK,
    /* Register the callbacks, then look on the backoff schedule, and tell
     * the learner which came first: the waits that teach it. */
    CLGC__PLAN_SAMPLE,
    /* Look on the backoff schedule; the callbacks only as a backstop
     * once the looks are far apart. */
    CLGC__PLAN_BACKOFF,
    /* The backoff schedule for a short while, then the driver's own
     * clWaitForEvents, sampled for how it waits. */
    CLGC__PLAN_BACKOFF_THEN_OWN,
    /* The driver's own clWaitForEvents: it sleeps. */
    CLGC__PLAN_OWN
};
enum clgc__plan_reason {
    CLGC__BECAUSE_FORCED,       /* clgc_wait_set_strategy, CLGC_WAIT_STRATEGY */
    CLGC__BECAUSE_LEARNING,     /* the platform's callbacks are learned */
    CLGC__BECAUSE_CROWDED,      /* learned; another wait samples now */
    CLGC__BECAUSE_PROMPT,       /* learned prompt */
    CLGC__BECAUSE_RESAMPLED,    /* learned prompt; this wait samples again */
    CLGC__BECAUSE_TRYING,       /* learned late; this wait tries callbacks */
    CLGC__BECAUSE_LATE,         /* learned late; its own wait spins */
    CLGC__BECAUSE_OWN_LEARNING, /* learned late; its own wait is learned */
    CLGC__BECAUSE_OWN_SLEEPS    /* learned late; its own wait sleeps */
};
struct clgc__plan {
    enum clgc__plan_kind kind;
    enum clgc__plan_reason why;
    /* A wait that is not over by CLGC__LONG_NS asks
     * clgc__driver_plan_long() what to do next. */
    int ask_long;
    /* A sample of the long class sleeps this long from the wait's start
     * before its first look (but for one at CLGC__LONG_NS, wait.c):
     * three quarters of the shortest of the class's last waits (its
     * commands' looks before that would only see them running). */
    long quiet;
};
/* The backoff schedule that a polling wait (wait.c) and the watcher's
 * fast looks (watch.c) both keep: the next look comes an eighth of the
 * time waited so far after the last (so it sees an end at most an eighth
 * late), and from CLGC__BACKOFF_MIN_NS to CLGC__BACKOFF_MAX_NS after it. */
#define CLGC__BACKOFF_MIN_NS 10000L
#define CLGC__BACKOFF_MAX_NS 1000000L

static inline long
clgc__backoff_gap(long waited)
{
    long gap = waited / 8;

    return gap < CLGC__BACKOFF_MIN_NS   ? CLGC__BACKOFF_MIN_NS
           : gap > CLGC__BACKOFF_MAX_NS ? CLGC__BACKOFF_MAX_NS
                                        : gap;
}

/* What is learned is learned per class of command: the short ones, which
 * a wait sees complete within CLGC__LONG_NS of its start, and the long
 * ones (NVIDIA calls back promptly for the first, late for the second). */
#define CLGC__LONG_NS 200000L
enum clgc__class { CLGC__SHORT, CLGC__LONG, CLGC__CLASSES };

static inline int
clgc__class_of(long duration)
{
    return duration < CLGC__LONG_NS ? CLGC__SHORT : CLGC__LONG;
}

/* The plan for a wait on the platform now, for its short commands; a
 * wait with ask_long asks clgc__driver_plan_long() at CLGC__LONG_NS (the
 * plan for its own wait, CLGC__PLAN_OWN and _BACKOFF_THEN_OWN, is the
 * whole wait's). A wait on a prompt class is CLGC__PLAN_SAMPLE one
 * time in CLGC__RESAMPLE_EVERY at random. One wait at a time samples a
 * platform: a CLGC__PLAN_SAMPLE is the platform's sampler, which the wait hands
 * back with clgc__driver_sampled() once it stops sampling (its sample taken, or
 * given up); while another wait holds it, a wait that would sample is
 * CLGC__PLAN_CALLBACK. So a burst of waits that crowds the CPUs, and
 * makes the driver's callbacks late by taking its threads' time, leaves
 * one sample, not a majority. */
struct clgc__plan clgc__driver_plan(int platform, int may_sample);
/* Without may_sample, never CLGC__PLAN_SAMPLE nor a try of a late
 * platform: for a wait on a user event (whose callbacks the program's
 * clSetUserEventStatus makes, PoCL's on the spot, and whose time is no
 * command's: a sample of it would teach the driver prompt, and its class,
 * whatever they are), and for a wait whose sample was given up, which
 * hands the sampler back at once (the wait goes on without it). */
struct clgc__plan clgc__driver_plan_long(int platform, int may_sample);
void clgc__driver_sampled(int platform);
/* Whether the platform's events are looked at rather than awaited:
 * learned late, or CLGC_WAIT_BACKOFF (the watcher's fast watches). */
int clgc__driver_looks(int platform);
/* How long a wait on the platform polls its events before its plan,
 * while the platform is learned prompt and its last wait was short (under
 * CLGC__LONG_NS): CLGC__SHORT_POLL_NS while such waits that polled have
 * been the faster (the seed's strategy, where it wins: docs/wait.md),
 * else 0; -1 where the learner does not decide (a long wait before, not
 * prompt, or not CLGC_WAIT_LEARN). Every wait of the platform then tells
 * the learner what it answered, whether the poll saw the events done,
 * the wait's wall time, and whether that time measures the choice (no
 * budget set by the program, and the events not done at the first
 * look). */
#define CLGC__SHORT_POLL_NS 10000L
long clgc__driver_poll_ns(int platform);
/* How late a callback may come and still be prompt: under CLGC__LATE_NS,
 * and under CLGC__LATE_MIN_NS or a quarter of its command's time. */
#define CLGC__LATE_NS 1000000L
#define CLGC__LATE_MIN_NS 10000L
/* A sample of a command that took duration ns: callbacks this late (0:
 * one came before the poller's own look saw its events done;
 * CLGC__LATE_NS: at least that late). */
void clgc__driver_lateness(int platform, long duration, long lateness);
/* A poller's look saw the events of key complete, duration ns after it
 * began to look, before their callback. */
void clgc__driver_probe(int platform, uintptr_t key, long duration);
/* key's callback came (after its poller returned, or not). */
void clgc__driver_called(int platform, uintptr_t key);
/* What a wait (wait.c) saw, handed to the learner in one call when it
 * ends: the plan it was given and what came of it. */
struct clgc__outcome {
    struct clgc__plan plan; /* clgc__driver_plan()'s, if it asked */
    int planned;            /* it asked: its poll did not see the end */
    long wall;              /* ns from its start to its end */
    long learned;           /* what clgc__driver_poll_ns() answered */
    int polled_done;        /* its poll saw the events done */
    int measured;           /* wall measures the poll: no budget set, the
                             * events not done at the first look */
    int sampler;            /* it holds the sampler still: hand it back */
    int sampled;            /* a lateness sample: sample_ns, lateness */
    long sample_ns, lateness;
    int short_seen;          /* a long sample's look at CLGC__LONG_NS saw
                              * the events done: a short command, which
                              * teaches nothing */
    int tried;               /* a try on callbacks alone that came through:
                              * wall is its time */
    int own;                 /* the driver's own wait sampled: own_wall ns, */
    long own_wall, own_busy; /* own_busy of them runnable */
    int user; /* a user event among its events: it teaches nothing of
               * the callbacks (no sample, no try) nor of the commands'
               * time, only how the driver's own wait waits */
};
/* The outcome of a wait on the platform: every sample it took, then
 * - its lateness sample (clgc__driver_lateness);
 * - a try on callbacks alone, held against the late plan's waits, which
 *   may turn a late class prompt;
 * - the sampler handed back;
 * - a sample of the driver's own wait: wall, and busy ns of it runnable
 *   (on a CPU or waiting for one);
 * - a wait that did not ask at CLGC__LONG_NS and lasted that long shows
 *   that the platform runs long commands: the next waits ask while the
 *   long class is not learned;
 * - a wait on the late plan (CLGC__BECAUSE_LATE, _OWN_LEARNING,
 *   _OWN_SLEEPS): what a try is held against;
 * - and what its poll answered (clgc__driver_poll_ns). */
void clgc__driver_learn(int platform, const struct clgc__outcome *o);
void clgc__driver_info(int platform, clgc_wait_driver_info_t *info);
void clgc__strategy_set(clgc_wait_strategy_t strategy);

#endif /* CLGC_DRIVER_H */
