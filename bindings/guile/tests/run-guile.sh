#!/bin/sh
# Run one test script with the real guile against the build tree's (clgc):
# the generated module and its .go under $CLGC_GUILE_BUILDDIR/modules, the
# extension under its .libs, the tests' helper module beside this script.
#
# guile itself is not instrumented: when the extension was built with
# ASan/UBSan their runtimes are preloaded into guile (only guile: never
# into make or the shell); a TSan extension cannot be loaded by an
# uninstrumented program at all (TSan must be the process's first
# library), so the test is skipped (77).
set -e
: "${GUILE:=guile}"
ext="$CLGC_GUILE_BUILDDIR/.libs/libguile-clgc-v-0.so"
libs=$(ldd "$ext" 2>/dev/null || true)
preload=
case "$libs" in
*libtsan*)
    echo "SKIP: the extension is built with TSan, which guile cannot load"
    exit 77
    ;;
*libasan*)
    preload=$(printf '%s\n' "$libs" |
        sed -n 's/^[[:space:]]*\(libasan\|libubsan\)[^ ]* => \([^ ]*\).*/\2/p' |
        tr '\n' ' ')
    ;;
esac
GUILE_LOAD_PATH="$CLGC_GUILE_BUILDDIR/modules:$CLGC_GUILE_SRCDIR/tests${GUILE_LOAD_PATH:+:$GUILE_LOAD_PATH}"
GUILE_LOAD_COMPILED_PATH="$CLGC_GUILE_BUILDDIR/modules${GUILE_LOAD_COMPILED_PATH:+:$GUILE_LOAD_COMPILED_PATH}"
CLGC_GUILE_EXTENSION="$CLGC_GUILE_BUILDDIR/.libs/libguile-clgc-v-0"
CLGC_GUILE_GCWATCH="$CLGC_GUILE_BUILDDIR/tests/.libs/libguile-clgc-gcwatch"
GUILE_AUTO_COMPILE=0
export GUILE_LOAD_PATH GUILE_LOAD_COMPILED_PATH CLGC_GUILE_EXTENSION \
    CLGC_GUILE_GCWATCH GUILE_AUTO_COMPILE
# CLGC_GUILE_WRAPPER runs guile under another program (valgrind: see
# `run`).
# LeakSanitizer is off in guile: it never scans bdwgc's heap, so what
# Scheme objects alone refer to (Guile's own allocations first) would be
# reported as leaked. ASan's and UBSan's memory checks stay on.
if [ -n "$preload" ]; then
    exec env LD_PRELOAD="$preload${LD_PRELOAD:+ $LD_PRELOAD}" \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        $CLGC_GUILE_WRAPPER "$GUILE" --no-auto-compile -s "$1"
fi
exec $CLGC_GUILE_WRAPPER "$GUILE" --no-auto-compile -s "$1"
