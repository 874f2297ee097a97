#!/bin/sh
# SPDX-License-Identifier: MIT
# by_binary.sh LEAKY TWIN_A TWIN_B WORK
#
# Three binaries built from one source share --junit, --json and
# --report-dir in one run (LEAKGATE_RUN_ID); only LEAKY leaks, and it
# runs first: the passing twins' records of the same names must not
# replace its failure.  junit.xml has one testcase per binary for each
# name ("BINARY:SUITE" classnames), the failure under LEAKY's; JSON and
# index.html keep the failure.
set -u
LEAKY=$1 TWIN_A=$2 TWIN_B=$3 WORK=$4

fail() {
    echo "by_binary: $*" >&2
    exit 1
}

rm -rf "$WORK" && mkdir -p "$WORK" || fail "cannot create $WORK"
export LEAKGATE_RUN_ID=by_binary LEAKGATE_JUNIT=$WORK/junit.xml \
    LEAKGATE_JSON=$WORK/results.json LEAKGATE_REPORT_DIR=$WORK/report
"$LEAKY" >"$WORK/leaky.log" 2>&1
[ $? -eq 1 ] || fail "$LEAKY: expected exit 1 (its leak)"
for twin in "$TWIN_A" "$TWIN_B"; do
    "$twin" >"$WORK/twin.log" 2>&1 || fail "$twin: exit $?"
done
x=$WORK/junit.xml
leaky=$(basename "$LEAKY")
n=$(grep -c '<testcase classname="[^"]*:twin" name="work"' "$x")
[ "$n" -eq 3 ] || fail "$n testcases of twin/work (expected 3, one a binary)"
grep -q "<testsuites name=\"leakgate\" tests=\"[0-9]*\" failures=\"1\"" "$x" ||
    fail "counts: $(grep -o '<testsuites [^>]*' "$x")"
sed -n "/<testcase classname=\"$leaky:twin\" name=\"work\"/,/<\/testcase>/p" \
    "$x" | grep -q '<failure' || fail "$leaky's twin/work has no failure"
grep -q 'FAIL twin/work: 112 B' "$WORK/results.json" ||
    fail "results.json lost the failure"
grep -q 'id="summary">1 of [0-9]* windows over the limits' \
    "$WORK/report/index.html" ||
    fail "index.html: $(grep -o 'id="summary">[^<]*' "$WORK/report/index.html")"
echo "by_binary: 3 binaries, one failure kept in junit.xml, JSON and index.html"
