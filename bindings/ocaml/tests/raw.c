/* The contrast the tests draw: OpenCL called through a plain external
 * that keeps the runtime lock, as bindings without clgc do. */

#include <pthread.h>
#include <time.h>

#include "clgc_ml.h"

struct opener {
    cl_event gate;
    long delay_ms;
};

static void *
open_later(void *data)
{
    struct opener *o = data;
    struct timespec ts = {o->delay_ms / 1000, o->delay_ms % 1000 * 1000000L};

    nanosleep(&ts, NULL);
    clSetUserEventStatus(o->gate, CL_COMPLETE);
    return NULL;
}

/* raw_gated_wait event gate delay_ms: a C thread sets the gate after the
 * delay while this thread waits in the driver's clWaitForEvents, the lock
 * held throughout. */
value
test_raw_gated_wait(value event, value gate, value delay)
{
    struct opener o = {Handle_val(Field(gate, 0))->h, Long_val(delay)};
    cl_event ev = Handle_val(Field(event, 0))->h;
    pthread_t t;

    if (pthread_create(&t, NULL, open_later, &o) != 0)
        caml_failwith("pthread_create");
    clWaitForEvents(1, &ev);
    pthread_join(t, NULL);
    return Val_unit;
}
