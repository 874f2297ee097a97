# SPDX-License-Identifier: MIT
# The JSON of the whole corpus run must show clean/empty with no stack at
# all: leakgate's own allocations never appear in a test's diff.  With
# -DMEASURED_BY="fast pass" it must also have passed the fast first pass:
# nothing leakgate allocated while the tracker watched stayed live.
# Its peak meter must read nothing either (issue 16): peak_bytes 0 and 0
# allocations, so leakgate's own allocations (its dumps, the verdicts of
# earlier tests) never count in a test's peak.
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
    string(JSON peak ERROR_VARIABLE no_peak GET "${json}" tests ${i} peak_bytes)
    string(JSON allocs ERROR_VARIABLE no_allocs GET "${json}" tests ${i} allocations)
    if(no_peak OR no_allocs)
      message(FATAL_ERROR "clean/empty: no peak_bytes or allocations in ${JSON}")
    endif()
    if(NOT peak EQUAL 0 OR NOT allocs EQUAL 0)
      message(FATAL_ERROR "clean/empty: peak ${peak} B, ${allocs} allocations, expected 0 and 0")
    endif()
    if(DEFINED MEASURED_BY)
      string(JSON how GET "${json}" tests ${i} measured_by)
      if(NOT how STREQUAL MEASURED_BY)
        message(FATAL_ERROR "clean/empty: measured by ${how}, expected ${MEASURED_BY}")
      endif()
    endif()
    message(STATUS "clean/empty: empty diff, peak 0 B, 0 allocations")
    return()
  endif()
endforeach()
message(FATAL_ERROR "clean/empty not found in ${JSON}")
