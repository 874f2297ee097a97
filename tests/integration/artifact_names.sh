#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Artifact names never collide (SPEC section 7): tests "a b", "a_b" and
# "a:b" sanitize alike and each keeps its own heap pair (a hash of the
# name is added where sanitizing changed it), and a suite name of 300
# bytes, longer than a file name may be, is judged with its artifacts
# under a shortened, hashed name.  Windows of two ctest prefixes or two
# binaries sharing a report dir keep files of their own.
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
# Windows of different origins under one report dir never share a file
# (SPEC section 7): the same test of two ctest prefixes, and of a copy of
# the binary, each keeps its own heap pair, the first origin the plain
# name; a second run of an origin keeps its name; each report's inspect
# command names its own files with its own binary.
cp "$bin" "$work/copy"
run_origin() { # NAME BINARY [PREFIX]
    local name=$1 b=$2 rc=0
    LEAKGATE_TEST_PREFIX=${3:-} NAMES_CASE=alike "$b" --filter 'names/plainleak' \
        --report-dir "$work/shared" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
    [ "$rc" = 1 ] || fail "$name: exit $rc, expected 1: $(tail -n 3 "$work/$name.err")"
}
run_origin first "$bin"
run_origin pa "$bin" pa/
run_origin pb "$bin" pb/
run_origin copy "$work/copy"
run_origin again "$bin"
sets=$(find "$work/shared/names" -name 'plainleak*.before.heap' | wc -l)
[ "$sets" = 4 ] || fail "4 origins left $sets heap pairs: $(ls "$work/shared/names")"
inspect_of() { grep 'inspect: jeprof' "$work/$1.err" || fail "$1: no inspect line"; }
[ "$(inspect_of first)" = "$(inspect_of again)" ] || fail "a second run of one origin changed its names"
grep -q "names/plainleak\.before\.heap $bin " <<<"$(inspect_of first)" ||
    fail "the first origin does not hold the plain name: $(inspect_of first)"
for o in pa pb copy; do
    line=$(inspect_of "$o")
    grep -q 'names/plainleak@[^ ]*~[0-9a-f]*\.before\.heap' <<<"$line" ||
        fail "$o: not a name of its own: $line"
done
grep -q 'plainleak@pa_~' <<<"$(inspect_of pa)" || fail "pa/: the prefix is not in its name"
grep -q "plainleak@copy~[0-9a-f]*.before.heap $work/copy " <<<"$(inspect_of copy)" ||
    fail "the copy's command does not pair its files with its binary: $(inspect_of copy)"
# index.html (one page for the run's five processes) pairs each heap
# pair with its own binary too.
grep -q "plainleak@copy~[0-9a-f]*\.before\.heap $work/copy " "$work/shared/index.html" ||
    fail "index.html does not pair the copy's files with its binary"
echo "artifact_names: ok"
