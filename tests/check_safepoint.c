/* The safepoint form, with the reference VM (refvm.c) on the real PoCL:
 * a thread blocked in a clgc_cl* wrapper does not delay a collection
 * while one in the raw call does; leaving a region during a collection
 * parks the thread exactly once; regions nest; misuse is refused;
 * mutators, a collector and wrapper calls run together; and a callback
 * on PoCL's own thread stops for collections while it runs and delays
 * none once it has returned (suite "threads", which the TSan build
 * runs).
 *
 * Every assertion is about the order of events, never about durations:
 * each test forces the interleaving it checks.
 *
 * A runtime can be installed once per process. In Check's fork mode (the
 * default) each test runs in a child of main, which never touches clgc,
 * so each test installs the VM itself (vm_setup). With CK_FORK=no all the
 * tests share one process: they still pass when run in the order they are
 * listed (the "install" case first, since one of its tests needs a clgc
 * never used; it forks for that), or pick one case with CK_RUN_CASE. */

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "refvm.h"
#include "slow.h"
#include "testutil.h"

#define POCL "Portable Computing Language"

/* Install the VM, once per process. */
static void
vm_setup(void)
{
    static int installed;

    if (!installed)
        ck_assert_int_eq(refvm_install(), CLGC_OK);
    installed = 1;
}

static struct refvm_stats
vm_stats(void)
{
    struct refvm_stats s;

    refvm_stats(&s);
    return s;
}

/* A global clock of events: a test compares the ticks two threads took. */
static atomic_int clock_now;

static int
tick(void)
{
    return atomic_fetch_add(&clock_now, 1) + 1;
}

static int
word_of(const int *word)
{
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/* PoCL's CPU device and a context on it, opened with the raw calls. */
struct pocl {
    cl_device_id device;
    cl_context context;
};

static void
pocl_open(struct pocl *p)
{
    cl_int err;

    ck_assert_int_eq(clGetDeviceIDs(test_platform(POCL), test_device_type(), 1,
                                    &p->device, NULL),
                     CL_SUCCESS);
    p->context = clCreateContext(NULL, 1, &p->device, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
}

/* Test a: thread A builds a program while thread B collects. */
struct build_race {
    struct pocl cl;
    int wrapped; /* A calls clgc_clBuildProgram, else clBuildProgram */
    atomic_int about_to_build;
    struct refvm_stats before;
    cl_int built;
    int returned, collected; /* ticks */
    int notify_calls, notify_in_region, notify_word;
    pthread_t a, notify_thread;
};

static void
race_on_stopped(void *arg)
{
    struct build_race *r = arg;

    r->collected = tick();
}

/* Waits until B's collection is done or B is waiting for A, so that B's
 * request always falls inside the build, however slow B is to start. */
static void *
race_hold(void *arg)
{
    struct build_race *r = arg;
    struct refvm_stats s = vm_stats();

    while (s.collections == r->before.collections &&
           s.stalls == r->before.stalls) {
        sched_yield();
        s = vm_stats();
    }
    return NULL;
}

/* PoCL calls it on A's thread before the build returns, and it holds the
 * build open. Through the wrapper it runs with the VM active (clgc's
 * trampoline leaves the wrapper's region for it), so it holds the build in
 * a safe region of its own, as a callback that blocks should. */
static void CL_CALLBACK
race_notify(cl_program program, void *arg)
{
    struct build_race *r = arg;

    r->notify_calls++;
    r->notify_thread = pthread_self();
    r->notify_in_region = clgc_thread_in_region();
    r->notify_word = word_of(refvm_state_word());
    if (r->wrapped)
        clgc_call_safe(race_hold, r);
    else
        race_hold(r);
}

static void *
race_builder(void *arg)
{
    struct build_race *r = arg;
    char src[1024];
    const char *p = src;
    cl_program program;
    cl_int err;

    refvm_register();
    slow_source(src, sizeof(src), 5);
    program = clCreateProgramWithSource(r->cl.context, 1, &p, NULL, &err);
    atomic_store(&r->about_to_build, 1);
    if (r->wrapped)
        r->built =
            clgc_clBuildProgram(program, 1, &r->cl.device, "", race_notify, r);
    else
        r->built =
            clBuildProgram(program, 1, &r->cl.device, "", race_notify, r);
    r->returned = tick();
    refvm_poll(); /* where a raw-call VM thread lets B's collection run */
    clReleaseProgram(program);
    refvm_unregister();
    return NULL;
}

static void *
race_collector(void *arg)
{
    struct build_race *r = arg;

    refvm_register();
    while (!atomic_load(&r->about_to_build)) {
        refvm_poll();
        sched_yield();
    }
    refvm_collect();
    refvm_unregister();
    return NULL;
}

static void
build_race_run(struct build_race *r, int wrapped)
{
    pthread_t b;

    memset(r, 0, sizeof(*r));
    vm_setup();
    pocl_open(&r->cl);
    r->wrapped = wrapped;
    r->before = vm_stats();
    refvm_on_stopped(race_on_stopped, r);
    ck_assert_int_eq(pthread_create(&r->a, NULL, race_builder, r), 0);
    ck_assert_int_eq(pthread_create(&b, NULL, race_collector, r), 0);
    ck_assert_int_eq(pthread_join(r->a, NULL), 0);
    ck_assert_int_eq(pthread_join(b, NULL), 0);
    refvm_on_stopped(NULL, NULL);
    clReleaseContext(r->cl.context);

    ck_assert_int_eq(r->built, CL_SUCCESS);
    ck_assert_int_eq(r->notify_calls, 1);
    ck_assert(pthread_equal(r->notify_thread, r->a));
    ck_assert_uint_eq(vm_stats().collections - r->before.collections, 1);
    ck_assert_uint_eq(vm_stats().violations, 0);
}

START_TEST(collection_completes_during_wrapped_build)
{
    struct build_race r;

    build_race_run(&r, 1);
    ck_assert_int_lt(r.collected, r.returned);
    ck_assert_int_eq(r.notify_in_region, 0);
    ck_assert_int_eq(r.notify_word, CLGC_STATE_RUNNING);
}
END_TEST

START_TEST(collection_waits_for_raw_build)
{
    struct build_race r;

    build_race_run(&r, 0);
    ck_assert_int_lt(r.returned, r.collected);
    ck_assert_int_eq(r.notify_in_region, 0);
    ck_assert_int_eq(r.notify_word, CLGC_STATE_RUNNING);
    ck_assert_uint_ge(vm_stats().stalls - r.before.stalls, 1);
}
END_TEST

/* Test b: A leaves a region while B's collection is in progress. */
struct park {
    sem_t inside, go;
    const int *a_word;
    struct refvm_stats before;
    int a_word_parked, collected, resumed; /* ticks but the word */
};

static void *
park_region(void *arg)
{
    struct park *k = arg;

    sem_post(&k->inside);
    sem_wait(&k->go);
    return NULL;
}

static void *
park_mutator(void *arg)
{
    struct park *k = arg;

    refvm_register();
    k->a_word = refvm_state_word();
    clgc_call_safe(park_region, k);
    k->resumed = tick();
    refvm_unregister();
    return NULL;
}

/* In B's collection, with the world stopped: let A leave its region, and
 * end the collection only once A has parked. */
static void
park_on_stopped(void *arg)
{
    struct park *k = arg;

    sem_post(&k->go);
    while (vm_stats().parks == k->before.parks)
        sched_yield();
    k->a_word_parked = word_of(k->a_word);
    k->collected = tick();
}

START_TEST(leaving_during_collection_parks_once)
{
    struct refvm_stats after;
    struct park k;
    pthread_t a;

    memset(&k, 0, sizeof(k));
    vm_setup();
    ck_assert_int_eq(sem_init(&k.inside, 0, 0), 0);
    ck_assert_int_eq(sem_init(&k.go, 0, 0), 0);
    ck_assert_int_eq(pthread_create(&a, NULL, park_mutator, &k), 0);
    sem_wait(&k.inside);
    /* B is this thread, which the VM does not know: it only collects. */
    k.before = vm_stats();
    refvm_on_stopped(park_on_stopped, &k);
    refvm_collect();
    refvm_on_stopped(NULL, NULL);
    ck_assert_int_eq(pthread_join(a, NULL), 0);
    after = vm_stats();

    ck_assert_uint_eq(after.safepoint_calls - k.before.safepoint_calls, 1);
    ck_assert_uint_eq(after.parks - k.before.parks, 1);
    ck_assert_uint_eq(after.collections - k.before.collections, 1);
    ck_assert_int_eq(k.a_word_parked, CLGC_STATE_SAFE);
    ck_assert_int_lt(k.collected, k.resumed);
    ck_assert_uint_eq(after.violations, 0);
    sem_destroy(&k.inside);
    sem_destroy(&k.go);
}
END_TEST

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

/* Test d: misuse. */

static void *
nothing(void *arg)
{
    return arg;
}

/* Needs a clgc never used, hence first in CK_FORK=no runs; forks so that
 * the process it runs in stays unused. */
START_TEST(install_after_use_is_einuse)
{
    int status;
    pid_t pid = fork();

    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* Any crossing fixes the default runtime for good. */
        clgc_call_safe(nothing, NULL);
        _exit(-refvm_install());
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), -CLGC_EINUSE);
}
END_TEST

START_TEST(partial_safepoint_form_is_einval)
{
    clgc_runtime_t rt;

    refvm_runtime(&rt);
    rt.safepoint = NULL;
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EINVAL);
    refvm_runtime(&rt);
    rt.stop_requested = NULL;
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EINVAL);
    refvm_runtime(&rt);
    rt.thread_state = NULL;
    ck_assert_int_eq(clgc_runtime_install(&rt), CLGC_EINVAL);
    /* Refused installs leave clgc unused: the whole form installs. */
    vm_setup();
    ck_assert_str_eq(clgc_runtime_current()->name, "refvm");
}
END_TEST

START_TEST(install_twice_is_ealready)
{
    vm_setup();
    ck_assert_int_eq(refvm_install(), CLGC_EALREADY);
    ck_assert_str_eq(clgc_runtime_current()->name, "refvm");
}
END_TEST

/* What a thread the VM did not start saw of clgc_call_active. */
struct foreign {
    int rc, rc_again, called;
    int attached, registered, word;
    int word_after, word_after_again; /* back in the thread's own code */
    unsigned threads;
};

static void *
foreign_active(void *arg)
{
    struct foreign *f = arg;

    f->called++;
    f->attached = clgc_thread_attached();
    f->registered = refvm_registered();
    f->word = word_of(refvm_state_word());
    f->threads = vm_stats().threads;
    return NULL;
}

static void *
foreign_thread(void *arg)
{
    struct foreign *f = arg;

    f->rc = clgc_call_active(foreign_active, f, NULL);
    f->word_after = word_of(refvm_state_word());
    f->rc_again = clgc_call_active(foreign_active, f, NULL);
    f->word_after_again = word_of(refvm_state_word());
    return NULL;
}

static struct foreign
foreign_run(void)
{
    struct foreign f;
    pthread_t t;

    memset(&f, 0, sizeof(f));
    f.attached = f.registered = -1;
    ck_assert_int_eq(pthread_create(&t, NULL, foreign_thread, &f), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    return f;
}

START_TEST(refused_thread_is_not_attached)
{
    struct refvm_stats before, after;
    struct foreign f;

    vm_setup();
    before = vm_stats();
    refvm_allow_attach(0);
    f = foreign_run();
    refvm_allow_attach(1);
    after = vm_stats();

    ck_assert_int_eq(f.rc, CLGC_ENOTATTACHED);
    ck_assert_int_eq(f.rc_again, CLGC_ENOTATTACHED);
    ck_assert_int_eq(f.called, 0);
    ck_assert_uint_eq(after.refused - before.refused, 2);
    ck_assert_uint_eq(after.attaches - before.attaches, 0);
    ck_assert_uint_eq(after.threads, before.threads);
}
END_TEST

START_TEST(foreign_thread_attaches_once_detaches_at_exit)
{
    struct refvm_stats before, after;
    struct foreign f;

    vm_setup();
    before = vm_stats();
    f = foreign_run();
    after = vm_stats(); /* joined: its exit destructor has run */

    ck_assert_int_eq(f.rc, CLGC_OK);
    ck_assert_int_eq(f.rc_again, CLGC_OK);
    ck_assert_int_eq(f.called, 2);
    ck_assert_int_eq(f.attached, 1);
    ck_assert_int_eq(f.registered, 1);
    ck_assert_int_eq(f.word, CLGC_STATE_RUNNING);
    /* Between the calls the thread runs no VM code: no collection may
     * wait for it. */
    ck_assert_int_eq(f.word_after, CLGC_STATE_SAFE);
    ck_assert_int_eq(f.word_after_again, CLGC_STATE_SAFE);
    ck_assert_uint_eq(f.threads, before.threads + 1);
    ck_assert_uint_eq(after.attaches - before.attaches, 1);
    ck_assert_uint_eq(after.detaches - before.detaches, 1);
    ck_assert_uint_eq(after.threads, before.threads);
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

/* A cheap wrapped call: the platform's name, read and dropped. */
static cl_int
platform_name(cl_platform_id platform)
{
    char name[128];

    return clgc_clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof(name),
                                  name, NULL);
}

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

/* Test e: mutators, a collector and wrapper calls at once. */
#define MUTATORS 2
#define ALLOCS 3000
#define COLLECTIONS 1000
#define EVENTS 40

struct world {
    cl_platform_id platform;
    cl_event events[EVENTS];
    atomic_ulong allocs;
    atomic_int failures, stopped_allocs, collector_done;
};

/* Holds the world stopped a while, giving the other threads the CPU: a
 * thread that should be stopped but is not allocates meanwhile. */
static void
world_on_stopped(void *arg)
{
    struct world *w = arg;
    unsigned long before = vm_stats().allocated;

    for (int i = 0; i < 20; i++)
        sched_yield();
    if (vm_stats().allocated != before)
        atomic_fetch_add(&w->stopped_allocs, 1);
}

/* What root slot `slot` of thread `id` holds after its allocations
 * 0 .. n-1: allocation k went into slot k % REFVM_ROOTS. */
static long
churn_held(long id, long n, int slot)
{
    if (n <= slot)
        return -1;
    return id * 1000000 + (n - 1) - (n - 1 - slot) % REFVM_ROOTS;
}

/* Allocation number i of thread id. Before it, the thread reads its roots
 * for a while without polling, as VM code runs between safepoints: each
 * object must have survived every collection with its value intact, and
 * each read checks that no collection is running (refvm_load). */
static void
churn(struct world *w, long id, long i)
{
    for (int k = 0; k < 32 * REFVM_ROOTS; k++)
        if (refvm_load(k % REFVM_ROOTS) != churn_held(id, i, k % REFVM_ROOTS))
            atomic_fetch_add(&w->failures, 1);
    refvm_alloc((int)(i % REFVM_ROOTS), id * 1000000 + i);
    atomic_fetch_add(&w->allocs, 1);
}

static void *
mutator(void *arg)
{
    struct world *w = arg;
    static atomic_long ids = 1;
    long id = atomic_fetch_add(&ids, 1);

    refvm_register();
    /* Until the collector is done, so that every collection meets them. */
    for (long i = 0; i < ALLOCS || !atomic_load(&w->collector_done); i++) {
        churn(w, id, i);
        if (i % 64 == 0 && platform_name(w->platform) != CL_SUCCESS)
            atomic_fetch_add(&w->failures, 1);
        refvm_poll();
    }
    refvm_unregister();
    return NULL;
}

static void *
collector(void *arg)
{
    struct world *w = arg;

    refvm_register();
    for (long i = 0; i < COLLECTIONS; i++) {
        unsigned long allocs = atomic_load(&w->allocs);

        /* Let the others run between collections: each collection then
         * meets threads in the middle of their work. */
        churn(w, 0, i);
        while (atomic_load(&w->allocs) < allocs + 2 * MUTATORS + 1) {
            refvm_poll();
            sched_yield();
        }
        refvm_collect();
    }
    atomic_store(&w->collector_done, 1);
    refvm_unregister();
    return NULL;
}

/* Waits in a wrapper for each user event in turn, which completer() sets. */
static void *
waiter(void *arg)
{
    struct world *w = arg;

    refvm_register();
    for (long i = 0; i < EVENTS; i++) {
        churn(w, 100, i);
        if (clgc_clWaitForEvents(1, &w->events[i]) != CL_SUCCESS)
            atomic_fetch_add(&w->failures, 1);
    }
    refvm_unregister();
    return NULL;
}

static void *
completer(void *arg)
{
    struct world *w = arg;

    refvm_register();
    for (long i = 0; i < EVENTS; i++) {
        churn(w, 200, i);
        if (clgc_clSetUserEventStatus(w->events[i], CL_COMPLETE) != CL_SUCCESS)
            atomic_fetch_add(&w->failures, 1);
        refvm_poll();
    }
    refvm_unregister();
    return NULL;
}

START_TEST(mutators_collector_and_wrappers_at_once)
{
    static void *(*const roles[])(void *) = {mutator, mutator, collector,
                                             waiter, completer};
    enum { NROLES = sizeof(roles) / sizeof(roles[0]) };
    struct refvm_stats before, after;
    struct world w;
    struct pocl cl;
    pthread_t t[NROLES];
    unsigned long allocs;
    int failures, stopped_allocs;
    cl_int err;

    memset(&w, 0, sizeof(w));
    vm_setup();
    pocl_open(&cl);
    w.platform = test_platform(POCL);
    for (int i = 0; i < EVENTS; i++) {
        w.events[i] = clCreateUserEvent(cl.context, &err);
        ck_assert_int_eq(err, CL_SUCCESS);
    }
    before = vm_stats();
    refvm_on_stopped(world_on_stopped, &w);
    for (int i = 0; i < NROLES; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, roles[i], &w), 0);
    for (int i = 0; i < NROLES; i++)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    refvm_on_stopped(NULL, NULL);
    /* Every thread has unregistered: all that is left is garbage. */
    refvm_collect();
    after = vm_stats();
    allocs = atomic_load(&w.allocs);
    for (int i = 0; i < EVENTS; i++)
        clReleaseEvent(w.events[i]);
    clReleaseContext(cl.context);

    failures = atomic_load(&w.failures);
    stopped_allocs = atomic_load(&w.stopped_allocs);
    ck_assert_int_eq(failures, 0);
    ck_assert_int_eq(stopped_allocs, 0);
    ck_assert_uint_eq(after.violations, 0);
    ck_assert_uint_eq(after.collections - before.collections, COLLECTIONS + 1);
    ck_assert_uint_ge(after.allocated - before.allocated,
                      MUTATORS * ALLOCS + COLLECTIONS + 2 * EVENTS);
    ck_assert_uint_eq(after.allocated - before.allocated, allocs);
    ck_assert_uint_eq(after.freed, after.allocated);
    ck_assert_uint_eq(after.threads, 0);
}
END_TEST

/* The ticker: while VM thread A waits for a long kernel, VM thread B
 * collects and counts its collections until A is done. Through
 * clgc_wait_for_events A sleeps in a safe region and B keeps ticking; in
 * a raw clWaitForEvents, outside any region, A reaches no safepoint until
 * the kernel is over, and B's first collection waits for all of it. */

struct ticker {
    atomic_int waiting, done;
    unsigned long ticks;
};

static void *
ticker_run(void *arg)
{
    struct ticker *t = arg;

    refvm_register();
    while (!atomic_load(&t->waiting))
        refvm_poll();
    while (!atomic_load(&t->done)) {
        refvm_collect();
        t->ticks++;
    }
    refvm_unregister();
    return NULL;
}

static unsigned long
ticks_during_wait(int cooperative)
{
    struct ticker t = {0, 0, 0};
    size_t global = 1024;
    int n = 700000; /* about 0.4 s on PoCL here */
    struct pocl p;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_mem buf;
    cl_event done;
    pthread_t b;
    cl_int err;

    pocl_open(&p);
    queue = clCreateCommandQueueWithProperties(p.context, p.device, NULL, &err);
    program =
        clCreateProgramWithSource(p.context, 1, &test_spin_src, NULL, &err);
    ck_assert_int_eq(clBuildProgram(program, 1, &p.device, "", NULL, NULL), 0);
    kernel = clCreateKernel(program, "spin", &err);
    buf = clCreateBuffer(p.context, CL_MEM_READ_WRITE, global * sizeof(float),
                         NULL, &err);
    ck_assert_int_eq(clSetKernelArg(kernel, 0, sizeof(buf), &buf), 0);
    ck_assert_int_eq(clSetKernelArg(kernel, 1, sizeof(n), &n), 0);

    refvm_register();
    ck_assert_int_eq(pthread_create(&b, NULL, ticker_run, &t), 0);
    ck_assert_int_eq(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global,
                                            NULL, 0, NULL, &done),
                     CL_SUCCESS);
    ck_assert_int_eq(clFlush(queue), CL_SUCCESS);
    atomic_store(&t.waiting, 1);
    if (cooperative)
        ck_assert_int_eq(clgc_wait_for_events(1, &done), CL_SUCCESS);
    else
        ck_assert_int_eq(clWaitForEvents(1, &done), CL_SUCCESS);
    atomic_store(&t.done, 1);
    refvm_poll(); /* where the raw waiter lets B's collection through */
    refvm_unregister();
    ck_assert_int_eq(pthread_join(b, NULL), 0);

    clReleaseEvent(done);
    clReleaseMemObject(buf);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(p.context);
    return t.ticks;
}

START_TEST(ticker_runs_during_cooperative_wait)
{
    unsigned long cooperative, raw;

    vm_setup();
    cooperative = ticks_during_wait(1);
    raw = ticks_during_wait(0);
    ck_assert_uint_le(raw, 1);
    ck_assert_uint_gt(cooperative, raw);
}
END_TEST

/* Test f: a callback clgc_clSetEventCallback delivers on PoCL's own
 * thread. clgc attaches that thread to the VM, so while the callback runs
 * it is a mutator like any other and must stop at its safepoints for
 * every collection; once it has returned, the thread is back in PoCL,
 * where it may block for as long as it likes, and no collection may wait
 * for it.
 *
 * Three callbacks on one kernel's completion event, which PoCL calls in
 * the order they were set, one after the other, on the thread that
 * completes the kernel: a long one through the wrapper, which allocates
 * and polls while this thread collects; a short one through the wrapper,
 * which finds the thread attached already; and a raw one, which holds
 * the thread in PoCL (outside any VM code) while this thread collects
 * again. The kernel waits for a user event, so the callbacks are all set
 * before it can complete. */
#define CB_COLLECTIONS 16
#define CB_IDLE_COLLECTIONS 8
#define CB_VALUE 4242

static const char *nop_src = "__kernel void nop(void)\n"
                             "{\n"
                             "}\n";

/* What a callback saw of its thread on entry. */
struct cb_seen {
    int step; /* its place among the callbacks, from 1 */
    pthread_t thread;
    int attached, registered, in_region, word;
};

struct pocl_cb {
    sem_t entered, idle, release;
    atomic_int steps, inside, collector_done;
    atomic_ulong stopped_inside, stopped_running;
    const int *_Atomic word; /* the callback thread's state word */
    struct cb_seen seen[3];
    long bad_loads, carried;
    struct refvm_stats before, during, idle_before, idle_after, after;
};

static void
cb_observe(struct pocl_cb *c, struct cb_seen *s)
{
    s->step = atomic_fetch_add(&c->steps, 1) + 1;
    s->thread = pthread_self();
    s->attached = clgc_thread_attached();
    s->registered = refvm_registered();
    s->in_region = clgc_thread_in_region();
    s->word = word_of(refvm_state_word());
}

/* The long callback: VM code, with a root of its own, polling as VM code
 * does until this thread's collections are over. */
static void CL_CALLBACK
cb_mutator(cl_event event, cl_int status, void *arg)
{
    struct pocl_cb *c = arg;

    (void)event;
    (void)status;
    cb_observe(c, &c->seen[0]);
    atomic_store(&c->word, refvm_state_word());
    refvm_alloc(0, CB_VALUE);
    atomic_store(&c->inside, 1);
    sem_post(&c->entered);
    while (!atomic_load(&c->collector_done)) {
        if (refvm_load(0) != CB_VALUE)
            c->bad_loads++;
        refvm_poll();
    }
    atomic_store(&c->inside, 0);
}

/* The short callback: the thread is the VM's still, roots and all. */
static void CL_CALLBACK
cb_visitor(cl_event event, cl_int status, void *arg)
{
    struct pocl_cb *c = arg;

    (void)event;
    (void)status;
    cb_observe(c, &c->seen[1]);
    c->carried = refvm_load(0);
}

/* The raw callback: PoCL's thread, attached, in PoCL and not in VM code.
 * It stays here until the test has collected, if it is the last of the
 * three (else the order is wrong, which the test reports). */
static void CL_CALLBACK
cb_idle(cl_event event, cl_int status, void *arg)
{
    struct pocl_cb *c = arg;

    (void)event;
    (void)status;
    cb_observe(c, &c->seen[2]);
    sem_post(&c->idle);
    if (c->seen[2].step == 3)
        while (sem_wait(&c->release) != 0)
            continue;
}

/* Every collection, with the world stopped: was the long callback inside
 * its loop, and what did its word say? */
static void
cb_on_stopped(void *arg)
{
    struct pocl_cb *c = arg;
    const int *word = atomic_load(&c->word);

    if (atomic_load(&c->inside))
        atomic_fetch_add(&c->stopped_inside, 1);
    if (word != NULL && word_of(word) != CLGC_STATE_SAFE)
        atomic_fetch_add(&c->stopped_running, 1);
}

static void *
cb_sem_wait(void *sem)
{
    while (sem_wait(sem) != 0)
        continue;
    return NULL;
}

/* A VM thread waits in a safe region, as it would in any blocking call. */
static void
vm_sem_wait(sem_t *sem)
{
    clgc_call_safe(cb_sem_wait, sem);
}

static void
pocl_cb_run(struct pocl_cb *c)
{
    size_t one = 1;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_event gate, done;
    struct pocl cl;
    cl_int err;

    memset(c, 0, sizeof(*c));
    ck_assert_int_eq(sem_init(&c->entered, 0, 0), 0);
    ck_assert_int_eq(sem_init(&c->idle, 0, 0), 0);
    ck_assert_int_eq(sem_init(&c->release, 0, 0), 0);
    vm_setup();
    pocl_open(&cl);
    queue =
        clCreateCommandQueueWithProperties(cl.context, cl.device, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    program = clCreateProgramWithSource(cl.context, 1, &nop_src, NULL, &err);
    ck_assert_int_eq(clBuildProgram(program, 1, &cl.device, "", NULL, NULL),
                     CL_SUCCESS);
    kernel = clCreateKernel(program, "nop", &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    gate = clCreateUserEvent(cl.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &one, NULL,
                                            1, &gate, &done),
                     CL_SUCCESS);
    ck_assert_int_eq(clFlush(queue), CL_SUCCESS);

    /* This thread is the VM's collector from here on. */
    refvm_register();
    c->before = vm_stats();
    refvm_on_stopped(cb_on_stopped, c);
    ck_assert_int_eq(clgc_clSetEventCallback(done, CL_COMPLETE, cb_mutator, c),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetEventCallback(done, CL_COMPLETE, cb_visitor, c),
                     CL_SUCCESS);
    ck_assert_int_eq(clSetEventCallback(done, CL_COMPLETE, cb_idle, c),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);

    vm_sem_wait(&c->entered);
    /* The long callback loops until these are over: each one meets it. */
    for (int i = 0; i < CB_COLLECTIONS; i++)
        refvm_collect();
    c->during = vm_stats();
    atomic_store(&c->collector_done, 1);

    vm_sem_wait(&c->idle);
    /* Had clgc left the word RUNNING, the collections below would wait
     * for PoCL's thread for ever: fail now instead. */
    ck_assert_int_eq(c->seen[2].word, CLGC_STATE_SAFE);
    c->idle_before = vm_stats();
    for (int i = 0; i < CB_IDLE_COLLECTIONS; i++)
        refvm_collect();
    c->idle_after = vm_stats();
    sem_post(&c->release);

    ck_assert_int_eq(clgc_clWaitForEvents(1, &done), CL_SUCCESS);
    /* Wherever PoCL's thread is now, it runs no VM code. */
    for (int i = 0; i < CB_IDLE_COLLECTIONS; i++)
        refvm_collect();
    c->after = vm_stats();
    refvm_on_stopped(NULL, NULL);
    refvm_unregister();
    test_event_let_go(done);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(cl.context);
    sem_destroy(&c->entered);
    sem_destroy(&c->idle);
    sem_destroy(&c->release);

    /* The three callbacks ran in order, on one thread of PoCL's. */
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(c->seen[i].step, i + 1);
        ck_assert(pthread_equal(c->seen[i].thread, c->seen[0].thread));
        ck_assert_int_eq(c->seen[i].attached, 1);
        ck_assert_int_eq(c->seen[i].registered, 1);
        ck_assert_int_eq(c->seen[i].in_region, 0);
    }
    ck_assert_msg(!pthread_equal(c->seen[0].thread, pthread_self()),
                  "PoCL ran the completion callbacks on the test's thread");
    ck_assert_uint_eq(vm_stats().violations, 0);
}

START_TEST(callback_on_pocl_thread_parks_for_collections)
{
    struct pocl_cb c;

    pocl_cb_run(&c);
    ck_assert_int_eq(c.seen[0].word, CLGC_STATE_RUNNING);
    /* Every collection stopped the world while the callback was inside
     * its loop, with its thread parked, and its object survived them. */
    ck_assert_uint_eq(c.during.collections - c.before.collections,
                      CB_COLLECTIONS);
    ck_assert_uint_eq(atomic_load(&c.stopped_inside), CB_COLLECTIONS);
    ck_assert_uint_eq(atomic_load(&c.stopped_running), 0);
    ck_assert_uint_ge(c.during.parks - c.before.parks, 1);
    ck_assert_int_eq(c.bad_loads, 0);
    /* Attached once, and still the VM's in the next callback. */
    ck_assert_uint_eq(c.idle_after.attaches - c.before.attaches, 1);
    ck_assert_uint_eq(c.idle_after.detaches - c.before.detaches, 0);
    ck_assert_int_eq(c.seen[1].word, CLGC_STATE_RUNNING);
    ck_assert_int_eq(c.carried, CB_VALUE);
}
END_TEST

START_TEST(pocl_thread_after_callback_never_delays_collections)
{
    struct pocl_cb c;

    pocl_cb_run(&c);
    /* Back in PoCL, still attached, but in native code. */
    ck_assert_int_eq(c.seen[2].word, CLGC_STATE_SAFE);
    ck_assert_uint_eq(c.idle_after.threads, c.before.threads + 1);
    ck_assert_uint_eq(c.idle_after.collections - c.idle_before.collections,
                      CB_IDLE_COLLECTIONS);
    ck_assert_uint_eq(c.idle_after.stalls, c.idle_before.stalls);
    /* And once its callbacks are all over. */
    ck_assert_uint_eq(c.after.collections - c.idle_after.collections,
                      CB_IDLE_COLLECTIONS);
    ck_assert_uint_eq(c.after.stalls, c.idle_before.stalls);
    /* Each collection found the thread's word SAFE. */
    ck_assert_uint_eq(atomic_load(&c.stopped_running), 0);
}
END_TEST

static Suite *
safepoint_suite(void)
{
    Suite *s = suite_create("safepoint");
    TCase *install = tcase_create("install");
    TCase *order = tcase_create("order");
    TCase *regions = tcase_create("regions");

    /* First: see the top of the file. */
    tcase_add_test(install, install_after_use_is_einuse);
    tcase_add_test(install, partial_safepoint_form_is_einval);
    tcase_add_test(install, install_twice_is_ealready);
    tcase_add_test(install, refused_thread_is_not_attached);
    tcase_add_test(install, foreign_thread_attaches_once_detaches_at_exit);
    suite_add_tcase(s, install);
    /* PoCL's first build in a process takes seconds here. */
    tcase_set_timeout(order, 60);
    test_add_pocl_test(order, collection_completes_during_wrapped_build,
                       "PoCL builds on the calling thread");
    test_add_pocl_test(order, collection_waits_for_raw_build,
                       "PoCL builds on the calling thread");
    tcase_add_test(order, leaving_during_collection_parks_once);
    tcase_add_test(order, ticker_runs_during_cooperative_wait);
    suite_add_tcase(s, order);
    tcase_add_test(regions, regions_nest_to_depth_three);
    tcase_add_test(regions, call_active_leaves_a_running_thread_running);
    tcase_add_test(regions, callback_that_detaches_its_thread);
    suite_add_tcase(s, regions);
    return s;
}

static Suite *
threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("threads");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, mutators_collector_and_wrappers_at_once);
    suite_add_tcase(s, tc);
    /* After the case above, which counts every registered thread: the
     * PoCL thread these attach stays attached until it exits. A build,
     * slow under the sanitizers. */
    tc = tcase_create("pocl callback");
    tcase_set_timeout(tc, 300);
    test_add_pocl_test(tc, callback_on_pocl_thread_parks_for_collections,
                       "PoCL calls one event's callbacks in order on one "
                       "thread");
    test_add_pocl_test(tc, pocl_thread_after_callback_never_delays_collections,
                       "PoCL calls one event's callbacks in order on one "
                       "thread");
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(safepoint_suite());
    int failed;

    srunner_add_suite(sr, threads_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed; /* far below 77, which automake takes for "skipped" */
}
