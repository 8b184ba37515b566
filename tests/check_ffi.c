/* Closures and generic calls (clgc/ffi.h), with the recording runtime.
 *
 * Closures: every signature letter round-trips; a handler runs with the
 * runtime active however its code is called (inside a safe region, by
 * PoCL inside a wrapper, on an active thread, on a plain thread that is
 * attached once); a closure frees itself from its handler and waits for
 * calls in flight; create and free leave nothing behind (the ASan build's
 * LeakSanitizer checks that). The "threads" suite, which the TSan build
 * runs, calls closures from many plain threads at once.
 *
 * Generic calls: every command of the registry is called through
 * clgc_command_call against the stub ICD with the forwarding cases of
 * check_forward.c (fwutil.c), and must forward exactly what the wrapper
 * called directly forwards; wrong argument lists call nothing. */

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fwutil.h"

/* ------------------------------------------------------------------------
 * Signatures and round trips */

static void
never_called(void *result, void *const *args, void *data)
{
    ck_abort_msg("a closure that should not exist was called");
}

START_TEST(bad_signatures_are_refused)
{
    static const char *const bad[] = {
        "",        "v",       "v(",      "v(v)",  "i(iv)", "(i)",
        "i)",      "i(i))",   "i(i)x",   "i((i)", "q(i)",  "i(q)",
        " i(i)",   "i( i)",   "i(i) ",   "V(i)",  "i(ii",  "ii(i)",
        "i(i)(i)", "\xff(i)", "i(\xff)", "()",    "v)(",   "v(i,i)"};
    char many[CLGC_CLOSURE_MAX_ARGS + 8];
    clgc_closure_t *closure = (clgc_closure_t *)&many;
    clgc_function_t code = (clgc_function_t)never_called;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(clgc_closure_create(bad[i], never_called, NULL, &closure,
                                          &code) == CLGC_ESIGNATURE,
                      "signature '%s' was accepted", bad[i]);
    ck_assert_int_eq(
        clgc_closure_create(NULL, never_called, NULL, &closure, &code),
        CLGC_ESIGNATURE);
    /* One argument too many. */
    memset(many, 'i', sizeof(many));
    many[1] = '(';
    many[CLGC_CLOSURE_MAX_ARGS + 3] = ')';
    many[CLGC_CLOSURE_MAX_ARGS + 4] = '\0';
    ck_assert_int_eq(
        clgc_closure_create(many, never_called, NULL, &closure, &code),
        CLGC_ESIGNATURE);
    /* Nothing was written on failure. */
    ck_assert_ptr_eq(closure, (clgc_closure_t *)&many);
    ck_assert_ptr_eq((void *)code, (void *)never_called);
}
END_TEST

START_TEST(null_arguments_are_refused)
{
    clgc_closure_t *closure = NULL;
    clgc_function_t code = NULL;
    const clgc_command_t *cmd = clgc_command_find("clFinish");
    clgc_arg_t arg = {CLGC_CTYPE_POINTER, {.p = NULL}};
    clgc_value_t r;

    ck_assert_int_eq(clgc_closure_create("v()", NULL, NULL, &closure, &code),
                     CLGC_EINVAL);
    ck_assert_int_eq(
        clgc_closure_create("v()", never_called, NULL, NULL, &code),
        CLGC_EINVAL);
    ck_assert_int_eq(
        clgc_closure_create("v()", never_called, NULL, &closure, NULL),
        CLGC_EINVAL);
    ck_assert_ptr_null(closure);
    ck_assert_ptr_null((void *)code);
    ck_assert_int_eq(clgc_closure_free(NULL), CLGC_EINVAL);

    ck_assert_int_eq(clgc_command_call(NULL, 1, &arg, &r), CLGC_EINVAL);
    ck_assert_int_eq(clgc_command_call(cmd, 1, NULL, &r), CLGC_EINVAL);
    ck_assert_int_eq(clgc_command_call(cmd, 1, &arg, NULL), CLGC_EINVAL);
    ck_assert_int_eq(clgc_command_call_by_name(NULL, 1, &arg, &r), CLGC_EINVAL);
}
END_TEST

/* One value of every letter, with high bits set where the type has them,
 * so that a value truncated or extended the wrong way shows. */
struct letter {
    char letter;
    clgc_ctype_t ctype;
    size_t size;
    clgc_value_t value;
};

static const struct letter letters[] = {
    {'c', CLGC_CTYPE_INT8, 1, {.i8 = -2}},
    {'C', CLGC_CTYPE_UINT8, 1, {.u8 = 0xFE}},
    {'s', CLGC_CTYPE_INT16, 2, {.i16 = -3}},
    {'S', CLGC_CTYPE_UINT16, 2, {.u16 = 0xFFFD}},
    {'i', CLGC_CTYPE_INT32, 4, {.i32 = INT32_MIN + 5}},
    {'I', CLGC_CTYPE_UINT32, 4, {.u32 = 0xFFFFFFF0u}},
    {'l', CLGC_CTYPE_INT64, 8, {.i64 = INT64_MIN + 7}},
    {'L', CLGC_CTYPE_UINT64, 8, {.u64 = UINT64_MAX - 8}},
    {'j', CLGC_CTYPE_INTPTR, sizeof(intptr_t), {.iptr = -9}},
    {'z', CLGC_CTYPE_SIZE, sizeof(size_t), {.size = SIZE_MAX - 10}},
    {'f', CLGC_CTYPE_FLOAT, sizeof(float), {.f = -1.5f}},
    {'d', CLGC_CTYPE_DOUBLE, sizeof(double), {.d = 2.25e300}},
    {'p', CLGC_CTYPE_POINTER, sizeof(void *), {.p = (void *)letters}},
    {'F', CLGC_CTYPE_FUNCTION, sizeof(clgc_function_t), {.fn = abort}},
};
#define N_LETTERS (sizeof(letters) / sizeof(letters[0]))

/* A command-shaped description of a closure's code, so that
 * clgc_command_call can call it: libffi on both sides. */
struct fake_command {
    clgc_param_t params[CLGC_CLOSURE_MAX_ARGS];
    clgc_command_t command;
};

static void
fake_command(struct fake_command *f, clgc_ctype_t result, unsigned nparams,
             clgc_ctype_t param, clgc_function_t code)
{
    memset(f, 0, sizeof(*f));
    for (unsigned i = 0; i < nparams; i++)
        f->params[i] = (clgc_param_t){
            .type = "x", .name = "x", .ctype = param, .count_param = -1};
    f->command = (clgc_command_t){.name = "closure",
                                  .result_type = "x",
                                  .result_ctype = result,
                                  .nparams = nparams,
                                  .params = f->params,
                                  .origin = "test",
                                  .wrapper = code};
}

/* "X(X)": the result is the argument. data is the struct letter. */
static void
identity(void *result, void *const *args, void *data)
{
    const struct letter *l = data;

    memcpy(result, args[0], l->size);
}

START_TEST(every_letter_round_trips)
{
    const struct letter *l = &letters[_i];
    char signature[] = {l->letter, '(', l->letter, ')', '\0'};
    struct fake_command f;
    clgc_closure_t *closure;
    clgc_function_t code;
    clgc_arg_t arg = {l->ctype, l->value};
    clgc_value_t r;

    ck_assert_int_eq(
        clgc_closure_create(signature, identity, (void *)l, &closure, &code),
        CLGC_OK);
    fake_command(&f, l->ctype, 1, l->ctype, code);
    memset(&r, 0x5A, sizeof(r));
    ck_assert_int_eq(clgc_command_call(&f.command, 1, &arg, &r), CLGC_OK);
    /* The value, and the rest of the union zeroed. */
    ck_assert_msg(memcmp(&r, &l->value, sizeof(r)) == 0,
                  "'%s' came back as %#llx", signature,
                  (unsigned long long)r.u64);
    ck_assert_int_eq(clgc_closure_free(closure), CLGC_OK);
}
END_TEST

/* Narrow results called from C, where the caller widens them itself. */
START_TEST(narrow_results_reach_c_callers)
{
    clgc_closure_t *c8, *c16, *cf;
    clgc_function_t code8, code16, codef;

    ck_assert_int_eq(
        clgc_closure_create("c(c)", identity, (void *)&letters[0], &c8, &code8),
        CLGC_OK);
    ck_assert_int_eq(clgc_closure_create("S(S)", identity, (void *)&letters[3],
                                         &c16, &code16),
                     CLGC_OK);
    ck_assert_int_eq(clgc_closure_create("f(f)", identity, (void *)&letters[10],
                                         &cf, &codef),
                     CLGC_OK);
    ck_assert_int_eq(((int8_t(*)(int8_t))code8)(-100), -100);
    ck_assert_int_eq(((int)((int8_t(*)(int8_t))code8)(-1)), -1);
    ck_assert_uint_eq(((uint16_t(*)(uint16_t))code16)(0xFFFE), 0xFFFE);
    ck_assert(((float (*)(float))codef)(3.75f) == 3.75f);
    ck_assert_int_eq(clgc_closure_free(c8), CLGC_OK);
    ck_assert_int_eq(clgc_closure_free(c16), CLGC_OK);
    ck_assert_int_eq(clgc_closure_free(cf), CLGC_OK);
}
END_TEST

/* "l(ll...l)" with the most arguments: their sum. */
static void
sum_all(void *result, void *const *args, void *data)
{
    int64_t sum = 0;

    for (unsigned i = 0; i < CLGC_CLOSURE_MAX_ARGS; i++)
        sum += *(const int64_t *)args[i] * (int64_t)(i + 1);
    *(int64_t *)result = sum;
}

START_TEST(most_arguments_are_accepted)
{
    char signature[CLGC_CLOSURE_MAX_ARGS + 4];
    clgc_arg_t args[CLGC_CLOSURE_MAX_ARGS];
    struct fake_command f;
    clgc_closure_t *closure;
    clgc_function_t code;
    clgc_value_t r;
    int64_t expected = 0;

    memset(signature, 'l', sizeof(signature));
    signature[1] = '(';
    signature[CLGC_CLOSURE_MAX_ARGS + 2] = ')';
    signature[CLGC_CLOSURE_MAX_ARGS + 3] = '\0';
    ck_assert_int_eq(
        clgc_closure_create(signature, sum_all, NULL, &closure, &code),
        CLGC_OK);
    for (unsigned i = 0; i < CLGC_CLOSURE_MAX_ARGS; i++) {
        args[i] = (clgc_arg_t){CLGC_CTYPE_INT64, {.i64 = -((int64_t)i << 33)}};
        expected += args[i].value.i64 * (int64_t)(i + 1);
    }
    fake_command(&f, CLGC_CTYPE_INT64, CLGC_CLOSURE_MAX_ARGS, CLGC_CTYPE_INT64,
                 code);
    ck_assert_int_eq(
        clgc_command_call(&f.command, CLGC_CLOSURE_MAX_ARGS, args, &r),
        CLGC_OK);
    ck_assert_int_eq(r.i64, expected);
    ck_assert_int_eq(clgc_closure_free(closure), CLGC_OK);
}
END_TEST

/* ------------------------------------------------------------------------
 * Where the handler runs */

/* What a handler saw. */
struct seen {
    int runs;
    int in_region, depth, hook_depth, attached;
    pthread_t thread;
};

static void
record(void *result, void *const *args, void *data)
{
    struct seen *s = data;

    s->runs++;
    s->in_region = clgc_thread_in_region();
    s->depth = (int)clgc_thread_region_depth();
    s->hook_depth = test_rt_hook_depth();
    s->attached = clgc_thread_attached();
    s->thread = pthread_self();
    if (result != NULL)
        *(int32_t *)result = 42;
}

static void *
call_code_in_region(void *code)
{
    return (void *)(intptr_t)(*(int32_t(*)(void))(uintptr_t)code)();
}

/* PoCL calling back inside the wrapper that registered the callback: the
 * handler runs through the active_region hook, inside the region. */
START_TEST(handler_inside_a_safe_region_runs_active)
{
    struct seen s = {0};
    clgc_closure_t *closure;
    clgc_function_t code;
    unsigned long active0 = test_rt_active_calls();
    void *r;

    ck_assert_int_eq(clgc_closure_create("i()", record, &s, &closure, &code),
                     CLGC_OK);
    r = clgc_call_safe(call_code_in_region, (void *)(uintptr_t)code);
    ck_assert_int_eq((int)(intptr_t)r, 42);
    ck_assert_int_eq(s.runs, 1);
    ck_assert_uint_eq(test_rt_active_calls() - active0, 1);
    ck_assert_int_eq(s.in_region, 0);
    ck_assert_int_eq(s.depth, 1);      /* still inside the region... */
    ck_assert_int_eq(s.hook_depth, 0); /* ...but active for the runtime */
    ck_assert_int_eq(clgc_thread_region_depth(), 0);
    ck_assert_int_eq(clgc_closure_free(closure), CLGC_OK);
}
END_TEST

/* The same with the real PoCL: it runs an event's callback on the thread
 * that completes the event, inside clgc_clSetUserEventStatus. */
START_TEST(pocl_calls_back_inside_a_wrapper)
{
    cl_context context = test_pocl_context();
    struct seen s = {0};
    clgc_closure_t *closure;
    clgc_function_t code;
    unsigned long active0;
    cl_event event;
    cl_int err;

    event = clCreateUserEvent(context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(clgc_closure_create("v(pip)", record, &s, &closure, &code),
                     CLGC_OK);
    ck_assert_int_eq(clgc_clSetEventCallback(
                         event, CL_COMPLETE,
                         (void(CL_CALLBACK *)(cl_event, cl_int, void *))code,
                         NULL),
                     CL_SUCCESS);
    active0 = test_rt_active_calls();
    ck_assert_int_eq(clgc_clSetUserEventStatus(event, CL_COMPLETE), CL_SUCCESS);
    ck_assert_int_eq(s.runs, 1);
    ck_assert(pthread_equal(s.thread, pthread_self()));
    ck_assert_uint_eq(test_rt_active_calls() - active0, 1);
    ck_assert_int_eq(s.in_region, 0);
    ck_assert_int_eq(s.depth, 1);
    ck_assert_int_eq(s.hook_depth, 0);
    ck_assert_int_eq(clgc_closure_free(closure), CLGC_OK);
    clReleaseEvent(event);
    clReleaseContext(context);
}
END_TEST

START_TEST(handler_on_an_active_thread_runs_directly)
{
    struct seen s = {0};
    clgc_closure_t *closure;
    clgc_function_t code;
    unsigned long active0 = test_rt_active_calls(),
                  safe0 = test_rt_safe_calls(),
                  attach0 = test_rt_attach_calls();

    ck_assert_int_eq(clgc_closure_create("i()", record, &s, &closure, &code),
                     CLGC_OK);
    ck_assert_int_eq(((int32_t(*)(void))code)(), 42);
    ck_assert_int_eq(s.runs, 1);
    ck_assert_int_eq(s.in_region, 0);
    ck_assert_int_eq(s.depth, 0);
    ck_assert_uint_eq(test_rt_active_calls(), active0);
    ck_assert_uint_eq(test_rt_safe_calls(), safe0);
    ck_assert_uint_eq(test_rt_attach_calls(), attach0);
    ck_assert_int_eq(clgc_closure_free(closure), CLGC_OK);
}
END_TEST

struct plain_call {
    clgc_function_t code;
    int32_t result;
};

static void *
call_on_plain_thread(void *arg)
{
    struct plain_call *p = arg;

    p->result = ((int32_t(*)(void))p->code)();
    return NULL;
}

/* A plain thread the runtime will not take: the handler never runs and
 * the caller gets 0. */
START_TEST(refused_attach_gives_a_zero_result)
{
    struct seen s = {0};
    struct plain_call p = {NULL, -1};
    clgc_closure_t *closure;
    pthread_t t;
    unsigned long attach0 = test_rt_attach_calls();

    ck_assert_int_eq(clgc_closure_create("i()", record, &s, &closure, &p.code),
                     CLGC_OK);
    test_rt_set_strict(1);
    test_rt_set_attach_result(CLGC_EATTACH);
    ck_assert_int_eq(pthread_create(&t, NULL, call_on_plain_thread, &p), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    test_rt_set_attach_result(CLGC_OK);
    test_rt_set_strict(0);
    ck_assert_int_eq(p.result, 0);
    ck_assert_int_eq(s.runs, 0);
    ck_assert_uint_eq(test_rt_attach_calls() - attach0, 1);
    ck_assert_int_eq(clgc_closure_free(closure), CLGC_OK);
}
END_TEST

/* ------------------------------------------------------------------------
 * Lifetimes */

static void
count_calls(void *result, void *const *args, void *data)
{
    (*(long *)data)++;
    *(double *)result = *(const double *)args[0] * 2;
}

/* LeakSanitizer (the ASan build) or valgrind (CK_FORK=no) would report
 * anything left behind. */
START_TEST(create_and_free_leave_nothing)
{
    static const char *const signatures[] = {"d(d)", "d(dcSiLfpz)",
                                             "d(dFFFFFFFF)", "d(dddddddd)"};
    long calls = 0;

    for (int i = 0; i < 10000; i++) {
        clgc_closure_t *closure;
        clgc_function_t code;

        ck_assert_int_eq(clgc_closure_create(signatures[i % 4], count_calls,
                                             &calls, &closure, &code),
                         CLGC_OK);
        /* Every closure is callable; all signatures start with a double. */
        ck_assert(((double (*)(double))code)(i) == 2.0 * i);
        ck_assert_int_eq(clgc_closure_free(closure), CLGC_OK);
    }
    ck_assert_int_eq(calls, 10000);
}
END_TEST

/* A one-shot callback: its handler frees the closure on the only call. */
struct one_shot {
    clgc_closure_t *closure;
    clgc_function_t code;
    atomic_int runs;
    int freed;
};

static void
free_myself(void *result, void *const *args, void *data)
{
    struct one_shot *o = *(struct one_shot *const *)args[0];

    atomic_fetch_add(&o->runs, 1);
    o->freed = clgc_closure_free(o->closure);
    /* The arguments are still there. */
    if (*(struct one_shot *const *)args[0] != o)
        o->freed = -100;
}

static void *
call_one_shot(void *arg)
{
    struct one_shot *o = arg;

    ((void (*)(void *))o->code)(o);
    return NULL;
}

START_TEST(handler_frees_its_own_closure)
{
    struct one_shot o = {.freed = 1};
    pthread_t t;

    ck_assert_int_eq(
        clgc_closure_create("v(p)", free_myself, NULL, &o.closure, &o.code),
        CLGC_OK);
    ck_assert_int_eq(pthread_create(&t, NULL, call_one_shot, &o), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(atomic_load(&o.runs), 1);
    ck_assert_int_eq(o.freed, CLGC_OK);

    /* And inside a safe region, where the handler runs in the active
     * hook. */
    o.freed = 1;
    ck_assert_int_eq(
        clgc_closure_create("v(p)", free_myself, NULL, &o.closure, &o.code),
        CLGC_OK);
    clgc_call_safe(call_one_shot, &o);
    ck_assert_int_eq(atomic_load(&o.runs), 2);
    ck_assert_int_eq(o.freed, CLGC_OK);
}
END_TEST

/* A handler that is running when another thread frees its closure: the
 * free returns only after the handler has. The handler holds on until
 * the freeing thread is waiting, which it sees as the safe region that
 * clgc_closure_free waits in. */
struct in_flight {
    clgc_closure_t *closure;
    clgc_function_t code;
    sem_t entered;
    unsigned long safe0;
    atomic_int freeing; /* safe0 is set */
    atomic_int handler_done, done_when_freed, freed;
};

static void
hold_on(void *result, void *const *args, void *data)
{
    struct in_flight *f = data;
    struct test_await w = test_await_start();

    sem_post(&f->entered);
    while (!atomic_load(&f->freeing) || test_rt_safe_calls() == f->safe0)
        test_await_nap(&w, "the freeing thread to wait in a safe region");
    atomic_store(&f->handler_done, 1);
}

static void *
call_in_flight(void *arg)
{
    struct in_flight *f = arg;

    ((void (*)(void))f->code)();
    return NULL;
}

static void *
free_in_flight(void *arg)
{
    struct in_flight *f = arg;

    atomic_store(&f->freed, clgc_closure_free(f->closure));
    atomic_store(&f->done_when_freed, atomic_load(&f->handler_done));
    return NULL;
}

START_TEST(free_waits_for_calls_in_flight)
{
    struct in_flight f = {0};
    pthread_t caller, freer;

    sem_init(&f.entered, 0, 0);
    ck_assert_int_eq(
        clgc_closure_create("v()", hold_on, &f, &f.closure, &f.code), CLGC_OK);
    ck_assert_int_eq(pthread_create(&caller, NULL, call_in_flight, &f), 0);
    test_sem_wait(&f.entered, "the caller to enter the closure");
    f.safe0 = test_rt_safe_calls();
    atomic_store(&f.freeing, 1);
    ck_assert_int_eq(pthread_create(&freer, NULL, free_in_flight, &f), 0);
    ck_assert_int_eq(pthread_join(freer, NULL), 0);
    ck_assert_int_eq(pthread_join(caller, NULL), 0);
    ck_assert_int_eq(atomic_load(&f.freed), CLGC_OK);
    ck_assert_int_eq(atomic_load(&f.done_when_freed), 1);
    sem_destroy(&f.entered);
}
END_TEST

/* Issue 25, item 5: a free that starts while a call is on its way in,
 * past clgc's first step but before its handler runs. A plain thread's
 * first call attaches it: the test holds it in the runtime's
 * attach_thread hook until the freeing thread waits in its safe region,
 * so the free lands in that window every time. The handler then runs with
 * the closure alive, and the free returns only after it. A free that did
 * not wait would free the closure under the call (ASan: a
 * use-after-free). */
struct way_in {
    clgc_closure_t *closure;
    clgc_function_t code;
    sem_t attaching;
    unsigned long safe0;
    atomic_int freeing; /* safe0 is set, the free begins */
    atomic_int handler_ran;
    int32_t result;
};

static void
hold_in_attach(void *arg)
{
    struct way_in *w = arg;
    struct test_await a = test_await_start();

    sem_post(&w->attaching);
    while (!atomic_load(&w->freeing) || test_rt_safe_calls() == w->safe0)
        test_await_nap(&a, "the freeing thread to wait in a safe region");
}

static void
answer_late(void *result, void *const *args, void *data)
{
    struct way_in *w = data;

    (void)args;
    *(int32_t *)result = 42;
    atomic_store(&w->handler_ran, 1);
}

static void *
call_on_its_way_in(void *arg)
{
    struct way_in *w = arg;

    w->result = ((int32_t(*)(void))w->code)();
    return NULL;
}

START_TEST(free_waits_for_a_call_on_its_way_in)
{
    struct way_in w = {.result = -1};
    unsigned long attach0 = test_rt_attach_calls();
    pthread_t caller;
    int ran_when_freed;

    sem_init(&w.attaching, 0, 0);
    ck_assert_int_eq(
        clgc_closure_create("i()", answer_late, &w, &w.closure, &w.code),
        CLGC_OK);
    test_rt_set_strict(1);
    test_rt_set_attach_hook(hold_in_attach, &w);
    ck_assert_int_eq(pthread_create(&caller, NULL, call_on_its_way_in, &w), 0);
    test_sem_wait(&w.attaching, "the caller to reach the attach_thread hook");
    ck_assert_int_eq(atomic_load(&w.handler_ran), 0);
    /* This thread installed the runtime: its free waits in a region the
     * runtime's safe_region hook counts. */
    w.safe0 = test_rt_safe_calls();
    atomic_store(&w.freeing, 1);
    ck_assert_int_eq(clgc_closure_free(w.closure), CLGC_OK);
    ran_when_freed = atomic_load(&w.handler_ran);
    ck_assert_int_eq(pthread_join(caller, NULL), 0);
    test_rt_set_attach_hook(NULL, NULL);
    test_rt_set_strict(0);
    ck_assert_msg(ran_when_freed == 1,
                  "clgc_closure_free returned before the handler ran");
    ck_assert_int_eq(w.result, 42);
    ck_assert_uint_eq(test_rt_attach_calls() - attach0, 1);
    sem_destroy(&w.attaching);
}
END_TEST

/* ------------------------------------------------------------------------
 * Generic calls */

/* The value of ctype t whose bits, as the stub records them, are bits. */
static clgc_value_t
value_of(clgc_ctype_t t, uint64_t bits)
{
    clgc_value_t v;

    memset(&v, 0, sizeof(v));
    switch (t) {
    case CLGC_CTYPE_INT32:
        v.i32 = (int32_t)(uint32_t)bits;
        break;
    case CLGC_CTYPE_UINT32:
        v.u32 = (uint32_t)bits;
        break;
    case CLGC_CTYPE_UINT64:
        v.u64 = bits;
        break;
    case CLGC_CTYPE_SIZE:
        v.size = (size_t)bits;
        break;
    case CLGC_CTYPE_POINTER:
        v.p = (void *)(uintptr_t)bits;
        break;
    case CLGC_CTYPE_FUNCTION:
        /* Only NULL: a real callback would be called. */
        v.fn = NULL;
        break;
    default:
        ck_abort_msg("no OpenCL command has a parameter of ctype %d", t);
    }
    return v;
}

/* The reverse: what the stub records for v. */
static uint64_t
bits_of(clgc_ctype_t t, clgc_value_t v)
{
    switch (t) {
    case CLGC_CTYPE_VOID:
        return 0;
    case CLGC_CTYPE_INT32:
        return (uint32_t)v.i32;
    case CLGC_CTYPE_UINT32:
        return v.u32;
    case CLGC_CTYPE_UINT64:
        return v.u64;
    case CLGC_CTYPE_SIZE:
        return v.size;
    case CLGC_CTYPE_FUNCTION:
        return (uint64_t)(uintptr_t)v.fn;
    default:
        return (uint64_t)(uintptr_t)v.p;
    }
}

static void
make_args(const clgc_command_t *cmd, const struct fw_args *a, clgc_arg_t *args)
{
    for (unsigned i = 0; i < cmd->nparams; i++) {
        clgc_ctype_t t = cmd->params[i].ctype;

        args[i] = (clgc_arg_t){t, value_of(t, a->bits[i])};
        ck_assert_msg(bits_of(t, args[i].value) == a->bits[i],
                      "%s: %s's pattern does not fit its ctype", cmd->name,
                      cmd->params[i].name);
    }
}

/* The wrapper, called through clgc_command_call. */
static uint64_t
fw_generic(const struct test_forward_case *c, const struct fw_args *a)
{
    const clgc_command_t *cmd = clgc_command_at(c->index);
    clgc_arg_t args[TEST_MAX_PARAMS];
    clgc_value_t r;

    make_args(cmd, a, args);
    memset(&r, 0, sizeof(r));
    ck_assert_int_eq(clgc_command_call(cmd, cmd->nparams, args, &r), CLGC_OK);
    return bits_of(cmd->result_ctype, r);
}

/* Wrong argument lists for c: one argument fewer or more, and each
 * argument of another ctype. Nothing is called. */
static void
expect_refused(const struct test_forward_case *c)
{
    const clgc_command_t *cmd = clgc_command_at(c->index);
    clgc_arg_t args[TEST_MAX_PARAMS + 1];
    struct fw_args a;
    unsigned long safe0 = test_rt_safe_calls();
    clgc_value_t r = {.u64 = 77};

    fw_build(c, fw_stub_platform, &a);
    make_args(cmd, &a, args);
    args[cmd->nparams] = (clgc_arg_t){CLGC_CTYPE_POINTER, {.p = NULL}};
    fw_ctl->reset();
    ck_assert_int_eq(clgc_command_call(cmd, cmd->nparams + 1, args, &r),
                     CLGC_EARITY);
    if (cmd->nparams > 0)
        ck_assert_int_eq(clgc_command_call(cmd, cmd->nparams - 1, args, &r),
                         CLGC_EARITY);
    for (unsigned i = 0; i < cmd->nparams; i++) {
        clgc_ctype_t t = args[i].ctype;

        args[i].ctype =
            t == CLGC_CTYPE_POINTER ? CLGC_CTYPE_SIZE : CLGC_CTYPE_POINTER;
        ck_assert_int_eq(clgc_command_call(cmd, cmd->nparams, args, &r),
                         CLGC_ETYPE);
        args[i].ctype = t;
    }
    ck_assert_uint_eq(fw_ctl->calls, 0);
    ck_assert_uint_eq(fw_ctl->hooked, 0);
    ck_assert_uint_eq(test_rt_safe_calls(), safe0);
    ck_assert_uint_eq(r.u64, 77);
}

START_TEST(every_command_calls_generically)
{
    const struct test_forward_case *c = &test_forward_cases[_i];
    const clgc_command_t *cmd = clgc_command_at((size_t)_i);
    struct fw_args a;

    ck_assert_str_eq(c->name, cmd->name);
    switch (c->route) {
    case TEST_ROUTE_STUB:
        fw_check_stub(c, fw_generic);
        break;
    case TEST_ROUTE_ELSEWHERE:
        fw_check_elsewhere(c, fw_generic);
        break;
    case TEST_ROUTE_CLGC:
        /* clgc answers: the same answer as the wrapper called directly. */
        fw_build(c, fw_stub_platform, &a);
        ck_assert_uint_eq(fw_call(c, &a, fw_generic), c->call(a.bits));
        break;
    }
    expect_refused(c);
}
END_TEST

START_TEST(unknown_command_is_refused)
{
    clgc_value_t r = {.u64 = 5};

    ck_assert_int_eq(clgc_command_call_by_name("clNoSuchCommand", 0, NULL, &r),
                     CLGC_ENOCOMMAND);
    ck_assert_int_eq(clgc_command_call_by_name("", 0, NULL, &r),
                     CLGC_ENOCOMMAND);
    ck_assert_uint_eq(fw_ctl->calls, 0);
    ck_assert_uint_eq(r.u64, 5);
}
END_TEST

/* The real PoCL through the generic path, by name. */
START_TEST(generic_call_reaches_pocl)
{
    cl_platform_id platform = test_platform("Portable Computing Language");
    char name[256] = "";
    size_t size = 0;
    unsigned long safe0 = test_rt_safe_calls();
    clgc_arg_t args[] = {
        {CLGC_CTYPE_POINTER, {.p = platform}},
        {CLGC_CTYPE_UINT32, {.u32 = CL_PLATFORM_NAME}},
        {CLGC_CTYPE_SIZE, {.size = sizeof(name)}},
        {CLGC_CTYPE_POINTER, {.p = name}},
        {CLGC_CTYPE_POINTER, {.p = &size}},
    };
    clgc_value_t r = {.u64 = UINT64_MAX};

    ck_assert_int_eq(
        clgc_command_call_by_name("clGetPlatformInfo", 5, args, &r), CLGC_OK);
    ck_assert_int_eq(r.i32, CL_SUCCESS);
    ck_assert_uint_eq(r.u64, 0); /* the rest of the union zeroed */
    ck_assert_str_eq(name, "Portable Computing Language");
    ck_assert_uint_eq(size, strlen(name) + 1);
    ck_assert_uint_eq(test_rt_safe_calls() - safe0, 1);
    /* An OpenCL error is a result, not a clgc error. */
    args[1].value.u32 = 0;
    ck_assert_int_eq(
        clgc_command_call_by_name("clGetPlatformInfo", 5, args, &r), CLGC_OK);
    ck_assert_int_eq(r.i32, CL_INVALID_VALUE);
}
END_TEST

Suite *
clgc_make_ffi_suite(void)
{
    Suite *s = suite_create("ffi");
    TCase *tc = test_case("signatures");

    tcase_add_test(tc, bad_signatures_are_refused);
    tcase_add_test(tc, null_arguments_are_refused);
    tcase_add_loop_test(tc, every_letter_round_trips, 0, (int)N_LETTERS);
    tcase_add_test(tc, narrow_results_reach_c_callers);
    tcase_add_test(tc, most_arguments_are_accepted);
    suite_add_tcase(s, tc);
    tc = test_case("dispatch");
    tcase_add_test(tc, handler_inside_a_safe_region_runs_active);
    tcase_add_test(tc, pocl_calls_back_inside_a_wrapper);
    tcase_add_test(tc, handler_on_an_active_thread_runs_directly);
    tcase_add_test(tc, refused_attach_gives_a_zero_result);
    suite_add_tcase(s, tc);
    tc = test_case("lifetime");
    /* Frees racing calls on other threads: the TSan build runs them. */
    tcase_set_tags(tc, TEST_TAG_THREADED);
    tcase_add_test(tc, create_and_free_leave_nothing);
    tcase_add_test(tc, handler_frees_its_own_closure);
    tcase_add_test(tc, free_waits_for_calls_in_flight);
    tcase_add_test(tc, free_waits_for_a_call_on_its_way_in);
    suite_add_tcase(s, tc);
    tc = test_case("generic");
    tcase_add_checked_fixture(tc, fw_setup, fw_teardown);
    tcase_add_loop_test(tc, every_command_calls_generically, 0, TEST_FORWARD_N);
    tcase_add_test(tc, unknown_command_is_refused);
    tcase_add_test(tc, generic_call_reaches_pocl);
    suite_add_tcase(s, tc);
    return s;
}

/* ------------------------------------------------------------------------
 * The "threads" suite: closures called from many plain threads at once. */

#define THREADS 8
#define CALLS 2000

struct caller {
    unsigned index;
    clgc_function_t code;
    int bad;     /* wrong arguments or results seen */
    int outside; /* handler runs not active, or on an unattached thread */
    int runs;    /* handler runs on this caller's thread */
};

typedef double (*mixed_fn)(int8_t, uint16_t, int32_t, uint64_t, float, double,
                           void *, size_t);

/* The arguments of call n on caller k, and the result they make. */
static int8_t
arg_c(unsigned n)
{
    return (int8_t)(-(int)(n % 100) - 1);
}
static uint16_t
arg_S(unsigned k)
{
    return (uint16_t)(0xF000u + k);
}
static int32_t
arg_i(unsigned k, unsigned n)
{
    return -(int32_t)(n * 1000 + k);
}
static uint64_t
arg_L(unsigned k, unsigned n)
{
    return 0xF000000000000000u | ((uint64_t)n << 8) | k;
}
static float
arg_f(unsigned n)
{
    return (float)n + 0.5f;
}
static double
arg_d(unsigned k)
{
    return -(double)k - 0.25;
}
static size_t
arg_z(unsigned n)
{
    return SIZE_MAX - n;
}
static double
mixed_result(unsigned k, unsigned n)
{
    return arg_c(n) + arg_S(k) + arg_i(k, n) + arg_f(n) + arg_d(k) +
           (double)(arg_z(n) & 0xFFFF) + (double)(arg_L(k, n) & 0xFFFF);
}

/* "d(cSiLfdpz)": checks every argument against what caller p's call n
 * passes (n is in L's middle bits) and returns their combination. */
static void
mixed(void *result, void *const *args, void *data)
{
    struct caller *p = *(struct caller *const *)args[6];
    atomic_long *total = data;
    unsigned k = p->index;
    unsigned n = (unsigned)((*(const uint64_t *)args[3] >> 8) & 0xFFFFFF);

    p->runs++;
    atomic_fetch_add(total, 1);
    if (clgc_thread_in_region() || !clgc_thread_attached())
        p->outside++;
    if (*(const int8_t *)args[0] != arg_c(n) ||
        *(const uint16_t *)args[1] != arg_S(k) ||
        *(const int32_t *)args[2] != arg_i(k, n) ||
        *(const uint64_t *)args[3] != arg_L(k, n) ||
        *(const float *)args[4] != arg_f(n) ||
        *(const double *)args[5] != arg_d(k) ||
        *(const size_t *)args[7] != arg_z(n))
        p->bad++;
    *(double *)result = mixed_result(k, n);
}

static void *
call_mixed(void *arg)
{
    struct caller *p = arg;
    mixed_fn fn = (mixed_fn)p->code;
    unsigned k = p->index;

    for (unsigned n = 0; n < CALLS; n++)
        if (fn(arg_c(n), arg_S(k), arg_i(k, n), arg_L(k, n), arg_f(n), arg_d(k),
               p, arg_z(n)) != mixed_result(k, n))
            p->bad++;
    return NULL;
}

START_TEST(closure_from_many_plain_threads)
{
    struct caller callers[THREADS];
    pthread_t t[THREADS];
    clgc_closure_t *closure;
    clgc_function_t code;
    atomic_long total = 0;
    unsigned long attach0 = test_rt_attach_calls(),
                  detach0 = test_rt_detach_calls();

    ck_assert_int_eq(
        clgc_closure_create("d(cSiLfdpz)", mixed, &total, &closure, &code),
        CLGC_OK);
    /* Plain threads are unknown to the runtime until attached. */
    test_rt_set_strict(1);
    for (unsigned k = 0; k < THREADS; k++) {
        callers[k] = (struct caller){.index = k, .code = code};
        ck_assert_int_eq(pthread_create(&t[k], NULL, call_mixed, &callers[k]),
                         0);
    }
    for (unsigned k = 0; k < THREADS; k++)
        ck_assert_int_eq(pthread_join(t[k], NULL), 0);
    test_rt_set_strict(0);
    for (unsigned k = 0; k < THREADS; k++) {
        ck_assert_int_eq(callers[k].bad, 0);
        ck_assert_int_eq(callers[k].outside, 0);
        ck_assert_int_eq(callers[k].runs, CALLS);
    }
    ck_assert_int_eq(atomic_load(&total), THREADS * CALLS);
    /* Each thread attached on its first call only, detached at its exit. */
    ck_assert_uint_eq(test_rt_attach_calls() - attach0, THREADS);
    ck_assert_uint_eq(test_rt_detach_calls() - detach0, THREADS);
    ck_assert_int_eq(clgc_closure_free(closure), CLGC_OK);
}
END_TEST

/* Many one-shot closures, each called once on some thread and freed by its
 * own handler there. */
#define SHOTS 16

struct shooter {
    struct one_shot *shots;
};

static void *
shoot(void *arg)
{
    struct shooter *s = arg;

    for (unsigned i = 0; i < SHOTS; i++)
        call_one_shot(&s->shots[i]);
    return NULL;
}

START_TEST(one_shot_closures_free_themselves_on_many_threads)
{
    static struct one_shot shots[THREADS][SHOTS];
    struct shooter shooters[THREADS];
    pthread_t t[THREADS];

    for (unsigned k = 0; k < THREADS; k++) {
        for (unsigned i = 0; i < SHOTS; i++) {
            shots[k][i].freed = 1;
            atomic_init(&shots[k][i].runs, 0);
            ck_assert_int_eq(clgc_closure_create("v(p)", free_myself, NULL,
                                                 &shots[k][i].closure,
                                                 &shots[k][i].code),
                             CLGC_OK);
        }
        shooters[k].shots = shots[k];
    }
    for (unsigned k = 0; k < THREADS; k++)
        ck_assert_int_eq(pthread_create(&t[k], NULL, shoot, &shooters[k]), 0);
    for (unsigned k = 0; k < THREADS; k++)
        ck_assert_int_eq(pthread_join(t[k], NULL), 0);
    for (unsigned k = 0; k < THREADS; k++)
        for (unsigned i = 0; i < SHOTS; i++) {
            ck_assert_int_eq(atomic_load(&shots[k][i].runs), 1);
            ck_assert_int_eq(shots[k][i].freed, CLGC_OK);
        }
}
END_TEST

Suite *
clgc_make_ffi_threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = test_case("closures");

    tcase_set_tags(tc, TEST_TAG_THREADED);
    tcase_add_test(tc, closure_from_many_plain_threads);
    tcase_add_test(tc, one_shot_closures_free_themselves_on_many_threads);
    suite_add_tcase(s, tc);
    return s;
}
