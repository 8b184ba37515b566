/* The seed's wait (seed.h). */

#include <pthread.h>
#include <time.h>

#include "seed.h"

struct seed {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
};

static void CL_CALLBACK
seed_done(cl_event event, cl_int status, void *data)
{
    struct seed *w = data;

    (void)event;
    pthread_mutex_lock(&w->lock);
    w->done = status == CL_COMPLETE ? 1 : -1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static long
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

cl_int
seed_wait(cl_event event)
{
    struct seed w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    long until = now_ns() + 10000;
    cl_int status = CL_QUEUED;

    do {
        if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                           sizeof(status), &status, NULL) != CL_SUCCESS)
            return CL_INVALID_EVENT;
        if (status <= CL_COMPLETE)
            return status == CL_COMPLETE
                       ? CL_SUCCESS
                       : CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    } while (now_ns() < until);
    if (clSetEventCallback(event, CL_COMPLETE, seed_done, &w) != CL_SUCCESS)
        return CL_INVALID_EVENT;
    /* The callback signals with the lock held: once the wait has the lock
     * back, the callback is done with w. */
    pthread_mutex_lock(&w.lock);
    while (w.done == 0)
        pthread_cond_wait(&w.cond, &w.lock);
    pthread_mutex_unlock(&w.lock);
    return w.done == 1 ? CL_SUCCESS
                       : CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
}
