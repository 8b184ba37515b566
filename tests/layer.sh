#!/bin/sh
# libclgc-layer under unmodified programs (tests/layerprog.c, clinfo),
# through the real ICD loader. Run in the build tree (`make check` does,
# with OCL_ICD_VENDORS naming the stub and PoCL).
set -eu
layer=$PWD/.libs/libclgc-layer.so
prog=./tests/layerprog
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# fail, same and $status.
. "$(dirname "$0")/testlib.sh"

# Each call reaches the stub once, inside exactly one region, with the
# layer (the plain waits: the cooperative ones ask the stub's events for
# their status); without it the program sees the same results.
OPENCL_LAYERS=$layer CLGC_LAYER_WAIT=plain $prog stub 1 >"$tmp/with" ||
    fail "layerprog with the layer: $(cat "$tmp/with")"
$prog stub -1 >"$tmp/without" ||
    fail "layerprog without the layer: $(cat "$tmp/without")"
same "results differ with the layer" "$tmp/without" "$tmp/with"

# A program that installs its own runtime keeps it: each direct call
# comes in one of its regions, with or without CLGC_RUNTIME.
for rt in "" none boehm; do
    OPENCL_LAYERS=$layer CLGC_RUNTIME=$rt CLGC_LAYER_WAIT=plain \
        ./tests/layerown >"$tmp/own" 2>"$tmp/own.err" ||
        fail "own runtime (CLGC_RUNTIME=$rt): $(cat "$tmp/own")"
done
./tests/layerown >"$tmp/own" && fail "own runtime: regions without the layer"

# clWaitForEvents on a stub event: the cooperative wait's own calls come
# back through the loader and reach the stub at depth 1 (the wait's region,
# no second one), and they are not the plain wait's single call.
OPENCL_LAYERS=$layer $prog coop >"$tmp/coop1" ||
    fail "cooperative wait: $(cat "$tmp/coop1")"
OPENCL_LAYERS=$layer CLGC_LAYER_WAIT=plain $prog coop >"$tmp/coop0" ||
    fail "plain wait: $(cat "$tmp/coop0")"
if cmp -s "$tmp/coop0" "$tmp/coop1"; then
    fail "CLGC_LAYER_WAIT=plain changes nothing: $(cat "$tmp/coop1")"
fi

# The cooperative waits answer bad input as the driver's waits do.
OPENCL_LAYERS=$layer $prog bad >"$tmp/bad1" || fail "layerprog bad, layer"
$prog bad >"$tmp/bad0" || fail "layerprog bad"
same "bad input answered otherwise" "$tmp/bad0" "$tmp/bad1"

# Handles that are no OpenCL object, refused by the layer's entries as by
# the wrappers (the loader alone would call through them); the layer's
# own entry points refuse bad input.
OPENCL_LAYERS=$layer $prog foreign >"$tmp/foreign" ||
    fail "foreign handles: $(cat "$tmp/foreign")"
$prog init "$layer" >"$tmp/init" || fail "layer entry points: $(cat "$tmp/init")"

# A NULL entry in the driver's table is CL_INVALID_OPERATION through the
# layer (the loader alone calls address 0).
OPENCL_LAYERS=$layer $prog null-entry >"$tmp/null" ||
    fail "NULL dispatch entry: $(cat "$tmp/null")"

# clinfo prints the same with and without the layer, on the real drivers
# (the stub's answers are not what clinfo can print).
# A sanitizer build's layer cannot load into the uninstrumented clinfo
# (the sanitizer's runtime must come first in the process).
if ldd "$layer" | grep -q 'lib[at]san'; then
    echo "clinfo comparison skipped: the layer is built with a sanitizer"
elif command -v clinfo >/dev/null 2>&1; then
    mkdir "$tmp/vendors"
    for f in "$OCL_ICD_VENDORS"/*.icd; do
        case $f in */clgc-stub.icd) ;; *) cp "$f" "$tmp/vendors/" ;; esac
    done
    OCL_ICD_VENDORS=$tmp/vendors clinfo >"$tmp/clinfo0" 2>&1 ||
        fail "clinfo without the layer"
    OCL_ICD_VENDORS=$tmp/vendors OPENCL_LAYERS=$layer clinfo \
        >"$tmp/clinfo1" 2>&1 ||
        fail "clinfo with the layer"
    same "clinfo differs with the layer" "$tmp/clinfo0" "$tmp/clinfo1"
fi

# What real programs do that plain OpenCL survives (tests/layerreal.c),
# with the layer as without it, on PoCL and on Oclgrind (an OpenCL 1.2
# driver, beside the stub, whose clIcdGetPlatformIDsKHR the loader then
# calls with more room than it has): a callback that releases its own
# event (PoCL calls it inline for an event already complete; Oclgrind
# never does, so PoCL only), a wait for an event whose queue was released
# (Oclgrind frees the queue), clFinish in a forked child (PoCL's threads
# stay in the parent). Each mode ends itself with an alarm if it hangs.
real() { # NAME VENDORS PLATFORM MODE
    OCL_ICD_VENDORS=$2 ./tests/layerreal "$3" "$4" >"$tmp/$1.0" 2>&1 ||
        fail "$1 without the layer: $(cat "$tmp/$1.0")"
    OCL_ICD_VENDORS=$2 OPENCL_LAYERS=$layer ./tests/layerreal "$3" "$4" \
        >"$tmp/$1.1" 2>&1 || fail "$1 with the layer: $(cat "$tmp/$1.1")"
    same "$1 differs with the layer" "$tmp/$1.0" "$tmp/$1.1"
}
real pocl-selfrelease "$OCL_ICD_VENDORS" Portable selfrelease
real pocl-fork "$OCL_ICD_VENDORS" Portable fork
real pocl-released-queue "$OCL_ICD_VENDORS" Portable released-queue
if [ ! -f "${OCLGRIND_ICD:-}" ] || [ ! -d "${CLGC_OCLGRIND_VENDORS:-}" ]; then
    fail "Oclgrind's ICD library '${OCLGRIND_ICD:-}' is missing (Debian: oclgrind)"
else
    og=$CLGC_OCLGRIND_VENDORS
    real oclgrind-released-queue "$og" Oclgrind released-queue
    real oclgrind-fork "$og" Oclgrind fork
    # OpenCL 2.0's queue call: Oclgrind's table holds the loader's own
    # function, so the loader alone spins for ever; the layer answers.
    OCL_ICD_VENDORS=$og OPENCL_LAYERS=$layer ./tests/layerreal Oclgrind \
        queue-2.0 >"$tmp/og-queue" 2>&1 ||
        fail "Oclgrind, clCreateCommandQueueWithProperties: $(cat "$tmp/og-queue")"
fi

# A second copy of the layer says so and passes calls through (the same
# path twice is loaded once by ocl-icd): each call still in one region.
cp "$layer" "$tmp/copy.so"
OPENCL_LAYERS=$layer:$tmp/copy.so CLGC_LAYER_WAIT=plain $prog stub 1 \
    >"$tmp/twice" 2>"$tmp/twice.err" || fail "layer twice: $(cat "$tmp/twice")"
grep -q "clgc layer: loaded twice" "$tmp/twice.err" ||
    fail "layer twice: no word on stderr"

# CLGC_RUNTIME=boehm in a process without bdwgc: says so, works on.
OPENCL_LAYERS=$layer CLGC_RUNTIME=boehm CLGC_LAYER_WAIT=plain $prog stub 1 \
    >"$tmp/nogc" 2>"$tmp/nogc.err" || fail "no bdwgc: $(cat "$tmp/nogc")"
grep -q "CLGC_RUNTIME=boehm, but this process has no bdwgc" "$tmp/nogc.err" ||
    fail "no bdwgc: no word on stderr"

# CLGC_RUNTIME=guile in a process without Guile, and a runtime the layer
# does not know: each says so, and works on.
OPENCL_LAYERS=$layer CLGC_RUNTIME=guile CLGC_LAYER_WAIT=plain $prog stub 1 \
    >"$tmp/noguile" 2>"$tmp/noguile.err" ||
    fail "no Guile: $(cat "$tmp/noguile")"
grep -q "CLGC_RUNTIME=guile, but this process has no Guile" \
    "$tmp/noguile.err" || fail "no Guile: no word on stderr"
OPENCL_LAYERS=$layer CLGC_RUNTIME=lisp CLGC_LAYER_WAIT=plain $prog stub 1 \
    >"$tmp/lisp" 2>"$tmp/lisp.err" || fail "CLGC_RUNTIME=lisp: $(cat "$tmp/lisp")"
grep -q "CLGC_RUNTIME is none, boehm or guile; ignoring lisp" "$tmp/lisp.err" ||
    fail "CLGC_RUNTIME=lisp: no word on stderr"

# An unmodified bdwgc program: its OpenCL thread, blocked in
# clWaitForEvents on PoCL while another thread collects five times, is
# suspended by every collection without the layer and by none with it and
# CLGC_RUNTIME=boehm, with the cooperative wait and with the plain one.
# Its event callback, which PoCL calls on a thread of its own, runs there
# registered with bdwgc through the layer's trampoline, and unregistered
# without the layer.
if [ -x ./tests/layergc ]; then
    # Under ASan a thread of this program fails to unmap its alternate
    # signal stack at exit, with or without the layer and with no
    # collection at all (the cause is not known yet): ASan keeps none.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}use_sigaltstack=0"
    export ASAN_OPTIONS
    ./tests/layergc 5 >"$tmp/gc0" || fail "layergc without the layer"
    grep -qx "suspended 5" "$tmp/gc0" ||
        fail "without the layer: $(cat "$tmp/gc0"), not 5 suspensions"
    grep -qx "callback on a registered thread 0" "$tmp/gc0" ||
        fail "without the layer: $(cat "$tmp/gc0"), callback registered"
    for wait in clgc plain; do
        OPENCL_LAYERS=$layer CLGC_RUNTIME=boehm CLGC_LAYER_WAIT=$wait \
            ./tests/layergc 5 >"$tmp/gc1" 2>"$tmp/gc1.err" ||
            fail "layergc with the layer ($wait): $(cat "$tmp/gc1.err")"
        grep -qx "suspended 0" "$tmp/gc1" ||
            fail "with the layer ($wait): $(cat "$tmp/gc1")"
        grep -qx "callback on a registered thread 1" "$tmp/gc1" ||
            fail "with the layer ($wait): $(cat "$tmp/gc1"), callback"
        if [ -s "$tmp/gc1.err" ]; then
            fail "with the layer ($wait): $(cat "$tmp/gc1.err")"
        fi
    done
fi

exit $status
