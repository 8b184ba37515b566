/* Internal declarations of the Guile binding's C extension. Nothing here
 * is exported: the extension's only exported symbol is its init function,
 * scm_init_clgc. */
#ifndef GUILE_CLGC_H
#define GUILE_CLGC_H

#include <clgc.h>

/* Install the Guile runtime adapter (runtime.c). Called once, from the
 * extension's init function, on the thread that loads it (in Guile mode:
 * the main thread of a program that loads (clgc) before any OpenCL call).
 * Returns clgc_runtime_install's code. */
int guile_clgc_install(void);

/* Switch the safe regions on (1) or off (0) for every later crossing. */
void guile_clgc_set_regions(int on);
int guile_clgc_regions(void);

/* Around every call that may load or run LLVM (see runtime.c): note the
 * program's signal dispositions before it, and put back after it those
 * that LLVM replaced (bdwgc's restart signal always). Any thread. */
void guile_clgc_signals_note(void);
void guile_clgc_signals_restore(void);

/* The runtime's callback_failed hook (clgc.c): keeps the failure for the
 * calling thread's next wait or drain to raise. */
void guile_clgc_callback_failed(const clgc_callback_error_t *error, void *data);

#endif /* GUILE_CLGC_H */
