/* The cooperative wait (include/clgc/wait.h).
 *
 * The whole wait runs inside one safe region: flushing the events' queues
 * (PoCL's basic device runs commands inside clFlush), polling their status
 * for a short budget (10 us after a short wait on a prompt platform:
 * driver.h), then registering a completion callback on each and sleeping
 * on a futex until the last one fires; then the driver's clWaitForEvents
 * on the events complete, the synchronization point a status is not. No lock is
 * held while the waiter wakes, so it never waits for the callback thread (a
 * waiter that takes the callback's lock to wake is held up on every short
 * kernel).
 *
 * The record the callbacks share is a slot of a static pool, not the
 * waiter's stack frame: PoCL 3.1 never calls back for a user event that is
 * set to an error status (nor for what depends on it), so a callback may
 * come after its wait has returned, or never. The callbacks are therefore
 * not given the slot but a handle, the slot's index and its generation,
 * in the pointer's bits. A slot's state word packs its generation and the
 * callbacks still to come; a callback decrements it only while the
 * generation is its own, and the waiter moves the generation on when it
 * returns. So the slot is free the moment its wait returns, whatever
 * OpenCL does later, and a late callback finds a generation not its own
 * and touches nothing but the static pool. The waiter also wakes now and
 * then to look at the events itself (clgc__sleep), and at once when a
 * failure is set through clgc_clSetUserEventStatus, so a callback that
 * never comes cannot hold it. Only more than 512 waits at once fall back
 * to the driver's clWaitForEvents.
 *
 * On a driver whose callbacks come late (driver.c learns which), the
 * waiter does not sleep until the callback: it looks at the events on a
 * backoff schedule (clgc__sleep_backoff), in futex sleeps that the
 * callback, still registered, ends at once. Such a wait's handle carries
 * its platform and a bit that has its callback report to the learner.
 * Where the late driver's own clWaitForEvents sleeps (driver.c learns that
 * too, from waits that hand it their rest: clgc__own_wait), the wait is
 * that, with no looks to take CPU from the driver's threads. */

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clgc/wait.h"
#include "driver.h"
#include "handle.h"
#include "next.h"

/* No polling by default: on PoCL's CPU device the callback path alone
 * already waits less than clWaitForEvents, at no more CPU; polling cuts
 * small-kernel latency further but costs the waiter more CPU than the raw
 * wait (clgc-bench wait: docs/wait.md, docs/performance.md). */
#define CLGC__DEFAULT_POLL_NS 0L

static atomic_int clgc__wait_mode = CLGC_WAIT_COOPERATIVE;
static atomic_long clgc__poll_ns = CLGC__DEFAULT_POLL_NS;
static pthread_once_t clgc__wait_once = PTHREAD_ONCE_INIT;
static __thread clgc_wait_path_t clgc__last_path;

/* A wait's record, shared with its callbacks. */
struct clgc__wait_slot {
    uint64_t state; /* generation << 32 | callbacks to come (+1, the waiter) */
    unsigned seq;   /* futex word: moves whenever the waiter should look */
    int taken;      /* a wait owns the slot */
    /* When the last callback came: its generation's handle bits << 32 |
     * the low 32 bits of CLOCK_MONOTONIC ns (clgc__measure). */
    uint64_t fired;
};

/* More waits than can be in progress at once in any program. A wait's
 * callbacks get a handle (handle.h) of CLGC__HANDLE_SHIFT index bits;
 * where a pointer is narrower than 48 bits, the generation is compared in
 * the bits that fit. */
#define CLGC__WAIT_SLOTS 512
#define CLGC__HANDLE_SHIFT 16
static struct clgc__wait_slot clgc__slots[CLGC__WAIT_SLOTS];
static __thread unsigned clgc__slot_hint;

/* When a sleeping waiter first looks at its events itself, and how far
 * apart its looks grow. Each look is a wakeup that raw's wait does not
 * have: at 100 ms, every wait of 100 ms or more paid one. */
#define CLGC__RECHECK_NS 1000000000L
#define CLGC__RECHECK_MAX_NS 1600000000L

/* A polling wait looks without a pause for the first CLGC__SPIN_NS of
 * the wait, then in futex sleeps on the backoff schedule
 * (clgc__backoff_gap, driver.h). The looks catch a short command (a saxpy
 * on a GPU) without a sleep, whose wakeup can cost as much as the
 * command, for at most CLGC__SPIN_NS of CPU a wait. */
#define CLGC__SPIN_NS 20000L
#define CLGC__SLACK_NS 1000

/* How long a sampling wait polls: a longer one gives its sample up, hands
 * the sampler back, and sleeps until its callbacks as a prompt platform's
 * waits do. Callbacks as late as drivers make them (driver.c) come well
 * within it, and a wait that never ends polls no longer than this. Past
 * CLGC__BACKOFF_MAX_NS of looks a sample's keep to an eighth of the time
 * waited (clgc__sample_gap), so that commands of up to a second are
 * learned: with looks a millisecond apart and a sample given up at
 * 100 ms, a program whose commands all ran longer sampled every wait, and
 * spent 2 to 3 ms of CPU on each. A sample of the long class looks only
 * past its plan's quiet (three quarters of the class's shortest recent
 * wait): two or three looks on a command as long as those before. */
#define CLGC__SAMPLE_MAX_NS 1000000000L

/* While a late platform's own clWaitForEvents is learned, how long a wait
 * polls before it hands the rest to it: shorter waits (saxpy) never
 * sample it, so they never spin in NVIDIA's. */
#define CLGC__OWN_AFTER_NS 100000L

struct clgc__wait_args {
    cl_uint n;
    const cl_event *events;
    cl_int ret;
    long start; /* when the wait began, ns */
};

/* fork(2) leaves only the forking thread in the child, and it is not
 * waiting: the slots of the parent's other waiters would stay taken for
 * good. Free them in the child, moving their generation on. */
static void
clgc__wait_forked(void)
{
    for (unsigned i = 0; i < CLGC__WAIT_SLOTS; i++) {
        struct clgc__wait_slot *w = &clgc__slots[i];

        if (w->taken) {
            w->state = (uint64_t)((uint32_t)(w->state >> 32) + 1) << 32;
            w->taken = 0;
        }
    }
}

static void
clgc__wait_init(void)
{
    const char *mode = getenv("CLGC_WAIT");
    const char *poll = getenv("CLGC_WAIT_POLL_NS");
    char *end;
    long ns;

    if (mode != NULL && strcmp(mode, "blocking") == 0)
        atomic_store(&clgc__wait_mode, CLGC_WAIT_BLOCKING);
    /* Out of range (strtol saturates at LONG_MAX) or malformed: ignored,
     * as clgc_wait_set_poll_ns would refuse it. strtol also skips leading
     * space and takes a sign, which a decimal integer has neither of: the
     * first character must be a digit. */
    if (poll != NULL) {
        ns = strtol(poll, &end, 10);
        if (*poll >= '0' && *poll <= '9' && *end == '\0' &&
            ns <= CLGC_WAIT_POLL_MAX_NS)
            atomic_store(&clgc__poll_ns, ns);
    }
    (void)pthread_atfork(NULL, NULL, clgc__wait_forked);
}

int
clgc_wait_set_mode(clgc_wait_mode_t mode)
{
    if (mode != CLGC_WAIT_COOPERATIVE && mode != CLGC_WAIT_BLOCKING)
        return CLGC_EINVAL;
    pthread_once(&clgc__wait_once, clgc__wait_init);
    atomic_store(&clgc__wait_mode, mode);
    return CLGC_OK;
}

int
clgc_wait_set_poll_ns(long ns)
{
    if (ns < 0 || ns > CLGC_WAIT_POLL_MAX_NS)
        return CLGC_EINVAL;
    pthread_once(&clgc__wait_once, clgc__wait_init);
    atomic_store(&clgc__poll_ns, ns);
    return CLGC_OK;
}

long
clgc_wait_get_poll_ns(void)
{
    pthread_once(&clgc__wait_once, clgc__wait_init);
    return atomic_load(&clgc__poll_ns);
}

clgc_wait_path_t
clgc_wait_last_path(void)
{
    return clgc__last_path;
}

int
clgc_wait_set_strategy(clgc_wait_strategy_t strategy)
{
    if (strategy != CLGC_WAIT_LEARN && strategy != CLGC_WAIT_CALLBACK &&
        strategy != CLGC_WAIT_BACKOFF)
        return CLGC_EINVAL;
    clgc__strategy_set(strategy);
    return CLGC_OK;
}

int
clgc_wait_driver_info(cl_platform_id platform, clgc_wait_driver_info_t *info)
{
    int i;

    if (platform == NULL || info == NULL)
        return CLGC_EINVAL;
    i = clgc__platform_index(clgc__dispatch_of(platform));
    if (i < 0)
        return CLGC_EINVAL;
    clgc__driver_info(i, info);
    return CLGC_OK;
}

/* One callback of generation gen has come: 1 if it was the last. Nothing
 * if the slot has moved on to another generation (the wait it was for has
 * returned) or, defensively, has nothing pending. */
static int
clgc__slot_count_down(struct clgc__wait_slot *w, uint32_t gen)
{
    uint64_t s = __atomic_load_n(&w->state, __ATOMIC_ACQUIRE);

    do {
        if (clgc__handle_gen_bits((uint32_t)(s >> 32), CLGC__HANDLE_SHIFT) !=
                gen ||
            (uint32_t)s == 0)
            return 0;
    } while (!__atomic_compare_exchange_n(&w->state, &s, s - 1, 1,
                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    return (uint32_t)s == 1;
}

/* Make the slot's waiter look: its futex word moves, so a wake that comes
 * before it sleeps is not lost. A spurious wake is harmless. */
static void
clgc__slot_wake(struct clgc__wait_slot *w)
{
    __atomic_add_fetch(&w->seq, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &w->seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* PoCL runs this on its own thread, or inline in clSetEventCallback when
 * the event is already complete. It is told CL_COMPLETE even when the
 * command failed: the waiter reads the real status afterwards. */
static void CL_CALLBACK
clgc__wait_fired(cl_event event, cl_int status, void *handle)
{
    uintptr_t h = (uintptr_t)handle;
    struct clgc__wait_slot *w =
        &clgc__slots[clgc__handle_index(h, CLGC__HANDLE_SHIFT)];
    uint32_t gen = clgc__handle_gen(h, CLGC__HANDLE_SHIFT);

    (void)event;
    (void)status;
    if (clgc__slot_count_down(w, gen)) {
        __atomic_store_n(&w->fired,
                         (uint64_t)gen << 32 |
                             (uint32_t)clgc__clock_ns(CLOCK_MONOTONIC),
                         __ATOMIC_RELEASE);
        clgc__slot_wake(w);
    }
}

/* A free slot, or NULL when every slot is taken. */
static struct clgc__wait_slot *
clgc__slot_take(void)
{
    for (unsigned i = 0; i < CLGC__WAIT_SLOTS; i++) {
        unsigned k = (clgc__slot_hint + i) % CLGC__WAIT_SLOTS;
        struct clgc__wait_slot *w = &clgc__slots[k];
        int no = 0;

        if (__atomic_compare_exchange_n(&w->taken, &no, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
            clgc__slot_hint = k;
            return w;
        }
    }
    return NULL;
}

/* The wait is over: the next generation, which no callback has a handle
 * for, and the slot is free. */
static void
clgc__slot_give_back(struct clgc__wait_slot *w, uint32_t gen)
{
    __atomic_store_n(&w->state, (uint64_t)(uint32_t)(gen + 1) << 32,
                     __ATOMIC_RELEASE);
    __atomic_store_n(&w->taken, 0, __ATOMIC_RELEASE);
}

/* Wake every sleeping wait to look at its events: a failure was set
 * through clgc, and PoCL will not call back for it. Rare; a look at a
 * slot that has no waiter, or whose events are not done, is harmless. */
void
clgc__wait_kick(void)
{
    for (unsigned i = 0; i < CLGC__WAIT_SLOTS; i++)
        if (__atomic_load_n(&clgc__slots[i].taken, __ATOMIC_ACQUIRE))
            clgc__slot_wake(&clgc__slots[i]);
}

/* Poll for the budget; a->start is set to when it began, and *first to
 * whether the first look saw the events done. */
static int
clgc__poll(struct clgc__wait_args *a, long budget, int *first)
{
    cl_uint n = a->n;
    const cl_event *events = a->events;
    /* budget <= CLGC_WAIT_POLL_MAX_NS: the sum cannot overflow. */
    long deadline = (a->start = clgc__clock_ns(CLOCK_MONOTONIC)) + budget;

    if ((*first = clgc__events_done(n, events)))
        return 1;
    while (clgc__clock_ns(CLOCK_MONOTONIC) < deadline)
        if (clgc__events_done(n, events))
            return 1;
    return 0;
}

static int
clgc__slot_fired(const struct clgc__wait_slot *w)
{
    return (uint32_t)__atomic_load_n(&w->state, __ATOMIC_ACQUIRE) == 0;
}

/* Sleep until the last callback has fired, or the events are all done
 * without it. The waiter looks at the events itself whenever it is woken
 * without the last callback (a failure set through clgc wakes it), and
 * after CLGC__RECHECK_NS, then at doubling intervals up to
 * CLGC__RECHECK_MAX_NS: a wait wakes a handful of times at most (a wakeup
 * costs about what the raw wait spends in all), and a failure PoCL does
 * not call back for is seen within CLGC__RECHECK_MAX_NS. */
static void
clgc__sleep(struct clgc__wait_slot *w, unsigned seq, cl_uint n,
            const cl_event *events)
{
    long interval = CLGC__RECHECK_NS;

    for (;;) {
        struct timespec recheck = {interval / 1000000000L,
                                   interval % 1000000000L};

        if (clgc__slot_fired(w))
            return;
        syscall(SYS_futex, &w->seq, FUTEX_WAIT_PRIVATE, seq, &recheck, NULL, 0);
        if (!clgc__slot_fired(w) && clgc__events_done(n, events))
            return;
        if (interval < CLGC__RECHECK_MAX_NS)
            interval *= 2;
        seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
    }
}

/* Sleep until the last callback has fired, or until the monotonic time
 * deadline; 1 if it fired, or if the events are done by then. *seq is the
 * futex word as the waiter last saw it. */
static int
clgc__sleep_until(struct clgc__wait_slot *w, unsigned *seq, cl_uint n,
                  const cl_event *events, long deadline)
{
    for (;;) {
        long left;
        struct timespec ts;

        if (clgc__slot_fired(w))
            return 1;
        left = deadline - clgc__clock_ns(CLOCK_MONOTONIC);
        if (left <= 0)
            return clgc__events_done(n, events);
        ts = (struct timespec){left / 1000000000L, left % 1000000000L};
        syscall(SYS_futex, &w->seq, FUTEX_WAIT_PRIVATE, *seq, &ts, NULL, 0);
        *seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
    }
}

/* Register the wait's callback on every event, then count down the
 * waiter's own share. Returns 1 if that was the last: every callback has
 * fired already. *refused: some event refused the callback (counted down
 * for it, as it will never come). */
static int
clgc__wait_register(struct clgc__wait_slot *w, uint32_t gen, void *handle,
                    cl_uint n, const cl_event *events, int *refused)
{
    for (cl_uint i = 0; i < n; i++) {
        if (CLGC__CL(clSetEventCallback)(events[i], CL_COMPLETE,
                                         clgc__wait_fired,
                                         handle) != CL_SUCCESS) {
            clgc__slot_count_down(
                w, clgc__handle_gen_bits(gen, CLGC__HANDLE_SHIFT));
            *refused = 1;
        }
    }
    return clgc__slot_count_down(
        w, clgc__handle_gen_bits(gen, CLGC__HANDLE_SHIFT));
}

/* A polling wait's callbacks: registered before it polls (the waits that
 * teach the learner), or only once it has waited CLGC__BACKOFF_MAX_NS, as
 * a backstop that can cut its longest sleeps short (on a driver learned
 * late: a short wait then costs no registration, nor a late callback). */
struct clgc__backstop {
    uint32_t gen;
    void *handle;
    int registered;
};

/* How a wait on the backoff schedule ended. */
enum clgc__backoff_end {
    CLGC__BY_CALLBACK, /* the last callback fired */
    CLGC__BY_LOOK,     /* the waiter's own look found the events done */
    CLGC__HANDED_OVER  /* until passed: the driver's wait's, or the sleep's */
};

/* The gap between a sample's looks: the backoff schedule's, then an
 * eighth of the time waited however long. A look still sees a command end
 * within an eighth of its time, so callbacks later than that are measured
 * late (NVIDIA's, 15 to 20 ms late, for commands of up to about 120 ms);
 * for longer commands such lateness is a small share of the wait. */
static long
clgc__sample_gap(long waited)
{
    long gap = clgc__backoff_gap(waited);

    return waited / 8 > gap ? waited / 8 : gap;
}

/* The backoff schedule (CLGC__SPIN_NS and on): sleep until the last
 * callback has fired or the waiter's own look finds the events done,
 * whichever comes first, or, with until > 0, until the wait has lasted
 * that long; a sample's looks on clgc__sample_gap. */
static enum clgc__backoff_end
clgc__sleep_backoff(struct clgc__wait_slot *w, unsigned seq,
                    struct clgc__wait_args *a, struct clgc__backstop *b,
                    long until, int sample)
{
    cl_uint n = a->n;
    const cl_event *events = a->events;
    long now, interval;
    int slack, refused = 0;
    enum clgc__backoff_end end = CLGC__BY_CALLBACK;

    do {
        if (clgc__slot_fired(w))
            return CLGC__BY_CALLBACK;
        if (clgc__events_done(n, events))
            return CLGC__BY_LOOK;
        now = clgc__clock_ns(CLOCK_MONOTONIC);
    } while (now - a->start < CLGC__SPIN_NS);
    /* The kernel's timer slack (50 us by default) would add that much to
     * every short sleep: the thread's is lowered while it polls. */
    slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (slack > CLGC__SLACK_NS)
        prctl(PR_SET_TIMERSLACK, CLGC__SLACK_NS, 0, 0, 0);
    for (;;) {
        struct timespec ts;

        if (until > 0 && now - a->start >= until) {
            end = CLGC__HANDED_OVER;
            break;
        }
        interval = sample ? clgc__sample_gap(now - a->start)
                          : clgc__backoff_gap(now - a->start);
        if (interval >= CLGC__BACKOFF_MAX_NS && !b->registered) {
            b->registered = 1;
            if (clgc__wait_register(w, b->gen, b->handle, n, events, &refused))
                break;
        }
        ts = (struct timespec){interval / 1000000000L, interval % 1000000000L};
        if (clgc__slot_fired(w))
            break;
        syscall(SYS_futex, &w->seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
        if (clgc__slot_fired(w))
            break;
        if (clgc__events_done(n, events)) {
            end = CLGC__BY_LOOK;
            break;
        }
        now = clgc__clock_ns(CLOCK_MONOTONIC);
        seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
    }
    if (slack > CLGC__SLACK_NS)
        prctl(PR_SET_TIMERSLACK, slack, 0, 0, 0);
    return end;
}

/* A sampling wait whose own look saw its commands complete before their
 * callbacks: how late are they? It sleeps up to CLGC__LATE_NS more for
 * them, making no OpenCL call meanwhile, and tells the learner when the
 * last one came (as it stamped the slot; else when the waiter saw it),
 * not when the waiter woke, which a look's wakeup costs too. Not after
 * it returns: NVIDIA makes its callbacks when the program next calls it
 * (the next launch, microseconds later in a loop) or on its own 17 to
 * 20 ms later, so a callback awaited after the wait measured the program,
 * not the driver (every sample would come out prompt, and a late
 * driver's millisecond waits would stay many times raw's: figures in
 * docs/performance.md). A failed command is not measured:
 * PoCL never calls back for a failed user event, which is not lateness. */
static void
clgc__measure(struct clgc__wait_slot *w, uint32_t gen,
              const struct clgc__wait_args *a, struct clgc__outcome *o)
{
    long seen = clgc__clock_ns(CLOCK_MONOTONIC), now = seen;
    uint64_t fired;
    int32_t late;

    if (clgc__events_outcome(a->n, a->events) != CL_SUCCESS)
        return;
    while (!clgc__slot_fired(w) && now - seen < CLGC__LATE_NS) {
        unsigned seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
        struct timespec ts = {0, CLGC__LATE_NS - (now - seen)};

        if (clgc__slot_fired(w))
            break;
        syscall(SYS_futex, &w->seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
        now = clgc__clock_ns(CLOCK_MONOTONIC);
    }
    o->sampled = 1;
    o->sample_ns = seen - a->start;
    if (!clgc__slot_fired(w)) {
        o->lateness = CLGC__LATE_NS;
        return;
    }
    fired = __atomic_load_n(&w->fired, __ATOMIC_ACQUIRE);
    late = (int32_t)((uint32_t)fired - (uint32_t)seen);
    if ((uint32_t)(fired >> 32) !=
        clgc__handle_gen_bits(gen, CLGC__HANDLE_SHIFT))
        late = (int32_t)(now - seen);
    o->lateness = late > 0 ? late : 0;
}

/* A wait's sleep, as its plan's kinds take it in turn
 * (clgc__sleep_until_fired): its slot, the callbacks registered on it,
 * whether it is past CLGC__LONG_NS (asked: the long commands' plan), and
 * what came of it. */
struct clgc__sleep {
    struct clgc__wait_args *a;
    struct clgc__wait_slot *w;
    struct clgc__backstop b;
    unsigned seq;
    int refused, asked;
    long quiet; /* the plan's (a sample's): no look before it */
    clgc_wait_path_t path;
    struct clgc__outcome *o;
};

/* How a kind's part of the sleep ended. */
enum clgc__step {
    CLGC__STEP_DONE,     /* the events are done, or the sleep cannot go on */
    CLGC__STEP_LONG,     /* not done by CLGC__LONG_NS: the long plan next */
    CLGC__STEP_GIVEN_UP, /* a sample given up: the long plan, unsampled */
    CLGC__STEP_OWN       /* the driver's own wait next */
};

/* Register a callback on every event, once: whether the last has fired
 * already (the waiter's share was the last). */
static int
clgc__sleep_register(struct clgc__sleep *s)
{
    if (s->b.registered)
        return 0;
    s->b.registered = 1;
    return clgc__wait_register(s->w, s->b.gen, s->b.handle, s->a->n,
                               s->a->events, &s->refused);
}

/* CLGC__PLAN_CALLBACK: sleep until the last callback, or until
 * CLGC__LONG_NS for a wait that asks then. */
static enum clgc__step
clgc__sleep_on_callbacks(struct clgc__sleep *s)
{
    struct clgc__wait_args *a = s->a;

    s->path = CLGC_WAIT_PATH_CALLBACK;
    if (clgc__sleep_register(s) || s->refused)
        return CLGC__STEP_DONE;
    if (s->asked) {
        clgc__sleep(s->w, s->seq, a->n, a->events);
        return CLGC__STEP_DONE;
    }
    return clgc__sleep_until(s->w, &s->seq, a->n, a->events,
                             a->start + CLGC__LONG_NS)
               ? CLGC__STEP_DONE
               : CLGC__STEP_LONG;
}

/* CLGC__PLAN_SAMPLE, _BACKOFF and _BACKOFF_THEN_OWN: look on the backoff
 * schedule, the callbacks registered first by a sample (which measures
 * their lateness against its own look, for CLGC__SAMPLE_MAX_NS at most,
 * from the end of its plan's quiet), else as a backstop; until
 * CLGC__LONG_NS for a wait that asks then, and CLGC__OWN_AFTER_NS before
 * the driver's own wait. */
static enum clgc__step
clgc__sleep_on_looks(struct clgc__sleep *s, enum clgc__plan_kind kind)
{
    struct clgc__wait_args *a = s->a;
    struct clgc__outcome *o = s->o;
    long until = kind == CLGC__PLAN_BACKOFF_THEN_OWN ? CLGC__OWN_AFTER_NS
                 : !s->asked                         ? CLGC__LONG_NS
                 : kind == CLGC__PLAN_SAMPLE         ? CLGC__SAMPLE_MAX_NS
                                                     : 0;

    s->path = CLGC_WAIT_PATH_CALLBACK;
    if (kind == CLGC__PLAN_SAMPLE && clgc__sleep_register(s))
        return CLGC__STEP_DONE;
    /* A long sample's quiet: callbacks that end it teach nothing, no
     * look having seen the commands run. One taken from the wait's start
     * (the last wait was long) looks once at CLGC__LONG_NS: commands done
     * by then are short ones, of no class this sample could tell (its
     * first look after the quiet would have counted them long). */
    if (kind == CLGC__PLAN_SAMPLE && s->quiet > CLGC__LONG_NS &&
        until > CLGC__LONG_NS &&
        clgc__clock_ns(CLOCK_MONOTONIC) - a->start < CLGC__LONG_NS &&
        clgc__sleep_until(s->w, &s->seq, a->n, a->events,
                          a->start + CLGC__LONG_NS)) {
        if (!clgc__slot_fired(s->w)) {
            s->path = CLGC_WAIT_PATH_BACKOFF;
            o->short_seen = 1;
        }
        return CLGC__STEP_DONE;
    }
    if (kind == CLGC__PLAN_SAMPLE && s->quiet > 0 &&
        clgc__sleep_until(s->w, &s->seq, a->n, a->events,
                          a->start + (s->quiet < until ? s->quiet : until))) {
        if (!clgc__slot_fired(s->w) && !s->refused) {
            s->path = CLGC_WAIT_PATH_BACKOFF;
            clgc__measure(s->w, s->b.gen, a, o);
        }
        return CLGC__STEP_DONE;
    }
    switch (clgc__sleep_backoff(s->w, s->seq, a, &s->b, until,
                                kind == CLGC__PLAN_SAMPLE)) {
    case CLGC__BY_LOOK:
        s->path = CLGC_WAIT_PATH_BACKOFF;
        if (kind == CLGC__PLAN_SAMPLE && !s->refused)
            clgc__measure(s->w, s->b.gen, a, o);
        return CLGC__STEP_DONE;
    case CLGC__BY_CALLBACK:
        if (kind == CLGC__PLAN_SAMPLE) {
            o->sampled = 1;
            o->sample_ns = clgc__clock_ns(CLOCK_MONOTONIC) - a->start;
            o->lateness = 0;
        }
        return CLGC__STEP_DONE;
    default:
        break;
    }
    if (kind == CLGC__PLAN_BACKOFF_THEN_OWN)
        return CLGC__STEP_OWN;
    return s->asked ? CLGC__STEP_GIVEN_UP : CLGC__STEP_LONG;
}

/* Sleep until the events are done, as the plan says (driver.h), the short
 * commands' plan until CLGC__LONG_NS (or the whole wait, without
 * ask_long), then the long ones': on callbacks (clgc__sleep_on_callbacks),
 * on looks (clgc__sleep_on_looks), or in the driver's own wait. A wait
 * that samples, or tries a late platform's callbacks alone
 * (CLGC__BECAUSE_TRYING), holds the platform's sampler: it hands it back
 * with its outcome, or at once when a sample is given up and the wait
 * goes on. Returns the path; CLGC_WAIT_PATH_OWN to hand over to the
 * driver's wait; or CLGC_WAIT_PATH_NONE if there was no slot, or if some
 * event refused the callback the sleep needed: the caller then falls back
 * to the driver's wait. */
static clgc_wait_path_t
clgc__sleep_until_fired(struct clgc__wait_args *a, int platform,
                        struct clgc__outcome *o)
{
    struct clgc__sleep s = {.a = a,
                            .w = clgc__slot_take(),
                            .asked = !o->plan.ask_long,
                            .quiet = o->plan.quiet,
                            .path = CLGC_WAIT_PATH_CALLBACK,
                            .o = o};
    struct clgc__plan plan;
    enum clgc__plan_kind kind = o->plan.kind;
    enum clgc__step step;

    o->sampler =
        kind == CLGC__PLAN_SAMPLE || o->plan.why == CLGC__BECAUSE_TRYING;
    if (s.w == NULL)
        return CLGC_WAIT_PATH_NONE;
    /* The futex word before anything can move it: a kick from here on
     * makes the first sleep return at once. */
    s.seq = __atomic_load_n(&s.w->seq, __ATOMIC_ACQUIRE);
    s.b.gen = (uint32_t)(__atomic_load_n(&s.w->state, __ATOMIC_ACQUIRE) >> 32);
    s.b.handle = (void *)clgc__handle_make((uint32_t)(s.w - clgc__slots),
                                           s.b.gen, CLGC__HANDLE_SHIFT);
    __atomic_store_n(&s.w->state,
                     ((uint64_t)s.b.gen << 32) | ((uint64_t)a->n + 1),
                     __ATOMIC_RELEASE);
    for (;;) {
        step = kind == CLGC__PLAN_OWN        ? CLGC__STEP_OWN
               : kind == CLGC__PLAN_CALLBACK ? clgc__sleep_on_callbacks(&s)
                                             : clgc__sleep_on_looks(&s, kind);
        if (step == CLGC__STEP_DONE)
            break;
        if (step == CLGC__STEP_OWN) {
            s.path = CLGC_WAIT_PATH_OWN;
            break;
        }
        if (o->sampler && kind == CLGC__PLAN_SAMPLE) {
            clgc__driver_sampled(platform);
            o->sampler = 0;
        }
        /* Not over by CLGC__LONG_NS: a long command, whose class may be
         * learned otherwise (late, or not yet); or the rest of a wait
         * whose sample was given up, unsampled. */
        s.asked = 1;
        plan = clgc__driver_plan_long(platform,
                                      step == CLGC__STEP_LONG && !o->user);
        kind = plan.kind;
        s.quiet = plan.quiet;
        o->sampler |= kind == CLGC__PLAN_SAMPLE;
    }
    /* A try's wall time counts if all its callbacks came. */
    o->tried = o->plan.why == CLGC__BECAUSE_TRYING && !s.refused &&
               clgc__events_outcome(a->n, a->events) == CL_SUCCESS;
    clgc__slot_give_back(s.w, s.b.gen);
    return kind == CLGC__PLAN_CALLBACK && s.refused ? CLGC_WAIT_PATH_NONE
                                                    : s.path;
}

/* How long the calling thread has waited in a run queue for a CPU, in
 * ns (Linux's schedstat, its second field); -1 where the kernel does not
 * say. The kernel adds a wait when the thread gets the CPU, so a running
 * thread reads its own up to date. Not the first field, the time on a
 * CPU: for the running thread that one is brought up to date only at a
 * tick or a switch, so a thread that busy-waited a millisecond without
 * either read next to nothing (NVIDIA's clWaitForEvents, on an idle
 * 16-core machine, was learned to sleep). The thread's CPU clock is
 * exact. No allocation: the waits that sample allocate nothing. */
static long
clgc__queued_ns(void)
{
    char buf[128], *end;
    ssize_t n;
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    (void)strtoull(buf, &end, 10);
    return (long)strtoull(end, NULL, 10);
}

/* A wait handed to the driver's own clWaitForEvents, sampled for how it
 * waits (clgc__driver_own_sample) when asked: its wall time, and how long
 * the thread was runnable in it: on a CPU (its CPU clock) or waiting in a
 * run queue for one. A thread that busy-waits is runnable all along
 * however loaded the machine, while its CPU time is whatever share of a
 * CPU it got. */
static void
clgc__own_wait(struct clgc__wait_args *a, struct clgc__outcome *o)
{
    long t0 = 0, c0 = 0, q0 = -1, q1;

    if (o != NULL) {
        t0 = clgc__clock_ns(CLOCK_MONOTONIC);
        c0 = clgc__clock_ns(CLOCK_THREAD_CPUTIME_ID);
        q0 = clgc__queued_ns();
    }
    CLGC__CL(clWaitForEvents)(a->n, a->events);
    if (o != NULL) {
        o->own = 1;
        o->own_busy = clgc__clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
        q1 = clgc__queued_ns();
        if (q0 >= 0 && q1 >= q0)
            o->own_busy += q1 - q0;
        o->own_wall = clgc__clock_ns(CLOCK_MONOTONIC) - t0;
    }
}

static void *
clgc__wait_body(void *p)
{
    struct clgc__wait_args *a = p;
    clgc_wait_path_t path = CLGC_WAIT_PATH_POLL;
    struct clgc__outcome o;
    long budget = atomic_load(&clgc__poll_ns);
    int platform, first;

    memset(&o, 0, sizeof(o));
    a->ret = clgc__events_flush(a->n, a->events, &o.user);
    if (a->ret != CL_SUCCESS)
        return NULL;
    /* One platform: the flush refused events of two contexts. */
    platform = clgc__driver_of(a->events[0]);
    /* The budget set, or what is learned to win for short commands. */
    o.learned = clgc__driver_poll_ns(platform);
    o.polled_done =
        clgc__poll(a, o.learned > budget ? o.learned : budget, &first);
    o.measured = budget == 0 && !first && !o.user;
    if (!o.polled_done) {
        o.plan = clgc__driver_plan(platform, !o.user);
        o.planned = 1;
        if (o.plan.kind == CLGC__PLAN_OWN) {
            clgc__own_wait(a, NULL);
            path = CLGC_WAIT_PATH_OWN;
        } else {
            path = clgc__sleep_until_fired(a, platform, &o);
            if (path == CLGC_WAIT_PATH_OWN)
                clgc__own_wait(a, &o);
        }
        if (path == CLGC_WAIT_PATH_NONE) {
            CLGC__CL(clWaitForEvents)(a->n, a->events);
            path = CLGC_WAIT_PATH_BLOCKING;
        }
    }
    o.wall = clgc__clock_ns(CLOCK_MONOTONIC) - a->start;
    clgc__driver_learn(platform, &o);
    clgc__last_path = path;
    a->ret = clgc__events_outcome(a->n, a->events);
    /* A status read as CL_COMPLETE is no synchronization point (OpenCL
     * 3.0, again since OpenCL-Docs #1558), and PoCL may still be ending
     * the command (pocl #2294); the driver's clWaitForEvents is one, and
     * on events complete it returns at once (docs/wait.md). */
    if (a->ret == CL_SUCCESS && path != CLGC_WAIT_PATH_OWN &&
        path != CLGC_WAIT_PATH_BLOCKING)
        (void)CLGC__CL(clWaitForEvents)(a->n, a->events);
    return NULL;
}

/* CLGC_WAIT_BLOCKING: the driver's own wait, after the flush, which
 * also refuses events of two contexts (NVIDIA's clWaitForEvents takes
 * them and returns CL_SUCCESS). */
static void *
clgc__wait_blocking(void *p)
{
    struct clgc__wait_args *a = p;

    a->ret = clgc__events_flush(a->n, a->events, NULL);
    if (a->ret == CL_SUCCESS)
        a->ret = CLGC__CL(clWaitForEvents)(a->n, a->events);
    return NULL;
}

cl_int
clgc_wait_for_events(cl_uint num_events, const cl_event *event_list)
{
    struct clgc__wait_args a = {num_events, event_list, CL_SUCCESS, 0};

    if (num_events == 0 || event_list == NULL)
        return CL_INVALID_VALUE;
    for (cl_uint i = 0; i < num_events; i++)
        if (event_list[i] == NULL || !clgc__object_ok(event_list[i]))
            return CL_INVALID_EVENT;
    pthread_once(&clgc__wait_once, clgc__wait_init);
    /* In a forked child the driver's threads are gone: only its own
     * wait answers as it would without clgc (fork.c). */
    if (atomic_load(&clgc__wait_mode) == CLGC_WAIT_BLOCKING ||
        clgc__in_forked_child()) {
        clgc__last_path = CLGC_WAIT_PATH_BLOCKING;
        clgc_call_safe(clgc__wait_blocking, &a);
    } else {
        clgc_call_safe(clgc__wait_body, &a);
    }
    clgc__hand_errors();
    return a.ret;
}
