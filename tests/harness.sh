#!/bin/sh
# The test harness itself: a test that hangs ends as a failure that names
# it, with its process group stopped (tests/bounded.sh), and a comparison
# that fails shows what differed (tests/testlib.sh's same). The bindings'
# helpers have tests of their own (bindings/lua/tests/test-harness.lua,
# bindings/guile/tests/harness.scm).
set -eu
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/testlib.sh"

# A hang, with a child of its own that would outlive it: the bound stops
# both, exits 124 and names the command.
rc=0
CLGC_TEST_TIMEOUT=1 sh "$here/bounded.sh" \
    sh -c 'sleep 600 & echo $! >"$1"; wait' hang "$tmp/pid" \
    2>"$tmp/err" || rc=$?
[ "$rc" -eq 124 ] || fail "a hang under bounded.sh exited $rc, not 124"
grep -q "FAIL: stopped at the bound, CLGC_TEST_TIMEOUT=1 s: sh -c" \
    "$tmp/err" || fail "a hang under bounded.sh: said '$(cat "$tmp/err")'"
# (Gone, or a zombie that no one has reaped yet.)
pid=$(cat "$tmp/pid")
state=$(sed -n 's/^[0-9]* (.*) \(.\).*/\1/p' "/proc/$pid/stat" 2>/dev/null ||
    true)
case $state in
'' | Z) ;;
*)
    fail "the hung test's child outlived the bound (state $state)"
    kill "$pid"
    ;;
esac

# A test that ends keeps its status, and nothing is said.
rc=0
sh "$here/bounded.sh" sh -c 'exit 3' 2>"$tmp/err" || rc=$?
[ "$rc" -eq 3 ] || fail "exit 3 under bounded.sh became $rc"
[ ! -s "$tmp/err" ] || fail "bounded.sh said '$(cat "$tmp/err")' of exit 3"
rc=0
CLGC_TEST_TIMEOUT=soon sh "$here/bounded.sh" true 2>"$tmp/err" || rc=$?
[ "$rc" -eq 99 ] || fail "CLGC_TEST_TIMEOUT=soon: exit $rc, not 99"

# same: equal files pass silently; different ones fail with the diff.
printf 'a\nb\n' >"$tmp/x"
printf 'a\nb\n' >"$tmp/y"
printf 'a\nc\n' >"$tmp/z"
out=$(status=0; same "equal" "$tmp/x" "$tmp/y"; echo "status $status")
[ "$out" = "status 0" ] || fail "same on equal files: $out"
out=$(status=0; same "unequal" "$tmp/x" "$tmp/z"; echo "status $status")
case $out in
*"FAIL: unequal"*"-b"*"+c"*"status 1") ;;
*) fail "same on different files said: $out" ;;
esac

exit $status
