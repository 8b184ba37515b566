#ifndef CLGC_HANDLE_H
#define CLGC_HANDLE_H

/* A handle to a slot of a table whose users (OpenCL callbacks) may come
 * after the slot has been freed and taken again: the slot's index in the
 * low `bits` bits of a pointer-sized word, its generation above them, as
 * many of the generation's bits as fit. The table moves a slot's
 * generation on whenever it frees the slot, so a stale handle finds a
 * generation not its own. The wait's slots (wait.c) and the watcher's
 * (watch.c) use it. */

#include <stdint.h>

static inline uintptr_t
clgc__handle_make(uint32_t index, uint32_t gen, unsigned bits)
{
    return (uintptr_t)index | ((uintptr_t)gen << bits);
}

static inline uint32_t
clgc__handle_index(uintptr_t handle, unsigned bits)
{
    return (uint32_t)(handle & (((uintptr_t)1 << bits) - 1));
}

/* The generation's bits that handle holds. */
static inline uint32_t
clgc__handle_gen(uintptr_t handle, unsigned bits)
{
    return (uint32_t)(handle >> bits);
}

/* The bits of a slot's generation gen that a handle holds. */
static inline uint32_t
clgc__handle_gen_bits(uint32_t gen, unsigned bits)
{
    return gen & (uint32_t)(UINTPTR_MAX >> bits);
}

/* Whether handle was made for the slot's generation gen. */
static inline int
clgc__handle_is(uintptr_t handle, uint32_t gen, unsigned bits)
{
    return clgc__handle_gen(handle, bits) == clgc__handle_gen_bits(gen, bits);
}

#endif /* CLGC_HANDLE_H */
