#!/bin/sh
# The ABI kept: the symbols the shared libraries export, each with its
# version node, against the list of the latest release (abi/*.symbols,
# committed at the release and never edited after). Run in the build tree
# (`make check` does; the lists are read from $srcdir).
#
# - A released symbol gone, or moved to another node, breaks the ABI:
#   allowed only with a new SONAME (CLGC_LT_VERSION in configure.ac:
#   current++, revision=0, age=0), and then the release writes its list.
# - A symbol the list lacks grows the interface: allowed in a node the
#   list does not have, with current and age raised (current++, age++).
# - Anything else (a revision++) exports what the list says.
#
# `tests/abi.sh --write` (in the build tree, srcdir set) prints the list
# of what is built now, for a release's abi/clgc-VERSION.symbols.
set -eu
srcdir=${srcdir:-.}
libs="libclgc libclgc-boehm libclgc-layer"

# "lib name@NODE" for every symbol lib exports with a version.
exports() {
    for lib in $libs; do
        so=$(ls .libs/"$lib".so.*.*.* 2>/dev/null | head -n 1)
        [ -n "$so" ] || continue
        readelf --dyn-syms -W "$so" |
            awk -v lib="$lib" '$7 != "UND" && $7 != "ABS" && $8 ~ /@/ {
                sub(/@@/, "@", $8); print lib, $8 }'
    done | LC_ALL=C sort
}

# libtool's current:revision:age of what is built, from libclgc's name:
# libclgc.so.(current - age).age.revision.
built_version() {
    so=$(ls .libs/libclgc.so.*.*.* | head -n 1)
    echo "${so##*.so.}" | awk -F. '{ print $1 + $2 ":" $3 ":" $2 }'
}

if [ "${1:-}" = --write ]; then
    echo "# The ABI of clgc $(sed -n 's/^PACKAGE_VERSION = //p' Makefile): the"
    echo "# symbols its libraries export, with their version nodes (tests/abi.sh)."
    echo "# CLGC_LT_VERSION $(built_version)"
    exports
    exit 0
fi

list=$(ls "$srcdir"/abi/clgc-*.symbols 2>/dev/null | sort -V | tail -n 1)
if [ -z "$list" ]; then
    echo "no abi/clgc-*.symbols: the first release writes one (tests/abi.sh --write)"
    exit 1
fi
released=$(sed -n 's/^# CLGC_LT_VERSION //p' "$list")
now=$(built_version)
echo "against $(basename "$list"): released $released, built $now"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -v '^#' "$list" | LC_ALL=C sort >"$tmp/released"
exports >"$tmp/now"
[ -s "$tmp/now" ] || { echo "no library built under .libs"; exit 1; }
comm -23 "$tmp/released" "$tmp/now" >"$tmp/gone"
comm -13 "$tmp/released" "$tmp/now" >"$tmp/new"
set -- $(echo "$released" | tr : ' ') $(echo "$now" | tr : ' ')
rc=$1 ra=$3 nc=$4 na=$6
status=0
if [ $((nc - na)) -ne $((rc - ra)) ]; then
    # A new SONAME: a new release's list is due.
    echo "FAIL: the SONAME changed ($((rc - ra)) to $((nc - na))) without a list:"
    echo "  write abi/clgc-$(sed -n 's/^PACKAGE_VERSION = //p' Makefile).symbols (tests/abi.sh --write)"
    exit 1
fi
if [ -s "$tmp/gone" ]; then
    echo "FAIL: released symbols gone or moved, with the same SONAME:"
    sed 's/^/  /' "$tmp/gone"
    echo "  an incompatible change: CLGC_LT_VERSION current++, revision=0, age=0"
    status=1
fi
if [ -s "$tmp/new" ]; then
    nodes=$(awk '{ sub(/.*@/, "", $2); print $2 }' "$tmp/released" | sort -u)
    while read -r lib sym; do
        node=${sym#*@}
        if echo "$nodes" | grep -qx "$node"; then
            echo "FAIL: $lib exports $sym in the released node $node:"
            echo "  new exports go in a new node (gen/tables.py, EXPORTS)"
            status=1
        fi
    done <"$tmp/new"
    if [ "$nc" -le "$rc" ] || [ "$na" -le "$ra" ]; then
        echo "FAIL: the interface grew ($(wc -l <"$tmp/new") symbols):"
        echo "  CLGC_LT_VERSION current++, revision=0, age++ ($released now $now)"
        status=1
    fi
fi
[ "$status" -eq 0 ] && echo "ok: $(wc -l <"$tmp/now") symbols, $(wc -l <"$tmp/new") new"
exit "$status"
