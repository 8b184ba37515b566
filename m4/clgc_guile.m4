# CLGC_GUILE: the Guile 3.0 binding's checks, as --with-bdwgc does it for
# the Boehm adapter: built when Guile 3.0's development files and guild are
# found (and bdwgc, which the adapter calls as Guile does), unless
# --without-guile; --with-guile makes their absence an error.
#
# Uses GUILE_PKG and GUILE_PROGS from Guile's guile-3.0.m4 (Debian:
# guile-3.0-dev). Not GUILE_FLAGS: it calls gettext's
# AC_LIB_LINKFLAGS_FROM_LIBS, which needs build-aux/config.rpath, a file
# only the gettext package has; PKG_CHECK_MODULES on the same .pc gives the
# same GUILE_CFLAGS and GUILE_LIBS (the rpath it adds is what libtool does
# for us). Sets HAVE_GUILE (conditional), GUILE_CFLAGS,
# GUILE_LIBS, GUILE, GUILD, and the install directories:
#   guilemoduledir     the Scheme module clgc.scm
#   guileobjectdir     its compiled clgc.go
#   guileextensiondir  the C extension libguile-clgc-v-0.so
# Where the prefix is Guile's own (--prefix=/usr with Debian's Guile),
# in Guile's site and extension directories as guile-3.0.pc names them
# (on Debian multiarch ones, which ${libdir}/guile/3.0 is not), where
# `guile` finds the module and its compiled .go with no load path set;
# under ${prefix} otherwise, so that `make distcheck` and other --prefix
# installs stay inside the prefix (Guile's .pc directories are absolute).
# --with-guile-site-dirs or --without-guile-site-dirs forces either.
AC_DEFUN([CLGC_GUILE], [
AC_ARG_WITH([guile],
  [AS_HELP_STRING([--with-guile], [build the Guile 3.0 binding @<:@default=if found@:>@])],
  [], [with_guile=check])
AC_ARG_WITH([guile-site-dirs],
  [AS_HELP_STRING([--with-guile-site-dirs],
    [install the Guile binding in Guile's own site and extension directories instead of under --prefix @<:@default=where the prefix is Guile's@:>@])],
  [], [with_guile_site_dirs=check])
have_guile=no
AS_IF([test "x$with_guile" != xno], [
  m4_ifdef([GUILE_PKG], [
  PKG_CHECK_EXISTS([guile-3.0], [have_guile=yes], [have_guile=no])
  AS_IF([test "x$have_guile" = xyes],
    [AC_PATH_PROGS([GUILD], [guild-3.0 guild3.0 guild], [no])
     AS_IF([test "x$GUILD" = xno], [have_guile=no])])
  AS_IF([test "x$have_bdwgc" != xyes], [have_guile=no])
  AS_IF([test "x$have_guile" = xyes], [
    GUILE_PKG([3.0])
    GUILE_PROGS([3.0])
    PKG_CHECK_MODULES([GUILE], [guile-$GUILE_EFFECTIVE_VERSION])])
  ], [have_guile=no])
  AS_IF([test "x$have_guile$with_guile" = xnoyes],
    [AC_MSG_ERROR([--with-guile: Guile 3.0, guild or bdwgc not found (Debian: guile-3.0 guile-3.0-dev libgc-dev)])])])
AS_IF([test "x$have_guile" = xyes], [
  AS_IF([test "x$with_guile_site_dirs" = xcheck], [
    clgc_prefix=$prefix
    AS_IF([test "x$clgc_prefix" = xNONE], [clgc_prefix=$ac_default_prefix])
    AS_IF([test "x$clgc_prefix" = "x`$PKG_CONFIG --variable=prefix guile-3.0`"],
      [with_guile_site_dirs=yes], [with_guile_site_dirs=no])
    AC_MSG_NOTICE([the Guile binding in Guile's own directories: $with_guile_site_dirs])])
  AS_IF([test "x$with_guile_site_dirs" = xyes], [
    guilemoduledir=`$PKG_CONFIG --variable=sitedir guile-3.0`
    guileobjectdir=`$PKG_CONFIG --variable=siteccachedir guile-3.0`
    guileextensiondir=`$PKG_CONFIG --variable=extensiondir guile-3.0`],
  [
    guilemoduledir='${datadir}/guile/site/3.0'
    guileobjectdir='${libdir}/guile/3.0/site-ccache'
    guileextensiondir='${libdir}/guile/3.0/extensions'])])
AC_SUBST([guilemoduledir])
AC_SUBST([guileobjectdir])
AC_SUBST([guileextensiondir])
# yes where those are Guile's own directories (make installcheck checks
# that guile searches them).
AC_SUBST([guile_site_dirs], [$with_guile_site_dirs])
AM_CONDITIONAL([HAVE_GUILE], [test "x$have_guile" = xyes])
])
