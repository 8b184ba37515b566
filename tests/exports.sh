#!/bin/sh
# The shared libraries export clgc's public API and nothing else: every
# clgc_cl* wrapper of the registry and the clgc_* calls of the headers.
set -eu
lib=.libs/libclgc.so
syms=$(nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "D" || $2 == "B" { print $3 }' | sed 's/@.*//')
other=$(printf '%s\n' "$syms" | grep -v '^clgc_' || true)
internal=$(printf '%s\n' "$syms" | grep '^clgc__' || true)
wrappers=$(printf '%s\n' "$syms" | grep -c '^clgc_cl[A-Z]' || true)
status=0
if [ -n "$other$internal" ]; then
    echo "exported but not public: $other $internal"
    status=1
fi
if [ "$wrappers" -ne 235 ]; then
    echo "expected 235 clgc_cl* wrappers, the library exports $wrappers"
    status=1
fi
if ! nm -D --defined-only "$lib" | grep -q ' clgc_runtime_install@@CLGC_0$'; then
    echo "clgc_runtime_install is not in the CLGC_0 version node"
    status=1
fi
# The calls of clgc/ffi.h, which libffi's own symbols must not join.
for f in clgc_closure_create clgc_closure_free clgc_command_call \
         clgc_command_call_by_name; do
    if ! nm -D --defined-only "$lib" | grep -q " $f@@CLGC_0\$"; then
        echo "$f is not exported in the CLGC_0 version node"
        status=1
    fi
done
# The Boehm adapter, where it is built, exports its one call.
boehm=.libs/libclgc-boehm.so
if [ -f "$boehm" ]; then
    bsyms=$(nm -D --defined-only "$boehm" | awk '$2 == "T" || $2 == "D" || $2 == "B" { print $3 }' | sed 's/@.*//')
    if [ "$bsyms" != clgc_boehm_install ]; then
        echo "libclgc-boehm exports: $bsyms"
        status=1
    fi
fi
[ $status -eq 0 ] && echo "exports: $wrappers wrappers, nothing private"
exit $status
