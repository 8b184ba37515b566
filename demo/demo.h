#ifndef CLGC_DEMO_H
#define CLGC_DEMO_H

/* Shared by clgc-demo's two halves: demo.c (options, one child process per
 * runtime, the table) and scenario.c (what runs in a child). */

/* What the command line chose. */
struct demo_options {
    int platform, device; /* -1, -1: PoCL's CPU device; -1, N: the Nth
                             device of all platforms; P, D: platform P's
                             device D */
    int kernel_ms;        /* length of the long kernel */
};

/* The two ways the OpenCL thread makes its calls. */
enum { DEMO_CLGC, DEMO_RAW, DEMO_SIDES };

/* The short waits timed against each other. */
enum {
    DEMO_WAIT_RAW,
    DEMO_WAIT_CLGC,
    DEMO_WAIT_QUEUE,
    DEMO_WAIT_SEED, /* bench/seed.h */
    DEMO_WAITS
};

/* Short waits of each kind, after warming up. */
#define DEMO_SAMPLES 101

/* What one side saw. Counts are -1 where they do not apply: no collector
 * (no runtime), or no way to see a suspension (not bdwgc). */
struct demo_side {
    double build_ms, kernel_ms; /* the OpenCL thread's calls */
    long build_collections;     /* completed during the build */
    long kernel_collections;    /* completed during the kernel */
    long ticks;                 /* of the ticker, during the kernel */
    double longest_ms;          /* longest collection requested during
                                   the build or the kernel */
    long suspensions;           /* of the OpenCL thread, both phases */
    int kernel_wait;            /* a CLGC_WAIT_PATH_*, or -1: raw */
};

/* What one runtime's scenario measured, sent by the child to the parent. */
struct demo_result {
    char platform[128], device[128];
    long spin; /* the long kernel's trip count */
    struct demo_side side[DEMO_SIDES];
    double wait_us[DEMO_WAITS]; /* median launch + wait, short kernel */
    unsigned paths[CLGC_WAIT_PATH_BACKOFF + 1]; /* the clgc waits, by
                                                   CLGC_WAIT_PATH_* */
};

/* Runtimes: "none", "boehm", "safepoint". */
extern const char *const demo_runtimes[];
extern const int demo_nruntimes;

/* Install the runtime named and run its scenario into *out, writing
 * progress lines to stderr. Call once per process, before any other clgc
 * or OpenCL call. Returns 0, or 1 after saying what failed. */
int demo_scenario(const char *runtime, const struct demo_options *opt,
                  struct demo_result *out);

#endif /* CLGC_DEMO_H */
