#!/bin/sh
# SPDX-License-Identifier: MIT
# many.sh CTEST LEAKGATE WORK RUNS INCLUDE...
#
# The three builds of outputs_many.c, discovered under the prefixes
# many_a/, many_b/, many_c/ (INCLUDE: the files leakgate_discover_tests
# generated), run RUNS times by `ctest -j8` with README step 6's output
# variables.  Each run: ctest says one test failed (many_b/s01/t03), and
# junit.xml (one testcase per window, one failure, under that ctest name),
# results.json (one "fail" record), index.html (1 of N windows over the
# limits, the row named) and `leakgate report` all say exactly that.  The
# files are never removed between runs.  Prints each run's seconds.
set -u
CTEST=$1 LEAKGATE=$2 WORK=$3 RUNS=$4
shift 4

fail() {
    echo "many: $*" >&2
    exit 1
}

rm -rf "$WORK" && mkdir -p "$WORK/ctest" || fail "cannot create $WORK"
for inc in "$@"; do
    printf 'include("%s")\n' "$inc"
done >"$WORK/ctest/CTestTestfile.cmake"
"$CTEST" --test-dir "$WORK/ctest" -N |
    sed -n 's/^ *Test *#[0-9]*: //p' | grep -v '/\[outputs\]$' |
    sort >"$WORK/ctest_names"
n=$(wc -l <"$WORK/ctest_names")
all=$("$CTEST" --test-dir "$WORK/ctest" -N | sed -n 's/^Total Tests: //p')
cd "$WORK" || fail "cd $WORK"
i=1
while [ "$i" -le "$RUNS" ]; do
    start=$(date +%s.%N)
    LEAKGATE_JUNIT=$WORK/junit.xml LEAKGATE_JSON=$WORK/results.json \
        LEAKGATE_REPORT_DIR=$WORK/report \
        "$CTEST" --test-dir "$WORK/ctest" -j8 >"$WORK/ctest.log" 2>&1
    end=$(date +%s.%N)
    grep -q "1 tests failed out of $all\$" "$WORK/ctest.log" ||
        fail "run $i: ctest: $(tail -3 "$WORK/ctest.log")"
    grep -q '^[[:space:]]*[0-9]* - many_b/s01/t03 (Failed)' "$WORK/ctest.log" ||
        fail "run $i: ctest's failure: $(grep 'Failed' "$WORK/ctest.log")"
    sed -n 's/.*<testcase classname="\([^"]*\)" name="\([^"]*\)".*/\1\/\2/p' \
        junit.xml | sed 's/&#x5B;/[/g; s/&#x5D;/]/g' | sort >cases
    cmp -s ctest_names cases ||
        fail "run $i: ctest names and JUnit testcases differ:
$(diff ctest_names cases | head)"
    grep -q "<testsuites name=\"leakgate\" tests=\"$n\" failures=\"1\" errors=\"0\"" \
        junit.xml || fail "run $i: junit counts: $(grep -o '<testsuites [^>]*' junit.xml)"
    sed -n '/<testcase classname="many_b\/s01" name="t03"/,/<\/testcase>/p' \
        junit.xml | grep -q '<failure' || fail "run $i: many_b/s01/t03 no failure"
    [ "$(grep -c '"status": "fail"' results.json)" -eq 1 ] ||
        fail "run $i: results.json: $(grep -c '"status": "fail"' results.json) failed records"
    grep -q "id=\"summary\">1 of $n windows over the limits · $((n - 1)) passed" \
        report/index.html ||
        fail "run $i: index.html: $(grep -o 'id="summary">[^<]*' report/index.html)"
    grep -q '<h2>FAIL <code>many_b/s01/t03</code>' report/index.html ||
        fail "run $i: index.html does not name many_b/s01/t03"
    "$LEAKGATE" report results.json >report.out 2>&1
    grep -q ", $n windows: $((n - 1)) passed the gate, 1 failed it" report.out ||
        fail "run $i: leakgate report: $(grep 'result file' report.out)"
    grep -q '^  FAIL many_b/s01/t03: ' report.out ||
        fail "run $i: leakgate report: $(grep '^  FAIL' report.out)"
    echo "many: run $i: $n windows, the one failure everywhere, $(awk "BEGIN { printf \"%.2f\", $end - $start }") s"
    i=$((i + 1))
done
