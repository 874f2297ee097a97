#!/bin/sh
# SPDX-License-Identifier: MIT
# prefix.sh CTEST LEAKGATE WORK INCLUDE...
#
# The three twins discovered with TEST_PREFIX twin_a/, twin_b/, twin_c/
# (INCLUDE: the files leakgate_discover_tests generated), run by one
# `ctest -j8` with LEAKGATE_JUNIT, LEAKGATE_JSON and LEAKGATE_REPORT_DIR
# set: the ctest test names (`ctest -N`) and the JUnit testcases
# ("CLASSNAME/NAME") are the same list; the one failure is twin_b's, in
# junit.xml, index.html and `leakgate report`, under its ctest name.
# Without the [outputs] tests (ctest -E) the test processes write no
# file; with -R, ctest adds them and the files hold the selection.
set -u
CTEST=$1 LEAKGATE=$2 WORK=$3
shift 3

fail() {
    echo "prefix: $*" >&2
    exit 1
}

rm -rf "$WORK" && mkdir -p "$WORK/ctest" || fail "cannot create $WORK"
for inc in "$@"; do
    printf 'include("%s")\n' "$inc"
done >"$WORK/ctest/CTestTestfile.cmake"
"$CTEST" --test-dir "$WORK/ctest" -N |
    sed -n 's/^ *Test *#[0-9]*: //p' | grep -v '/\[outputs\]$' | sort >"$WORK/ctest_names"
[ "$(wc -l <"$WORK/ctest_names")" -eq 9 ] ||
    fail "ctest -N: $(cat "$WORK/ctest_names")"
LEAKGATE_JUNIT=$WORK/junit.xml LEAKGATE_JSON=$WORK/results.json \
    LEAKGATE_REPORT_DIR=$WORK/report \
    "$CTEST" --test-dir "$WORK/ctest" -j8 >"$WORK/ctest.log" 2>&1
grep -q '1 tests failed out of 12' "$WORK/ctest.log" ||
    fail "ctest: $(tail -5 "$WORK/ctest.log")"
sed -n 's/.*<testcase classname="\([^"]*\)" name="\([^"]*\)".*/\1\/\2/p' \
    "$WORK/junit.xml" | sed 's/&#x5B;/[/g; s/&#x5D;/]/g' | sort >"$WORK/cases"
cmp -s "$WORK/ctest_names" "$WORK/cases" ||
    fail "ctest names and JUnit testcases differ:
$(diff "$WORK/ctest_names" "$WORK/cases")"
grep -q '<testsuites name="leakgate" tests="9" failures="1"' \
    "$WORK/junit.xml" ||
    fail "counts: $(grep -o '<testsuites [^>]*' "$WORK/junit.xml")"
grep -q 'id="summary">1 of 9 windows over the limits' \
    "$WORK/report/index.html" ||
    fail "index.html: $(grep -o 'id="summary">[^<]*' "$WORK/report/index.html")"
grep -q '<code>twin_b/twin/work</code>' "$WORK/report/index.html" ||
    fail "index.html does not name twin_b/twin/work"
"$LEAKGATE" report "$WORK/results.json" >"$WORK/report.out" 2>&1
grep -q '^  FAIL twin_b/twin/work: 112 B (100 B requested) retained' "$WORK/report.out" ||
    fail "leakgate report: $(grep -A2 'result file' "$WORK/report.out")"
grep -q ', 9 windows: 8 passed the gate, 1 failed it' "$WORK/report.out" ||
    fail "leakgate report: $(grep 'result file' "$WORK/report.out")"

# The tests themselves only journal (O(their records)): without the
# [outputs] tests, no file is written.
rm -rf "$WORK/.junit.xml.leakgate" "$WORK/junit.xml"
LEAKGATE_JUNIT=$WORK/junit.xml \
    "$CTEST" --test-dir "$WORK/ctest" -j8 -E '\[outputs\]' >"$WORK/ctest.log" 2>&1
[ ! -e "$WORK/junit.xml" ] ||
    fail "a test process wrote junit.xml (the [outputs] tests were excluded)"
# One journal for the run (no file per process), with the lines of the
# 9 processes: each ended with a D record.
[ "$(find "$WORK/.junit.xml.leakgate" -type f -name journal | wc -l)" -eq 1 ] ||
    fail "expected one journal: $(find "$WORK/.junit.xml.leakgate" -type f)"
[ "$(find "$WORK/.junit.xml.leakgate" -name '*.log' | wc -l)" -eq 0 ] ||
    fail "a journal per process: $(find "$WORK/.junit.xml.leakgate" -name '*.log')"
[ "$(find "$WORK/.junit.xml.leakgate" -type f -name journal -exec cat {} + |
    grep -c '^[0-9]\{20\}-[0-9]*	1	D$')" -eq 9 ] ||
    fail "expected 9 writers that ended in the journal"
rm -rf "$WORK/.junit.xml.leakgate" "$WORK/junit.xml"
LEAKGATE_JUNIT=$WORK/junit.xml "$CTEST" --test-dir "$WORK/ctest" -j8 \
    -R '^twin_b/twin/' -FC leakgate_outputs >"$WORK/ctest.log" 2>&1
[ ! -e "$WORK/junit.xml" ] ||
    fail "-R with -FC leakgate_outputs: a test process wrote junit.xml"
# A selection: ctest adds the fixture's [outputs] tests by itself.
LEAKGATE_JUNIT=$WORK/junit.xml \
    "$CTEST" --test-dir "$WORK/ctest" -j8 -R '^twin_a/' >"$WORK/ctest.log" 2>&1
grep -q 'twin_a/outputs_twin_a/\[outputs\] .*Passed' "$WORK/ctest.log" ||
    fail "-R: no [outputs] test ran: $(cat "$WORK/ctest.log")"
grep -q '<testsuites name="leakgate" tests="3" failures="0"' \
    "$WORK/junit.xml" ||
    fail "-R: $(grep -o '<testsuites [^>]*' "$WORK/junit.xml")"
echo "prefix: 9 ctest names = 9 JUnit testcases; twin_b/twin/work failed everywhere; tests only journal, [outputs] writes"
