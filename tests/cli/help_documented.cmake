# SPDX-License-Identifier: MIT
# Script mode: every option that `BINARY --help` prints must be documented
# in DOC (docs/cli.md) as `--option`.
execute_process(COMMAND ${BINARY} --help OUTPUT_VARIABLE help
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${BINARY} --help exited ${rc}")
endif()
file(READ ${DOC} doc)
string(REGEX MATCHALL "--[a-z][a-z-]*" options "${help}")
list(REMOVE_DUPLICATES options)
set(missing "")
foreach(opt IN LISTS options)
  string(FIND "${doc}" "`${opt}" at)
  if(at EQUAL -1)
    list(APPEND missing ${opt})
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "not documented in ${DOC}: ${missing}")
endif()
list(LENGTH options n)
message(STATUS "${n} options of --help documented")
