#!/bin/sh
# SPDX-License-Identifier: MIT
# Usage: with_fsize.sh BLOCKS COMMAND [ARGS...]
# Run COMMAND with a file size limit of BLOCKS KiB (ulimit -f) and SIGXFSZ
# ignored, so that a write past the limit fails with EFBIG instead of
# killing the process.  tests/faults uses it to make a heap dump fail in
# the middle of a run, with no change to leakgate.
trap '' XFSZ
ulimit -f "$1" || exit 125
shift
exec "$@"
