#!/bin/sh
# SPDX-License-Identifier: MIT
# examples.sh CC SRC_INCLUDE BUILD_INCLUDE WORK
#
# Every usage example in the public headers (the @code ... @endcode blocks
# of include/leakgate/*.h) compiles as C11 with the project's warnings as
# errors (issue 42 item 8): each block becomes the body of
# `int example(int argc, char **argv)`, after every public header and a
# declaration of the test body the examples call (run_the_test()).
set -u
CC=$1 SRC=$2 BUILD=$3 WORK=$4
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
n=0
failed=0
for h in "$SRC"/leakgate/*.h; do
    base=$(basename "$h" .h)
    awk -v out="$WORK/$base" '
        /@endcode/ { on = 0; close(file); next }
        on { sub(/^ \* ?/, ""); sub(/^ \*$/, ""); print > file; next }
        /@code/ { on = 1; k++; file = out "." k ".body" }
    ' "$h"
done
for body in "$WORK"/*.body; do
    [ -e "$body" ] || continue
    n=$((n + 1))
    c=${body%.body}.c
    {
        echo '#include <stdio.h>'
        echo '#include <stdlib.h>'
        for h in "$SRC"/leakgate/*.h; do
            echo "#include <leakgate/$(basename "$h")>"
        done
        echo 'void run_the_test(void);'
        echo 'int example(int argc, char **argv);'
        echo 'int example(int argc, char **argv) {'
        echo '    (void)argc; (void)argv;'
        cat "$body"
        echo '    return 0;'
        echo '}'
    } >"$c"
    if ! "$CC" -std=c11 -fsyntax-only -Wall -Wextra -Werror \
        -I"$SRC" -I"$BUILD" "$c" 2>"$c.err"; then
        echo "examples: the example in $(basename "$c") does not compile:" >&2
        cat "$c" "$c.err" >&2
        failed=$((failed + 1))
    fi
done
[ "$n" -gt 0 ] || { echo "examples: no @code block found in $SRC/leakgate" >&2; exit 1; }
[ "$failed" -eq 0 ] || exit 1
echo "examples: $n header examples compile"
