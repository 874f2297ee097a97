# SPDX-License-Identifier: MIT
# The JSON of the whole corpus run must show clean/empty with no stack at
# all: leakgate's own allocations never appear in a test's diff.
file(READ ${JSON} json)
string(JSON ntests LENGTH "${json}" tests)
math(EXPR last "${ntests} - 1")
foreach(i RANGE ${last})
  string(JSON name GET "${json}" tests ${i} name)
  if(name STREQUAL "clean/empty")
    string(JSON nstacks LENGTH "${json}" tests ${i} stacks)
    string(JSON status GET "${json}" tests ${i} status)
    if(NOT nstacks EQUAL 0 OR NOT status STREQUAL "pass")
      message(FATAL_ERROR "clean/empty: ${nstacks} stacks, status ${status}")
    endif()
    message(STATUS "clean/empty: empty diff")
    return()
  endif()
endforeach()
message(FATAL_ERROR "clean/empty not found in ${JSON}")
