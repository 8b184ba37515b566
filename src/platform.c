/* Platforms: which platform an object belongs to, and extension functions
 * resolved per platform.
 *
 * Every ICD object starts with its vendor's dispatch table pointer
 * (cl_khr_icd), and the loader calls through it. A released object's first
 * word is whatever the allocator put there (glibc's free list, ASan's free
 * record), so a wrapper checks the object the loader will dereference
 * against the platforms' dispatch pointers first and returns the object's
 * CL_INVALID_* error instead of crashing in the loader. The check is best
 * effort: memory reused for another object of the same platform passes.
 *
 * An extension command has no loader symbol: each platform hands out its
 * own function through clGetExtensionFunctionAddressForPlatform. The
 * wrapper reads the dispatch pointer from its object argument, finds the
 * platform with the same pointer, and takes the function from a cache indexed
 * by (platform, command). No OpenCL query runs after the first call of each
 * command on each platform, and no lock is ever taken after the platforms
 * are listed: cache entries are written with the same value by whichever
 * thread gets there first. */

#include <pthread.h>
#include <string.h>

#include "gen/commands.h"
#include "internal.h"

/* dispatch[0] starts as a sentinel no object's first word can equal (the
 * table's own address), so the inline check needs no "listed yet?" test. */
struct clgc__platforms clgc__platforms = {
    .dispatch[0] = &clgc__platforms,
};
static pthread_once_t clgc__platforms_once = PTHREAD_ONCE_INIT;

/* The same sentinel until the platforms are listed (internal.h). */
_Atomic(const void *) clgc__entry_dispatch[CLGC__N_ENTRIES] = {
    [0 ... CLGC__N_ENTRIES - 1] = &clgc__platforms,
};

/* NULL: not looked up yet; &clgc__absent: the platform lacks it. */
static _Atomic(void *) clgc__cache[CLGC__MAX_PLATFORMS][CLGC__N_EXTENSION];
static char clgc__absent;

#ifdef CLGC_ASAN
/* Reading a released object's first word is the point of the check; the
 * sanitizer's quarantine keeps that memory mapped. */
__attribute__((no_sanitize_address)) const void *
clgc__dispatch_of(const void *object)
{
    return *(const void *const *)object;
}
#endif

/* Whether the dispatch table `dispatch` has entry `entry`: neither NULL
 * nor the loader's own function (internal.h). */
static int
clgc__entry_filled(const void *dispatch, unsigned entry)
{
    const char *table = dispatch;
    clgc__any_fn fn =
        *(const clgc__any_fn *)(table + clgc__entry_offsets[entry]);

    return fn != NULL && fn != clgc__entry_loader[entry];
}

/* The first platform's entries, for the wrappers' inline check. A
 * driver's table does not change once its objects exist. */
static void
clgc__list_entries(const void *dispatch)
{
    for (unsigned e = 0; e < CLGC__N_ENTRIES; e++)
        if (clgc__entry_filled(dispatch, e))
            atomic_store_explicit(&clgc__entry_dispatch[e], dispatch,
                                  memory_order_relaxed);
}

cl_int
clgc__entry_missing(const void *obj, unsigned entry, cl_int invalid)
{
    const void *dispatch = clgc__dispatch_of(obj);

    if (clgc__platform_index(dispatch) < 0)
        return invalid;
    return clgc__entry_filled(dispatch, entry) ? CL_SUCCESS
                                               : CL_INVALID_OPERATION;
}

static void
clgc__list_platforms_once(void)
{
    cl_uint n = 0;

    /* The list of platforms is fixed once the loader has loaded its ICDs;
     * an error (no ICD at all) leaves it empty. */
    if (clGetPlatformIDs(CLGC__MAX_PLATFORMS, clgc__platforms.id, &n) !=
        CL_SUCCESS)
        n = 0;
    if (n > CLGC__MAX_PLATFORMS)
        n = CLGC__MAX_PLATFORMS;
    for (cl_uint i = 0; i < n; i++)
        atomic_store_explicit(&clgc__platforms.dispatch[i],
                              clgc__dispatch_of(clgc__platforms.id[i]),
                              memory_order_relaxed);
    if (n > 0)
        clgc__list_entries(clgc__dispatch_of(clgc__platforms.id[0]));
    clgc__platforms.n = n;
    atomic_store_explicit(&clgc__platforms.listed, 1, memory_order_release);
}

void
clgc__list_platforms(void)
{
    pthread_once(&clgc__platforms_once, clgc__list_platforms_once);
}

int
clgc__platform_index(const void *dispatch)
{
    if (CLGC_UNLIKELY(!atomic_load_explicit(&clgc__platforms.listed,
                                            memory_order_acquire)))
        clgc__list_platforms();
    for (cl_uint i = 0; i < clgc__platforms.n; i++)
        if (atomic_load_explicit(&clgc__platforms.dispatch[i],
                                 memory_order_relaxed) == dispatch)
            return (int)i;
    return -1;
}

static void *
clgc__lookup(int platform, unsigned slot)
{
    _Atomic(void *) *entry = &clgc__cache[platform][slot];
    void *fn = atomic_load_explicit(entry, memory_order_acquire);

    if (CLGC_UNLIKELY(fn == NULL)) {
        fn = clGetExtensionFunctionAddressForPlatform(
            clgc__platforms.id[platform], clgc__extensions[slot].name);
        if (fn == NULL)
            fn = &clgc__absent;
        atomic_store_explicit(entry, fn, memory_order_release);
    }
    return fn == &clgc__absent ? NULL : fn;
}

/* The platform for an object that is only a hint (an extension object, or
 * none at all): the object's own platform if its first word names one,
 * else the first platform that has the function. */
static void *
clgc__lookup_any(unsigned slot, const void *object)
{
    int i =
        object != NULL ? clgc__platform_index(clgc__dispatch_of(object)) : -1;

    if (i >= 0)
        return clgc__lookup(i, slot);
    for (i = 0; i < (int)clgc__platforms.n; i++) {
        void *fn = clgc__lookup(i, slot);
        if (fn != NULL)
            return fn;
    }
    return NULL;
}

void *
clgc__extension(unsigned slot, const void *object, cl_int *err)
{
    const struct clgc__extension *x = &clgc__extensions[slot];
    void *fn;
    int i;

    clgc__list_platforms();
    if (object == NULL && x->invalid != 0) {
        *err = x->invalid;
        return NULL;
    }
    if (x->icd) {
        i = clgc__platform_index(clgc__dispatch_of(object));
        if (i < 0) {
            *err = x->invalid;
            return NULL;
        }
        fn = clgc__lookup(i, slot);
    } else {
        fn = clgc__lookup_any(slot, object);
    }
    if (fn == NULL)
        *err = CL_INVALID_OPERATION;
    return fn;
}

const void *
clgc__first_object(cl_uint n, const void *const *objects)
{
    return n > 0 && objects != NULL ? objects[0] : NULL;
}

const void *
clgc__properties_platform(const cl_context_properties *props)
{
    for (; props != NULL && props[0] != 0; props += 2)
        if (props[0] == CL_CONTEXT_PLATFORM)
            return (const void *)props[1];
    return NULL;
}
