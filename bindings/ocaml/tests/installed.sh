#!/bin/sh
# make installcheck (ocaml.am): a program built against the installed
# findlib package as a user builds one (`ocamlfind ocamlopt -thread
# -package clgc -linkpkg`) links and runs.
#
# From make: OCAMLFIND, CLGC_OCAML_DIR (where the package went),
# CLGC_LIB_DIR (libclgc), under DESTDIR when it is set (a staged install).
# The package directory is given as a user of that prefix gives it
# (OCAMLPATH), and libclgc by LIBRARY_PATH and LD_LIBRARY_PATH.
set -eu
fail() {
    echo "installed.sh: $*" >&2
    exit 1
}
pkg="${DESTDIR:-}$CLGC_OCAML_DIR"
lib="${DESTDIR:-}$CLGC_LIB_DIR"
[ -f "$pkg/clgc/META" ] || fail "no $pkg/clgc/META"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/user.ml" <<'ML'
let () =
  let n = Array.length (Clgc.platforms ()) in
  Printf.printf "linked, %d platforms\n" n
ML
OCAMLPATH="$pkg${OCAMLPATH:+:$OCAMLPATH}"
LIBRARY_PATH="$lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OCAMLPATH LIBRARY_PATH LD_LIBRARY_PATH
(cd "$tmp" && "$OCAMLFIND" ocamlopt -thread -package clgc -linkpkg user.ml -o user) ||
    fail "ocamlfind ocamlopt -thread -package clgc failed"
"$tmp/user" >"$tmp/out" || fail "the program failed"
grep -q '^linked, ' "$tmp/out" || fail "unexpected output: $(cat "$tmp/out")"
echo "installed.sh: ocamlfind ocamlopt -thread -package clgc links $pkg/clgc"
