#!/bin/sh
# Each shared library exports exactly what its linker map lists (the maps
# are generated from gen/tables.py, where every symbol is named), each
# symbol in the version node the map puts it in: nothing private, nothing
# of libffi's or bdwgc's, and no symbol of one node in another. Run in the
# build tree (`make check` does); the maps are read from $srcdir.
set -euf
srcdir=${srcdir:-.}
status=0

# "name@@NODE" for every symbol a linker map exports. Comments go first;
# then a name before "{" opens a node, "global:" and "local:" switch what
# the names that follow are, and "}" closes the node (the name after it, up
# to ";", is the node it inherits). A pattern such as clgc_* is kept as it
# is, matches no symbol, and fails: the maps name every symbol.
map_exports() {
    awk '
        { text = text $0 "\n" }
        END {
            while ((i = index(text, "/*")) > 0) {
                rest = substr(text, i + 2)
                j = index(rest, "*/")
                text = substr(text, 1, i - 1) " " (j ? substr(rest, j + 2) : "")
            }
            gsub(/[{};:]/, " & ", text)
            n = split(text, tok, /[ \t\n]+/)
            for (k = 1; k <= n; k++) {
                t = tok[k]
                if (t == "")
                    continue
                if (tok[k + 1] == "{" && node == "") {
                    node = t; mode = ""; k++
                } else if (t == "global" || t == "local") {
                    mode = t; k++
                } else if (t == "}") {
                    node = ""; mode = "after"
                } else if (t == ";") {
                    if (mode == "after")
                        mode = ""
                } else if (mode == "global") {
                    print t "@@" node
                }
            }
        }' "$1" | LC_ALL=C sort
}

# "name@@NODE" for every symbol the library defines in its dynamic symbol
# table, the nodes' own (absolute) symbols left out: an unversioned export
# shows as its bare name, and fails.
lib_exports() {
    nm -D --defined-only "$1" | awk '$2 != "A" { print $3 }' | LC_ALL=C sort
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check LIBRARY MAP
check() {
    lib=$1
    map=$srcdir/$2
    map_exports "$map" >"$tmp/want"
    lib_exports "$lib" >"$tmp/have"
    if [ ! -s "$tmp/want" ]; then
        echo "$map lists no symbols"
        status=1
        return
    fi
    extra=$(LC_ALL=C comm -13 "$tmp/want" "$tmp/have")
    missing=$(LC_ALL=C comm -23 "$tmp/want" "$tmp/have")
    if [ -n "$extra" ]; then
        echo "$lib exports what $map does not list there:"
        printf '  %s\n' $extra
        status=1
    fi
    if [ -n "$missing" ]; then
        echo "$lib does not export what $map lists there:"
        printf '  %s\n' $missing
        status=1
    fi
    if [ -z "$extra$missing" ]; then
        echo "$lib: the $(wc -l <"$tmp/want") symbols $map lists, each in its node"
    fi
}

check .libs/libclgc.so src/clgc.map
# The Boehm adapter, where it is built.
if [ -f .libs/libclgc-boehm.so ]; then
    check .libs/libclgc-boehm.so src/clgc-boehm.map
fi
# The OpenCL layer: the two entry points of CL/cl_layer.h and nothing else.
check .libs/libclgc-layer.so src/clgc-layer.map
exit $status
