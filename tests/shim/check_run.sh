#!/bin/sh
# Runs a command and checks what it left behind: its exit status, the stats
# report the shim wrote at exit, the lines it printed on stderr.
#   check_run.sh [--stats FILE] [--has TEXT]... [--lacks TEXT]...
#                [--stderr-count TEXT N] [--status N] -- command [args...]
# --has/--lacks look for TEXT (fixed string) in the stats FILE; --status is the
# expected exit status (default 0).
set -u
stats= status=0 has= lacks= errtext= errcount=
nl='
'
while [ $# -gt 0 ]; do
  case $1 in
    --stats) stats=$2; shift 2 ;;
    --has) has="$has$2$nl"; shift 2 ;;
    --lacks) lacks="$lacks$2$nl"; shift 2 ;;
    --stderr-count) errtext=$2 errcount=$3; shift 3 ;;
    --status) status=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "check_run.sh: bad argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$stats" ] && rm -f "$stats"
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$@" 2>"$err"
rc=$?
cat "$err" >&2
fail=0
if [ "$rc" -ne "$status" ]; then
  echo "check_run.sh: exit status $rc, expected $status" >&2; fail=1
fi
if [ -n "$errtext" ]; then
  n=$(grep -c -F -- "$errtext" "$err")
  if [ "$n" -ne "$errcount" ]; then
    echo "check_run.sh: '$errtext' on stderr $n times, expected $errcount" >&2; fail=1
  fi
fi
if [ -n "$stats" ]; then
  if [ ! -f "$stats" ]; then
    echo "check_run.sh: no stats report at $stats" >&2; exit 1
  fi
  cat "$stats"
  echo "$has" | while IFS= read -r t; do
    [ -z "$t" ] && continue
    grep -q -F -- "$t" "$stats" || { echo "check_run.sh: report lacks: $t" >&2; exit 1; }
  done || fail=1
  echo "$lacks" | while IFS= read -r t; do
    [ -z "$t" ] && continue
    if grep -q -F -- "$t" "$stats"; then echo "check_run.sh: report has: $t" >&2; exit 1; fi
  done || fail=1
fi
exit $fail
