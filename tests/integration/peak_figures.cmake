# SPDX-License-Identifier: MIT
# Script mode: print each window's peak of a corpus run's JSON results,
# one line per window: "peak <name> <peak_bytes> <allocations>" (a window
# without a peak, e.g. one that never ran: "-" for both).  ci/corpus-repeat
# collects these over its runs: the peak_stable/* windows must read the
# same in every run and mode, and it prints every window's spread.
file(READ ${JSON} json)
string(JSON ntests LENGTH "${json}" tests)
math(EXPR last "${ntests} - 1")
set(lines "")
foreach(i RANGE ${last})
  string(JSON name GET "${json}" tests ${i} name)
  string(JSON peak ERROR_VARIABLE e1 GET "${json}" tests ${i} peak_bytes)
  string(JSON allocs ERROR_VARIABLE e2 GET "${json}" tests ${i} allocations)
  if(e1 OR e2 OR peak STREQUAL "null" OR allocs STREQUAL "null")
    set(peak -)
    set(allocs -)
  endif()
  string(APPEND lines "peak ${name} ${peak} ${allocs}\n")
endforeach()
# On stdout (message() writes to stderr).
execute_process(COMMAND ${CMAKE_COMMAND} -E echo_append "${lines}")
