#ifndef CLGC_FFI_H
#define CLGC_FFI_H

/* Closures and generic calls, built on libffi.
 *
 * A closure is a real C function pointer, of a signature chosen at run
 * time, that any C library can call (PoCL, a driver, libuv) on any thread.
 * Every call runs one generic handler with the managed runtime active, as
 * clgc_call_active() does: the handler may allocate and call into the
 * runtime wherever the call comes from.
 *
 * A generic call calls the clgc_<name> wrapper of any OpenCL command from
 * an array of tagged values: all 252 commands are reachable without glue
 * compiled per command.
 *
 * Signatures are strings: the result's letter, then the arguments' letters
 * in parentheses, with nothing before, between or after them:
 *
 *   signature = result "(" { argument } ")"
 *   result    = "v" | argument
 *
 * Each letter is one clgc_ctype_t and one member of clgc_value_t:
 *
 *   v  CLGC_CTYPE_VOID      void (a result only)
 *   c  CLGC_CTYPE_INT8      int8_t      i8
 *   C  CLGC_CTYPE_UINT8     uint8_t     u8
 *   s  CLGC_CTYPE_INT16     int16_t     i16
 *   S  CLGC_CTYPE_UINT16    uint16_t    u16
 *   i  CLGC_CTYPE_INT32     int32_t     i32
 *   I  CLGC_CTYPE_UINT32    uint32_t    u32
 *   l  CLGC_CTYPE_INT64     int64_t     i64
 *   L  CLGC_CTYPE_UINT64    uint64_t    u64
 *   j  CLGC_CTYPE_INTPTR    intptr_t    iptr
 *   z  CLGC_CTYPE_SIZE      size_t      size
 *   f  CLGC_CTYPE_FLOAT     float       f
 *   d  CLGC_CTYPE_DOUBLE    double      d
 *   p  CLGC_CTYPE_POINTER   void *      p
 *   F  CLGC_CTYPE_FUNCTION  a function pointer  fn
 *
 * "v(p)" is void f(void *); "d(iLdp)" is double f(int32_t, uint64_t,
 * double, void *); "i()" is int32_t f(void). At most CLGC_CLOSURE_MAX_ARGS
 * arguments. No structs, unions, long double or variadic functions:
 * OpenCL's callbacks have none. */

#include <stdint.h>
#include <stddef.h>

#include "clgc/common.h"
#include "clgc/commands.h"

CLGC_BEGIN_DECLS

/* The most arguments a closure's signature may have. */
#define CLGC_CLOSURE_MAX_ARGS 32

/* One value of any ctype: the member named in the table above holds it. */
typedef union clgc_value {
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    intptr_t iptr;
    size_t size;
    float f;
    double d;
    void *p;
    clgc_function_t fn;
} clgc_value_t;

/* ------------------------------------------------------------------------
 * Closures */

typedef struct clgc_closure clgc_closure_t;

/* A closure's handler. args[i] points at the i-th argument, of the C type
 * its letter names: read it as *(int32_t *)args[1]. result points at
 * storage for the result, aligned and large enough for a clgc_value_t:
 * store the result with its own C type (*(int8_t *)result = -1, or
 * ((clgc_value_t *)result)->i8 = -1). clgc widens integers narrower than
 * a machine word afterwards, as libffi requires of its closures (its
 * ffi_arg rule), so a handler never does. A handler with a non-void result
 * must store one; for a "v" result, result points at storage clgc
 * ignores. args, the values they point at and result stay valid until the
 * handler returns, even if it frees its own closure.
 *
 * The handler runs on the thread that called the closure's code, with the
 * runtime active (clgc_thread_in_region() is 0): it may use the runtime.
 * It must return normally: no longjmp, no exception and no pthread_exit
 * may unwind through it (the frames of libffi and clgc below it would be
 * skipped, and the call would stay counted as running: a later
 * clgc_closure_free() would wait for it for ever). */
typedef void (*clgc_closure_cb)(void *result, void *const *args, void *data);

/* Make a closure: a C function of the given signature that, when called,
 * runs handler(result, args, data). The function is stored in *code: cast
 * it to its real type (for "v(p)", void (*)(void *)) and give it to any C
 * library. The closure itself is stored in *closure, for
 * clgc_closure_free().
 *
 * Each call of *code, on any thread, reaches the handler as
 * clgc_call_active() would:
 * - on a thread inside a safe region (PoCL calling back inside the
 *   clgc_cl* wrapper that gave it the pointer), through the runtime's
 *   active_region hook, or in the safepoint form by leaving the region,
 *   polling the safepoint, and entering it again after the handler;
 * - on a thread that is active already, directly;
 * - on a thread the runtime does not know (one of PoCL's), after attaching
 *   it, once: it stays attached until it exits, and is detached then.
 * When the thread cannot be attached (the runtime has no attach_thread
 * hook, or it failed), the handler does not run and the caller gets a
 * zero result (0, 0.0 or NULL).
 *
 * Returns CLGC_OK; CLGC_EINVAL if handler, closure or code is NULL;
 * CLGC_ESIGNATURE if signature is NULL or not of the grammar above (an
 * unknown letter, a void argument, a missing or extra parenthesis,
 * anything after the closing one, more than CLGC_CLOSURE_MAX_ARGS
 * arguments); CLGC_ENOMEM. On error *closure and *code are not written.
 *
 * Any thread; it does not use the runtime, so it may come before
 * clgc_runtime_install(). data is the caller's: clgc never looks at it.
 * Undo with clgc_closure_free(). */
CLGC_EXTERN int clgc_closure_create(const char *signature,
                                    clgc_closure_cb handler, void *data,
                                    clgc_closure_t **closure,
                                    clgc_function_t *code);

/* Free a closure and its code. Call it only once the code can no longer
 * be called: no call may start after clgc_closure_free() begins (typically
 * the library that held the pointer has released it, or will never call
 * it again, as with a one-shot callback after its call).
 *
 * Calls that are already running on other threads are waited for: it
 * returns once their handlers have returned, and the calling thread waits
 * inside a safe region, so a handler that needs a collection does not
 * deadlock against it (a handler that waits for the freeing thread still
 * does). A call is running from clgc's first step in it, which counts it
 * in before anything else, to its handler's return: the way in to the
 * handler (attaching a thread the runtime does not know, the runtime's
 * hooks, a safepoint that waits for a collection) is part of the call.
 * Before that first step the call is in libffi's trampoline, a few
 * instructions that read the closure and that nothing can count. So what
 * the program must guarantee is: when clgc_closure_free() begins, each
 * call of the code has returned, or has reached its handler (the handler
 * may say so to the freeing thread), or will never be made.
 *
 * A handler may free its own closure, as a one-shot callback does after
 * its only call: the call in progress on the calling thread (and any
 * nested call of the same closure below it) is not waited for, and the
 * handler may go on using args, result and its data until it returns.
 * This is safe because nothing reads the closure's memory once the
 * handler returns: clgc keeps what it still needs on the stack, and
 * libffi's code, which the closure's trampoline jumps into, took what it
 * needed from the closure before calling clgc and returns through its own
 * stack frame (as libffi 3.4's x86-64 and AArch64 entry points do).
 *
 * Returns CLGC_OK, or CLGC_EINVAL for a NULL closure (nothing is done).
 * Freeing a closure twice is undefined, as free() is. Any thread. */
CLGC_EXTERN int clgc_closure_free(clgc_closure_t *closure);

/* ------------------------------------------------------------------------
 * Generic calls */

/* One argument: its ctype and its value, in the member of that ctype. */
typedef struct clgc_arg {
    clgc_ctype_t ctype;
    clgc_value_t value;
} clgc_arg_t;

/* Call command's clgc_<name> wrapper (command->wrapper) with nargs
 * arguments, through libffi, and store its result in *result, in the
 * member of command->result_ctype (i32 for a cl_int, p for an object or a
 * pointer) with the rest of the union zeroed; a command with a void
 * result leaves *result untouched. The OpenCL outcome is that result (a
 * cl_int error code, or *errcode_ret): clgc_command_call() reports only
 * whether the call was made.
 *
 * The arguments must match the command's parameters one to one: nargs ==
 * command->nparams and args[i].ctype == command->params[i].ctype. A
 * callback parameter (CLGC_CTYPE_FUNCTION) is passed to the wrapper
 * unchanged, NULL included; a closure's code is a valid callback.
 *
 * Returns CLGC_OK once the wrapper has been called; without calling
 * anything, CLGC_EINVAL if command or result is NULL, args is NULL while
 * nargs > 0, or command is not a command clgc can call (NULL wrapper, more
 * than CLGC_CLOSURE_MAX_ARGS parameters, an invalid ctype); CLGC_EARITY if
 * nargs is not command->nparams; CLGC_ETYPE if some argument's ctype is not
 * its parameter's (which one is not reported: compare them with
 * command->params to find it).
 *
 * The calling thread is one a wrapper may be called on (see
 * clgc/runtime.h): the wrapper makes the call in a safe region as usual.
 * command is one of clgc_command_at()'s, or a struct the caller filled
 * the same way. No call allocates, except that the first call of a
 * registry command in the process prepares libffi's descriptions of all
 * of them, in one allocation kept for the life of the process (if it
 * fails, each call prepares its own on the stack). Any thread. */
CLGC_EXTERN int clgc_command_call(const clgc_command_t *command, unsigned nargs,
                                  const clgc_arg_t *args, clgc_value_t *result);

/* clgc_command_call() on the command called name ("clFinish"), found with
 * clgc_command_find(), with the same rules for threads and arguments.
 * Returns its codes, or CLGC_EINVAL for a NULL name, or CLGC_ENOCOMMAND
 * if no command has that name (nothing is called either way). */
CLGC_EXTERN int clgc_command_call_by_name(const char *name, unsigned nargs,
                                          const clgc_arg_t *args,
                                          clgc_value_t *result);

/* How many bytes command may read or write through its pointer parameter
 * i, given the call's arguments (args: its nparams arguments, as
 * clgc_command_call takes them): the parameter's count_param argument
 * times its elem_size, or one element (clgc_param_t in clgc/commands.h),
 * saturated at INT64_MAX. -1 where it cannot be known (the parameter's
 * unknown says why), where i is no pointer to data, or for a count whose
 * argument is negative or of a ctype that is no integer. A binding checks
 * the memory it passes against it before the call: what the two bindings
 * both did before clgc said it. Any thread; no call is made. */
CLGC_EXTERN int64_t clgc_command_reach(const clgc_command_t *command,
                                       unsigned i, const clgc_arg_t *args);

/* How long a command may use the memory that its pointer parameter i
 * points to, by its arguments: what a binding must keep alive (a
 * collected string or array under a command still writing into it is
 * freed memory written).
 *
 * - CLGC_KEEP_CALL: only during the call (sizes, wait lists, a fill's
 *   pattern, which OpenCL copies, a blocking transfer's host memory);
 * - CLGC_KEEP_COMMAND: until the enqueued command completes (its event):
 *   the host memory of a clEnqueue* transfer (ptr, dst_ptr, src_ptr)
 *   whose blocking argument is CL_FALSE, or that has none;
 * - CLGC_KEEP_OBJECT: until OpenCL destroys the memory object the call
 *   makes (its destructor callback): the host_ptr of a clCreateBuffer* or
 *   clCreateImage* whose flags have CL_MEM_USE_HOST_PTR.
 *
 * CLGC_KEEP_CALL too for a parameter that is no pointer to data, and for
 * a NULL command or an i out of range. Any thread; no call is made. */
typedef enum clgc_keep {
    CLGC_KEEP_CALL,
    CLGC_KEEP_COMMAND,
    CLGC_KEEP_OBJECT
} clgc_keep_t;

CLGC_EXTERN clgc_keep_t clgc_command_keep(const clgc_command_t *command,
                                          unsigned i, const clgc_arg_t *args);

/* The index of command's "cl_event *event" parameter, where an enqueued
 * command gives back its event: the event a binding passes, one of its
 * own where the caller passes none, to keep memory until the command
 * completes (CLGC_KEEP_COMMAND). -1 for a command without one, and for
 * NULL. Any thread; no call is made. */
CLGC_EXTERN int clgc_command_event(const clgc_command_t *command);

CLGC_END_DECLS

#endif /* CLGC_FFI_H */
