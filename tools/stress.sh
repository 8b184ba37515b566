#!/usr/bin/env bash
# tools/stress.sh [ROUNDS] [JOBS]: run `make check` in the plain build
# (_build/plain, which `./run test` makes) ROUNDS times (default 5), each
# with JOBS tests at once (default 4) while a CPU hog of its own keeps
# every core busy: the load of a shared two-core CI machine, and more.
# A test that passes alone but fails here (a build that fails when
# others build, a wait that assumed a quiet machine) is a flake to mend.
#
# Prints one line per round, with the failing tests' names, and exits 0
# only when every round passed. Each failing round's test-suite.log is
# kept as _build/plain/stress-N.log.
#
# tools/stress.sh --run-test [HOGS]: the whole of `./run test`, every
# stage, in a fresh clone of HEAD beside this tree (../clgc-stress, so
# that ../shared is beside it as in CI), while HOGS CPU hogs (default 2)
# run: what CI does on a busy machine. Its output goes to
# ../clgc-stress.log; prints the stage times and the sums, and exits with
# `./run test`'s status.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)

hogs=()
stop_hogs() {
    ((${#hogs[@]})) && kill "${hogs[@]}" 2>/dev/null
    hogs=()
}
trap stop_hogs EXIT
start_hogs() {
    for ((c = 0; c < $1; c++)); do
        yes >/dev/null &
        hogs+=($!)
    done
}

if [[ "${1:-}" == --run-test ]]; then
    clone=$(dirname "$top")/clgc-stress
    rm -rf "$clone"
    git clone -q "$top" "$clone" || exit 2
    start_hogs "${2:-2}"
    rc=0
    (cd "$clone" && CI=true ./run test) >"$clone.log" 2>&1 || rc=$?
    stop_hogs
    sed -n '/^== stage times/,$p' "$clone.log"
    echo "stress: ./run test beside ${2:-2} CPU hogs exited $rc ($clone.log)"
    exit "$rc"
fi

rounds=${1:-5}
jobs=${2:-4}
build=$top/_build/plain
if [[ ! -f "$build/Makefile" ]]; then
    echo "stress: no $build/Makefile; run ./run test (or configure there) first" >&2
    exit 2
fi
make -C "$build" -j"$(nproc)" >/dev/null || exit 2

failed=0
for ((i = 1; i <= rounds; i++)); do
    start_hogs "$(nproc)"
    start=$SECONDS
    if make -C "$build" -j"$jobs" check >"$build/stress.out" 2>&1; then
        echo "round $i of $rounds: passed ($((SECONDS - start)) s)"
    else
        failed=$((failed + 1))
        cp "$build/test-suite.log" "$build/stress-$i.log" 2>/dev/null
        echo "round $i of $rounds: FAILED ($((SECONDS - start)) s):" \
            "$(grep -E '^(FAIL|ERROR):' "$build/stress.out" | tr '\n' ' ')"
    fi
    stop_hogs
done
echo "stress: $((rounds - failed)) of $rounds rounds passed"
((failed == 0))
