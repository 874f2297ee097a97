#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Result files left by an earlier run never pass for this one's: a run
# that stops at a configuration error (exit 2) or is killed leaves no
# --junit or --json file; one that ends writes both.
# Usage: stale_results.sh CORPUS NAMES_CASES BAD_YAML WORKDIR
set -euo pipefail
corpus=$1 names=$2 bad=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
fail() { echo "stale_results: $*" >&2; exit 1; }
stale() {
    printf '<testsuites tests="9" failures="0"/>\n' >"$work/j.xml"
    printf '{"stale": true}\n' >"$work/r.json"
}
gone() { # what
    [ ! -e "$work/j.xml" ] || fail "$1: the earlier run's JUnit file is still there"
    [ ! -e "$work/r.json" ] || fail "$1: the earlier run's JSON file is still there"
}

stale
rc=0
"$corpus" --thresholds "$bad" --junit "$work/j.xml" --json "$work/r.json" \
    >/dev/null 2>"$work/err" || rc=$?
[ "$rc" = 2 ] || fail "bad thresholds: exit $rc, expected 2"
gone "a configuration error"

# Killed while a test hangs (it blocks every signal but SIGKILL): once
# the hanging test has started (its run is counted in the marker).
stale
NAMES_CASE=deaf NAMES_DEAF_RUN=1 NAMES_MARKER="$work/marker" \
    "$names" --junit "$work/j.xml" --json "$work/r.json" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1200); do
    [ -s "$work/marker.runs" ] && break
    sleep 0.1
done
[ -s "$work/marker.runs" ] || { kill -KILL "$pid"; fail "the hanging test never started"; }
kill -KILL "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 137 ] || fail "killed run: exit $rc, expected 137"
gone "a killed run"

# A run that ends writes its own.
stale
rc=0
"$corpus" --filter clean/empty --junit "$work/j.xml" --json "$work/r.json" \
    >/dev/null 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "clean run: exit $rc, expected 0"
grep -q 'classname="clean" name="empty"' "$work/j.xml" || fail "clean run: no JUnit of its own"
grep -q '"clean/empty"' "$work/r.json" || fail "clean run: no JSON of its own"
echo "stale_results: ok"
