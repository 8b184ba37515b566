/* The watcher (internal.h, struct clgc__watch): event callbacks that are
 * sure to come, for the notifications (notify.c) and the callbacks of
 * clgc_clSetEventCallback (callback.c).
 *
 * PoCL 3.1 never calls back for a user event set to an error status, nor
 * for the commands that depend on it. So each watch is registered with
 * OpenCL and also listed here, and delivered once by whichever comes
 * first: OpenCL's callback, or clgc's watcher thread, which looks at the
 * status of the listed events and delivers the failed ones itself.
 *
 * The list is a table of slots. OpenCL's callback is given a slot's index
 * and generation in the bits of its user_data, never the record, and is
 * looked up under the lock: the first delivery frees the slot (moving its
 * generation on), so a record is reclaimed once delivered, and a callback
 * that comes later, or never, finds nothing and touches nothing else.
 *
 * The watcher costs next to nothing while nothing is listed: it wakes
 * once a second for two seconds (looking at nothing), so that a watch
 * listed meanwhile need not wake it, then sleeps on a condition variable
 * until one does. While watches are pending it looks at them once a
 * second, for failures set with the raw clSetUserEventStatus; a failure
 * set through clgc_clSetUserEventStatus kicks it to look at once, then
 * after 10 ms, 20 ms, and so on up to the second, for the commands that
 * fail after it. A look costs one status query per pending watch, made
 * outside the lock: the lock is held only to copy the list, so OpenCL's
 * callbacks (which take it to claim their watch) never wait for a query.
 *
 * On a platform whose callbacks come late (learned so, or with
 * CLGC_WAIT_BACKOFF: clgc__driver_looks), a watch is also "fast":
 * the watcher delivers it as soon as a look sees its event reach the
 * status registered for, without waiting for the callback. Fast watches
 * are looked at on the waits' backoff schedule (clgc__backoff_gap,
 * driver.h), its time counted from when the newest was armed; and never
 * sooner after a look than CLGC__FAST_CPU times the CPU
 * that look took, so the watcher spends at most about a tenth of a core
 * however many are pending. These looks read only the fast watches.
 * While a platform is still being learned (by the waits, wait.c), its
 * watches are not fast: their callbacks run on the driver's thread, as
 * on a prompt platform, which is where a runtime's tests and programs
 * expect them (a Scheme callback on PoCL's thread, say), and a watcher
 * that raced the driver's callback would make that thread a matter of
 * chance. */

#define _GNU_SOURCE 1 /* pthread_setname_np */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "driver.h"
#include "handle.h"
#include "next.h"

/* The first look after a kick (after the immediate one), and the slow
 * scan's period, which caps the backoff. */
#define CLGC__WATCH_KICK_NS 10000000L
#define CLGC__WATCH_SLOW_NS 1000000000L
/* How long the watcher keeps its slow period's wakeups once nothing is
 * pending, before it sleeps until signalled: a notification made within
 * two seconds of the last one's delivery finds it awake. */
#define CLGC__WATCH_LINGER_NS 2000000000L
#define CLGC__FAST_CPU 10

/* An id is a handle (handle.h) of CLGC__WATCH_SHIFT index bits. */
#define CLGC__WATCH_SHIFT 24
#define CLGC__WATCH_MAX_SLOTS (1u << CLGC__WATCH_SHIFT)
#define CLGC__NO_SLOT UINT32_MAX

struct clgc__watch_slot {
    struct clgc__watch *w; /* NULL once delivered (or free) */
    cl_event event;        /* clgc's reference while armed: what scans read */
    long armed_ns;         /* when, CLOCK_MONOTONIC */
    uint32_t gen;          /* moves on when the slot is freed */
    uint32_t next_free;
    unsigned holds;      /* scans reading event: the slot outlives them */
    cl_int type;         /* the status registered for */
    unsigned char armed; /* event is retained and scanned */
    unsigned char used;  /* not on the free list */
    unsigned char fast;  /* delivered when a look sees type reached */
    unsigned char platform;
};

/* Adaptive: it is held for a few dozen instructions at a time, and
 * threads that register callbacks at once slept on it (a futex round
 * trip each) far longer than anyone held it. */
static pthread_mutex_t clgc__watch_lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
static pthread_cond_t clgc__watch_cond;
static pthread_once_t clgc__watch_once = PTHREAD_ONCE_INIT;
static int clgc__watch_init_failed;

/* Under the lock. */
static struct clgc__watch_slot *clgc__wslots;
static uint32_t clgc__nwslots, clgc__wcap, clgc__wfree = CLGC__NO_SLOT;
static unsigned clgc__armed;      /* slots the watcher looks at */
static unsigned clgc__armed_fast; /* of which fast */
static long clgc__fast_since;     /* when the newest fast one was armed */
static int clgc__watcher_running, clgc__kicked;
static int clgc__watcher_asleep; /* in its untimed wait: signal to arm */
static long clgc__idle_since;    /* when the last armed watch went; 0: armed */

/* The watcher's list of what it looks at, its own. */
struct clgc__look {
    uint32_t index;
    cl_event event;
    long armed_ns;
    uintptr_t id;
    cl_int type;
    unsigned char fast, platform;
};
static struct clgc__look *clgc__looks;
static unsigned clgc__nlooks;

static uintptr_t
clgc__watch_id(uint32_t i)
{
    return clgc__handle_make(i, clgc__wslots[i].gen, CLGC__WATCH_SHIFT);
}

/* A slot for w, or CLGC__NO_SLOT without memory. */
static uint32_t
clgc__slot_new(struct clgc__watch *w)
{
    struct clgc__watch_slot *s;
    uint32_t i;

    if (clgc__wfree != CLGC__NO_SLOT) {
        i = clgc__wfree;
        clgc__wfree = clgc__wslots[i].next_free;
    } else {
        if (clgc__nwslots == clgc__wcap) {
            uint32_t cap = clgc__wcap ? clgc__wcap * 2 : 64;

            if (cap > CLGC__WATCH_MAX_SLOTS)
                return CLGC__NO_SLOT;
            s = realloc(clgc__wslots, cap * sizeof(*s));
            if (s == NULL)
                return CLGC__NO_SLOT;
            clgc__wslots = s;
            clgc__wcap = cap;
        }
        i = clgc__nwslots++;
        clgc__wslots[i].gen = 0;
    }
    s = &clgc__wslots[i];
    s->w = w;
    s->event = NULL;
    s->holds = 0;
    s->armed = 0;
    s->fast = 0;
    s->used = 1;
    return i;
}

static void
clgc__slot_free(uint32_t i)
{
    struct clgc__watch_slot *s = &clgc__wslots[i];

    s->gen++;
    s->w = NULL;
    s->event = NULL;
    s->armed = 0;
    s->used = 0;
    s->next_free = clgc__wfree;
    clgc__wfree = i;
}

/* The live slot of id, or NULL. */
static struct clgc__watch_slot *
clgc__slot_of(uintptr_t id)
{
    uint32_t i = clgc__handle_index(id, CLGC__WATCH_SHIFT);
    struct clgc__watch_slot *s;

    if (i >= clgc__nwslots)
        return NULL;
    s = &clgc__wslots[i];
    if (!s->used || s->w == NULL ||
        !clgc__handle_is(id, s->gen, CLGC__WATCH_SHIFT))
        return NULL;
    return s;
}

/* Take the watch id for delivery: its record, or NULL if it has been
 * delivered (or taken back). Frees the slot unless a scan still reads its
 * event; *release is a reference to drop once the lock is let go. */
static struct clgc__watch *
clgc__claim(uintptr_t id, cl_event *release)
{
    struct clgc__watch_slot *s = clgc__slot_of(id);
    struct clgc__watch *w;

    *release = NULL;
    if (s == NULL)
        return NULL;
    w = s->w;
    s->w = NULL;
    if (s->armed) {
        if (--clgc__armed == 0)
            clgc__idle_since = clgc__clock_ns(CLOCK_MONOTONIC);
        if (s->fast)
            clgc__armed_fast--;
    }
    if (s->holds == 0) {
        *release = s->event;
        clgc__slot_free((uint32_t)(s - clgc__wslots));
    }
    return w;
}

/* OpenCL's callback: on PoCL's thread, or inline in clSetEventCallback. */
static void CL_CALLBACK
clgc__watch_fired(cl_event event, cl_int status, void *id)
{
    struct clgc__watch *w;
    cl_event release;
    int fast = 0, platform = clgc__driver_of(event);
    long armed_ns = 0;

    pthread_mutex_lock(&clgc__watch_lock);
    {
        struct clgc__watch_slot *s = clgc__slot_of((uintptr_t)id);

        if (s != NULL && s->fast) {
            fast = 1;
            armed_ns = s->armed_ns;
        }
    }
    w = clgc__claim((uintptr_t)id, &release);
    pthread_mutex_unlock(&clgc__watch_lock);
    /* The handler may release the event (a callback that owns it), so
     * nothing below reads it: its platform was taken above. */
    if (w != NULL)
        w->fire(w, event, status);
    if (release != NULL)
        CLGC__CL(clReleaseEvent)(release);
    /* Who came first, for the learner (driver.c): this callback, before a
     * look of the watcher's; or a look, which may have left a probe. */
    if (fast && w != NULL)
        clgc__driver_lateness(platform,
                              clgc__clock_ns(CLOCK_MONOTONIC) - armed_ns, 0);
    else if (w == NULL && status >= 0)
        clgc__driver_called(platform, (uintptr_t)id << 1 | 1);
}

/* One look at every armed watch (only the fast ones: fast_only); with
 * the lock held, which it lets go while it asks OpenCL anything: PoCL may
 * hold an event's lock while it runs a callback, which takes this one. */
static void
clgc__scan(int fast_only)
{
    unsigned k = 0;

    if (clgc__armed == 0)
        return;
    if (clgc__nlooks < clgc__armed) {
        struct clgc__look *l = realloc(clgc__looks, clgc__armed * sizeof(*l));

        if (l == NULL)
            return; /* the next look may have memory */
        clgc__looks = l;
        clgc__nlooks = clgc__armed;
    }
    for (uint32_t i = 0; i < clgc__nwslots && k < clgc__nlooks; i++) {
        struct clgc__watch_slot *s = &clgc__wslots[i];

        if (!s->used || !s->armed || s->w == NULL)
            continue;
        if (fast_only && !s->fast)
            continue;
        s->holds++;
        clgc__looks[k++] = (struct clgc__look){
            i,       s->event, s->armed_ns, clgc__watch_id(i),
            s->type, s->fast,  s->platform};
    }
    pthread_mutex_unlock(&clgc__watch_lock);
    for (unsigned j = 0; j < k; j++) {
        struct clgc__look *l = &clgc__looks[j];
        cl_int status = clgc__event_status(l->event);
        struct clgc__watch *w;
        cl_event none;

        /* A failure, always; a fast watch's status reached, as OpenCL
         * would call back with it. */
        if (status >= 0 && !(l->fast && status <= l->type))
            continue;
        if (status >= 0)
            status = l->type;
        pthread_mutex_lock(&clgc__watch_lock);
        w = clgc__claim(l->id, &none); /* held: none */
        pthread_mutex_unlock(&clgc__watch_lock);
        if (w == NULL)
            continue;
        w->fire(w, l->event, status);
        /* A look that won leaves a probe, unless on a user event, whose
         * callback the program's clSetUserEventStatus makes: it teaches
         * the learner nothing (driver.h). The slot still holds the
         * event. */
        if (status >= 0 && l->fast && !clgc__event_is_user(l->event))
            clgc__driver_probe(l->platform, l->id << 1 | 1,
                               clgc__clock_ns(CLOCK_MONOTONIC) - l->armed_ns);
    }
    /* Let go of the slots; free those delivered meanwhile. */
    pthread_mutex_lock(&clgc__watch_lock);
    for (unsigned j = 0; j < k; j++) {
        struct clgc__watch_slot *s = &clgc__wslots[clgc__looks[j].index];

        clgc__looks[j].event = NULL;
        if (--s->holds == 0 && s->w == NULL) {
            clgc__looks[j].event = s->event;
            clgc__slot_free(clgc__looks[j].index);
        }
    }
    pthread_mutex_unlock(&clgc__watch_lock);
    for (unsigned j = 0; j < k; j++)
        if (clgc__looks[j].event != NULL)
            CLGC__CL(clReleaseEvent)(clgc__looks[j].event);
    pthread_mutex_lock(&clgc__watch_lock);
}

/* When the next fast look is due: on the backoff schedule from when the
 * newest fast watch was armed, and CLGC__FAST_CPU times the last look's
 * length after it at least. */
static long
clgc__fast_due(long last, long took)
{
    long since = last - clgc__fast_since, gap = clgc__backoff_gap(since);

    if (gap < CLGC__FAST_CPU * took)
        gap = CLGC__FAST_CPU * took;
    if (since < 0) /* armed after the last look */
        return clgc__fast_since + CLGC__BACKOFF_MIN_NS;
    return last + gap;
}

/* Under the lock: sleep until the monotonic time `until`, ns, or a signal. */
static void
clgc__watcher_sleep(long until)
{
    struct timespec ts = {until / 1000000000L, until % 1000000000L};

    pthread_cond_timedwait(&clgc__watch_cond, &clgc__watch_lock, &ts);
}

static void *
clgc__watcher(void *unused)
{
    long delay = CLGC__WATCH_SLOW_NS;  /* from one slow look to the next */
    long due = 0;                      /* the next slow look; 0: none planned */
    long fast_last = 0, fast_took = 0; /* the last fast look */

    (void)unused;
    /* For ps -L, top -H and debuggers; and the tests find it by name. */
    pthread_setname_np(pthread_self(), "clgc-watcher");
    pthread_mutex_lock(&clgc__watch_lock);
    for (;;) {
        long now, next;
        int fast_only = 0;

        if (clgc__kicked) {
            clgc__kicked = 0;
            delay = CLGC__WATCH_KICK_NS;
        } else if (clgc__armed == 0) {
            /* Nothing to look at. Waking this thread from its untimed
             * wait is most of what a notification costs its caller (a
             * futex wake, an idle core's wakeup): so for
             * CLGC__WATCH_LINGER_NS it keeps waking on its slow period
             * instead, looking at nothing, and a watch armed meanwhile
             * is looked at on the next of those wakeups, unsignalled.
             * A program that notifies now and then pays the wake once
             * per burst; an idle one costs two wakeups, then nothing. */
            now = clgc__clock_ns(CLOCK_MONOTONIC);
            delay = CLGC__WATCH_SLOW_NS;
            if (clgc__idle_since == 0) /* nothing was ever armed */
                clgc__idle_since = now;
            if (now - clgc__idle_since >= CLGC__WATCH_LINGER_NS) {
                due = 0;
                clgc__watcher_asleep = 1;
                pthread_cond_wait(&clgc__watch_cond, &clgc__watch_lock);
                clgc__watcher_asleep = 0;
                continue;
            }
            if (due <= now)
                due = now + delay;
            /* The linger counts from the last delivery, not from when
             * the watcher woke to find it. */
            clgc__watcher_sleep(due < clgc__idle_since + CLGC__WATCH_LINGER_NS
                                    ? due
                                    : clgc__idle_since + CLGC__WATCH_LINGER_NS);
            continue;
        } else {
            now = clgc__clock_ns(CLOCK_MONOTONIC);
            if (due == 0)
                due = now + delay;
            next = due;
            if (clgc__armed_fast > 0) {
                long f = clgc__fast_due(fast_last, fast_took);

                if (f < next) {
                    next = f;
                    fast_only = 1;
                }
            }
            if (now < next) {
                clgc__watcher_sleep(next);
                continue;
            }
            if (!fast_only)
                delay = delay < CLGC__WATCH_SLOW_NS / 2 ? delay * 2
                                                        : CLGC__WATCH_SLOW_NS;
        }
        now = clgc__clock_ns(CLOCK_THREAD_CPUTIME_ID);
        clgc__scan(fast_only);
        /* Every look sees the fast watches too. What it took is the
         * watcher's CPU, not the wall time: a look preempted on a busy
         * machine costs no more. */
        fast_took = clgc__clock_ns(CLOCK_THREAD_CPUTIME_ID) - now;
        fast_last = clgc__clock_ns(CLOCK_MONOTONIC);
        if (!fast_only)
            due = fast_last + delay;
    }
    return NULL;
}

/* fork(2): the lock is taken around it, so the child's copy of the table
 * is whole. The child has no watcher (it starts again on demand) and no
 * PoCL threads: the parent's watches stay the parent's, never looked at
 * in the child (their events' locks may be held by threads that are
 * gone), and the child's own are watched by a watcher of its own. */
static void
clgc__watch_prepare(void)
{
    pthread_mutex_lock(&clgc__watch_lock);
}

static void
clgc__watch_parent(void)
{
    pthread_mutex_unlock(&clgc__watch_lock);
}

static int clgc__cond_init(void);

static void
clgc__watch_child(void)
{
    for (uint32_t i = 0; i < clgc__nwslots; i++) {
        struct clgc__watch_slot *s = &clgc__wslots[i];

        if (!s->used)
            continue;
        s->holds = 0;
        s->armed = 0; /* the parent's reference, left alone */
        s->fast = 0;
        if (s->w == NULL)
            clgc__slot_free(i);
    }
    clgc__armed = 0;
    clgc__armed_fast = 0;
    clgc__idle_since = 0;
    clgc__kicked = 0;
    clgc__watcher_running = 0;
    clgc__watcher_asleep = 0;
    /* The parent's watcher may have been waiting on the condition
     * variable: its copy counts a waiter that does not exist here, and
     * would lose the child's signals. A fresh one. */
    if (clgc__cond_init() != 0)
        clgc__watch_init_failed = 1;
    pthread_mutex_unlock(&clgc__watch_lock);
}

/* The watcher's condition variable, on the monotonic clock. */
static int
clgc__cond_init(void)
{
    pthread_condattr_t attr;
    int err = pthread_condattr_init(&attr);

    if (err != 0)
        return err;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    err = pthread_cond_init(&clgc__watch_cond, &attr);
    pthread_condattr_destroy(&attr);
    return err;
}

static void
clgc__watch_init(void)
{
    clgc__watch_init_failed =
        clgc__cond_init() != 0 ||
        pthread_atfork(clgc__watch_prepare, clgc__watch_parent,
                       clgc__watch_child) != 0;
}

/* Under the lock: 0, or an error starting the watcher. */
static int
clgc__watcher_start(void)
{
    pthread_attr_t attr;
    pthread_t t;
    int err;

    if (clgc__watcher_running)
        return 0;
    if (pthread_attr_init(&attr) != 0)
        return -1;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    err = pthread_create(&t, &attr, clgc__watcher, NULL);
    pthread_attr_destroy(&attr);
    clgc__watcher_running = err == 0;
    return err;
}

/* Arm slot s for the watcher, which reads its event through clgc's
 * reference, as of now (ns, CLOCK_MONOTONIC). Under the lock. */
static void
clgc__watch_arm(struct clgc__watch_slot *s, int fast, long now)
{
    s->armed_ns = now;
    s->armed = 1;
    /* The watcher is woken when it sleeps until signalled, and for every
     * fast watch: its looks start again at CLGC__BACKOFF_MIN_NS. Otherwise
     * its slow period's next wakeup finds this one. */
    if (fast) {
        s->fast = 1;
        clgc__armed_fast++;
        clgc__fast_since = s->armed_ns;
    }
    clgc__armed++;
    if (clgc__watcher_asleep || fast)
        pthread_cond_signal(&clgc__watch_cond);
}

/* Two turns of the lock, around OpenCL's registration: the slot is made,
 * holding clgc's reference to the event; then, registered, it is armed
 * for the watcher, unless OpenCL has called back already (inline, as
 * PoCL does for an event already complete), or the event had reached
 * type by the registration, which some drivers never call back for
 * (Oclgrind, for an event already complete, which its clFlush makes it):
 * the status is read after the registration, so what completed before it
 * is delivered here, and what completes after it is called back for.
 * Refused, the watch is taken back, unless it was delivered all the same
 * (a driver that calls back and then reports an error). */
int
clgc__watch_start(struct clgc__watch *w, cl_event event, cl_int type,
                  cl_int *err)
{
    struct clgc__watch_slot *s;
    struct clgc__watch *mine = NULL;
    cl_event release = NULL;
    cl_int status = CL_QUEUED + 1;
    long now;
    uintptr_t id;
    uint32_t i = CLGC__NO_SLOT;
    int fired, held, platform = clgc__driver_of(event);
    int fast = clgc__driver_looks(platform);

    pthread_once(&clgc__watch_once, clgc__watch_init);
    if (clgc__watch_init_failed) {
        *err = CL_OUT_OF_HOST_MEMORY;
        return 0;
    }
    /* The watcher reads the event through a reference of clgc's own, as
     * the record's owner may release its own at any time: from the very
     * callback that the registration below may run inline. So it is taken
     * first, while the caller's still holds the event. */
    held = CLGC__CL(clRetainEvent)(event) == CL_SUCCESS;
    pthread_mutex_lock(&clgc__watch_lock);
    if (clgc__watcher_start() == 0)
        i = clgc__slot_new(w);
    if (i != CLGC__NO_SLOT) {
        s = &clgc__wslots[i];
        s->event = held ? event : NULL;
        s->type = type;
        s->platform = (unsigned char)platform;
        s->holds = 1; /* this call reads the event after the registration */
    }
    id = i != CLGC__NO_SLOT ? clgc__watch_id(i) : 0;
    pthread_mutex_unlock(&clgc__watch_lock);
    if (i == CLGC__NO_SLOT) {
        if (held)
            CLGC__CL(clReleaseEvent)(event);
        *err = CL_OUT_OF_HOST_MEMORY;
        return 0;
    }
    *err = CLGC__CL(clSetEventCallback)(event, type, clgc__watch_fired,
                                        (void *)id);
    if (*err == CL_SUCCESS && held)
        status = clgc__event_status(event);
    now = clgc__clock_ns(CLOCK_MONOTONIC); /* read outside the lock */
    pthread_mutex_lock(&clgc__watch_lock);
    s = &clgc__wslots[i];
    fired = s->w == NULL;
    if (!fired && (*err != CL_SUCCESS || status <= type))
        mine = clgc__claim(id, &release); /* held: no release */
    else if (!fired && held)
        clgc__watch_arm(s, fast, now);
    if (--s->holds == 0 && s->w == NULL) {
        release = s->event;
        clgc__slot_free(i);
    }
    pthread_mutex_unlock(&clgc__watch_lock);
    if (mine != NULL && *err == CL_SUCCESS)
        mine->fire(mine, event, status >= 0 ? type : status);
    if (release != NULL)
        CLGC__CL(clReleaseEvent)(release);
    return *err == CL_SUCCESS || fired;
}

void
clgc__watch_kick(void)
{
    pthread_mutex_lock(&clgc__watch_lock);
    if (clgc__watcher_running && clgc__armed > 0) {
        clgc__kicked = 1;
        pthread_cond_signal(&clgc__watch_cond);
    }
    pthread_mutex_unlock(&clgc__watch_lock);
}
