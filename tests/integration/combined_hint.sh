#!/bin/sh
# SPDX-License-Identifier: MIT
# One run prints one thresholds document (SPEC section 7), and it works as
# printed: each failing window prints only its own entry, saying that the
# document at the end of the run holds it; the document holds them all,
# and following it as written makes every window it holds pass.  A window
# whose objects are lost is a leak to fix: its report says so and offers
# no rule, so it alone still fails (issue 43).
#   A  no thresholds file: "create leakgate.yaml with:" one document
#      (version once in the whole run, one tests:, one suites:);
#   B  a file that has a tests: section: the entries go under it (a second
#      tests: is a duplicate key), the suites: section at the end; a
#      single test's own entry goes under `tests:` too.
#   C  A under `leakgate run`, on the plain build of the corpus.
# Usage: combined_hint.sh CORPUS LEAKGATE WORK CORPUS_PLAIN
set -eu
corpus=$1
leakgate=$2
work=$3
plain=$4
rm -rf "$work"
mkdir -p "$work/a" "$work/b" "$work/c"
unset LEAKGATE_THRESHOLDS LEAKGATE_JUNIT LEAKGATE_JSON LEAKGATE_REPORT_DIR || true

fail() {
    echo "combined_hint: $*"
    exit 1
}

# The run's one document: "version: 1" once in all of stderr, the end's
# intro line, and every failing window's hint only its entry.
one_document() { # ERR
    [ "$(grep -c 'version: 1' "$1")" -le 1 ] ||
        { cat "$1"; fail "$1: more than one thresholds document"; }
    grep -q '^leakgate: the thresholds document of this run (the entries of the windows above): to accept their growth, ' "$1" ||
        { cat "$1"; fail "$1: no thresholds document at the end"; }
    [ "$(grep -c '^  to accept this growth, its entry under `' "$1")" -ge 2 ] ||
        { cat "$1"; fail "$1: fewer than 2 windows gave their entry"; }
}

# With the document applied (the run after: ERR, exit status STATUS),
# exactly the windows whose reports said "lost:" in the run before
# (BEFORE) still fail.
applies() { # BEFORE ERR STATUS WHAT
    lost=$(awk '/^leakgate: FAIL / { n = $3; sub(/:$/, "", n) }
                /^  lost: / { print n }' "$1" | sort -u)
    failed=$(grep '^leakgate: FAIL ' "$2" | awk '{ n = $3; sub(/:$/, "", n); print n }' | sort -u)
    [ "$lost" = "$failed" ] ||
        { cat "$2"; fail "$4: with the document applied, [$failed] fail, not the lost [$lost]"; }
    if [ -n "$lost" ]; then [ "$3" -ne 0 ]; else [ "$3" -eq 0 ]; fi ||
        { cat "$2"; fail "$4: exit status $3 with the document applied"; }
}

# ---- A: no thresholds file -------------------------------------------------
cd "$work/a"
"$corpus" --filter '[hl]*' >out.txt 2>err.txt && fail "A: the run passed"
one_document err.txt
grep -q "^leakgate: the thresholds document of this run.*create leakgate.yaml with:\$" err.txt ||
    { cat err.txt; fail "A: no combined hint"; }
sed -n '/thresholds document of this run/,/over the limits, /p' err.txt |
    sed -n '2,$p' | grep '^  ' | sed 's/^  //' >leakgate.yaml
[ "$(grep -c '^version:' leakgate.yaml)" -eq 1 ] &&
    [ "$(grep -c '^tests:' leakgate.yaml)" -eq 1 ] &&
    [ "$(grep -c '^suites:' leakgate.yaml)" -eq 1 ] ||
    { cat leakgate.yaml; fail "A: not one document"; }
"$leakgate" thresholds check leakgate.yaml || fail "A: the snippet is not valid"
rc=0
"$corpus" --filter '[hl]*' >out2.txt 2>err2.txt || rc=$?
applies err.txt err2.txt "$rc" A

# ---- B: a file with a tests: section ---------------------------------------
cd "$work/b"
cat >t.yaml <<'EOF'
version: 1
defaults:
  stack_limit: 0
tests:
  "clean/*":
    stack_limit: 0
EOF
cp t.yaml one.yaml
"$corpus" --thresholds t.yaml --filter '[hl]*' >out.txt 2>err.txt &&
    fail "B: the run passed"
one_document err.txt
grep -q "^leakgate: the thresholds document of this run.*add to t.yaml:\$" err.txt &&
    grep -q '^and add under `tests:` in t.yaml:$' err.txt ||
    { cat err.txt; fail "B: no combined hint"; }
# "add to t.yaml:" goes at the end, "add under `tests:`" after tests:.
sed -n '/thresholds document of this run/,/^and add under/p' err.txt |
    sed -n '2,$p' | grep '^  ' | sed 's/^  //' >end.yaml
sed -n '/^and add under `tests:`/,/over the limits, /p' err.txt |
    sed -n '2,$p' | grep '^  ' | sed 's/^  //' >under.yaml
[ -s end.yaml ] && [ -s under.yaml ] || fail "B: empty blocks"
sed '/^tests:$/r under.yaml' t.yaml >t2.yaml
cat end.yaml >>t2.yaml
"$leakgate" thresholds check t2.yaml || { cat t2.yaml; fail "B: the result is not valid"; }
rc=0
"$corpus" --thresholds t2.yaml --filter '[hl]*' >out2.txt 2>err2.txt || rc=$?
applies err.txt err2.txt "$rc" B
# One test's own entry, put under `tests:` as it says, in a copy of the file.
awk '/^leakgate: FAIL leaks\/malloc:/ { on = 1 }
     on && /its entry under `tests:`/ { take = 1; next }
     take && /^    / { sub(/^    /, ""); print; next }
     take { exit }' err.txt >malloc.yaml
[ -s malloc.yaml ] ||
    { cat err.txt; fail "B: leaks/malloc's hint does not give its entry under tests:"; }
sed '/^tests:$/r malloc.yaml' one.yaml >one2.yaml
"$corpus" --thresholds one2.yaml --filter 'leaks/malloc' >out3.txt 2>err3.txt ||
    { cat one2.yaml err3.txt; fail "B: leaks/malloc's own snippet does not apply"; }

# ---- C: leakgate run, no thresholds file -----------------------------------
cd "$work/c"
"$leakgate" run --filter '[hl]*' -- "$plain" >out.txt 2>err.txt &&
    fail "C: the run passed"
one_document err.txt
grep -q "^leakgate: the thresholds document of this run.*create leakgate.yaml with:\$" err.txt ||
    { cat err.txt; fail "C: no combined hint under leakgate run"; }
sed -n '/thresholds document of this run/,/over the limits, /p' err.txt |
    sed -n '2,$p' | grep '^  ' | sed 's/^  //' >leakgate.yaml
rc=0
"$leakgate" run --filter '[hl]*' -- "$plain" >out2.txt 2>err2.txt || rc=$?
applies err.txt err2.txt "$rc" C
echo ok
