/* The Lua 5.4 binding's C module, clgc.core: declarations shared by its
 * files, one per area as luv has them (lclgc.c: the state, its queue,
 * errors, handles and worker jobs; lplatform.c: platforms, devices,
 * contexts and command queues; lprogram.c: programs and kernels; lmem.c:
 * buffers and raw memory; levent.c: events, waits and callbacks;
 * lgeneric.c: every other command through clgc's metadata; linfo.c: the
 * info queries of every object, by clgc's tables of names; lxfer.c:
 * sub-buffers, fills, copies, rectangles, barriers, non-blocking
 * transfers, maps and views; limage.c: images and samplers; lbinary.c:
 * programs from binaries, compile and link; ltimer.c: the state's
 * timers). The scheduler is Lua code, in clgc.lua.
 *
 * A lua_State is single-threaded: nothing here touches one from any thread
 * but the one running it. Completions and OpenCL callbacks reach Lua only
 * through the state's completion queue, drained on that thread. */

#ifndef LCLGC_H
#define LCLGC_H

#include <pthread.h>

#include <lauxlib.h>
#include <lua.h>

#include "clgc.h"

/* One per lua_State that loaded the module (lclgc.c). */
typedef struct lclgc_state lclgc_state;

/* A handle: an OpenCL object, and how to release it (NULL: nothing to
 * release, as for platforms and root devices). obj is NULL once released.
 * A kernel's handle has a user value: its argument table (clgc/binding.h),
 * a handle of the hidden class LCLGC_KERNEL_ARGS, which holds what the
 * arguments were set to (lprogram.c). */
typedef struct lclgc_handle {
    void *obj;
    cl_int (*release)(void *obj);
} lclgc_handle;

/* Metatable names, also used in error messages. */
#define LCLGC_PLATFORM "clgc.Platform"
#define LCLGC_DEVICE "clgc.Device"
#define LCLGC_CONTEXT "clgc.Context"
#define LCLGC_QUEUE "clgc.Queue"
#define LCLGC_PROGRAM "clgc.Program"
#define LCLGC_KERNEL "clgc.Kernel"
#define LCLGC_BUFFER "clgc.Buffer"
#define LCLGC_EVENT "clgc.Event"
#define LCLGC_LOCAL "clgc.local_mem"
#define LCLGC_MEMORY "clgc.memory"
#define LCLGC_KERNEL_ARGS "clgc.KernelArgs"
#define LCLGC_ERROR "clgc.Error"

/* A Lua function to call in a later drain of the state's queue, on the
 * owner thread, as fn(status, arg): the handler of a completion, a
 * deferred OpenCL callback or a worker job. An error it raises is reported
 * through clgc_callback_fail and raised at the state's next wait or
 * drain, with `what` in the message. */
struct lclgc_post;

/* A job run on a worker thread (a build): work(job) runs there,
 * then done(status) in a drain, then finish(job) frees it. Every job
 * starts with this header. */
struct lclgc_job {
    lclgc_state *st;
    struct lclgc_post *done;
    void (*work)(struct lclgc_job *job);
    void (*finish)(struct lclgc_job *job);
    cl_int status;
    int lost; /* finish runs on the worker: no post of it may run */
};

/* Errors. Every message starts with the position of the user's code that
 * called (never one inside clgc.lua), then the documented function's name
 * (fn: "clgc.Queue:write"). Arguments are counted as they sit on the
 * stack: a method's object is argument #1. Misuse (lclgc_error,
 * lclgc_argerror) raises a string; a failure of OpenCL or clgc
 * (lclgc_fail, lclgc_cl_error, lclgc_clgc_error) an error object, a
 * table of class "clgc.Error" with code, name, func, message and log. */
int lclgc_error(lua_State *L, const char *fmt, ...);
int lclgc_fail(lua_State *L, const char *fn, int code, const char *name,
               const char *log, const char *fmt, ...);
int lclgc_argerror(lua_State *L, int idx, const char *fn, const char *what);
lua_Integer lclgc_checkint(lua_State *L, int idx, const char *fn);
lua_Integer lclgc_optint(lua_State *L, int idx, lua_Integer def,
                         const char *fn);
lua_Number lclgc_checknum(lua_State *L, int idx, const char *fn);
const char *lclgc_checkstr(lua_State *L, int idx, size_t *len, const char *fn);
const char *lclgc_optstr(lua_State *L, int idx, const char *def,
                         const char *fn);
void lclgc_checktype(lua_State *L, int idx, int type, const char *fn);
size_t lclgc_rawlen(lua_State *L, int idx, const char *fn);
int lclgc_checkopt(lua_State *L, int idx, const char *def,
                   const char *const names[], const char *fn);
int lclgc_opt_choice(lua_State *L, int idx, const char *field, const char *def,
                     const char *const names[], const char *fn);

/* lclgc.c */
lclgc_state *lclgc_state_get(lua_State *L);
clgc_queue_t *lclgc_state_queue(lclgc_state *st);
const char *lclgc_cl_name(cl_int err);
int lclgc_cl_error(lua_State *L, const char *fn, cl_int err);
int lclgc_clgc_error(lua_State *L, const char *fn, int err);
void lclgc_new_class(lua_State *L, const char *name, const luaL_Reg *methods);
void lclgc_add_methods(lua_State *L, const char *name, const luaL_Reg *methods);
void lclgc_push_handle(lua_State *L, const char *kind, void *obj);
const char *lclgc_typename(lua_State *L, int idx);
void *lclgc_check(lua_State *L, int idx, const char *kind, const char *fn);
lclgc_handle *lclgc_check_handle(lua_State *L, int idx, const char *kind,
                                 const char *fn);
int lclgc_blocking(void);
void lclgc_handle_drop(lclgc_handle *h);
struct lclgc_post *lclgc_post_new(lua_State *L, int fn_idx, int arg_idx,
                                  const char *what);
int lclgc_post_queue(struct lclgc_post *p, cl_int status);
void lclgc_post_run(struct lclgc_post *p, cl_int status);
void lclgc_post_free(struct lclgc_post *p);
/* OpenCL callbacks whose data is a post: they run it with the status
 * (an event's; CL_SUCCESS for a buffer's destruction). levent.c. */
void CL_CALLBACK lclgc_event_callback(cl_event event, cl_int status,
                                      void *post);
void CL_CALLBACK lclgc_mem_destroyed(cl_mem mem, void *post);
int lclgc_job_start(lua_State *L, struct lclgc_job *job, const char *fn);
int lclgc_is_draining(lua_State *L);
int lclgc_state_pending(lclgc_state *st);
int lclgc_drain(lua_State *L, int max, const char *fn);
void lclgc_raise_failures(lua_State *L, const char *fn);

/* ltimer.c: a state's timers, one heap and one timerfd, no thread. The
 * fd to poll is an epoll fd over the queue's fd and the timerfd. init
 * returns 0 or an errno value; add takes a post (0 to 1e6 seconds) and
 * returns 0 or ENOMEM; run runs the expired ones (at most max, 0: all) and
 * returns how many; free drops the pending ones (their state is dead). */
typedef struct lclgc_timers lclgc_timers;
int lclgc_timers_init(lclgc_timers **t, int queue_fd);
int lclgc_timers_fd(lclgc_timers *t);
int lclgc_timers_add(lclgc_timers *t, double seconds, struct lclgc_post *p);
int lclgc_timers_run(lclgc_timers *t, int max);
void lclgc_timers_free(lclgc_timers *t);

/* lprogram.c: scalar types of kernel arguments and buffer elements
 * ("float", "int", ...), by index. */
int lclgc_check_type(lua_State *L, int idx, const char *fn);
size_t lclgc_type_size(int t);
size_t lclgc_store_scalar(lua_State *L, int idx, int t, void *out,
                          const char *fn);
void lclgc_push_scalar(lua_State *L, int t, const void *in);
/* lprogram.c: raise unless the kernel at idx may be launched. */
void lclgc_kernel_ready(lua_State *L, int idx, cl_kernel k, const char *fn);

/* levent.c */
cl_event *lclgc_check_events(lua_State *L, int idx, cl_uint *n, const char *fn);

/* The service's and the areas' parts of the module, which the hub
 * (lmodule.c) puts together: each adds its functions to the module table
 * on top of the stack, or its methods to their classes. */
void lclgc_open_core(lua_State *L);
void lclgc_open_platform(lua_State *L);
void lclgc_open_program(lua_State *L);
void lclgc_open_mem(lua_State *L);
void lclgc_open_event(lua_State *L);
void lclgc_open_generic(lua_State *L);
void lclgc_open_info(lua_State *L);

/* Images, samplers, views, transfers, binaries and linking (limage.c,
 * lxfer.c, lbinary.c). An image is a cl_mem of the class clgc.Image. */
#define LCLGC_IMAGE "clgc.Image"
#define LCLGC_SAMPLER "clgc.Sampler"
#define LCLGC_VIEW "clgc.View"

/* lxfer.c: options of transfers, from the table at idx (absent: the
 * defaults). lclgc_opt_wait pushes one value, as lclgc_check_events. */
size_t lclgc_opt_size(lua_State *L, int idx, const char *name, size_t def,
                      const char *fn);
size_t lclgc_mem_size(lua_State *L, cl_mem m, const char *fn);
int lclgc_opt_triple(lua_State *L, int idx, const char *name, size_t out[3],
                     const char *fn);
cl_event *lclgc_opt_wait(lua_State *L, int idx, cl_uint *n, const char *fn);
void lclgc_check_opts(lua_State *L, int idx, const char *fn);

/* lprogram.c: the build logs of every device of p, one string. lplatform.c:
 * a Device or a table of them at idx, as an array pushed in a userdata. */
void lclgc_push_log(lua_State *L, cl_program p);
cl_device_id *lclgc_check_devices(lua_State *L, int idx, cl_uint *n,
                                  const char *fn);

void lclgc_open_xfer(lua_State *L);
void lclgc_open_image(lua_State *L);
void lclgc_open_binary(lua_State *L);

/* What only clgc.lua and the tests use, kept out of the module's table:
 * the table registry["clgc.internal"] (lclgc.c), which they reach with
 * debug.getregistry(). Each adds its functions to the table at the top. */
void lclgc_internal_program(lua_State *L);

#endif /* LCLGC_H */
