#!/bin/sh
# schema_check.sh - the stats file against its documentation: every key that
# docs/stats.md lists (the first column of its key tables, and the per-
# sequence keys it names) must appear in a report from a real run, the
# report must be valid JSON (reprise report reads it back), and its schema
# version must be the documented one.
# usage: schema_check.sh SOURCE_DIR BUILD_DIR MODULE
set -u
src=$1 build=$2 mod=$3
work=${TMPDIR:-/tmp}/reprise-schema.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
drv=$build/cpudriver
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0"
# threads without steady arguments: variants, updates and divergences all occur.
# shellcheck disable=SC2086
env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 \
    REPRISE_DRIVER="$drv/libcuda.so.1" REPRISE_STATS="$work/s.json" $asan \
    "$build/apps/threads" "$mod" 30 >/dev/null || { echo "FAIL: threads"; exit 1; }
"$build/bin/reprise" report "$work/s.json" >/dev/null || { echo "FAIL: the report does not read back"; exit 1; }
grep -q '"version": 1,' "$work/s.json" || { echo "FAIL: schema version"; exit 1; }
# And a run whose driver cannot be loaded, for the keys only it has
# (driver.error).
# shellcheck disable=SC2086
env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 \
    REPRISE_DRIVER=/nonexistent/libcuda.so.1 REPRISE_STATS="$work/nodriver.json" $asan \
    "$build/apps/heat" "$mod" 3 >/dev/null 2>&1
"$build/bin/reprise" report "$work/nodriver.json" >/dev/null || { echo "FAIL: the no-driver report does not read back"; exit 1; }
# Keys from the tables: "| `key` |" rows (a dotted key names its last part).
keys=$(sed -n 's/^| `\([a-z_.]*\)`.*/\1/p' "$src/docs/stats.md" | sed 's/.*\.//' | sort -u)
# Per-sequence keys, named in backticks in the `sequences` row.
seqkeys=$(sed -n 's/^| `sequences` |\(.*\)/\1/p' "$src/docs/stats.md" | grep -o '`[a-z_]*`' | tr -d '`' | sort -u)
missing=0 n=0
for k in $keys $seqkeys; do
    n=$((n + 1))
    cat "$work/s.json" "$work/nodriver.json" | grep -q "\"$k\"" || { echo "FAIL: documented key '$k' is not in the report"; missing=$((missing + 1)); }
done
[ "$n" -ge 60 ] || { echo "FAIL: only $n keys found in docs/stats.md: the table format changed?"; exit 1; }
echo "schema: $n documented keys checked, $missing missing"
[ "$missing" -eq 0 ]
