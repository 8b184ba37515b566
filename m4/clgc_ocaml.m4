# CLGC_OCAML: the OCaml binding's checks, as for Lua and Guile: built
# when ocamlfind, dune and the native compiler are found with the threads
# library (Debian: ocaml-nox ocaml-findlib ocaml-dune), unless
# --without-ocaml; --with-ocaml makes their absence an error. Lwt
# (liblwt-ocaml-dev) adds the Clgc_lwt tests when found.
#
# Sets HAVE_OCAML and HAVE_OCAML_LWT (conditionals), OCAMLFIND, DUNE, and
# ocamllibdir, where make install puts the findlib package clgc: where
# ocamlfind looks by itself under the prefix (Debian: /usr/lib/ocaml for
# --prefix=/usr, /usr/local/lib/ocaml/VERSION for /usr/local), else
# ${libdir}/ocaml, which OCAMLPATH then names.
AC_DEFUN([CLGC_OCAML], [
AC_ARG_WITH([ocaml],
  [AS_HELP_STRING([--with-ocaml], [build the OCaml binding @<:@default=if found@:>@])],
  [], [with_ocaml=check])
AC_ARG_VAR([OCAMLFIND], [ocamlfind, for the OCaml binding])
AC_ARG_VAR([DUNE], [dune, which builds the OCaml binding])
have_ocaml=no
have_ocaml_lwt=no
AS_IF([test "x$with_ocaml" != xno], [
  AC_PATH_PROGS([OCAMLFIND], [ocamlfind], [no])
  AC_PATH_PROGS([DUNE], [dune], [no])
  AS_IF([test "x$OCAMLFIND" != xno && test "x$DUNE" != xno &&
         $OCAMLFIND ocamlopt -version >/dev/null 2>&1 &&
         $OCAMLFIND query threads.posix >/dev/null 2>&1],
    [have_ocaml=yes])
  AS_IF([test "x$have_ocaml$with_ocaml" = xnoyes],
    [AC_MSG_ERROR([--with-ocaml: ocamlfind, dune or ocamlopt not found (Debian: ocaml-nox ocaml-findlib ocaml-dune)])])])
AS_IF([test "x$have_ocaml" = xyes], [
  AS_IF([$OCAMLFIND query lwt.unix >/dev/null 2>&1], [have_ocaml_lwt=yes])
  clgc_prefix=$prefix
  AS_IF([test "x$clgc_prefix" = xNONE], [clgc_prefix=$ac_default_prefix])
  clgc_ocaml_version=`$OCAMLFIND ocamlopt -version`
  ocamllibdir='${libdir}/ocaml'
  for clgc_dir in `$OCAMLFIND printconf path`; do
    AS_CASE([$clgc_dir],
      ["$clgc_prefix/lib/ocaml"], [ocamllibdir='${prefix}/lib/ocaml'; break],
      ["$clgc_prefix/lib/ocaml/$clgc_ocaml_version"],
        [ocamllibdir='${prefix}/lib/ocaml/'$clgc_ocaml_version; break])
  done
  AC_MSG_NOTICE([the OCaml package clgc goes to $ocamllibdir; Lwt: $have_ocaml_lwt])])
AC_SUBST([ocamllibdir])
AM_CONDITIONAL([HAVE_OCAML], [test "x$have_ocaml" = xyes])
AM_CONDITIONAL([HAVE_OCAML_LWT], [test "x$have_ocaml_lwt" = xyes])
])
