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
invalid-values)
  # Each kind of option, given as a flag with a value it does not accept:
  # exit 2 before the program runs, one line naming the flag, the value and
  # what is accepted. The program would leave a mark if it ran.
  mark=$(mktemp -u)
  for bad in "--warmup abc" "--max-ops -1" "--summary 2" "--log loud" "--costs cheap" \
             "--table 8" "--stats-every=1d" "--parts maybe"; do
    set -- $bad
    [ "$(run "$tool" "$@" -- /bin/sh -c "touch $mark")" = 2 ] || fail "$bad: exit status is not 2"
    [ ! -e "$mark" ] || fail "$bad: the program ran"
    [ "$(wc -l <"$err")" -eq 1 ] || fail "$bad: not exactly one line on stderr"
    flag=${1%%=*}
    grep -q -- "$flag" "$err" || fail "$bad: the message does not name the flag"
    grep -q "expected" "$err" || fail "$bad: the message does not say what is accepted"
  done ;;
config-file)
  # A config file named by --config: an invalid line is an error naming the
  # file and line, an unreadable file too; a good one runs.
  conf=$(mktemp)
  printf 'warmup = 3\nmax_ops = lots\n' >"$conf"
  [ "$(run "$tool" --config "$conf" -- /bin/true)" = 2 ] || fail "a bad line: exit status is not 2"
  grep -q "$conf:2: invalid value 'lots' for max_ops (expected a count" "$err" ||
    fail "the message does not name the file, the line and what is accepted"
  printf 'warmup = 3\nbogus = 1\n' >"$conf"
  [ "$(run "$tool" --config "$conf" -- /bin/true)" = 2 ] || fail "an unknown key: exit status is not 2"
  grep -q "$conf:2: unknown key 'bogus'" "$err" || fail "the unknown key is not named"
  [ "$(run "$tool" --config /nonexistent/reprise.conf -- /bin/true)" = 2 ] ||
    fail "an unreadable file: exit status is not 2"
  grep -q -- "--config /nonexistent/reprise.conf: cannot read it" "$err" || fail "unreadable: no reason"
  printf 'warmup = 3\n' >"$conf"
  [ "$(LD_PRELOAD= run "$tool" --config "$conf" -- /usr/bin/env)" = 0 ] || fail "a good file did not run"
  grep -qx "REPRISE_CONFIG=$conf" "$out" || fail "REPRISE_CONFIG not set"
  rm -f "$conf" ;;
by-hand)
  # Variables set by hand keep the preload's rule: warned about once, naming
  # the variable, replaced by the default (the command's: the summary on),
  # and the program runs.
  [ "$(LD_PRELOAD= REPRISE_WARMUP=abc REPRISE_SUMMARY=2 run "$tool" -- /usr/bin/env)" = 0 ] ||
    fail "the program did not run"
  grep -q "invalid REPRISE_WARMUP=abc (expected a count in 1..1000000.*); using the default 2" "$err" ||
    fail "no warning naming REPRISE_WARMUP"
  grep -q "invalid REPRISE_SUMMARY=2 .*; using the default 1" "$err" ||
    fail "the summary's default under the command is not 1"
  grep -qx "REPRISE_WARMUP=2" "$out" || fail "REPRISE_WARMUP is not the default"
  grep -qx "REPRISE_SUMMARY=1" "$out" || fail "REPRISE_SUMMARY is not on" ;;
output-paths)
  # A stats or trace file that cannot be written is an error before the
  # program starts, not after a long run; -o is --stats.
  mark=$(mktemp -u)
  for bad in "--stats /nonexistent/s.json" "--trace /nonexistent/t.rptrace" "-o /" \
             "--stats /etc/passwd/s-%p.json"; do
    set -- $bad
    [ "$(run "$tool" "$@" -- /bin/sh -c "touch $mark")" = 2 ] || fail "$bad: exit status is not 2"
    [ ! -e "$mark" ] || fail "$bad: the program ran"
    grep -q -- "$1 $2: " "$err" || fail "$bad: the message does not name the option and path"
  done
  [ "$(LD_PRELOAD= run "$tool" -o s.json -- /usr/bin/env)" = 0 ] || fail "-o did not run"
  grep -qx "REPRISE_STATS=s.json" "$out" || fail "-o is not --stats" ;;
help-topics)
  # reprise help never runs a program named help; every subcommand answers
  # --help with its usage line; reprise help TOPIC prints the same.
  [ "$(run "$tool" help)" = 0 ] || fail "reprise help did not exit 0"
  grep -q "^usage: reprise " "$out" || fail "reprise help printed no usage"
  for sub in report explain replay "trace info" help; do
    set -- $sub
    [ "$(run "$tool" "$@" --help)" = 0 ] || fail "reprise $sub --help did not exit 0"
    head -1 "$out" | grep -q "^usage: reprise $sub " || fail "reprise $sub --help: no usage line"
    awk 'length($0) > 80 { print; bad = 1 } END { exit bad }' "$out" ||
      fail "reprise $sub --help: a line is over 80 columns"
    cp "$out" "$out.help"
    [ "$(run "$tool" help "$1")" = 0 ] || fail "reprise help $1 did not exit 0"
    cmp -s "$out" "$out.help" || fail "reprise help $1 differs from reprise $sub --help"
    rm -f "$out.help"
  done
  [ "$(run "$tool" help reasons)" = 0 ] || fail "reprise help reasons did not exit 0"
  for r in warming_up diverged no_period resting bound_hit; do
    grep -q "^  $r  " "$out" || fail "reprise help reasons does not explain $r"
  done
  [ "$(run "$tool" help config)" = 0 ] && grep -q "^  patience  " "$out" && grep -q "^  costs  " "$out" ||
    fail "reprise help config does not list the keys"
  [ "$(run "$tool" help nosuchtopic)" = 2 ] || fail "an unknown topic is not a usage error" ;;
replay-stats-path)
  # reprise replay --stats to a folder that does not exist: a usage error
  # before the replay (a long trace would be replayed for nothing).
  [ "$(run "$tool" replay /nonexistent.rptrace --shim --stats /nonexistent/dir/s.json)" = 2 ] ||
    fail "exit status is not 2"
  grep -q "^reprise replay: --stats /nonexistent/dir/s.json: " "$err" ||
    fail "the message does not name the option and the path" ;;
help-aligned)
  # Every option's description starts in one column (or on the next line,
  # there, when the option is too wide): none runs into its option.
  [ "$(run "$tool" --help)" = 0 ] || fail "--help did not exit 0"
  awk '/^  -/ && index(substr($0, 3), "  ") &&
       !(substr($0, 1, 24) ~ /  $/ && substr($0, 25, 1) != " ") { print; bad = 1 }
       END { exit bad }' "$out" || fail "an option's description is not aligned"
  awk 'length($0) > 80 { print; bad = 1 } END { exit bad }' "$out" || fail "a line is over 80 columns" ;;
no-cuda)
  # A program that made no driver call leaves a stats file that says so,
  # which the report reads as such (not "0 capturable ops").
  d=$(mktemp -d)
  [ "$(run "$tool" --stats "$d/x.json" -- ls "$d")" = 0 ] || { rm -rf "$d"; fail "ls did not run"; }
  grep -q '"calls": {}' "$d/x.json" && grep -q '"enabled": true' "$d/x.json" ||
    { rm -rf "$d"; fail "no stats file saying so"; }
  [ "$(run "$tool" report "$d/x.json")" = 0 ] || { rm -rf "$d"; fail "the report did not read it"; }
  grep -q "made no CUDA driver call" "$out" || { rm -rf "$d"; fail "the report does not say so"; }
  grep -q "capturable ops" "$out" && { rm -rf "$d"; fail "the report counts ops of nothing"; }
  rm -rf "$d" ;;
not-stats)
  # JSON that is not a stats file is called that, not "schema version 0".
  f=$(mktemp)
  echo '{"name": "something else"}' >"$f"
  [ "$(run "$tool" report "$f")" = 1 ] || fail "exit status is not 1"
  grep -q "not a reprise stats file" "$err" || fail "it is not called a JSON file that is not a stats file"
  grep -q "schema version" "$err" && fail "it speaks of a schema version"
  [ "$(run "$tool" report -o /nonexistent/r.html "$f")" = 2 ] || fail "a bad -o path is not a usage error"
  grep -q -- "-o /nonexistent/r.html: no folder /nonexistent" "$err" || fail "the bad page path is not named"
  rm -f "$f" ;;
driver-hint)
  # A program that needs libcuda.so.1 where the loader finds none: a line
  # saying what to set, before the loader's own error.
  prog=$4
  if LD_LIBRARY_PATH= ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    echo "a CUDA driver is installed here: nothing to hint"; exit 77
  fi
  [ "$(LD_LIBRARY_PATH= run "$tool" -- "$prog")" = 127 ] || fail "the program ran"
  grep -q "needs libcuda.so.1 and the loader finds none" "$err" || fail "no hint"
  grep -q "LD_LIBRARY_PATH" "$err" || fail "the hint does not say what to set" ;;
*)
  echo "test_tool.sh: unknown case $case" >&2; exit 2 ;;
esac
exit 0
