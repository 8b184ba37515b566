#!/bin/sh
# docs/environment.md's claims about clgc's own variables, checked: the
# environment example under several settings. The program compares what
# clgc reports with what its environment asks for and fails on a
# difference. Runs in the build tree, as make check runs it.
set -eu
prog=./docs/examples/environment
unset CLGC_WAIT CLGC_WAIT_POLL_NS
for setting in "" CLGC_WAIT=blocking CLGC_WAIT_POLL_NS=20000 \
    CLGC_WAIT=Blocking CLGC_WAIT_POLL_NS=-5 CLGC_WAIT_POLL_NS=10us \
    CLGC_WAIT_POLL_NS=1000000001 CLGC_WAIT_POLL_NS=99999999999999999999 \
    CLGC_WAIT_POLL_NS=+5; do
    echo "== ${setting:-the defaults}"
    env $setting $prog
done
