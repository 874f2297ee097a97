#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The replay's scratch directory: in $TMPDIR, removed after a replay that
# succeeds (by allocation order, and an exact one with --report-dir);
# with $TMPDIR naming no directory, in /tmp with a note naming TMPDIR, and
# the verdict as usual.
# Usage: replay_tmpdir.sh CORPUS THRESHOLDS WORKDIR
set -euo pipefail
bin=$1 thresholds=$2 work=$3
rm -rf "$work"
mkdir -p "$work/tmp"
fail() { echo "replay_tmpdir: $*" >&2; exit 1; }

for args in "" "--report-dir $work/rep"; do
    rc=0
    # shellcheck disable=SC2086
    TMPDIR=$work/tmp "$bin" --thresholds "$thresholds" --filter leaks/malloc \
        $args >"$work/out" 2>"$work/err" || rc=$?
    [ "$rc" = 1 ] || fail "exit $rc, expected 1 (args: '$args')"
    grep -q 'leakgate: FAIL leaks/malloc: 112 B' "$work/err" ||
        fail "no FAIL report (args: '$args')"
    left=$(find "$work/tmp" -mindepth 1 -maxdepth 1 | sed -n 1p)
    [ -z "$left" ] || fail "the replay left $left behind (args: '$args')"
done

rc=0
TMPDIR=$work/no-such-dir "$bin" --thresholds "$thresholds" \
    --filter leaks/malloc >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" = 1 ] || fail "missing TMPDIR: exit $rc, expected 1"
grep -q "leakgate: note: TMPDIR=$work/no-such-dir cannot hold temporary files (No such file or directory): leakgate uses /tmp" "$work/err" ||
    fail "missing TMPDIR: no note naming it"
grep -q 'leakgate: FAIL leaks/malloc: 112 B' "$work/err" ||
    fail "missing TMPDIR: no FAIL report"
echo "replay_tmpdir: ok"
