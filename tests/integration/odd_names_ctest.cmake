# SPDX-License-Identifier: MIT
# Script mode: the ctest tests leakgate_discover_tests() registered for
# odd_names (odd_names.c: names with ';', brackets, '$', quotes, '#', a
# backslash, spaces, globs and "]==]") are listed intact (as --list prints
# them: a backslash doubled), each runs exactly
# its own test, and the run's [outputs] test writes a JUnit file that
# counts them all, the one leak failing.  CTEST, DIR: ctest and the build
# directory of tests/integration; WORK: a scratch directory.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(failed "")
execute_process(COMMAND ${CTEST} --test-dir ${DIR} -N -R "^odd_test/"
                OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
foreach(name "odd_test/semi;colon/a;b" "odd_test/semi;colon/leak;y"
             "odd_test/semi;colon/[suite]"
             "odd_test/br[ack]ets $x \"q\" #h/star*q?"
             "odd_test/br[ack]ets $x \"q\" #h/back\\\\slash sp ace"
             "odd_test/br[ack]ets $x \"q\" #h/close]==]bracket"
             "odd_test/br[ack]ets $x \"q\" #h/open[only"
             "odd_test/br[ack]ets $x \"q\" #h/only]shut;x"
             "odd_test/br[ack]ets $x \"q\" #h/[suite]")
  string(FIND "${listed}" ": ${name}\n" at)
  if(at LESS 0)
    string(APPEND failed "ctest does not list ${name}\n")
  endif()
endforeach()
# Every test of the binary, each in its own process, and the [outputs]
# test last (the fixture's cleanup).
set(ENV{LEAKGATE_JUNIT} ${WORK}/junit.xml)
execute_process(COMMAND ${CTEST} --test-dir ${DIR} -R "^odd_test/"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
file(READ ${WORK}/junit.xml junit)
foreach(match "tests=\"9\"" "failures=\"1\""
              "<testcase classname=\"odd_test/semi;colon\" name=\"leak;y\"[^>]*>.*<failure"
              "<testcase classname=\"odd_test/semi;colon\" name=\"a;b\""
              "name=\"star[*]q[?]\"" "name=\"back[\\][\\]slash sp ace\""
              "name=\"close]==]bracket\"" "name=\"open[[]only\""
              "name=\"only[]]shut;x\"")
  if(NOT junit MATCHES "${match}")
    string(APPEND failed "junit.xml has no '${match}'\n")
  endif()
endforeach()
# A LEAKGATE_LIST=1 exported in the shell does not reach the registered
# tests (each would list the names instead, and pass where the exit
# status decides): the leaking test is gated, and says it is over.
unset(ENV{LEAKGATE_JUNIT})
set(ENV{LEAKGATE_LIST} 1)
execute_process(COMMAND ${CTEST} --test-dir ${DIR} -V
                        -R "^odd_test/semi.colon/leak.y$"
                OUTPUT_VARIABLE out2 ERROR_VARIABLE err2)
unset(ENV{LEAKGATE_LIST})
if(NOT "${out2}${err2}" MATCHES "leakgate: 1 window judged, 1 over the limits")
  string(APPEND failed "with LEAKGATE_LIST=1 exported, the leaking test was not gated:\n${out2}${err2}\n")
endif()
if(failed)
  message(FATAL_ERROR "${failed}\n--- ctest -N ---\n${listed}\n--- junit.xml ---\n${junit}")
endif()
message(STATUS "odd names: every one registered, run and counted")
