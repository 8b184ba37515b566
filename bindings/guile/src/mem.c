/* Buffers, and the commands that use them: transfers, kernel launches,
 * finish and flush. Every OpenCL call through clgc's wrappers, so that it
 * runs outside Guile mode. */

#include <libguile.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "guile-clgc.h"

/* (make-buffer context flags size-or-bytevector): a bytevector's contents
 * are copied into the new buffer (CL_MEM_COPY_HOST_PTR). */
static SCM
make_buffer_body(SCM context, SCM flags, SCM init)
{
    void *c = guile_clgc_unwrap(K_CONTEXT, context, 1, "make-buffer");
    cl_mem_flags f = guile_clgc_mem_flags(flags, 2, "make-buffer");
    cl_int err = CL_SUCCESS;
    void *host = NULL;
    size_t size;
    cl_mem m;

    if (scm_is_bytevector(init)) {
        host = SCM_BYTEVECTOR_CONTENTS(init);
        size = SCM_BYTEVECTOR_LENGTH(init);
        f |= CL_MEM_COPY_HOST_PTR;
    } else {
        SCM_ASSERT_TYPE(scm_is_integer(init), init, 3, "make-buffer",
                        "size or bytevector");
        size = guile_clgc_to_unsigned(init, SIZE_MAX, 3, "make-buffer");
    }
    m = clgc_clCreateBuffer(c, f, size, host, &err);
    scm_remember_upto_here_1(init);
    CHECK_CL(err, "make-buffer");
    return guile_clgc_wrap(K_MEM, m);
}
GUILE_CLGC_HELD3(make_buffer)

/* The size in bytes of the memory object m. */
static size_t
mem_size(void *m, const char *who)
{
    size_t size = 0;

    CHECK_CL(clgc_clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof(size), &size, NULL),
             who);
    return size;
}

static SCM
buffer_size_body(SCM buffer)
{
    return scm_from_size_t(mem_size(
        guile_clgc_unwrap(K_MEM, buffer, 1, "buffer-size"), "buffer-size"));
}
GUILE_CLGC_HELD1(buffer_size)
/* A read or write of bv at offset of the buffer, enqueued without
 * blocking after the wait-list: its event. */
static cl_event
enqueue_transfer(SCM queue, SCM buffer, SCM bv, SCM offset, SCM wait, int write,
                 const char *who)
{
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, who);
    void *m = guile_clgc_unwrap_buffer(buffer, 2, who);
    size_t off = 0;
    cl_uint n = 0;
    void **w, *buf[16];
    cl_event ev = NULL;
    cl_int err;

    guile_clgc_validate(who, scm_is_bytevector(bv), bv, 3, "bytevector");
    if (!SCM_UNBNDP(offset))
        off = guile_clgc_to_unsigned(offset, SIZE_MAX, 4, who);
    w = guile_clgc_wait_list(wait, 5, who, &n, buf);
    if (write)
        err = clgc_clEnqueueWriteBuffer(
            q, m, CL_FALSE, off, SCM_BYTEVECTOR_LENGTH(bv),
            SCM_BYTEVECTOR_CONTENTS(bv), n, (cl_event *)w, &ev);
    else
        err = clgc_clEnqueueReadBuffer(
            q, m, CL_FALSE, off, SCM_BYTEVECTOR_LENGTH(bv),
            SCM_BYTEVECTOR_CONTENTS(bv), n, (cl_event *)w, &ev);
    guile_clgc_free_array(w, buf);
    CHECK_CL(err, who);
    return ev;
}

/* A read or write of bv: with block, waited for with the interruptible
 * wait, so the thread leaves Guile and the collector runs meanwhile (bv is
 * returned); else its event. Either way the bytevector stays alive until
 * the command completes, even when an async unwinds out of the wait. */
static SCM
transfer(SCM queue, SCM buffer, SCM bv, SCM offset, SCM wait, int write,
         int block, const char *who)
{
    return guile_clgc_transfer_done(
        enqueue_transfer(queue, buffer, bv, offset, wait, write, who), bv,
        block, who);
}

static SCM
read_buffer_body(SCM queue, SCM buffer, SCM bv, SCM offset, SCM wait)
{
    return transfer(queue, buffer, bv, offset, wait, 0, 1, "read-buffer!");
}
GUILE_CLGC_HELD5(read_buffer)

static SCM
write_buffer_body(SCM queue, SCM buffer, SCM bv, SCM offset, SCM wait)
{
    return transfer(queue, buffer, bv, offset, wait, 1, 1, "write-buffer!");
}
GUILE_CLGC_HELD5(write_buffer)

static SCM
enqueue_read_buffer_body(SCM queue, SCM buffer, SCM bv, SCM offset, SCM wait)
{
    return transfer(queue, buffer, bv, offset, wait, 0, 0,
                    "enqueue-read-buffer");
}
GUILE_CLGC_HELD5(enqueue_read_buffer)

static SCM
enqueue_write_buffer_body(SCM queue, SCM buffer, SCM bv, SCM offset, SCM wait)
{
    return transfer(queue, buffer, bv, offset, wait, 1, 0,
                    "enqueue-write-buffer");
}
GUILE_CLGC_HELD5(enqueue_write_buffer)

/* An optional size or offset argument: dflt when not passed. */
static size_t
opt_size(SCM v, size_t dflt, int pos, const char *who)
{
    return SCM_UNBNDP(v) ? dflt : guile_clgc_to_unsigned(v, SIZE_MAX, pos, who);
}

/* The size argument at pos, or by default what buffer m has after off. */
static size_t
size_or_rest(SCM size, int pos, void *m, size_t off, const char *who)
{
    size_t all;

    if (!SCM_UNBNDP(size))
        return guile_clgc_to_unsigned(size, SIZE_MAX, pos, who);
    all = mem_size(m, who);
    return off < all ? all - off : 0;
}

/* (enqueue-fill-buffer queue buffer pattern [offset] [size] [wait-list]):
 * the pattern, a bytevector, is copied at once (OpenCL keeps no pointer
 * to it); size defaults to the rest of the buffer. */
static SCM
enqueue_fill_buffer_body(SCM queue, SCM buffer, SCM pattern, SCM offset,
                         SCM size, SCM wait)
{
    const char *who = "enqueue-fill-buffer";
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, who);
    void *m = guile_clgc_unwrap_buffer(buffer, 2, who);
    size_t off, len;
    cl_uint n = 0;
    void **w, *buf[16];
    cl_event ev = NULL;
    cl_int err;

    guile_clgc_validate(who, scm_is_bytevector(pattern), pattern, 3,
                        "bytevector");
    off = opt_size(offset, 0, 4, who);
    len = size_or_rest(size, 5, m, off, who);
    w = guile_clgc_wait_list(wait, 6, who, &n, buf);
    err = clgc_clEnqueueFillBuffer(q, m, SCM_BYTEVECTOR_CONTENTS(pattern),
                                   SCM_BYTEVECTOR_LENGTH(pattern), off, len, n,
                                   (cl_event *)w, &ev);
    guile_clgc_free_array(w, buf);
    scm_remember_upto_here_1(pattern);
    CHECK_CL(err, who);
    return guile_clgc_wrap(K_EVENT, ev);
}
GUILE_CLGC_HELD6(enqueue_fill_buffer)

/* (enqueue-copy-buffer queue src dst [src-offset] [dst-offset] [size]
 * [wait-list]): size defaults to the rest of src. */
static SCM
enqueue_copy_buffer_body(SCM queue, SCM src, SCM dst, SCM src_offset,
                         SCM dst_offset, SCM size, SCM wait)
{
    const char *who = "enqueue-copy-buffer";
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, who);
    void *s = guile_clgc_unwrap_buffer(src, 2, who);
    void *d = guile_clgc_unwrap_buffer(dst, 3, who);
    size_t so = opt_size(src_offset, 0, 4, who);
    size_t dof = opt_size(dst_offset, 0, 5, who);
    size_t len = size_or_rest(size, 6, s, so, who);
    cl_uint n = 0;
    void **w, *buf[16];
    cl_event ev = NULL;
    cl_int err;

    w = guile_clgc_wait_list(wait, 7, who, &n, buf);
    err =
        clgc_clEnqueueCopyBuffer(q, s, d, so, dof, len, n, (cl_event *)w, &ev);
    guile_clgc_free_array(w, buf);
    CHECK_CL(err, who);
    return guile_clgc_wrap(K_EVENT, ev);
}
GUILE_CLGC_HELD7(enqueue_copy_buffer)

/* (make-sub-buffer buffer offset size [flags]) -> a cl-mem over that
 * region of buffer; flags as make-buffer's, default its own. */
static SCM
make_sub_buffer_body(SCM buffer, SCM offset, SCM size, SCM flags)
{
    const char *who = "make-sub-buffer";
    void *m = guile_clgc_unwrap_buffer(buffer, 1, who);
    cl_buffer_region region;
    cl_mem_flags f =
        SCM_UNBNDP(flags) ? 0 : guile_clgc_mem_flags(flags, 4, who);
    cl_int err = CL_SUCCESS;
    cl_mem sub;

    region.origin = guile_clgc_to_unsigned(offset, SIZE_MAX, 2, who);
    region.size = guile_clgc_to_unsigned(size, SIZE_MAX, 3, who);
    sub = clgc_clCreateSubBuffer(m, f, CL_BUFFER_CREATE_TYPE_REGION, &region,
                                 &err);
    CHECK_CL(err, who);
    return guile_clgc_wrap(K_MEM, sub);
}
GUILE_CLGC_HELD4(make_sub_buffer)

/* (enqueue-marker queue [wait-list]) and (enqueue-barrier queue
 * [wait-list]): an event that completes once the wait-list's events (or,
 * with none, every command before it) have; a barrier also holds back
 * the commands after it. */
static SCM
marker_or_barrier(SCM queue, SCM wait, int barrier, const char *who)
{
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, who);
    cl_uint n = 0;
    void *buf[16], **w = guile_clgc_wait_list(wait, 2, who, &n, buf);
    cl_event ev = NULL;
    cl_int err;

    err = barrier ? clgc_clEnqueueBarrierWithWaitList(q, n, (cl_event *)w, &ev)
                  : clgc_clEnqueueMarkerWithWaitList(q, n, (cl_event *)w, &ev);
    guile_clgc_free_array(w, buf);
    CHECK_CL(err, who);
    return guile_clgc_wrap(K_EVENT, ev);
}

static SCM
enqueue_marker_body(SCM queue, SCM wait)
{
    return marker_or_barrier(queue, wait, 0, "enqueue-marker");
}
GUILE_CLGC_HELD2(enqueue_marker)

static SCM
enqueue_barrier_body(SCM queue, SCM wait)
{
    return marker_or_barrier(queue, wait, 1, "enqueue-barrier");
}
GUILE_CLGC_HELD2(enqueue_barrier)

/* (enqueue-kernel queue kernel global [local] [wait-list]) -> event */
static SCM
enqueue_kernel_body(SCM queue, SCM kernel, SCM global, SCM local, SCM wait)
{
    const char *who = "enqueue-kernel";
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, who);
    void *k = guile_clgc_unwrap(K_KERNEL, kernel, 2, who);
    size_t g[3], l[3];
    int dim = guile_clgc_sizes(global, g, 1, 3, who), use_local = 0;
    cl_uint n = 0;
    void **w, *buf[16];
    cl_event ev = NULL;
    cl_int err;

    if (!SCM_UNBNDP(local) && scm_is_true(local)) {
        if (guile_clgc_sizes(local, l, 1, 4, who) != dim)
            guile_clgc_raise_error(
                "CL_INVALID_WORK_DIMENSION", CL_INVALID_WORK_DIMENSION, who,
                SCM_BOOL_F, SCM_BOOL_F,
                "local and global sizes differ in dimension");
        /* A local size of 0 reaches PoCL's division (SIGFPE). */
        for (int i = 0; i < dim; i++)
            if (l[i] == 0)
                scm_wrong_type_arg_msg(who, 4, local, "positive sizes");
        use_local = 1;
    }
    guile_clgc_kernel_ready(kernel, 2, who);
    w = guile_clgc_wait_list(wait, 5, who, &n, buf);
    err = clgc_clEnqueueNDRangeKernel(q, k, (cl_uint)dim, NULL, g,
                                      use_local ? l : NULL, n, (cl_event *)w,
                                      &ev);
    guile_clgc_signals_restore();
    guile_clgc_free_array(w, buf);
    CHECK_CL(err, who);
    return guile_clgc_wrap(K_EVENT, ev);
}
GUILE_CLGC_HELD5(enqueue_kernel)

static SCM
finish_body(SCM queue)
{
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, "finish");
    cl_int err;

    err = clgc_clFinish(q);
    guile_clgc_signals_restore();
    CHECK_CL(err, "finish");
    return SCM_UNSPECIFIED;
}
GUILE_CLGC_HELD1(finish)

static SCM
flush_body(SCM queue)
{
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, "flush");
    cl_int err;

    err = clgc_clFlush(q);
    guile_clgc_signals_restore();
    CHECK_CL(err, "flush");
    return SCM_UNSPECIFIED;
}
GUILE_CLGC_HELD1(flush)

/* Rectangles: a 3D box of bytes of a buffer (or of the host
 * bytevector), its origin and pitches by keyword, checked by
 * clgc_rect_check before OpenCL sees it. */
struct rect {
    size_t origin[3], row, slice;
};

static void
rect_arg(SCM origin, SCM row, SCM slice, const size_t region[3], size_t size,
         struct rect *r, const char *side, const char *who)
{
    const char *wrong;

    if (SCM_UNBNDP(origin))
        r->origin[0] = r->origin[1] = r->origin[2] = 0;
    else
        guile_clgc_sizes(origin, r->origin, 0, 0, who);
    r->row = opt_size(row, 0, 0, who);
    r->slice = opt_size(slice, 0, 0, who);
    wrong = clgc_rect_check(r->origin, region, &r->row, &r->slice, size);
    if (wrong != NULL) {
        char message[160];

        snprintf(message, sizeof(message), "the %s side: %s", side, wrong);
        guile_clgc_raise_error("CL_INVALID_VALUE", CL_INVALID_VALUE, who,
                               SCM_BOOL_F, SCM_BOOL_F, message);
    }
}

static void
region_arg(SCM region, size_t out[3], const char *who)
{
    if (SCM_UNBNDP(region))
        scm_misc_error(who, "#:region is required", SCM_EOL);
    guile_clgc_sizes(region, out, 1, 0, who);
}

static SCM
buffer_rect(SCM queue, SCM buffer, SCM bv, SCM rest, int write, const char *who)
{
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, who);
    void *m = guile_clgc_unwrap_buffer(buffer, 2, who);
    SCM region = SCM_UNDEFINED, bo = SCM_UNDEFINED, ho = SCM_UNDEFINED,
        brp = SCM_UNDEFINED, bsp = SCM_UNDEFINED, hrp = SCM_UNDEFINED,
        hsp = SCM_UNDEFINED, wait = SCM_UNDEFINED;
    size_t r[3];
    struct rect b, h;
    cl_uint n = 0;
    void **w, *buf[16];
    cl_event ev = NULL;
    cl_int err;

    guile_clgc_validate(who, scm_is_bytevector(bv), bv, 3, "bytevector");
    scm_c_bind_keyword_arguments(who, rest, 0, guile_clgc_kw("region"), &region,
                                 guile_clgc_kw("buffer-origin"), &bo,
                                 guile_clgc_kw("host-origin"), &ho,
                                 guile_clgc_kw("buffer-row-pitch"), &brp,
                                 guile_clgc_kw("buffer-slice-pitch"), &bsp,
                                 guile_clgc_kw("host-row-pitch"), &hrp,
                                 guile_clgc_kw("host-slice-pitch"), &hsp,
                                 guile_clgc_kw("wait"), &wait, SCM_UNDEFINED);
    region_arg(region, r, who);
    rect_arg(bo, brp, bsp, r, mem_size(m, who), &b, "buffer", who);
    rect_arg(ho, hrp, hsp, r, SCM_BYTEVECTOR_LENGTH(bv), &h, "host", who);
    w = guile_clgc_wait_list(wait, 0, who, &n, buf);
    if (write)
        err = clgc_clEnqueueWriteBufferRect(
            q, m, CL_FALSE, b.origin, h.origin, r, b.row, b.slice, h.row,
            h.slice, SCM_BYTEVECTOR_CONTENTS(bv), n, (cl_event *)w, &ev);
    else
        err = clgc_clEnqueueReadBufferRect(
            q, m, CL_FALSE, b.origin, h.origin, r, b.row, b.slice, h.row,
            h.slice, SCM_BYTEVECTOR_CONTENTS(bv), n, (cl_event *)w, &ev);
    guile_clgc_free_array(w, buf);
    CHECK_CL(err, who);
    return guile_clgc_transfer_done(ev, bv, 1, who);
}

static SCM
read_buffer_rect_body(SCM queue, SCM buffer, SCM bv, SCM rest)
{
    return buffer_rect(queue, buffer, bv, rest, 0, "read-buffer-rect!");
}
GUILE_CLGC_HELD4(read_buffer_rect)

static SCM
write_buffer_rect_body(SCM queue, SCM buffer, SCM bv, SCM rest)
{
    return buffer_rect(queue, buffer, bv, rest, 1, "write-buffer-rect!");
}
GUILE_CLGC_HELD4(write_buffer_rect)

/* (enqueue-copy-buffer-rect queue src dst #:region #:src-origin
 * #:dst-origin #:src-row-pitch ... #:wait) -> event */
static SCM
enqueue_copy_buffer_rect_body(SCM queue, SCM src, SCM dst, SCM rest)
{
    const char *who = "enqueue-copy-buffer-rect";
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, who);
    void *s = guile_clgc_unwrap_buffer(src, 2, who);
    void *d = guile_clgc_unwrap_buffer(dst, 3, who);
    SCM region = SCM_UNDEFINED, so = SCM_UNDEFINED, dor = SCM_UNDEFINED,
        srp = SCM_UNDEFINED, ssp = SCM_UNDEFINED, drp = SCM_UNDEFINED,
        dsp = SCM_UNDEFINED, wait = SCM_UNDEFINED;
    size_t r[3];
    struct rect a, b;
    cl_uint n = 0;
    void **w, *buf[16];
    cl_event ev = NULL;
    cl_int err;

    scm_c_bind_keyword_arguments(
        who, rest, 0, guile_clgc_kw("region"), &region,
        guile_clgc_kw("src-origin"), &so, guile_clgc_kw("dst-origin"), &dor,
        guile_clgc_kw("src-row-pitch"), &srp, guile_clgc_kw("src-slice-pitch"),
        &ssp, guile_clgc_kw("dst-row-pitch"), &drp,
        guile_clgc_kw("dst-slice-pitch"), &dsp, guile_clgc_kw("wait"), &wait,
        SCM_UNDEFINED);
    region_arg(region, r, who);
    rect_arg(so, srp, ssp, r, mem_size(s, who), &a, "source", who);
    rect_arg(dor, drp, dsp, r, mem_size(d, who), &b, "destination", who);
    w = guile_clgc_wait_list(wait, 0, who, &n, buf);
    err = clgc_clEnqueueCopyBufferRect(q, s, d, a.origin, b.origin, r, a.row,
                                       a.slice, b.row, b.slice, n,
                                       (cl_event *)w, &ev);
    guile_clgc_free_array(w, buf);
    CHECK_CL(err, who);
    return guile_clgc_wrap(K_EVENT, ev);
}
GUILE_CLGC_HELD4(enqueue_copy_buffer_rect)

/* Mapped bytevectors: each one's buffer handle and mapped address, until
 * unmap! empties it. The mapping holds a reference of its own to the
 * buffer, so that releasing the buffer's object (or its finalizer) while
 * a mapping is out never frees the memory under the bytevector; unmap!
 * drops it. A weak-key table (Guile's lock its own): a mapping dropped
 * without unmap! leaves no entry, and keeps its buffer for good. */
static SCM mappings;
static pthread_once_t mappings_once = PTHREAD_ONCE_INIT;

static void
mappings_init(void)
{
    mappings =
        scm_gc_protect_object(scm_make_weak_key_hash_table(SCM_UNDEFINED));
}

/* (map-buffer! queue buffer #:flags #:offset #:size #:wait) -> a
 * bytevector over the mapped region, once mapped (waited for as
 * read-buffer! waits); flags: read write write-invalidate (default
 * (read write)). */
static SCM
map_buffer_body(SCM queue, SCM buffer, SCM rest)
{
    const char *who = "map-buffer!";
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, who);
    void *m = guile_clgc_unwrap_buffer(buffer, 2, who);
    SCM flags = SCM_UNDEFINED, offset = SCM_UNDEFINED, size = SCM_UNDEFINED,
        wait = SCM_UNDEFINED, bv;
    cl_map_flags f = 0;
    size_t off, len;
    cl_uint n = 0;
    void **w, *buf[16], *p;
    cl_event ev = NULL;
    cl_int err = CL_SUCCESS;

    scm_c_bind_keyword_arguments(who, rest, 0, guile_clgc_kw("flags"), &flags,
                                 guile_clgc_kw("offset"), &offset,
                                 scm_from_utf8_keyword("size"), &size,
                                 guile_clgc_kw("wait"), &wait, SCM_UNDEFINED);
    if (SCM_UNBNDP(flags))
        f = CL_MAP_READ | CL_MAP_WRITE;
    else if (scm_ilength(flags) < 0)
        scm_wrong_type_arg_msg(who, 0, flags, "list of symbols");
    for (SCM l = SCM_UNBNDP(flags) ? SCM_EOL : flags; !scm_is_null(l);
         l = scm_cdr(l)) {
        if (guile_clgc_sym_is(scm_car(l), "read"))
            f |= CL_MAP_READ;
        else if (guile_clgc_sym_is(scm_car(l), "write"))
            f |= CL_MAP_WRITE;
        else if (guile_clgc_sym_is(scm_car(l), "write-invalidate"))
            f |= CL_MAP_WRITE_INVALIDATE_REGION;
        else
            scm_misc_error(who, "unknown map flag: ~S", scm_list_1(scm_car(l)));
    }
    off = opt_size(offset, 0, 0, who);
    len = size_or_rest(size, 0, m, off, who);
    w = guile_clgc_wait_list(wait, 0, who, &n, buf);
    p = clgc_clEnqueueMapBuffer(q, m, CL_FALSE, f, off, len, n, (cl_event *)w,
                                &ev, &err);
    guile_clgc_free_array(w, buf);
    CHECK_CL(err, who);
    guile_clgc_transfer_done(ev, SCM_BOOL_F, 1, who);
    pthread_once(&mappings_once, mappings_init);
    bv = scm_pointer_to_bytevector(scm_from_pointer(p, NULL),
                                   scm_from_size_t(len), SCM_INUM0,
                                   scm_from_utf8_symbol("vu8"));
    clgc_clRetainMemObject(m); /* cannot fail: m was just mapped */
    scm_hashq_set_x(
        mappings, bv,
        scm_cons(scm_from_pointer(m, NULL), scm_from_pointer(p, NULL)));
    return bv;
}
GUILE_CLGC_HELD3(map_buffer)

/* (unmap! queue bytevector [wait-list]) -> event: unmaps what
 * map-buffer! mapped, and empties the bytevector at once (its length 0,
 * its contents none: Guile's bytevector header, word 1 and 2, as
 * libguile/bytevectors.h lays it out), so that a later use raises
 * instead of touching memory OpenCL may have taken back. */
static SCM
unmap_buffer_body(SCM queue, SCM bv, SCM wait)
{
    static char nothing[1];
    const char *who = "unmap!";
    void *q = guile_clgc_unwrap(K_QUEUE, queue, 1, who);
    SCM entry = SCM_BOOL_F;
    cl_uint n = 0;
    void **w, *buf[16], *m;
    cl_event ev = NULL;
    cl_int err;

    pthread_once(&mappings_once, mappings_init);
    if (scm_is_bytevector(bv))
        entry = scm_hashq_ref(mappings, bv, SCM_BOOL_F);
    if (scm_is_false(entry))
        scm_wrong_type_arg_msg(who, 2, bv, "bytevector map-buffer! returned");
    m = SCM_POINTER_VALUE(scm_car(entry));
    w = guile_clgc_wait_list(wait, 3, who, &n, buf);
    err = clgc_clEnqueueUnmapMemObject(q, m, SCM_POINTER_VALUE(scm_cdr(entry)),
                                       n, (cl_event *)w, &ev);
    guile_clgc_free_array(w, buf);
    CHECK_CL(err, who);
    /* The unmap command holds the buffer now. */
    clgc_clReleaseMemObject(m);
    scm_hashq_remove_x(mappings, bv);
    SCM_SET_CELL_WORD_1(bv, 0);
    SCM_SET_CELL_WORD_2(bv, (scm_t_bits)nothing);
    return guile_clgc_wrap(K_EVENT, ev);
}
GUILE_CLGC_HELD3(unmap_buffer)

const struct guile_clgc_proc guile_clgc_mem_procs[] = {
    {"make-buffer", 3, 0, 0, make_buffer,
     "(make-buffer context flags size-or-bytevector) -> a cl-mem buffer; "
     "flags: read-write read-only write-only alloc-host-ptr; a bytevector is "
     "copied in."},
    {"buffer-size", 1, 0, 0, buffer_size,
     "(buffer-size buffer) -> its size in bytes."},
    {"read-buffer!", 3, 2, 0, read_buffer,
     "(read-buffer! queue buffer bytevector [offset] [wait-list]) reads the "
     "buffer into bytevector and returns it once done; the wait runs Guile's "
     "asyncs."},
    {"write-buffer!", 3, 2, 0, write_buffer,
     "(write-buffer! queue buffer bytevector [offset] [wait-list]) writes "
     "bytevector into the buffer and returns it once done; the wait runs "
     "Guile's asyncs."},
    {"enqueue-read-buffer", 3, 2, 0, enqueue_read_buffer,
     "(enqueue-read-buffer queue buffer bytevector [offset] [wait-list]) -> "
     "a cl-event: reads the buffer into bytevector without blocking; the "
     "bytevector is kept alive until the command completes."},
    {"enqueue-write-buffer", 3, 2, 0, enqueue_write_buffer,
     "(enqueue-write-buffer queue buffer bytevector [offset] [wait-list]) -> "
     "a cl-event: writes bytevector into the buffer without blocking; the "
     "bytevector is kept alive until the command completes."},
    {"enqueue-fill-buffer", 3, 3, 0, enqueue_fill_buffer,
     "(enqueue-fill-buffer queue buffer pattern [offset] [size] [wait-list]) "
     "-> a cl-event: fills size bytes (default: the rest of the buffer) with "
     "the pattern, a bytevector of 1 to 128 bytes."},
    {"enqueue-copy-buffer", 3, 4, 0, enqueue_copy_buffer,
     "(enqueue-copy-buffer queue src dst [src-offset] [dst-offset] [size] "
     "[wait-list]) -> a cl-event: copies size bytes (default: the rest of "
     "src)."},
    {"make-sub-buffer", 3, 1, 0, make_sub_buffer,
     "(make-sub-buffer buffer offset size [flags]) -> a cl-mem over that "
     "region of buffer (offset aligned as the device asks)."},
    {"enqueue-marker", 1, 1, 0, enqueue_marker,
     "(enqueue-marker queue [wait-list]) -> a cl-event that completes once "
     "the wait-list's events, or every command before it, have."},
    {"enqueue-barrier", 1, 1, 0, enqueue_barrier,
     "(enqueue-barrier queue [wait-list]) -> a cl-event, as enqueue-marker's, "
     "that also holds back the commands after it."},
    {"read-buffer-rect!", 3, 0, 1, read_buffer_rect,
     "(read-buffer-rect! queue buffer bytevector #:region #:buffer-origin "
     "#:host-origin #:buffer-row-pitch #:buffer-slice-pitch #:host-row-pitch "
     "#:host-slice-pitch #:wait) reads a box of bytes (region: 1 to 3 sizes, "
     "required; pitches by default packed) into bytevector, and returns it "
     "once done."},
    {"write-buffer-rect!", 3, 0, 1, write_buffer_rect,
     "(write-buffer-rect! queue buffer bytevector #:region ...) writes a box "
     "of bytes from bytevector, the keywords as read-buffer-rect!'s."},
    {"enqueue-copy-buffer-rect", 3, 0, 1, enqueue_copy_buffer_rect,
     "(enqueue-copy-buffer-rect queue src dst #:region #:src-origin "
     "#:dst-origin #:src-row-pitch #:src-slice-pitch #:dst-row-pitch "
     "#:dst-slice-pitch #:wait) -> a cl-event."},
    {"map-buffer!", 2, 0, 1, map_buffer,
     "(map-buffer! queue buffer #:flags #:offset #:size #:wait) -> a "
     "bytevector over the mapped region (flags: read write "
     "write-invalidate; default both), valid until unmap!."},
    {"unmap!", 2, 1, 0, unmap_buffer,
     "(unmap! queue bytevector [wait-list]) -> a cl-event: unmaps what "
     "map-buffer! mapped; the bytevector is empty from then on, and using it "
     "raises."},
    {"enqueue-kernel", 3, 2, 0, enqueue_kernel,
     "(enqueue-kernel queue kernel global [local] [wait-list]) -> a cl-event; "
     "sizes: an integer or a list of 1 to 3."},
    {"finish", 1, 0, 0, finish,
     "(finish queue) returns once every command of queue is done."},
    {"flush", 1, 0, 0, flush,
     "(flush queue) submits the queue's commands to the device."},
    {NULL, 0, 0, 0, NULL, NULL}};
