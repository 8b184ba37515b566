/* Internal declarations of the Guile binding's C extension: the service
 * every area file uses (core.c, runtime.c) and the areas' procedure tables
 * that the module's entry (module.c) defines. Nothing here is exported:
 * the extension's only exported symbols are its init functions. */
#ifndef GUILE_CLGC_H
#define GUILE_CLGC_H

#include <clgc.h>
#include <libguile.h>
#include <stdint.h>

/* A procedure of the (clgc) module: an area file's table of them ends with
 * a NULL name. module.c defines each with its docstring and exports it,
 * unless its name starts with '%' (the Scheme half's helpers): so none is
 * defined without being exported and documented. */
struct guile_clgc_proc {
    const char *name;
    int req, opt, rest;
    scm_t_subr fn;
    const char *doc;
};

extern const struct guile_clgc_proc guile_clgc_object_procs[];  /* object.c */
extern const struct guile_clgc_proc guile_clgc_info_procs[];    /* info.c */
extern const struct guile_clgc_proc guile_clgc_program_procs[]; /* program.c */
extern const struct guile_clgc_proc guile_clgc_mem_procs[];     /* mem.c */
extern const struct guile_clgc_proc guile_clgc_image_procs[];   /* image.c */
extern const struct guile_clgc_proc guile_clgc_event_procs[];   /* event.c */
extern const struct guile_clgc_proc guile_clgc_generic_procs[]; /* generic.c */
extern const struct guile_clgc_proc guile_clgc_closure_procs[]; /* closure.c */
extern const struct guile_clgc_proc guile_clgc_runtime_procs[]; /* runtime.c */

/* ------------------------------------------------------------------------
 * The runtime adapter (runtime.c) */

/* Install the Guile runtime adapter. Called once, from the extension's
 * init function, on the thread that loads it (in Guile mode: the main
 * thread of a program that loads (clgc) before any OpenCL call). Returns
 * clgc_runtime_install's code. */
int guile_clgc_install(void);

/* Switch the safe regions on (1) or off (0) for every later crossing. */
void guile_clgc_set_regions(int on);
int guile_clgc_regions(void);

/* Around every call that may load or run LLVM (see runtime.c): note the
 * program's signal dispositions before it, and put back after it those
 * that LLVM replaced (bdwgc's restart signal always). Any thread. */
void guile_clgc_signals_note(void);
void guile_clgc_signals_restore(void);

/* ------------------------------------------------------------------------
 * Errors (core.c), raised as &clgc-error by the Scheme half; none returns */

const char *guile_clgc_cl_error_name(cl_int code);
SCM guile_clgc_str_or_false(const char *s);
SCM_NORETURN void guile_clgc_raise_error(const char *name, int code,
                                         const char *who, SCM log, SCM cause,
                                         const char *message);
SCM_NORETURN void guile_clgc_raise_clgc_named(int code, const char *who,
                                              SCM cause, const char *message);
SCM_NORETURN void guile_clgc_raise_cl(cl_int err, const char *who);
SCM_NORETURN void guile_clgc_raise_clgc(int err, const char *who);

#define CHECK_CL(err, who)                                                     \
    do {                                                                       \
        cl_int check_err_ = (err);                                             \
        if (check_err_ != CL_SUCCESS)                                          \
            guile_clgc_raise_cl(check_err_, who);                              \
    } while (0)

/* The runtime's callback_failed hook: keeps the failure for the calling
 * thread's next wait or drain, which raises it with raise_pending. */
void guile_clgc_callback_failed(const clgc_callback_error_t *error, void *data);
void guile_clgc_raise_pending(void);

/* ------------------------------------------------------------------------
 * Objects (core.c): OpenCL handles as foreign objects of one type a kind */

enum kind {
    K_PLATFORM,
    K_DEVICE,
    K_CONTEXT,
    K_QUEUE,
    K_PROGRAM,
    K_KERNEL,
    K_MEM,
    K_EVENT,
    K_SAMPLER,
    K_CQ,      /* a clgc completion queue */
    K_CLOSURE, /* a clgc closure (clgc/ffi.h) */
    K_NKINDS
};

struct guile_clgc_kind {
    const char *name; /* the type's, "cl-context" */
    cl_int invalid;   /* the code of a released one */
    scm_t_struct_finalize finalizer;
};
extern const struct guile_clgc_kind guile_clgc_kinds[K_NKINDS];
extern SCM guile_clgc_types[K_NKINDS]; /* made by guile_clgc_core_init */

void guile_clgc_core_init(void);
SCM guile_clgc_wrap(enum kind k, void *h);
void *guile_clgc_unwrap(enum kind k, SCM obj, int pos, const char *who);
int guile_clgc_kind_of(SCM obj);
/* Release obj (of kind k) now, or when the last procedure holding it
 * ends; idempotent. Whether it was. */
void guile_clgc_release_object(enum kind k, SCM obj);
int guile_clgc_released(SCM obj);
/* The argument table of the kernel at pos, held as unwrap holds (core.c):
 * made if there is none and make, else NULL then. Raise unless the kernel
 * may be launched: every argument set, where set-kernel-arg! set them
 * (program.c). */
clgc_kernel_args_t *guile_clgc_kernel_args(SCM kernel, int make, int pos,
                                           const char *who);
void guile_clgc_kernel_ready(SCM kernel, int pos, const char *who);
/* A cl-mem at pos that must be a buffer, held as unwrap holds
 * (wrong-type-arg for an image: clgc_mem_kind). */
void *guile_clgc_unwrap_buffer(SCM obj, int pos, const char *who);

/* A procedure of the tables runs its body, f_body, in a dynwind context
 * whose unwind, on its return or an exception, lets go of the holds its
 * unwraps took (clgc_holds_back_to); one nested in a Scheme callback
 * keeps its caller's. GUILE_CLGC_HELDn(f) defines f, of n arguments. */
void guile_clgc_held_begin(void);
#define GUILE_CLGC_HELD_RUN(call)                                              \
    {                                                                          \
        SCM r_;                                                                \
        guile_clgc_held_begin();                                               \
        r_ = call;                                                             \
        scm_dynwind_end();                                                     \
        return r_;                                                             \
    }
#define GUILE_CLGC_HELD0(f) static SCM f(void) GUILE_CLGC_HELD_RUN(f##_body())
#define GUILE_CLGC_HELD1(f) static SCM f(SCM a) GUILE_CLGC_HELD_RUN(f##_body(a))
#define GUILE_CLGC_HELD2(f)                                                    \
    static SCM f(SCM a, SCM b) GUILE_CLGC_HELD_RUN(f##_body(a, b))
#define GUILE_CLGC_HELD3(f)                                                    \
    static SCM f(SCM a, SCM b, SCM c) GUILE_CLGC_HELD_RUN(f##_body(a, b, c))
#define GUILE_CLGC_HELD4(f)                                                    \
    static SCM f(SCM a, SCM b, SCM c, SCM d)                                   \
        GUILE_CLGC_HELD_RUN(f##_body(a, b, c, d))
#define GUILE_CLGC_HELD5(f)                                                    \
    static SCM f(SCM a, SCM b, SCM c, SCM d, SCM e)                            \
        GUILE_CLGC_HELD_RUN(f##_body(a, b, c, d, e))
#define GUILE_CLGC_HELD6(f)                                                    \
    static SCM f(SCM a, SCM b, SCM c, SCM d, SCM e, SCM g)                     \
        GUILE_CLGC_HELD_RUN(f##_body(a, b, c, d, e, g))
#define GUILE_CLGC_HELD7(f)                                                    \
    static SCM f(SCM a, SCM b, SCM c, SCM d, SCM e, SCM g, SCM h)              \
        GUILE_CLGC_HELD_RUN(f##_body(a, b, c, d, e, g, h))
void guile_clgc_seen_note(enum kind k, void *h);
int guile_clgc_seen_kind(void *h);
void **guile_clgc_handle_array(enum kind k, SCM list, int pos, const char *who,
                               cl_uint *n, void **buf, size_t n_buf);
void guile_clgc_free_array(void **a, void **buf);

/* Closures (closure.c): a closure's retirement, for release; its C
 * function, for the generic path. */
void guile_clgc_closure_retire(void *closure);
clgc_function_t guile_clgc_closure_code(SCM closure, int pos, const char *who);

/* ------------------------------------------------------------------------
 * Arguments (core.c) */

void guile_clgc_validate(const char *who, int ok, SCM v, int pos,
                         const char *what);
char *guile_clgc_cstring(SCM str, int pos, const char *who);
int64_t guile_clgc_to_signed(SCM v, int64_t min, int64_t max, int pos,
                             const char *who);
uint64_t guile_clgc_to_unsigned(SCM v, uint64_t max, int pos, const char *who);
int guile_clgc_sym_is(SCM sym, const char *name);
SCM guile_clgc_kw(const char *name);
/* A size or a list of 1 to 3 into out, the rest fill; their count. */
int guile_clgc_sizes(SCM v, size_t out[3], size_t fill, int pos,
                     const char *who);
cl_mem_flags guile_clgc_mem_flags(SCM flags, int pos, const char *who);
/* A wait list (16 entries in buf; guile_clgc_free_array after). */
void **guile_clgc_wait_list(SCM wait, int pos, const char *who, cl_uint *n,
                            void **buf);

/* ------------------------------------------------------------------------
 * Scheme callbacks (core.c) and the interruptible wait (event.c) */

extern SCM guile_clgc_guarded; /* (%call-guarded proc args) */
void guile_clgc_report_failure(SCM exn);
SCM guile_clgc_apply_guarded(SCM proc, SCM args, int *ok);
SCM guile_clgc_call_handler(void *data, SCM key, SCM args);
void guile_clgc_call_scheme(SCM proc, SCM args);
cl_int guile_clgc_interruptible_wait(cl_uint n, cl_event *events, SCM keep);
void guile_clgc_keep_until_complete(cl_event event, SCM keep);
/* A transfer of bv just enqueued as ev: with block, waited for
 * (interruptibly; bv is returned), else its event object (bv kept until
 * it completes). */
SCM guile_clgc_transfer_done(cl_event ev, SCM bv, int block, const char *who);

#endif /* GUILE_CLGC_H */
