# SPDX-License-Identifier: MIT
# Script mode: the call graph of a leak made through the C library
# (leaks/strdup: strdup() called by leak_with_strdup) is drawn from the
# user's frames down: the C library's __strdup is folded into its caller,
# whose box holds the bytes (issue 42, item 6).  A leak made by the
# user's own malloc call (leaks/plain) keeps its function's box too.
# BIN: the corpus; YAML: strict.yaml; WORK: scratch.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${BIN} --thresholds ${YAML}
                        --filter "leaks/strdup" --report-dir ${WORK}
                OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT EXISTS ${WORK}/leaks/strdup.dot)
  message(FATAL_ERROR "exit ${rc}, expected 1 and leaks/strdup.dot:\n${err}")
endif()
file(READ ${WORK}/leaks/strdup.dot dot)
if(NOT dot MATCHES "label=\"leak_with_strdup\\\\ncorpus_leaks.c:[0-9]+\\\\n8 B \\(100.0%\\)\""
   OR dot MATCHES "strdup\\\\nlibc")
  message(FATAL_ERROR "leaks/strdup.dot does not give the bytes to "
                      "leak_with_strdup, or draws libc's frame:\n${dot}")
endif()
message(STATUS "call graph drawn from the user's frames down")
