#!/bin/sh
# tests/bounded.sh COMMAND [ARGUMENT...]: run one test with a bound on its
# time, so that a test that hangs ends as a FAIL that names it instead of
# holding the whole suite. Every log compiler of `make check` starts its
# test through this script (LOG_COMPILER, LUA_LOG_COMPILER,
# SCM_LOG_COMPILER), and `run` starts its valgrind runs through it too.
#
# The bound is no timing assertion: it is set far above what any test
# takes on a loaded two-core machine under valgrind (the slowest, a whole
# Check program under the sanitizers, takes about a fifth of it), and only
# turns a hang into a failure within minutes.
#
# CLGC_TEST_TIMEOUT: the bound in seconds (default 600). The command runs
# in a process group of its own (coreutils' timeout), and the whole group
# is stopped at the bound (SIGTERM, then SIGKILL 10 s later): Check's
# forked children and the interpreters' helper processes too.
#
# The exit status is the command's; at the bound it is 124 (after
# SIGKILL, 137), which automake's driver reports as FAIL.
limit=${CLGC_TEST_TIMEOUT:-600}
case $limit in
'' | *[!0-9]*)
    echo "bounded.sh: CLGC_TEST_TIMEOUT='$limit' is not a number of seconds" >&2
    exit 99
    ;;
esac
start=$(date +%s)
rc=0
timeout -k 10 "$limit" "$@" || rc=$?
took=$(($(date +%s) - start))
if { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; } && [ "$took" -ge "$limit" ]; then
    echo "FAIL: stopped at the bound, CLGC_TEST_TIMEOUT=$limit s: $*" >&2
fi
exit "$rc"
