#!/usr/bin/env bash
# tools/bundle.sh [DEST]: build a self-contained folder that runs clgc's
# tests, clgc-bench and clgc-demo on another x86-64 Linux machine that has
# OpenCL drivers but no build tools, no bdwgc, libffi or Check, and no
# package access (docs/other-machines.md says how it is used).
#
# DEST defaults to _build/clgc-bundle (ignored by git, so it can travel as
# a carried path). It holds:
#   run            the runner (tools/bundle-run.sh): ./run --help
#   bin/           clgc-bench, clgc-demo, clgc-platforms (tools/platforms.c)
#   tests/         check_clgc, check_safepoint, check_watch, check_default,
#                  check_alloc, check_boehm (when bdwgc is built)
#   lib/           libclgc, libclgc-boehm, and the libraries they link that
#                  such a machine may lack: bdwgc's libgc, libffi, Check's
#                  libsubunit (Debian's Check is static; its runtime needs
#                  only that), the stub ICD libclgcstub.so
#   lib/loader/    ocl-icd's libOpenCL.so.1, used unless the runner is told
#                  to use the machine's own loader
#   BUILD          what was built, from which commit, with which flags
#
# The build is a release one (no --enable-debug), in _build/bundle; the
# programs find their libraries through LD_LIBRARY_PATH, which the runner
# sets. Only glibc's own libraries are left to the machine: Debian 12's
# binaries need glibc 2.36 or newer there.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$top/_build/clgc-bundle}
build=$top/_build/bundle
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

say() { printf 'bundle: %s\n' "$*" >&2; }

cd "$top"
if [[ ! -x configure || configure.ac -nt configure ]]; then
    say "autoreconf"
    autoreconf -fi >/dev/null
fi
mkdir -p "$build"
if [[ ! -f "$build/Makefile" ]]; then
    bdwgc=--without-bdwgc
    pkg-config --exists 'bdw-gc >= 8.0' && bdwgc=--with-bdwgc
    say "configure (release, $bdwgc) in $build"
    (cd "$build" && "$top/configure" -q "$bdwgc")
fi
say "make"
make -C "$build" -j"$jobs" >/dev/null
# The test programs and the stub ICD, without running anything.
make -C "$build" -j"$jobs" check TESTS= >/dev/null

rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/tests" "$dest/lib/loader"

# libtool keeps the real programs in .libs/ (the files beside them are
# wrapper scripts that point into the build tree).
real() {
    local dir=$1 name=$2
    if [[ -f "$build/$dir/.libs/$name" ]]; then
        echo "$build/$dir/.libs/$name"
    else
        echo "$build/$dir/$name"
    fi
}
cp "$(real bench clgc-bench)" "$(real demo clgc-demo)" "$dest/bin/"
for t in check_clgc check_safepoint check_watch check_default check_alloc \
    check_boehm; do
    if [[ -e "$(real tests $t)" ]]; then
        cp "$(real tests $t)" "$dest/tests/"
    fi
done
# shellcheck disable=SC2046 # pkg-config's words are separate arguments
${CC:-cc} -O2 -Wall -Wextra -o "$dest/bin/clgc-platforms" tools/platforms.c \
    $(pkg-config --cflags --libs OpenCL)
cp "$build/tests/.libs/libclgcstub.so" "$dest/lib/"

# Every library the programs link, by what the dynamic linker finds here,
# except glibc's (the machine's own must be used) and the loader (kept
# apart, as a fallback).
glibc='^(linux-vdso|ld-linux|libc|libm|libpthread|libdl|librt|libresolv)\.'
for f in "$dest"/bin/* "$dest"/tests/* "$dest"/lib/*.so; do
    LD_LIBRARY_PATH="$build/.libs" ldd "$f" |
        awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
    if [[ "$name" =~ $glibc ]]; then
        continue
    elif [[ "$name" == libOpenCL.so.* ]]; then
        cp -L "$path" "$dest/lib/loader/$name"
    else
        cp -L "$path" "$dest/lib/$name"
    fi
done
for lib in "$dest"/lib/libclgc*.so.*; do
    [[ -e "$lib" ]] || { say "libclgc was not found by ldd"; exit 1; }
done
strip --strip-unneeded "$dest"/bin/* "$dest"/tests/* "$dest"/lib/*.so* \
    "$dest"/lib/loader/*
cp tools/bundle-run.sh "$dest/run"
chmod +x "$dest/run"

{
    echo "clgc bundle, built $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -srm)"
    echo "commit: $(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)"
    echo "configure: $(sed -n 's/^ *\$ .*configure //p' "$build/config.log" | head -1)"
    echo "glibc here: $(ldd --version | head -1)"
    echo "libraries:"
    (cd "$dest" && ls -1 lib/*.so* lib/loader/* | sed 's/^/  /')
} >"$dest/BUILD"
say "$(du -sh "$dest" | cut -f1) in $dest"
