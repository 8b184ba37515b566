/* The timers of a state (clgc.after, clgc.sleep): one binary heap, ordered
 * by deadline and then by the order they were set, and one timerfd armed
 * for the earliest. The fd a program or event loop polls (clgc.fd()) is
 * an epoll fd over the completion queue's fd and the timerfd, so one poll
 * wakes for either and no timer needs a thread. Expired timers run in the
 * state's drains, on the owner thread, as posts do. Everything here runs
 * on the owner thread. */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "lclgc.h"

struct lclgc_timer {
    uint64_t deadline; /* ns on CLOCK_MONOTONIC */
    uint64_t seq;      /* the order of setting, among equal deadlines */
    struct lclgc_post *post;
};

struct lclgc_timers {
    int epfd, tfd;
    struct lclgc_timer *heap;
    size_t n, cap;
    uint64_t seq;
};

static uint64_t
lclgc_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
lclgc_timer_before(const struct lclgc_timer *a, const struct lclgc_timer *b)
{
    return a->deadline < b->deadline ||
           (a->deadline == b->deadline && a->seq < b->seq);
}

static void
lclgc_heap_up(struct lclgc_timer *h, size_t i)
{
    while (i > 0 && lclgc_timer_before(&h[i], &h[(i - 1) / 2])) {
        struct lclgc_timer t = h[i];

        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static void
lclgc_heap_down(struct lclgc_timer *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        struct lclgc_timer t;

        if (l < n && lclgc_timer_before(&h[l], &h[m]))
            m = l;
        if (r < n && lclgc_timer_before(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Arm the timerfd for the earliest deadline, or disarm it. */
static void
lclgc_timers_arm(lclgc_timers *t)
{
    struct itimerspec its;

    memset(&its, 0, sizeof(its));
    if (t->n > 0) {
        /* 0 would disarm it: a deadline is never 0 (the clock was
         * running when it was set). */
        its.it_value.tv_sec = (time_t)(t->heap[0].deadline / 1000000000u);
        its.it_value.tv_nsec = (long)(t->heap[0].deadline % 1000000000u);
    }
    (void)timerfd_settime(t->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

int
lclgc_timers_init(lclgc_timers **out, int queue_fd)
{
    lclgc_timers *t = calloc(1, sizeof(*t));
    struct epoll_event ev;
    int err;

    if (t == NULL)
        return ENOMEM;
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    t->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (t->epfd < 0 || t->tfd < 0)
        goto fail;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, queue_fd, &ev) != 0 ||
        epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->tfd, &ev) != 0)
        goto fail;
    *out = t;
    return 0;
fail:
    err = errno;
    if (t->epfd >= 0)
        close(t->epfd);
    if (t->tfd >= 0)
        close(t->tfd);
    free(t);
    return err;
}

int
lclgc_timers_fd(lclgc_timers *t)
{
    return t->epfd;
}

int
lclgc_timers_add(lclgc_timers *t, double seconds, struct lclgc_post *post)
{
    struct lclgc_timer *e;

    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        struct lclgc_timer *h = realloc(t->heap, cap * sizeof(*h));

        if (h == NULL)
            return ENOMEM;
        t->heap = h;
        t->cap = cap;
    }
    e = &t->heap[t->n];
    /* seconds is 0 to 1e6 (checked by the caller): no overflow. */
    e->deadline = lclgc_now_ns() + (uint64_t)ceil(seconds * 1e9);
    e->seq = t->seq++;
    e->post = post;
    lclgc_heap_up(t->heap, t->n++);
    if (t->heap[0].post == post)
        lclgc_timers_arm(t);
    return 0;
}

int
lclgc_timers_run(lclgc_timers *t, int max)
{
    uint64_t now = lclgc_now_ns(), last = t->seq, expirations;
    int ran = 0;

    /* Clear the timerfd's readiness; it is armed again below. */
    (void)!read(t->tfd, &expirations, sizeof(expirations));
    /* Only timers set before this run: one that a handler sets for 0 s
     * runs in the next drain, so a drain always ends. */
    while (t->n > 0 && (max == 0 || ran < max) && t->heap[0].deadline <= now &&
           t->heap[0].seq < last) {
        struct lclgc_post *p = t->heap[0].post;

        t->heap[0] = t->heap[--t->n];
        lclgc_heap_down(t->heap, t->n, 0);
        lclgc_post_run(p, CL_SUCCESS);
        ran++;
    }
    lclgc_timers_arm(t);
    return ran;
}

void
lclgc_timers_free(lclgc_timers *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n; i++)
        lclgc_post_run(t->heap[i].post, CL_SUCCESS);
    free(t->heap);
    close(t->epfd);
    close(t->tfd);
    free(t);
}
