#!/bin/sh
# Tests of the `reprise` command, one case per run:
#   test_tool.sh REPRISE_BINARY LIBREPRISE_PATH CASE
set -u
tool=$1 lib=$2 case=$3
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "test_tool.sh $case: $*" >&2; echo "-- stdout:" >&2; cat "$out" >&2; echo "-- stderr:" >&2; cat "$err" >&2; exit 1; }
run() { "$@" >"$out" 2>"$err"; echo $?; }
# The library path the command should use, as it resolves it.
reallib=$(readlink -f "$lib")

case $case in
help)
  [ "$(run "$tool" --help)" = 0 ] || fail "--help did not exit 0"
  grep -q -- "--stats FILE" "$out" || fail "--help does not list --stats"
  grep -q -- "--driver PATH" "$out" || fail "--help does not list --driver"
  grep -q "usage: reprise" "$out" || fail "--help has no usage line" ;;
version)
  [ "$(run "$tool" --version)" = 0 ] || fail "--version did not exit 0"
  grep -q "^reprise [0-9][0-9.]*" "$out" || fail "--version printed no version" ;;
unknown-option)
  [ "$(run "$tool" --frobnicate -- /bin/true)" = 2 ] || fail "exit status is not 2"
  [ "$(wc -l <"$err")" -eq 1 ] || fail "not exactly one line on stderr"
  grep -q -- "--frobnicate" "$err" || fail "the message does not name the option" ;;
missing-value)
  [ "$(run "$tool" --stats)" = 2 ] || fail "exit status is not 2"
  [ "$(wc -l <"$err")" -eq 1 ] || fail "not exactly one line on stderr" ;;
missing-program)
  [ "$(run "$tool" --stats x --)" = 2 ] || fail "exit status is not 2"
  [ "$(wc -l <"$err")" -eq 1 ] || fail "not exactly one line on stderr" ;;
exec-failure)
  [ "$(run "$tool" -- /nonexistent/program)" = 127 ] || fail "exit status is not 127"
  grep -q "/nonexistent/program" "$err" || fail "the message does not name the program" ;;
environment)
  [ "$(LD_PRELOAD= run "$tool" --stats x.json --log debug --driver=/d/libcuda.so.1 -- /usr/bin/env)" = 0 ] ||
    fail "env did not run"
  grep -qx "REPRISE=1" "$out" || fail "REPRISE=1 not set"
  grep -qx "REPRISE_STATS=x.json" "$out" || fail "REPRISE_STATS not set"
  grep -qx "REPRISE_LOG=debug" "$out" || fail "REPRISE_LOG not set"
  grep -qx "REPRISE_DRIVER=/d/libcuda.so.1" "$out" || fail "REPRISE_DRIVER not set"
  grep -qx "LD_PRELOAD=$reallib" "$out" || fail "LD_PRELOAD is not the library" ;;
preload-kept)
  # The loader warns about the missing object on stderr and runs env anyway.
  [ "$(LD_PRELOAD=/nonexistent/kept.so run "$tool" -- /usr/bin/env)" = 0 ] || fail "env did not run"
  grep -qx "LD_PRELOAD=$reallib:/nonexistent/kept.so" "$out" ||
    fail "LD_PRELOAD does not start with the library and keep the rest" ;;
*)
  echo "test_tool.sh: unknown case $case" >&2; exit 2 ;;
esac
exit 0
