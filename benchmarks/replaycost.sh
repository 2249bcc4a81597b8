#!/usr/bin/env bash
# replaycost.sh - the shim's own instructions per op on real streams: every
# trace (*.rptrace) of a folder replayed as tests/traces/corpus.sh replays it
# (the CPU driver, --timing none, the idle watch off, the costs pinned), but
# with the shim preloaded into `reprise replay --no-shim` under callgrind, so
# that its cost is counted function by function. The figure is callgrind's
# self cost of every function of libreprise.so (every thread; every line of
# the function, those inlined from headers included: summing
# `callgrind_annotate --inclusive=no` lines tagged libreprise.so misses
# those, which the annotation lists apart and untagged, and undercounts by a
# third), the writing of the stats file left out (the profile is dumped
# before and after each call of the function that writes it, and those
# parts dropped; the periodic rewrite is off, REPRISE_STATS_EVERY=0: it
# ran on the shim's thread every 5 s of the slowed replay, as timing
# fell, and a part it overlapped was counted or dropped with the replay's
# work beside it, up to 15 % of an op's figure on the MLP traces), divided
# by the ops the stats file counts (`ops`). With OLD_BUILD, each trace is replayed under
# both builds' libraries (the same replayer and CPU driver, BUILD's): a
# before and an after column. TOP=N prints each trace's N costliest shim
# functions under its row (BUILD's library).
# usage: benchmarks/replaycost.sh BUILD [OLD_BUILD] [DIR]
#   DIR defaults to ../shared/traces beside the repository (needs valgrind)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD [OLD_BUILD] [DIR]" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "replaycost.sh: valgrind not found" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
old=
[ $# -ge 2 ] && [ -n "$2" ] && old=$(cd "$2" && pwd)
dir=${3:-$here/../../shared/traces}
[ -d "$dir" ] || { echo "replaycost.sh: no folder $dir" >&2; exit 1; }
flat=$here/../tests/integration/jsonpaths.awk
drv=$build/cpudriver
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# The self cost of the functions of libreprise.so in one callgrind profile
# (every function's cost lines but its calls' inclusive ones, whatever file
# a line was inlined from: callgrind_annotate lists a function's lines from
# inlined headers apart, without the object's name). With TOP, per function.
shim_cost() {
  awk -v top="${2:-}" '
    function name(tab, s,   p, id) {
      p = index(s, ")"); id = substr(s, 2, p - 2)
      if (length(s) > p + 1) tab[id] = substr(s, p + 2)
      return tab[id]
    }
    /^ob=/ { ob = name(obs, substr($0, 4)); next }
    /^cob=/ { name(obs, substr($0, 5)); next }
    /^fn=/ { fn = name(fns, substr($0, 4)); in_shim = ob ~ /libreprise\.so$/; next }
    /^cfn=/ { name(fns, substr($0, 5)); next }
    /^calls=/ { call = 1; next }
    /^[0-9+*-]/ { if (call) { call = 0; next } if (in_shim) { s += $2; f[fn] += $2 } }
    END { if (top) { for (k in f) print f[k], k } else print s + 0 }' "$1"
}

# The function that writes the stats file (at exit, and every
# REPRISE_STATS_EVERY seconds): rp__stats_write, rp__stats_write_at_exit in
# builds before 2026-12-06.
writer_of() {
  if nm "$1/lib/libreprise.so" 2>/dev/null | grep -w rp__stats_write >/dev/null; then
    echo rp__stats_write
  else
    echo rp__stats_write_at_exit
  fi
}

# cost LIB TRACE -> "OPS INSTRUCTIONS" (the profile's parts kept in $work for TOP)
cost() {
  rm -f "$work"/cg.out* "$work/s.json"
  local writer
  writer=$(writer_of "$1")
  env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$1/lib/libreprise.so" REPRISE=1 \
      REPRISE_DRIVER="$drv/libcuda.so.1" REPRISE_IDLE_US=0 REPRISE_COSTS=3000,500,10000 \
      REPRISE_STATS="$work/s.json" REPRISE_STATS_EVERY=0 \
      valgrind --tool=callgrind --dump-instr=no --dump-before="$writer" \
      --dump-after="$writer" --callgrind-out-file="$work/cg.out" \
      "$build/bin/reprise" replay "$2" --no-shim --driver "$drv/libcuda.so.1" \
      --timing none >"$work/log" 2>&1 ||
    { echo "replaycost.sh: $2 did not replay under $1:" >&2; tail -5 "$work/log" >&2; return 1; }
  local ops ir=0 f
  ops=$(awk -f "$flat" "$work/s.json" | awk -F '\t' '$1 == "ops" { v = $2 } END { print v }')
  for f in "$work"/cg.out*; do
    stats_part "$f" || ir=$((ir + $(shim_cost "$f")))
  done
  echo "$ops $ir"
}
# A part of the profile that wrote the stats file (left out).
stats_part() { grep -q "^desc: Trigger: --dump-after=$writer\$" "$1"; }
top() {
  local f writer
  writer=$(writer_of "$build")
  for f in "$work"/cg.out*; do
    stats_part "$f" || shim_cost "$f" 1
  done | awk -v ops="$1" '{ s[$2] += $1 } END { for (k in s) printf "%12.1f  %s\n", s[k] / ops, k }' |
    sort -gr | head -"$TOP"
}

echo "# shim instructions per op (callgrind, self cost in libreprise.so, stats file's writing left out)"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), replayed as corpus.sh does: --timing none, REPRISE_IDLE_US=0, REPRISE_COSTS=3000,500,10000"
if [ -n "$old" ]; then
  printf '%-28s %7s %10s %10s %7s\n' trace ops before after ratio
else
  printf '%-28s %7s %10s\n' trace ops "instr/op"
fi
for t in "$dir"/*.rptrace; do
  [ -f "$t" ] || { echo "replaycost.sh: no traces in $dir" >&2; exit 1; }
  name=$(basename "$t" .rptrace)
  if [ -n "$old" ]; then
    read -r opsb ib < <(cost "$old" "$t")
  fi
  read -r ops ia < <(cost "$build" "$t")
  if [ -n "$old" ]; then
    printf '%-28s %7d %10.0f %10.0f %7.2f\n' "$name" "$ops" "$(awk -v i="$ib" -v n="$opsb" 'BEGIN { print i / n }')" \
      "$(awk -v i="$ia" -v n="$ops" 'BEGIN { print i / n }')" \
      "$(awk -v a="$ia" -v b="$ib" -v na="$ops" -v nb="$opsb" 'BEGIN { print (a / na) / (b / nb) }')"
  else
    printf '%-28s %7d %10.0f\n' "$name" "$ops" "$(awk -v i="$ia" -v n="$ops" 'BEGIN { print i / n }')"
  fi
  if [ -n "${TOP:-}" ]; then top "$ops" || true; fi
done
