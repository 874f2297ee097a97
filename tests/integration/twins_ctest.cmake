# SPDX-License-Identifier: MIT
# Script mode: the ctest tests leakgate_discover_tests() registered for
# `twins` (two CUnit suites named "twins", twins_cases.c), per test and
# per suite, run through ctest as a user would: each has its own name,
# and each judges only its own windows.  CTEST, DIR: ctest and the build
# directory of tests/integration.
set(failed "")
execute_process(COMMAND ${CTEST} --test-dir ${DIR} -N -R "^twins_(test|suite)/"
                OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
foreach(name "twins_test/twins/clean_list" "twins_test/twins/leaks_node"
             "twins_test/twins/[suite]" "twins_test/twins#2/clean_list"
             "twins_test/twins#2/leaks_node" "twins_test/twins#2/[suite]"
             "twins_suite/twins" "twins_suite/twins#2")
  string(FIND "${listed}" ": ${name}\n" at)
  if(at LESS 0)
    string(APPEND failed "ctest does not list ${name}\n")
  endif()
endforeach()
# check(<ctest name regex> <nomatch regex> <match regex>...)
function(check name nomatch)
  execute_process(COMMAND ${CTEST} --test-dir ${DIR} -V -R "^${name}$"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(all "${out}${err}")
  if(NOT rc EQUAL 0)
    set(failed "${failed}${name}: ctest exited ${rc}\n" PARENT_SCOPE)
  elseif(all MATCHES "${nomatch}")
    set(failed "${failed}${name}: '${nomatch}' in\n${all}\n" PARENT_SCOPE)
  endif()
  foreach(match IN LISTS ARGN)
    if(NOT all MATCHES "${match}")
      set(failed "${failed}${name}: no '${match}' in\n${all}\n" PARENT_SCOPE)
    endif()
  endforeach()
endfunction()
check("twins_test/twins/clean_list" "FAIL" "leakgate: [0-9]+ windows? judged, 0 over")
check("twins_test/twins#2/clean_list" "FAIL" "leakgate: [0-9]+ windows? judged, 0 over")
check("twins_test/twins/leaks_node" "FAIL twins#2"
      "leakgate: FAIL twins/leaks_node: 48 B" "leakgate: [0-9]+ windows? judged, 1 over")
check("twins_test/twins#2/leaks_node" "FAIL twins/"
      "leakgate: FAIL twins#2/leaks_node: 48 B" "leakgate: [0-9]+ windows? judged, 1 over")
check("twins_test/twins#2/\\[suite\\]" "FAIL twins/"
      "leakgate: FAIL twins#2/\\[suite\\]: 48 B" "leakgate: [0-9]+ windows? judged, 1 over")
check("twins_test/twins/\\[suite\\]" "FAIL" "leakgate: [0-9]+ windows? judged, 0 over")
check("twins_suite/twins" "FAIL twins#2"
      "leakgate: FAIL twins/leaks_node: 48 B" "leakgate: [0-9]+ windows? judged, 1 over")
check("twins_suite/twins#2" "FAIL twins/"
      "leakgate: FAIL twins#2/leaks_node: 48 B"
      "leakgate: FAIL twins#2/\\[suite\\]: 48 B" "leakgate: [0-9]+ windows? judged, 2 over")
if(failed)
  message(FATAL_ERROR "${failed}")
endif()
