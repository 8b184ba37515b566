/* The OCaml binding's C side: the runtime adapter (runtime.c), the
 * service every stub uses (core.c: objects, errors, arguments) and the
 * stubs by area (platform.c, info.c, mem.c, image.c, event.c, port.c,
 * generic.c).
 *
 * OCaml 4.13 has one runtime lock. A stub holds it; every clgc_cl* call
 * it makes lets it go for the call (the adapter's safe region), so other
 * threads run and collect meanwhile. Nothing a stub passes to clgc may be
 * an OCaml value then: strings and arrays are copied to C first, and a
 * Bigarray's data, which never moves, is kept alive by the stub's root. */
#ifndef CLGC_ML_H
#define CLGC_ML_H

#define CAML_NAME_SPACE
#include <caml/alloc.h>
#include <caml/bigarray.h>
#include <caml/callback.h>
#include <caml/custom.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>
#include <clgc.h>

/* ------------------------------------------------------------------------
 * The runtime adapter (runtime.c) */

/* The thread runs OCaml (the adapter's thread_known); a foreign thread
 * that clgc attached (PoCL's, calling back). */
extern __thread int clgc_ml_known;
int clgc_ml_foreign(void);

/* Run fn(arg) holding the runtime lock: directly on a thread that holds
 * it, else taking it for the call (a foreign thread that clgc attached,
 * between callbacks). What a C function clgc calls back runs OCaml in. */
void *clgc_ml_active(void *(*fn)(void *), void *arg);

/* ------------------------------------------------------------------------
 * Objects (core.c)
 *
 * An OpenCL object is a custom block pointing at its record, which holds
 * the handle and a box around it (clgc/binding.h); the OCaml record
 * around the block (Clgc.t) is what Gc.finalise watches. Every object a
 * stub gets is held until the stub ends (ML_RETURN; or, if it raised,
 * until the thread's next stub starts, or the thread exits), so a release
 * meanwhile (another thread's, or a finaliser's, while the stub's call
 * lets the lock go) waits for it, and is done by the next stub on a
 * thread of the program's, as is a release made on a foreign thread. */

enum ml_kind {
    ML_PLATFORM,
    ML_DEVICE,
    ML_CONTEXT,
    ML_QUEUE,
    ML_PROGRAM,
    ML_KERNEL,
    ML_MEM,
    ML_EVENT,
    ML_SAMPLER,
    ML_NKINDS
};

struct ml_handle {
    void *h;            /* the handle: identity, kept after the release */
    unsigned char kind; /* enum ml_kind */
    clgc_box_t *box;    /* holds h (a kernel's: it and its argument table) */
};

#define Handle_val(v) (*(struct ml_handle **)Data_custom_val(v))

/* Every stub starts with it: the thread's previous stub's objects are
 * let go, the Bigarrays kept for completed commands dropped, and
 * deferred releases done (on a thread of the program's). */
int clgc_ml_enter(void);
#define ML_STUB const int ml_stub __attribute__((unused)) = clgc_ml_enter()
/* A stub's normal end: its objects let go, then CAMLreturn. */
void clgc_ml_leave(void);
#define ML_RETURN(x)                                                           \
    do {                                                                       \
        value ml_result = (x);                                                 \
        clgc_ml_leave();                                                       \
        CAMLreturn(ml_result);                                                 \
    } while (0)

value clgc_ml_wrap(enum ml_kind kind, void *h);
/* The handle of v, which must be of kind (Invalid_argument if not, the
 * object's CL_INVALID_* error if released); held until the thread's next
 * stub. */
void *clgc_ml_get(value v, enum ml_kind kind, const char *who);
/* The handle of Clgc.mem v, held as clgc_ml_get holds it, which must be
 * a buffer (kind CLGC_ARG_BUFFER) or an image (CLGC_ARG_IMAGE):
 * Invalid_argument naming both otherwise (clgc_mem_kind), before OpenCL
 * reads one as the other. */
void *clgc_ml_get_mem(value v, clgc_arg_kind_t kind, const char *who);
/* Release a handle of kind through clgc (in a safe region), or later on
 * a thread of the program's. */
void clgc_ml_release_handle(enum ml_kind kind, void *h);
/* The argument table of kernel v (held, as clgc_ml_get), made if there is
 * none and make; else NULL then. */
clgc_kernel_args_t *clgc_ml_kernel_args(value v, int make, const char *who);
/* Raise unless kernel v may be launched (platform.c). */
void clgc_ml_kernel_ready(value v, const char *who);

/* Drop the roots of the Bigarrays whose commands completed or whose
 * buffers OpenCL destroyed (mem.c); the runtime lock held. */
void clgc_ml_drop_kept(void);
/* Keep Bigarray ba until ev completes (or fails): 0, or an OpenCL error
 * (nothing kept: the caller waits for ev instead). */
cl_int clgc_ml_keep_until_complete(cl_event ev, value ba);
/* The size in bytes of memory object m (a handle the stub holds);
 * raises clGetMemObjectInfo's error. */
size_t clgc_ml_mem_size(void *m);
/* Keep Bigarray ba until OpenCL destroys memory object m (its memory
 * the Bigarray's): 0, or an OpenCL error (nothing kept). */
cl_int clgc_ml_keep_until_destroyed(cl_mem m, value ba);
/* The end of a transfer of Bigarray ba that enqueued ev with err: a
 * non-blocking one keeps ba until the command completes (or waits for
 * it, without memory to keep it); raises err as call's; else the event,
 * wrapped. */
value clgc_ml_transferred(cl_int err, cl_event ev, cl_bool block, value ba,
                          const char *call);
/* Close the dropped ports whose posts have completed (port.c); the
 * runtime lock held. */
void clgc_ml_tidy_ports(void);

/* The binding's kind (enum ml_kind) of an OpenCL handle type ("cl_mem"),
 * by the library's object kinds (clgc/names.h); -1 for a type the binding
 * has no objects of. */
int clgc_ml_kind_of_type(const char *type);

/* ------------------------------------------------------------------------
 * Errors and arguments (core.c) */

/* Raise Clgc.Error for a failed call; detail: a build log, what was
 * wrong, or NULL. The _owned form frees detail (malloc'd, or NULL). */
CAMLnoreturn_start void clgc_ml_raise(cl_int code, const char *call,
                                      const char *detail) CAMLnoreturn_end;
CAMLnoreturn_start void clgc_ml_raise_owned(cl_int code, const char *call,
                                            char *detail) CAMLnoreturn_end;
#define ML_CHECK(err, call)                                                    \
    do {                                                                       \
        if ((err) != CL_SUCCESS)                                               \
            clgc_ml_raise((err), (call), NULL);                                \
    } while (0)

/* A block of tag with one field, v (an option's Some, a variant's
 * constructor). */
value clgc_ml_some(int tag, value v);
/* A list of events as a malloc'd array (NULL for an empty list). */
cl_event *clgc_ml_events(value list, cl_uint *n, const char *who);
/* An int array of 1 to 3 sizes; their count. */
cl_uint clgc_ml_sizes(value arr, size_t out[3], const char *who);
/* A copy of an OCaml string, malloc'd (Out_of_memory without memory). */
char *clgc_ml_strdup(value s);
/* The build logs of every device of p that has one, one after another,
 * malloc'd; NULL if there are none (platform.c). */
char *clgc_ml_build_logs(cl_program p);
/* Raise Clgc.Callback_failed with what a callback raised, if one did since
 * the last check (event.c). */
void clgc_ml_raise_pending(void);

#endif /* CLGC_ML_H */
