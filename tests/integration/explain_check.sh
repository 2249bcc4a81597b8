#!/bin/sh
# explain_check.sh - what a person reads says why and what to do:
#   names:  a C++ kernel (cxxnames, whose kernel has the mangled name nvcc
#           gives tk::scale_inplace<float>) appears demangled in the summary,
#           in `reprise report` and on its page (whole in a tooltip), while
#           the stats file keeps the raw name;
#   bounds: a hit bound (heat with REPRISE_MAX_OPS below its step) is named
#           by its option and limit in the summary, the report and the page,
#           counted under bound_hits_by.max_ops in the file, with advice.
# usage: explain_check.sh BUILD_DIR MODULE names|bounds
set -u
build=$1 mod=$2 what=$3
work=${TMPDIR:-/tmp}/reprise-explain.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
drv=$build/cpudriver
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0"
fail() { echo "FAIL: $*"; exit 1; }
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
    want "$work/summary" '^reprise: sequence [0-9]+: 3 ops from tk::scale_inplace<float>, ' \
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
*) fail "unknown check $what" ;;
esac
echo "ok: $what"
