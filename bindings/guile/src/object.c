/* The procedures of every object: release, released?, the predicates,
 * handle->pointer. */

#include <libguile.h>
#include <pthread.h>

#include "guile-clgc.h"

static SCM
release_body(SCM obj)
{
    int k = guile_clgc_kind_of(obj);

    if (k < 0)
        scm_wrong_type_arg_msg("release", 1, obj, "OpenCL object");
    if (k == K_CQ) {
        void *q = scm_foreign_object_ref(obj, 0);
        int err;

        if (q == NULL)
            return SCM_UNSPECIFIED;
        err = clgc_queue_close(q);
        if (err != CLGC_OK)
            guile_clgc_raise_clgc(err, "release");
        scm_foreign_object_set_x(obj, 0, NULL);
        return SCM_UNSPECIFIED;
    }
    guile_clgc_release_object(k, obj);
    return SCM_UNSPECIFIED;
}
GUILE_CLGC_HELD1(release)

static SCM
released_p_body(SCM obj)
{
    if (guile_clgc_kind_of(obj) < 0)
        scm_wrong_type_arg_msg("released?", 1, obj, "OpenCL object");
    return scm_from_bool(guile_clgc_released(obj));
}
GUILE_CLGC_HELD1(released_p)

/* (%object-types): the foreign object types, for the Scheme half's
 * printers. */
static SCM
object_types_body(void)
{
    SCM l = SCM_EOL;

    for (int k = K_NKINDS; k-- > 0;)
        l = scm_cons(guile_clgc_types[k], l);
    return l;
}
GUILE_CLGC_HELD0(object_types)

/* (cl-device? obj) and the other kinds' predicates. */
#define PREDICATE(f, k)                                                        \
    static SCM f(SCM obj)                                                      \
    {                                                                          \
        return scm_from_bool(SCM_IS_A_P(obj, guile_clgc_types[k]));            \
    }
PREDICATE(platform_p, K_PLATFORM)
PREDICATE(device_p, K_DEVICE)
PREDICATE(context_p, K_CONTEXT)
PREDICATE(queue_p, K_QUEUE)
PREDICATE(program_p, K_PROGRAM)
PREDICATE(kernel_p, K_KERNEL)
PREDICATE(mem_p, K_MEM)
PREDICATE(event_p, K_EVENT)
PREDICATE(sampler_p, K_SAMPLER)
PREDICATE(cq_p, K_CQ)
PREDICATE(closure_p, K_CLOSURE)
#undef PREDICATE

/* (cl-image? obj): a cl-mem that is an image. */
static SCM
image_p_body(SCM obj)
{
    return scm_from_bool(
        SCM_IS_A_P(obj, guile_clgc_types[K_MEM]) && !guile_clgc_released(obj) &&
        clgc_mem_kind(guile_clgc_unwrap(K_MEM, obj, 1, "cl-image?")) ==
            CLGC_ARG_IMAGE);
}
GUILE_CLGC_HELD1(image_p)

static SCM
handle_pointer_body(SCM obj)
{
    int k = guile_clgc_kind_of(obj);

    if (k < 0)
        scm_wrong_type_arg_msg("handle->pointer", 1, obj, "OpenCL object");
    return scm_from_pointer(guile_clgc_unwrap(k, obj, 1, "handle->pointer"),
                            NULL);
}
GUILE_CLGC_HELD1(handle_pointer)

const struct guile_clgc_proc guile_clgc_object_procs[] = {
    {"release", 1, 0, 0, release,
     "(release obj) releases an OpenCL object (or closes a completion queue, "
     "or retires a closure) now; idempotent."},
    {"cl-platform?", 1, 0, 0, platform_p,
     "(cl-platform? obj) -> whether obj is a platform."},
    {"cl-device?", 1, 0, 0, device_p,
     "(cl-device? obj) -> whether obj is a device."},
    {"cl-context?", 1, 0, 0, context_p,
     "(cl-context? obj) -> whether obj is a context."},
    {"cl-command-queue?", 1, 0, 0, queue_p,
     "(cl-command-queue? obj) -> whether obj is a command queue."},
    {"cl-program?", 1, 0, 0, program_p,
     "(cl-program? obj) -> whether obj is a program."},
    {"cl-kernel?", 1, 0, 0, kernel_p,
     "(cl-kernel? obj) -> whether obj is a kernel."},
    {"cl-mem?", 1, 0, 0, mem_p,
     "(cl-mem? obj) -> whether obj is a buffer (a memory object)."},
    {"cl-event?", 1, 0, 0, event_p,
     "(cl-event? obj) -> whether obj is an event."},
    {"cl-image?", 1, 0, 0, image_p,
     "(cl-image? obj) -> whether obj is an image (a cl-mem made by "
     "make-image)."},
    {"cl-sampler?", 1, 0, 0, sampler_p,
     "(cl-sampler? obj) -> whether obj is a sampler."},
    {"completion-queue?", 1, 0, 0, cq_p,
     "(completion-queue? obj) -> whether obj is a completion queue."},
    {"closure?", 1, 0, 0, closure_p,
     "(closure? obj) -> whether obj is a closure (make-closure)."},
    {"%object-types", 0, 0, 0, object_types,
     "(%object-types) -> the object types (internal: for the printers)."},
    {"released?", 1, 0, 0, released_p,
     "(released? obj) -> #t once obj was released."},
    {"handle->pointer", 1, 0, 0, handle_pointer,
     "(handle->pointer obj) -> obj's OpenCL handle, a pointer."},
    {NULL, 0, 0, 0, NULL, NULL}};
