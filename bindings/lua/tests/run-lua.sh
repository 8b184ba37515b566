#!/bin/sh
# Run a Lua test script with the interpreter configure found ($LUA), against
# the module in the build tree: clgc.lua from the source tree, clgc.core
# from libtool's .libs, libclgc from the top build directory. A script whose
# first line is "--! lua-threads N" runs in N states on N threads of the
# test host instead; one whose first line is "--! oclgrind" runs with
# Oclgrind's ICD directory (tests/tests.am writes it) as OCL_ICD_VENDORS.
#
# CLGC_LUA_WRAPPER: a command line the interpreter runs under (valgrind ...).
# CLGC_LUA_HOST_ONLY: see below.
# CLGC_LUA_PRELOAD: libraries to preload into the interpreter only (the
# sanitizer runtimes for an ASan build: lua5.4 itself is not instrumented,
# and preloading them into make and the shell would check those too).
set -eu
script=$1
shift
# require "clgc.core" looks for clgc/core.so: libtool's .libs/core.so,
# under that name in a folder of this test's own.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/clgc"
ln -s "$CLGC_LUA_BUILDDIR/.libs/core.so" "$tmp/clgc/core.so"
LUA_PATH="$CLGC_LUA_SRCDIR/?.lua;$CLGC_LUA_SRCDIR/tests/?.lua;;"
LUA_CPATH="$tmp/?.so;;"
LD_LIBRARY_PATH="$CLGC_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LUA_PATH LUA_CPATH LD_LIBRARY_PATH
host=$(sed -n '1s/^--! lua-threads \([0-9]*\)$/\1/p' "$script")
if [ "$(sed -n 1p "$script")" = "--! oclgrind" ]; then
    if [ ! -f "${OCLGRIND_ICD:-}" ] || [ ! -d "${CLGC_OCLGRIND_VENDORS:-}" ]; then
        echo "Oclgrind's ICD library '${OCLGRIND_ICD:-}' is missing (Debian: oclgrind)" >&2
        exit 1
    fi
    OCL_ICD_VENDORS=$CLGC_OCLGRIND_VENDORS
    export OCL_ICD_VENDORS
fi
# CLGC_LUA_HOST_ONLY: run only the scripts of the (instrumented) host and
# skip the others, as the TSan build must: its runtime cannot be loaded
# into lua5.4.
if [ -z "$host" ] && [ -n "${CLGC_LUA_HOST_ONLY:-}" ]; then
    echo "SKIP: $script needs lua5.4"
    exit 77
fi
if [ -n "$host" ]; then
    # In the ASan build: LLVM (inside PoCL) gives the first thread that
    # compiles a kernel a signal stack from malloc, here a state's thread,
    # and ASan's thread exit then fails to unmap it as if it were its own.
    if [ -n "${ASAN_OPTIONS:-}" ]; then
        ASAN_OPTIONS="$ASAN_OPTIONS:use_sigaltstack=0"
        export ASAN_OPTIONS
    fi
    ${CLGC_LUA_WRAPPER:-} "$CLGC_LUA_BUILDDIR/tests/lua-threads" "$host" \
        "$script" "$@"
elif [ -n "${CLGC_LUA_PRELOAD:-}" ]; then
    # The preload reaches PoCL's linker too: add its suppressions.
    supp=$(printf '%s\n' "${LSAN_OPTIONS:-}" |
        sed -n 's/^\(.*:\)\{0,1\}suppressions=\([^:]*\).*/\2/p')
    { [ -z "$supp" ] || cat "$supp"; cat "$CLGC_LUA_SRCDIR/tests/lsan-children.supp"; } \
        >"$tmp/lsan.supp"
    if [ -n "$supp" ]; then
        LSAN_OPTIONS=$(printf '%s\n' "$LSAN_OPTIONS" |
            sed "s|^\(.*:\)\{0,1\}suppressions=[^:]*|\1suppressions=$tmp/lsan.supp|")
    else
        LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$tmp/lsan.supp"
    fi
    export LSAN_OPTIONS
    env LD_PRELOAD="$CLGC_LUA_PRELOAD" "$LUA" "$script" "$@"
else
    # CLGC_LUA_WRAPPER: a command to run the interpreter under (valgrind).
    ${CLGC_LUA_WRAPPER:-} "$LUA" "$script" "$@"
fi
