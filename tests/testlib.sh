# tests/testlib.sh: what the shell tests share, sourced by them (layer.sh,
# harness.sh). Each failure is printed and remembered in $status, which
# the test exits with.
status=0

fail() {
    echo "FAIL: $*"
    status=1
}

# same WHAT EXPECTED GOT: the two files are the same; if not, the failure
# shows how they differ, so the log keeps the evidence.
same() {
    if ! cmp -s "$2" "$3"; then
        fail "$1 (diff -u expected got):"
        diff -u "$2" "$3" | head -n 200
    fi
}
