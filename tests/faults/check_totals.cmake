# SPDX-License-Identifier: MIT
# Script mode: a window that keeps more stacks than a replay hands back
# (1,000: FAULTS_STACKS=1500, many/stacks_100k) lists 1,000 of them, and
# every total counts all 1,500, in JUnit and JSON alike.  BIN: the faults
# binary; OUT: a scratch directory.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(ENV{FAULTS_STACKS} 1500)
execute_process(COMMAND ${BIN} --filter "many/*" --junit ${OUT}/j.xml
                        --json ${OUT}/r.json
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(failed "")
if(NOT rc EQUAL 1)
  string(APPEND failed "exit ${rc}, expected 1\n")
endif()
if(NOT err MATCHES "FAIL many/stacks_100k: 12,000 B \\(12,000 B requested\\) retained in 1,500 objects")
  string(APPEND failed "no report of 12,000 B in 1,500 objects\n")
endif()
file(READ ${OUT}/j.xml junit)
file(READ ${OUT}/r.json json)
foreach(m "leakgate.retained_bytes\" value=\"12000\""
          "leakgate.retained_objects\" value=\"1500\""
          "leakgate.stacks\" value=\"1500\"")
  if(NOT junit MATCHES "${m}")
    string(APPEND failed "JUnit has no ${m}\n")
  endif()
endforeach()
foreach(m "\"retained_bytes\": 12000" "\"retained_objects\": 1500"
          "\"counted_stacks\": 1500")
  if(NOT json MATCHES "${m}")
    string(APPEND failed "JSON has no ${m}\n")
  endif()
endforeach()
string(REGEX MATCHALL "\"frames\"" listed "${json}")
list(LENGTH listed n)
if(NOT n EQUAL 1000)
  string(APPEND failed "JSON lists ${n} stacks, expected 1000 (the cap)\n")
endif()
if(failed)
  message(FATAL_ERROR "${failed}")
endif()
