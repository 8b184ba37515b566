/* clgc-demo: what a managed runtime gets from calling OpenCL through clgc.
 *
 *   clgc-demo [--device N|P:D] [--kernel-ms MS]
 *             [--adapter none|boehm|safepoint|all] [--json]
 *
 * For each runtime, in a child process of its own (a runtime is installed
 * once per process; scenario.c), a thread builds a program and runs a long
 * kernel, once through clgc and once with the raw OpenCL calls, while the
 * runtime's other threads allocate, collect and tick. This file reads the
 * options, runs the children before it makes any OpenCL call itself, and
 * prints their results side by side, or with --json one JSON object a
 * line. Progress goes to stderr. */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clgc.h"
#include "demo.h"

/* What each runtime's scenario shows, for the text output. */
static const char *const about[] = {
    "No runtime (clgc's default): nothing collects, so nothing waits for\n"
    "the OpenCL thread either way. Only the waits differ: how they finish,\n"
    "and how long they take.",
    "Boehm GC (bdwgc) stops threads with a signal, even inside a raw OpenCL\n"
    "call, so collections complete either way; through clgc the OpenCL\n"
    "thread is inside GC_do_blocking, where no collection stops it.",
    "A safepoint VM (tests/refvm.c): its collector waits until every thread\n"
    "is at a safepoint or in a safe region. A thread in a raw OpenCL call is\n"
    "neither, so collections, and every thread that reaches a safepoint,\n"
    "wait for OpenCL; through clgc the thread is in a safe region."};

static const char *const path_name[] = {"none", "poll", "callback", "blocking",
                                        "backoff"};
static const char *const wait_name[] = {"raw", "clgc", "queue", "seed"};
static const char *const wait_call[] = {
    "clWaitForEvents", "clgc_wait_for_events", "clgc_event_post + poll()",
    "seed's cooperative_wait"};

static void
usage(FILE *f)
{
    fprintf(f, "usage: clgc-demo [--device N|P:D] [--kernel-ms MS] "
               "[--adapter NAME] [--json]\n"
               "\n"
               "For each runtime adapter, in a process of its own, a thread "
               "builds a program\n"
               "and runs a long kernel, through clgc and with the raw OpenCL "
               "calls, while the\n"
               "runtime's other threads allocate, collect and tick. Prints "
               "what the runtime\n"
               "got done meanwhile, side by side, and how long short waits "
               "take each way.\n"
               "\n"
               "  --device N|P:D   the Nth device of all platforms, from 0, "
               "as clinfo -l lists\n"
               "                   them, or platform P's device D (default: "
               "PoCL's CPU device)\n"
               "  --kernel-ms MS   the long kernel's length (default 400)\n"
               "  --adapter NAME   none, boehm, safepoint or all (default "
               "all)\n"
               "  --json           one JSON object a line on stdout\n"
               "  --help           this text\n"
               "\n"
               "Progress goes to stderr.\n");
}

/* A whole non-negative number, or -1. */
static long
number(const char *s, char **end)
{
    long v;

    if (*s < '0' || *s > '9')
        return -1;
    v = strtol(s, end, 10);
    return v > 1000000 ? -1 : v;
}

static int
parse_device(const char *s, struct demo_options *opt)
{
    char *end;
    long a = number(s, &end), b;

    if (a < 0)
        return -1;
    if (*end == '\0') {
        opt->device = (int)a;
        return 0;
    }
    if (*end != ':' || (b = number(end + 1, &end)) < 0 || *end != '\0')
        return -1;
    opt->platform = (int)a;
    opt->device = (int)b;
    return 0;
}

/* Run the scenario in a child; its result comes back through a pipe. */
static int
run_child(const char *runtime, const struct demo_options *opt,
          struct demo_result *r)
{
    size_t got = 0;
    ssize_t n;
    int fd[2], status;
    pid_t pid;

    if (pipe(fd) != 0)
        return 1;
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        int rc;

        close(fd[0]);
        rc = demo_scenario(runtime, opt, r);
        if (rc == 0 && write(fd[1], r, sizeof(*r)) != (ssize_t)sizeof(*r))
            rc = 1;
        exit(rc); /* exit, not _exit: leak checkers look at the child */
    }
    close(fd[1]);
    while (pid > 0 && got < sizeof(*r) &&
           (n = read(fd[0], (char *)r + got, sizeof(*r) - got)) > 0)
        got += (size_t)n;
    close(fd[0]);
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || got != sizeof(*r)) {
        fprintf(stderr, "clgc-demo: the %s scenario failed\n", runtime);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Text. */

static const char *
count(char *buf, long v)
{
    if (v < 0)
        return "-";
    snprintf(buf, 32, "%ld", v);
    return buf;
}

static void
row(const char *label, const char *clgc, const char *raw)
{
    printf("  %-36s %16s %16s\n", label, clgc, raw);
}

static void
text_runtime(int i, const struct demo_result *r, int kernel_ms)
{
    const struct demo_side *c = &r->side[DEMO_CLGC], *w = &r->side[DEMO_RAW];
    const double raw_us = r->wait_us[DEMO_WAIT_RAW];
    char a[32], b[32], label[64];

    printf("\n== %s\n%s\n\n", demo_runtimes[i], about[i]);
    row("", "through clgc", "raw OpenCL");
    snprintf(a, sizeof(a), "%.0f ms", c->build_ms);
    snprintf(b, sizeof(b), "%.0f ms", w->build_ms);
    row("build a program", a, b);
    row("  collections completed meanwhile", count(a, c->build_collections),
        count(b, w->build_collections));
    snprintf(label, sizeof(label), "run a %d ms kernel, wait for it",
             kernel_ms);
    snprintf(a, sizeof(a), "%.0f ms", c->kernel_ms);
    snprintf(b, sizeof(b), "%.0f ms", w->kernel_ms);
    row(label, a, b);
    row("  collections completed meanwhile", count(a, c->kernel_collections),
        count(b, w->kernel_collections));
    row("  ticks of the ticker meanwhile", count(a, c->ticks),
        count(b, w->ticks));
    row("  the wait finished by", path_name[c->kernel_wait], "clWaitForEvents");
    if (c->longest_ms >= 0) {
        snprintf(a, sizeof(a), "%.2f ms", c->longest_ms);
        snprintf(b, sizeof(b), "%.2f ms", w->longest_ms);
        row("longest collection, request to end", a, b);
    }
    if (c->suspensions >= 0)
        row("OpenCL thread stopped by collections", count(a, c->suspensions),
            count(b, w->suspensions));
    printf("\n  short kernel, launch + wait, median of %d:\n", DEMO_SAMPLES);
    for (int k = 0; k < DEMO_WAITS; k++) {
        printf("    %-26s %8.0f us %6.2fx", wait_call[k], r->wait_us[k],
               r->wait_us[k] / raw_us);
        if (k == DEMO_WAIT_CLGC)
            printf("   %u by poll, %u by callback, %u by backoff, %u blocking",
                   r->paths[CLGC_WAIT_PATH_POLL],
                   r->paths[CLGC_WAIT_PATH_CALLBACK],
                   r->paths[CLGC_WAIT_PATH_BACKOFF],
                   r->paths[CLGC_WAIT_PATH_BLOCKING]);
        if (k == DEMO_WAIT_QUEUE)
            printf("   %d through the queue's fd", DEMO_SAMPLES);
        printf("\n");
    }
}

/* ------------------------------------------------------------------------
 * JSON: one object a line; -1 counts are null. */

static void
json_string(const char *key, const char *s)
{
    printf(",\"%s\":\"", key);
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void
json_count(const char *key, long v)
{
    if (v < 0)
        printf(",\"%s\":null", key);
    else
        printf(",\"%s\":%ld", key, v);
}

static void
json_ms(const char *key, double v)
{
    if (v < 0)
        printf(",\"%s\":null", key);
    else
        printf(",\"%s\":%.3f", key, v);
}

static void
json_runtime(const char *name, const struct demo_result *r)
{
    for (int s = 0; s < DEMO_SIDES; s++) {
        const struct demo_side *d = &r->side[s];

        printf("{\"type\":\"side\"");
        json_string("adapter", name);
        json_string("side", s == DEMO_RAW ? "raw" : "clgc");
        json_ms("build_ms", d->build_ms);
        json_count("build_collections", d->build_collections);
        json_ms("kernel_ms", d->kernel_ms);
        json_count("kernel_collections", d->kernel_collections);
        json_count("ticks", d->ticks);
        json_ms("longest_collection_ms", d->longest_ms);
        json_count("suspensions", d->suspensions);
        json_string("wait", s == DEMO_RAW ? "raw" : path_name[d->kernel_wait]);
        printf("}\n");
    }
    for (int k = 0; k < DEMO_WAITS; k++) {
        printf("{\"type\":\"wait\"");
        json_string("adapter", name);
        json_string("wait", wait_name[k]);
        json_count("waits", DEMO_SAMPLES);
        printf(",\"median_us\":%.1f,\"vs_raw\":%.3f", r->wait_us[k],
               r->wait_us[k] / r->wait_us[DEMO_WAIT_RAW]);
        if (k == DEMO_WAIT_CLGC)
            printf(",\"poll\":%u,\"callback\":%u,\"backoff\":%u,"
                   "\"blocking\":%u",
                   r->paths[CLGC_WAIT_PATH_POLL],
                   r->paths[CLGC_WAIT_PATH_CALLBACK],
                   r->paths[CLGC_WAIT_PATH_BACKOFF],
                   r->paths[CLGC_WAIT_PATH_BLOCKING]);
        printf("}\n");
    }
}

static void
header(int json, const struct demo_result *r, int kernel_ms)
{
    if (json) {
        printf("{\"type\":\"device\"");
        json_string("platform", r->platform);
        json_string("device", r->device);
        printf(",\"kernel_ms\":%d,\"spin_trips\":%ld}\n", kernel_ms, r->spin);
    } else {
        printf("clgc-demo %s: %s (%s), a %d ms kernel\n", clgc_version(),
               r->device, r->platform, kernel_ms);
    }
}

static void
skip(int json, const char *name, const char *reason)
{
    if (json) {
        printf("{\"type\":\"skip\"");
        json_string("adapter", name);
        json_string("reason", reason);
        printf("}\n");
    } else {
        printf("\n== %s: skipped, %s\n", name, reason);
    }
}

int
main(int argc, char **argv)
{
    struct demo_options opt = {-1, -1, 400};
    struct demo_result r;
    const char *adapter = "all";
    int json = 0, known = 0, failed = 0, headed = 0;

    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;

        if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--device") == 0 && next != NULL &&
                   parse_device(next, &opt) == 0) {
            i++;
        } else if (strcmp(argv[i], "--kernel-ms") == 0 && next != NULL &&
                   (opt.kernel_ms = (int)number(next, &end)) > 0 &&
                   *end == '\0') {
            i++;
        } else if (strcmp(argv[i], "--adapter") == 0 && next != NULL) {
            adapter = argv[++i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    known = strcmp(adapter, "all") == 0;
    for (int k = 0; k < demo_nruntimes; k++)
        known |= strcmp(adapter, demo_runtimes[k]) == 0;
    if (!known || opt.kernel_ms > 60000) {
        usage(stderr);
        return 2;
    }

    for (int k = 0; k < demo_nruntimes; k++) {
        const char *name = demo_runtimes[k], *missing = NULL;

        if (strcmp(adapter, "all") != 0 && strcmp(adapter, name) != 0)
            continue;
#ifndef HAVE_BDWGC
        if (strcmp(name, "boehm") == 0)
            missing = "clgc was configured without bdwgc (libgc-dev)";
#endif
        if (missing != NULL) {
            skip(json, name, missing);
            continue;
        }
        if (run_child(name, &opt, &r) != 0) {
            failed = 1;
            continue;
        }
        if (!headed++)
            header(json, &r, opt.kernel_ms);
        if (json)
            json_runtime(name, &r);
        else
            text_runtime(k, &r, opt.kernel_ms);
        fflush(stdout);
    }
    return failed;
}
