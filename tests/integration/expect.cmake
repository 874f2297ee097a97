# SPDX-License-Identifier: MIT
# Script mode: run CMD, then check its exit status is EXIT and that its
# stdout+stderr match every regex of MATCH and none of NOMATCH.  CMD, MATCH,
# NOMATCH and ENV (NAME=VALUE) are lists joined with "@@" (add_test would
# split ';').  ENV is set first.
string(REPLACE "@@" ";" CMD "${CMD}")
string(REPLACE "@@" ";" ENV "${ENV}")
string(REPLACE "@@" ";" match_list "${MATCH}")
string(REPLACE "@@" ";" nomatch_list "${NOMATCH}")
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/set_env.cmake)
execute_process(COMMAND ${CMD} OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE rc)
set(all "${out}${err}")
set(failed "")
if(NOT "${rc}" STREQUAL "${EXIT}")
  string(APPEND failed "exit status ${rc}, expected ${EXIT}\n")
endif()
foreach(re IN LISTS match_list)
  if(NOT re STREQUAL "" AND NOT all MATCHES "${re}")
    string(APPEND failed "output does not match: ${re}\n")
  endif()
endforeach()
foreach(re IN LISTS nomatch_list)
  if(NOT re STREQUAL "" AND all MATCHES "${re}")
    string(APPEND failed "output matches what it must not: ${re}\n")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "${failed}--- output ---\n${all}")
endif()
message(STATUS "ok: ${CMD}")
