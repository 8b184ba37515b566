/* The (clgc) module's C half, its entry: loading the extension installs
 * the Guile runtime and defines the procedures of every area file's table,
 * each with its docstring, exported from (clgc). A leaf: no file calls
 * it. */

#include <libguile.h>
#include <string.h>

#include "guile-clgc.h"

#define EXPORT __attribute__((visibility("default")))

static const struct guile_clgc_proc *const areas[] = {
    guile_clgc_info_procs,    guile_clgc_program_procs,
    guile_clgc_mem_procs,     guile_clgc_image_procs,
    guile_clgc_event_procs,   guile_clgc_object_procs,
    guile_clgc_generic_procs, guile_clgc_closure_procs,
    guile_clgc_runtime_procs};

/* Each procedure with its docstring (what ,describe and
 * procedure-documentation show), exported unless its name starts with
 * '%': the Scheme half's helpers. */
static void
define_area(const struct guile_clgc_proc *p)
{
    for (; p->name != NULL; p++) {
        SCM proc = scm_c_define_gsubr(p->name, p->req, p->opt, p->rest, p->fn);

        scm_set_procedure_property_x(proc,
                                     scm_from_utf8_symbol("documentation"),
                                     scm_from_utf8_string(p->doc));
        if (p->name[0] != '%')
            scm_c_export(p->name, NULL);
    }
}

EXPORT void scm_init_clgc(void);

/* The Guile runtime alone, for a Guile program that calls libOpenCL
 * through (system foreign) under libclgc-layer: CLGC_RUNTIME=guile makes
 * the layer load this extension with this init function (docs/layer.md).
 * Defines nothing; loading (clgc) later finds the runtime installed. */
EXPORT void scm_init_clgc_runtime(void);

void
scm_init_clgc_runtime(void)
{
    int err = guile_clgc_install();

    if (err != CLGC_OK && err != CLGC_EALREADY && err != CLGC_EINUSE)
        guile_clgc_raise_clgc(err, "load-extension");
}

void
scm_init_clgc(void)
{
    int err;

    guile_clgc_core_init();
    /* The extension is loaded on a Guile thread (the main thread, in a
     * program that loads (clgc) first): it installs the runtime before
     * any OpenCL call starts PoCL's threads. A runtime of another name
     * installed by the host program would not enter Guile for Scheme
     * callbacks: refuse it. */
    err = guile_clgc_install();
    if (err == CLGC_EALREADY || err == CLGC_EINUSE) {
        const char *name = clgc_runtime_current()->name;

        if (name == NULL || strcmp(name, "guile") != 0)
            scm_misc_error("load-extension",
                           "clgc already has a runtime (~A): (clgc) needs the "
                           "Guile runtime, installed before any other clgc "
                           "call",
                           scm_list_1(guile_clgc_str_or_false(name)));
    } else if (err != CLGC_OK) {
        guile_clgc_raise_clgc(err, "load-extension");
    }
    for (size_t i = 0; i < sizeof(areas) / sizeof(areas[0]); i++)
        define_area(areas[i]);
}
