#!/bin/sh
# signal_check.sh BUILD_DIR CASE: nothing lost at a signal (issue 37).
#   signals  heat, under `reprise --stats`, is killed by SIGTERM, SIGINT and
#            SIGHUP in turn: while it runs its stats file is rewritten whole
#            (--stats-every 1); killed, it ends by that very signal, leaving
#            its complete stats and the summary
#   claimed  a signal the program handles (its handler installed before or
#            after the shim's) or ignores stays its own
#   guard    --min-replayed: the share checked over every process's file,
#            the program's own failure and signal kept, signals forwarded
set -u
build=$1 case=$2
tool=$build/bin/reprise
module=$build/kernels/libtestkernels.so
heat=$build/apps/heat
export LD_LIBRARY_PATH=$build/cpudriver
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "signal_check.sh $case: $*" >&2; for f in "$dir"/*.err; do [ -f "$f" ] && { echo "-- $f:"; cat "$f"; } >&2; done; exit 1; }
# The program's stats file, parsed by the report (strict JSON); prints its ops.
ops_of() {
  "$tool" report "$1" >"$dir/report.out" 2>"$dir/report.err" || return 1
  sed -n 's/^\([0-9][0-9,]*\) capturable ops.*/\1/p' "$dir/report.out" | tr -d ,
}
# A count as the summary writes it: 1403 -> 1,403.
commas() { echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta'; }
# wait_for FILE SECONDS: until FILE exists.
wait_for() {
  n=0
  while [ ! -s "$1" ] && [ $n -lt $(($2 * 10)) ]; do sleep 0.1; n=$((n + 1)); done
  [ -s "$1" ]
}
# A background job of a shell without job control ignores SIGINT: the
# program gets it back (env --default-signal), as a program started from a
# terminal has it.
bg() { env --default-signal=INT "$@" & pid=$!; }

case $case in
signals)
  for sig in TERM INT HUP; do
    stats=$dir/s-$sig.json
    bg "$tool" --stats "$stats" --stats-every 1 -- "$heat" "$module" 100000000 \
      >/dev/null 2>"$dir/$sig.err"
    wait_for "$stats" 10 || { kill -KILL $pid; fail "$sig: no stats file while it runs"; }
    running=$(ops_of "$stats") || { kill -KILL $pid; fail "$sig: the periodic stats file is not whole"; }
    [ "${running:-0}" -gt 0 ] || { kill -KILL $pid; fail "$sig: the periodic stats file counts no op"; }
    kill -0 $pid 2>/dev/null || fail "$sig: the program ended by itself"
    kill -$sig $pid
    wait $pid
    status=$?
    case $sig in TERM) want=143 ;; INT) want=130 ;; HUP) want=129 ;; esac
    [ $status = $want ] || fail "$sig: exit status $status, not $want (death by the signal)"
    final=$(ops_of "$stats") || fail "$sig: the stats file is not whole"
    [ "$final" -ge "$running" ] || fail "$sig: the final stats ($final ops) are older than the periodic ones ($running)"
    grep -q "^reprise: $(commas "$final") capturable ops" "$dir/$sig.err" || fail "$sig: no summary"
    ls "$dir" | grep -q '\.tmp$' && fail "$sig: a temporary file was left"
  done ;;
claimed)
  for when in before after; do
    bg "$tool" --stats "$dir/c.json" -- "$build/tests/shim/sigprog" $when >"$dir/$when.out" 2>"$dir/$when.err"
    wait_for "$dir/$when.out" 10 || { kill -KILL $pid; fail "$when: the program did not start"; }
    kill -TERM $pid
    wait $pid
    status=$?
    [ $status = 7 ] || fail "$when: exit status $status, not the program's handler's 7"
    grep -q "own handler" "$dir/$when.out" || fail "$when: the program's handler did not run"
  done
  # Ignored (nohup's way): the signal stays ignored, the program runs on.
  env --ignore-signal=HUP "$tool" --stats "$dir/i.json" --stats-every 1 -- "$heat" "$module" 100000000 \
    >/dev/null 2>"$dir/ignored.err" &
  pid=$!
  wait_for "$dir/i.json" 10 || { kill -KILL $pid; fail "ignored: no stats file"; }
  kill -HUP $pid
  sleep 0.5
  kill -0 $pid 2>/dev/null || fail "an ignored SIGHUP ended the program"
  kill -TERM $pid
  wait $pid ;;
guard)
  run="$heat $module 200"
  "$tool" --summary 0 --min-replayed 0.9 -- $run >/dev/null 2>"$dir/g.err" || fail "90% of heat: not passed"
  grep -q "98.3% of 1403 ops ran as graphs (1 stats file), at least the 90.0% asked" "$dir/g.err" ||
    fail "90%: the share is not said"
  "$tool" --summary 0 --min-replayed 100% -- $run >/dev/null 2>"$dir/g.err"
  [ $? = 3 ] || fail "100% of heat: exit status is not 3"
  grep -q "less than the 100.0% asked" "$dir/g.err" || fail "100%: the shortfall is not said"
  # Every process's file (%p), and only this run's.
  echo '{"version": 1, "reprise_version": "0", "ops": 1000, "replayed_ops": 0}' >"$dir/g-1.json"
  "$tool" --summary 0 --stats "$dir/g-%p.json" --min-replayed 0.9 -- sh -c "$run; $run" \
    >/dev/null 2>"$dir/g.err" || fail "two processes: not passed"
  grep -q "of 2806 ops ran as graphs (2 stats files)" "$dir/g.err" || fail "two processes: not summed"
  # The program's failure is its own; a signal too.
  "$tool" --min-replayed 0.5 -- sh -c 'exit 5' 2>/dev/null
  [ $? = 5 ] || fail "a failing program's exit status is not kept"
  "$tool" --min-replayed 0.5 -- sh -c 'kill -TERM $$' 2>/dev/null
  [ $? = 143 ] || fail "a program killed by SIGTERM does not end the command by SIGTERM"
  # A signal to the command reaches the program, which leaves its stats.
  bg "$tool" --stats "$dir/f.json" --stats-every 1 --min-replayed 0.5 -- "$heat" "$module" 100000000 \
    >/dev/null 2>"$dir/f.err"
  wait_for "$dir/f.json" 10 || { kill -KILL $pid; fail "forwarded: no stats file"; }
  kill -TERM $pid
  wait $pid
  [ $? = 143 ] || fail "the command did not end by the SIGTERM it forwarded"
  grep -q "capturable ops" "$dir/f.err" || fail "the program did not get the SIGTERM (no summary)"
  "$tool" --min-replayed 0.5 -- true 2>"$dir/g.err"
  [ $? = 3 ] || fail "a run without CUDA passes the guard" ;;
*)
  echo "signal_check.sh: unknown case $case" >&2; exit 2 ;;
esac
exit 0
