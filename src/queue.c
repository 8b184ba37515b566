/* Completion queues (include/clgc/wait.h): items posted from any thread,
 * run by the thread that drains the queue.
 *
 * Posting pushes onto a lock-free stack; only a push onto an empty stack
 * writes the eventfd, so any number of posts make one wakeup. The drainer
 * takes the whole stack at once and reverses it into completion order. An
 * item is anything that starts with a struct clgc__item: an event
 * notification (notify.c), a deferred OpenCL callback (callback.c), or a
 * function posted with clgc_queue_post. Running an item frees it. */

#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clgc/wait.h"
#include "internal.h"

struct clgc_queue {
    int fd;                           /* eventfd: readable while pending */
    struct clgc__item *_Atomic pushed; /* newest first */
    struct clgc__item *ready;         /* the drainer's, oldest first */
    atomic_uint outstanding;          /* promised, not yet run */
};

clgc_queue_t *
clgc_queue_create(void)
{
    clgc_queue_t *q = calloc(1, sizeof(*q));

    if (q == NULL)
        return NULL;
    q->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (q->fd < 0) {
        int err = errno;

        free(q);
        errno = err;
        return NULL;
    }
    return q;
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
clgc__queue_push(clgc_queue_t *q, struct clgc__item *it, int promised)
{
    struct clgc__item *old = atomic_load(&q->pushed);
    uint64_t one = 1;

    it->promised = promised;
    do
        it->next = old;
    while (!atomic_compare_exchange_weak(&q->pushed, &old, it));
    /* Only the push onto an empty stack wakes the loop: wakeups coalesce. */
    if (old == NULL && write(q->fd, &one, sizeof(one)) < 0)
        return; /* the counter is at its maximum: already readable */
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
    *p = (struct clgc__posted){{NULL, clgc__run_posted, 0}, fn, data};
    clgc__queue_push(queue, &p->item, 0);
    return CLGC_OK;
}

unsigned
clgc_queue_drain(clgc_queue_t *q, unsigned max)
{
    struct clgc__item *it, *fifo = NULL;
    unsigned ran = 0;
    uint64_t count;

    if (q == NULL)
        return 0;
    /* Clear the fd first: a push after this makes it readable again. */
    if (read(q->fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
        return 0;
    if (q->ready == NULL) {
        for (it = atomic_exchange(&q->pushed, NULL); it != NULL;) {
            struct clgc__item *next = it->next;

            it->next = fifo;
            fifo = it;
            it = next;
        }
        q->ready = fifo;
    }
    while ((it = q->ready) != NULL && (max == 0 || ran < max)) {
        int promised = it->promised;

        q->ready = it->next;
        it->run(it); /* frees it */
        if (promised)
            atomic_fetch_sub(&q->outstanding, 1);
        ran++;
    }
    /* Some left for the next drain: keep the fd readable. */
    if (q->ready != NULL) {
        count = 1;
        if (write(q->fd, &count, sizeof(count)) < 0)
            return ran;
    }
    clgc__hand_errors();
    return ran;
}

int
clgc_queue_close(clgc_queue_t *q)
{
    if (q == NULL)
        return CLGC_EINVAL;
    while (clgc_queue_drain(q, 0) != 0)
        ;
    if (atomic_load(&q->outstanding) != 0)
        return CLGC_EBUSY;
    close(q->fd);
    free(q);
    return CLGC_OK;
}
