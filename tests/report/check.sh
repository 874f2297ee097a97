#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks of the reports people read, run by ctest (tests/report/
# CMakeLists.txt).  Each subcommand checks one artifact with the real tool a
# reader would use: jeprof, Graphviz dot, xmllint, headless Chromium.
#
# A missing tool skips the check (exit 77, ctest SKIP_RETURN_CODE) unless
# LEAKGATE_TESTS_REQUIRE_TOOLS=1 (ci/test sets it), where it fails: in CI
# every check must really run.
#
#   check.sh gate-run DIR -- CMD...      CMD exits 1 and writes DIR with a
#                                        failure's heap pair, DOT, SVG, PDF,
#                                        JSON, text and index.html
#   check.sh jeprof BIN BEFORE AFTER FN  jeprof --text --base names FN
#   check.sh picture BASE WORD...        BASE.svg is XML naming WORDs,
#                                        BASE.dot renders, BASE.pdf is PDF
#   check.sh chromium HTML WORD...       the page's DOM in Chromium holds
#                                        each WORD; no script, no network;
#                                        also writes HTML.png (a screenshot)
#   check.sh no-dot DIR -- CMD...        with no dot on PATH, CMD says so in
#                                        exactly one report, writes DOT only
#   check.sh pie BIN                     BIN is a position-independent
#                                        executable
#   check.sh pdf FILE WORD...            FILE is a whole PDF document whose
#                                        text (pdftotext) holds each WORD
#   check.sh shifted IN OUT              OUT = IN with its executable mapped
#                                        elsewhere (another process)
#   check.sh junit-peaks XML N L P T...  XML is well-formed with N testcases
#                                        carrying leakgate.peak_bytes (and
#                                        as many leakgate.allocations), L
#                                        leakgate.peak_limit, P failures of
#                                        type="peak"; each T is "NAME KEY
#                                        VALUE" (a property of testcase
#                                        NAME) or "NAME -KEY" (none)
set -uo pipefail

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

need() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 && { echo "$tool"; return 0; }
    done
    if [ "${LEAKGATE_TESTS_REQUIRE_TOOLS:-0}" = 1 ]; then
        echo "FAIL: $1 is required (LEAKGATE_TESTS_REQUIRE_TOOLS=1) but not installed" >&2
        exit 1
    fi
    echo "SKIP: $1 is not installed" >&2
    exit 77
}

contains() { # FILE WORD...
    local file=$1 word
    shift
    for word in "$@"; do
        grep -qF -- "$word" "$file" || fail "$file does not contain '$word'"
    done
}

gate_run() { # DIR -- CMD...
    local dir=$1 rc base f
    shift 2
    rm -rf "$dir"
    "$@" --report-dir "$dir" >"$dir.log" 2>&1
    rc=$?
    cat "$dir.log"
    [ "$rc" -eq 1 ] || fail "exit status $rc, expected 1 (a test leaks)"
    base=$(find "$dir" -name '*.after.heap' | sed -n 1p)
    [ -n "$base" ] || fail "no heap pair under $dir"
    base=${base%.after.heap}
    for f in before.heap after.heap dot json txt svg pdf; do
        [ -s "$base.$f" ] || fail "missing or empty $base.$f"
    done
    [ -s "$dir/index.html" ] || fail "missing $dir/index.html"
    contains "$base.json" "\"svg\": \"$base.svg\"" "\"dot\": \"$base.dot\""
    contains "$dir.log" "$base.svg"
    echo "ok: $dir holds the artifacts of $base"
}

check_jeprof() { # BIN BEFORE AFTER FN
    local jeprof out
    jeprof=$(need jeprof) || exit
    need addr2line >/dev/null || exit
    need objdump >/dev/null || exit
    out=$("$jeprof" --text --base="$2" "$1" "$3" 2>&1) ||
        fail "jeprof exited $?: $out"
    echo "$out"
    grep -qE "^ +[-0-9.]+ +[0-9.]+% .* $4\$" <<<"$out" ||
        fail "jeprof does not name $4"
    echo "ok: jeprof reads the pair and names $4"
}

check_pdf() { # FILE [WORD...]: a whole PDF whose text holds each WORD
    local file=$1 pdftotext text word
    shift
    [ "$(head -c 5 "$file")" = "%PDF-" ] || fail "$file does not start with %PDF-"
    grep -q '%%EOF' <<<"$(tail -c 32 "$file")" || fail "$file has no %%EOF trailer"
    if [ $# -gt 0 ]; then
        pdftotext=$(need pdftotext) || exit
        text=$("$pdftotext" "$file" -) || fail "pdftotext cannot read $file"
        for word in "$@"; do
            grep -qF -- "$word" <<<"$text" || fail "the PDF does not show '$word'"
        done
    fi
    echo "ok: $file is a PDF document showing $*"
}

check_picture() { # BASE WORD...
    local base=$1 dot xmllint
    shift
    dot=$(need dot) || exit
    xmllint=$(need xmllint) || exit
    "$xmllint" --noout "$base.svg" || fail "$base.svg is not well-formed XML"
    contains "$base.svg" "<svg" "$@"
    "$dot" -Tsvg -o /dev/null "$base.dot" || fail "dot rejects $base.dot"
    check_pdf "$base.pdf" "$@"
    echo "ok: $base.svg is valid XML naming $*; $base.dot renders"
}

check_chromium() { # HTML WORD...
    local html=$1 chromium dom word profile flags
    shift
    chromium=$(need chromium chromium-browser) || exit
    for word in '<script' '<link' '<iframe' ' src=' '@import' 'url('; do
        grep -qiF -- "$word" "$html" && fail "$html contains '$word'"
    done
    # A private profile and no /dev/shm: containers have neither to spare.
    profile=$(mktemp -d)
    flags=(--headless --disable-gpu --no-sandbox --no-first-run
           --disable-extensions --disable-dev-shm-usage
           --user-data-dir="$profile")
    dom=$(timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$html" 2>/dev/null) ||
        fail "chromium could not load $html"
    for word in "$@"; do
        grep -qF -- "$word" <<<"$dom" || fail "the DOM does not show '$word'"
    done
    timeout 120 "$chromium" "${flags[@]}" --hide-scrollbars \
        --window-size=1280,2000 --screenshot="$html.png" "file://$html" \
        >/dev/null 2>&1 || fail "chromium could not screenshot $html"
    rm -rf "$profile"
    echo "ok: Chromium shows $*; screenshot $html.png"
}

no_dot() { # DIR -- CMD...
    local dir=$1 rc said
    shift 2
    rm -rf "$dir"
    PATH=/nonexistent "$@" --report-dir "$dir" >"$dir.log" 2>&1
    rc=$?
    [ "$rc" -eq 1 ] || { cat "$dir.log"; fail "exit status $rc, expected 1"; }
    grep -q "dot is not on PATH" "$dir.log" || fail "stderr does not say dot is missing"
    said=$(grep -l "dot is not on PATH" "$dir"/*/*.txt | wc -l)
    [ "$said" -eq 1 ] || fail "$said reports say dot is missing, expected 1"
    [ -z "$(find "$dir" -name '*.svg' -o -name '*.pdf')" ] || fail "pictures without dot?"
    [ "$(find "$dir" -name '*.dot' | wc -l)" -ge 2 ] || fail "no DOT text"
    contains "$dir/index.html" "DOT text only"
    echo "ok: without dot, one report says so and every failure has its DOT"
}

check_pie() { # BIN
    local readelf
    readelf=$(need readelf) || exit
    grep -q 'Type: *DYN' <<<"$("$readelf" -h "$1")" || fail "$1 is not a PIE"
    echo "ok: $1 is position-independent"
}

shifted() { # IN OUT: move the executable's mappings by 16 MiB
    local in=$1 out=$2 maps=0 done=0 line range rest lo hi
    : >"$out"
    while IFS= read -r line; do
        if [ "$line" = "MAPPED_LIBRARIES:" ]; then
            maps=1
        elif [ "$maps" = 1 ] && [[ "$line" =~ \ /[^\ ]*$ ]] &&
             [[ ! "$line" =~ \.so ]]; then
            range=${line%% *}
            rest=${line#* }
            lo=$((16#${range%-*} + 16777216))
            hi=$((16#${range#*-} + 16777216))
            line=$(printf '%x-%x %s' "$lo" "$hi" "$rest")
            done=1
        fi
        printf '%s\n' "$line" >>"$out"
    done <"$in"
    [ "$done" = 1 ] || fail "no executable mapping in $in"
    echo "ok: $out maps the executable elsewhere"
}

count() { # FILE TEXT: how many lines hold TEXT
    grep -cF -- "$2" "$1"
}

# The <testcase name="NAME" ...>...</testcase> of XML (names unique).
testcase() { # XML NAME
    sed -n "/<testcase [^>]*name=\"$2\"/,/<\/testcase>/p" "$1"
}

junit_peaks() { # XML N L P "NAME KEY VALUE"|"NAME -KEY"...
    local xml=$1 n=$2 l=$3 p=$4 spec name key value xmllint
    shift 4
    [ -s "$xml" ] || fail "no $xml"
    if xmllint=$(command -v xmllint); then
        "$xmllint" --noout "$xml" || fail "$xml is not well-formed XML"
    fi
    [ "$(count "$xml" 'name="leakgate.peak_bytes"')" -eq "$n" ] ||
        fail "$xml: $(count "$xml" 'name="leakgate.peak_bytes"') leakgate.peak_bytes, expected $n"
    [ "$(count "$xml" 'name="leakgate.allocations"')" -eq "$n" ] ||
        fail "$xml: leakgate.allocations not on the $n measured testcases"
    [ "$(count "$xml" 'name="leakgate.peak_limit"')" -eq "$l" ] ||
        fail "$xml: $(count "$xml" 'name="leakgate.peak_limit"') leakgate.peak_limit, expected $l"
    [ "$(count "$xml" 'type="peak"')" -eq "$p" ] ||
        fail "$xml: $(count "$xml" 'type="peak"') failures of type peak, expected $p"
    for spec in "$@"; do
        read -r name key value <<<"$spec"
        case $key in
        -*) grep -qF "${key#-}" <<<"$(testcase "$xml" "$name")" &&
                fail "$name has ${key#-}" ;;
        *) grep -qF -- "$key\" value=\"$value\"" <<<"$(testcase "$xml" "$name")" ||
                grep -qF -- "$key=\"$value\"" <<<"$(testcase "$xml" "$name")" ||
                fail "$name has no $key $value" ;;
        esac
    done
    echo "ok: $xml: $n testcases with peaks, $l limits, $p peak failures"
}

cmd=${1:-}
shift || true
case "$cmd" in
gate-run) gate_run "$@" ;;
jeprof) check_jeprof "$@" ;;
picture) check_picture "$@" ;;
chromium) check_chromium "$@" ;;
no-dot) no_dot "$@" ;;
pie) check_pie "$@" ;;
pdf) check_pdf "$@" ;;
shifted) shifted "$@" ;;
junit-peaks) junit_peaks "$@" ;;
*) fail "usage: check.sh gate-run|jeprof|picture|chromium|no-dot|pie|pdf|shifted|junit-peaks ..." ;;
esac
