# SPDX-License-Identifier: MIT
# Script mode: parity of a gated run with a plain run of the corpus.  Runs
# PLAIN (corpus_plain) and GATED (a gated command, with CORPUS_COUNT_RUNS=1
# so the gated corpus counts its tests' runs), each with stdout and stderr
# in their own files (OUT.plain.out/.err, OUT.gated.out/.err), then CHECK
# (parity_check and its options) on the two stdouts, the gated stderr
# given as --gate-stderr.  PLAIN, GATED and CHECK are lists joined with
# "@@" (add_test would split ';').  Fails when a run ended otherwise than
# by exiting 0 or 1 (crashed, could not run) or parity_check differs.
string(REPLACE "@@" ";" PLAIN "${PLAIN}")
string(REPLACE "@@" ";" GATED "${GATED}")
string(REPLACE "@@" ";" CHECK "${CHECK}")
set(ENV{CORPUS_COUNT_RUNS} 1)
set(failed "")
foreach(run plain gated)
  string(TOUPPER ${run} var)
  execute_process(COMMAND ${${var}} OUTPUT_FILE ${OUT}.${run}.out
                  ERROR_FILE ${OUT}.${run}.err RESULT_VARIABLE rc)
  if(NOT rc STREQUAL "0" AND NOT rc STREQUAL "1")
    file(READ ${OUT}.${run}.err err)
    string(APPEND failed
           "the ${run} run ended with '${rc}' (expected exit 0 or 1): "
           "${${var}}\n${err}\n")
  endif()
endforeach()
execute_process(COMMAND ${CHECK} --gate-stderr ${OUT}.gated.err
                        ${OUT}.plain.out ${OUT}.gated.out
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc STREQUAL "0")
  string(APPEND failed "parity_check: exit ${rc} (outputs in ${OUT}.*)\n")
endif()
if(failed)
  message(FATAL_ERROR "${failed}")
endif()
