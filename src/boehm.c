/* The Boehm GC adapter (include/clgc/boehm.h). bdwgc's own calls have the
 * shape of clgc's region hooks, so the regions need no code here; only
 * foreign threads and clgc's records do. */

#define GC_THREADS
#include <gc/gc.h>

#include "clgc/boehm.h"

static int
clgc__boehm_known(void *data)
{
    (void)data;
    return GC_thread_is_registered();
}

static int
clgc__boehm_attach(void *data)
{
    struct GC_stack_base sb;

    (void)data;
    if (GC_get_stack_base(&sb) != GC_SUCCESS)
        return CLGC_EATTACH;
    switch (GC_register_my_thread(&sb)) {
    case GC_SUCCESS:
        return CLGC_OK;
    case GC_DUPLICATE:
        return CLGC_KNOWN;
    default:
        return CLGC_EATTACH;
    }
}

static void
clgc__boehm_detach(void *data)
{
    (void)data;
    GC_unregister_my_thread();
}

/* clgc's records that hold a program's data pointer: uncollectable, so
 * that bdwgc scans them and keeps the data while OpenCL or a queue holds
 * the record. clgc allocates them with bdwgc active on a registered
 * thread, which GC_malloc_uncollectable needs (it may collect, and a
 * collection from a thread bdwgc does not know aborts). */
static void *
clgc__boehm_record_alloc(size_t size, void *data)
{
    (void)data;
    return GC_malloc_uncollectable(size);
}

/* clgc frees them on any thread, PoCL's unregistered ones and threads
 * inside GC_do_blocking included. GC_free (bdwgc 8.2, malloc.c) only takes
 * the allocator lock, puts the object on a free list and clears it; it
 * neither allocates, nor collects, nor looks the thread up, so none of
 * that matters. */
static void
clgc__boehm_record_free(void *record, void *data)
{
    (void)data;
    GC_free(record);
}

int
clgc_boehm_install(unsigned flags)
{
    const clgc_runtime_t rt = {
        .version = CLGC_RUNTIME_VERSION,
        .name = "boehm",
        .safe_region = GC_do_blocking,
        .active_region = GC_call_with_gc_active,
        .attach_thread = clgc__boehm_attach,
        .detach_thread = clgc__boehm_detach,
        .flags = flags,
        .thread_known = clgc__boehm_known,
        .record_alloc = clgc__boehm_record_alloc,
        .record_free = clgc__boehm_record_free,
    };

    GC_allow_register_threads();
    return clgc_runtime_install(&rt);
}
