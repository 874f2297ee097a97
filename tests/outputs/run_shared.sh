#!/bin/sh
# SPDX-License-Identifier: MIT
# run_shared.sh LEAKGATE PROGRAM WORK
#
# `leakgate run` shares outputs as a linked binary does: two runs of an
# unmodified CUnit program (tests/run's run_basic), one with a leak and
# one that dies of SIGSEGV in a test, given one LEAKGATE_RUN_ID, the same
# --junit FILE and --report-dir: one JUnit with the windows of both once
# each, both failures, and an index.html that agrees.
set -u
LEAKGATE=$1 PROGRAM=$2 WORK=$3

fail() {
    echo "run_shared: $*" >&2
    exit 1
}

rm -rf "$WORK" && mkdir -p "$WORK" || fail "cannot create $WORK"
export LEAKGATE_RUN_ID=run_shared
for suites in leaky crash; do
    "$LEAKGATE" run --junit "$WORK/junit.xml" --report-dir "$WORK/report" \
        -- "$PROGRAM" "$suites" >"$WORK/$suites.log" 2>&1
    [ $? -eq 1 ] || fail "leakgate run ... $suites: expected exit 1"
done
got=$(sed -n 's/.*<testcase classname="\([^"]*\)" name="\([^"]*\)".*/\1\/\2/p' \
    "$WORK/junit.xml" | sort | tr '\n' ' ')
want="crash/after crash/before crash/segv leaky/[suite] leaky/clean leaky/leak "
[ "$got" = "$want" ] || fail "testcases: $got (expected $want)"
grep -q '<testsuites name="leakgate" tests="6" failures="2" errors="0" skipped="1"' \
    "$WORK/junit.xml" || fail "counts: $(grep -o '<testsuites [^>]*' "$WORK/junit.xml")"
grep -q 'FAIL leaky/leak: 112 B' "$WORK/junit.xml" || fail "no leak failure"
grep -q 'the program died of SIGSEGV (Segmentation fault) in crash/segv' \
    "$WORK/junit.xml" || fail "no crash failure"
grep -q 'id="summary">1 of 6 windows over the limits' "$WORK/report/index.html" ||
    fail "index.html: $(grep -o 'id="summary">[^<]*' "$WORK/report/index.html")"
echo "run_shared: two leakgate runs, one junit.xml and index.html of 6 windows (one never run)"
