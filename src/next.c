/* Which OpenCL clgc's own calls go to (next.h): the loader's, until the
 * layer's table (dispatch.c) fills clgc__next and sets clgc__layered. */

#include "next.h"

struct _cl_icd_dispatch clgc__next;
atomic_int clgc__layered;
