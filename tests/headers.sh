#!/bin/sh
# The public headers compile wherever clgc is installed: clgc.h, every
# header under include/clgc/ and clgc/dropin.h, in tests/headers.c, for
# every cell of
#   OpenCL header release  Debian 12's (the system's, 2023.02.06),
#                          ../shared/headers/v2024.10.24, v2026.05.29
#   language               C99, C11, C++11, C++17
#   beta switch            CL_ENABLE_BETA_EXTENSIONS defined or not
#   target                 CL_TARGET_OPENCL_VERSION 100 to 310
# with -Wall -Wextra -Werror -pedantic, syntax only, cells in parallel. In
# each cell every OpenCL name is redeclared with its wrapper's type (no
# signature differs from the headers' own), the drop-in header maps a name
# exactly where the wrapper is declared, the cell declares as many wrappers
# as docs/wrappers.md says, and with the newest headers, beta extensions
# and target 310 it takes the address of every wrapper that needs no
# Windows or VA-API header.
#
# The two other releases are test input beside the source tree, never part
# of it. Without them the test is skipped (77), except in CI (CI=true),
# where it fails, as ./run does for the registry. CLGC_SHARED names another
# folder holding headers/.
set -eu
srcdir=${srcdir:-.}
shared=${CLGC_SHARED:-$srcdir/../shared}
CC=${CC:-cc}
CXX=${CXX:-c++}
targets=${CLGC_TARGETS:-100 110 120 200 210 220 300 310}
newest=v2026.05.29

if test ! -d "$shared/headers/$newest/CL" ||
    test ! -d "$shared/headers/v2024.10.24/CL"; then
    if test "${CI:-}" = true; then
        echo "headers.sh: $shared/headers is missing (CI=true)" >&2
        exit 1
    fi
    echo "headers.sh: no $shared/headers beside the tree: skipped" >&2
    exit 77
fi
for tool in "$CC" "$CXX"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "headers.sh: no compiler $tool (set CC and CXX)" >&2
        exit 1
    fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every public header first in turn, then clgc.h; dropin.h comes last,
# from tests/headers.c.
includes=
for h in "$srcdir"/include/clgc/*.h; do
    name=$(basename "$h")
    test "$name" = dropin.h || includes="$includes -include clgc/$name"
done

# How many wrappers each release, beta switch and target declares (those
# that need no Windows or VA-API header), the table of docs/wrappers.md:
# a guard too strict or too lax for a release changes a number. Targets
# 100 110 120 200 210 220 300 310, in that order.
expected() {
    want=$3
    case $1-$2 in
    debian12-*) counts="143 151 167 180 188 190 194 194" ;;
    v2024.10.24-*) counts="163 171 187 202 210 212 216 216" ;;
    "$newest-off") counts="148 156 172 185 193 195 199 200" ;;
    "$newest-on") counts="166 174 190 209 217 219 223 224" ;;
    esac
    for t in 100 110 120 200 210 220 300 310; do
        count=${counts%% *}
        counts=${counts#* }
        if test "$t" = "$want"; then
            echo "$count"
            return
        fi
    done
    echo none
}

# One line per cell: release language beta target expected-count.
for set in debian12 v2024.10.24 $newest; do
    for lang in c99 c11 c++11 c++17; do
        for beta in off on; do
            for target in $targets; do
                echo "$set $lang $beta $target" \
                    "$(expected "$set" "$beta" "$target")"
            done
        done
    done
done >"$work/cells"

# Compiles one cell; its errors, if any, go to $work/<cell>.err.
cat >"$work/cell.sh" <<EOS
set -u
set=\$1 lang=\$2 beta=\$3 target=\$4 count=\$5
flags="-fsyntax-only -Wall -Wextra -Werror -pedantic"
test \$count = none || flags="\$flags -DTEST_EXPECTED=\$count"
flags="\$flags -DCL_TARGET_OPENCL_VERSION=\$target"
case \$set in
debian12) ;;
*) flags="\$flags -I$shared/headers/\$set" ;;
esac
test \$beta = on && flags="\$flags -DCL_ENABLE_BETA_EXTENSIONS"
if test \$set = $newest && test \$beta = on && test \$target = 310; then
    flags="\$flags -DTEST_EVERY_WRAPPER"
fi
case \$lang in
c*+*) cc="$CXX -x c++" ;;
*) cc="$CC -x c" ;;
esac
out="$work/\$set-\$lang-\$beta-\$target"
if ! \$cc -std=\$lang \$flags -I$srcdir/include -I$srcdir/tests \
    $includes $srcdir/tests/headers.c >"\$out.log" 2>&1; then
    { echo "\$cc -std=\$lang \$flags"; head -n 20 "\$out.log"; } >"\$out.err"
fi
EOS

start=$(date +%s)
jobs=$(nproc 2>/dev/null || echo 2)
xargs -P "$jobs" -L 1 sh "$work/cell.sh" <"$work/cells"
end=$(date +%s)

cells=$(wc -l <"$work/cells")
failed=0
for err in "$work"/*.err; do
    test -f "$err" || continue
    failed=$((failed + 1))
    echo "--- $(basename "$err" .err)"
    cat "$err"
done
echo "headers.sh: $cells cells, $failed failed, $((end - start)) s" \
    "with $jobs jobs"
test "$failed" -eq 0
