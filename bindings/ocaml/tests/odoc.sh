#!/bin/sh
# The binding's documentation: odoc compiles and links the interfaces
# (clgc.mli, clgc_lwt.mli) without a warning: every reference resolves,
# no comment is malformed. The standard library's and Lwt's own odoc
# files are not installed, so references into them cannot be followed:
# that warning alone is expected. Without odoc the test is skipped (77),
# except in CI (CI=true), where ./run installs it.
set -u
dir=${CLGC_OCAML_BUILDDIR:-bindings/ocaml/_dune/default}
if ! command -v odoc >/dev/null 2>&1; then
    echo "odoc is not installed (Debian: ocaml-odoc)"
    [ "${CI:-}" = true ] && exit 1
    exit 77
fi
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
for cmti in src/.clgc.objs/byte/clgc.cmti lwt/.clgc_lwt.objs/byte/clgc_lwt.cmti; do
    [ -f "$dir/$cmti" ] || continue
    odoc compile -I "$out" --package clgc "$dir/$cmti" \
        -o "$out/$(basename "$cmti" .cmti).odoc" >>"$out/log" 2>&1 || exit 1
done
[ -f "$out/clgc.odoc" ] || { echo "no clgc.cmti under $dir"; exit 1; }
for odoc in "$out"/*.odoc; do
    odoc link -I "$out" "$odoc" >>"$out/log" 2>&1 || exit 1
done
# Every warning but the one for the modules without odoc files fails.
warnings=$(grep -E 'Warning|Error' "$out/log" |
    grep -vc "Couldn't find the following modules")
cat "$out/log"
echo "odoc: $warnings warnings beside the missing standard library's"
[ "$warnings" -eq 0 ]
