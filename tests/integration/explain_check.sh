#!/bin/sh
# explain_check.sh - what a person reads says why and what to do:
#   names:  a C++ kernel (cxxnames, whose kernel has the mangled name nvcc
#           gives tk::scale_inplace<float>) appears demangled in the summary,
#           in `reprise report` and on its page (whole in a tooltip), while
#           the stats file keeps the raw name;
#   bounds: a hit bound (heat with REPRISE_MAX_OPS below its step) is named
#           by its option and limit in the summary, the report and the page,
#           counted under bound_hits_by.max_ops in the file, with advice;
#   grid:   a loop whose memset's width grows every iteration (phases grid:
#           nothing repeats) is said so in the summary, the report, the page
#           and `reprise explain`, with the advice that helps and no warmup
#           advice; the file has the shape changes as structured values;
#   switch: a decode loop whose kernels switch (decode2): `reprise explain`
#           names the op and both kernels where runs diverged, and the file
#           has them as structured values;
#   saved:  the demo's loop (heat 200): "driver launches 1,403 -> 221" (from
#           the file's counts) in the summary, the report and the page; the
#           file has the command line and the wall time; sequences are
#           numbered from 1 as graphs are captured, and --log info names
#           the first kernel of a captured sequence;
#   cli:    `reprise explain --help`, usage errors (exit 2), a file that is
#           not a stats file (exit 1, said so).
# usage: explain_check.sh BUILD_DIR MODULE names|bounds|grid|switch|saved|cli
set -u
build=$1 mod=$2 what=$3
work=${TMPDIR:-/tmp}/reprise-explain.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
drv=$build/cpudriver
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0"
fail() { echo "FAIL: $*"; exit 1; }
html() { echo "$1" | sed 's/>/\&gt;/g'; } # a pattern as the page escapes its text
want() { # want FILE PATTERN WHY: FILE must hold a line matching the ERE PATTERN
    grep -Eq -- "$2" "$1" || { echo "--- $1:"; cat "$1"; fail "$3"; }
}
run() { # run APP ARGS...: under the shim, summary on, stats to s.json
    # shellcheck disable=SC2086
    env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 \
        REPRISE_DRIVER="$drv/libcuda.so.1" REPRISE_STATS="$work/s.json" REPRISE_SUMMARY=1 \
        $asan $EXTRA "$build/apps/$@" >"$work/out" 2>"$work/summary" || fail "$1 exited $?"
    "$build/bin/reprise" report "$work/s.json" --html "$work/r.html" >"$work/report" ||
        fail "reprise report exited $?"
}
case $what in
names)
    EXTRA= run cxxnames "$mod" 30
    raw='_ZN2tk13scale_inplaceIfEEvPT_iS1_'
    want "$work/s.json" "\"first_kernel\": \"$raw\"" "the stats file must keep the raw name"
    want "$work/summary" '^reprise: sequence [0-9]+: 3 ops from tk::scale_inplace<float>; ' \
        "the summary must show the demangled name"
    want "$work/report" '^[^ ]+ +[0-9]+ +3  tk::scale_inplace<float> ' \
        "the report's table must show the demangled name"
    grep -q "$raw" "$work/summary" "$work/report" && fail "a mangled name is shown to the reader"
    want "$work/r.html" '>tk::scale_inplace&lt;float&gt;</span>' "the page must show the demangled name"
    want "$work/r.html" "title=\"void tk::scale_inplace&lt;float&gt;\\(float\\*, int, float\\) &#10;$raw\"" \
        "the page's tooltip must hold the whole name, demangled and raw"
    ;;
bounds)
    EXTRA=REPRISE_MAX_OPS=4 run heat "$mod" 30
    want "$work/s.json" '"bound_hits_by": \{"max_ops": [1-9]' "bound_hits_by.max_ops must count the hits"
    want "$work/s.json" '"limits": \{"max_ops": 4,' "limits.max_ops must say 4"
    total=$(sed -n 's/^    "bound_hits": \([0-9]*\),/\1/p' "$work/s.json")
    by=$(sed -n 's/^    "bound_hits_by": {"max_ops": \([0-9]*\),.*/\1/p' "$work/s.json")
    [ -n "$total" ] && [ "$total" = "$by" ] || fail "bound_hits ($total) is not the sum per bound ($by)"
    line="bound hit $by times: REPRISE_MAX_OPS \\(4\\): a stream queued more ops than that without a synchronization"
    want "$work/summary" "^reprise: $line" "the summary must name the bound by its option"
    want "$work/summary" '^reprise: advice: REPRISE_MAX_OPS \(hit [0-9]+ times\) sent [0-9]+ ops \([0-9.]+%\) eager: .*--max-ops' \
        "the summary must say what to do"
    [ "$(grep -c '^reprise: advice:' "$work/summary")" -le 3 ] || fail "more than three suggestions"
    want "$work/report" "^$line" "the report must name the bound by its option"
    want "$work/report" '^advice: REPRISE_MAX_OPS' "the report must say what to do"
    want "$work/r.html" '<h2>Bounds hit</h2>' "the page must list the bounds hit"
    want "$work/r.html" '<li>hit [0-9]+ times: REPRISE_MAX_OPS \(4\)' "the page must name the bound"
    want "$work/r.html" '<h2>Advice</h2>' "the page must give the advice"
    ;;
grid)
    EXTRA= run phases "$mod" 60 4 grid
    cause='ran eagerly because the width of op 1 \(a memset\) grows every time \(the last time [0-9]+ -> [0-9]+ elements\)'
    want "$work/summary" "^reprise: [0-9]+ ops \(100.0%\) $cause" "the summary must say what grows"
    want "$work/report" "^[0-9]+ ops \(100.0%\) $cause" "the report must say what grows"
    want "$work/r.html" "$(html "$cause")" "the page must say what grows"
    want "$work/summary" '^reprise: advice: the memset at op 1 changes its width every time: with one width \(its largest\)' \
        "the advice must be the one that helps"
    grep -Eq 'warmup|longer run' "$work/summary" "$work/report" "$work/r.html" &&
        fail "warmup advice for a loop whose structure changes every time"
    want "$work/s.json" '"shape_changes": \[$' "the file must have the shape changes"
    want "$work/s.json" '\{"op": 1, "why": "new_structure", "ended": false, "kind": "memset", "kernel": "", "field": "width", "index": 0, "at": 0, "structure": true, "had": [0-9]+, "got": [0-9]+\}' \
        "a shape change must be structured values"
    "$build/bin/reprise" explain "$work/s.json" >"$work/explain" || fail "reprise explain exited $?"
    want "$work/explain" '^  \[warming_up\] [0-9]+ ops \(100.0%\) ran eagerly because the width of op 1' "explain must give the cause"
    want "$work/explain" '^  op 1 \(a memset\): width [0-9]+ -> [0-9]+ elements$' "explain must list the shape changes"
    want "$work/explain" '^No sequence was captured\.$' "explain must say nothing was captured"
    ;;
switch)
    # Played by a driver that refuses to set a node to another function
    # (CPUCUDA_NO_FUNC_UPDATE): the kernels that switch are new runs again,
    # and runs leave a sequence where they do.
    EXTRA="REPRISE_IDLE_US=0 CPUCUDA_NO_FUNC_UPDATE=1" run decode2 "$mod" 100
    "$build/bin/reprise" explain "$work/s.json" >"$work/explain" || fail "reprise explain exited $?"
    kernels='(gemv_n_small -> gemv_n_large|softmax_(16|32|64) -> softmax_(32|64|128))'
    want "$work/explain" "^      [0-9]+ runs began like it and went another way.*; the last: op [0-9]+ $kernels \(another operation there" \
        "explain must name the op and both kernels where runs left a sequence"
    want "$work/explain" "^  sequence 1: 17 ops from gemv_n_small; [0-9]+ occurrences: [0-9]+ replayed" "explain must tell each sequence's story"
    want "$work/explain" '^Where the eager ops went \([0-9]+ of [0-9]+ ops\):$' "explain must say where the eager ops went"
    want "$work/s.json" '"divergences_last": \[\{"op": [0-9]+, "why": "another_operation", "ended": (true|false), "kind": "kernel", "kernel": "(gemv_n_small|softmax_[0-9]+)", "field": "function", "index": 0, "at": 0, "structure": false, "had": "(gemv_n_small|softmax_[0-9]+)", "got": "(gemv_n_large|softmax_[0-9]+)"\}' \
        "a divergence must be structured values"
    want "$work/s.json" '"volatile_fields": \[\{"op": 2, "kind": "dtod copy", "kernel": "", "field": "dst"\}' \
        "the volatile fields must be structured values"
    ;;
saved)
    EXTRA="REPRISE_IDLE_US=0 REPRISE_LOG=info" run heat "$mod" 200
    ops=$(sed -n 's/^  "ops": \([0-9]*\),$/\1/p' "$work/s.json")
    rep=$(sed -n 's/^  "replayed_ops": \([0-9]*\),$/\1/p' "$work/s.json")
    launches=$(sed -n 's/^    "replays": \([0-9]*\),$/\1/p' "$work/s.json")
    parts=$(sed -n 's/^    "part_launches": \([0-9]*\),$/\1/p' "$work/s.json")
    [ -n "$ops" ] && [ -n "$rep" ] && [ -n "$launches" ] && [ -n "$parts" ] || fail "no counts in the file"
    sep() { echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/; ta'; }
    line="driver launches $(sep "$ops") -> $(sep $((ops - rep + launches + parts)))"
    [ "$ops" = 1403 ] && [ "$line" != "driver launches 1,403 -> 221" ] && fail "the demo's loop: $line"
    want "$work/summary" "^reprise: saved: $line \(" "the summary must say what replaying saved"
    want "$work/report" "^saved: $line \(" "the report must say what replaying saved"
    want "$work/r.html" "<h2>What it saved</h2>" "the page must say what replaying saved"
    want "$work/r.html" "$(html "$line")" "the page must say what replaying saved"
    want "$work/s.json" '^  "argv": \["[^"]*apps/heat", "[^"]*libtestkernels.so", "200"\],$' "the file must have the command line"
    want "$work/s.json" '^  "wall_s": [0-9]+\.[0-9]{3},$' "the file must have the wall time"
    want "$work/s.json" '"sequences": \[$' "a sequence"
    want "$work/s.json" '^      \{"id": 1, ' "sequences are numbered from 1"
    want "$work/summary" '^reprise: 1 graph captured|1 graph captured' "one graph"
    want "$work/summary" '^reprise: sequence 1: 7 ops from boundary_apply; ' "the summary's sequence 1 is the graph captured"
    want "$work/summary" '^reprise: captured sequence 1: 7 ops, first kernel boundary_apply$' \
        "--log info must name the first kernel of a sequence that begins with a copy"
    ;;
cli)
    out=$("$build/bin/reprise" explain --help) || fail "reprise explain --help exited $?"
    echo "$out" | grep -q '^usage: reprise explain \[-h | --help\] STATS.json\.\.\.$' || fail "no usage: $out"
    "$build/bin/reprise" explain >/dev/null 2>"$work/err"; [ $? = 2 ] || fail "no file: not exit 2"
    want "$work/err" '^reprise explain: no stats file given' "no file: unclear"
    "$build/bin/reprise" explain --bogus x.json >/dev/null 2>"$work/err"; [ $? = 2 ] || fail "a bad option: not exit 2"
    want "$work/err" "^reprise explain: unknown option '--bogus'" "a bad option: unclear"
    echo '[1, 2]' >"$work/other.json"
    "$build/bin/reprise" explain "$work/other.json" >/dev/null 2>"$work/err"; [ $? = 1 ] || fail "not a stats file: not exit 1"
    want "$work/err" 'other.json: not a reprise stats file \(not a JSON object\)$' "not a stats file: unclear"
    ;;
*) fail "unknown check $what" ;;
esac
echo "ok: $what"
