# CLGC_LUA: the Lua 5.4 binding's checks, as --with-bdwgc does it for the
# Boehm adapter: built when Lua 5.4's headers and interpreter are found,
# unless --without-lua; --with-lua makes their absence an error.
#
# Sets HAVE_LUA (conditional), LUA_CFLAGS and LUA_LIBS (LUA_LIBS only for
# the test host: a C module never links the interpreter's library), LUA
# (the interpreter, for the tests), and the install directories from the
# .pc file, re-rooted under our ${prefix} so that `make distcheck` and
# --prefix installs stay inside the prefix:
#   luacmoddir  INSTALL_CMOD (C modules: clgc/core.so)
#   lualmoddir  INSTALL_LMOD (Lua modules: clgc.lua)
AC_DEFUN([CLGC_LUA], [
AC_REQUIRE([PKG_PROG_PKG_CONFIG])
AC_ARG_WITH([lua],
  [AS_HELP_STRING([--with-lua], [build the Lua 5.4 binding @<:@default=if found@:>@])],
  [], [with_lua=check])
AC_ARG_VAR([LUA], [the Lua 5.4 interpreter, for the binding's tests])
have_lua=no
clgc_lua_pc=
AS_IF([test "x$with_lua" != xno], [
  PKG_CHECK_MODULES([LUA], [lua5.4], [have_lua=yes; clgc_lua_pc=lua5.4],
    [PKG_CHECK_MODULES([LUA], [lua-5.4], [have_lua=yes; clgc_lua_pc=lua-5.4],
      [have_lua=no])])
  AS_IF([test "x$have_lua" = xyes], [
    AC_PATH_PROGS([LUA], [lua5.4 lua-5.4], [no])
    AS_IF([test "x$LUA" = xno], [have_lua=no])])
  AS_IF([test "x$have_lua$with_lua" = xnoyes],
    [AC_MSG_ERROR([--with-lua: Lua 5.4 headers or interpreter not found (Debian: liblua5.4-dev lua5.4)])])])
AS_IF([test "x$have_lua" = xyes], [
  luacmoddir=`$PKG_CONFIG --define-variable=prefix='${prefix}' --variable=INSTALL_CMOD $clgc_lua_pc`
  lualmoddir=`$PKG_CONFIG --define-variable=prefix='${prefix}' --variable=INSTALL_LMOD $clgc_lua_pc`
  AS_IF([test -z "$luacmoddir"], [luacmoddir='${libdir}/lua/5.4'])
  AS_IF([test -z "$lualmoddir"], [lualmoddir='${datadir}/lua/5.4'])])
AC_SUBST([luacmoddir])
AC_SUBST([lualmoddir])
AM_CONDITIONAL([HAVE_LUA], [test "x$have_lua" = xyes])
])
