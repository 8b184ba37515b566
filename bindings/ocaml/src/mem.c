/* Buffers over Bigarrays and their transfers (clgc_ml.h). A Bigarray's
 * data is outside OCaml's heap and never moves: OpenCL reads and writes
 * it in place, with the lock let go. A buffer over a Bigarray keeps it
 * until OpenCL destroys the buffer, a non-blocking transfer until the
 * command completes: a global root, dropped by the next stub to start
 * (clgc_ml_enter) after the callback lists it. */

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clgc_ml.h"

/* The size in bytes of a Bigarray. */
static size_t
ml_ba_bytes(value ba)
{
    return caml_ba_byte_size(Caml_ba_array_val(ba));
}

/* buffer context flags size */
value
ml_clgc_buffer(value context, value flags, value size)
{
    CAMLparam3(context, flags, size);
    ML_STUB;
    void *c = clgc_ml_get(context, ML_CONTEXT, "Clgc.buffer");
    cl_mem m;
    cl_int err;

    if (Long_val(size) < 0)
        caml_invalid_argument("Clgc.buffer: a negative size");
    m = clgc_clCreateBuffer(c, (cl_mem_flags)Int64_val(flags),
                            (size_t)Long_val(size), NULL, &err);
    ML_CHECK(err, "clCreateBuffer");
    ML_RETURN(clgc_ml_wrap(ML_MEM, m));
}

/* The Bigarrays of non-blocking transfers still running: each a global
 * root in a record that the completion callback moves to the done list
 * (any thread, no lock: a lock-free stack), which the next transfer or
 * wait empties with the runtime lock held. */
struct ml_keep {
    value ba;
    struct ml_keep *next;
};
static _Atomic(struct ml_keep *) ml_done;

static void
ml_keep_push(struct ml_keep *k)
{
    struct ml_keep *head;

    head = atomic_load_explicit(&ml_done, memory_order_relaxed);
    do
        k->next = head;
    while (!atomic_compare_exchange_weak_explicit(
        &ml_done, &head, k, memory_order_release, memory_order_relaxed));
}

static void CL_CALLBACK
ml_keep_done(cl_event event, cl_int status, void *data)
{
    (void)event;
    (void)status;
    ml_keep_push(data);
}

static void CL_CALLBACK
ml_keep_destroyed(cl_mem mem, void *data)
{
    (void)mem;
    ml_keep_push(data);
}

void
clgc_ml_drop_kept(void)
{
    struct ml_keep *k;

    if (atomic_load_explicit(&ml_done, memory_order_relaxed) == NULL)
        return;
    k = atomic_exchange_explicit(&ml_done, NULL, memory_order_acquire);

    while (k != NULL) {
        struct ml_keep *next = k->next;

        caml_remove_generational_global_root(&k->ba);
        free(k);
        k = next;
    }
}

/* Keep ba until ev completes or, without ev, OpenCL destroys m. */
static cl_int
ml_keep(value ba, cl_event ev, cl_mem m)
{
    struct ml_keep *k = malloc(sizeof(*k));
    cl_int err;

    if (k == NULL)
        return CL_OUT_OF_HOST_MEMORY;
    k->ba = ba;
    caml_register_generational_global_root(&k->ba);
    err = ev != NULL
              ? clgc_clSetEventCallback(ev, CL_COMPLETE, ml_keep_done, k)
              : clgc_clSetMemObjectDestructorCallback(m, ml_keep_destroyed, k);
    if (err != CL_SUCCESS) {
        caml_remove_generational_global_root(&k->ba);
        free(k);
    }
    return err;
}

cl_int
clgc_ml_keep_until_complete(cl_event ev, value ba)
{
    return ml_keep(ba, ev, NULL);
}

cl_int
clgc_ml_keep_until_destroyed(cl_mem m, value ba)
{
    return ml_keep(ba, NULL, m);
}

/* buffer_of context flags bigarray: CL_MEM_USE_HOST_PTR, the buffer's
 * memory the Bigarray's, kept until OpenCL destroys the buffer (its
 * destructor callback: the commands that use it retain it, so it can
 * outlive its OCaml value); or CL_MEM_COPY_HOST_PTR, as flags say. */
value
ml_clgc_buffer_of(value context, value flags, value ba)
{
    CAMLparam3(context, flags, ba);
    ML_STUB;
    void *c = clgc_ml_get(context, ML_CONTEXT, "Clgc.buffer_of");
    cl_mem_flags f = (cl_mem_flags)Int64_val(flags);
    cl_mem m;
    cl_int err;

    m = clgc_clCreateBuffer(c, f, ml_ba_bytes(ba), Caml_ba_data_val(ba), &err);
    if (err == CL_SUCCESS && (f & CL_MEM_USE_HOST_PTR) &&
        (err = clgc_ml_keep_until_destroyed(m, ba)) != CL_SUCCESS)
        clgc_clReleaseMemObject(m);
    ML_CHECK(err, "clCreateBuffer");
    ML_RETURN(clgc_ml_wrap(ML_MEM, m));
}

value
clgc_ml_transferred(cl_int err, cl_event ev, cl_bool block, value ba,
                    const char *call)
{
    if (err == CL_SUCCESS && !block && clgc_ml_keep_until_complete(ev, ba) != 0)
        err = clgc_wait_for_events(1, &ev); /* kept by the stub's root */
    if (err != CL_SUCCESS) {
        if (ev != NULL)
            clgc_clReleaseEvent(ev);
        clgc_ml_raise(err, call, NULL);
    }
    return clgc_ml_wrap(ML_EVENT, ev);
}

/* transfer queue mem ba offset blocking write wait -> event handle */
value
ml_clgc_transfer(value queue, value mem, value ba, value offset, value blocking,
                 value write, value wait)
{
    CAMLparam5(queue, mem, ba, offset, blocking);
    CAMLxparam2(write, wait);
    ML_STUB;
    const char *who = Bool_val(write) ? "Clgc.write" : "Clgc.read";
    void *q = clgc_ml_get(queue, ML_QUEUE, who);
    void *m = clgc_ml_get_mem(mem, CLGC_ARG_BUFFER, who);
    cl_bool block = Bool_val(blocking) ? CL_TRUE : CL_FALSE;
    cl_uint n;
    cl_event *w, ev = NULL;
    cl_int err;

    if (Long_val(offset) < 0)
        caml_invalid_argument("Clgc.read/write: a negative offset");
    w = clgc_ml_events(wait, &n, who);
    if (Bool_val(write))
        err = clgc_clEnqueueWriteBuffer(q, m, block, (size_t)Long_val(offset),
                                        ml_ba_bytes(ba), Caml_ba_data_val(ba),
                                        n, w, &ev);
    else
        err = clgc_clEnqueueReadBuffer(q, m, block, (size_t)Long_val(offset),
                                       ml_ba_bytes(ba), Caml_ba_data_val(ba), n,
                                       w, &ev);
    free(w);
    ML_RETURN(clgc_ml_transferred(err, ev, block, ba,
                                  Bool_val(write) ? "clEnqueueWriteBuffer"
                                                  : "clEnqueueReadBuffer"));
}

value
ml_clgc_transfer_bc(value *argv, int argn)
{
    (void)argn;
    return ml_clgc_transfer(argv[0], argv[1], argv[2], argv[3], argv[4],
                            argv[5], argv[6]);
}

/* sub_buffer mem flags origin size: a region of a buffer (OpenCL keeps the
 * parent alive for it). A region past the parent's end, or an origin not
 * aligned as the device asks, is OpenCL's error. */
value
ml_clgc_sub_buffer(value mem, value flags, value origin, value size)
{
    CAMLparam4(mem, flags, origin, size);
    ML_STUB;
    void *m = clgc_ml_get_mem(mem, CLGC_ARG_BUFFER, "Clgc.sub_buffer");
    cl_buffer_region r;
    cl_mem s;
    cl_int err;

    if (Long_val(origin) < 0 || Long_val(size) < 0)
        caml_invalid_argument("Clgc.sub_buffer: a negative origin or size");
    r.origin = (size_t)Long_val(origin);
    r.size = (size_t)Long_val(size);
    s = clgc_clCreateSubBuffer(m, (cl_mem_flags)Int64_val(flags),
                               CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    ML_CHECK(err, "clCreateSubBuffer");
    ML_RETURN(clgc_ml_wrap(ML_MEM, s));
}

/* fill queue mem pattern offset size wait: the pattern's bytes (a copy:
 * the call lets the lock go) over size bytes at offset. */
value
ml_clgc_fill(value queue, value mem, value pattern, value offset, value size,
             value wait)
{
    CAMLparam5(queue, mem, pattern, offset, size);
    CAMLxparam1(wait);
    ML_STUB;
    const char *who = "Clgc.fill";
    void *q = clgc_ml_get(queue, ML_QUEUE, who);
    void *m = clgc_ml_get_mem(mem, CLGC_ARG_BUFFER, who);
    size_t n = caml_string_length(pattern);
    unsigned char p[128];
    cl_uint nw;
    cl_event *w, ev = NULL;
    cl_int err;

    if (Long_val(offset) < 0 || Long_val(size) < 0)
        caml_invalid_argument("Clgc.fill: a negative offset or size");
    if (n == 0 || n > sizeof(p))
        caml_invalid_argument("Clgc.fill: a pattern of 1 to 128 bytes");
    memcpy(p, String_val(pattern), n);
    w = clgc_ml_events(wait, &nw, who);
    err = clgc_clEnqueueFillBuffer(q, m, p, n, (size_t)Long_val(offset),
                                   (size_t)Long_val(size), nw, w, &ev);
    free(w);
    ML_CHECK(err, "clEnqueueFillBuffer");
    ML_RETURN(clgc_ml_wrap(ML_EVENT, ev));
}

value
ml_clgc_fill_bc(value *argv, int argn)
{
    (void)argn;
    return ml_clgc_fill(argv[0], argv[1], argv[2], argv[3], argv[4], argv[5]);
}

/* copy queue src dst src_offset dst_offset size wait */
value
ml_clgc_copy(value queue, value src, value dst, value src_offset,
             value dst_offset, value size, value wait)
{
    CAMLparam5(queue, src, dst, src_offset, dst_offset);
    CAMLxparam2(size, wait);
    ML_STUB;
    const char *who = "Clgc.copy";
    void *q = clgc_ml_get(queue, ML_QUEUE, who);
    void *s = clgc_ml_get_mem(src, CLGC_ARG_BUFFER, who);
    void *d = clgc_ml_get_mem(dst, CLGC_ARG_BUFFER, who);
    cl_uint nw;
    cl_event *w, ev = NULL;
    cl_int err;

    if (Long_val(src_offset) < 0 || Long_val(dst_offset) < 0 ||
        Long_val(size) < 0)
        caml_invalid_argument("Clgc.copy: a negative offset or size");
    w = clgc_ml_events(wait, &nw, who);
    err = clgc_clEnqueueCopyBuffer(q, s, d, (size_t)Long_val(src_offset),
                                   (size_t)Long_val(dst_offset),
                                   (size_t)Long_val(size), nw, w, &ev);
    free(w);
    ML_CHECK(err, "clEnqueueCopyBuffer");
    ML_RETURN(clgc_ml_wrap(ML_EVENT, ev));
}

value
ml_clgc_copy_bc(value *argv, int argn)
{
    (void)argn;
    return ml_clgc_copy(argv[0], argv[1], argv[2], argv[3], argv[4], argv[5],
                        argv[6]);
}

size_t
clgc_ml_mem_size(void *m)
{
    size_t size = 0;

    ML_CHECK(clgc_clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof(size), &size, NULL),
             "clGetMemObjectInfo");
    return size;
}

/* A rectangle's geometry, as Clgc passes it: 13 numbers, both origins,
 * the region, then both sides' row and slice pitches (0: packed), each
 * side checked against the bytes it has (clgc_rect_check) before OpenCL
 * sees it; raises CL_INVALID_VALUE as call's, saying which side. */
struct ml_rect {
    size_t origin[2][3], region[3], pitch[2][2];
};

static void
ml_rect(value geometry, const size_t size[2], const char *const side[2],
        const char *call, struct ml_rect *r)
{
    for (int i = 0; i < 3; i++) {
        r->origin[0][i] = (size_t)Long_val(Field(geometry, i));
        r->origin[1][i] = (size_t)Long_val(Field(geometry, 3 + i));
        r->region[i] = (size_t)Long_val(Field(geometry, 6 + i));
    }
    for (int s = 0; s < 2; s++) {
        const char *wrong;

        r->pitch[s][0] = (size_t)Long_val(Field(geometry, 9 + 2 * s));
        r->pitch[s][1] = (size_t)Long_val(Field(geometry, 10 + 2 * s));
        wrong = clgc_rect_check(r->origin[s], r->region, &r->pitch[s][0],
                                &r->pitch[s][1], size[s]);
        if (wrong != NULL) {
            char message[160];

            snprintf(message, sizeof(message), "%s: %s", side[s], wrong);
            clgc_ml_raise(CL_INVALID_VALUE, call, message);
        }
    }
}

/* rect_transfer queue mem ba geometry blocking write wait: a rectangle
 * between the buffer (the first side) and the Bigarray (the second). */
value
ml_clgc_rect_transfer(value queue, value mem, value ba, value geometry,
                      value blocking, value write, value wait)
{
    CAMLparam5(queue, mem, ba, geometry, blocking);
    CAMLxparam2(write, wait);
    ML_STUB;
    const char *who = Bool_val(write) ? "Clgc.write_rect" : "Clgc.read_rect";
    const char *call = Bool_val(write) ? "clEnqueueWriteBufferRect"
                                       : "clEnqueueReadBufferRect";
    static const char *const side[2] = {"the buffer's side",
                                        "the Bigarray's side"};
    void *q = clgc_ml_get(queue, ML_QUEUE, who);
    void *m = clgc_ml_get_mem(mem, CLGC_ARG_BUFFER, who);
    cl_bool block = Bool_val(blocking) ? CL_TRUE : CL_FALSE;
    size_t size[2] = {clgc_ml_mem_size(m), ml_ba_bytes(ba)};
    struct ml_rect r;
    cl_uint n;
    cl_event *w, ev = NULL;
    cl_int err;

    ml_rect(geometry, size, side, call, &r);
    w = clgc_ml_events(wait, &n, who);
    if (Bool_val(write))
        err = clgc_clEnqueueWriteBufferRect(
            q, m, block, r.origin[0], r.origin[1], r.region, r.pitch[0][0],
            r.pitch[0][1], r.pitch[1][0], r.pitch[1][1], Caml_ba_data_val(ba),
            n, w, &ev);
    else
        err = clgc_clEnqueueReadBufferRect(
            q, m, block, r.origin[0], r.origin[1], r.region, r.pitch[0][0],
            r.pitch[0][1], r.pitch[1][0], r.pitch[1][1], Caml_ba_data_val(ba),
            n, w, &ev);
    free(w);
    ML_RETURN(clgc_ml_transferred(err, ev, block, ba, call));
}

value
ml_clgc_rect_transfer_bc(value *argv, int argn)
{
    (void)argn;
    return ml_clgc_rect_transfer(argv[0], argv[1], argv[2], argv[3], argv[4],
                                 argv[5], argv[6]);
}

/* copy_rect queue src dst geometry wait */
value
ml_clgc_copy_rect(value queue, value src, value dst, value geometry, value wait)
{
    CAMLparam5(queue, src, dst, geometry, wait);
    ML_STUB;
    const char *who = "Clgc.copy_rect", *call = "clEnqueueCopyBufferRect";
    static const char *const side[2] = {"the source", "the destination"};
    void *q = clgc_ml_get(queue, ML_QUEUE, who);
    void *s = clgc_ml_get_mem(src, CLGC_ARG_BUFFER, who);
    void *d = clgc_ml_get_mem(dst, CLGC_ARG_BUFFER, who);
    size_t size[2] = {clgc_ml_mem_size(s), clgc_ml_mem_size(d)};
    struct ml_rect r;
    cl_uint n;
    cl_event *w, ev = NULL;
    cl_int err;

    ml_rect(geometry, size, side, call, &r);
    w = clgc_ml_events(wait, &n, who);
    err = clgc_clEnqueueCopyBufferRect(q, s, d, r.origin[0], r.origin[1],
                                       r.region, r.pitch[0][0], r.pitch[0][1],
                                       r.pitch[1][0], r.pitch[1][1], n, w, &ev);
    free(w);
    ML_CHECK(err, call);
    ML_RETURN(clgc_ml_wrap(ML_EVENT, ev));
}

/* Maps. A map's Bigarray is over the mapped memory, flagged
 * CAML_BA_MANAGED with a proxy of clgc's, which the Bigarray library
 * shares with every sub-array, slice and reshape of it and counts (it
 * frees a proxy, and its data, only when the count reaches 0): the
 * mapping keeps one count of its own, so the proxy is never freed by the
 * collector, and the count tells when no Bigarray over the mapping is
 * left. Until then the mapping retains its buffer and queue, so no
 * Bigarray over it ever reaches freed memory. Unmap empties the Bigarray
 * it is given (0 elements: any access raises Invalid_argument); a
 * sub-array cannot be reached to be emptied, and keeps the buffer until
 * it is collected. A mapping whose Bigarrays were all collected without
 * an unmap is unmapped then. The list is the runtime lock's. */
struct ml_mapping {
    struct caml_ba_proxy proxy; /* the Bigarrays' counts and ours */
    cl_mem mem;                 /* retained */
    cl_command_queue queue;     /* retained: where an unmap goes */
    void *ptr;                  /* what the map returned */
    int unmapped;
    struct ml_mapping *next;
};
static struct ml_mapping *ml_mappings;

/* Free the mappings no Bigarray is over any more, unmapping those never
 * unmapped. */
static void
ml_mappings_tidy(void)
{
    struct ml_mapping **p = &ml_mappings;

    while (*p != NULL) {
        struct ml_mapping *m = *p;

        if (m->proxy.refcount > 1) {
            p = &m->next;
            continue;
        }
        *p = m->next;
        if (!m->unmapped) {
            cl_event ev = NULL;

            if (clgc_clEnqueueUnmapMemObject(m->queue, m->mem, m->ptr, 0, NULL,
                                             &ev) == CL_SUCCESS)
                clgc_clReleaseEvent(ev);
        }
        clgc_clReleaseCommandQueue(m->queue);
        clgc_clReleaseMemObject(m->mem);
        free(m);
    }
}

/* The bytes of an element of Bigarray kind k, in the order of OCaml's
 * enum caml_ba_kind (the library's own table is internal). */
static size_t
ml_ba_element(int k)
{
    static const unsigned char size[] = {
        4, 8, 1, 1, 2, 2, 4, 8, sizeof(value), sizeof(value), 8, 16, 1};

    return size[k];
}

/* map queue mem flags offset size kind wait -> Bigarray; size < 0: the
 * rest of the buffer from offset. A blocking map. */
value
ml_clgc_map(value queue, value mem, value flags, value offset, value size,
            value kind, value wait)
{
    CAMLparam5(queue, mem, flags, offset, size);
    CAMLxparam2(kind, wait);
    CAMLlocal1(ba);
    ML_STUB;
    const char *who = "Clgc.map";
    void *q = clgc_ml_get(queue, ML_QUEUE, who);
    void *b = clgc_ml_get_mem(mem, CLGC_ARG_BUFFER, who);
    int k = Caml_ba_kind_val(kind);
    size_t whole = clgc_ml_mem_size(b), off = (size_t)Long_val(offset), bytes;
    intnat elements;
    struct ml_mapping *m;
    cl_uint n;
    cl_event *w, ev = NULL;
    cl_int err;

    if (Long_val(offset) < 0)
        caml_invalid_argument("Clgc.map: a negative offset");
    if (off > whole)
        clgc_ml_raise(CL_INVALID_VALUE, "clEnqueueMapBuffer",
                      "the offset lies past the buffer's end");
    bytes = Long_val(size) < 0 ? whole - off : (size_t)Long_val(size);
    if (bytes % ml_ba_element(k) != 0)
        caml_invalid_argument("Clgc.map: a size that is no multiple of the "
                              "Bigarray kind's element");
    ml_mappings_tidy();
    w = clgc_ml_events(wait, &n, who);
    if ((m = calloc(1, sizeof(*m))) == NULL) {
        free(w);
        caml_raise_out_of_memory();
    }
    m->ptr =
        clgc_clEnqueueMapBuffer(q, b, CL_TRUE, (cl_map_flags)Int64_val(flags),
                                off, bytes, n, w, &ev, &err);
    free(w);
    if (err != CL_SUCCESS) {
        free(m);
        clgc_ml_raise(err, "clEnqueueMapBuffer", NULL);
    }
    clgc_clReleaseEvent(ev);
    clgc_clRetainMemObject(b);
    clgc_clRetainCommandQueue(q);
    m->mem = b;
    m->queue = q;
    m->proxy.refcount = 2; /* the Bigarray's and the mapping's */
    m->proxy.data = m;
    m->proxy.size = bytes;
    m->next = ml_mappings;
    ml_mappings = m;
    elements = (intnat)(bytes / ml_ba_element(k));
    ba = caml_ba_alloc(k | CAML_BA_C_LAYOUT | CAML_BA_MANAGED, 1, m->ptr,
                       &elements);
    Caml_ba_array_val(ba)->proxy = &m->proxy;
    ML_RETURN(ba);
}

value
ml_clgc_map_bc(value *argv, int argn)
{
    (void)argn;
    return ml_clgc_map(argv[0], argv[1], argv[2], argv[3], argv[4], argv[5],
                       argv[6]);
}

/* unmap queue ba wait -> event: ba must be a map's Bigarray, mapped. */
value
ml_clgc_unmap(value queue, value ba, value wait)
{
    CAMLparam3(queue, ba, wait);
    ML_STUB;
    const char *who = "Clgc.unmap";
    void *q = clgc_ml_get(queue, ML_QUEUE, who);
    struct caml_ba_array *a = Caml_ba_array_val(ba);
    struct ml_mapping *m = ml_mappings;
    cl_uint n;
    cl_event *w, ev = NULL;
    cl_int err;

    while (m != NULL && &m->proxy != a->proxy)
        m = m->next;
    if (m == NULL)
        caml_invalid_argument("Clgc.unmap: a Bigarray that Clgc.map did not "
                              "return");
    if (m->unmapped || a->data != m->ptr)
        caml_invalid_argument(m->unmapped ? "Clgc.unmap: unmapped already"
                                          : "Clgc.unmap: a part of a mapping, "
                                            "not the Bigarray Clgc.map "
                                            "returned");
    w = clgc_ml_events(wait, &n, who);
    err = clgc_clEnqueueUnmapMemObject(q, m->mem, m->ptr, n, w, &ev);
    free(w);
    ML_CHECK(err, "clEnqueueUnmapMemObject");
    m->unmapped = 1;
    a->dim[0] = 0;
    a->data = NULL;
    ml_mappings_tidy();
    ML_RETURN(clgc_ml_wrap(ML_EVENT, ev));
}
