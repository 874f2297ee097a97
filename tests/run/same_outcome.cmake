# SPDX-License-Identifier: MIT
# Script mode: run PLAIN (a plain run of a CUnit program) and GATED (the
# same tests under leakgate), lists joined with "@@", and check that the
# gated run kept the plain run's outcome (issue 28 item 2): the same exit
# status, the same "Test: NAME ...passed/FAILED" lines and the same
# failed assertions (CUnit's "N. file:line  - expression" lines).  ENV
# (NAME=VALUE, "@@"-joined) is set for both.
string(REPLACE "@@" ";" PLAIN "${PLAIN}")
string(REPLACE "@@" ";" GATED "${GATED}")
string(REPLACE "@@" ";" ENV "${ENV}")
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/set_env.cmake)

# outcome(<cmd> <rc var> <lines var> <all var>)
function(outcome cmd rc_var lines_var all_var)
  execute_process(COMMAND ${${cmd}} OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  set(all "${out}${err}")
  string(REGEX MATCHALL "Test: [^\n]*\\.\\.\\.(passed|FAILED)|\n +[0-9]+\\. [^\n]*:[0-9]+ +- [^\n]*"
         lines "${all}")
  list(TRANSFORM lines STRIP)
  set(${rc_var} "${rc}" PARENT_SCOPE)
  set(${lines_var} "${lines}" PARENT_SCOPE)
  set(${all_var} "${all}" PARENT_SCOPE)
endfunction()

outcome(PLAIN plain_rc plain_lines plain_all)
outcome(GATED gated_rc gated_lines gated_all)
set(failed "")
if(NOT plain_lines)
  string(APPEND failed "the plain run printed no CUnit test line\n")
endif()
if(NOT "${plain_rc}" STREQUAL "${gated_rc}")
  string(APPEND failed "exit status ${gated_rc} under the gate, ${plain_rc} in the plain run\n")
endif()
if(NOT "${plain_lines}" STREQUAL "${gated_lines}")
  string(REPLACE ";" "\n  " p "${plain_lines}")
  string(REPLACE ";" "\n  " g "${gated_lines}")
  string(APPEND failed "CUnit outcome differs:\n plain:\n  ${p}\n gated:\n  ${g}\n")
endif()
if(failed)
  message(FATAL_ERROR "${failed}--- plain output ---\n${plain_all}\n--- gated output ---\n${gated_all}")
endif()
string(REPLACE ";" ", " p "${plain_lines}")
message(STATUS "ok: the same outcome (exit ${plain_rc}): ${p}")
