/* Completion ports (clgc_ml.h): a clgc completion queue whose fd an event
 * loop watches (Lwt's, in Clgc_lwt). Posting an event gives it a tag; a
 * drain returns the tags of the events that completed since, with their
 * statuses. The handlers are C and run inside clgc_queue_drain, on the
 * draining thread: they only append to the port's list. */

#include <stdlib.h>

#include "clgc_ml.h"

struct ml_port {
    clgc_queue_t *q; /* NULL once closed */
    intnat *done;    /* tag, status, tag, status, ... */
    size_t n, cap;
    int failed;           /* a completion could not be listed: out of memory */
    struct ml_port *next; /* on ml_orphans */
};

#define Port_val(v) (*(struct ml_port **)Data_custom_val(v))

/* The port whose queue this thread drains (or closes), for its handlers. */
static __thread struct ml_port *ml_draining;

/* Ports the program dropped with posts still to complete: drained and
 * closed by a later stub once those have (their fds closed then, not
 * kept for good). Under the runtime lock. */
static struct ml_port *ml_orphans;

/* Drain p (the completions go nowhere) and close it; whether it is. */
static int
ml_port_close_orphan(struct ml_port *p)
{
    int rc;

    ml_draining = p;
    (void)clgc_queue_drain(p->q, 0);
    p->n = 0;
    rc = clgc_queue_close(p->q);
    ml_draining = NULL;
    if (rc != CLGC_OK)
        return 0;
    free(p->done);
    free(p);
    return 1;
}

void
clgc_ml_tidy_ports(void)
{
    struct ml_port **link = &ml_orphans;

    while (*link != NULL) {
        struct ml_port *p = *link;

        *link = p->next;
        if (!ml_port_close_orphan(p)) {
            p->next = *link;
            *link = p;
            link = &p->next;
        }
    }
}

/* A port the program dropped without closing: closed if nothing is
 * pending, else an orphan until its completions have come. */
static void
ml_port_finalize(value v)
{
    struct ml_port *p = Port_val(v);
    int rc;

    if (p == NULL)
        return;
    if (p->q != NULL) {
        ml_draining = p;
        rc = clgc_queue_close(p->q);
        ml_draining = NULL;
        if (rc != CLGC_OK) {
            p->next = ml_orphans;
            ml_orphans = p;
            return;
        }
    }
    free(p->done);
    free(p);
}

static struct custom_operations ml_port_ops = {"clgc.port",
                                               ml_port_finalize,
                                               custom_compare_default,
                                               custom_hash_default,
                                               custom_serialize_default,
                                               custom_deserialize_default,
                                               custom_compare_ext_default,
                                               custom_fixed_length_default};

static struct ml_port *
ml_port_get(value v)
{
    struct ml_port *p = Port_val(v);

    if (p == NULL || p->q == NULL)
        caml_invalid_argument("Clgc: the port is closed");
    return p;
}

value
ml_clgc_port(value unit)
{
    CAMLparam1(unit);
    CAMLlocal1(v);
    ML_STUB;
    struct ml_port *p = calloc(1, sizeof(*p));

    if (p == NULL || clgc_queue_create(&p->q) != CLGC_OK) {
        free(p);
        caml_failwith("Clgc.port: no completion queue (out of memory or "
                      "file descriptors)");
    }
    v = caml_alloc_custom(&ml_port_ops, sizeof(p), 0, 1);
    Port_val(v) = p;
    ML_RETURN(v);
}

value
ml_clgc_port_fd(value port)
{
    ML_STUB;
    return Val_int(clgc_queue_fd(ml_port_get(port)->q));
}

/* In clgc_queue_drain, on the draining thread. */
static void
ml_port_done(cl_event event, cl_int status, void *data)
{
    intnat tag = (intnat)data;
    struct ml_port *p = ml_draining;

    (void)event;
    if (p->n + 2 > p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 32;
        intnat *d = realloc(p->done, cap * sizeof(*d));

        if (d == NULL) {
            p->failed = 1;
            return;
        }
        p->done = d;
        p->cap = cap;
    }
    p->done[p->n++] = tag;
    p->done[p->n++] = status;
}

/* post port event tag */
value
ml_clgc_post(value port, value event, value tag)
{
    CAMLparam3(port, event, tag);
    ML_STUB;
    struct ml_port *p = ml_port_get(port);
    void *e = clgc_ml_get(event, ML_EVENT, "Clgc.post");
    cl_int err;

    err = clgc_event_post(e, p->q, ml_port_done, (void *)Long_val(tag));
    ML_CHECK(err, "clgc_event_post");
    ML_RETURN(Val_unit);
}

/* drain port -> (tag, status) array, in the order they completed */
value
ml_clgc_drain(value port)
{
    CAMLparam1(port);
    CAMLlocal2(arr, pair);
    ML_STUB;
    struct ml_port *p = ml_port_get(port);
    int rc;

    p->n = 0;
    ml_draining = p;
    rc = clgc_queue_drain(p->q, 0);
    ml_draining = NULL;
    if (rc < 0)
        caml_failwith(clgc_strerror(rc));
    if (p->failed) {
        p->failed = 0;
        caml_raise_out_of_memory();
    }
    arr = caml_alloc_tuple(p->n / 2);
    for (size_t i = 0; i < p->n / 2; i++) {
        pair = caml_alloc_small(2, 0);
        Field(pair, 0) = Val_long(p->done[2 * i]);
        Field(pair, 1) = Val_int((int)p->done[2 * i + 1]);
        Store_field(arr, i, pair);
    }
    /* A callback's failure is raised by a drain that took no completion
     * (or the next wait): raised now, it would lose these. */
    if (p->n == 0)
        clgc_ml_raise_pending();
    ML_RETURN(arr);
}

/* close_port port: Invalid_argument while completions are still to come. */
value
ml_clgc_close_port(value port)
{
    ML_STUB;
    struct ml_port *p = Port_val(port);
    int rc;

    if (p == NULL || p->q == NULL)
        return Val_unit;
    ml_draining = p;
    rc = clgc_queue_close(p->q);
    ml_draining = NULL;
    if (rc == CLGC_EBUSY)
        caml_invalid_argument("Clgc.close_port: events posted to it are "
                              "still to complete");
    if (rc != CLGC_OK)
        caml_failwith(clgc_strerror(rc));
    p->q = NULL;
    return Val_unit;
}
