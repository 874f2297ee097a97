#!/bin/sh
# SPDX-License-Identifier: MIT
# shared_outputs.sh CTEST INCLUDE CORPUS LEAKGATE WORK RUNS
#
# Runs the discovered tests of outputs_corpus (INCLUDE: the file
# leakgate_discover_tests generated) RUNS times under `ctest -j8`, every
# process writing LEAKGATE_JUNIT=WORK/junit.xml and
# LEAKGATE_REPORT_DIR=WORK/report, and checks each time: every listed
# window is one testcase, exactly once; the leaks and the failed assertion
# are the failures; killed/self (SIGKILL) is the one error; index.html
# says the same; one run directory in each store.  The files are never
# removed between runs: each run must start fresh by itself.  Then: a
# subset run holds only its tests (nothing stale), and two ctest runs
# with one LEAKGATE_RUN_ID make one run.
set -u
CTEST=$1 INCLUDE=$2 CORPUS=$3 LEAKGATE=$4 WORK=$5 RUNS=$6

fail() {
    echo "shared_outputs: $*" >&2
    exit 1
}

rm -rf "$WORK"
mkdir -p "$WORK/ctest" || fail "cannot create $WORK"
printf 'include("%s")\n' "$INCLUDE" >"$WORK/ctest/CTestTestfile.cmake"
"$CORPUS" --list | sort >"$WORK/expected" || fail "$CORPUS --list failed"
[ "$(wc -l <"$WORK/expected")" -ge 200 ] || fail "fewer than 200 tests"
JUNIT=$WORK/junit.xml
REPORT=$WORK/report

# "suite/test" of every testcase, and of those with a <failure> / <error>.
cases() {
    sed -n 's/.*<testcase classname="\([^"]*\)" name="\([^"]*\)".*/\1\/\2/p' \
        "$1" | sed 's/&#x5B;/[/g; s/&#x5D;/]/g'
}
with() {
    awk -v tag="<$2 " '
        /<testcase / {
            match($0, /classname="[^"]*"/); c = substr($0, RSTART + 11, RLENGTH - 12)
            match($0, / name="[^"]*"/); n = substr($0, RSTART + 7, RLENGTH - 8)
        }
        index($0, tag) { print c "/" n }' "$1"
}

# check NAME EXPECTED_LIST TESTS FAILURES ERRORS BANNER
check() {
    label=$1 want=$2 tests=$3 failures=$4 errors=$5 banner=$6
    [ -f "$JUNIT" ] || fail "$label: no $JUNIT"
    cases "$JUNIT" | sort >"$WORK/got"
    dups=$(uniq -d <"$WORK/got")
    [ -z "$dups" ] || fail "$label: testcases more than once: $dups"
    cmp -s "$WORK/got" "$want" ||
        fail "$label: testcases differ from the listed windows:
$(diff "$want" "$WORK/got" | head -20)"
    grep -q "<testsuites name=\"leakgate\" tests=\"$tests\" failures=\"$failures\" errors=\"$errors\"" "$JUNIT" ||
        fail "$label: counts: $(grep -o '<testsuites [^>]*' "$JUNIT")"
    grep -q "id=\"summary\">$banner<" "$REPORT/index.html" ||
        fail "$label: index.html: $(grep -o 'id="summary">[^<]*' "$REPORT/index.html")"
    for store in "$WORK/.junit.xml.leakgate" "$WORK/.results.json.leakgate" \
        "$REPORT/.leakgate"; do
        dirs=$(find "$store" -mindepth 1 -maxdepth 1 -name 'run-*' | wc -l)
        [ "$dirs" -eq 1 ] || fail "$label: $dirs run directories in $store"
    done
}

run_ctest() {
    LEAKGATE_JUNIT=$JUNIT LEAKGATE_JSON=$WORK/results.json \
        LEAKGATE_REPORT_DIR=$REPORT \
        "$CTEST" --test-dir "$WORK/ctest" -j8 "$@" >"$WORK/ctest.log" 2>&1
}

printf '%s\n' s02/t05 s04/t09 s07/t17 >"$WORK/want_failures"
n=$(wc -l <"$WORK/expected")
start=$(date +%s)
i=1
while [ "$i" -le "$RUNS" ]; do
    run_ctest
    check "run $i" "$WORK/expected" "$n" 3 1 \
        "2 of $n windows over the limits · $((n - 3)) passed · 1 not judged"
    with "$JUNIT" failure | sort >"$WORK/failures"
    cmp -s "$WORK/failures" "$WORK/want_failures" ||
        fail "run $i: failures: $(tr '\n' ' ' <"$WORK/failures")"
    [ "$(with "$JUNIT" error)" = "killed/self" ] ||
        fail "run $i: errors: $(with "$JUNIT" error | tr '\n' ' ')"
    grep -q 'type="killed">killed: the process (pid [0-9]*) ended while this test ran' "$JUNIT" ||
        fail "run $i: the killed test does not say how it ended"
    grep -q 'killed: the process' "$REPORT/index.html" ||
        fail "run $i: index.html does not show the killed test"
    # The merged JSON results: leakgate report sees the same run.
    "$LEAKGATE" report "$WORK/results.json" >"$WORK/report.out" 2>&1
    grep -q "1 result file, $n windows: $((n - 3)) passed the gate, 2 failed it, 1 not judged; 2 with failed assertions" \
        "$WORK/report.out" ||
        fail "run $i: leakgate report: $(grep 'result file' "$WORK/report.out")"
    i=$((i + 1))
done
echo "shared_outputs: $RUNS runs of ctest -j8 over $n tests: every testcase once, 3 failures, 1 killed; $(($(date +%s) - start)) s"

# A later run of some tests only: nothing of the runs before it.
run_ctest -R '^s00/'
grep '^s00/' "$WORK/expected" >"$WORK/expected_s00"
check "subset" "$WORK/expected_s00" 21 0 0 \
    "0 of 21 windows over the limits · 21 passed · 0 not judged"

# One LEAKGATE_RUN_ID across two ctest runs: one run of both subsets; a
# new id starts fresh.
LEAKGATE_RUN_ID=joined run_ctest -R '^s01/'
LEAKGATE_RUN_ID=joined run_ctest -R '^s03/'
grep -e '^s01/' -e '^s03/' "$WORK/expected" >"$WORK/expected_joined"
check "joined" "$WORK/expected_joined" 42 0 0 \
    "0 of 42 windows over the limits · 42 passed · 0 not judged"
LEAKGATE_RUN_ID=fresh run_ctest -R '^s01/'
grep '^s01/' "$WORK/expected" >"$WORK/expected_s01"
check "fresh" "$WORK/expected_s01" 21 0 0 \
    "0 of 21 windows over the limits · 21 passed · 0 not judged"

echo "shared_outputs: subset, joined and fresh runs: nothing stale"
