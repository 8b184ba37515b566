#!/bin/sh
# Run one OCaml test: the executable dune built from the test's .ml
# (under $CLGC_OCAML_BUILDDIR), with the build tree's libclgc.
# CLGC_OCAML_WRAPPER runs it under another program (valgrind: see `run`).
set -e
name=$(basename "$1" .ml)
exe="$CLGC_OCAML_BUILDDIR/$(basename "$(dirname "$1")")/$name.exe"
[ -x "$exe" ] || {
    echo "run-ocaml.sh: no $exe (make check builds it)" >&2
    exit 99
}
# A test whose first line is "(*! oclgrind *)" runs on Oclgrind and the
# stub only (tests/tests.am writes their ICD files).
if [ "$(sed -n 1p "$1")" = "(*! oclgrind *)" ]; then
    if [ ! -f "${OCLGRIND_ICD:-}" ] || [ ! -d "${CLGC_OCLGRIND_VENDORS:-}" ]; then
        echo "Oclgrind's ICD library '${OCLGRIND_ICD:-}' is missing (Debian: oclgrind)" >&2
        exit 1
    fi
    OCL_ICD_VENDORS=$CLGC_OCLGRIND_VENDORS
    export OCL_ICD_VENDORS
fi
LD_LIBRARY_PATH="$CLGC_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec $CLGC_OCAML_WRAPPER "$exe"
