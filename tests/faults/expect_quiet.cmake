# SPDX-License-Identifier: MIT
# Script mode, for runs whose output is too large to hold in memory (the
# 100,000-stack fault prints ~500 MB): run CMD with its stdout and stderr
# in the file OUT, check its exit status is EXIT and that OUT has a line
# matching each regex of MATCH.  CMD, MATCH and ENV (NAME=VALUE) are "@@"-joined lists.
string(REPLACE "@@" ";" CMD "${CMD}")
string(REPLACE "@@" ";" ENV "${ENV}")
string(REPLACE "@@" ";" match_list "${MATCH}")
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/set_env.cmake)
string(TIMESTAMP t0 "%s")
execute_process(COMMAND ${CMD} OUTPUT_FILE "${OUT}" ERROR_FILE "${OUT}"
                RESULT_VARIABLE rc)
string(TIMESTAMP t1 "%s")
math(EXPR took "${t1} - ${t0}")
set(failed "")
if(NOT "${rc}" STREQUAL "${EXIT}")
  string(APPEND failed "exit status ${rc}, expected ${EXIT}\n")
endif()
foreach(re IN LISTS match_list)
  file(STRINGS "${OUT}" hits REGEX "${re}" LIMIT_COUNT 1)
  if(NOT hits)
    string(APPEND failed "no line of ${OUT} matches: ${re}\n")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "${failed}(took ${took} s)")
endif()
message(STATUS "ok in ${took} s: ${CMD}")
