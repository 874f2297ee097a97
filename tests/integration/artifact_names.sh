#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Artifact names never collide (SPEC section 7): tests "a b", "a_b" and
# "a:b" sanitize alike and each keeps its own heap pair (a hash of the
# name is added where sanitizing changed it), and a suite name of 300
# bytes, longer than a file name may be, is judged with its artifacts
# under a shortened, hashed name.
# Usage: artifact_names.sh NAMES_CASES WORKDIR
set -euo pipefail
bin=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
fail() { echo "artifact_names: $*" >&2; exit 1; }
rc=0
NAMES_CASE=alike "$bin" --report-dir "$work/rep" >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" = 1 ] || fail "exit $rc, expected 1: $(tail -n 3 "$work/err")"
for t in 'a b' a_b 'a:b'; do
    grep -q "leakgate: FAIL names/$t: 112 B" "$work/err" || fail "no FAIL for names/$t"
done
grep -q 'leakgate: FAIL LLLLLLLLLL*/t: 112 B' "$work/err" || fail "the long suite's leak was not judged"
pairs=$(find "$work/rep/names" -name '*.before.heap' | wc -l)
[ "$pairs" = 4 ] || fail "names/ holds $pairs heap pairs, expected 4 (plainleak, a b, a_b, a:b): $(ls "$work/rep/names")"
[ -s "$work/rep/names/a_b.before.heap" ] || fail "a_b keeps its own name"
hashed=$(find "$work/rep/names" -name 'a_b~*.before.heap' | wc -l)
[ "$hashed" = 2 ] || fail "'a b' and 'a:b' have $hashed hashed heap pairs, expected 2"
long=$(find "$work/rep" -maxdepth 1 -name 'LLLL*~*' | wc -l)
[ "$long" = 1 ] || fail "no shortened, hashed directory for the long suite"
# Every printed inspect command names the window's own files.
for t in 'a b' 'a:b'; do
    grep -q 'a_b~[0-9a-f]*\.before\.heap' <<<"$(grep -A12 "leakgate: FAIL names/$t:" "$work/err")" ||
        fail "the report of names/$t does not name its own heap pair"
done
echo "artifact_names: ok"
