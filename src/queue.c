/* Completion queues (include/clgc/queue.h): items posted from any thread,
 * run by the thread that drains the queue.
 *
 * Posting pushes onto a lock-free stack; only a push onto an empty stack
 * writes the eventfd, so any number of posts make one wakeup. A drain
 * reads the fd (clearing it), takes the whole stack at once, reverses it
 * into completion order behind what an earlier bounded drain left, runs
 * up to max items, and writes the fd again if any are left: whatever max
 * was, the fd is readable while anything is pending (a push after the
 * take finds the stack empty and writes it itself). An item is anything
 * that starts with a struct clgc__item: an event notification (notify.c),
 * a deferred OpenCL callback (callback.c), or a function posted with
 * clgc_queue_post. Running an item frees it.
 *
 * When a queue may be freed. A push publishes its item and only then
 * writes the fd, so the owner can run the item, see nothing outstanding
 * and close while the pusher has yet to write. Only the push onto an
 * empty stack writes, and it says so in the stack's top (CLGC__WAKING,
 * the low bit, which later pushes keep on the top): a drain that takes a
 * stack so marked counts a write to come (`wakes_seen`), the pusher
 * counts it done after its write (`wakes_done`), and close, once it has
 * run everything and seen nothing promised, waits until the two agree.
 * Any other push touches nothing of the queue after its publish, so a
 * push is one compare-and-swap.
 * Completions still to come are `outstanding` (promised by notify.c and
 * callback.c when the event or callback is registered, until the item has
 * run), and threads that defer their callbacks here are `deferring`
 * (callback.c): close refuses while either is non-zero.
 *
 * One drainer at a time: `draining` is taken by a drain and by a close,
 * and a drain or close that finds it taken (another thread's, or the one
 * running the calling handler) returns CLGC_EDRAINING. */

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clgc/queue.h"
#include "internal.h"

/* The pushers' words, the promises' and the drainer's each on a cache
 * line of their own, so that a push does not wait for the line that a
 * drain last wrote, nor a drain for the pushers'. */
#define CLGC__LINE 64

struct clgc_queue {
    _Atomic uintptr_t pushed; /* newest first, maybe | CLGC__WAKING */
    atomic_uint wakes_done;   /* writes of pushes onto an empty stack */
    int fd;                   /* eventfd: readable while pending */
    _Alignas(CLGC__LINE) atomic_uint outstanding; /* promised, not run */
    atomic_uint deferring; /* threads deferring callbacks here */
    _Alignas(CLGC__LINE) struct clgc__item *ready, **tail; /* the drainer's */
    unsigned wakes_seen; /* the drainer's: stacks taken marked */
    atomic_int draining; /* a drain or close is running */
};

#define CLGC__WAKING ((uintptr_t)1)

int
clgc_queue_create(clgc_queue_t **queue)
{
    clgc_queue_t *q;

    if (queue == NULL)
        return CLGC_EINVAL;
    q = aligned_alloc(CLGC__LINE, sizeof(*q));
    if (q == NULL)
        return CLGC_ENOMEM;
    memset(q, 0, sizeof(*q));
    q->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (q->fd < 0) {
        int err = errno;

        free(q);
        errno = err;
        return CLGC_ESYSTEM;
    }
    q->tail = &q->ready;
    *queue = q;
    return CLGC_OK;
}

int
clgc_queue_fd(const clgc_queue_t *queue)
{
    return queue != NULL ? queue->fd : -1;
}

void
clgc__queue_promise(clgc_queue_t *q, int n)
{
    atomic_fetch_add(&q->outstanding, (unsigned)n);
}

void
clgc__queue_deferring(clgc_queue_t *q, int n)
{
    atomic_fetch_add(&q->deferring, (unsigned)n);
}

/* Make the fd readable. It fails only when the counter is at its
 * maximum, which is readable already. */
static void
clgc__wake(const clgc_queue_t *q)
{
    uint64_t one = 1;

    if (write(q->fd, &one, sizeof(one)) < 0)
        return;
}

void
clgc__queue_push(clgc_queue_t *q, struct clgc__item *it, int promised)
{
    uintptr_t old = atomic_load_explicit(&q->pushed, memory_order_relaxed);

    it->promised = promised;
    do
        it->next = (struct clgc__item *)(old & ~CLGC__WAKING);
    while (!atomic_compare_exchange_weak_explicit(
        &q->pushed, &old, (uintptr_t)it | (old & CLGC__WAKING) | (old == 0),
        memory_order_release, memory_order_relaxed));
    /* Only the push onto an empty stack wakes the loop: wakeups coalesce.
     * It alone touches q after the publish (see "When a queue may be
     * freed" above). */
    if (old == 0) {
        clgc__wake(q);
        atomic_fetch_add_explicit(&q->wakes_done, 1, memory_order_release);
    }
}

struct clgc__posted {
    struct clgc__item item;
    void (*fn)(void *);
    void *data;
};

static void
clgc__run_posted(struct clgc__item *it)
{
    struct clgc__posted *p = (struct clgc__posted *)it;

    p->fn(p->data);
    clgc__record_free(p);
}

int
clgc_queue_post(clgc_queue_t *queue, void (*fn)(void *data), void *data)
{
    struct clgc__posted *p;

    if (queue == NULL || fn == NULL)
        return CLGC_EINVAL;
    p = clgc__record_alloc(sizeof(*p));
    if (p == NULL)
        return CLGC_ENOMEM;
    *p = (struct clgc__posted){
        .item = {.run = clgc__run_posted, .command = "clgc_queue_post"},
        .fn = fn,
        .data = data};
    clgc__queue_push(queue, &p->item, 0);
    return CLGC_OK;
}

/* Take the drainer's flag, or say who has it. */
static int
clgc__take(clgc_queue_t *q)
{
    int no = 0;

    return atomic_compare_exchange_strong(&q->draining, &no, 1)
               ? CLGC_OK
               : CLGC_EDRAINING;
}

/* Run up to max items, with the flag taken; returns how many ran. */
static int
clgc__drain(clgc_queue_t *q, unsigned max)
{
    uintptr_t top =
        atomic_exchange_explicit(&q->pushed, 0, memory_order_acquire);
    struct clgc__item *it, *fifo = NULL, **tail = NULL;
    unsigned ran = 0;

    q->wakes_seen += top & CLGC__WAKING;
    for (it = (struct clgc__item *)(top & ~CLGC__WAKING); it != NULL;) {
        struct clgc__item *next = it->next;

        if (tail == NULL)
            tail = &it->next; /* the newest ends the new part */
        it->next = fifo;
        fifo = it;
        it = next;
    }
    if (fifo != NULL) {
        *q->tail = fifo;
        q->tail = tail;
    }
    while ((it = q->ready) != NULL && (max == 0 || ran < max) &&
           ran < INT_MAX) {
        struct clgc__running running;
        int promised = it->promised;

        q->ready = it->next;
        if (q->ready == NULL)
            q->tail = &q->ready;
        /* clgc_callback_fail in the handler records a failure of what
         * posted the item. */
        clgc__running_push(&running, it->command);
        it->run(it); /* frees it */
        clgc__running_pop(&running);
        if (promised)
            atomic_fetch_sub(&q->outstanding, 1);
        ran++;
    }
    /* Some left for the next drain: keep the fd readable. */
    if (q->ready != NULL)
        clgc__wake(q);
    return (int)ran;
}

int
clgc_queue_drain(clgc_queue_t *q, unsigned max)
{
    uint64_t count;
    int ran;

    if (q == NULL)
        return CLGC_EINVAL;
    if (clgc__take(q) != CLGC_OK)
        return CLGC_EDRAINING;
    /* Clear the fd first: a push after this makes it readable again. */
    if (read(q->fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
        ran = CLGC_ESYSTEM;
    else
        ran = clgc__drain(q, max);
    atomic_store(&q->draining, 0);
    /* After the flag is down: the runtime's hook may drain again. */
    clgc__hand_errors();
    return ran;
}

int
clgc_queue_close(clgc_queue_t *q)
{
    int busy;

    if (q == NULL)
        return CLGC_EINVAL;
    if (clgc__take(q) != CLGC_OK)
        return CLGC_EDRAINING;
    /* One pass: a handler that posts to its own queue on every run must
     * not keep the close from returning. What it posted keeps the queue
     * open (busy below). The fd is not read: it is about to go, or stays
     * readable for what is left. */
    (void)clgc__drain(q, 0);
    /* Deferring before outstanding: a thread registers (promises) before
     * it stops deferring, so once it is seen gone its promises are seen. */
    busy = atomic_load(&q->deferring) != 0 ||
           atomic_load(&q->outstanding) != 0 || atomic_load(&q->pushed) != 0 ||
           q->ready != NULL;
    if (!busy) {
        /* Let the pushes whose items have run write the fd before q goes.
         * Nothing promised is left, so a push the close has not seen is a
         * post the caller let overlap the close, which may have published
         * meanwhile: look again. Not done when the queue stays open
         * anyway, so that pushes that keep coming cannot hold up a close
         * that refuses. */
        while (atomic_load_explicit(&q->wakes_done, memory_order_acquire) !=
               q->wakes_seen)
            sched_yield();
        busy = atomic_load(&q->pushed) != 0;
    }
    if (busy) {
        atomic_store(&q->draining, 0);
        clgc__hand_errors();
        return CLGC_EBUSY;
    }
    close(q->fd);
    free(q);
    clgc__hand_errors();
    return CLGC_OK;
}
