#!/bin/sh
# tests/callgraph.sh [DIR]: the calls among libclgc's files (src/*.c and
# the generated src/gen/*.c), read from their objects in DIR and DIR's
# gen/ with nm (default: src/.libs of the build it runs in, or src/ for a
# static-only build):
# one line "caller -> callee" per pair of files, where the caller's object
# uses a symbol (a function or a variable) the callee's defines. Exits 1,
# naming the files, when the calls make a cycle: every service sits below
# the files that use it, and no file below calls a file above
# (../shared/STYLE.md). `make check` runs it, so `./run test` does in
# every build.
set -eu
dir=${1:-src/.libs}
[ -d "$dir" ] || dir=src
gen=${dir%/.libs}/gen${dir##*src}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/callgraph.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
for o in "$dir"/libclgc_la-*.o "$gen"/libclgc_la-*.o; do
    [ -f "$o" ] || continue
    n=$((n + 1))
    f=${o##*/libclgc_la-}
    f=${f%.o}
    [ "${o%/*}" = "$gen" ] && f=gen/$f
    nm "$o" | awk -v f="$f" '$2 ~ /^[TDBRC]$/ { print $3, f }' >>"$tmp/defs"
    nm -u "$o" | awk -v f="$f" '{ print $2, f }' >>"$tmp/uses"
done
if [ "$n" -eq 0 ]; then
    echo "callgraph.sh: no libclgc objects in $dir" >&2
    exit 2
fi
sort -u "$tmp/defs" -o "$tmp/defs"
sort -u "$tmp/uses" -o "$tmp/uses"
# symbol file-that-defines-it, symbol file-that-uses-it: caller callee.
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3 }' | sort -u \
    >"$tmp/edges"
sed 's/ / -> /' "$tmp/edges"
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loop"; then
    echo "callgraph.sh: the calls among libclgc's files make a cycle:" >&2
    sed -n 's/^tsort: //p' "$tmp/loop" | grep -v 'input contains a loop' >&2
    exit 1
fi
