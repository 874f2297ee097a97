#!/bin/sh
# SPDX-License-Identifier: MIT
# by_binary.sh LEAKGATE LEAKY TWIN_A TWIN_B WORK
#
# Three binaries built from one source share --junit, --json and
# --report-dir in one run (LEAKGATE_RUN_ID); only LEAKY leaks.  Run twice,
# LEAKY first and then last: the passing twins' records of the same names
# must never replace its failure.  junit.xml has one testcase per binary
# for each name ("BINARY:SUITE" classnames), the failure under LEAKY's;
# JSON, index.html and `leakgate report` count the 3 binaries' windows
# apart (9 windows, 1 failed, named "BINARY:twin/work").  Then with
# LEAKGATE_TEST_PREFIX (what leakgate_discover_tests' TEST_PREFIX sets):
# classnames are "PREFIXtwin", the ctest test's "PREFIXtwin/work".
set -u
LEAKGATE=$1 LEAKY=$2 TWIN_A=$3 TWIN_B=$4 WORK=$5

fail() {
    echo "by_binary: $*" >&2
    exit 1
}

leaky=$(basename "$LEAKY")
x=$WORK/junit.xml

# run ORDER: the three binaries, LEAKY first or last.
run() {
    rm -rf "$WORK" && mkdir -p "$WORK" || fail "cannot create $WORK"
    export LEAKGATE_RUN_ID=by_binary LEAKGATE_JUNIT=$WORK/junit.xml \
        LEAKGATE_JSON=$WORK/results.json LEAKGATE_REPORT_DIR=$WORK/report
    case $1 in
    first) bins="$LEAKY $TWIN_A $TWIN_B" ;;
    *) bins="$TWIN_A $TWIN_B $LEAKY" ;;
    esac
    for bin in $bins; do
        prefix=
        [ -n "${PREFIXED:-}" ] && prefix="$(basename "$bin")_" &&
            export LEAKGATE_TEST_PREFIX="$prefix"
        "$bin" >"$WORK/run.log" 2>&1
        rc=$?
        if [ "$bin" = "$LEAKY" ]; then
            [ $rc -eq 1 ] || fail "$1: $bin: exit $rc, expected 1 (its leak)"
        else
            [ $rc -eq 0 ] || fail "$1: $bin: exit $rc"
        fi
    done
    unset LEAKGATE_TEST_PREFIX
}

# check ORDER CLASS: CLASS is the leaky binary's classname of suite twin.
check() {
    n=$(grep -c '<testcase classname="[^"]*twin" name="work"' "$x")
    [ "$n" -eq 3 ] || fail "$1: $n testcases of twin/work (expected 3, one a binary)"
    grep -q "<testsuites name=\"leakgate\" tests=\"9\" failures=\"1\"" "$x" ||
        fail "$1: counts: $(grep -o '<testsuites [^>]*' "$x")"
    sed -n "/<testcase classname=\"$2\" name=\"work\"/,/<\/testcase>/p" \
        "$x" | grep -q '<failure' || fail "$1: $2/work has no failure"
    grep -q 'FAIL twin/work: 112 B' "$WORK/results.json" ||
        fail "$1: results.json lost the failure"
    grep -q 'id="summary">1 of 9 windows over the limits · 8 passed' \
        "$WORK/report/index.html" ||
        fail "$1: index.html: $(grep -o 'id="summary">[^<]*' "$WORK/report/index.html")"
    grep -q "<code>$2/work</code>" "$WORK/report/index.html" ||
        fail "$1: index.html does not name $2/work"
    "$LEAKGATE" report "$WORK/results.json" >"$WORK/report.out" 2>&1
    [ $? -eq 1 ] || fail "$1: leakgate report: exit $? (expected 1)"
    grep -q '^leakgate: 1 result file, 9 windows: 8 passed the gate, 1 failed it' \
        "$WORK/report.out" ||
        fail "$1: leakgate report: $(grep 'result file' "$WORK/report.out")"
    grep -q "^  FAIL $2/work: 112 B (100 B requested) retained" "$WORK/report.out" ||
        fail "$1: leakgate report does not name $2/work"
    # leakgate report's own JUnit from the merged JSON: the same testcases.
    "$LEAKGATE" report "$WORK/results.json" --junit "$WORK/again.xml" \
        >/dev/null 2>&1
    grep -o '<testcase classname="[^"]*" name="[^"]*"' "$x" | sort >"$WORK/a"
    grep -o '<testcase classname="[^"]*" name="[^"]*"' "$WORK/again.xml" |
        sort >"$WORK/b"
    cmp -s "$WORK/a" "$WORK/b" ||
        fail "$1: leakgate report --junit: $(diff "$WORK/a" "$WORK/b")"
}

for order in first last; do
    run $order
    check "$order" "$leaky:twin"
done
PREFIXED=1
for order in first last; do
    run $order
    check "prefixed, $order" "${leaky}_twin"
    [ "$(grep -c '<testcase classname="outputs_twin_[abc]_twin"' "$x")" -eq 9 ] ||
        fail "prefixed: $(grep -o '<testcase classname="[^"]*"' "$x")"
done
echo "by_binary: 3 binaries, leaky first and last, prefixed or not: one failure kept in junit.xml, JSON, index.html and leakgate report"
