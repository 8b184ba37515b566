#ifndef CLGC_INTERNAL_H
#define CLGC_INTERNAL_H

/* Private to the library: the state behind clgc/runtime.h and the helpers
 * the generated wrappers call. Names are clgc__ (hidden by the linker map
 * and -fvisibility=hidden). */

#include <stdatomic.h>
#include <stddef.h>

#include "clgc.h"

#if defined(__SANITIZE_ADDRESS__)
#define CLGC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLGC_ASAN 1
#endif
#endif

/* For the few helpers on every wrapper's path: the compiler's size
 * heuristics would otherwise call them out of line from 235 wrappers. */
#define CLGC_INLINE static inline __attribute__((always_inline))

#define CLGC_LIKELY(x) __builtin_expect(!!(x), 1)
#define CLGC_UNLIKELY(x) __builtin_expect(!!(x), 0)

#ifdef CLGC_DEBUG
#include <stdio.h>
#include <stdlib.h>
#define CLGC_ASSERT(cond)                                                      \
    ((cond) ? (void)0                                                          \
            : (fprintf(stderr, "clgc: %s:%d: assertion '%s' failed\n",         \
                       __FILE__, __LINE__, #cond),                             \
               abort()))
#else
#define CLGC_ASSERT(cond) ((void)0)
#endif

/* Per-thread state. Initial-exec TLS: one %fs-relative access, no call,
 * which is what keeps a wrapper within a few ns of the raw call. `region`
 * packs the two things a crossing changes into one word, so that entering
 * is one load and one store and leaving one store:
 * depth of safe regions << 1 | whether the innermost crossing was into one. */
struct clgc__thread {
    unsigned region;
    unsigned char attached;
};
extern __thread struct clgc__thread clgc__self
    __attribute__((tls_model("initial-exec")));

#define CLGC__SAFE 1u
#define CLGC__DEPTH_ONE 2u

/* The runtime in force; NULL until installed or first used. */
extern _Atomic(const clgc_runtime_t *) clgc__rt;
const clgc_runtime_t *clgc__rt_fix(void);

/* 1 once the runtime in force is fixed and has no region hooks (the
 * default): the wrappers then take their shortest path, which only keeps
 * clgc's own per-thread count. */
extern atomic_int clgc__hookless;

CLGC_INLINE const clgc_runtime_t *
clgc__runtime(void)
{
    const clgc_runtime_t *rt =
        atomic_load_explicit(&clgc__rt, memory_order_acquire);
    return CLGC_LIKELY(rt != NULL) ? rt : clgc__rt_fix();
}

/* Count a crossing into a safe region in the calling thread's state; the
 * whole of a crossing when clgc__hookless is set. Returns what to restore
 * on leaving. */
CLGC_INLINE unsigned
clgc__enter_hookless(void)
{
    unsigned outer = clgc__self.region;

    clgc__self.region = (outer + CLGC__DEPTH_ONE) | CLGC__SAFE;
    return outer;
}

/* Run fn(arg) in a safe region of the runtime in force (which this fixes,
 * on first use): the path of every crossing but the hookless one. */
CLGC_INLINE void *
clgc__safe(clgc_fn_t fn, void *arg)
{
    const clgc_runtime_t *rt = clgc__runtime();
    unsigned outer = clgc__enter_hookless();
    void *result;

    result = rt->safe_region != NULL ? rt->safe_region(fn, arg) : fn(arg);
    clgc__self.region = outer;
    return result;
}

/* Platforms and their objects (platform.c). */

/* More platforms than any machine has; platforms past it are never used. */
#define CLGC__MAX_PLATFORMS 16

struct clgc__platforms {
    atomic_int listed; /* n, id and dispatch are set */
    cl_uint n;
    cl_platform_id id[CLGC__MAX_PLATFORMS];
    /* Atomic only so that the inline check may read dispatch[0] before
     * `listed` says it is set; it is written once. */
    _Atomic(const void *) dispatch[CLGC__MAX_PLATFORMS];
};
extern struct clgc__platforms clgc__platforms;
void clgc__list_platforms(void);

/* An object's first word: its platform's dispatch table pointer. */
#ifdef CLGC_ASAN
const void *clgc__dispatch_of(const void *object);
#else
CLGC_INLINE const void *
clgc__dispatch_of(const void *object)
{
    return *(const void *const *)object;
}
#endif

/* The index of the platform whose objects carry this dispatch pointer,
 * or -1. Lists the platforms on first use. */
int clgc__platform_index(const void *dispatch);

/* Whether a core wrapper may pass obj to the loader: NULL (the loader
 * reports it, or picks a default platform where OpenCL allows one) or an
 * object of a known platform. The first platform is checked inline: until
 * the platforms are listed its entry is a sentinel no object matches. */
CLGC_INLINE int
clgc__object_ok(const void *obj)
{
    const void *dispatch;

    if (obj == NULL)
        return 1;
    dispatch = clgc__dispatch_of(obj);
    if (CLGC_LIKELY(dispatch ==
                    atomic_load_explicit(&clgc__platforms.dispatch[0],
                                         memory_order_relaxed)))
        return 1;
    return clgc__platform_index(dispatch) >= 0;
}

/* Extension functions. */
struct clgc__extension {
    const char *name;
    cl_int invalid;    /* error for a NULL object; 0 if NULL is allowed */
    unsigned char icd; /* the object is an ICD object: unknown is an error */
};
extern const struct clgc__extension clgc__extensions[];
extern const clgc_command_t clgc__commands[];

/* The function for extension slot `slot` on the platform that `object`
 * belongs to, or NULL with *err set to the CL error to return. */
void *clgc__extension(unsigned slot, const void *object, cl_int *err);

/* The first object of an array of n (NULL if none). */
const void *clgc__first_object(cl_uint n, const void *const *objects);

/* The CL_CONTEXT_PLATFORM of a property list (NULL if absent). */
const void *clgc__properties_platform(const cl_context_properties *props);

#endif /* CLGC_INTERNAL_H */
