# SPDX-License-Identifier: MIT
# Script mode: every option that `LEAKGATE VERB --help` prints must be
# documented in DOC (docs/cli.md) as `--option`.
execute_process(COMMAND ${LEAKGATE} ${VERB} --help OUTPUT_VARIABLE help
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${LEAKGATE} ${VERB} --help exited ${rc}")
endif()
file(READ ${DOC} doc)
string(REGEX MATCHALL "--[a-z][a-z-]*" options "${help}")
list(REMOVE_DUPLICATES options)
foreach(opt IN LISTS options)
  string(FIND "${doc}" "`${opt}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "leakgate ${VERB} ${opt} is not documented in ${DOC}")
  endif()
endforeach()
list(LENGTH options n)
message(STATUS "${n} options of leakgate ${VERB} --help documented")
