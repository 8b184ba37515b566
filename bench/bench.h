#ifndef CLGC_BENCH_H
#define CLGC_BENCH_H

/* Shared by clgc-bench's subcommands. */

/* CLOCK_MONOTONIC in ns. */
double bench_now_ns(void);

/* The median of v[0..n) (sorts v). */
double bench_median(double *v, int n);

/* Run run(arg) in a child process, for measurements that install a
 * runtime (once per process): flushes the child's output, and reports
 * "clgc-bench: the 'what' run failed" unless it exits 0. Returns 0 if it
 * did, 1 if not. */
int bench_in_child(int (*run)(const void *arg), const void *arg,
                   const char *what);

/* clgc-bench gc ARGS... (bench/gc.c); argv[0] is "gc". */
int bench_gc(int argc, char **argv);

/* clgc-bench wait ARGS... (bench/wait.c); argv[0] is "wait". */
int bench_wait(int argc, char **argv);

/* clgc-bench callback ARGS... (bench/callback.c); argv[0] is
 * "callback". */
int bench_callback(int argc, char **argv);

/* clgc-bench queue ARGS... (bench/queue.c); argv[0] is "queue". */
int bench_queue(int argc, char **argv);

#endif /* CLGC_BENCH_H */
