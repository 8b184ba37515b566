#ifndef CLGC_TEST_STUB_H
#define CLGC_TEST_STUB_H

/* The stub ICD: a vendor library that the real ICD loader loads (through
 * OCL_ICD_VENDORS) and that records every call it receives instead of
 * doing anything.
 *
 * It offers two platforms. "clgc stub" provides every registry command;
 * "clgc refusing stub" has its own dispatch table (so clgc keeps separate
 * caches for it) and answers every extension lookup with NULL. Every
 * object of either starts with its platform's dispatch table pointer.
 *
 * The test reaches the stub's controls by asking the stub platform for
 * STUB_PLATFORM_CONTROL with clGetPlatformInfo: the value is a pointer to
 * the struct stub_control below, shared by both platforms. */

#include <stddef.h>
#include <stdint.h>

#include <CL/cl_icd.h>

#define STUB_PLATFORM_NAME "clgc stub"
#define STUB_REFUSING_NAME "clgc refusing stub"

/* A clGetPlatformInfo name only the stub knows; the value is a
 * struct stub_control *. */
#define STUB_PLATFORM_CONTROL 0x7C6C0001

#define STUB_MAX_ARGS 16  /* more than any registry command has */
#define STUB_LOG_SIZE 4   /* calls kept after a reset; more are counted */
#define STUB_N_OBJECTS 64 /* objects per platform */

/* One call the stub received. */
struct stub_call {
    unsigned index; /* the command, in registry name order */
    unsigned nargs;
    uint64_t args[STUB_MAX_ARGS]; /* each argument's bits, zero-extended */
    int probe;                    /* the probe's answer; -1 without one */
};

/* The controls. The stub is not reentrant for the test: one thread drives
 * it, and reads these fields while no call is in progress. */
struct stub_control {
    /* Called by the stub on the calling thread for every recorded call:
     * the test installs its runtime's hook depth here. May be NULL. */
    int (*probe)(void);

    unsigned long calls;   /* recorded calls since the last reset */
    unsigned long hooked;  /* calls answered by the ICD plumbing */
    unsigned long lookups; /* extension lookups, refused ones included */
    struct stub_call log[STUB_LOG_SIZE]; /* the first calls recorded */

    /* The i-th object of a stub platform (i < STUB_N_OBJECTS): a distinct
     * handle that starts with the platform's dispatch pointer. Any type:
     * the stub never looks inside. NULL for a platform not the stub's. */
    void *(*object)(cl_platform_id platform, unsigned i);

    /* What the stub's clCreateContext and clCreateContextFromType
     * return: an object of the stub platform. */
    void *made_context;

    /* Forget every call and zero the counters (not the probe). */
    void (*reset)(void);

    /* Leave the entry at byte offset `offset` of the refusing platform's
     * dispatch table NULL, for the rest of the process, as a driver that
     * lacks a command does (PoCL 3.1 has no clSetCommandQueueProperty). */
    void (*clear_entry)(size_t offset);
};

/* The value the stub returns from command `index`: a cl_int result is its
 * low 32 bits, a pointer result all of it (a fake address, never
 * dereferenced). Distinct per command and never a CL error code. */
static inline uint64_t
stub_result_bits(unsigned index)
{
    return 0x3C000000u + index;
}

/* ------------------------------------------------------------------------
 * Between the stub's two halves: tests/gen/stub_icd.c (generated) and
 * tests/stub/stub.c. The test has no use for what follows. */

/* How the generated functions turn an argument into its bits. */
#define STUB_U32(x) ((uint64_t)(uint32_t)(x))
#define STUB_U64(x) ((uint64_t)(x))
#define STUB_PTR(x) ((uint64_t)(uintptr_t)(x))

typedef void (*stub_fn_t)(void);

struct stub_entry {
    const char *name;
    stub_fn_t fn;
};

/* Generated: the dispatch table of "clgc stub", and the extension
 * functions the lookup hands out, sorted by name. */
extern const struct _cl_icd_dispatch stub_dispatch;
extern const struct stub_entry stub_extensions[];
extern const unsigned stub_n_extensions;

/* Log a call of command `index` with its arguments' bits. */
void stub_record(unsigned index, unsigned nargs, const uint64_t *args);

/* stub_control.made_context. */
void *stub_made_context(void);

/* The hooks (gen/stubgen.py, STUB_HOOKS): return 1 with *ret set if the
 * call was plumbing the stub answers itself, 0 to record it. */
int stub_hook_clGetPlatformInfo(cl_platform_id platform,
                                cl_platform_info param_name,
                                size_t param_value_size, void *param_value,
                                size_t *param_value_size_ret, cl_int *ret);
int stub_hook_clIcdGetPlatformIDsKHR(cl_uint num_entries,
                                     cl_platform_id *platforms,
                                     cl_uint *num_platforms, cl_int *ret);
int stub_hook_clGetExtensionFunctionAddress(const char *func_name, void **ret);
int stub_hook_clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                       const char *func_name,
                                                       void **ret);

#endif /* CLGC_TEST_STUB_H */
