/* Launches, waits, user events and event callbacks (clgc_ml.h). */

#include <stdlib.h>

#include "clgc_ml.h"

/* What callbacks raised, oldest last: an OCaml list, a global root,
 * touched only with the runtime lock held. */
static value ml_failed = Val_emptylist;
static int ml_failed_rooted;

static void
ml_failed_push(value exn)
{
    CAMLparam1(exn);
    CAMLlocal1(cell);

    if (!ml_failed_rooted) {
        caml_register_generational_global_root(&ml_failed);
        ml_failed_rooted = 1;
    }
    cell = caml_alloc_small(2, 0);
    Field(cell, 0) = exn;
    Field(cell, 1) = ml_failed;
    caml_modify_generational_global_root(&ml_failed, cell);
    CAMLreturn0;
}

void
clgc_ml_raise_pending(void)
{
    CAMLparam0();
    CAMLlocal2(l, exn);
    const value *failed;

    if (ml_failed == Val_emptylist)
        CAMLreturn0;
    /* The oldest, the list's last. */
    l = ml_failed;
    if (Field(l, 1) == Val_emptylist) {
        exn = Field(l, 0);
        caml_modify_generational_global_root(&ml_failed, Val_emptylist);
    } else {
        CAMLlocal1(prev);

        while (Field(Field(l, 1), 1) != Val_emptylist)
            l = Field(l, 1);
        prev = l;
        exn = Field(Field(prev, 1), 0);
        Store_field(prev, 1, Val_emptylist);
    }
    failed = caml_named_value("Clgc.Callback_failed");
    if (failed == NULL)
        caml_raise(exn);
    caml_raise_with_arg(*failed, exn);
    CAMLreturn0;
}

/* launch queue kernel global local wait -> event handle; local is [||]
 * for the driver's choice. */
value
ml_clgc_launch(value queue, value kernel, value global, value local, value wait)
{
    CAMLparam5(queue, kernel, global, local, wait);
    ML_STUB;
    void *q = clgc_ml_get(queue, ML_QUEUE, "Clgc.launch");
    void *k = clgc_ml_get(kernel, ML_KERNEL, "Clgc.launch");
    size_t g[3], l[3];
    cl_uint dim = clgc_ml_sizes(global, g, "Clgc.launch"), n;
    cl_event *w, ev = NULL;
    cl_int err;

    if (Wosize_val(local) > 0 && clgc_ml_sizes(local, l, "Clgc.launch") != dim)
        clgc_ml_raise(CL_INVALID_WORK_DIMENSION, "clEnqueueNDRangeKernel",
                      "the local and global sizes differ in dimension");
    /* A local size of 0 reaches PoCL's division (SIGFPE). */
    for (cl_uint i = 0; Wosize_val(local) > 0 && i < dim; i++)
        if (l[i] == 0)
            caml_invalid_argument("Clgc.launch: a local size of 0");
    clgc_ml_kernel_ready(kernel, "Clgc.launch");
    w = clgc_ml_events(wait, &n, "Clgc.launch");
    err = clgc_clEnqueueNDRangeKernel(
        q, k, dim, NULL, g, Wosize_val(local) > 0 ? l : NULL, n, w, &ev);
    free(w);
    ML_CHECK(err, "clEnqueueNDRangeKernel");
    ML_RETURN(clgc_ml_wrap(ML_EVENT, ev));
}

/* wait events: clgc's cooperative wait, the lock let go throughout. */
value
ml_clgc_wait(value events)
{
    CAMLparam1(events);
    ML_STUB;
    cl_uint n;
    cl_event *e = clgc_ml_events(events, &n, "Clgc.wait");
    cl_int err;

    err = n > 0 ? clgc_wait_for_events(n, e) : CL_SUCCESS;
    free(e);
    clgc_ml_raise_pending();
    ML_CHECK(err, "clgc_wait_for_events");
    ML_RETURN(Val_unit);
}

/* queue_call queue finish: clFinish (1) or clFlush (0). */
value
ml_clgc_queue_call(value queue, value finish)
{
    CAMLparam2(queue, finish);
    ML_STUB;
    void *q = clgc_ml_get(queue, ML_QUEUE, "Clgc.finish");
    cl_int err;

    err = Bool_val(finish) ? clgc_clFinish(q) : clgc_clFlush(q);
    if (Bool_val(finish))
        clgc_ml_raise_pending();
    ML_CHECK(err, Bool_val(finish) ? "clFinish" : "clFlush");
    ML_RETURN(Val_unit);
}

/* marker queue barrier wait: an event that completes once the events in
 * wait (all of the queue's commands before it, if none) have; a barrier
 * also holds the queue's later commands until then. */
value
ml_clgc_marker(value queue, value barrier, value wait)
{
    CAMLparam3(queue, barrier, wait);
    ML_STUB;
    const char *who = Bool_val(barrier) ? "Clgc.barrier" : "Clgc.marker";
    void *q = clgc_ml_get(queue, ML_QUEUE, who);
    cl_uint n;
    cl_event *w = clgc_ml_events(wait, &n, who), ev = NULL;
    cl_int err = Bool_val(barrier)
                     ? clgc_clEnqueueBarrierWithWaitList(q, n, w, &ev)
                     : clgc_clEnqueueMarkerWithWaitList(q, n, w, &ev);

    free(w);
    ML_CHECK(err, Bool_val(barrier) ? "clEnqueueBarrierWithWaitList"
                                    : "clEnqueueMarkerWithWaitList");
    ML_RETURN(clgc_ml_wrap(ML_EVENT, ev));
}

value
ml_clgc_user_event(value context)
{
    CAMLparam1(context);
    ML_STUB;
    void *c = clgc_ml_get(context, ML_CONTEXT, "Clgc.user_event");
    cl_event ev;
    cl_int err;

    ev = clgc_clCreateUserEvent(c, &err);
    ML_CHECK(err, "clCreateUserEvent");
    ML_RETURN(clgc_ml_wrap(ML_EVENT, ev));
}

/* set_status event status: CL_COMPLETE (0) or a negative error. */
value
ml_clgc_set_status(value event, value status)
{
    CAMLparam2(event, status);
    ML_STUB;
    void *e = clgc_ml_get(event, ML_EVENT, "Clgc.set_status");
    cl_int err;

    err = clgc_clSetUserEventStatus(e, (cl_int)Int_val(status));
    ML_CHECK(err, "clSetUserEventStatus");
    ML_RETURN(Val_unit);
}

/* status event: CL_COMPLETE (0), CL_RUNNING (1), CL_SUBMITTED (2),
 * CL_QUEUED (3) or a negative error. */
value
ml_clgc_status(value event)
{
    CAMLparam1(event);
    ML_STUB;
    void *e = clgc_ml_get(event, ML_EVENT, "Clgc.status");
    cl_int status = 0, err;

    err = clgc_clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS,
                              sizeof(status), &status, NULL);
    ML_CHECK(err, "clGetEventInfo");
    ML_RETURN(Val_int(status));
}

/* An event callback: the OCaml closure, a global root until it has run. */
struct ml_callback {
    value closure;
    cl_int status;
};

static struct ml_callback *
ml_callback_new(value closure)
{
    struct ml_callback *cb = malloc(sizeof(*cb));

    if (cb == NULL)
        caml_raise_out_of_memory();
    cb->closure = closure;
    caml_register_generational_global_root(&cb->closure);
    return cb;
}

static void
ml_callback_free(struct ml_callback *cb)
{
    caml_remove_generational_global_root(&cb->closure);
    free(cb);
}

static void *
ml_callback_run(void *data)
{
    struct ml_callback *cb = data;
    value r = caml_callback_exn(cb->closure, Val_int(cb->status));

    if (Is_exception_result(r))
        ml_failed_push(Extract_exception(r));
    ml_callback_free(cb);
    return NULL;
}

/* On the thread OpenCL calls back on (clgc runs it with the runtime
 * active: PoCL's, attached; or one inside a wrapper): the closure runs
 * with the runtime lock held. */
static void
ml_callback_call(void *data, cl_int status)
{
    struct ml_callback *cb = data;

    cb->status = status;
    clgc_ml_active(ml_callback_run, cb);
}

static void CL_CALLBACK
ml_callback(cl_event event, cl_int status, void *data)
{
    (void)event;
    ml_callback_call(data, status);
}

/* on_status event type closure: type CL_COMPLETE, CL_RUNNING or
 * CL_SUBMITTED; the closure gets the status reached, or an error. */
value
ml_clgc_on_status(value event, value type, value closure)
{
    CAMLparam3(event, type, closure);
    ML_STUB;
    void *e = clgc_ml_get(event, ML_EVENT, "Clgc.on_status");
    struct ml_callback *cb = ml_callback_new(closure);
    cl_int err;

    err = clgc_clSetEventCallback(e, (cl_int)Int_val(type), ml_callback, cb);
    if (err != CL_SUCCESS) {
        ml_callback_free(cb);
        clgc_ml_raise(err, "clSetEventCallback", NULL);
    }
    ML_RETURN(Val_unit);
}

/* A build's notification: the closure, rooted until it has run. The
 * stub and the notification (both with the runtime lock held) agree on
 * who frees the record: the stub if the notification came before the
 * build returned or will never come, else the notification. */
struct ml_build_note {
    value closure;
    int called, stub_done;
};

static void
ml_build_note_free(struct ml_build_note *b)
{
    caml_remove_generational_global_root(&b->closure);
    free(b);
}

static void *
ml_build_note_run(void *data)
{
    struct ml_build_note *b = data;
    value r = caml_callback_exn(b->closure, Val_unit);

    if (Is_exception_result(r))
        ml_failed_push(Extract_exception(r));
    b->called = 1;
    if (b->stub_done)
        ml_build_note_free(b);
    return NULL;
}

static void CL_CALLBACK
ml_build_notified(cl_program program, void *data)
{
    (void)program;
    clgc_ml_active(ml_build_note_run, data);
}

/* build_notify program options closure: clBuildProgram with a
 * notification; a failure raises as Clgc.build does. */
value
ml_clgc_build_notify(value program, value options, value closure)
{
    CAMLparam3(program, options, closure);
    ML_STUB;
    void *p = clgc_ml_get(program, ML_PROGRAM, "Clgc.build");
    struct ml_build_note *b = malloc(sizeof(*b));
    char *opts;
    cl_int err;

    if (b == NULL)
        caml_raise_out_of_memory();
    opts = clgc_ml_strdup(options);
    b->closure = closure;
    b->called = 0;
    b->stub_done = 0;
    caml_register_generational_global_root(&b->closure);
    err = clgc_clBuildProgram(p, 0, NULL, opts, ml_build_notified, b);
    free(opts);
    /* A build that failed may still notify later (OpenCL leaves it to the
     * driver); one refused outright never does. */
    if (b->called || (err != CL_SUCCESS && err != CL_BUILD_PROGRAM_FAILURE))
        ml_build_note_free(b);
    else
        b->stub_done = 1;
    if (err != CL_SUCCESS)
        clgc_ml_raise_owned(err, "clBuildProgram", clgc_ml_build_logs(p));
    ML_RETURN(Val_unit);
}

/* OpenCL's destructor callbacks: the closure, an ml_callback, runs once
 * when OpenCL destroys the object, as an event callback runs (status 0). */
static void CL_CALLBACK
ml_mem_destroyed(cl_mem mem, void *data)
{
    (void)mem;
    ml_callback_call(data, 0);
}

static void CL_CALLBACK
ml_context_destroyed(cl_context context, void *data)
{
    (void)context;
    ml_callback_call(data, 0);
}

/* on_release obj closure: obj a memory object or a context. */
value
ml_clgc_on_release(value obj, value closure)
{
    CAMLparam2(obj, closure);
    ML_STUB;
    const char *who = "Clgc.on_release";
    int mem = Handle_val(obj)->kind == ML_MEM;
    void *h = clgc_ml_get(obj, mem ? ML_MEM : ML_CONTEXT, who);
    struct ml_callback *cb = ml_callback_new(closure);
    cl_int err;

    err =
        mem ? clgc_clSetMemObjectDestructorCallback(h, ml_mem_destroyed, cb)
            : clgc_clSetContextDestructorCallback(h, ml_context_destroyed, cb);
    if (err != CL_SUCCESS) {
        ml_callback_free(cb);
        clgc_ml_raise(err,
                      mem ? "clSetMemObjectDestructorCallback"
                          : "clSetContextDestructorCallback",
                      NULL);
    }
    ML_RETURN(Val_unit);
}
