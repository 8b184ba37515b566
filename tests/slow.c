/* The slow kernel's source (slow.h). */

#include "slow.h"

#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

int
slow_source(char *buf, size_t size, unsigned depth)
{
    static const char open[] = "R4(R4(R4(R4(R4(R4(R4(R4(";
    static const char close[] = "))))))))";
    static atomic_int builds;
    int n = (int)(depth < SLOW_MAX_DEPTH ? depth : SLOW_MAX_DEPTH);

    return snprintf(buf, size,
                    "#define S a = a * b + 1.5f; b = b * a - x[1];\n"
                    "#define R4(s) s s s s\n"
                    "__kernel void slow(__global float *x)\n"
                    "{\n"
                    "    float a = x[0], b = x[1];\n"
                    "    %.*sS%.*s\n"
                    "    x[2] = a + b + %ld.%df;\n"
                    "}\n",
                    3 * n, open, n, close, (long)getpid(),
                    atomic_fetch_add(&builds, 1));
}
