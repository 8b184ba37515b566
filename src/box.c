/* Boxes (include/clgc/binding.h): a binding's OpenCL object, held by each
 * thread that is in a call with it, released at the end of the last hold.
 *
 * A hold is on every call a binding makes, so it takes no atomic
 * read-modify-write: the thread writes the box into one of its slots, and
 * a release, which is rare, does the work of finding the holds. A thread's
 * holds are a stack (clgc_box_get pushes, clgc_holds_back_to pops); its
 * first CLGC__SLOTS are published in slots that any thread may read, those
 * past them are counted in the box's state word instead.
 *
 * Two handshakes keep that sound, each a store then a load on either side:
 * - a hold writes its slot, then reads whether the box was released; a
 *   release marks it released, then reads every thread's slots;
 * - an unhold clears its slot, then reads whether any box awaits its last
 *   hold (clgc__retired); a release puts the box on that list, then reads
 *   the slots.
 * The releasing side orders its store and load with membarrier(2), which
 * runs a full barrier on every thread of the process, so that the holding
 * side needs only the compiler's; without membarrier both sides fence.
 * Either side then sees the other: a hold sees the release and lets go, or
 * the release sees the hold and leaves the box on the list, where the
 * unhold that clears the last slot finds it.
 *
 * The list and the state's RETIRED and DONE bits change under one lock;
 * the releases that OpenCL does are made outside it, as they may run
 * destructor callbacks that come back here. */

#include <linux/membarrier.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clgc/binding.h"
#include "internal.h"

/* A box's state: holds past a thread's slots, whether it was released (no
 * hold is taken after), whether it is on the list of boxes that await
 * their last hold, whether its object was released (once), and whether
 * the binding's object is gone (the box is freed once not held). */
#define CLGC__BOX_HOLDS 0xffffffffull
#define CLGC__BOX_RELEASED (1ull << 32)
#define CLGC__BOX_RETIRED (1ull << 33)
#define CLGC__BOX_DONE (1ull << 34)
#define CLGC__BOX_FREED (1ull << 35)

#define CLGC__SLOTS 32

struct clgc_box {
    void *object;
    cl_int (*release)(void *object);
    uint64_t state;
    clgc_box_t *next; /* on the list, under the lock */
};

/* A thread's holds: the boxes in slots[0 .. min(n, CLGC__SLOTS)), the
 * rest in more[], counted on their boxes. On the list of threads from its
 * first hold to its exit. The thread finds it in one word of static TLS:
 * the model where reading it is one load, not a call. */
struct clgc__holds {
    clgc_box_t *slot[CLGC__SLOTS];
    clgc_box_t **more;
    size_t n, cap;
    struct clgc__holds *next, **prev;
};

static __thread struct clgc__holds *clgc__mine
    __attribute__((tls_model("initial-exec")));

static pthread_mutex_t clgc__box_lock = PTHREAD_MUTEX_INITIALIZER;
static struct clgc__holds *clgc__threads; /* under the lock */
static clgc_box_t *clgc__list;            /* under the lock */
static unsigned clgc__retired;            /* boxes on it; read by any unhold */
static int clgc__expedited;               /* membarrier orders the releases */
static pthread_key_t clgc__holds_key;
static pthread_once_t clgc__box_once = PTHREAD_ONCE_INIT;

static int
clgc__membarrier(int cmd)
{
    return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

/* The holding side's fence: the compiler's where the releasing side's
 * membarrier is the processor's. */
static inline void
clgc__light_fence(void)
{
    if (__atomic_load_n(&clgc__expedited, __ATOMIC_RELAXED))
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    else
        clgc__fence();
}

static void
clgc__heavy_fence(void)
{
    if (!__atomic_load_n(&clgc__expedited, __ATOMIC_RELAXED) ||
        clgc__membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)
        clgc__fence();
}

static void clgc__holds_exit(void *h);

/* fork(2) copies the calling thread alone: the child's list of threads is
 * that thread, and the lock is not held by a thread that is not there. */
static void
clgc__box_prepare(void)
{
    pthread_mutex_lock(&clgc__box_lock);
}

static void
clgc__box_parent(void)
{
    pthread_mutex_unlock(&clgc__box_lock);
}

static void
clgc__box_child(void)
{
    struct clgc__holds *h = clgc__mine;

    clgc__threads = NULL;
    if (h != NULL) {
        h->next = NULL;
        h->prev = &clgc__threads;
        clgc__threads = h;
    }
    /* A child's membarrier may need registering again; until it is, both
     * sides fence (the child has one thread: none is between the two). */
    if (clgc__expedited &&
        clgc__membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0)
        clgc__expedited = 0;
    pthread_mutex_unlock(&clgc__box_lock);
}

static void
clgc__box_init(void)
{
    int cmds = clgc__membarrier(MEMBARRIER_CMD_QUERY);

    (void)pthread_key_create(&clgc__holds_key, clgc__holds_exit);
    (void)pthread_atfork(clgc__box_prepare, clgc__box_parent, clgc__box_child);
    if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        clgc__membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
        clgc__expedited = 1;
}

clgc_box_t *
clgc_box_new(void *object, cl_int (*release)(void *object))
{
    clgc_box_t *b = malloc(sizeof(*b));

    if (b != NULL)
        *b = (clgc_box_t){object, release, 0, NULL};
    return b;
}

/* Whether a thread's slot holds b. Under the lock. */
static int
clgc__slotted(const clgc_box_t *b)
{
    for (struct clgc__holds *h = clgc__threads; h != NULL; h = h->next)
        for (size_t i = 0; i < CLGC__SLOTS; i++)
            if (__atomic_load_n(&h->slot[i], __ATOMIC_ACQUIRE) == b)
                return 1;
    return 0;
}

/* A release OpenCL is still to make, outside the lock. */
struct clgc__release {
    void *object;
    cl_int (*release)(void *object);
};

/* Take the boxes that no thread holds off the list: free those whose
 * binding's object is gone, and hand back at most max releases to make.
 * Under the lock. */
static size_t
clgc__collect(struct clgc__release *r, size_t max)
{
    size_t n = 0;

    for (clgc_box_t **p = &clgc__list; *p != NULL && n < max;) {
        clgc_box_t *b = *p;
        uint64_t s = __atomic_load_n(&b->state, __ATOMIC_ACQUIRE);

        if ((s & CLGC__BOX_HOLDS) != 0 || clgc__slotted(b)) {
            p = &b->next;
            continue;
        }
        *p = b->next;
        __atomic_store_n(&clgc__retired, clgc__retired - 1, __ATOMIC_RELAXED);
        s = __atomic_fetch_and(&b->state, ~CLGC__BOX_RETIRED, __ATOMIC_ACQ_REL);
        if (!(s & CLGC__BOX_DONE)) {
            __atomic_fetch_or(&b->state, CLGC__BOX_DONE, __ATOMIC_RELEASE);
            if (b->release != NULL)
                r[n++] = (struct clgc__release){b->object, b->release};
        }
        if (s & CLGC__BOX_FREED)
            free(b);
    }
    return n;
}

/* Whether another thread than the caller may hold a box. Under the lock:
 * a thread that registers later sees what was done before. */
static int
clgc__others(void)
{
    return clgc__threads != NULL &&
           (clgc__threads != clgc__mine || clgc__threads->next != NULL);
}

/* Mark b (if not NULL) by bits and put it on the list, then release what
 * no thread holds. Returns b's state before. */
static uint64_t
clgc__reclaim(clgc_box_t *b, uint64_t bits)
{
    struct clgc__release r[16];
    uint64_t s = 0;
    size_t n;

    pthread_mutex_lock(&clgc__box_lock);
    if (b != NULL) {
        s = __atomic_fetch_or(&b->state, bits | CLGC__BOX_RETIRED,
                              __ATOMIC_ACQ_REL);
        if (!(s & CLGC__BOX_RETIRED) && (bits & ~s) != 0) {
            b->next = clgc__list;
            clgc__list = b;
            __atomic_store_n(&clgc__retired, clgc__retired + 1,
                             __ATOMIC_RELAXED);
        }
        /* Before any thread may collect it: every hold that did not see
         * the release is in its slot now. */
        if (clgc__others())
            clgc__heavy_fence();
    }
    for (;;) {
        n = clgc__collect(r, sizeof(r) / sizeof(r[0]));
        pthread_mutex_unlock(&clgc__box_lock);
        for (size_t i = 0; i < n; i++)
            (void)r[i].release(r[i].object);
        if (n < sizeof(r) / sizeof(r[0]))
            return s;
        pthread_mutex_lock(&clgc__box_lock);
    }
}

int
clgc_box_release(clgc_box_t *b)
{
    if (clgc_box_released(b))
        return 0;
    pthread_once(&clgc__box_once, clgc__box_init);
    return !(clgc__reclaim(b, CLGC__BOX_RELEASED) & CLGC__BOX_RELEASED);
}

int
clgc_box_released(const clgc_box_t *b)
{
    return (__atomic_load_n(&b->state, __ATOMIC_ACQUIRE) &
            CLGC__BOX_RELEASED) != 0;
}

void
clgc_box_free(clgc_box_t *b)
{
    if (b != NULL) {
        pthread_once(&clgc__box_once, clgc__box_init);
        (void)clgc__reclaim(b, CLGC__BOX_RELEASED | CLGC__BOX_FREED);
    }
}

/* Let go of hold i of the calling thread. */
static void
clgc__unhold(struct clgc__holds *h, size_t i)
{
    if (i < CLGC__SLOTS) {
        __atomic_store_n(&h->slot[i], NULL, __ATOMIC_RELEASE);
        clgc__light_fence();
        if (__atomic_load_n(&clgc__retired, __ATOMIC_RELAXED) != 0)
            (void)clgc__reclaim(NULL, 0);
    } else if (__atomic_fetch_sub(&h->more[i - CLGC__SLOTS]->state, 1,
                                  __ATOMIC_ACQ_REL) &
               CLGC__BOX_RELEASED) {
        (void)clgc__reclaim(NULL, 0);
    }
}

/* The calling thread's holds, on the list from now to its exit. */
static struct clgc__holds *
clgc__register(void)
{
    struct clgc__holds *h = calloc(1, sizeof(*h));

    pthread_once(&clgc__box_once, clgc__box_init);
    if (h == NULL || pthread_setspecific(clgc__holds_key, h) != 0) {
        free(h);
        return NULL;
    }
    pthread_mutex_lock(&clgc__box_lock);
    h->next = clgc__threads;
    h->prev = &clgc__threads;
    if (clgc__threads != NULL)
        clgc__threads->prev = &h->next;
    clgc__threads = h;
    pthread_mutex_unlock(&clgc__box_lock);
    return clgc__mine = h;
}

/* At the thread's exit: its holds go, then the thread leaves the list. */
static void
clgc__holds_exit(void *arg)
{
    struct clgc__holds *h = arg;

    clgc_holds_end();
    pthread_mutex_lock(&clgc__box_lock);
    *h->prev = h->next;
    if (h->next != NULL)
        h->next->prev = h->prev;
    pthread_mutex_unlock(&clgc__box_lock);
    clgc__mine = NULL;
    free(h->more);
    free(h);
}

void *
clgc_box_get(clgc_box_t *b)
{
    struct clgc__holds *h = clgc__mine;
    size_t n;

    if (h == NULL && (h = clgc__register()) == NULL)
        return NULL;
    n = h->n;
    if (n < CLGC__SLOTS) {
        __atomic_store_n(&h->slot[n], b, __ATOMIC_RELAXED);
        clgc__light_fence();
        if (__atomic_load_n(&b->state, __ATOMIC_ACQUIRE) & CLGC__BOX_RELEASED) {
            clgc__unhold(h, n);
            return NULL;
        }
    } else {
        if (n - CLGC__SLOTS == h->cap) {
            size_t cap = h->cap ? 2 * h->cap : 16;
            clgc_box_t **a = realloc(h->more, cap * sizeof(*a));

            if (a == NULL)
                return NULL;
            h->more = a;
            h->cap = cap;
        }
        h->more[n - CLGC__SLOTS] = b;
        if (__atomic_fetch_add(&b->state, 1, __ATOMIC_ACQUIRE) &
            CLGC__BOX_RELEASED) {
            clgc__unhold(h, n);
            return NULL;
        }
    }
    h->n = n + 1;
    return b->object;
}

size_t
clgc_holds_mark(void)
{
    struct clgc__holds *h = clgc__mine;

    return h != NULL ? h->n : 0;
}

void
clgc_holds_back_to(size_t mark)
{
    struct clgc__holds *h = clgc__mine;

    /* From the last: a release that an unhold makes may come back here. */
    while (h != NULL && h->n > mark)
        clgc__unhold(h, --h->n);
}

void
clgc_holds_end(void)
{
    clgc_holds_back_to(0);
}
