# SPDX-License-Identifier: MIT
# The JSON of the whole corpus run must show clean/empty with no stack at
# all: leakgate's own allocations never appear in a test's diff.  With
# -DMEASURED_BY="fast pass" it must also have passed the fast first pass:
# nothing leakgate allocated while the tracker watched stayed live.
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
    if(DEFINED MEASURED_BY)
      string(JSON how GET "${json}" tests ${i} measured_by)
      if(NOT how STREQUAL MEASURED_BY)
        message(FATAL_ERROR "clean/empty: measured by ${how}, expected ${MEASURED_BY}")
      endif()
    endif()
    message(STATUS "clean/empty: empty diff")
    return()
  endif()
endforeach()
message(FATAL_ERROR "clean/empty not found in ${JSON}")
