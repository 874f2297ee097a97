#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks of what `leakgate compare` and `leakgate report --sarif` write,
# with the tools that read them: the SARIF 2.1.0 JSON schema (as the npm
# package @microsoft/jest-sarif ships it) under ajv, a GitHub-flavoured
# Markdown parser (cmark-gfm), node's JSON parser.
#
# A missing tool skips the check (exit 77, ctest SKIP_RETURN_CODE) unless
# LEAKGATE_TESTS_REQUIRE_TOOLS=1 (ci/test sets it), where it fails.
#
#   check.sh sarif MODULES FILE N [RULE URI LINE]...
#       FILE is valid SARIF 2.1.0 with N results; for each triple, a
#       result of RULE is located at URI (relative to SRCROOT) line LINE
#       (LINE may be @FILE:TEXT: the line of FILE holding TEXT)
#   check.sh markdown FILE WORD...   the HTML cmark-gfm makes of FILE
#                                    (tables on) holds each WORD
#   check.sh json FILE WORD...       FILE parses as JSON and holds WORD
set -uo pipefail
here=$(dirname "$0")

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

skip_or_fail() {
    if [ "${LEAKGATE_TESTS_REQUIRE_TOOLS:-0}" = 1 ]; then
        echo "FAIL: $* (LEAKGATE_TESTS_REQUIRE_TOOLS=1)" >&2
        exit 1
    fi
    echo "SKIP: $*" >&2
    exit 77
}

need() {
    command -v "$1" >/dev/null 2>&1 || skip_or_fail "$1 is not installed"
}

contains() { # FILE WORD...
    local file=$1 word
    shift
    for word in "$@"; do
        grep -qF -- "$word" "$file" || fail "$file does not contain '$word'"
    done
}

sarif() { # MODULES FILE N [RULE URI LINE]...
    local modules=$1 file=$2 n=$3 rule uri line
    shift 3
    need node
    [ -f "$modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json" ] ||
        skip_or_fail "no SARIF schema under $modules: run" \
            "npm install --prefix build/npm @microsoft/jest-sarif@1.0.0-beta.0" \
            "at the top of the source tree"
    [ -s "$file" ] || fail "$file is missing or empty"
    node "$here/sarif_validate.js" "$modules" "$file" || fail "$file is not valid SARIF"
    while [ $# -ge 3 ]; do
        rule=$1 uri=$2 line=$3
        shift 3
        if [[ $line == @* ]]; then
            local src=${line#@} text
            text=${src#*:}
            src=${src%%:*}
            line=$(grep -m 1 -nF -- "$text" "$src" | cut -d: -f1)
            [ -n "$line" ] || fail "$src has no line holding '$text'"
        fi
        node -e '
const [file, n, rule, uri, line] = process.argv.slice(1);
const log = JSON.parse(require("fs").readFileSync(file, "utf8"));
const results = log.runs[0].results;
if (results.length !== Number(n)) {
    console.error(`${file}: ${results.length} results, expected ${n}`);
    process.exit(1);
}
const hit = results.find(r => r.ruleId === rule &&
    r.locations[0].physicalLocation &&
    r.locations[0].physicalLocation.artifactLocation.uri === uri &&
    r.locations[0].physicalLocation.artifactLocation.uriBaseId === "SRCROOT" &&
    r.locations[0].physicalLocation.region.startLine === Number(line));
if (!hit) {
    console.error(`${file}: no ${rule} result at ${uri}:${line}; results at:`);
    for (const r of results)
        console.error(`  ${r.ruleId} ${JSON.stringify(r.locations[0])}`);
    process.exit(1);
}
console.log(`ok: ${rule} at ${uri}:${line}: ${hit.message.text}`);
' "$file" "$n" "$rule" "$uri" "$line" || fail "$file: wrong locations"
    done
    [ $# -eq 0 ] || fail "sarif: RULE URI LINE come in threes"
    echo "ok: $file"
}

markdown() { # FILE WORD...
    local file=$1
    shift
    need cmark-gfm
    [ -s "$file" ] || fail "$file is missing or empty"
    cmark-gfm -e table "$file" > "$file.html" || fail "cmark-gfm failed on $file"
    cat "$file.html"
    contains "$file.html" "$@"
    echo "ok: $file renders with the expected table and headings"
}

json() { # FILE WORD...
    local file=$1
    shift
    need node
    node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' \
        "$file" || fail "$file is not JSON"
    contains "$file" "$@"
    echo "ok: $file is JSON"
}

cmd=$1
shift
case $cmd in
sarif | markdown | json) "$cmd" "$@" ;;
*) fail "unknown check '$cmd'" ;;
esac
