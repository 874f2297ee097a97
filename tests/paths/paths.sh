#!/bin/sh
# SPDX-License-Identifier: MIT
# paths.sh CASE PROGRAM WORK [LEAKGATE RUN_PROGRAM]
#
# One hostile output path (tests/paths/CMakeLists.txt): run paths_corpus
# under the gate in WORK and check the exit status, the message and that
# nothing outside leakgate's own files was followed, replaced or deleted.
# Device nodes are made with mknod in WORK (never /dev itself: a failure
# must not break the machine); another user is uid 54321, which needs no
# account.  Cases that need root exit 77 without it.
set -u
CASE=$1 PROGRAM=$2 WORK=$3 LEAKGATE=${4:-} RUN_PROGRAM=${5:-}
OTHER=54321

fail() {
    echo "paths/$CASE: $*" >&2
    exit 1
}
need_root() {
    [ "$(id -u)" -eq 0 ] || { echo "paths/$CASE: needs root ($*)"; exit 77; }
}
# run EXPECTED_STATUS ARGS...: the program, stderr in $WORK/err.
run() {
    want=$1
    shift
    "$PROGRAM" "$@" >"$WORK/out" 2>"$WORK/err"
    got=$?
    [ "$got" -eq "$want" ] ||
        fail "exit $got, expected $want: $(tail -3 "$WORK/err")"
}
said() {
    grep -qF -- "$1" "$WORK/err" || fail "stderr lacks '$1': $(cat "$WORK/err")"
}
is_char() {
    [ -c "$1" ] || fail "$1 is no longer a device: $(ls -l "$1")"
}
has_leak() {
    grep -q 'FAIL paths/leak: 112 B' "$1" || fail "$1 lacks the leak's failure"
}
victim() {
    mkdir -p "$WORK/victim" && echo precious >"$WORK/victim/data" ||
        fail "cannot make the victim"
}
victim_intact() {
    [ "$(cat "$WORK/victim/data" 2>/dev/null)" = precious ] ||
        fail "the victim's file was changed or deleted"
    [ "$(ls -A "$WORK/victim")" = data ] ||
        fail "files were written into the victim: $(ls -A "$WORK/victim")"
}

rm -rf "$WORK" && mkdir -p "$WORK" || fail "cannot create $WORK"
cd "$WORK" || fail "cannot enter $WORK"
F="--filter paths/[pl]*"
case $CASE in
junit_dev_null)
    # The null device discards; the other outputs are all written.
    need_root mknod
    mknod null c 1 3 || exit 77
    run 1 $F --junit "$WORK/null" --json "$WORK/r.json" --report-dir "$WORK/rep"
    is_char null
    has_leak r.json
    [ -f rep/index.html ] || fail "no index.html"
    [ ! -e .null.leakgate ] || fail "a store was made beside the null device"
    LEAKGATE_JUNIT=$WORK/null run 1 $F
    is_char null ;;
literal_dev_null)
    # The documented spellings themselves, /dev/null and /dev/stdout, in
    # a mount namespace whose /dev is a fresh tmpfs (a regression can
    # only replace that namespace's node, never the machine's).
    need_root "a mount namespace"
    unshare -m true 2>/dev/null ||
        { echo "paths/$CASE: unshare -m is not allowed here"; exit 77; }
    unshare -m sh -c '
        mount -t tmpfs none /dev && mknod -m 666 /dev/null c 1 3 &&
            ln -s /proc/self/fd/1 /dev/stdout || exit 77
        "$1" --filter "paths/[pl]*" --junit /dev/null --json "$2/r.json" \
            >"$2/out" 2>"$2/err"
        echo "null: $? $(stat -c %F /dev/null)"
        "$1" --filter "paths/[pl]*" --junit /dev/stdout >/dev/null 2>>"$2/err"
        echo "stdout: $? $(stat -c %F /dev/null)"' sh "$PROGRAM" "$WORK" >ns
    [ $? -ne 77 ] || exit 77
    grep -qx "null: 1 character special file" ns || fail "--junit /dev/null: $(cat ns)"
    grep -qx "stdout: 1 character special file" ns || fail "--junit /dev/stdout: $(cat ns)"
    has_leak r.json ;;
junit_dev_stdout)
    # /dev/stdout is written as a stream, here to a null device.
    need_root mknod
    mknod null c 1 3 || exit 77
    "$PROGRAM" $F --junit /dev/stdout --json "$WORK/r.json" >"$WORK/null" 2>err
    [ $? -eq 1 ] || fail "exit $?: $(tail -3 err)"
    is_char null
    has_leak r.json
    run 1 $F --junit /dev/stdout
    grep -q '<testsuites name="leakgate"' out || fail "no JUnit on stdout" ;;
junit_dev_full)
    need_root mknod
    mknod full c 1 7 || exit 77
    LEAKGATE_JUNIT=$WORK/full run 2 $F
    said "$WORK/full: is a character device, not a regular file"
    is_char full ;;
run_devices)
    # `leakgate run` writes the same way: /dev/null-like discards, a
    # /dev/full-like device is refused before the program runs.
    need_root mknod
    mknod null c 1 3 && mknod full c 1 7 || exit 77
    "$LEAKGATE" run --junit "$WORK/null" --json "$WORK/r.json" -- \
        "$RUN_PROGRAM" leaky >out 2>err
    [ $? -eq 1 ] || fail "leakgate run: exit $?: $(tail -3 err)"
    is_char null
    grep -q 'FAIL leaky/leak' r.json || fail "r.json lacks leaky/leak"
    "$LEAKGATE" run --junit "$WORK/full" -- "$RUN_PROGRAM" leaky >out 2>err
    [ $? -eq 2 ] || fail "leakgate run --junit full: exit $?: $(tail -3 err)"
    said "$WORK/full: is a character device, not a regular file"
    is_char full ;;
json_fifo)
    mkfifo fifo || fail "mkfifo"
    run 2 $F --json "$WORK/fifo"
    said "$WORK/fifo: is a FIFO, not a regular file"
    [ -p fifo ] || fail "the FIFO was replaced" ;;
store_other_user)
    # Another user's store in a sticky, world-writable directory, with a
    # run directory that is a link to a victim: refused, nothing deleted.
    need_root chown
    victim
    chmod 1777 "$WORK" && mkdir .j.xml.leakgate &&
        ln -s "$WORK/victim" .j.xml.leakgate/run-p1-1 &&
        chown -h -R $OTHER .j.xml.leakgate || fail "cannot plant"
    run 2 $F --junit "$WORK/j.xml"
    said "$WORK/.j.xml.leakgate: belongs to uid $OTHER, not to this user"
    victim_intact ;;
store_run_link)
    # Our own store, a planted stale run directory that is a link: the
    # link is removed, never followed.
    victim
    mkdir .j.xml.leakgate && ln -s "$WORK/victim" .j.xml.leakgate/run-p1-1 ||
        fail "cannot plant"
    run 1 $F --junit "$WORK/j.xml"
    victim_intact
    [ ! -L .j.xml.leakgate/run-p1-1 ] || fail "the planted link is still there"
    grep -q 'FAIL paths/leak' j.xml || fail "j.xml lacks the leak" ;;
report_store_link)
    victim
    mkdir -p rep/.leakgate && ln -s "$WORK/victim" rep/.leakgate/run-p1-1 &&
        ln -s "$WORK/victim" rep/.leakgate/run-id-x || fail "cannot plant"
    run 1 $F --report-dir "$WORK/rep"
    victim_intact
    [ -f rep/index.html ] || fail "no index.html" ;;
store_is_link)
    victim
    ln -s "$WORK/victim" .j.xml.leakgate || fail "cannot plant"
    run 2 $F --junit "$WORK/j.xml"
    said "$WORK/.j.xml.leakgate: is a symbolic link"
    victim_intact ;;
junit_is_link)
    victim
    ln -s "$WORK/victim/data" j.xml || fail "cannot plant"
    run 2 $F --junit "$WORK/j.xml"
    said "$WORK/j.xml: is a symbolic link"
    victim_intact ;;
index_is_link)
    victim
    mkdir rep && ln -s "$WORK/victim/data" rep/index.html || fail "cannot plant"
    run 2 $F --report-dir "$WORK/rep"
    said "$WORK/rep/index.html: is a symbolic link"
    victim_intact ;;
artifacts_link)
    # A failing window's artifacts go into REPORTDIR/SUITE/: a link there
    # is refused when the window ends, nothing is written into its target,
    # and the verdict, the JUnit and the JSON stand (exit 1), the report
    # saying why it has no artifacts.
    victim
    mkdir rep && ln -s "$WORK/victim" rep/paths || fail "cannot plant"
    run 1 $F --report-dir "$WORK/rep" --junit "$WORK/j.xml" --json "$WORK/r.json"
    said "artifacts: none written under $WORK/rep: $WORK/rep/paths: is a symbolic link"
    has_leak r.json
    has_leak j.xml
    victim_intact ;;
artifacts_race)
    # Another user owns the report directory in a sticky, world-writable
    # directory and keeps swapping REPORTDIR/SUITE for a link to a victim
    # of root's (a bounded loop) while root's runs write their artifacts:
    # nothing is ever written into the victim, and every run fails its
    # leaks (the artifacts of a window may be refused, never a verdict).
    need_root "setpriv to uid $OTHER"
    area=$(mktemp -d /tmp/leakgate-race.XXXXXX) || fail "mktemp"
    trap 'touch "$area/stop"; wait; rm -rf "$area"' EXIT
    chmod 1777 "$area" && mkdir "$area/victim" && echo precious >"$area/victim/data" &&
        setpriv --reuid $OTHER --regid $OTHER --clear-groups mkdir "$area/rep" ||
        fail "cannot set up $area"
    setpriv --reuid $OTHER --regid $OTHER --clear-groups sh -c '
        cd "$1/rep" || exit 1
        i=0
        while [ $i -lt 20000 ] && [ ! -e "$1/stop" ]; do
            mv -T paths "moved.$i" 2>/dev/null
            ln -s "$1/victim" paths 2>/dev/null
            rm -f paths 2>/dev/null
            i=$((i + 1))
        done' sh "$area" &
    racer=$!
    for n in 1 2 3 4 5 6 7 8; do
        "$PROGRAM" $F --report-dir "$area/rep" --json "$WORK/r$n.json" \
            >"$WORK/out" 2>"$WORK/err"
        st=$?
        [ $st -eq 1 ] || [ $st -eq 2 ] || [ $st -eq 3 ] ||
            fail "run $n: exit $st: $(tail -3 "$WORK/err")"
        [ $st -eq 2 ] || has_leak "$WORK/r$n.json"
    done
    touch "$area/stop"
    wait $racer
    [ "$(cat "$area/victim/data")" = precious ] ||
        fail "the victim's file was changed"
    [ "$(ls -A "$area/victim")" = data ] ||
        fail "written into the victim: $(ls -A "$area/victim")" ;;
report_dir_full)
    # --report-dir on a full file system (64 KiB, filled before the run):
    # the verdicts, the JUnit and the JSON on a healthy disk are all
    # there; the reports and stderr name the paths and the cause; the run
    # exits 3 (index.html, an output it was asked for, is missing).
    need_root "a mount namespace"
    unshare -m true 2>/dev/null ||
        { echo "paths/$CASE: unshare -m is not allowed here"; exit 77; }
    mkdir small || fail "mkdir"
    unshare -m sh -c 'mount -t tmpfs -o size=64k none "$1" || exit 77
        dd if=/dev/zero of="$1/filler" bs=4096 2>/dev/null
        shift && exec "$@"' \
        sh "$WORK/small" "$PROGRAM" --filter "paths/*" --report-dir "$WORK/small/rep" \
        --junit "$WORK/j.xml" --json "$WORK/r.json" >out 2>err
    st=$?
    [ $st -ne 77 ] || exit 77
    [ $st -eq 3 ] || fail "exit $st, expected 3: $(tail -3 err)"
    said "$WORK/small/rep/index.html was not written: cannot write the journal in $WORK/small/rep/.leakgate/"
    said "artifacts: none written under $WORK/small/rep: cannot write $WORK/small/rep/paths/"
    said "No space left on device"
    has_leak r.json
    has_leak j.xml
    grep -q 'FAIL paths/leak_after: 112 B' r.json || fail "r.json lacks leak_after"
    grep -q 'name="after"' j.xml || fail "j.xml lacks paths/after" ;;
stale_replays)
    # A failed replay keeps its scratch directory for its log; a later
    # run's replay removes this user's older than a day, and in them only
    # a replay's own files: a fresh one, one holding another file and a
    # link named like one stay, nothing is followed.
    victim
    mkdir -p tmp/leakgate-replay.old tmp/leakgate-replay.new \
        tmp/leakgate-replay.other || fail "mkdir"
    for d in old new other; do
        echo log >tmp/leakgate-replay.$d/replay.log &&
            echo list >tmp/leakgate-replay.$d/list || fail "cannot plant"
    done
    echo mine >tmp/leakgate-replay.other/keep &&
        ln -s "$WORK/victim" tmp/leakgate-replay.link &&
        touch -h -d '2 days ago' tmp/leakgate-replay.old \
            tmp/leakgate-replay.other tmp/leakgate-replay.link ||
        fail "cannot plant"
    TMPDIR=$WORK/tmp run 1 $F
    [ ! -e tmp/leakgate-replay.old ] || fail "the stale replay directory is still there"
    [ -f tmp/leakgate-replay.new/replay.log ] || fail "a fresh replay directory was removed"
    [ -f tmp/leakgate-replay.other/keep ] || fail "another file was removed"
    [ -L tmp/leakgate-replay.link ] || fail "the link was removed"
    victim_intact ;;
thresholds_fifo)
    # Refused at once, never waiting for a writer (ctest's TIMEOUT).
    mkfifo t.yaml || fail "mkfifo"
    run 2 $F --thresholds "$WORK/t.yaml"
    said "$WORK/t.yaml: is a FIFO, not a regular file" ;;
thresholds_device)
    run 2 $F --thresholds /dev/null
    said "/dev/null: is a character device, not a regular file" ;;
chdir_relative)
    # Relative outputs stay where the run started, whatever the test does.
    mkdir elsewhere || fail "mkdir"
    PATHS_CHDIR=$WORK/elsewhere run 1 --filter "paths/*" --json r.json \
        --junit j.xml --report-dir rep
    has_leak r.json
    grep -q 'name="after"' j.xml || fail "j.xml lacks paths/after"
    [ -f rep/index.html ] || fail "no index.html"
    [ -z "$(ls -A elsewhere)" ] || fail "written in elsewhere: $(ls -A elsewhere)" ;;
close_fds)
    # A test closes every descriptor from 3: the outputs still hold every
    # test, the leak among them.
    PATHS_CLOSE_FDS=1 run 1 --filter "paths/*" --json "$WORK/r.json" --junit "$WORK/j.xml" \
        --report-dir "$WORK/rep"
    has_leak r.json
    for t in pass leak close_fds chdir after leak_after; do
        grep -q "name=\"$t\"" j.xml || fail "j.xml lacks paths/$t"
    done
    grep -q '"name": "paths/after"' r.json || fail "r.json lacks paths/after"
    grep -q 'FAIL paths/leak_after: 112 B' r.json ||
        fail "the leak after the close is not judged"
    grep -q 'test_leak .*paths_corpus.c' r.json ||
        fail "the leak after the close is not symbolized" ;;
read_only)
    # A read-only file system: the message says so (EROFS), naming it.
    need_root "a mount namespace"
    unshare -m true 2>/dev/null ||
        { echo "paths/$CASE: unshare -m is not allowed here"; exit 77; }
    mkdir ro || fail "mkdir"
    unshare -m sh -c 'mount -t tmpfs -o ro none "$1" && shift && exec "$@"' \
        sh "$WORK/ro" "$PROGRAM" $F --junit "$WORK/ro/sub/j.xml" >out 2>err
    st=$?
    [ $st -eq 3 ] || fail "exit $st, expected 3: $(tail -3 err)"
    said "cannot write $WORK/ro/sub/j.xml: Read-only file system" ;;
permission_denied)
    # A directory this user may not write: EACCES, naming the file.
    need_root "setpriv to uid $OTHER"
    mkdir locked && chmod 755 locked && chmod 711 "$WORK" || fail "mkdir"
    setpriv --reuid $OTHER --regid $OTHER --clear-groups \
        "$PROGRAM" $F --junit "$WORK/locked/j.xml" >out 2>err
    st=$?
    [ $st -eq 3 ] || fail "exit $st, expected 3: $(tail -3 err)"
    said "cannot write $WORK/locked/j.xml: Permission denied" ;;
*)
    fail "unknown case" ;;
esac
echo "paths/$CASE: ok"
