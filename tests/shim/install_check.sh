#!/bin/sh
# install_check.sh BUILD_DIR: `cmake --install` of the build into a fresh
# prefix gives the command, the library, the man page reprise(1) (every
# option, subcommand and reason of --help in it, no roff warnings) and the
# documents under share/doc/reprise that messages and the page name; the
# installed command finds its installed library.
set -u
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "install_check.sh: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$prefix" >/dev/null || fail "cmake --install failed"
libdir=$(cd "$prefix" && ls -d lib lib64 lib/*-linux-gnu 2>/dev/null | while read d; do
  [ -f "$prefix/$d/libreprise.so" ] && echo "$d"; done | head -1)
[ -n "$libdir" ] || fail "no libreprise.so installed"
for f in bin/reprise include/reprise.h share/man/man1/reprise.1 share/doc/reprise/README.md \
         share/doc/reprise/stats.md share/doc/reprise/trace.md share/doc/reprise/reprise.conf; do
  [ -f "$prefix/$f" ] || fail "$f is not installed"
done
page=$prefix/share/man/man1/reprise.1
if command -v groff >/dev/null; then
  warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warn" ] || fail "groff warns about the man page: $warn"
  text=$(groff -man -Tutf8 -P-c -P-b -P-u "$page" 2>/dev/null)
else
  text=$(sed 's/\\-/-/g; s/\\e/\\/g; s/\\&//g' "$page")
fi
for flag in $("$prefix/bin/reprise" --help | sed -n 's/^  \(--*[a-z][a-z-]*\).*/\1/p'); do
  echo "$text" | grep -q -- "$flag" || fail "the man page does not name $flag"
done
for name in $("$prefix/bin/reprise" help reasons | sed -n 's/^  \([a-z_]*\)  .*/\1/p') report replay "trace info"; do
  echo "$text" | grep -q -- "$name" || fail "the man page does not name $name"
done
for section in OPTIONS COMMANDS REASONS ENVIRONMENT "EXIT STATUS"; do
  echo "$text" | grep -q "^$section" || fail "the man page has no $section section"
done
env=$(LD_PRELOAD= "$prefix/bin/reprise" -- /usr/bin/env) || fail "the installed command did not run"
echo "$env" | grep -qx "LD_PRELOAD=$(readlink -f "$prefix/$libdir/libreprise.so")" ||
  fail "the installed command does not preload the installed library"
exit 0
