#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The flows `leakgate run` prints when it refuses --update-thresholds and
# --tighten, run as written (DIR and PROGRAM filled in) on a program with
# a leak: the run exits 1, and the merge still folds its growth into
# leakgate.yaml; the tightening dry run then exits 0.
# Usage: run_suggestion.sh LEAKGATE PROGRAM WORKDIR  (PROGRAM leaks;
# its environment is the caller's)
set -uo pipefail
lg=$1 prog=$2 work=$3
fail() { echo "run_suggestion: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
cd "$work" || fail "cannot enter $work"

# The command line the refusal suggests (its second line), filled in.
suggested() { # option
    local line
    "$lg" run "$1" -- "$prog" >/dev/null 2>refuse.err
    [ $? = 2 ] || fail "$1: the refusal did not exit 2"
    line=$(sed -n 2p refuse.err)
    case $line in
    "  leakgate run "*) ;;
    *) fail "$1: no command on the refusal's second line: $line" ;;
    esac
    line=${line#  }
    line=${line//DIR/$work/res}
    line=${line//PROGRAM/$prog}
    printf '%s\n' "${line//leakgate /$lg }"
}

cmd=$(suggested --update-thresholds) || exit 1
sh -c "$cmd" >flow1.out 2>&1
[ $? = 0 ] || fail "the merge flow exited $?: $(tail -3 flow1.out)"
grep -q 'plainleak' leakgate.yaml 2>/dev/null ||
    fail "the merge flow did not fold the leak into leakgate.yaml"
cmd=$(suggested --tighten) || exit 1
sh -c "$cmd" >flow2.out 2>&1 || fail "the tighten flow failed: $(tail -3 flow2.out)"
echo "run_suggestion: ok"
