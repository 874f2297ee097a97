#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A replay measures its tests by allocation order (harness/gate/gate_fork.c):
# the leaking test names/counted is run by the first process (which logs
# its allocations), the replay itself (selecting the first pass's
# ordinals) and the copy that answers the warm-up probe's question: 3
# runs, one replay process, the exact report.  When the first pass
# allocated more than its log holds ($NAMES_COUNTED_MANY), a logging copy
# of the replay finds the ordinals: 4 runs, the same report.  With
# --report-dir too (the heap pair is written from the window's stacks), and
# jeprof and `leakgate diff` read the pair.  The same verdict and stack
# either way.
# Usage: replay_ordinals.sh NAMES_CASES WORKDIR LEAKGATE_CLI
set -euo pipefail
bin=$1 work=$2 lg=$3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "replay_ordinals: $*" >&2; exit 1; }

run() { # name [args...] -> $work/name.err, status in $work/name.rc
    local name=$1
    shift
    local rc=0
    NAMES_CASE=counted NAMES_MARKER="$work/$name.marker" \
        "$bin" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
    echo "$rc" >"$work/$name.rc"
}
runs() { wc -l <"$work/$1.marker.runs" | tr -d ' '; }
# The processes the first process started that ran the test: the replay
# alone (a probe replay would be a second).
replays() { # name
    local first
    first=$(head -n 1 "$work/$1.marker.runs" | cut -d' ' -f1)
    awk -v p="$first" '$2 == p' "$work/$1.marker.runs" | wc -l | tr -d ' '
}
check_report() { # name
    local err=$work/$1.err
    [ "$(cat "$work/$1.rc")" = 1 ] || fail "$1: exit $(cat "$work/$1.rc"), expected 1"
    grep -q '^leakgate: FAIL names/counted: 112 B (100 B requested) retained in 1 object' "$err" ||
        fail "$1: no FAIL report for names/counted"
    grep -qE '^      leak +.*names_cases\.c:[0-9]+$' "$err" ||
        fail "$1: the report has no leak() frame"
    if grep -q 'replaying the run once more' "$err"; then
        fail "$1: a second, exact replay ran"
    fi
    return 0
}

run ordinals
check_report ordinals
[ "$(runs ordinals)" = 3 ] ||
    fail "ordinals: the test ran $(runs ordinals) times, expected 3 (first run, replay, probe copy)"
[ "$(replays ordinals)" = 1 ] ||
    fail "ordinals: $(replays ordinals) processes of the first one ran the test, expected 1 (the replay)"

NAMES_COUNTED_MANY=1 run many
check_report many
[ "$(runs many)" = 4 ] ||
    fail "many: the test ran $(runs many) times, expected 4 (first run, logging copy, replay, probe copy)"
[ "$(replays many)" = 1 ] ||
    fail "many: $(replays many) processes of the first one ran the test, expected 1 (the replay)"
diff <(grep -A3 '^leakgate: FAIL names/counted' "$work/ordinals.err" | sed -n 2,3p) \
     <(grep -A3 '^leakgate: FAIL names/counted' "$work/many.err" | sed -n 2,3p) ||
    fail "many: its report's stack differs"

run exact --report-dir "$work/rep"
check_report exact
[ "$(runs exact)" = "$(runs ordinals)" ] ||
    fail "exact: the test ran $(runs exact) times, expected $(runs ordinals) (as without --report-dir)"
[ "$(replays exact)" = 1 ] ||
    fail "exact: $(replays exact) processes of the first one ran the test, expected 1 (the replay)"
[ -s "$work/rep/names/counted.before.heap" ] ||
    fail "exact: no heap profile among the artifacts"
# The pair says what the report says: 112 B in 1 object at leak().
"$lg" diff "$work/rep/names/counted.before.heap" \
    "$work/rep/names/counted.after.heap" >"$work/diff.out" 2>&1 ||
    fail "leakgate diff of the pair failed: $(cat "$work/diff.out")"
grep -q '^leakgate diff: 112 B retained in 1 object by 1 stack' "$work/diff.out" ||
    fail "leakgate diff of the pair: $(cat "$work/diff.out")"
grep -qE '^      leak +.*names_cases\.c:[0-9]+$' "$work/diff.out" ||
    fail "leakgate diff of the pair names no leak() frame"

# The same stack, line for line, measured either way.
diff <(grep -A3 '^leakgate: FAIL names/counted' "$work/ordinals.err" | sed -n 2,3p) \
     <(grep -A3 '^leakgate: FAIL names/counted' "$work/exact.err" | sed -n 2,3p) ||
    fail "the two reports' stacks differ"
echo "replay_ordinals: ok"
