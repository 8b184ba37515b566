/* The learner (driver.h): what clgc learns of each platform's driver
 * from the waits and the watcher that use it. */

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"

/* What clgc learns of each platform's completion callbacks.
 *
 * Some drivers call back long after the status says complete (NVIDIA's
 * OpenCL: 10 to 20 ms), and a wait that sleeps until the callback is then
 * that much late. NVIDIA's are late only for commands that run a while:
 * prompt for a saxpy, late for a kernel of a millisecond. So what is
 * learned is learned per class of command (driver.h): short ones, which a
 * wait sees complete within CLGC__LONG_NS of its start, and long ones.
 * A wait that polls sees a callback's lateness; so a class is learned from
 * the waits that poll while it is not known yet, and from one wait in
 * CLGC__RESAMPLE_EVERY at random once it is known prompt, each prompt
 * sample halving how often, to one in 64 (one in CLGC__RESAMPLE_SUSPECT
 * while a late sample is among its last few; a late one starts again at
 * CLGC__RESAMPLE_EVERY); the watcher's looks on a late platform sample it
 * too. A sample goes to the class of the command it measured, by how long
 * the command took. A sample of the long class sleeps, its callbacks
 * registered, through three quarters of the shortest of the class's last
 * long waits before it looks (none samples it before one such wait), and
 * one whose callback comes in that time teaches nothing:
 *
 * - a callback that wakes the poller before its own look saw the events
 *   done is a prompt sample (lateness 0);
 * - when a wait's look wins, the wait sleeps up to CLGC__LATE_NS more for
 *   its callbacks, with no OpenCL call in between (wait.c, clgc__measure:
 *   NVIDIA makes its callbacks when the program next calls it), and their
 *   lateness is the sample, late or prompt as clgc__late() says (late
 *   for its command, or CLGC__LATE_NS late);
 * - when a look of the watcher's wins (it looks only on late platforms),
 *   it leaves a probe on the platform (one at a time): its key, class and
 *   time. The callback of that key, when it comes, measures its
 *   lateness. A probe still there CLGC__LATE_NS after it was left counts
 *   late when the next look wins (the callback is at least that late, or
 *   never comes), and the new look leaves its probe instead.
 *
 * After CLGC__LEARN_SAMPLES samples a class is late if most were, else
 * prompt. A prompt class turns late when CLGC__LATE_QUORUM of its last
 * CLGC__LEARN_SAMPLES samples were. A platform late in either class is
 * waited for as late in both. (clgc_wait_set_strategy(CLGC_WAIT_LEARN)
 * starts over.) Only commands that completed are measured: PoCL never
 * calls back for a failed user event, which is not lateness.
 *
 * A late class is not turned prompt by samples: a sampling wait's own looks
 * can make NVIDIA call back on time, so they do not say what a sleeping wait
 * gets. It is tried instead, on the platform's late plan, by a wait that
 * sleeps until its callbacks with no look at all (the platform's sampler,
 * one wait in CLGC__RECOVER_MIN at random at first), whose wall time is
 * compared with what the class's waits on the late plan took lately (the
 * median of their last CLGC__LEARN_SAMPLES): within an eighth of it, the
 * callback was prompt. Not within CLGC__LATE_NS of it, as a sample is:
 * NVIDIA's callbacks, hundreds of microseconds late for its ~1 ms commands
 * and tens for its saxpy, are prompt by that measure, and a wait that sleeps
 * until them is much slower than one that polls. Where a driver's callbacks
 * cost more than an eighth of its short commands (PoCL's cost as much as a
 * saxpy), their class, once late, stays on the late plan, whose polled waits
 * are the faster for them, until the platform's own wait is learned to sleep
 * (PoCL's is, from waits of long commands): the late plan's waits are then
 * the driver's own, which a try matches. CLGC__LEARN_SAMPLES such tries
 * more than others turn the class prompt, and each of them brings the tries
 * back to one wait in CLGC__RECOVER_MIN. A try of a class not learned yet is
 * its sample (while the other class is late, no wait samples it). Any other try
 * (a callback late, or a prompt class: a waste) halves how often they come,
 * down to one wait in CLGC__RECOVER_MAX, so that on a driver that is late
 * for good the tries soon cost next to nothing; a class that turns late
 * starts it again at CLGC__RECOVER_MIN. A platform learned late by samples
 * that its own waiters made late (crowding the CPUs its callbacks need)
 * recovers so, in each class whose callbacks are prompt by that measure.
 * As for a sample, a try is never late by less than CLGC__LATE_MIN_NS: on
 * a loaded machine two wakeups differ by more than an eighth of a short
 * command's wait.
 *
 * A platform is found from an object's dispatch pointer (platform.c), no
 * query: platforms of one ICD share a dispatch table, and so share what is
 * learned, as they share the driver's callback machinery. */

#define CLGC__LEARN_SAMPLES 8
/* How many of the last CLGC__LEARN_SAMPLES samples turn a prompt class
 * late, and how often a wait samples a prompt class again: one wait in
 * CLGC__RESAMPLE_EVERY, each prompt sample halving how often, down to one
 * in CLGC__RESAMPLE_EVERY << CLGC__RESAMPLE_MAX_SHIFT. Not rarer: on
 * NVIDIA a long class learned prompt from commands of 100 ms (whose
 * callbacks come about 0.5 ms late) is late for those of 1 ms (17 ms
 * late), and a program that turns to them waits 17x raw until a sample
 * says so: about 64 waits, 1 s. */
#define CLGC__LATE_QUORUM 3
#define CLGC__RESAMPLE_EVERY 16
#define CLGC__RESAMPLE_MAX_SHIFT 2
/* How often while a late sample is among the last CLGC__LEARN_SAMPLES. */
#define CLGC__RESAMPLE_SUSPECT 2
/* One wait in how many tries a late platform on its callbacks alone. */
#define CLGC__RECOVER_MIN 16
#define CLGC__RECOVER_MAX 4096

/* A late platform's own clWaitForEvents (clgc_wait_own_t in
 * include/clgc/wait.h): which samples are conclusive, how many decide,
 * and after how many sampled waits an undecided one is avoided. */
#define CLGC__OWN_MIN_NS 400000L
#define CLGC__OWN_SAMPLES 4
#define CLGC__OWN_TRIES 32

/* While the long class is not learned, how many waits ask at
 * CLGC__LONG_NS after one that lasted that long: long commands may come
 * after it, or it was a short one held up (then the asks run out). */
#define CLGC__LONG_ASKS 64

/* Polling short waits (clgc__driver_poll_ns): the mean wall time of the
 * platform's short waits that polled and of those that did not (an
 * exponential mean, each new wait an eighth of it), counting only waits
 * whose events were not done at their first look, which every wait
 * takes. A wait that follows a short one polls while no polling one has
 * been measured yet, or while those have been the faster by a sixteenth
 * at least; once both are measured, one wait in CLGC__POLL_TRY_EVERY does
 * the other, so that both stay measured. On PoCL on 2 cores here the
 * polling waits take about two thirds of the others' time; on PoCL 5
 * with 16 cores, or 4 of them, they do not win, and the looks would cost
 * the waiter's CPU for nothing (docs/wait.md, "Short commands"). */
#define CLGC__POLL_TRY_EVERY 32

/* What is learned of one class of commands. */
struct clgc__learned {
    atomic_int learned;         /* clgc_wait_driver_t */
    atomic_int suspect;         /* a late sample among the last few */
    atomic_uint resample_shift; /* resampled one wait in EVERY << shift */
    atomic_uint prompt, late;
    long lateness[CLGC__LEARN_SAMPLES]; /* the last ones, a ring */
    unsigned nlateness;
    unsigned late_bits; /* which of them were late, bit i of lateness[i] */
    long waited[CLGC__LEARN_SAMPLES]; /* the late plan's last waits, ns */
    unsigned nwaited;
    unsigned recovered; /* tries whose callbacks were prompt, less others */
};

struct clgc__driver {
    struct clgc__learned classes[CLGC__CLASSES];
    atomic_int sampling;       /* a wait holds the sampler */
    atomic_uint recover_shift; /* a try one wait in MIN << shift */
    unsigned tried, tried_prompt;
    atomic_int long_asks;      /* waits left to ask (clgc__driver_ended) */
    atomic_int last_short;     /* its last wait was short */
    atomic_long short_wall[2]; /* without the poll, with it; 0: none yet */
    atomic_uint polls_done, polls_missed;
    atomic_int own;   /* clgc_wait_own_t */
    atomic_int lock;  /* the probe and the samples */
    uintptr_t probe;  /* 0: none */
    uintptr_t called; /* the key of the last measured callback */
    long probe_ns;
    long probe_duration;
    unsigned own_sleeps, own_busy, own_tries;
    long long_walls[CLGC__LEARN_SAMPLES]; /* the last long waits, a ring */
    unsigned nlong_walls;
    atomic_long quiet; /* a long sample's (clgc__plan); 0: none known */
};

static struct clgc__driver clgc__drivers[CLGC__MAX_PLATFORMS];
static atomic_int clgc__strategy = CLGC_WAIT_LEARN;
static pthread_once_t clgc__strategy_once = PTHREAD_ONCE_INIT;

/* CLGC_WAIT_TRIES=off: a late platform is never tried again (for a
 * program that knows its driver late for good, and for the tests that
 * count how late platforms' waits end). Read with the strategy, and
 * again by clgc_wait_set_strategy(CLGC_WAIT_LEARN). */
static atomic_int clgc__tries = 1;

static void
clgc__tries_init(void)
{
    const char *s = getenv("CLGC_WAIT_TRIES");

    atomic_store(&clgc__tries, s == NULL || strcmp(s, "off") != 0);
}

static void
clgc__strategy_init(void)
{
    const char *s = getenv("CLGC_WAIT_STRATEGY");

    clgc__tries_init();
    if (s == NULL)
        return;
    if (strcmp(s, "callback") == 0)
        atomic_store(&clgc__strategy, CLGC_WAIT_CALLBACK);
    else if (strcmp(s, "backoff") == 0)
        atomic_store(&clgc__strategy, CLGC_WAIT_BACKOFF);
}

static void
clgc__driver_lock(struct clgc__driver *d)
{
    int no = 0;

    while (!atomic_compare_exchange_weak_explicit(
        &d->lock, &no, 1, memory_order_acquire, memory_order_relaxed))
        no = 0;
}

static void
clgc__driver_unlock(struct clgc__driver *d)
{
    atomic_store_explicit(&d->lock, 0, memory_order_release);
}

void
clgc__strategy_set(clgc_wait_strategy_t s)
{
    pthread_once(&clgc__strategy_once, clgc__strategy_init);
    atomic_store(&clgc__strategy, s);
    if (s != CLGC_WAIT_LEARN)
        return;
    clgc__tries_init();
    for (int i = 0; i < CLGC__MAX_PLATFORMS; i++) {
        struct clgc__driver *d = &clgc__drivers[i];

        clgc__driver_lock(d);
        for (int c = 0; c < CLGC__CLASSES; c++) {
            struct clgc__learned *k = &d->classes[c];

            atomic_store(&k->learned, CLGC_WAIT_DRIVER_LEARNING);
            atomic_store(&k->prompt, 0);
            atomic_store(&k->late, 0);
            atomic_store(&k->suspect, 0);
            atomic_store(&k->resample_shift, 0);
            memset(k->lateness, 0, sizeof k->lateness);
            k->nlateness = 0;
            k->late_bits = 0;
            k->nwaited = 0;
            k->recovered = 0;
        }
        atomic_store(&d->recover_shift, 0);
        atomic_store(&d->long_asks, 0);
        atomic_store(&d->last_short, 0);
        atomic_store(&d->short_wall[0], 0);
        atomic_store(&d->short_wall[1], 0);
        atomic_store(&d->polls_done, 0);
        atomic_store(&d->polls_missed, 0);
        d->tried = d->tried_prompt = 0;
        atomic_store(&d->own, CLGC_WAIT_OWN_LEARNING);
        d->own_sleeps = d->own_busy = d->own_tries = 0;
        d->nlong_walls = 0;
        atomic_store(&d->quiet, 0);
        __atomic_store_n(&d->probe, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&d->called, 0, __ATOMIC_RELAXED);
        clgc__driver_unlock(d);
    }
}

int
clgc__driver_of(const void *object)
{
    int i;

    if (object == NULL) /* the registration will refuse it */
        return 0;
    i = clgc__platform_index(clgc__dispatch_of(object));
    return i >= 0 ? i : 0;
}

/* xorshift32, a generator per thread, seeded from the clock and the
 * thread's own address: cheap, and no two threads in step. */
static uint32_t
clgc__random(void)
{
    static __thread uint32_t x;

    if (CLGC_UNLIKELY(x == 0))
        x = ((uint32_t)clgc__clock_ns(CLOCK_MONOTONIC) ^
             (uint32_t)(uintptr_t)&x) |
            1u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

static int
clgc__learned(int platform, int c)
{
    return atomic_load_explicit(&clgc__drivers[platform].classes[c].learned,
                                memory_order_relaxed);
}

/* Whether this wait should sample class c again, which is learned prompt.
 * Which waits: one in CLGC__RESAMPLE_EVERY << resample_shift at random,
 * never in step with a program's own period. Every 16th wait is the same
 * kind of wait in a program that repeats four (clgc-bench wait's saxpy,
 * saxpy, ~1 ms, ~100 ms): the resampled waits would all be saxpy
 * launches. A fixed sequence of any step has periods of its own (a
 * golden-ratio one spaces its picks 8, 13 or 21 waits apart: never 2 or 3
 * modulo 4). */
static int
clgc__resample(int platform, int c)
{
    const struct clgc__learned *k = &clgc__drivers[platform].classes[c];

    return clgc__random() %
               (atomic_load_explicit(&k->suspect, memory_order_relaxed)
                    ? CLGC__RESAMPLE_SUSPECT
                    : CLGC__RESAMPLE_EVERY << atomic_load_explicit(
                          &k->resample_shift, memory_order_relaxed)) ==
           0;
}

/* Under d's lock: class c turns late, and its tries start again. */
static void
clgc__turn_late(struct clgc__driver *d, struct clgc__learned *k)
{
    atomic_store(&k->learned, CLGC_WAIT_DRIVER_LATE);
    k->recovered = 0;
    atomic_store(&d->recover_shift, 0);
}

/* Whether callbacks lateness ns late are late for a command that took
 * duration ns (driver.h): CLGC__LATE_NS late or more, or late enough to
 * make a wait that sleeps until them a quarter slower than one that
 * looks, and CLGC__LATE_MIN_NS late at least. NVIDIA's saxpy callbacks,
 * ~25 us late on a ~14 us command, are; PoCL's, which mostly come before
 * a look sees their command done, are not. */
static int
clgc__late(long duration, long lateness)
{
    return lateness >= CLGC__LATE_NS ||
           (lateness >= CLGC__LATE_MIN_NS && lateness * 4 >= duration);
}

/* Under d's lock: one sample, of the class of a command that took
 * duration ns. The first CLGC__LEARN_SAMPLES
 * decide by majority; after that CLGC__LATE_QUORUM late ones of the last
 * CLGC__LEARN_SAMPLES turn a prompt class late. */
static void
clgc__driver_sample(struct clgc__driver *d, long duration, long lateness)
{
    struct clgc__learned *k = &d->classes[clgc__class_of(duration)];
    unsigned prompt, late, recent = 0, n;

    unsigned i = k->nlateness++ % CLGC__LEARN_SAMPLES;
    int is_late = clgc__late(duration, lateness);

    k->lateness[i] = lateness;
    k->late_bits = (k->late_bits & ~(1u << i)) | (unsigned)is_late << i;
    if (is_late)
        late = atomic_fetch_add(&k->late, 1) + 1,
        prompt = atomic_load(&k->prompt);
    else
        prompt = atomic_fetch_add(&k->prompt, 1) + 1,
        late = atomic_load(&k->late);
    n = k->nlateness < CLGC__LEARN_SAMPLES ? k->nlateness : CLGC__LEARN_SAMPLES;
    for (i = 0; i < n; i++)
        recent += k->late_bits >> i & 1;
    switch (atomic_load(&k->learned)) {
    case CLGC_WAIT_DRIVER_LEARNING:
        if (prompt + late < CLGC__LEARN_SAMPLES)
            break;
        if (late > prompt)
            clgc__turn_late(d, k);
        else
            atomic_store(&k->learned, CLGC_WAIT_DRIVER_PROMPT);
        break;
    case CLGC_WAIT_DRIVER_PROMPT:
        if (recent >= CLGC__LATE_QUORUM)
            clgc__turn_late(d, k);
        /* Resampling follows a driver that changes; while it does not,
         * each sample costs its wait the looks for nothing (a ~1 ms
         * wait's CPU on PoCL, docs/wait.md). */
        else if (!is_late &&
                 atomic_load(&k->resample_shift) < CLGC__RESAMPLE_MAX_SHIFT)
            atomic_fetch_add(&k->resample_shift, 1);
        break;
    default:
        /* Late: only a try on callbacks alone turns it prompt
         * (clgc__driver_tried). */
        break;
    }
    atomic_store_explicit(&k->suspect, recent > 0, memory_order_relaxed);
    if (is_late)
        atomic_store(&k->resample_shift, 0);
}

void
clgc__driver_lateness(int platform, long duration, long lateness)
{
    struct clgc__driver *d = &clgc__drivers[platform];

    clgc__driver_lock(d);
    clgc__driver_sample(d, duration, lateness);
    clgc__driver_unlock(d);
}

static int
clgc__long_cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;

    return (x > y) - (x < y);
}

static void
clgc__driver_waited(int platform, long wall)
{
    struct clgc__driver *d = &clgc__drivers[platform];
    struct clgc__learned *k = &d->classes[clgc__class_of(wall)];

    clgc__driver_lock(d);
    k->waited[k->nwaited++ % CLGC__LEARN_SAMPLES] = wall;
    clgc__driver_unlock(d);
}

/* A wait saw its commands done wall ns after its start, CLGC__LONG_NS
 * or more: the long class's samples sleep three quarters of the shortest
 * of the last CLGC__LEARN_SAMPLES such waits before they look. Each look
 * costs the waiter a wakeup, which preempts a driver thread that runs the
 * command, where a sleeping wait costs one; from the wait's start, an
 * eighth of the time waited apart, a command of a second took dozens,
 * and from half the shortest about six (docs/wait.md). */
static void
clgc__driver_long_wall(int platform, long wall)
{
    struct clgc__driver *d = &clgc__drivers[platform];
    unsigned n;
    long shortest = wall;

    clgc__driver_lock(d);
    d->long_walls[d->nlong_walls++ % CLGC__LEARN_SAMPLES] = wall;
    n = d->nlong_walls < CLGC__LEARN_SAMPLES ? d->nlong_walls
                                             : CLGC__LEARN_SAMPLES;
    for (unsigned i = 0; i < n; i++)
        if (d->long_walls[i] < shortest)
            shortest = d->long_walls[i];
    atomic_store_explicit(&d->quiet, shortest - shortest / 4,
                          memory_order_relaxed);
    clgc__driver_unlock(d);
}

static void
clgc__driver_tried(int platform, long wall)
{
    struct clgc__driver *d = &clgc__drivers[platform];
    int c = clgc__class_of(wall);
    struct clgc__learned *k = &d->classes[c];
    long waited[CLGC__LEARN_SAMPLES], slack;
    unsigned n, shift;
    int prompt = -1; /* -1: nothing to hold it against */
    int learned;

    clgc__driver_lock(d);
    d->tried++;
    n = k->nwaited < CLGC__LEARN_SAMPLES ? k->nwaited : CLGC__LEARN_SAMPLES;
    if (n > 0) {
        memcpy(waited, k->waited, n * sizeof(waited[0]));
        qsort(waited, n, sizeof(waited[0]), clgc__long_cmp);
        /* As good as the late plan: a look of its backoff schedule comes
         * at most an eighth of the wait after the command's end. */
        slack = waited[n / 2] / 8;
        prompt = wall - waited[n / 2] <=
                 (slack > CLGC__LATE_MIN_NS ? slack : CLGC__LATE_MIN_NS);
    }
    learned = atomic_load(&k->learned);
    /* A class not learned yet (no wait samples it while the other one
     * is late): the try is its sample. */
    if (prompt >= 0 && learned == CLGC_WAIT_DRIVER_LEARNING)
        clgc__driver_sample(d, wall, prompt ? 0 : CLGC__LATE_NS);
    if (prompt == 1 && learned == CLGC_WAIT_DRIVER_LATE) {
        d->tried_prompt++;
        /* The tries come often again, to make the row. */
        atomic_store(&d->recover_shift, 0);
        if (++k->recovered >= CLGC__LEARN_SAMPLES) {
            atomic_store(&k->learned, CLGC_WAIT_DRIVER_PROMPT);
            atomic_store(&k->suspect, 0);
            k->nlateness = 0;
            k->late_bits = 0;
            k->recovered = 0;
        }
    } else if (prompt != 1 || learned != CLGC_WAIT_DRIVER_LEARNING) {
        /* Late, or a waste (a prompt class, or nothing to hold the try
         * against): the tries come half as often, and the row needs one
         * more (not all again: on a loaded machine a prompt driver's tries
         * miss the eighth now and then). */
        if (k->recovered > 0)
            k->recovered--;
        shift = atomic_load(&d->recover_shift);
        if ((CLGC__RECOVER_MIN << shift) < CLGC__RECOVER_MAX)
            atomic_store(&d->recover_shift, shift + 1);
    }
    clgc__driver_unlock(d);
}

void
clgc__driver_probe(int platform, uintptr_t key, long duration)
{
    struct clgc__driver *d = &clgc__drivers[platform];
    long now = clgc__clock_ns(CLOCK_MONOTONIC);

    clgc__driver_lock(d);
    if (d->probe != 0 && now - d->probe_ns >= CLGC__LATE_NS) {
        clgc__driver_sample(d, d->probe_duration, now - d->probe_ns);
        __atomic_store_n(&d->probe, 0, __ATOMIC_RELAXED);
    }
    if (d->probe == 0) {
        __atomic_store_n(&d->probe, key, __ATOMIC_SEQ_CST);
        d->probe_ns = now;
        d->probe_duration = duration;
        /* Its callback may have come between the look and this store, and
         * found no probe: then it was prompt, and the probe must not stay
         * to be counted late by the next look (stale probes made a prompt
         * PoCL late, some samples "late" by a second). The callback stores
         * its key before it looks for the probe, the probe is stored before
         * this looks for the key: one of the two sees the other. */
        if (__atomic_load_n(&d->called, __ATOMIC_SEQ_CST) == key) {
            clgc__driver_sample(d, d->probe_duration, 0);
            __atomic_store_n(&d->probe, 0, __ATOMIC_RELAXED);
        }
    }
    clgc__driver_unlock(d);
}

void
clgc__driver_called(int platform, uintptr_t key)
{
    struct clgc__driver *d = &clgc__drivers[platform];
    long now;

    /* Most callbacks are not a probe's: no lock for them. A probe stored
     * later finds the key (clgc__driver_probe). */
    __atomic_store_n(&d->called, key, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&d->probe, __ATOMIC_SEQ_CST) != key)
        return;
    now = clgc__clock_ns(CLOCK_MONOTONIC);
    clgc__driver_lock(d);
    if (d->probe == key) {
        clgc__driver_sample(d, d->probe_duration, now - d->probe_ns);
        __atomic_store_n(&d->probe, 0, __ATOMIC_RELAXED);
    }
    clgc__driver_unlock(d);
}

/* The platform as a whole: late if a class is, prompt if a class is
 * and none is late, else still learned. */
static int
clgc__learned_overall(int platform)
{
    int s = clgc__learned(platform, CLGC__SHORT),
        l = clgc__learned(platform, CLGC__LONG);

    if (s == CLGC_WAIT_DRIVER_LATE || l == CLGC_WAIT_DRIVER_LATE)
        return CLGC_WAIT_DRIVER_LATE;
    if (s == CLGC_WAIT_DRIVER_PROMPT || l == CLGC_WAIT_DRIVER_PROMPT)
        return CLGC_WAIT_DRIVER_PROMPT;
    return CLGC_WAIT_DRIVER_LEARNING;
}

/* Whether the platform's short waits poll, the occasional try of the
 * other aside; -1 where the learner does not decide it (not prompt, or
 * a strategy set by hand). */
static int
clgc__polls(struct clgc__driver *d, int platform)
{
    long without, with;

    if (atomic_load_explicit(&clgc__strategy, memory_order_relaxed) !=
            CLGC_WAIT_LEARN ||
        clgc__learned_overall(platform) != CLGC_WAIT_DRIVER_PROMPT)
        return -1;
    without = atomic_load_explicit(&d->short_wall[0], memory_order_relaxed);
    with = atomic_load_explicit(&d->short_wall[1], memory_order_relaxed);
    return with == 0 || (without != 0 && with < without - without / 16);
}

long
clgc__driver_poll_ns(int platform)
{
    struct clgc__driver *d = &clgc__drivers[platform];
    int polls;

    pthread_once(&clgc__strategy_once, clgc__strategy_init);
    if ((polls = clgc__polls(d, platform)) < 0 ||
        !atomic_load_explicit(&d->last_short, memory_order_relaxed))
        return -1;
    /* Both measured: now and then the other, so both stay so. */
    if (atomic_load_explicit(&d->short_wall[polls], memory_order_relaxed) !=
            0 &&
        atomic_load_explicit(&d->short_wall[!polls], memory_order_relaxed) !=
            0 &&
        clgc__random() % CLGC__POLL_TRY_EVERY == 0)
        polls = !polls;
    return polls ? CLGC__SHORT_POLL_NS : 0;
}

static void
clgc__driver_polled(int platform, long learned, int done, long wall,
                    int measured, int long_wait)
{
    struct clgc__driver *d = &clgc__drivers[platform];
    atomic_long *mean = &d->short_wall[learned > 0];
    /* A heuristic's mean: two waits at once may lose one's share. */
    long m = atomic_load_explicit(mean, memory_order_relaxed);

    atomic_store_explicit(&d->last_short, !long_wait, memory_order_relaxed);
    if (learned > 0)
        atomic_fetch_add_explicit(done ? &d->polls_done : &d->polls_missed, 1,
                                  memory_order_relaxed);
    if (measured && learned >= 0 && wall < CLGC__LONG_NS)
        atomic_store_explicit(mean, m == 0 ? wall : m + (wall - m) / 8,
                              memory_order_relaxed);
}

/* A late platform's own clWaitForEvents: CLGC_WAIT_OWN_USED if the
 * waits should use it, _LEARNING if a wait should sample it, _AVOIDED
 * otherwise (also when the platform is not learned late, or the strategy
 * is forced). */
static int
clgc__driver_own(int platform)
{
    if (atomic_load_explicit(&clgc__strategy, memory_order_relaxed) !=
            CLGC_WAIT_LEARN ||
        clgc__learned_overall(platform) != CLGC_WAIT_DRIVER_LATE)
        return CLGC_WAIT_OWN_AVOIDED;
    return atomic_load_explicit(&clgc__drivers[platform].own,
                                memory_order_relaxed);
}

/* A wait handed to the driver's clWaitForEvents took wall ns, and the
 * thread was runnable (on a CPU or waiting for one) for busy ns of them.
 * It slept if it was runnable under an eighth of it: PoCL's, which sleeps
 * on a condition variable, runs 5 to 25 us on any wait, NVIDIA's
 * busy-waits all of it. Counting the time spent waiting for a CPU keeps a
 * busy wait busy on a loaded machine, where it runs a fraction of the
 * time. Between the two, or shorter than CLGC__OWN_MIN_NS, the sample
 * says nothing. */
static void
clgc__driver_own_sample(int platform, long wall, long busy)
{
    struct clgc__driver *d = &clgc__drivers[platform];
    int own = CLGC_WAIT_OWN_LEARNING;

    clgc__driver_lock(d);
    if (atomic_load(&d->own) == CLGC_WAIT_OWN_LEARNING) {
        d->own_tries++;
        if (wall >= CLGC__OWN_MIN_NS && busy * 4 >= wall)
            d->own_busy++;
        else if (wall >= CLGC__OWN_MIN_NS && busy * 8 < wall)
            d->own_sleeps++;
        if (d->own_sleeps + d->own_busy >= CLGC__OWN_SAMPLES)
            own = d->own_sleeps > d->own_busy ? CLGC_WAIT_OWN_USED
                                              : CLGC_WAIT_OWN_AVOIDED;
        else if (d->own_tries >= CLGC__OWN_TRIES)
            own = CLGC_WAIT_OWN_AVOIDED;
        if (own != CLGC_WAIT_OWN_LEARNING)
            atomic_store(&d->own, own);
    }
    clgc__driver_unlock(d);
}

void
clgc__driver_info(int platform, clgc_wait_driver_info_t *info)
{
    struct clgc__driver *d = &clgc__drivers[platform];
    long l[CLGC__CLASSES * CLGC__LEARN_SAMPLES];
    unsigned n = 0;

    pthread_once(&clgc__strategy_once, clgc__strategy_init);
    info->prompt = info->late = 0;
    clgc__driver_lock(d);
    for (int c = 0; c < CLGC__CLASSES; c++) {
        struct clgc__learned *k = &d->classes[c];
        unsigned m = k->nlateness < CLGC__LEARN_SAMPLES ? k->nlateness
                                                        : CLGC__LEARN_SAMPLES;

        memcpy(l + n, k->lateness, m * sizeof(l[0]));
        n += m;
        info->prompt += atomic_load(&k->prompt);
        info->late += atomic_load(&k->late);
    }
    info->learned = (clgc_wait_driver_t)clgc__learned_overall(platform);
    info->learned_short =
        (clgc_wait_driver_t)clgc__learned(platform, CLGC__SHORT);
    info->learned_long =
        (clgc_wait_driver_t)clgc__learned(platform, CLGC__LONG);
    info->own = (clgc_wait_own_t)atomic_load(&d->own);
    info->own_sleeps = d->own_sleeps;
    info->own_busy = d->own_busy;
    info->tried = d->tried;
    info->tried_prompt = d->tried_prompt;
    info->poll_ns = clgc__polls(d, platform) > 0 ? CLGC__SHORT_POLL_NS : 0;
    info->short_wait_ns[0] = atomic_load(&d->short_wall[0]);
    info->short_wait_ns[1] = atomic_load(&d->short_wall[1]);
    info->polls_done = atomic_load(&d->polls_done);
    info->polls_missed = atomic_load(&d->polls_missed);
    clgc__driver_unlock(d);
    qsort(l, n, sizeof(l[0]), clgc__long_cmp);
    info->lateness_ns = n > 0 ? l[n / 2] : -1;
    /* What the waits do, the occasional sample aside. */
    info->strategy =
        atomic_load(&clgc__strategy) == CLGC_WAIT_LEARN
            ? (info->learned == CLGC_WAIT_DRIVER_PROMPT ? CLGC_WAIT_CALLBACK
                                                        : CLGC_WAIT_BACKOFF)
            : (clgc_wait_strategy_t)atomic_load(&clgc__strategy);
}

/* The platform's sampler, if no other wait holds it. */
static int
clgc__sampler_take(int platform)
{
    int no = 0;

    return atomic_compare_exchange_strong(&clgc__drivers[platform].sampling,
                                          &no, 1);
}

void
clgc__driver_sampled(int platform)
{
    atomic_store(&clgc__drivers[platform].sampling, 0);
}

int
clgc__driver_looks(int platform)
{
    pthread_once(&clgc__strategy_once, clgc__strategy_init);
    switch (atomic_load_explicit(&clgc__strategy, memory_order_relaxed)) {
    case CLGC_WAIT_BACKOFF:
        return 1;
    case CLGC_WAIT_CALLBACK:
        return 0;
    default:
        return clgc__learned_overall(platform) == CLGC_WAIT_DRIVER_LATE;
    }
}

/* Whether a wait asks at CLGC__LONG_NS while the long class is not
 * learned: one of the CLGC__LONG_ASKS after a long wait. */
static int
clgc__long_ask(int platform)
{
    atomic_int *left = &clgc__drivers[platform].long_asks;
    int n = atomic_load_explicit(left, memory_order_relaxed);

    while (n > 0 && !atomic_compare_exchange_weak(left, &n, n - 1))
        continue;
    return n > 0;
}

/* The plan for class c's part of a wait, under CLGC_WAIT_LEARN; without
 * may_sample, never CLGC__PLAN_SAMPLE. */
static struct clgc__plan
clgc__plan_for(int platform, int c, int may_sample)
{
    /* A platform late for one class is waited for as late in both: on
     * NVIDIA a saxpy's callback, "prompt" at 15 us, still made its wait
     * 2.5x the polled one (an H100, CUDA 13). A wait for the short class
     * asks again at CLGC__LONG_NS unless the long one is learned the
     * same, or is not learned and no recent wait lasted that long: the
     * ask is a timed sleep, which costs a short wait microseconds that a
     * program of short commands alone would pay on every wait for
     * nothing (clgc__driver_learn notes a long wait). */
    int late = clgc__learned_overall(platform) == CLGC_WAIT_DRIVER_LATE;
    int learned = late ? CLGC_WAIT_DRIVER_LATE : clgc__learned(platform, c);
    int other =
        late ? CLGC_WAIT_DRIVER_LATE : clgc__learned(platform, CLGC__LONG);
    /* A sample of the long class looks only once its commands may be
     * done (clgc__driver_long_wall); none samples it before a long wait
     * has shown how long they run. */
    long timed = atomic_load_explicit(&clgc__drivers[platform].quiet,
                                      memory_order_relaxed);
    long quiet = c == CLGC__LONG ? timed : 0;
    int may_look = may_sample && (c == CLGC__SHORT || quiet > 0);
    int ask;

    /* A program whose commands all run long never teaches the short
     * class, and each of its waits sampled its first 200 us (about 15
     * looks, each a wakeup that preempts a driver thread running the
     * command). After a long wait, while the short class is not learned,
     * a wait takes the long class's plan from its start once that class
     * is learned, or timed and this wait may sample it: its sample looks
     * once at CLGC__LONG_NS, which tells a short command (wait.c). A
     * short command's wait still teaches the short class when the last
     * wait was short. */
    if (c == CLGC__SHORT && learned == CLGC_WAIT_DRIVER_LEARNING &&
        (other != CLGC_WAIT_DRIVER_LEARNING || (may_sample && timed > 0)) &&
        !atomic_load_explicit(&clgc__drivers[platform].last_short,
                              memory_order_relaxed))
        return clgc__plan_for(platform, CLGC__LONG, may_sample);
    ask = c == CLGC__SHORT &&
          (learned == CLGC_WAIT_DRIVER_LEARNING ||
           (learned != other &&
            (other != CLGC_WAIT_DRIVER_LEARNING || clgc__long_ask(platform))));

    switch (learned) {
    case CLGC_WAIT_DRIVER_PROMPT:
        if (may_look && clgc__resample(platform, c) &&
            clgc__sampler_take(platform))
            return (struct clgc__plan){.kind = CLGC__PLAN_SAMPLE,
                                       .why = CLGC__BECAUSE_RESAMPLED,
                                       .ask_long = ask,
                                       .quiet = quiet};
        return (struct clgc__plan){.kind = CLGC__PLAN_CALLBACK,
                                   .why = CLGC__BECAUSE_PROMPT,
                                   .ask_long = ask};
    case CLGC_WAIT_DRIVER_LATE:
        if (may_sample &&
            atomic_load_explicit(&clgc__tries, memory_order_relaxed) &&
            clgc__random() % (CLGC__RECOVER_MIN << atomic_load_explicit(
                                  &clgc__drivers[platform].recover_shift,
                                  memory_order_relaxed)) ==
                0 &&
            clgc__sampler_take(platform))
            return (struct clgc__plan){.kind = CLGC__PLAN_CALLBACK,
                                       .why = CLGC__BECAUSE_TRYING};
        break;
    default:
        if (may_look && clgc__sampler_take(platform))
            return (struct clgc__plan){.kind = CLGC__PLAN_SAMPLE,
                                       .why = CLGC__BECAUSE_LEARNING,
                                       .ask_long = ask,
                                       .quiet = quiet};
        /* Long commands not known yet, and not sampled by this wait:
         * as the short ones, whatever those are learned. */
        if (c == CLGC__LONG)
            return clgc__plan_for(platform, CLGC__SHORT, 0);
        return (struct clgc__plan){.kind = CLGC__PLAN_CALLBACK,
                                   .why = CLGC__BECAUSE_CROWDED,
                                   .ask_long = ask};
    }
    switch (clgc__driver_own(platform)) {
    case CLGC_WAIT_OWN_USED:
        return (struct clgc__plan){.kind = CLGC__PLAN_OWN,
                                   .why = CLGC__BECAUSE_OWN_SLEEPS};
    case CLGC_WAIT_OWN_LEARNING:
        return (struct clgc__plan){.kind = CLGC__PLAN_BACKOFF_THEN_OWN,
                                   .why = CLGC__BECAUSE_OWN_LEARNING};
    default:
        return (struct clgc__plan){.kind = CLGC__PLAN_BACKOFF,
                                   .why = CLGC__BECAUSE_LATE,
                                   .ask_long = ask};
    }
}

struct clgc__plan
clgc__driver_plan(int platform, int may_sample)
{
    pthread_once(&clgc__strategy_once, clgc__strategy_init);
    switch (atomic_load_explicit(&clgc__strategy, memory_order_relaxed)) {
    case CLGC_WAIT_CALLBACK:
        return (struct clgc__plan){.kind = CLGC__PLAN_CALLBACK,
                                   .why = CLGC__BECAUSE_FORCED};
    case CLGC_WAIT_BACKOFF:
        return (struct clgc__plan){.kind = CLGC__PLAN_BACKOFF,
                                   .why = CLGC__BECAUSE_FORCED};
    default:
        return clgc__plan_for(platform, CLGC__SHORT, may_sample);
    }
}

struct clgc__plan
clgc__driver_plan_long(int platform, int may_sample)
{
    return clgc__plan_for(platform, CLGC__LONG, may_sample);
}

void
clgc__driver_learn(int platform, const struct clgc__outcome *o)
{
    /* A sample's look that saw its command done bounds the command's
     * time closer than its wall, which waited on for the callbacks; one
     * that saw it done at CLGC__LONG_NS, a short command whose callbacks
     * had not come. */
    long took = o->short_seen ? 0 : o->sampled ? o->sample_ns : o->wall;
    int long_wait = !o->short_seen && o->wall >= CLGC__LONG_NS;

    if (o->sampled)
        clgc__driver_lateness(platform, o->sample_ns, o->lateness);
    if (o->tried)
        clgc__driver_tried(platform, o->wall);
    if (o->sampler)
        clgc__driver_sampled(platform);
    if (o->own)
        clgc__driver_own_sample(platform, o->own_wall, o->own_busy);
    if (o->planned && !o->user && !o->plan.ask_long && long_wait &&
        clgc__learned(platform, CLGC__LONG) == CLGC_WAIT_DRIVER_LEARNING)
        atomic_store_explicit(&clgc__drivers[platform].long_asks,
                              CLGC__LONG_ASKS, memory_order_relaxed);
    if (o->planned && !o->user && took >= CLGC__LONG_NS)
        clgc__driver_long_wall(platform, took);
    if (o->planned && !o->user &&
        (o->plan.why == CLGC__BECAUSE_LATE ||
         o->plan.why == CLGC__BECAUSE_OWN_LEARNING ||
         o->plan.why == CLGC__BECAUSE_OWN_SLEEPS))
        clgc__driver_waited(platform, o->wall);
    clgc__driver_polled(platform, o->learned, o->polled_done, o->wall,
                        o->measured, long_wait);
}
