# SPDX-License-Identifier: MIT
# Script mode: the ctest tests leakgate_discover_tests() registered for
# own_runner (own_runner.c: a runner that rejects leakgate's options in
# its argv and needs its data file) are its five windows, not its banner;
# each runs its own test with the runner's arguments unchanged: the leak
# fails, the clean tests pass, and the [outputs] test writes a JUnit file
# that counts them all.  CTEST, DIR: ctest and the build directory of
# tests/integration; WORK: a scratch directory.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(failed "")
execute_process(COMMAND ${CTEST} --test-dir ${DIR} -N -R "^own_runner/"
                OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
foreach(name parse/ok parse/grows parse/[suite] io/ok io/[suite] [outputs])
  string(FIND "${listed}" ": own_runner/${name}\n" at)
  if(at LESS 0)
    string(APPEND failed "ctest does not list own_runner/${name}\n")
  endif()
endforeach()
string(REGEX MATCHALL ": own_runner/" ours "${listed}")
list(LENGTH ours n)
if(NOT n EQUAL 6 OR listed MATCHES "starting")
  string(APPEND failed "ctest lists more than the runner's windows\n")
endif()
set(ENV{LEAKGATE_JUNIT} ${WORK}/junit.xml)
execute_process(COMMAND ${CTEST} --test-dir ${DIR} -R "^own_runner/" -V
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
foreach(match "leakgate: FAIL parse/grows: 32 B"
              "leakgate: 1 window judged, 0 over the limits")
  if(NOT out MATCHES "${match}")
    string(APPEND failed "ctest -V shows no '${match}'\n")
  endif()
endforeach()
if(out MATCHES "own_runner: ")
  string(APPEND failed "the runner refused its arguments\n")
endif()
file(READ ${WORK}/junit.xml junit)
foreach(match "tests=\"5\"" "failures=\"1\""
              "<testcase classname=\"own_runner/parse\" name=\"grows\"[^>]*>.*<failure"
              "<testcase classname=\"own_runner/io\" name=\"ok\"")
  if(NOT junit MATCHES "${match}")
    string(APPEND failed "junit.xml has no '${match}'\n")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "${failed}\n--- ctest -N ---\n${listed}\n--- ctest -V ---\n${out}\n--- junit.xml ---\n${junit}")
endif()
message(STATUS "own runner: listed, run and counted with its own arguments")
