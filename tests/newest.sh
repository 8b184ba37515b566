#!/bin/sh
# Builds tests/newest.c against the newest OpenCL headers
# (../shared/headers/v2026.05.29, OpenCL 3.1, beta extensions on) and the
# library in the build tree, and runs it against the system's ICD loader
# and PoCL (OCL_ICD_VENDORS from `make check`). Run in the build tree.
#
# The headers are test input beside the source tree: without them the test
# is skipped (77), except in CI (CI=true), where it fails. CLGC_SHARED names
# another folder holding headers/.
set -eu
srcdir=${srcdir:-.}
shared=${CLGC_SHARED:-$srcdir/../shared}
headers=$shared/headers/v2026.05.29
# The build's compiler and flags (AM_TESTS_ENVIRONMENT), so that the
# program matches the library: a sanitizer build's included.
CC=${CC:-cc}
CFLAGS=${CFLAGS:-}
LDFLAGS=${LDFLAGS:-}

if test ! -d "$headers/CL"; then
    if test "${CI:-}" = true; then
        echo "newest.sh: $headers is missing (CI=true)" >&2
        exit 1
    fi
    echo "newest.sh: no $headers beside the tree: skipped" >&2
    exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
libs=$(pwd)/.libs
# shellcheck disable=SC2086 # the flags are words
$CC -std=c11 $CFLAGS -Wall -Wextra -Werror -pedantic -I"$headers" \
    -DCL_TARGET_OPENCL_VERSION=310 -DCL_ENABLE_BETA_EXTENSIONS \
    -I"$srcdir/include" -I"$srcdir/tests" "$srcdir/tests/newest.c" \
    -o "$work/newest" $LDFLAGS -L"$libs" -Wl,-rpath,"$libs" -lclgc -lOpenCL
"$work/newest"
