#!/usr/bin/env bash
# The runner of a clgc bundle (tools/bundle.sh copies this file into the
# bundle as `run`). On a machine with OpenCL drivers it finds the drivers'
# ICD files, lists the platforms, and runs against one platform the test
# suites that hold on any driver, then clgc-bench wait and call and
# clgc-demo, writing a few logs into the output folder.
#
#   ./run [--platform NAME] [--out DIR] [--parts LIST] [--samples N]
#         [--budget SECONDS] [--system-loader] [--list]
#
#   --platform NAME  a substring of the platform's CL_PLATFORM_NAME, e.g.
#                    NVIDIA or "Portable Computing Language" (default: the
#                    first platform found)
#   --out DIR        where the logs go (default: $OUT if set, else ./out)
#   --parts LIST     any of tests,bench,demo, comma-separated (default
#                    all); wait: clgc-bench wait alone (bench's first),
#                    a fresh process's first waits (--learn 0: a program
#                    of short commands alone), then the learned ones;
#                    long: clgc-bench wait --long-only (a program of long
#                    commands alone)
#   --samples N      clgc-bench wait's and call's samples (default 21)
#   --budget SECONDS the time all parts share (default 300, to fit one
#                    call of a lent machine); what it leaves no time for is
#                    not run, and summary.txt says so
#   --system-loader  the machine's libOpenCL.so.1 rather than the bundle's
#                    ocl-icd (the default, which the tests were written
#                    against)
#   --list           list the platforms and stop
#
# The logs: platforms.txt (the machine, the ICD files and what each
# offers), tests.log (every test program's output), summary.txt (one line
# per test run and per program, with its exit status, or why it did not
# run), bench.txt, demo.txt. Exit status: 0 when every test run passed and
# the benchmarks and demo ran, 1 when any failed, 3 when all that ran
# passed but the budget left some out.
#
# ICD files are read from CLGC_ICD_DIRS (folders, colon-separated; default
# /etc/OpenCL/vendors, /usr/local/etc/OpenCL/vendors and OCL_ICD_VENDORS if
# it is a folder). A library an ICD file names that the dynamic linker
# cannot find is looked for in the usual driver folders (NVIDIA's
# /usr/local/nvidia/lib64 among them), and NVIDIA's libnvidia-opencl.so.1
# gets an ICD file of its own when none names it.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
platform=
out=${OUT:-$PWD/out}
parts=tests,bench,demo
samples=21
budget=300
system_loader=0
list_only=0

usage() { sed -n '8,24p' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
    case "$1" in
    --platform) platform=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --parts) parts=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --system-loader) system_loader=1; shift ;;
    --list) list_only=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "run: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done

mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
# Scratch (ICD folders, PoCL's kernel cache) stays out of the output
# folder, whose files are the run's results.
work=$(mktemp -d "${TMPDIR:-/tmp}/clgc-run.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

libpath=$here/lib
if ((!system_loader)) || ! ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1 '; then
    libpath=$libpath:$here/lib/loader
fi

driver_dirs=(/usr/local/nvidia/lib64 /usr/local/nvidia/lib
             /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib
             /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu/nvidia/current)

# find_lib NAME: the path of a library the dynamic linker does not find
# by name, or nothing. Its folder joins the library path, for the
# driver's own dependencies.
find_lib() {
    local name=$1 d
    for d in "${driver_dirs[@]}"; do
        if [[ -e "$d/$name" ]]; then
            libpath=$libpath:$d
            echo "$d/$name"
            return
        fi
    done
}

known_to_linker() {
    ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$1 "
}

# The ICD files, each copied into $work/icd with the library's path made
# absolute where the dynamic linker would not find it.
mkdir -p "$work/icd"
IFS=: read -r -a icd_dirs <<<"${CLGC_ICD_DIRS:-/etc/OpenCL/vendors:/usr/local/etc/OpenCL/vendors:${OCL_ICD_VENDORS:-}}"
n=0
have_nvidia=0
for d in "${icd_dirs[@]}"; do
    [[ -n "$d" && -d "$d" ]] || continue
    for f in "$d"/*.icd; do
        [[ -f "$f" ]] || continue
        lib=$(head -n 1 "$f" | tr -d '[:space:]')
        [[ -n "$lib" ]] || continue
        if [[ "$lib" != /* ]] && ! known_to_linker "$lib"; then
            found=$(find_lib "$lib")
            [[ -n "$found" ]] && lib=$found
        fi
        [[ "$lib" == *libnvidia-opencl* ]] && have_nvidia=1
        n=$((n + 1))
        echo "$lib" >"$work/icd/$n-$(basename "$f")"
    done
done
if ((!have_nvidia)); then
    lib=libnvidia-opencl.so.1
    known_to_linker "$lib" || lib=$(find_lib "$lib")
    if [[ -n "$lib" ]]; then
        n=$((n + 1))
        echo "$lib" >"$work/icd/$n-nvidia.icd"
    fi
fi
# Debian's oclgrind package installs its ICD library but no ICD file.
oclgrind=/usr/lib/oclgrind/liboclgrind-rt-icd.so
if [[ -f "$oclgrind" ]] && ! grep -qs liboclgrind-rt-icd "$work"/icd/*.icd; then
    n=$((n + 1))
    echo "$oclgrind" >"$work/icd/$n-oclgrind.icd"
fi
export LD_LIBRARY_PATH=$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# What each ICD file offers, one loader run each, so that a platform's
# name leads to its file.
{
    echo "machine: $(uname -srm), $(nproc) cores, $(ldd --version 2>&1 | head -1)"
    command -v nvidia-smi >/dev/null && nvidia-smi -L 2>&1 | sed 's/^/  /'
    echo "loader: $( ((system_loader)) && echo "the machine's" || echo "the bundle's ocl-icd")"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    cat "$here/BUILD" 2>/dev/null
    echo
} >"$out/platforms.txt"
chosen=
chosen_name=
for f in "$work"/icd/*.icd; do
    [[ -f "$f" ]] || continue
    mkdir -p "$work/one"
    rm -f "$work/one"/*
    cp "$f" "$work/one/"
    echo "== $(basename "$f"): $(cat "$f")" >>"$out/platforms.txt"
    OCL_ICD_VENDORS=$work/one "$here/bin/clgc-platforms" >>"$out/platforms.txt" 2>&1
    while IFS= read -r name; do
        if [[ -z "$chosen" && ( -z "$platform" || "$name" == *"$platform"* ) ]]; then
            chosen=$f
            chosen_name=$name
        fi
    done < <(OCL_ICD_VENDORS=$work/one "$here/bin/clgc-platforms" --names 2>/dev/null)
done
cat "$out/platforms.txt"
if ((list_only)); then
    exit 0
fi
if [[ -z "$chosen" ]]; then
    echo "run: no platform named '${platform:-anything}' (see $out/platforms.txt)" >&2
    exit 1
fi
echo "chosen: $chosen_name ($(cat "$chosen"))" | tee -a "$out/platforms.txt"

# The chosen platform alone (clgc-bench and clgc-demo take the first
# platform), and with the stub ICD beside it for the tests.
mkdir -p "$work/only" "$work/tests"
cp "$chosen" "$work/only/"
cp "$chosen" "$work/tests/"
echo "$here/lib/libclgcstub.so" >"$work/tests/zz-clgc-stub.icd"
export POCL_CACHE_DIR=$work/pocl-cache

status=0
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

# The budget: every program runs under timeout, for at most its own cap
# and never past the deadline; one that would get less than 10 s is not
# started.
deadline=$((SECONDS + budget))
not_run=0
# bounded CAP COMMAND...: run it; 200 if the budget left no time for it,
# 201 if the deadline (not its own cap) stopped it.
bounded() {
    local cap=$1 left=$((deadline - SECONDS)) rc=0
    shift
    if ((left < 10)); then
        not_run=$((not_run + 1))
        return 200
    fi
    ((left < cap)) || left=$cap
    timeout -k 5 "$left" "$@" || rc=$?
    if ((rc == 124 || rc == 137)) && ((left < cap)); then
        not_run=$((not_run + 1))
        return 201
    fi
    return $rc
}
# outcome RC WHAT: the summary's line for a program that ended with RC.
outcome() {
    case $1 in
    0) note "${3:-pass}    $2" ;;
    200) note "not run (no budget left) $2" ;;
    201) note "cut at the budget's end $2" ;;
    *) note "FAIL($1) $2"; status=1 ;;
    esac
}

# test PROGRAM [VAR=VALUE...]: one test program (a selection by
# CK_RUN_SUITE or CK_RUN_CASE) against the chosen platform and the stub.
run_test() {
    local prog=$1 rc totals
    shift
    [[ -x "$here/tests/$prog" ]] || { note "absent  $prog $*"; return; }
    rc=0
    : >"$work/last.log"
    bounded 300 env OCL_ICD_VENDORS="$work/tests" \
        CLGC_TEST_PLATFORM="$chosen_name" \
        CK_TIMEOUT_MULTIPLIER="${CK_TIMEOUT_MULTIPLIER:-4}" "$@" \
        "$here/tests/$prog" >"$work/last.log" 2>&1 || rc=$?
    { echo "==== $prog $*"; cat "$work/last.log"; } >>"$out/tests.log"
    totals=$(grep -E '^[0-9]+%: Checks' "$work/last.log" | tail -1)
    # The cases left out where the driver breaks their premise, or that
    # need PoCL, each named in tests.log with its reason.
    left=$(sort -u "$work/last.log" | grep -c '^not run on ' || true)
    ((left > 0)) || left=
    outcome $rc "$prog $*${totals:+ | $totals}${left:+ | $left cases not run here, see tests.log}"
}

if [[ ",$parts," == *,tests,* ]]; then
    : >"$out/tests.log"
    # Not the pocl suite (PoCL's own programs and extensions), nor ffi
    # (closures, which no driver touches, checked against PoCL's name):
    # both are about this tree's reference machine, not the driver.
    for suite in runtime commands forward threads wait notify queue callback; do
        run_test check_clgc CK_RUN_SUITE=$suite
    done
    run_test check_watch
    run_test check_safepoint
    run_test check_default CK_RUN_CASE=none
    run_test check_default CK_RUN_CASE=unbalanced
    run_test check_alloc
    run_test check_boehm
fi

benches=()
[[ ",$parts," == *,bench,* || ",$parts," == *,wait,* ]] &&
    benches+=("wait --learn 0 --samples $samples" "wait --samples $samples")
[[ ",$parts," == *,long,* ]] &&
    benches+=("wait --long-only --samples $samples")
[[ ",$parts," == *,bench,* ]] &&
    benches+=("call --samples $samples" "call --samples $samples --threads 8")
if ((${#benches[@]})); then
    : >"$out/bench.txt"
    for args in "${benches[@]}"; do
        echo "==== clgc-bench $args" >>"$out/bench.txt"
        rc=0
        # shellcheck disable=SC2086 # the words are the arguments
        bounded 300 env OCL_ICD_VENDORS="$work/only" "$here/bin/clgc-bench" $args \
            >>"$out/bench.txt" 2>&1 || rc=$?
        outcome $rc "clgc-bench $args" ran
    done
fi

if [[ ",$parts," == *,demo,* ]]; then
    rc=0
    bounded 300 env OCL_ICD_VENDORS="$work/only" "$here/bin/clgc-demo" \
        --device 0:0 >"$out/demo.txt" 2>&1 || rc=$?
    outcome $rc "clgc-demo --device 0:0" ran
fi
if ((status != 0)); then
    note "some failed on $chosen_name"
elif ((not_run > 0)); then
    note "all that ran passed on $chosen_name; $not_run not run or cut for the budget of $budget s"
    status=3
else
    note "all passed on $chosen_name"
fi
exit $status
