#!/usr/bin/env bash
# run.sh - the one prepared script for a GPU machine (an H200 with CUDA 13,
# CMake and no internet), finishing within 8 minutes:
#   1. builds everything (Release, kernels for sm_90, no cmocka needed);
#   2. runs every test program on the real driver without and with the shim
#      and compares the checksums, and compares both with the CPU driver's
#      (the kernels are written to give the same bits on both); a `reprise:`
#      line (a warning: at the default level the shim prints nothing else)
#      fails the program, and the table shows the line;
#   2a. asks the driver the graph rules the engine relies on (graphrules:
#      a function update, an event wait node set per launch) and compares
#      the answers with the CPU driver's;
#   2b. records traces of a few of them (REPRISE_TRACE) and replays each
#      without and with the shim (`reprise replay`);
#   2c. replays the corpus of framework traces (../shared/traces, or
#      TRACES=DIR) without and with the shim, --timing none: wall time per
#      op and the share replayed;
#   3. runs the runtime-API program (<<<>>>, static and shared cudart) under
#      the shim and checks from the stats that its launches were replayed;
#   4. runs the benchmarks (overhead, updates, the launch-bound suite, host
#      work inside a step);
#   5. runs tests/gpu/frameworks.sh: PyTorch, CuPy and Triton loops without
#      and with a per-step sync, and Hugging Face generate() with a dynamic
#      and a static cache, absent vs shim, each also recorded as a trace and
#      replayed without and with the shim (each skipped with a line where it
#      does not import, so the dry run checks the skip path);
#   6. prints one table last.
# Logs go to $OUT (or build-gpu/out). Exit status: 0 when every check
# passed, 1 otherwise.
#
#   tests/gpu/run.sh          on the GPU
#   tests/gpu/run.sh --cpu    dry run on the CPU driver (CI runs this): the
#                             same steps, the runtime-API programs only
#                             checked for their lookups, benchmarks shortened
set -u
cd "$(dirname "$0")/../.."
mode=gpu
[ "${1:-}" = "--cpu" ] && mode=cpu
build=${BUILD:-build-gpu}
out=${OUT:-$build/out}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
fails=0
table=$out/table.txt
: >"$table"

say() { echo "$*" | tee -a "$out/log.txt"; }
row() { printf "%-52s %s\n" "$1" "$2" | tee -a "$table" >>"$out/log.txt"; }
fail() { fails=$((fails + 1)); row "$1" "FAIL ${2:-}"; }
elapsed() { echo $(( $(date +%s) - start )); }

say "== reprise GPU script, mode $mode, $(date -u +%Y-%m-%dT%H:%MZ)"
if [ "$mode" = gpu ]; then
  nvidia-smi -L 2>&1 | tee -a "$out/log.txt" || { say "no GPU found: use --cpu"; exit 1; }
fi

# ---- 1. build -------------------------------------------------------------
say "== build into $build"
mkdir -p "$build"
if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DREPRISE_UNIT_TESTS=OFF \
     >"$out/configure.log" 2>&1; then
  say "configure failed"; tail -30 "$out/configure.log"; exit 1
fi
if ! cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1; then
  say "build failed"; grep -E -A5 'error' "$out/build.log" | head -40; exit 1
fi
row "build ($(elapsed) s)" ok
B=$(cd "$build" && pwd)
shim=$B/lib/libreprise.so
cpu_env=(LD_LIBRARY_PATH="$B/cpudriver")
cpu_mod=$B/kernels/libtestkernels.so
if [ "$mode" = gpu ]; then
  run_env=()
  mod=$B/kernels/testkernels.cubin
  shim_env=(LD_PRELOAD="$shim" REPRISE=1)
  [ -f "$mod" ] || { say "no cubin: nvcc did not build the kernels"; exit 1; }
else
  run_env=("${cpu_env[@]}")
  mod=$cpu_mod
  shim_env=(LD_PRELOAD="$shim" REPRISE=1 REPRISE_DRIVER="$B/cpudriver/libcuda.so.1")
fi

# ---- 2. every program: absent vs shim (vs CPU driver) ----------------------
say "== test programs"
num() { sed -n "s/.*\"$2\": *\([0-9.]*\).*/\1/p" "$1" | head -n 1; }
# The shim's first warning line in a program's output, if any.
warning() { printf '%s\n' "$1" | grep -m 1 '^reprise: '; }
runs=("kernelcheck 2" "heat 200" "pingpong 96" "pingpong 60 2 3" "stepper 200 1"
      "runtime_like 100" "threads 50 4 steady" "threads 50 4" "selfcapture 24"
      "pageable 16" "libkernel 40" "phases 120 40" "phases 120 40 fixedset" "handoff 30"
      "badinput 8" "decode 200 64" "decode 200 64 static"
      # issue 14's shapes (no host sync inside the loop): the replayed share
      # each should reach is in tests/apps/nosync_expect.txt
      "nosync 200 fixed" "nosync 200 scalar" "nosync 300 rotate 8 3" "nosync 200 nested"
      "nosync 200 interleave" "nosync 300 phase 6 10 150" "nosync 300 diverge"
      "nosync 6 long" "nosync 100 random" "nosync 300 unaligned" "nosync 50 hostwork 20 200"
      # a never-repeating stream long enough to rest (REPRISE_PATIENCE)
      "nosync 3000 random"
      # issue 16: launch attributes (cooperative, priority, sync domain,
      # cluster 1x1x1; pss: a boundary), fork/join shapes, two devices
      # (skips on a machine with one)
      "attrs 100" "attrs 100 pss" "forkjoin 100 fork 2" "forkjoin 100 fork 3"
      "forkjoin 100 nested" "forkjoin 100 previous" "forkjoin 30 query" "forkjoin 30 sidequery" "forkjoin 30 streamquery"
      "forkjoin 30 foreign" "forkjoin 100 later" "forkjoin 200 nosync"
      "forkjoin 20 held" "forkjoin 20 blocked" "twodev 30" "subtle 25 lastrare"
      # 2026-12-07: a launch whose dynamic shared memory (read by the kernel
      # as %dynamic_smem_size) differs in a rare step of a graph with updates
      "subtle 30 smemrare"
      # 2026-12-01: executables per content that comes back (rotate), a
      # field widened on another thread while work is held (ptwiden), steps
      # of varying length cut after a landmark (diverge, 500 steps)
      "rotate 60 3 1" "rotate 60 4 1 1" "ptwiden 12" "nosync 500 diverge"
      # issue 28's framework shapes (tests/apps/shapes_expect.txt; the goals
      # there are for the CPU driver, where timing is simulated): a backward
      # thread on the legacy stream, CuPy-like groups, kernels that switch
      # with the cache length, host time between launches
      "train 200 sgd" "train 200 adam" "groups 300" "groups 300 one 8" "decode2 100"
      "decode2 100 8 1 static" "infer 200"
      # issue 35: kernels chosen by their pointers' alignment (function
      # updates), a read-back that shifts the step, PyTorch's two-stream and
      # prefetch idioms on the legacy stream (fork/join graphs homed there,
      # fresh events, the home stream's outside wait as an event wait node),
      # the allocator's event queries
      "alignswitch 200 sync" "alignswitch 200 readback 16 switch" "torchstreams 100 twostream"
      "torchstreams 100 prefetch" "torchstreams 100 queries"
      # issue 34: temporaries freed since the capture, steps cut into parts
      "realloc 60 alternate" "realloc 60 repool")
# Long kernels: 2^25 floats a buffer on a GPU (~100 us a kernel, to be
# confirmed there); far smaller on the CPU driver.
if [ "$mode" = gpu ]; then
  runs+=("nosync 20 longkernel 8")
else
  runs+=("nosync 20 longkernel 8 4096")
fi
for run in "${runs[@]}"; do
  set -- $run
  app=$1; shift
  name="$app $*"
  a=$(env "${run_env[@]}" timeout 60 "$B/apps/$app" "$mod" "$@" 2>&1); ra=$?
  s=$(env "${run_env[@]}" "${shim_env[@]}" REPRISE_STATS="$out/stats-$app.json" \
        timeout 60 "$B/apps/$app" "$mod" "$@" 2>&1); rs=$?
  echo "$name absent: $a" >>"$out/log.txt"
  echo "$name shim:   $s" >>"$out/log.txt"
  w=$(warning "$s")
  if [ -n "$w" ]; then
    fail "$name: the shim warned" "$w"
    continue
  fi
  if [ $ra -ne 0 ] || [ $rs -ne 0 ] || [ "$a" != "$s" ]; then
    fail "$name: same output with the shim" "(exit $ra/$rs)"
    continue
  fi
  share=$(num "$out/stats-$app.json" replayed_share)
  extra=""
  if [ "$mode" = gpu ]; then
    c=$(env "${cpu_env[@]}" timeout 120 "$B/apps/$app" "$cpu_mod" "$@" 2>&1)
    if [ "$c" = "$a" ]; then extra=", = CPU driver"; else extra=", differs from the CPU driver"; fi
  fi
  row "$name" "same, replayed ${share:-0}$extra"
done

# ---- 2a. the driver's graph rules the engine relies on (issue 35) ------------
# graphrules asks the driver (a kernel node set to another function of its
# context; an event wait node set to another event, waiting for the record
# the event had at the launch): on a GPU its lines must be the CPU driver's,
# which implements the stricter reading; a line that differs is a rule the
# CPU driver (and the engine) must change for.
say "== graph rules"
ga=$(env "${run_env[@]}" timeout 60 "$B/apps/graphrules" "$mod" 8 2>&1); rga=$?
gc=$(env "${cpu_env[@]}" timeout 60 "$B/apps/graphrules" "$cpu_mod" 8 2>&1); rgc=$?
echo "graphrules: $ga" >>"$out/log.txt"
echo "graphrules (CPU driver): $gc" >>"$out/log.txt"
if [ $rga -ne 0 ] || [ $rgc -ne 0 ]; then
  fail "graphrules" "(exit $rga/$rgc: $ga)"
elif [ "$ga" != "$gc" ]; then
  fail "graphrules: the driver answers as the CPU driver" "($ga)"
else
  row "graphrules: function update, event wait node" "as the CPU driver: $(printf '%s\n' "$ga" | grep -o ': yes' | wc -l) of 4 yes"
fi

# ---- 2b. traces (issue 29): recorded, replayed without and with the shim ----
# Each program recorded with the engine off (REPRISE_TRACE), then replayed by
# `reprise replay` against the same driver without the shim and under it
# (--strict: every call's result as the program's). The row gives the
# trace's size, both replays' wall time (the launch-bound time of the stream
# itself: its kernels are empty), and the share replayed under the shim next
# to a live run's under it. On the CPU driver the two replays' digests
# must be equal too. Traces stay in $out.
say "== traces"
drv_path=libcuda.so.1
[ "$mode" = cpu ] && drv_path=$B/cpudriver/libcuda.so.1
replay_time() { sed -n 's/.* in \([0-9.]*\) s (recorded.*/\1/p' "$1" | head -n 1; }
# replay_pair NAME TRACE PREFIX STATS [OPTION...]: the trace replayed on the
# driver without the shim and under it (OPTIONs: the replayer's, for both),
# their outputs in PREFIX-plain.txt and PREFIX-shim.txt, the shim's report in
# STATS; on the CPU driver the two replays' digests compared (`digest` says
# so for the row). Returns 1, a failed row written, when a replay failed or
# the digests differ.
replay_pair() {
  local name=$1 t=$2 pre=$3 st=$4 r1 r2 d1 d2
  shift 4
  env "${run_env[@]}" CPUCUDA_STATS="$pre-plain.drv.json" timeout 300 "$B/bin/reprise" replay "$t" \
    --no-shim --driver "$drv_path" "$@" >"$pre-plain.txt" 2>&1; r1=$?
  env "${run_env[@]}" CPUCUDA_STATS="$pre-shim.drv.json" timeout 300 "$B/bin/reprise" replay "$t" \
    --shim --driver "$drv_path" "$@" --stats "$st" >"$pre-shim.txt" 2>&1; r2=$?
  if [ $r1 -ne 0 ] || [ $r2 -ne 0 ]; then
    fail "$name: replay" "(exit $r1/$r2, see $pre-*.txt)"
    return 1
  fi
  digest=""
  if [ "$mode" = cpu ]; then
    d1=$(sed -n 's/.*"digest":{"value":"\([0-9a-f]*\)".*/\1/p' "$pre-plain.drv.json")
    d2=$(sed -n 's/.*"digest":{"value":"\([0-9a-f]*\)".*/\1/p' "$pre-shim.drv.json")
    if [ -z "$d1" ] || [ "$d1" != "$d2" ]; then
      fail "$name: digests" "($d1 without the shim, $d2 with it)"
      return 1
    fi
    digest=", digests equal"
  fi
}
for run in "heat 200" "nosync 200 fixed" "forkjoin 100 fork 2" "decode 200 64" "threads 50 4 steady" "stepper 200 1"; do
  set -- $run
  app=$1; shift
  name="trace: $app $*"
  t=$out/trace-$app-${1:-x}.rptrace
  rm -f "$t"
  env "${run_env[@]}" LD_PRELOAD="$shim" REPRISE_DRIVER="$drv_path" REPRISE_TRACE="$t" \
    timeout 120 "$B/apps/$app" "$mod" "$@" >"$out/trace-$app.out" 2>&1 ||
    { fail "$name: recording" "(see $out/trace-$app.out)"; continue; }
  st=$out/trace-$app-stats.json
  replay_pair "$name" "$t" "$out/trace-$app" "$st" --strict || continue
  env "${run_env[@]}" "${shim_env[@]}" REPRISE_STATS="$out/trace-$app-live.json" \
    timeout 120 "$B/apps/$app" "$mod" "$@" >/dev/null 2>&1
  live=$(num "$out/trace-$app-live.json" replayed_share)
  row "$name" "$(( $(wc -c <"$t") / 1024 )) KiB, replay $(replay_time "$out/trace-$app-plain.txt") s, under the shim $(replay_time "$out/trace-$app-shim.txt") s, replayed $(num "$st" replayed_share) (live ${live:-?})$digest"
done

# ---- 2c. the corpus of framework traces (issue 36) ---------------------------
# The real streams of ../shared/traces (PyTorch, CuPy, Hugging Face
# generate(), recorded on the CPU driver), replayed on this driver without
# the shim and under it as fast as the calls go (--timing none), the idle
# watch and the costs as the driver measures them: per trace the wall time
# per op of each replay (the replayer's own time included, its kernels
# empty: the launch-bound host time of the stream) and the share replayed.
# TRACES names another folder (the GPU machine gets no ../shared: carry the
# traces into the checkout and point TRACES at them); none there: skipped
# with a row. On the CPU driver the digests must also be equal.
say "== corpus ($(elapsed) s so far)"
traces=${TRACES:-../shared/traces}
set -- "$traces"/*.rptrace
if [ ! -f "$1" ]; then
  row "corpus" "skipped: no traces in $traces (TRACES=DIR)"
fi
for t in "$@"; do
  [ -f "$t" ] || continue
  name="corpus: $(basename "$t" .rptrace)"
  cs=$out/corpus-stats.json
  replay_pair "$name" "$t" "$out/corpus" "$cs" --timing none || continue
  cat "$out/corpus-plain.txt" "$out/corpus-shim.txt" >>"$out/log.txt"
  ops=$(num "$cs" ops)
  ta=$(replay_time "$out/corpus-plain.txt")
  tb=$(replay_time "$out/corpus-shim.txt")
  per=$(awk -v a="${ta:-0}" -v b="${tb:-0}" -v n="${ops:-0}" \
    'BEGIN { if (n > 0) printf "%.2f us/op absent, %.2f under the shim (%.2f)", a * 1e6 / n, b * 1e6 / n, (a > 0 ? b / a : 0) }')
  row "$name" "$ops ops, $per, replayed $(num "$cs" replayed_share)$digest"
done

# ---- 3. the runtime-API programs ----------------------------------------------
say "== runtime API (cudart)"
for kind in static shared; do
  bin=$B/apps/rtapi_$kind
  [ -x "$bin" ] || { row "rtapi_$kind" "not built (no nvcc)"; continue; }
  st=$out/stats-rtapi_$kind.json
  if [ "$mode" = gpu ]; then
    a=$(timeout 60 "$bin" 16 50 2>&1); ra=$?
    s=$(env "${shim_env[@]}" REPRISE_STATS="$st" timeout 60 "$bin" 16 50 2>&1); rs=$?
    replays=$(num "$st" replays)
    w=$(warning "$s")
    if [ -n "$w" ]; then
      fail "rtapi_$kind: the shim warned" "$w"
    elif [ $ra -ne 0 ] || [ $rs -ne 0 ] || [ "$a" != "$s" ]; then
      fail "rtapi_$kind: same output with the shim" "(exit $ra/$rs)"
    elif [ "${replays:-0}" -lt 40 ]; then
      fail "rtapi_$kind: launches replayed" "(replays ${replays:-0} of 49 possible)"
    else
      row "rtapi_$kind" "same, $replays graph replays, replayed $(num "$st" replayed_share)"
    fi
  else
    env "${shim_env[@]}" "${cpu_env[@]}" REPRISE_STATS="$st" timeout 60 "$bin" 16 50 \
      >>"$out/log.txt" 2>&1
    lookups=$(num "$st" lookups)
    if grep -q '"cuLaunchKernel_ptsz"' "$st" 2>/dev/null && [ "${lookups:-0}" -gt 100 ]; then
      row "rtapi_$kind (CPU: stops at cuGetExportTable)" "lookups $lookups, wrappers handed out"
    else
      fail "rtapi_$kind: lookups through the shim" "(lookups ${lookups:-0})"
    fi
  fi
done

# ---- 4. benchmarks ----------------------------------------------------------
say "== benchmarks ($(elapsed) s so far)"
gflag=""
[ "$mode" = gpu ] && gflag=--gpu
if [ "$mode" = gpu ]; then
  RUNS=5 N_WALL=100000 benchmarks/overhead.sh "$build" $gflag >"$out/overhead.txt" 2>&1
  RUNS=3 ITERS=1000 benchmarks/updates.sh "$build" $gflag >"$out/updates.txt" 2>&1
  RUNS=3 benchmarks/suite.sh "$build" $gflag >"$out/suite.txt" 2>&1
  RUNS=3 ITERS=20 benchmarks/hostwork.sh "$build" $gflag >"$out/hostwork.txt" 2>&1
else
  RUNS=1 N_WALL=2000 N1=200 N2=400 benchmarks/overhead.sh "$build" >"$out/overhead.txt" 2>&1
  RUNS=1 ITERS=50 N=8 benchmarks/updates.sh "$build" >"$out/updates.txt" 2>&1
  CALLGRIND=0 RUNS=1 benchmarks/suite.sh "$build" >"$out/suite.txt" 2>&1
  RUNS=1 ITERS=3 HOST_US=500 DELAY_US=20 benchmarks/hostwork.sh "$build" >"$out/hostwork.txt" 2>&1
fi
for b in overhead updates suite hostwork; do
  if grep -q "reprise" "$out/$b.txt" && ! grep -q "error" "$out/$b.txt"; then
    row "benchmark $b" "ok ($out/$b.txt)"
  else
    fail "benchmark $b" "(see $out/$b.txt)"
  fi
done

# ---- 5. frameworks (issue 14) -----------------------------------------------
have=""
for m in torch cupy triton; do
  python3 -c "import $m" >/dev/null 2>&1 && have="$have $m"
done
say "== frameworks:${have:- none importable} ($(elapsed) s so far)"
if OUT="$out" tests/gpu/frameworks.sh "$build" >"$out/frameworks.txt" 2>&1; then
  if [ -n "$have" ]; then
    row "frameworks:$have" "ok ($out/frameworks.txt)"
  else
    row "frameworks" "skipped: none of torch, cupy, triton imports"
  fi
else
  fail "frameworks" "(see $out/frameworks.txt)"
fi

# ---- 6. the table -----------------------------------------------------------
echo
echo "== reprise GPU script ($mode), $(elapsed) s, $fails failure(s)"
cat "$table"
echo
for b in suite overhead updates hostwork frameworks; do
  echo "-- $b"
  cat "$out/$b.txt"
done
[ "$fails" -eq 0 ]
