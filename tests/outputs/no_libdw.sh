#!/bin/sh
# SPDX-License-Identifier: MIT
# no_libdw.sh PASSING LEAKING WORK
#
# A process whose windows all pass writes the shared --junit and --json
# files naming its binary and build-id without loading libdw (and its
# four libraries) for them; a process with a failing window, whose
# report needs symbols, does load it (the check can see it).
set -u
PASSING=$1 LEAKING=$2 WORK=$3

fail() {
    echo "no_libdw: $*" >&2
    exit 1
}

# loaded BIN FILTER NAME: run BIN under LD_DEBUG=libs, outputs in WORK/NAME.
loaded() {
    rm -rf "$WORK/$3" && mkdir -p "$WORK/$3" || fail "cannot create $WORK/$3"
    LD_DEBUG=libs LEAKGATE_JUNIT=$WORK/$3/junit.xml \
        LEAKGATE_JSON=$WORK/$3/results.json \
        "$1" --filter "$2" >"$WORK/$3/out" 2>&1
    echo $? >"$WORK/$3/rc"
    grep -c 'calling init: .*libdw' "$WORK/$3/out"
}

n=$(loaded "$PASSING" s02/t05 pass)
[ "$(cat "$WORK/pass/rc")" -eq 0 ] || fail "passing run: exit $(cat "$WORK/pass/rc")"
[ "$n" -eq 0 ] || fail "a passing process loaded libdw for its outputs"
grep -q "\"binary\": \"$PASSING\"" "$WORK/pass/results.json" ||
    fail "results.json does not name $PASSING"
grep -q '"build_id": "[0-9a-f]\{40\}"' "$WORK/pass/results.json" ||
    fail "results.json has no build-id: $(grep -o '"build_id": "[^"]*"' "$WORK/pass/results.json")"
n=$(loaded "$LEAKING" s01/t03 leak)
[ "$(cat "$WORK/leak/rc")" -eq 1 ] || fail "leaking run: exit $(cat "$WORK/leak/rc")"
[ "$n" -gt 0 ] || fail "the leaking process did not load libdw (LD_DEBUG cannot see it?)"
echo "no_libdw: a passing process names its binary and build-id without libdw; a failing one loads it"
