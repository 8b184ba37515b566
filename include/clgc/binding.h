#ifndef CLGC_BINDING_H
#define CLGC_BINDING_H

/* What keeps a language binding from crashing its interpreter, written
 * once for every binding (docs/bindings.md): a kernel's argument table,
 * which checks each value against what the kernel declares before OpenCL
 * sees it, and holds the objects set as arguments; and boxes, whose holds
 * keep an object alive through a call while another thread releases it.
 * The clgc_cl* wrappers keep OpenCL's semantics exactly; this is an
 * interface beside them. */

#include "clgc/common.h"
#include "clgc/wrappers.h"

CLGC_BEGIN_DECLS

/* What an argument of a kernel takes, from the kernel's argument info
 * (a program built with -cl-kernel-arg-info, or from source on drivers
 * that keep it anyway). */
typedef enum clgc_arg_kind {
    CLGC_ARG_UNKNOWN, /* no argument info: the driver checks alone */
    CLGC_ARG_BUFFER,  /* a __global or __constant pointer: a buffer */
    CLGC_ARG_LOCAL,   /* a __local pointer: a size of local memory */
    CLGC_ARG_VALUE,   /* a value: its bytes */
    CLGC_ARG_IMAGE,   /* an image of any type */
    CLGC_ARG_SAMPLER, /* a sampler_t */
    CLGC_ARG_OTHER    /* a pipe, a queue, an event: not set through here */
} clgc_arg_kind_t;

/* What a memory object is: CLGC_ARG_BUFFER, CLGC_ARG_IMAGE (an image of
 * any type), CLGC_ARG_OTHER (a pipe, or another object that a driver
 * answers for, as PoCL does for a sampler), or CLGC_ARG_UNKNOWN for NULL
 * or an object OpenCL does not know. So that a binding refuses an image where
 * it takes a buffer, and the reverse, before OpenCL reads one as the
 * other. */
CLGC_EXTERN clgc_arg_kind_t clgc_mem_kind(cl_mem mem);

/* A kernel's argument table: the kernel (a reference of its own), what
 * each argument takes, which are set, and a reference on each buffer,
 * image and sampler set, so that a binding's release of one, or its
 * collection, never frees it under the kernel. One thread at a time uses
 * a table, as OpenCL allows one thread at a time to set a kernel's
 * arguments; any thread a wrapper may be called on. */
typedef struct clgc_kernel_args clgc_kernel_args_t;

/* A table for kernel, or NULL with *errcode_ret (may be NULL) set:
 * CL_INVALID_KERNEL for one that is not, CL_OUT_OF_HOST_MEMORY, or a
 * query's error. */
CLGC_EXTERN clgc_kernel_args_t *clgc_kernel_args_new(cl_kernel kernel,
                                                     cl_int *errcode_ret);

/* Release what the table holds (every object set, and the kernel) and
 * free it. NULL is ignored. */
CLGC_EXTERN void clgc_kernel_args_free(clgc_kernel_args_t *args);

/* The table's kernel (its reference is the table's), its number of
 * arguments, and what argument index takes (CLGC_ARG_OTHER for an index
 * out of range). */
CLGC_EXTERN cl_kernel clgc_kernel_args_kernel(const clgc_kernel_args_t *args);
CLGC_EXTERN cl_uint clgc_kernel_args_count(const clgc_kernel_args_t *args);
CLGC_EXTERN clgc_arg_kind_t
clgc_kernel_args_kind(const clgc_kernel_args_t *args, cl_uint index);

/* Whether argument index takes a value of kind given (CLGC_ARG_BUFFER,
 * _IMAGE, _SAMPLER, _LOCAL or _VALUE), before a binding converts it:
 * CL_SUCCESS (also where the kernel's argument info is not known), or
 * CL_INVALID_ARG_INDEX or CL_INVALID_ARG_VALUE with the sentence in
 * clgc_kernel_args_message(). The calls below check it again. */
CLGC_EXTERN cl_int clgc_kernel_args_check(clgc_kernel_args_t *args,
                                          cl_uint index, clgc_arg_kind_t given);

/* Set argument index, checked first against what the kernel declares:
 * a buffer or an image (mem: which it is is asked of OpenCL, so that one
 * is never taken for the other), a sampler, a size of local memory (at
 * least 1 byte, and with the kernel's other local arguments at most the
 * least local memory of the program's devices: PoCL aborts at the launch
 * otherwise), or a value of size bytes (the size of the declared type,
 * where its name tells it: PoCL takes a float2 for a float4 and the
 * kernel reads past it). A buffer, image or sampler is retained until
 * the argument is set again or the table freed. Returns CL_SUCCESS, or
 * the error (the argument left as it was), with a sentence that names
 * the kernel and the argument in clgc_kernel_args_message():
 * CL_INVALID_ARG_INDEX, CL_INVALID_ARG_VALUE (a kind the argument does
 * not take: "argument 1 (y) of kernel saxpy is a __global or __constant
 * pointer: a buffer, not a value"), CL_INVALID_MEM_OBJECT,
 * CL_INVALID_SAMPLER, CL_INVALID_ARG_SIZE, or clSetKernelArg's. */
CLGC_EXTERN cl_int clgc_kernel_args_set_mem(clgc_kernel_args_t *args,
                                            cl_uint index, cl_mem mem);
CLGC_EXTERN cl_int clgc_kernel_args_set_sampler(clgc_kernel_args_t *args,
                                                cl_uint index,
                                                cl_sampler sampler);
CLGC_EXTERN cl_int clgc_kernel_args_set_local(clgc_kernel_args_t *args,
                                              cl_uint index, size_t size);
CLGC_EXTERN cl_int clgc_kernel_args_set_value(clgc_kernel_args_t *args,
                                              cl_uint index, size_t size,
                                              const void *value);

/* Whether the kernel may be launched: CL_SUCCESS once every argument is
 * set, else CL_INVALID_KERNEL_ARGS with the first one not set in the
 * message ("argument 2 (a) of kernel saxpy is not set"). */
CLGC_EXTERN cl_int clgc_kernel_args_ready(clgc_kernel_args_t *args);

/* The sentence of the table's last failure, "" if none. Valid until the
 * table's next call. */
CLGC_EXTERN const char *
clgc_kernel_args_message(const clgc_kernel_args_t *args);

/* clCreateProgramWithBinary, with its signature and errors, for binaries
 * a binding's user hands in: each goes to the driver in a copy followed
 * by CLGC_BINARY_PAD zero bytes, since PoCL reads a binary's header
 * before it checks its length (a 1-byte binary, or a real one cut short,
 * made it read past the memory: SIGSEGV); an empty or NULL binary is
 * CL_INVALID_VALUE; a PoCL binary of the format PoCL 3.1 writes that is
 * cut short (PoCL asserts, aborting the process, on such a one) is
 * CL_INVALID_BINARY, in its binary_status too, before the driver sees it.
 * A binary is code the driver will run: only what the driver made is
 * meaningful; this guards against junk, not forgery. */
#define CLGC_BINARY_PAD 4096
CLGC_EXTERN cl_program clgc_program_with_binaries(
    cl_context context, cl_uint num_devices, const cl_device_id *device_list,
    const size_t *lengths, const unsigned char **binaries,
    cl_int *binary_status, cl_int *errcode_ret);

/* A program's binaries, with the devices they are for, read as OpenCL
 * asks (CL_PROGRAM_BINARY_SIZES, then buffers of those sizes for
 * CL_PROGRAM_BINARIES): count devices in CL_PROGRAM_DEVICES' order, the
 * binary for devices[i] in binaries[i], lengths[i] bytes (0 and NULL for
 * a device that has none). One malloc'd block, freed with free(). */
typedef struct clgc_binaries {
    cl_uint count;
    cl_device_id *devices;
    size_t *lengths;
    unsigned char **binaries;
} clgc_binaries_t;

/* The binaries of program in *out, or NULL: CL_SUCCESS, or the first
 * query's error (CL_INVALID_PROGRAM, say), or CL_OUT_OF_HOST_MEMORY. */
CLGC_EXTERN cl_int clgc_program_binaries(cl_program program,
                                         clgc_binaries_t **out);

/* A binding's box around an OpenCL object, so that no handle reaches
 * OpenCL after its last release: a thread that calls OpenCL with the
 * object holds the box for the call, and a release meanwhile (by another
 * thread, or a finalizer) takes effect when the last hold ends. OCaml's
 * binding kept one per object this way; now every binding does. Any
 * thread. A hold is a store into the thread's own slot, with no atomic
 * read-modify-write; a release finds the holds (docs/bindings.md). */
typedef struct clgc_box clgc_box_t;

/* A box for object, which release(object) releases (the binding's
 * reference, which the box takes over); NULL without memory (object not
 * released). */
CLGC_EXTERN clgc_box_t *clgc_box_new(void *object,
                                     cl_int (*release)(void *object));

/* Release the object: now if no thread holds it, else when the last hold
 * ends. Idempotent: 1 for the call that released it, 0 after. */
CLGC_EXTERN int clgc_box_release(clgc_box_t *box);

/* Whether the box was released. */
CLGC_EXTERN int clgc_box_released(const clgc_box_t *box);

/* The binding's object is gone (its finalizer): release the object as
 * clgc_box_release does, and free the box once no hold is left. NULL is
 * ignored. */
CLGC_EXTERN void clgc_box_free(clgc_box_t *box);

/* A call's holds: clgc_box_get holds a box for the calling thread and
 * answers its object, until the binding lets the thread's holds go back
 * to a mark it took at the call's start (clgc_holds_mark,
 * clgc_holds_back_to: at the call's end, or from an unwind handler for a
 * call that may end by an exception, as an OCaml stub or a Guile procedure
 * can; a call nested in a callback keeps its caller's holds), or all of
 * them (clgc_holds_end), or the thread exits. NULL once the box was
 * released, and without memory for the thread's holds; nothing is held
 * then. */
CLGC_EXTERN void *clgc_box_get(clgc_box_t *box);
CLGC_EXTERN size_t clgc_holds_mark(void);
CLGC_EXTERN void clgc_holds_back_to(size_t mark);
CLGC_EXTERN void clgc_holds_end(void);

CLGC_END_DECLS

#endif /* CLGC_BINDING_H */
