# SPDX-License-Identifier: MIT
# Script mode: a journal that cannot take every line (a 200 KiB file size
# limit: ulimit -f, SIGXFSZ ignored; the run's journal outgrows it, the
# JUnit file does not) costs no result: the JUnit file is written from
# what the journal holds and the lines the process held, with every
# window and every failure, the exit status is the verdicts' (1), and a
# note names the file and the cause.  Without the limit: no note.  A
# ctest test process (LEAKGATE_OUTPUTS_RENDER=end) says its windows will
# be missing and exits 3.
# BIN: outputs_corpus; FSIZE: tests/faults/with_fsize.sh; WORK: scratch.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(failed "")
foreach(limit 400 unlimited)
  file(REMOVE_RECURSE ${WORK}/${limit})
  file(MAKE_DIRECTORY ${WORK}/${limit})
  execute_process(COMMAND sh ${FSIZE} ${limit} ${BIN} --filter "s*"
                          --junit j.xml
                  WORKING_DIRECTORY ${WORK}/${limit}
                  OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 1)
    string(APPEND failed "${limit}: exit ${rc}, expected 1\n")
  endif()
  if(EXISTS ${WORK}/${limit}/j.xml)
    file(READ ${WORK}/${limit}/j.xml junit)
  else()
    set(junit "")
  endif()
  string(REGEX MATCHALL "<testcase " cases "${junit}")
  string(REGEX MATCHALL "<failure " failures "${junit}")
  list(LENGTH cases ncases)
  list(LENGTH failures nfailures)
  if(NOT ncases EQUAL 210 OR NOT nfailures EQUAL 3)
    string(APPEND failed "${limit}: j.xml has ${ncases} testcases and "
                         "${nfailures} failures, expected 210 and 3\n")
  endif()
  set(note "leakgate: note: [^\n]*/j.xml: cannot write the journal in [^\n]*/[.]j[.]xml[.]leakgate/run-[^\n]*File too large[^\n]*it was written from what the journal holds and this process's own results")
  if(limit STREQUAL "400" AND NOT err MATCHES "${note}")
    string(APPEND failed "${limit}: no note naming the journal and the cause\n")
  elseif(limit STREQUAL "unlimited" AND err MATCHES "leakgate: note: [^\n]*journal")
    string(APPEND failed "${limit}: a note about the journal\n")
  endif()
  if(err MATCHES "was not written")
    string(APPEND failed "${limit}: an output was not written\n")
  endif()
  if(failed)
    message(FATAL_ERROR "${failed}\n--- stderr (${limit}) ---\n${err}")
  endif()
endforeach()
# A ctest test process (the [outputs] test writes the file from the
# journals): it cannot put its windows there, so it says so and exits 3.
file(MAKE_DIRECTORY ${WORK}/ctest)
execute_process(COMMAND ${CMAKE_COMMAND} -E env LEAKGATE_OUTPUTS_RENDER=end
                        sh ${FSIZE} 400 ${BIN} --filter "s*" --junit j.xml
                WORKING_DIRECTORY ${WORK}/ctest
                OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 3 OR NOT err MATCHES
   "leakgate: [^\n]*/j.xml will lack this process's windows: cannot write the journal in [^\n]*File too large")
  message(FATAL_ERROR "ctest process: exit ${rc}, expected 3 naming the "
                      "file and the cause:\n${err}")
endif()
message(STATUS "held journal: every window written, the cause named")
