#!/bin/sh
# Run one test script with the real guile against the build tree's (clgc):
# the generated module and its .go under $CLGC_GUILE_BUILDDIR/modules, the
# extension under its .libs, the tests' helper module beside this script.
set -e
: "${GUILE:=guile}"
GUILE_LOAD_PATH="$CLGC_GUILE_BUILDDIR/modules:$CLGC_GUILE_SRCDIR/tests${GUILE_LOAD_PATH:+:$GUILE_LOAD_PATH}"
GUILE_LOAD_COMPILED_PATH="$CLGC_GUILE_BUILDDIR/modules${GUILE_LOAD_COMPILED_PATH:+:$GUILE_LOAD_COMPILED_PATH}"
CLGC_GUILE_EXTENSION="$CLGC_GUILE_BUILDDIR/.libs/libguile-clgc-v-0"
CLGC_GUILE_GCWATCH="$CLGC_GUILE_BUILDDIR/tests/.libs/libguile-clgc-gcwatch"
GUILE_AUTO_COMPILE=0
export GUILE_LOAD_PATH GUILE_LOAD_COMPILED_PATH CLGC_GUILE_EXTENSION \
    CLGC_GUILE_GCWATCH GUILE_AUTO_COMPILE
exec "$GUILE" --no-auto-compile -s "$1"
