/* Sub-buffers and the transfers beyond Queue:read and Queue:write: fills,
 * copies, rectangles, barriers, non-blocking reads and writes, and maps,
 * with the views (clgc.View) through which Lua reads and writes the
 * memory of a mapping or of a non-blocking read.
 *
 * Memory the device reaches after the call returns is never Lua's: a
 * non-blocking write copies its data into a block of its own and a
 * non-blocking read reads into one, freed by the event's completion
 * callback (on the driver's thread, with no Lua in it) or by the view,
 * whichever lets go last. So no Lua value needs to outlive anything, and
 * closing the state while a transfer runs frees nothing under it. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lclgc.h"

/* ------------------------------------------------------------------------
 * Options */

/* Field name of the options table at idx (absent, or a table): a
 * non-negative integer, def if absent. */
size_t
lclgc_opt_size(lua_State *L, int idx, const char *name, size_t def,
               const char *fn)
{
    size_t v = def;

    if (lua_type(L, idx) != LUA_TTABLE)
        return def;
    if (lua_getfield(L, idx, name) != LUA_TNIL) {
        int isint;
        lua_Integer i = lua_tointegerx(L, -1, &isint);

        if (!isint || lua_type(L, -1) != LUA_TNUMBER || i < 0)
            lclgc_error(L, "%s: option '%s': a non-negative integer expected",
                        fn, name);
        v = (size_t)i;
    }
    lua_pop(L, 1);
    return v;
}

/* Field name of the options at idx: one to three non-negative integers
 * (a number or a sequence), the rest of out as def leaves it. Returns
 * whether the field was given. */
int
lclgc_opt_triple(lua_State *L, int idx, const char *name, size_t out[3],
                 const char *fn)
{
    int t;

    if (lua_type(L, idx) != LUA_TTABLE)
        return 0;
    t = lua_getfield(L, idx, name);
    if (t == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (t == LUA_TNUMBER) {
        out[0] = lclgc_opt_size(L, idx, name, 0, fn);
    } else if (t == LUA_TTABLE) {
        size_t n = lua_rawlen(L, -1);

        if (n < 1 || n > 3)
            lclgc_error(L, "%s: option '%s': 1 to 3 integers expected", fn,
                        name);
        for (size_t i = 0; i < n; i++) {
            int isint;
            lua_Integer v;

            lua_rawgeti(L, -1, (lua_Integer)i + 1);
            v = lua_tointegerx(L, -1, &isint);
            if (!isint || lua_type(L, -1) != LUA_TNUMBER || v < 0)
                lclgc_error(L,
                            "%s: option '%s': non-negative integers "
                            "expected",
                            fn, name);
            out[i] = (size_t)v;
            lua_pop(L, 1);
        }
    } else {
        lclgc_error(L,
                    "%s: option '%s': an integer or a table expected, got %s",
                    fn, name, luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    return 1;
}

/* The wait list of the options at idx (its field "wait"): an Event or a
 * table of them, as an array in a userdata pushed on the stack (nil when
 * there is none, so the stack effect is always one value). */
cl_event *
lclgc_opt_wait(lua_State *L, int idx, cl_uint *n, const char *fn)
{
    cl_event *evs;

    if (lua_type(L, idx) != LUA_TTABLE) {
        *n = 0;
        lua_pushnil(L);
        return NULL;
    }
    lua_getfield(L, idx, "wait");
    evs = lclgc_check_events(L, -1, n, fn);
    lua_remove(L, -2);
    return evs;
}

/* The options argument at idx: absent or a table. */
void
lclgc_check_opts(lua_State *L, int idx, const char *fn)
{
    if (!lua_isnoneornil(L, idx))
        lclgc_checktype(L, idx, LUA_TTABLE, fn);
}

/* A buffer's size (CL_MEM_SIZE); its error is raised. */
size_t
lclgc_mem_size(lua_State *L, cl_mem m, const char *fn)
{
    size_t size = 0;
    cl_int err =
        clgc_clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof(size), &size, NULL);

    if (err != CL_SUCCESS)
        lclgc_cl_error(L, fn, err);
    return size;
}

/* offset and size within a buffer of total bytes, compared so that no sum
 * can overflow. */
static void
lclgc_check_range(lua_State *L, size_t total, size_t offset, size_t size,
                  const char *what, const char *fn)
{
    if (offset > total || size > total - offset)
        lclgc_fail(
            L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
            "%s: %I bytes at offset %I past the end of the buffer (%I bytes)",
            what, (lua_Integer)size, (lua_Integer)offset, (lua_Integer)total);
}

static int
lclgc_push_event(lua_State *L, cl_event ev)
{
    lclgc_push_handle(L, LCLGC_EVENT, ev);
    return 1;
}

/* ------------------------------------------------------------------------
 * Sub-buffers */

/* Buffer:sub(offset, size [, "rw" | "r" | "w"]) -> Buffer: a region of
 * the buffer, sharing its memory; it keeps the buffer alive. */
static int
lclgc_buffer_sub(lua_State *L)
{
    static const char *const names[] = {"rw", "r", "w", NULL};
    static const cl_mem_flags flags[] = {CL_MEM_READ_WRITE, CL_MEM_READ_ONLY,
                                         CL_MEM_WRITE_ONLY};
    const char *fn = "clgc.Buffer:sub";
    cl_mem m = lclgc_check(L, 1, LCLGC_BUFFER, fn);
    lua_Integer off = lclgc_checkint(L, 2, fn), size = lclgc_checkint(L, 3, fn);
    cl_mem_flags f = flags[lclgc_checkopt(L, 4, "rw", names, fn)];
    cl_buffer_region r;
    cl_int err = CL_SUCCESS;
    cl_mem sub;

    if (off < 0 || size <= 0)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "offset %I, size %I", off, size);
    lclgc_check_range(L, lclgc_mem_size(L, m, fn), (size_t)off, (size_t)size,
                      "the region", fn);
    r.origin = (size_t)off;
    r.size = (size_t)size;
    sub = clgc_clCreateSubBuffer(m, f, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    if (sub == NULL)
        return lclgc_cl_error(L, fn, err);
    lclgc_push_handle(L, LCLGC_BUFFER, sub);
    return 1;
}

/* ------------------------------------------------------------------------
 * Fills, copies, barriers */

/* Queue:fill(buffer, pattern [, {type=, offset=, size=, wait=}]) ->
 * Event: pattern is a string of bytes or a number of options.type;
 * size (default: the rest of the buffer) a multiple of its length. */
static int
lclgc_queue_fill(lua_State *L)
{
    const char *fn = "clgc.Queue:fill";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem m = lclgc_check(L, 2, LCLGC_BUFFER, fn);
    size_t total = lclgc_mem_size(L, m, fn), plen, off, size;
    union {
        cl_double d;
        cl_ulong u;
    } v;
    const void *pattern = &v;
    cl_uint nwait;
    cl_event *wait, ev = NULL;
    cl_int err;

    lclgc_check_opts(L, 4, fn);
    if (lua_type(L, 3) == LUA_TSTRING) {
        pattern = lua_tolstring(L, 3, &plen);
    } else if (lua_type(L, 3) == LUA_TNUMBER) {
        int t = -1;

        if (lua_type(L, 4) == LUA_TTABLE &&
            lua_getfield(L, 4, "type") != LUA_TNIL)
            t = lclgc_check_type(L, -1, fn);
        if (t < 0)
            return lclgc_error(L,
                               "%s: a number pattern needs options.type "
                               "(int, float, ...)",
                               fn);
        plen = lclgc_store_scalar(L, 3, t, &v, fn);
    } else {
        return lclgc_error(L,
                           "%s: argument #3: string or number expected, got %s",
                           fn, lclgc_typename(L, 3));
    }
    if (plen == 0 || plen > 128 || (plen & (plen - 1)) != 0)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "a pattern of %I bytes (1, 2, 4, ... 128)",
                          (lua_Integer)plen);
    off = lclgc_opt_size(L, 4, "offset", 0, fn);
    if (off > total)
        lclgc_check_range(L, total, off, 0, "the fill", fn);
    size = lclgc_opt_size(L, 4, "size", (total - off) / plen * plen, fn);
    lclgc_check_range(L, total, off, size, "the fill", fn);
    if (size % plen != 0 || off % plen != 0)
        return lclgc_fail(
            L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
            "offset and size must be multiples of the pattern's %I bytes",
            (lua_Integer)plen);
    wait = lclgc_opt_wait(L, 4, &nwait, fn);
    err = clgc_clEnqueueFillBuffer(q, m, pattern, plen, off, size, nwait, wait,
                                   &ev);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    return lclgc_push_event(L, ev);
}

/* Queue:copy(src, dst [, {src_offset=, dst_offset=, size=, wait=}]) ->
 * Event; size defaults to what fits in both from the offsets. */
static int
lclgc_queue_copy(lua_State *L)
{
    const char *fn = "clgc.Queue:copy";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem src = lclgc_check(L, 2, LCLGC_BUFFER, fn);
    cl_mem dst = lclgc_check(L, 3, LCLGC_BUFFER, fn);
    size_t st = lclgc_mem_size(L, src, fn), dt = lclgc_mem_size(L, dst, fn);
    size_t so, dof, size;
    cl_uint nwait;
    cl_event *wait, ev = NULL;
    cl_int err;

    lclgc_check_opts(L, 4, fn);
    so = lclgc_opt_size(L, 4, "src_offset", 0, fn);
    dof = lclgc_opt_size(L, 4, "dst_offset", 0, fn);
    lclgc_check_range(L, st, so, 0, "the source", fn);
    lclgc_check_range(L, dt, dof, 0, "the destination", fn);
    size = lclgc_opt_size(L, 4, "size", st - so < dt - dof ? st - so : dt - dof,
                          fn);
    lclgc_check_range(L, st, so, size, "the source", fn);
    lclgc_check_range(L, dt, dof, size, "the destination", fn);
    wait = lclgc_opt_wait(L, 4, &nwait, fn);
    err =
        clgc_clEnqueueCopyBuffer(q, src, dst, so, dof, size, nwait, wait, &ev);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    return lclgc_push_event(L, ev);
}

/* Queue:barrier([events]) -> Event: the queue's later commands wait for
 * events (or, without, for every earlier command). */
static int
lclgc_queue_barrier(lua_State *L)
{
    const char *fn = "clgc.Queue:barrier";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_uint n;
    cl_event *wait = lclgc_check_events(L, 2, &n, fn), ev = NULL;
    cl_int err = clgc_clEnqueueBarrierWithWaitList(q, n, wait, &ev);

    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    return lclgc_push_event(L, ev);
}

/* ------------------------------------------------------------------------
 * Rectangles. The host side is tightly packed: region[0] bytes a row,
 * region[0] * region[1] a slice. */

struct lclgc_rect {
    size_t origin[3], region[3], row, slice;
};

/* {origin=, region=, row_pitch=, slice_pitch=} of the options at idx,
 * names prefixed by prefix ("", "src_", "dst_"); checked against the
 * buffer's total bytes (clgc_rect_check). */
static void
lclgc_check_rect(lua_State *L, int idx, const char *prefix, size_t total,
                 struct lclgc_rect *r, const char *fn)
{
    char name[32];
    const char *wrong;

    for (int i = 0; i < 3; i++)
        r->origin[i] = 0;
    snprintf(name, sizeof(name), "%sorigin", prefix);
    (void)lclgc_opt_triple(L, idx, name, r->origin, fn);
    snprintf(name, sizeof(name), "%srow_pitch", prefix);
    r->row = lclgc_opt_size(L, idx, name, 0, fn);
    snprintf(name, sizeof(name), "%sslice_pitch", prefix);
    r->slice = lclgc_opt_size(L, idx, name, 0, fn);
    wrong = clgc_rect_check(r->origin, r->region, &r->row, &r->slice, total);
    if (wrong != NULL)
        lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                   "%s%s%s (%I bytes)", prefix, *prefix ? "rectangle: " : "",
                   wrong, (lua_Integer)total);
}

/* The region of the options at idx: 1 to 3 positive sizes, required. */
static size_t
lclgc_check_region(lua_State *L, int idx, size_t region[3], const char *fn)
{
    size_t n;

    region[0] = region[1] = region[2] = 1;
    if (!lclgc_opt_triple(L, idx, "region", region, fn))
        return lclgc_error(L, "%s: option 'region' is required", fn);
    if (region[0] == 0 || region[1] == 0 || region[2] == 0)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "an empty region");
    if (region[0] > SIZE_MAX / 4 || region[1] > SIZE_MAX / 4 ||
        region[2] > SIZE_MAX / 4 ||
        __builtin_mul_overflow(region[0], region[1], &n) ||
        __builtin_mul_overflow(n, region[2], &n) || n > ((size_t)1 << 40))
        return lclgc_error(L, "%s: the region is too large", fn);
    return n;
}

/* Queue:read_rect(buffer, {region=, origin=, row_pitch=, slice_pitch=,
 * wait=}) -> string: a blocking read of a rectangle of bytes. */
static int
lclgc_queue_read_rect(lua_State *L)
{
    const char *fn = "clgc.Queue:read_rect";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem m = lclgc_check(L, 2, LCLGC_BUFFER, fn);
    struct lclgc_rect r;
    size_t host[3] = {0, 0, 0}, n;
    cl_uint nwait;
    cl_event *wait;
    char *buf;
    cl_int err;

    lclgc_checktype(L, 3, LUA_TTABLE, fn);
    n = lclgc_check_region(L, 3, r.region, fn);
    lclgc_check_rect(L, 3, "", lclgc_mem_size(L, m, fn), &r, fn);
    wait = lclgc_opt_wait(L, 3, &nwait, fn);
    buf = lua_newuserdatauv(L, n, 0);
    err = clgc_clEnqueueReadBufferRect(
        q, m, CL_TRUE, r.origin, host, r.region, r.row, r.slice, r.region[0],
        r.region[0] * r.region[1], buf, nwait, wait, NULL);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lua_pushlstring(L, buf, n);
    return 1;
}

/* Queue:write_rect(buffer, string, {region=, origin=, ...}): a blocking
 * write of a rectangle; the string holds exactly the region's bytes. */
static int
lclgc_queue_write_rect(lua_State *L)
{
    const char *fn = "clgc.Queue:write_rect";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem m = lclgc_check(L, 2, LCLGC_BUFFER, fn);
    size_t len, host[3] = {0, 0, 0}, n;
    const char *data = lclgc_checkstr(L, 3, &len, fn);
    struct lclgc_rect r;
    cl_uint nwait;
    cl_event *wait;
    cl_int err;

    lclgc_checktype(L, 4, LUA_TTABLE, fn);
    n = lclgc_check_region(L, 4, r.region, fn);
    lclgc_check_rect(L, 4, "", lclgc_mem_size(L, m, fn), &r, fn);
    if (len != n)
        return lclgc_error(L, "%s: argument #3: %I bytes for a region of %I",
                           fn, (lua_Integer)len, (lua_Integer)n);
    wait = lclgc_opt_wait(L, 4, &nwait, fn);
    err = clgc_clEnqueueWriteBufferRect(
        q, m, CL_TRUE, r.origin, host, r.region, r.row, r.slice, r.region[0],
        r.region[0] * r.region[1], data, nwait, wait, NULL);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    return 0;
}

/* Queue:copy_rect(src, dst, {region=, src_origin=, dst_origin=,
 * src_row_pitch=, ..., wait=}) -> Event */
static int
lclgc_queue_copy_rect(lua_State *L)
{
    const char *fn = "clgc.Queue:copy_rect";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem src = lclgc_check(L, 2, LCLGC_BUFFER, fn);
    cl_mem dst = lclgc_check(L, 3, LCLGC_BUFFER, fn);
    struct lclgc_rect s, d;
    cl_uint nwait;
    cl_event *wait, ev = NULL;
    cl_int err;

    lclgc_checktype(L, 4, LUA_TTABLE, fn);
    (void)lclgc_check_region(L, 4, s.region, fn);
    memcpy(d.region, s.region, sizeof(d.region));
    lclgc_check_rect(L, 4, "src_", lclgc_mem_size(L, src, fn), &s, fn);
    lclgc_check_rect(L, 4, "dst_", lclgc_mem_size(L, dst, fn), &d, fn);
    wait = lclgc_opt_wait(L, 4, &nwait, fn);
    err = clgc_clEnqueueCopyBufferRect(q, src, dst, s.origin, d.origin,
                                       s.region, s.row, s.slice, d.row, d.slice,
                                       nwait, wait, &ev);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    return lclgc_push_event(L, ev);
}

/* ------------------------------------------------------------------------
 * Host blocks and views */

/* Memory of a non-blocking transfer: freed by whichever of its holders
 * (the event's callback, a view) lets go last. */
struct lclgc_block {
    int refs; /* atomic */
    size_t size;
    char data[];
};

static struct lclgc_block *
lclgc_block_new(lua_State *L, size_t size, const char *fn)
{
    struct lclgc_block *b;

    if (size > ((size_t)1 << 40) ||
        (b = malloc(sizeof(*b) + size + 1)) == NULL) {
        lclgc_error(L, "%s: out of memory (%I bytes)", fn, (lua_Integer)size);
        return NULL;
    }
    b->refs = 1;
    b->size = size;
    return b;
}

static void
lclgc_block_drop(struct lclgc_block *b)
{
    if (b != NULL && __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(b);
}

/* The event's completion (or failure) callback: the command is done with
 * the block. Runs on the driver's thread; touches no Lua. */
static void CL_CALLBACK
lclgc_block_done(cl_event ev, cl_int status, void *b)
{
    (void)ev;
    (void)status;
    lclgc_block_drop(b);
}

/* Hand a reference on b to ev's completion. The callback is made direct
 * (no thread's deferral), since it runs no Lua. If it cannot be
 * registered, wait for the event here instead. */
static void
lclgc_block_until(cl_event ev, struct lclgc_block *b)
{
    clgc_queue_t *before = clgc_callbacks_deferred_to();
    cl_int err;

    __atomic_add_fetch(&b->refs, 1, __ATOMIC_ACQ_REL);
    (void)clgc_callbacks_defer(NULL);
    err = clgc_clSetEventCallback(ev, CL_COMPLETE, lclgc_block_done, b);
    (void)clgc_callbacks_defer(before);
    if (err != CL_SUCCESS) {
        (void)clgc_wait_for_events(1, &ev);
        lclgc_block_drop(b);
    }
}

enum lclgc_view_state { VIEW_ENDED, VIEW_MAPPED, VIEW_BLOCK };

/* A view: bytes Lua may read (and write) while the mapping lasts, or once
 * the read into its block has completed. It holds references of its own
 * on what it needs (OpenCL's, not Lua's), so that releasing a handle or
 * collecting it cannot free them under the view. */
struct lclgc_view {
    char *ptr;
    size_t size;
    enum lclgc_view_state state;
    int writable;
    cl_command_queue queue; /* a mapping's */
    cl_mem mem;             /* a mapping's */
    cl_event event;         /* a block's read */
    struct lclgc_block *block;
};

/* End a mapping: enqueue its unmap. Returns the unmap's event through ev
 * (NULL: not wanted). */
static cl_int
lclgc_view_unmap(struct lclgc_view *v, cl_uint nwait, const cl_event *wait,
                 cl_event *ev)
{
    cl_int err =
        clgc_clEnqueueUnmapMemObject(v->queue, v->mem, v->ptr, nwait, wait, ev);

    if (err == CL_SUCCESS) {
        v->state = VIEW_ENDED;
        v->ptr = NULL;
        (void)clgc_clReleaseMemObject(v->mem);
        (void)clgc_clReleaseCommandQueue(v->queue);
        v->mem = NULL;
        v->queue = NULL;
    }
    return err;
}

static int
lclgc_view_gc(lua_State *L)
{
    struct lclgc_view *v = luaL_testudata(L, 1, LCLGC_VIEW);

    if (v == NULL)
        return lclgc_argerror(L, 1, "clgc.View:__gc", LCLGC_VIEW " expected");
    if (v->state == VIEW_MAPPED &&
        lclgc_view_unmap(v, 0, NULL, NULL) != CL_SUCCESS) {
        /* The driver refused the unmap: the mapping stays (the buffer's
         * memory), the references go. */
        (void)clgc_clReleaseMemObject(v->mem);
        (void)clgc_clReleaseCommandQueue(v->queue);
    }
    if (v->event != NULL)
        (void)clgc_clReleaseEvent(v->event);
    lclgc_block_drop(v->block);
    v->state = VIEW_ENDED;
    v->ptr = NULL;
    v->event = NULL;
    v->block = NULL;
    return 0;
}

static struct lclgc_view *
lclgc_view_new(lua_State *L)
{
    struct lclgc_view *v = lua_newuserdatauv(L, sizeof(*v), 0);

    memset(v, 0, sizeof(*v));
    luaL_setmetatable(L, LCLGC_VIEW);
    return v;
}

/* The view at 1, usable: mapped, or its read complete. */
static struct lclgc_view *
lclgc_view_check(lua_State *L, const char *fn, int write)
{
    struct lclgc_view *v = luaL_testudata(L, 1, LCLGC_VIEW);

    if (v == NULL)
        lclgc_argerror(L, 1, fn, LCLGC_VIEW " expected");
    if (v->state == VIEW_ENDED)
        lclgc_error(L,
                    "%s: argument #1: the view has ended (its mapping was "
                    "unmapped)",
                    fn);
    if (v->state == VIEW_BLOCK && v->event != NULL) {
        cl_int s = CL_QUEUED;
        cl_int err = clgc_clGetEventInfo(
            v->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(s), &s, NULL);

        if (err != CL_SUCCESS)
            lclgc_cl_error(L, fn, err);
        if (s < 0)
            lclgc_fail(L, fn, s, lclgc_cl_name(s), NULL,
                       "the read into the view failed");
        if (s != CL_COMPLETE)
            lclgc_error(L,
                        "%s: the read into the view has not completed: wait "
                        "for its event first",
                        fn);
        (void)clgc_clReleaseEvent(v->event);
        v->event = NULL;
    }
    if (write && !v->writable)
        lclgc_error(L, "%s: the view is read-only (mapped with \"r\")", fn);
    return v;
}

static char *
lclgc_view_at(lua_State *L, struct lclgc_view *v, lua_Integer i, size_t es,
              const char *fn)
{
    if (i < 0 || (size_t)i >= v->size / es)
        lclgc_error(L, "%s: index %I out of range (0 to %I)", fn, i,
                    (lua_Integer)(v->size / es) - 1);
    return v->ptr + (size_t)i * es;
}

/* View:get(type, index): index from 0, in elements. */
static int
lclgc_view_get(lua_State *L)
{
    const char *fn = "clgc.View:get";
    struct lclgc_view *v = lclgc_view_check(L, fn, 0);
    int t = lclgc_check_type(L, 2, fn);
    char *p =
        lclgc_view_at(L, v, lclgc_checkint(L, 3, fn), lclgc_type_size(t), fn);
    char tmp[16];

    memcpy(tmp, p, lclgc_type_size(t)); /* no alignment assumed */
    lclgc_push_scalar(L, t, tmp);
    return 1;
}

/* View:set(type, index, value) */
static int
lclgc_view_set(lua_State *L)
{
    const char *fn = "clgc.View:set";
    struct lclgc_view *v = lclgc_view_check(L, fn, 1);
    int t = lclgc_check_type(L, 2, fn);
    char *p =
        lclgc_view_at(L, v, lclgc_checkint(L, 3, fn), lclgc_type_size(t), fn);
    char tmp[16];

    memcpy(p, tmp, lclgc_store_scalar(L, 4, t, tmp, fn));
    return 0;
}

/* View:numbers(type) -> every element, as a sequence */
static int
lclgc_view_numbers(lua_State *L)
{
    const char *fn = "clgc.View:numbers";
    struct lclgc_view *v = lclgc_view_check(L, fn, 0);
    int t = lclgc_check_type(L, 2, fn);
    size_t es = lclgc_type_size(t), n = v->size / es;
    char tmp[16];

    if (n > INT32_MAX)
        return lclgc_error(L, "%s: too many elements", fn);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        memcpy(tmp, v->ptr + i * es, es);
        lclgc_push_scalar(L, t, tmp);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* View:string([offset [, size]]) -> the bytes */
static int
lclgc_view_string(lua_State *L)
{
    const char *fn = "clgc.View:string";
    struct lclgc_view *v = lclgc_view_check(L, fn, 0);
    lua_Integer off = lclgc_optint(L, 2, 0, fn);
    lua_Integer size;

    if (off < 0 || (size_t)off > v->size)
        return lclgc_error(L, "%s: offset %I out of range", fn, off);
    size = lclgc_optint(L, 3, (lua_Integer)(v->size - (size_t)off), fn);
    if (size < 0 || (size_t)size > v->size - (size_t)off)
        return lclgc_error(L, "%s: size %I past the end of the view", fn, size);
    lua_pushlstring(L, v->ptr + off, (size_t)size);
    return 1;
}

/* View:put(offset, string): the string's bytes at offset */
static int
lclgc_view_put(lua_State *L)
{
    const char *fn = "clgc.View:put";
    struct lclgc_view *v = lclgc_view_check(L, fn, 1);
    lua_Integer off = lclgc_checkint(L, 2, fn);
    size_t len;
    const char *s = lclgc_checkstr(L, 3, &len, fn);

    if (off < 0 || (size_t)off > v->size || len > v->size - (size_t)off)
        return lclgc_error(L,
                           "%s: %I bytes at offset %I past the end of the "
                           "view (%I bytes)",
                           fn, (lua_Integer)len, off, (lua_Integer)v->size);
    memcpy(v->ptr + off, s, len);
    return 0;
}

static int
lclgc_view_len(lua_State *L)
{
    struct lclgc_view *v = luaL_testudata(L, 1, LCLGC_VIEW);

    if (v == NULL)
        return lclgc_argerror(L, 1, "clgc.View:size", LCLGC_VIEW " expected");
    lua_pushinteger(L, (lua_Integer)v->size);
    return 1;
}

/* View:active() -> whether the view can be read: mapped, or its read
 * complete (false once unmapped or while the read runs). */
static int
lclgc_view_active(lua_State *L)
{
    struct lclgc_view *v = luaL_testudata(L, 1, LCLGC_VIEW);
    cl_int s = CL_COMPLETE;

    if (v == NULL)
        return lclgc_argerror(L, 1, "clgc.View:active", LCLGC_VIEW " expected");
    if (v->state == VIEW_BLOCK && v->event != NULL &&
        clgc_clGetEventInfo(v->event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                            sizeof(s), &s, NULL) != CL_SUCCESS)
        s = CL_QUEUED;
    lua_pushboolean(L, v->state != VIEW_ENDED && s == CL_COMPLETE);
    return 1;
}

/* ------------------------------------------------------------------------
 * Non-blocking transfers and maps */

/* Queue:write_async(buffer, string | numbers [, type | {type=, offset=,
 * wait=}]) -> Event: the data is copied first, so the Lua value may go at
 * once. */
static int
lclgc_queue_write_async(lua_State *L)
{
    const char *fn = "clgc.Queue:write_async";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem m = lclgc_check(L, 2, LCLGC_BUFFER, fn);
    size_t total = lclgc_mem_size(L, m, fn), off, size, n = 0, es = 1;
    int t = -1;
    const char *data;
    struct lclgc_block *b;
    cl_uint nwait;
    cl_event *wait, ev = NULL;
    cl_int err;

    if (lua_type(L, 4) == LUA_TSTRING) {
        t = lclgc_check_type(L, 4, fn);
    } else {
        lclgc_check_opts(L, 4, fn);
        if (lua_type(L, 4) == LUA_TTABLE &&
            lua_getfield(L, 4, "type") != LUA_TNIL)
            t = lclgc_check_type(L, -1, fn);
    }
    off = lclgc_opt_size(L, 4, "offset", 0, fn);
    if (lua_type(L, 3) == LUA_TSTRING) {
        size = lua_rawlen(L, 3);
    } else if (lua_type(L, 3) == LUA_TTABLE) {
        if (t < 0)
            return lclgc_error(L,
                               "%s: a table of numbers needs an element "
                               "type (float, int, ...)",
                               fn);
        n = lclgc_rawlen(L, 3, fn);
        es = lclgc_type_size(t);
        size = n * es;
    } else {
        return lclgc_error(L,
                           "%s: argument #3: string or table expected, got %s",
                           fn, lclgc_typename(L, 3));
    }
    lclgc_check_range(L, total, off, size, "the write", fn);
    if (size == 0)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "nothing to write");
    wait = lclgc_opt_wait(L, 4, &nwait, fn);
    if (lua_type(L, 3) == LUA_TSTRING) {
        data = lua_tostring(L, 3);
    } else {
        /* Converted into Lua's memory first: a bad element raises, and
         * nothing of ours may be held then. */
        char *tmp = lua_newuserdatauv(L, size, 0);

        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, 3, (lua_Integer)i + 1);
            lclgc_store_scalar(L, -1, t, tmp + i * es, fn);
            lua_pop(L, 1);
        }
        data = tmp;
    }
    b = lclgc_block_new(L, size, fn);
    if (b == NULL)
        return 0; /* not reached: lclgc_block_new raised */
    memcpy(b->data, data, size);
    err = clgc_clEnqueueWriteBuffer(q, m, CL_FALSE, off, size, b->data, nwait,
                                    wait, &ev);
    if (err != CL_SUCCESS) {
        lclgc_block_drop(b);
        return lclgc_cl_error(L, fn, err);
    }
    lclgc_block_until(ev, b);
    lclgc_block_drop(b);
    return lclgc_push_event(L, ev);
}

/* Queue:read_async(buffer [, {offset=, size=, wait=}]) -> Event, View:
 * the view can be read once the event has completed. */
static int
lclgc_queue_read_async(lua_State *L)
{
    const char *fn = "clgc.Queue:read_async";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem m = lclgc_check(L, 2, LCLGC_BUFFER, fn);
    size_t total = lclgc_mem_size(L, m, fn), off, size;
    struct lclgc_view *v;
    cl_uint nwait;
    cl_event *wait, ev = NULL;
    cl_int err;

    lclgc_check_opts(L, 3, fn);
    off = lclgc_opt_size(L, 3, "offset", 0, fn);
    lclgc_check_range(L, total, off, 0, "the read", fn);
    size = lclgc_opt_size(L, 3, "size", total - off, fn);
    lclgc_check_range(L, total, off, size, "the read", fn);
    if (size == 0)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "nothing to read");
    wait = lclgc_opt_wait(L, 3, &nwait, fn);
    v = lclgc_view_new(L); /* owns the block from here: no leak on error */
    v->block = lclgc_block_new(L, size, fn);
    if (v->block == NULL)
        return 0; /* not reached: lclgc_block_new raised */
    v->ptr = v->block->data;
    v->size = size;
    v->writable = 1;
    err = clgc_clEnqueueReadBuffer(q, m, CL_FALSE, off, size, v->ptr, nwait,
                                   wait, &ev);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    lclgc_block_until(ev, v->block);
    (void)clgc_clRetainEvent(ev);
    v->event = ev;
    v->state = VIEW_BLOCK;
    lclgc_push_event(L, ev);
    lua_insert(L, -2);
    return 2;
}

/* Queue:map(buffer [, {flags = "rw" | "r" | "w", offset=, size=, wait=}])
 * -> View: a blocking map; the view lasts until Queue:unmap(view) (or
 * its collection, which unmaps it). */
static int
lclgc_queue_map(lua_State *L)
{
    static const char *const names[] = {"rw", "r", "w", NULL};
    static const cl_map_flags flags[] = {CL_MAP_READ | CL_MAP_WRITE,
                                         CL_MAP_READ, CL_MAP_WRITE};
    const char *fn = "clgc.Queue:map";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    cl_mem m = lclgc_check(L, 2, LCLGC_BUFFER, fn);
    size_t total = lclgc_mem_size(L, m, fn), off, size;
    int f = 0;
    struct lclgc_view *v;
    cl_uint nwait;
    cl_event *wait;
    cl_int err = CL_SUCCESS;
    void *p;

    lclgc_check_opts(L, 3, fn);
    f = lclgc_opt_choice(L, 3, "flags", "rw", names, fn);
    off = lclgc_opt_size(L, 3, "offset", 0, fn);
    lclgc_check_range(L, total, off, 0, "the map", fn);
    size = lclgc_opt_size(L, 3, "size", total - off, fn);
    lclgc_check_range(L, total, off, size, "the map", fn);
    if (size == 0)
        return lclgc_fail(L, fn, CL_INVALID_VALUE, "CL_INVALID_VALUE", NULL,
                          "nothing to map");
    wait = lclgc_opt_wait(L, 3, &nwait, fn);
    v = lclgc_view_new(L);
    p = clgc_clEnqueueMapBuffer(q, m, CL_TRUE, flags[f], off, size, nwait, wait,
                                NULL, &err);
    if (p == NULL)
        return lclgc_cl_error(L, fn,
                              err != CL_SUCCESS ? err : CL_INVALID_VALUE);
    (void)clgc_clRetainMemObject(m);
    (void)clgc_clRetainCommandQueue(q);
    v->queue = q;
    v->mem = m;
    v->ptr = p;
    v->size = size;
    v->writable = f != 1;
    v->state = VIEW_MAPPED;
    return 1;
}

/* Queue:unmap(view [, events]) -> Event: ends the mapping; the view can
 * no longer be used. */
static int
lclgc_queue_unmap(lua_State *L)
{
    const char *fn = "clgc.Queue:unmap";
    cl_command_queue q = lclgc_check(L, 1, LCLGC_QUEUE, fn);
    struct lclgc_view *v = luaL_testudata(L, 2, LCLGC_VIEW);
    cl_uint n;
    cl_event *wait, ev = NULL;
    cl_int err;

    if (v == NULL)
        return lclgc_argerror(L, 2, fn, LCLGC_VIEW " expected");
    if (v->state != VIEW_MAPPED)
        return lclgc_error(L,
                           "%s: argument #2: the view is no mapping, or has "
                           "been unmapped",
                           fn);
    if (v->queue != q)
        return lclgc_error(L,
                           "%s: argument #2: the view was mapped on another "
                           "queue",
                           fn);
    wait = lclgc_check_events(L, 3, &n, fn);
    err = lclgc_view_unmap(v, n, wait, &ev);
    if (err != CL_SUCCESS)
        return lclgc_cl_error(L, fn, err);
    return lclgc_push_event(L, ev);
}

void
lclgc_open_xfer(lua_State *L)
{
    static const luaL_Reg buffer[] = {{"sub", lclgc_buffer_sub}, {NULL, NULL}};
    static const luaL_Reg queue[] = {{"fill", lclgc_queue_fill},
                                     {"copy", lclgc_queue_copy},
                                     {"barrier", lclgc_queue_barrier},
                                     {"read_rect", lclgc_queue_read_rect},
                                     {"write_rect", lclgc_queue_write_rect},
                                     {"copy_rect", lclgc_queue_copy_rect},
                                     {"write_async", lclgc_queue_write_async},
                                     {"read_async", lclgc_queue_read_async},
                                     {"map", lclgc_queue_map},
                                     {"unmap", lclgc_queue_unmap},
                                     {NULL, NULL}};
    static const luaL_Reg view[] = {
        {"get", lclgc_view_get},         {"set", lclgc_view_set},
        {"numbers", lclgc_view_numbers}, {"string", lclgc_view_string},
        {"put", lclgc_view_put},         {"size", lclgc_view_len},
        {"active", lclgc_view_active},   {NULL, NULL}};

    lclgc_add_methods(L, LCLGC_BUFFER, buffer);
    lclgc_add_methods(L, LCLGC_QUEUE, queue);
    luaL_newmetatable(L, LCLGC_VIEW);
    luaL_newlib(L, view);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, lclgc_view_len);
    lua_setfield(L, -2, "__len");
    lua_pushcfunction(L, lclgc_view_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushboolean(L, 0); /* protected, as the handles' (lclgc.c) */
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}
