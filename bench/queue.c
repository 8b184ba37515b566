/* clgc-bench queue: completions per second through one completion queue,
 * from 4 producer threads to one draining thread (the process's main
 * thread, which polls the queue's fd and drains it), in three ways:
 *
 *   post      clgc_queue_post of a plain function
 *   deferred  an event callback deferred to the queue: each producer
 *             creates a user event, registers a callback with
 *             clgc_clSetEventCallback under clgc_callbacks_defer, sets the
 *             event complete (PoCL calls back inline) and releases it
 *   raw       the same OpenCL calls without clgc, the callback counting
 *             where PoCL runs it: what the deferred row costs on top
 *
 * No runtime is installed. Each figure is the median over the samples. */

#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "clgc.h"

#define PRODUCERS 4

enum way { POST, DEFERRED, RAW, N_WAYS };
static const char *way_name[] = {"post", "deferred", "raw"};

struct run {
    enum way way;
    long each;
    cl_context context;
    clgc_queue_t *queue;
    atomic_long done;
    atomic_int failed;
};

static void
count(void *data)
{
    atomic_fetch_add(&((struct run *)data)->done, 1);
}

static void CL_CALLBACK
count_event(cl_event event, cl_int status, void *data)
{
    (void)event;
    (void)status;
    count(data);
}

static void *
produce(void *arg)
{
    struct run *r = arg;
    cl_int err;

    if (r->way == DEFERRED)
        clgc_callbacks_defer(r->queue);
    for (long i = 0; i < r->each; i++) {
        cl_event ev;

        if (r->way == POST) {
            if (clgc_queue_post(r->queue, count, r) != CLGC_OK)
                atomic_store(&r->failed, 1);
            continue;
        }
        if (r->way == DEFERRED) {
            ev = clgc_clCreateUserEvent(r->context, &err);
            err |= clgc_clSetEventCallback(ev, CL_COMPLETE, count_event, r);
            err |= clgc_clSetUserEventStatus(ev, CL_COMPLETE);
            err |= clgc_clReleaseEvent(ev);
        } else {
            ev = clCreateUserEvent(r->context, &err);
            err |= clSetEventCallback(ev, CL_COMPLETE, count_event, r);
            err |= clSetUserEventStatus(ev, CL_COMPLETE);
            err |= clReleaseEvent(ev);
        }
        if (err != CL_SUCCESS)
            atomic_store(&r->failed, 1);
    }
    clgc_callbacks_defer(NULL);
    return NULL;
}

/* One sample: completions per second. */
static double
sample(struct run *r)
{
    struct pollfd p = {clgc_queue_fd(r->queue), POLLIN, 0};
    long total = PRODUCERS * r->each;
    pthread_t t[PRODUCERS];
    double t0;

    atomic_store(&r->done, 0);
    t0 = bench_now_ns();
    for (int i = 0; i < PRODUCERS; i++)
        if (pthread_create(&t[i], NULL, produce, r) != 0)
            exit(1);
    /* raw: the callbacks count on the producers' threads. */
    while (r->way != RAW && atomic_load(&r->done) < total &&
           !atomic_load(&r->failed)) {
        if (poll(&p, 1, 100) < 0)
            exit(1);
        clgc_queue_drain(r->queue, 0);
    }
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(t[i], NULL);
    if (atomic_load(&r->failed))
        exit(3);
    return total / ((bench_now_ns() - t0) / 1e9);
}

int
bench_queue(int argc, char **argv)
{
    int samples = 21;
    long each = 50000;
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    struct run r = {0};
    double v[N_WAYS][64], m[N_WAYS];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
            samples = atoi(argv[++i]);
        else if (strcmp(argv[i], "--each") == 0 && i + 1 < argc)
            each = atol(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: clgc-bench queue [--samples N] [--each N]\n");
            return 2;
        }
    }
    if (samples < 1 || samples > 64 || each < 1)
        return 2;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != 0)
        return 1;
    r.context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    r.each = each;
    if (err != CL_SUCCESS || clgc_queue_create(&r.queue) != CLGC_OK)
        return 1;
    for (int k = 0; k < samples; k++)
        for (int w = 0; w < N_WAYS; w++) {
            r.way = (enum way)w;
            v[w][k] = sample(&r);
        }
    printf("# completions a second, %d producers to one drainer, "
           "%ld each, median of %d samples\n",
           PRODUCERS, each, samples);
    printf("%-10s %14s %8s\n", "way", "per second", "vs raw");
    for (int w = 0; w < N_WAYS; w++)
        m[w] = bench_median(v[w], samples);
    for (int w = 0; w < N_WAYS; w++)
        printf("%-10s %14.0f %7.3fx\n", way_name[w], m[w], m[w] / m[RAW]);
    clgc_queue_close(r.queue);
    clReleaseContext(r.context);
    return 0;
}
