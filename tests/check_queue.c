/* Completion queues (clgc/queue.h) on the real PoCL device: a queue's fd
 * tells an event loop when to drain, whatever the last drain's max was;
 * handlers run once each, in completion order, on the draining thread;
 * misuse (a handler closing or draining its own queue, two drainers, a
 * close under a thread that defers to the queue) is refused with a code,
 * never a crash; a handler's failure names what posted it; and a close
 * never frees a queue under the completion that let it close (the
 * "threads" suite here, which ./run also runs under TSan). */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "testutil.h"

static cl_event
user_event(cl_context context)
{
    cl_int err;
    cl_event ev = clCreateUserEvent(context, &err);

    ck_assert_int_eq(err, CL_SUCCESS);
    return ev;
}

static clgc_queue_t *
new_queue(void)
{
    clgc_queue_t *q = NULL;

    ck_assert_int_eq(clgc_queue_create(&q), CLGC_OK);
    ck_assert_ptr_nonnull(q);
    ck_assert_int_ge(clgc_queue_fd(q), 0);
    return q;
}

/* Whether the queue's fd is readable within timeout_ms (-1: until it is). */
static int
polled(const clgc_queue_t *q, int timeout_ms)
{
    struct pollfd p = {clgc_queue_fd(q), POLLIN, 0};

    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static int
readable(const clgc_queue_t *q)
{
    return polled(q, 0);
}

/* Once the queue's fd is readable: at once where the driver calls back
 * inside the call that completes the event (PoCL), later where its own
 * thread does (NVIDIA). */
static int
awaited(const clgc_queue_t *q)
{
    return polled(q, -1);
}

/* What an event handler saw. */
struct seen {
    sem_t ran;
    int calls;
    cl_int status;
    pthread_t thread;
};

static void
record(cl_event event, cl_int status, void *data)
{
    struct seen *s = data;

    (void)event;
    s->calls++;
    s->status = status;
    s->thread = pthread_self();
    sem_post(&s->ran);
}

static void
seen_init(struct seen *s)
{
    *s = (struct seen){.status = 1};
    sem_init(&s->ran, 0, 0);
}

static void
count_ran(cl_event event, cl_int status, void *data)
{
    (void)event;
    (void)status;
    atomic_fetch_add((atomic_int *)data, 1);
}

static void CL_CALLBACK
count_ran_cl(cl_event event, cl_int status, void *data)
{
    count_ran(event, status, data);
}

/* Posted functions write their tag into a log, in the order they ran. */
struct log {
    int n;
    int tags[16];
};

struct tagged {
    struct log *log;
    int tag;
};

static void
log_tag(void *data)
{
    struct tagged *t = data;

    if (t->log->n < 16)
        t->log->tags[t->log->n] = t->tag;
    t->log->n++;
}

START_TEST(queue_fd_says_when_to_drain)
{
    cl_context context = test_pocl_context();
    clgc_queue_t *q = new_queue();
    cl_event ev[3];
    struct seen s[3];

    for (int i = 0; i < 3; i++) {
        ev[i] = user_event(context);
        seen_init(&s[i]);
        ck_assert_int_eq(clgc_event_post(ev[i], q, record, &s[i]), CL_SUCCESS);
    }
    ck_assert_int_eq(readable(q), 0);
    ck_assert_int_eq(clgc_queue_drain(q, 0), 0);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_EBUSY);

    /* PoCL calls back inside clSetUserEventStatus, on this thread: both
     * completions are posted when it returns, and one wakeup covers them. */
    ck_assert_int_eq(clSetUserEventStatus(ev[0], CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(ev[1], CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(readable(q), 1);
    ck_assert_int_eq(s[0].calls + s[1].calls, 0); /* not before a drain */
    ck_assert_int_eq(clgc_queue_drain(q, 1), 1);
    ck_assert_int_eq(s[0].calls, 1); /* in completion order */
    ck_assert_int_eq(readable(q), 1);
    ck_assert_int_eq(clgc_queue_drain(q, 0), 1);
    ck_assert_int_eq(s[1].calls, 1);
    ck_assert(pthread_equal(s[1].thread, pthread_self()));
    ck_assert_int_eq(readable(q), 0);

    /* Closing runs what is still pending. */
    ck_assert_int_eq(clSetUserEventStatus(ev[2], CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    ck_assert_int_eq(s[2].calls, 1);
    ck_assert_int_eq(s[2].status, CL_COMPLETE);
    for (int i = 0; i < 3; i++)
        clReleaseEvent(ev[i]);
    clReleaseContext(context);
}
END_TEST

/* Issue 10, item 2: a drain bounded by max left the fd unreadable with
 * completions pending (those pushed while older ones were still ready),
 * and an event loop that drains at most N per wakeup never woke again. */
START_TEST(bounded_drain_keeps_the_fd_readable)
{
    clgc_queue_t *q = new_queue();
    struct log log = {0};
    struct tagged t[4];

    for (int i = 0; i < 4; i++)
        t[i] = (struct tagged){&log, 'A' + i};
    ck_assert_int_eq(clgc_queue_post(q, log_tag, &t[0]), CLGC_OK);
    ck_assert_int_eq(clgc_queue_post(q, log_tag, &t[1]), CLGC_OK);
    ck_assert_int_eq(readable(q), 1);
    ck_assert_int_eq(clgc_queue_drain(q, 1), 1); /* A */
    ck_assert_int_eq(readable(q), 1);            /* B */
    ck_assert_int_eq(clgc_queue_post(q, log_tag, &t[2]), CLGC_OK);
    ck_assert_int_eq(clgc_queue_drain(q, 1), 1); /* B */
    ck_assert_int_eq(readable(q), 1);            /* C */
    ck_assert_int_eq(clgc_queue_post(q, log_tag, &t[3]), CLGC_OK);
    ck_assert_int_eq(readable(q), 1); /* C, D */
    ck_assert_int_eq(clgc_queue_drain(q, 1), 1);
    ck_assert_int_eq(readable(q), 1); /* D */
    ck_assert_int_eq(clgc_queue_drain(q, 5), 1);
    ck_assert_int_eq(readable(q), 0);
    ck_assert_int_eq(clgc_queue_drain(q, 1), 0);
    ck_assert_int_eq(log.n, 4);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(log.tags[i], 'A' + i);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
}
END_TEST

START_TEST(queued_failure_reports_its_status)
{
    cl_context context = test_pocl_context();
    clgc_queue_t *q = new_queue();
    cl_event ev = user_event(context);
    struct pollfd p = {clgc_queue_fd(q), POLLIN, 0};
    struct seen s;

    seen_init(&s);
    ck_assert_int_eq(clgc_event_post(ev, q, record, &s), CL_SUCCESS);
    ck_assert_int_eq(clSetUserEventStatus(ev, -9), CL_SUCCESS);
    ck_assert_int_eq(test_poll(&p, "the queue's fd to be readable"), 1);
    ck_assert_int_eq(clgc_queue_drain(q, 0), 1);
    ck_assert_int_eq(s.status, -9);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    clReleaseEvent(ev);
    clReleaseContext(context);
}
END_TEST

/* An event loop stays free while a kernel runs: it polls the queue's fd
 * between pieces of other work and gets the completion exactly once. */
START_TEST(loop_works_while_the_kernel_runs)
{
    cl_platform_id platform = test_platform("Portable Computing Language");
    clgc_queue_t *q = new_queue();
    struct pollfd p = {clgc_queue_fd(q), POLLIN, 0};
    size_t global = 1024;
    int n = 1000;
    unsigned long work = 0;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;
    cl_mem buf;
    cl_event gate, done;
    struct seen s;
    cl_int err;

    ck_assert_int_eq(
        clGetDeviceIDs(platform, test_device_type(), 1, &device, NULL), 0);
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    queue = test_queue_create(context, device);
    program = clCreateProgramWithSource(context, 1, &test_spin_src, NULL, &err);
    test_assert_built(clBuildProgram(program, 1, &device, "", NULL, NULL),
                      program, device);
    kernel = clCreateKernel(program, "spin", &err);
    buf = clCreateBuffer(context, CL_MEM_READ_WRITE, global * sizeof(float),
                         NULL, &err);
    ck_assert_int_eq(clSetKernelArg(kernel, 0, sizeof(buf), &buf), 0);
    ck_assert_int_eq(clSetKernelArg(kernel, 1, sizeof(n), &n), 0);
    /* The kernel waits for the gate, which the loop opens once it has done
     * some work: the kernel runs while the loop works however fast the
     * machine, valgrind or the load make either. */
    gate = clCreateUserEvent(context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global,
                                            NULL, 1, &gate, &done),
                     CL_SUCCESS);
    ck_assert_int_eq(clFlush(queue), CL_SUCCESS);
    seen_init(&s);
    ck_assert_int_eq(clgc_event_post(done, q, record, &s), CL_SUCCESS);
    while (work < 1000) {
        ck_assert_int_eq(poll(&p, 1, 0), 0); /* nothing can complete */
        work++;                              /* the loop's other work */
    }
    ck_assert_int_eq(s.calls, 0);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    while (s.calls == 0)
        if (poll(&p, 1, -1) == 1)
            ck_assert_int_ge(clgc_queue_drain(q, 0), 0);
    ck_assert_int_eq(s.calls, 1);
    ck_assert_int_eq(s.status, CL_COMPLETE);
    ck_assert_int_eq(clgc_queue_drain(q, 0), 0);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    clReleaseMemObject(buf);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
}
END_TEST

static void
nothing(void *data)
{
    (void)data;
}

START_TEST(bad_input_is_refused)
{
    clgc_queue_t *q = new_queue();

    ck_assert_int_eq(clgc_queue_create(NULL), CLGC_EINVAL);
    ck_assert_int_eq(clgc_queue_close(NULL), CLGC_EINVAL);
    ck_assert_int_eq(clgc_queue_drain(NULL, 0), CLGC_EINVAL);
    ck_assert_int_eq(clgc_queue_drain(NULL, 1), CLGC_EINVAL);
    ck_assert_int_eq(clgc_queue_fd(NULL), -1);
    ck_assert_int_eq(clgc_queue_post(NULL, nothing, NULL), CLGC_EINVAL);
    ck_assert_int_eq(clgc_queue_post(q, NULL, NULL), CLGC_EINVAL);
    ck_assert_int_eq(clgc_queue_drain(q, 0), 0); /* the refused post */
    ck_assert_int_eq(clgc_queue_drain(q, UINT_MAX), 0);
    ck_assert_int_eq(readable(q), 0);
    ck_assert_str_eq(clgc_err_name(CLGC_EDRAINING), "EDRAINING");
    ck_assert_str_eq(clgc_err_name(CLGC_ESYSTEM), "ESYSTEM");
    /* CLGC_KNOWN is a success, apart from the error codes. */
    ck_assert_int_gt(CLGC_KNOWN, 0);
    ck_assert_str_eq(clgc_err_name(CLGC_KNOWN), "UNKNOWN");
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
}
END_TEST

/* An fd that cannot be read (here: the caller broke the rule and put
 * another file in its place): the drain says so and runs nothing, and the
 * close, which needs no read, still runs what is pending and frees it. */
START_TEST(unreadable_fd_is_reported)
{
    clgc_queue_t *q = new_queue();
    struct log log = {0};
    struct tagged t = {&log, 'A'};
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

    ck_assert_int_ge(null, 0);
    ck_assert_int_eq(clgc_queue_post(q, log_tag, &t), CLGC_OK);
    ck_assert_int_eq(dup2(null, clgc_queue_fd(q)), clgc_queue_fd(q));
    errno = 0;
    ck_assert_int_eq(clgc_queue_drain(q, 0), CLGC_ESYSTEM);
    ck_assert_int_eq(errno, EBADF);
    ck_assert_int_eq(log.n, 0);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    ck_assert_int_eq(log.n, 1);
    close(null);
}
END_TEST

/* No file descriptor left for the eventfd: CLGC_ESYSTEM with errno
 * kept, and *queue untouched. The limit is put back after. */
START_TEST(create_reports_a_failed_eventfd)
{
    clgc_queue_t *q = (clgc_queue_t *)&q; /* a value create must keep */
    struct rlimit old, none;
    int lowest = dup(0);

    ck_assert_int_ge(lowest, 0);
    close(lowest);
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
    none = (struct rlimit){(rlim_t)lowest, old.rlim_max};
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &none), 0);
    errno = 0;
    ck_assert_int_eq(clgc_queue_create(&q), CLGC_ESYSTEM);
    ck_assert_int_eq(errno, EMFILE);
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
    ck_assert_ptr_eq(q, (clgc_queue_t *)&q);
    ck_assert_int_eq(clgc_queue_create(&q), CLGC_OK);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
}
END_TEST

/* A handler that closes or drains its own queue. Issue 10, item 3: the
 * close freed the queue under the drain that ran the handler. */
struct reentry {
    clgc_queue_t *q;
    int ran, close_result, drain_result, post_result;
    struct log log;
    struct tagged later;
};

static void
reenter(void *data)
{
    struct reentry *r = data;

    r->ran++;
    r->close_result = clgc_queue_close(r->q);
    r->drain_result = clgc_queue_drain(r->q, 0);
    /* Posting to its own queue is fine: it runs in a later drain. */
    r->post_result = clgc_queue_post(r->q, log_tag, &r->later);
}

START_TEST(handler_cannot_close_or_drain_its_queue)
{
    struct reentry r = {.q = new_queue()};
    struct tagged other = {&r.log, 'x'};

    r.later = (struct tagged){&r.log, 'L'};
    ck_assert_int_eq(clgc_queue_post(r.q, reenter, &r), CLGC_OK);
    ck_assert_int_eq(clgc_queue_post(r.q, log_tag, &other), CLGC_OK);
    ck_assert_int_eq(clgc_queue_drain(r.q, 0), 2);
    ck_assert_int_eq(r.ran, 1);
    ck_assert_int_eq(r.close_result, CLGC_EDRAINING);
    ck_assert_int_eq(r.drain_result, CLGC_EDRAINING);
    ck_assert_int_eq(r.post_result, CLGC_OK);
    ck_assert_int_eq(r.log.n, 1); /* 'x'; 'L' waits for the next drain */
    ck_assert_int_eq(readable(r.q), 1);
    ck_assert_int_eq(clgc_queue_drain(r.q, 0), 1);
    ck_assert_int_eq(r.log.n, 2);
    ck_assert_int_eq(r.log.tags[1], 'L');

    /* The same from a handler that the close itself runs: the close that
     * runs it refuses the inner close, and then sees the post the handler
     * made, so it refuses too rather than leave it unrun. */
    ck_assert_int_eq(clgc_queue_post(r.q, reenter, &r), CLGC_OK);
    ck_assert_int_eq(clgc_queue_close(r.q), CLGC_EBUSY);
    ck_assert_int_eq(r.ran, 2);
    ck_assert_int_eq(r.close_result, CLGC_EDRAINING);
    ck_assert_int_eq(r.drain_result, CLGC_EDRAINING);
    ck_assert_int_eq(r.log.n, 2);
    ck_assert_int_eq(clgc_queue_close(r.q), CLGC_OK); /* runs 'L' */
    ck_assert_int_eq(r.log.n, 3);
}
END_TEST

/* A handler that blocks while another thread tries to drain and close
 * the queue: one drainer at a time. */
struct blocker {
    clgc_queue_t *q;
    sem_t entered, leave;
    int drained;
};

static void
block(void *data)
{
    struct blocker *b = data;

    sem_post(&b->entered);
    test_sem_wait(&b->leave, "the test to let the blocking handler go");
}

static void *
drain_on_thread(void *data)
{
    struct blocker *b = data;

    b->drained = clgc_queue_drain(b->q, 0);
    return NULL;
}

START_TEST(two_drainers_are_refused)
{
    struct blocker b = {.q = new_queue()};
    pthread_t t;

    sem_init(&b.entered, 0, 0);
    sem_init(&b.leave, 0, 0);
    ck_assert_int_eq(clgc_queue_post(b.q, block, &b), CLGC_OK);
    ck_assert_int_eq(pthread_create(&t, NULL, drain_on_thread, &b), 0);
    test_sem_wait(&b.entered, "the drain thread to enter the blocking handler");
    ck_assert_int_eq(clgc_queue_drain(b.q, 0), CLGC_EDRAINING);
    ck_assert_int_eq(clgc_queue_close(b.q), CLGC_EDRAINING);
    sem_post(&b.leave);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(b.drained, 1);
    ck_assert_int_eq(clgc_queue_close(b.q), CLGC_OK);
}
END_TEST

/* 10,000 posts pending: one drain of max 0 runs them all, in order, and
 * so does a close; a bounded drain runs exactly max. */
#define MANY 10000

struct counter {
    int next, out_of_order;
};

struct numbered {
    struct counter *c;
    int tag;
};

static void
run_numbered(void *data)
{
    struct numbered *n = data;

    if (n->tag != n->c->next)
        n->c->out_of_order++;
    n->c->next++;
}

START_TEST(many_pending_then_close)
{
    static struct numbered n[2 * MANY];
    struct counter c = {0};
    clgc_queue_t *q = new_queue();

    for (int i = 0; i < 2 * MANY; i++) {
        n[i] = (struct numbered){&c, i};
        ck_assert_int_eq(clgc_queue_post(q, run_numbered, &n[i]), CLGC_OK);
    }
    ck_assert_int_eq(clgc_queue_drain(q, 7), 7);
    ck_assert_int_eq(clgc_queue_drain(q, MANY - 7), MANY - 7);
    ck_assert_int_eq(c.next, MANY);
    ck_assert_int_eq(readable(q), 1);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK); /* the other 10,000 */
    ck_assert_int_eq(c.next, 2 * MANY);
    ck_assert_int_eq(c.out_of_order, 0);
}
END_TEST

/* A handler's clgc_callback_fail is recorded with the command that
 * posted it and handed to the runtime's callback_failed hook when the
 * drain ends; outside a handler it is refused again. */
static int fail_token;

static void
fail_posted(void *data)
{
    int *result = data;

    *result = clgc_callback_fail(&fail_token);
}

START_TEST(handler_failure_names_its_command)
{
    clgc_queue_t *q = new_queue();
    unsigned long failures0 = test_rt_failures(NULL);
    clgc_callback_error_t e;
    int result = 1;

    ck_assert_int_eq(clgc_queue_post(q, fail_posted, &result), CLGC_OK);
    ck_assert_uint_eq(test_rt_failures(NULL), failures0);
    ck_assert_int_eq(clgc_queue_drain(q, 0), 1);
    ck_assert_int_eq(result, CLGC_OK);
    ck_assert_uint_eq(test_rt_failures(&e), failures0 + 1);
    ck_assert_str_eq(e.command, "clgc_queue_post");
    ck_assert_int_eq(e.code, CLGC_ECALLBACK);
    ck_assert_ptr_eq(e.error, &fail_token);
    ck_assert_int_eq(clgc_callback_fail(&fail_token), CLGC_EINVAL);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
}
END_TEST

/* The same for a deferred OpenCL callback: the failure names the command
 * that registered it. */
static void CL_CALLBACK
fail_deferred(cl_event event, cl_int status, void *data)
{
    (void)event;
    (void)status;
    *(int *)data = clgc_callback_fail(&fail_token);
}

START_TEST(deferred_failure_names_its_command)
{
    cl_context context = test_pocl_context();
    cl_event ev = user_event(context);
    clgc_queue_t *q = new_queue();
    unsigned long failures0 = test_rt_failures(NULL);
    clgc_callback_error_t e;
    int result = 1;

    ck_assert_int_eq(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(clgc_callbacks_defer(q), CLGC_OK);
    ck_assert_int_eq(
        clgc_clSetEventCallback(ev, CL_COMPLETE, fail_deferred, &result),
        CL_SUCCESS);
    ck_assert_int_eq(clgc_callbacks_defer(NULL), CLGC_OK);
    ck_assert_int_eq(result, 1); /* deferred, not run inline */
    ck_assert(awaited(q));
    ck_assert_int_eq(clgc_queue_drain(q, 0), 1);
    ck_assert_int_eq(result, CLGC_OK);
    ck_assert_uint_eq(test_rt_failures(&e), failures0 + 1);
    ck_assert_str_eq(e.command, "clSetEventCallback");
    ck_assert_int_eq(e.code, CLGC_ECALLBACK);
    ck_assert_ptr_eq(e.error, &fail_token);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    clReleaseEvent(ev);
    clReleaseContext(context);
}
END_TEST

/* Issue 10, item 4: a close under a thread that still defers its
 * callbacks to the queue left the deferral pointing at freed memory. */
struct deferrer {
    clgc_queue_t *q;
    sem_t deferred, leave;
    int result;
};

static void *
defer_and_wait(void *data)
{
    struct deferrer *d = data;

    d->result = clgc_callbacks_defer(d->q);
    sem_post(&d->deferred);
    test_sem_wait(&d->leave, "the test to let the deferring thread go");
    return NULL; /* exits deferring */
}

START_TEST(close_refused_while_a_thread_defers)
{
    clgc_queue_t *q = new_queue(), *other = new_queue();
    struct deferrer d = {.q = q};
    pthread_t t;

    /* This thread. */
    ck_assert_int_eq(clgc_callbacks_defer(q), CLGC_OK);
    ck_assert_int_eq(clgc_callbacks_defer(q), CLGC_OK); /* counted once */
    ck_assert_int_eq(clgc_queue_close(q), CLGC_EBUSY);
    ck_assert_int_eq(clgc_callbacks_defer(other), CLGC_OK); /* moves */
    ck_assert_ptr_eq(clgc_callbacks_deferred_to(), other);
    ck_assert_int_eq(clgc_queue_close(other), CLGC_EBUSY);
    ck_assert_int_eq(clgc_callbacks_defer(NULL), CLGC_OK);
    ck_assert_ptr_null(clgc_callbacks_deferred_to());
    ck_assert_int_eq(clgc_queue_close(other), CLGC_OK);

    /* Another thread, which exits still deferring. */
    sem_init(&d.deferred, 0, 0);
    sem_init(&d.leave, 0, 0);
    ck_assert_int_eq(pthread_create(&t, NULL, defer_and_wait, &d), 0);
    test_sem_wait(&d.deferred, "the other thread to defer its callbacks");
    ck_assert_int_eq(d.result, CLGC_OK);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_EBUSY);
    ck_assert_int_eq(clgc_queue_drain(q, 0), 0); /* still usable */
    sem_post(&d.leave);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
}
END_TEST

/* The deferred callback of a registration made while deferring still
 * holds the queue after the thread stops deferring, until it has run. */
static void CL_CALLBACK
on_deferred(cl_event event, cl_int status, void *data)
{
    struct seen *s = data;

    (void)event;
    s->calls++;
    s->status = status;
    s->thread = pthread_self();
}

START_TEST(deferred_callback_keeps_the_queue_open)
{
    cl_context context = test_pocl_context();
    cl_event ev = user_event(context);
    clgc_queue_t *q = new_queue();
    unsigned long failures0 = test_rt_failures(NULL);
    clgc_callback_error_t e;
    struct seen s;

    seen_init(&s);
    ck_assert_int_eq(clgc_callbacks_defer(q), CLGC_OK);
    ck_assert_int_eq(clgc_clSetEventCallback(ev, CL_COMPLETE, on_deferred, &s),
                     CL_SUCCESS);
    ck_assert_int_eq(clgc_callbacks_defer(NULL), CLGC_OK);
    ck_assert_int_eq(clgc_queue_close(q), CLGC_EBUSY);
    ck_assert_int_eq(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(s.calls, 0);
    ck_assert(awaited(q));
    ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    ck_assert_int_eq(s.calls, 1);
    ck_assert_int_eq(s.status, CL_COMPLETE);
    ck_assert(pthread_equal(s.thread, pthread_self()));
    ck_assert_uint_eq(test_rt_failures(&e), failures0);
    clReleaseEvent(ev);
    clReleaseContext(context);
}
END_TEST

/* Issue 10, item 1, made deterministic: this program's own write(2) and
 * sched_yield(2), which libclgc calls through them, hold the completing
 * thread's eventfd write (the push has published its item) until the
 * owner has returned from clgc_queue_close, or until the close is seen
 * waiting for the push (it yields while a push is in flight). Before the
 * fix the close returned at once, freed the queue and closed its fd, and
 * the held write then failed with EBADF; after it, the close waits and
 * the write succeeds. Disarmed, both are plain pass-throughs. */
static struct {
    atomic_int fd;             /* the queue fd whose write to hold; -1: none */
    _Atomic(pthread_t) pusher; /* the thread whose write to hold */
    _Atomic(pthread_t) owner;
    atomic_int in_close, close_waits, closed, written, bad_writes;
} hold = {.fd = -1};

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef int (*yield_fn)(void);

/* Looked up on first use, by any thread: atomic, as two threads may. */
static _Atomic(write_fn) real_write;
static _Atomic(yield_fn) real_yield;

static write_fn
next_write(void)
{
    write_fn f = atomic_load(&real_write);

    if (f == NULL) {
        f = (write_fn)dlsym(RTLD_NEXT, "write");
        atomic_store(&real_write, f);
    }
    return f;
}

static yield_fn
next_yield(void)
{
    yield_fn f = atomic_load(&real_yield);

    if (f == NULL) {
        f = (yield_fn)dlsym(RTLD_NEXT, "sched_yield");
        atomic_store(&real_yield, f);
    }
    return f;
}

ssize_t
write(int fd, const void *buf, size_t n)
{
    ssize_t r;

    if (fd < 0 || atomic_load(&hold.fd) != fd ||
        !pthread_equal(pthread_self(), atomic_load(&hold.pusher)))
        return next_write()(fd, buf, n);
    atomic_store(&hold.fd, -1);
    while (!atomic_load(&hold.closed) && !atomic_load(&hold.close_waits))
        next_yield()();
    r = next_write()(fd, buf, n);
    if (r < 0)
        atomic_fetch_add(&hold.bad_writes, 1);
    atomic_store(&hold.written, 1);
    return r;
}

int
sched_yield(void)
{
    if (atomic_load(&hold.in_close) &&
        pthread_equal(pthread_self(), atomic_load(&hold.owner)))
        atomic_store(&hold.close_waits, 1);
    return next_yield()();
}

#define HELD 20

static void *
complete_held(void *data)
{
    cl_event ev = data;

    atomic_store(&hold.pusher, pthread_self());
    clSetUserEventStatus(ev, CL_COMPLETE); /* the push, on this thread */
    return NULL;
}

static void
held(int deferred)
{
    cl_context context = test_pocl_context();
    atomic_int ran = 0;
    int bad;

    atomic_store(&hold.owner, pthread_self());
    for (int i = 0; i < HELD; i++) {
        clgc_queue_t *q = new_queue();
        cl_event ev = user_event(context);
        pthread_t t;

        if (deferred) {
            ck_assert_int_eq(clgc_callbacks_defer(q), CLGC_OK);
            ck_assert_int_eq(
                clgc_clSetEventCallback(ev, CL_COMPLETE, count_ran_cl, &ran),
                CL_SUCCESS);
            ck_assert_int_eq(clgc_callbacks_defer(NULL), CLGC_OK);
        } else {
            ck_assert_int_eq(clgc_event_post(ev, q, count_ran, &ran),
                             CL_SUCCESS);
        }
        atomic_store(&hold.closed, 0);
        atomic_store(&hold.close_waits, 0);
        atomic_store(&hold.written, 0);
        atomic_store(&hold.pusher, (pthread_t)0);
        atomic_store(&hold.fd, clgc_queue_fd(q));
        ck_assert_int_eq(pthread_create(&t, NULL, complete_held, ev), 0);
        /* The item is published before the held write: drain until it
         * has run, then close at once. */
        while (atomic_load(&ran) == i)
            ck_assert_int_ge(clgc_queue_drain(q, 0), 0);
        atomic_store(&hold.in_close, 1);
        ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
        atomic_store(&hold.in_close, 0);
        atomic_store(&hold.closed, 1);
        ck_assert_int_eq(pthread_join(t, NULL), 0);
        ck_assert_int_eq(atomic_load(&hold.written), 1);
        clReleaseEvent(ev);
    }
    bad = atomic_load(&hold.bad_writes);
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(atomic_load(&ran), HELD);
    clReleaseContext(context);
}

START_TEST(close_waits_for_the_posted_completion)
{
    held(0);
}
END_TEST

START_TEST(close_waits_for_the_deferred_callback)
{
    held(1);
}
END_TEST

Suite *
clgc_make_queue_suite(void)
{
    Suite *s = suite_create("queue");
    TCase *tc = test_case("queue");

    test_add_pocl_test(tc, queue_fd_says_when_to_drain,
                       "PoCL calls back inside clSetUserEventStatus");
    tcase_add_test(tc, bounded_drain_keeps_the_fd_readable);
    tcase_add_test(tc, queued_failure_reports_its_status);
    test_add_premised_test(tc, loop_works_while_the_kernel_runs,
                           TEST_DRIVER_THREADS,
                           "the loop works while the driver runs the kernel");
    tcase_add_test(tc, bad_input_is_refused);
    tcase_add_test(tc, unreadable_fd_is_reported);
    tcase_add_test(tc, create_reports_a_failed_eventfd);
    tcase_add_test(tc, handler_cannot_close_or_drain_its_queue);
    tcase_add_test(tc, two_drainers_are_refused);
    tcase_add_test(tc, many_pending_then_close);
    tcase_add_test(tc, handler_failure_names_its_command);
    tcase_add_test(tc, deferred_failure_names_its_command);
    tcase_add_test(tc, close_refused_while_a_thread_defers);
    tcase_add_test(tc, deferred_callback_keeps_the_queue_open);
    /* They hold the eventfd write of the thread that completes the user
     * event, where PoCL runs its callback; NVIDIA runs it on its own. */
    test_add_pocl_test(tc, close_waits_for_the_posted_completion,
                       "the callback on the completing thread");
    test_add_pocl_test(tc, close_waits_for_the_deferred_callback,
                       "the callback on the completing thread");
    suite_add_tcase(s, tc);
    return s;
}

/* Issue 10, item 1: a thread completes an event whose completion is
 * posted to a queue while the owner drains and closes it. The pusher
 * publishes the item and then writes the queue's eventfd; the owner could
 * run the item, see nothing outstanding, close the fd and free the queue
 * in between, and the pusher then read the freed queue (ASan: a
 * use-after-free) and wrote a closed fd, or the next queue's, which reuses
 * its number: that queue is then readable with nothing in it, which the
 * owner checks too. Both pushes that a completion makes are raced: a
 * notification (clgc_event_post) and a deferred OpenCL callback
 * (clSetEventCallback under clgc_callbacks_defer). */
#define RACES 10000

struct race {
    cl_context context;
    sem_t go;
    cl_event _Atomic event; /* the one to complete; NULL to stop */
    atomic_int ran;
    int spurious;
};

static void *
completer(void *data)
{
    struct race *r = data;

    for (;;) {
        cl_event ev;

        test_sem_wait(&r->go, "the test to hand the completer its next event");
        ev = atomic_load(&r->event);
        if (ev == NULL)
            return NULL;
        /* PoCL calls back on this thread: the push happens here. The
         * event is this thread's to release. */
        clSetUserEventStatus(ev, CL_COMPLETE);
        clReleaseEvent(ev);
    }
}

static void
count_post(cl_event event, cl_int status, void *data)
{
    (void)event;
    (void)status;
    atomic_fetch_add(&((struct race *)data)->ran, 1);
}

static void CL_CALLBACK
count_callback(cl_event event, cl_int status, void *data)
{
    count_post(event, status, data);
}

static void
race(int deferred)
{
    struct race r = {.context = test_pocl_context()};
    pthread_t t;

    sem_init(&r.go, 0, 0);
    ck_assert_int_eq(pthread_create(&t, NULL, completer, &r), 0);
    for (int i = 0; i < RACES; i++) {
        clgc_queue_t *q = new_queue();
        cl_event ev = user_event(r.context);
        int before = atomic_load(&r.ran), drained;

        if (readable(q))
            r.spurious++;
        if (deferred) {
            ck_assert_int_eq(clgc_callbacks_defer(q), CLGC_OK);
            ck_assert_int_eq(
                clgc_clSetEventCallback(ev, CL_COMPLETE, count_callback, &r),
                CL_SUCCESS);
            ck_assert_int_eq(clgc_callbacks_defer(NULL), CLGC_OK);
        } else {
            ck_assert_int_eq(clgc_event_post(ev, q, count_post, &r),
                             CL_SUCCESS);
        }
        atomic_store(&r.event, ev);
        sem_post(&r.go);
        /* Drain without waiting for the fd: take the item the moment it
         * is published, and close at once. */
        while (atomic_load(&r.ran) == before) {
            drained = clgc_queue_drain(q, 0);
            ck_assert_int_ge(drained, 0);
            if (drained == 0)
                sched_yield();
        }
        ck_assert_int_eq(clgc_queue_close(q), CLGC_OK);
    }
    atomic_store(&r.event, NULL);
    sem_post(&r.go);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(atomic_load(&r.ran), RACES);
    ck_assert_int_eq(r.spurious, 0);
    clReleaseContext(r.context);
}

START_TEST(close_races_the_posted_completion)
{
    race(0);
}
END_TEST

START_TEST(close_races_the_deferred_callback)
{
    race(1);
}
END_TEST

Suite *
clgc_make_queue_threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = test_case("queue close races");

    tcase_add_test(tc, close_races_the_posted_completion);
    tcase_add_test(tc, close_races_the_deferred_callback);
    suite_add_tcase(s, tc);
    return s;
}
