#!/bin/sh
# make installcheck (guile.am): the installed (clgc) loads its installed
# .go, without compiling the module again, in a guile started as a user
# starts it (auto-compilation on, an empty cache).
#
# The installed paths come from make: CLGC_MODULE_DIR (clgc.scm),
# CLGC_OBJECT_DIR (clgc.go), CLGC_EXTENSION_DIR, CLGC_LIB_DIR (libclgc),
# CLGC_SITE_DIRS (yes when configure put them in Guile's own directories),
# under DESTDIR when it is set (a staged install). Where the directories
# are Guile's own, they must be the ones guile searches by itself; under
# another prefix, or staged, they are given to guile as a user of that
# prefix gives them (GUILE_LOAD_PATH, GUILE_LOAD_COMPILED_PATH).
set -eu
: "${GUILE:=guile}"
fail() {
    echo "installed.sh: $*" >&2
    exit 1
}
go="$DESTDIR$CLGC_OBJECT_DIR/clgc.go"
scm="$DESTDIR$CLGC_MODULE_DIR/clgc.scm"
[ -f "$scm" ] || fail "no $scm"
[ -f "$go" ] || fail "no $go"
[ "$go" -nt "$scm" ] || fail "$go is not newer than $scm: guile would ignore it"

# A user's environment, not the build tree's.
unset GUILE_LOAD_PATH GUILE_LOAD_COMPILED_PATH CLGC_GUILE_EXTENSION
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$CLGC_SITE_DIRS" = yes ]; then
    # guile searches them with no load path set.
    "$GUILE" --no-auto-compile -c "
      (unless (and (member \"$CLGC_MODULE_DIR\" %load-path)
                   (member \"$CLGC_OBJECT_DIR\" %load-compiled-path))
        (format (current-error-port) \"not searched by ~a: ~s ~s~%\"
                \"$GUILE\" %load-path %load-compiled-path)
        (exit 1))" || fail "Guile's own directories are not guile's search path"
fi
if [ -n "${DESTDIR:-}" ] || [ "$CLGC_SITE_DIRS" != yes ]; then
    GUILE_LOAD_PATH="$DESTDIR$CLGC_MODULE_DIR"
    GUILE_LOAD_COMPILED_PATH="$DESTDIR$CLGC_OBJECT_DIR"
    export GUILE_LOAD_PATH GUILE_LOAD_COMPILED_PATH
fi
if [ -n "${DESTDIR:-}" ]; then
    # The module loads the extension by its installed path.
    CLGC_GUILE_EXTENSION="$DESTDIR$CLGC_EXTENSION_DIR/libguile-clgc-v-0"
    LD_LIBRARY_PATH="$DESTDIR$CLGC_LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export CLGC_GUILE_EXTENSION LD_LIBRARY_PATH
fi
# Guile compiles a module it finds no fresh .go for into
# $XDG_CACHE_HOME/guile and says so on stderr (";;; compiling", ";;; note:
# source file ... newer than compiled").
XDG_CACHE_HOME="$tmp/cache" GUILE_AUTO_COMPILE=1 "$GUILE" -c '
  (use-modules (clgc))
  (unless (procedure? wait-for-events) (exit 1))
  (display "loaded\n")' >"$tmp/out" 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; fail "(use-modules (clgc)) failed"; }
if [ -s "$tmp/err" ] || [ -e "$tmp/cache/guile" ]; then
    cat "$tmp/err" >&2
    fail "the installed module was compiled again"
fi
grep -qx loaded "$tmp/out" || fail "unexpected output: $(cat "$tmp/out")"
echo "installed.sh: (clgc) loads $go"
