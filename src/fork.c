/* Whether this process is a child forked after OpenCL was in use: a
 * service at the bottom of the library, for the waits (wait.c and the
 * layer's clFinish in dispatch.c).
 *
 * fork(2) copies only the calling thread. The driver's threads (PoCL's
 * workers, its callback thread) stay in the parent, so in the child a
 * command may never complete and a callback may never come, while the
 * driver's own waits answer whatever the driver answers there (PoCL's
 * clFinish returns at once). A cooperative wait sleeps until a callback
 * or a status that may never come; so in such a child clgc's waits are
 * the driver's own, inside a region, and return when the driver's would
 * (docs/wait.md, "In a forked child"). */

#include <pthread.h>

#include "internal.h"

atomic_int clgc__forked;

/* In the child, on the forking thread. Only a parent that listed its
 * platforms (every clgc call that checks an object does) has used OpenCL
 * through clgc; a child of one that never did starts its drivers afresh. */
static void
clgc__fork_child(void)
{
    if (atomic_load_explicit(&clgc__platforms.listed, memory_order_acquire))
        atomic_store_explicit(&clgc__forked, 1, memory_order_relaxed);
}

/* At load, so that every fork after the first OpenCL call is seen. */
__attribute__((constructor)) static void
clgc__fork_init(void)
{
    /* Without memory for the handler a child is taken for the parent: its
     * waits stay cooperative, as before this file existed. */
    (void)pthread_atfork(NULL, NULL, clgc__fork_child);
}
