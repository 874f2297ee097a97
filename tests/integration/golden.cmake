# SPDX-License-Identifier: MIT
# Script mode: run CMD (a list joined with "@@") in WORK, check its exit
# status is EXIT and that its stderr, made machine-independent (SRC and
# BUILD paths, build-ids and the jemalloc version replaced by <src>,
# <build>, <id> and <jemalloc>; the measured:, first pass: and artifacts:
# lines and the frames left out), equals the file GOLDEN.  -DUPDATE=1 writes
# GOLDEN instead.  On a difference the unified diff is shown.
string(REPLACE "@@" ";" CMD "${CMD}")
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${CMD} WORKING_DIRECTORY ${WORK}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(REPLACE "${BUILD}" "<build>" err "${err}")
string(REPLACE "${SRC}" "<src>" err "${err}")
string(REGEX REPLACE "build-id [0-9a-f]+" "build-id <id>" err "${err}")
string(REGEX REPLACE "jemalloc [0-9][^ ,]*" "jemalloc <jemalloc>" err "${err}")
# The golden text is about verdicts and hints: the lines that say how a
# window was measured, its artifacts and its frames are left out.
string(REGEX REPLACE "\n  (measured|first pass|artifacts): [^\n]*" ""
       err "${err}")
string(REGEX REPLACE "\n      [A-Za-z_][A-Za-z0-9_]* +<src>/[^\n]*" ""
       err "${err}")
if(UPDATE)
  file(WRITE ${GOLDEN} "${err}")
  return()
endif()
file(WRITE ${WORK}/actual.txt "${err}")
file(READ ${GOLDEN} want)
set(failed "")
if(NOT "${rc}" STREQUAL "${EXIT}")
  string(APPEND failed "exit status ${rc}, expected ${EXIT}\n")
endif()
if(NOT err STREQUAL want)
  execute_process(COMMAND diff -u ${GOLDEN} ${WORK}/actual.txt
                  OUTPUT_VARIABLE diff)
  string(APPEND failed "stderr differs from ${GOLDEN}:\n${diff}")
endif()
if(failed)
  message(FATAL_ERROR "${failed}")
endif()
