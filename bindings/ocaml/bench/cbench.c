/* The C side of the OCaml benchmark (bench.ml): the same work from C, in
 * the same process, with the same runtime installed. */

#include <time.h>

#include "clgc_ml.h"

static double
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* c_launch_wait queue kernel n -> ns: one launch and clgc's wait, from C
 * through clgc. */
value
bench_c_launch_wait(value queue, value kernel, value n)
{
    cl_command_queue q = Handle_val(Field(queue, 0))->h;
    cl_kernel k = Handle_val(Field(kernel, 0))->h;
    size_t g = (size_t)Long_val(n);
    double t0 = now_ns();
    cl_event ev;

    if (clgc_clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, &ev) !=
        CL_SUCCESS)
        caml_failwith("clEnqueueNDRangeKernel");
    clgc_wait_for_events(1, &ev);
    clgc_clReleaseEvent(ev);
    return caml_copy_double(now_ns() - t0);
}

/* c_status_calls event raw count -> ns per call of clGetEventInfo's
 * status query, raw or through clgc's wrapper, from C. */
value
bench_c_status_calls(value event, value raw, value count)
{
    cl_event e = Handle_val(Field(event, 0))->h;
    long n = Long_val(count);
    cl_int s;
    double t0 = now_ns();

    for (long i = 0; i < n; i++) {
        if (Bool_val(raw))
            clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(s), &s,
                           NULL);
        else
            clgc_clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(s),
                                &s, NULL);
    }
    return caml_copy_double((now_ns() - t0) / (double)n);
}
