# SPDX-License-Identifier: MIT
# Run with cmake -P at build time (harness/CMakeLists.txt): leakgate's own
# copy of libgcc's unwinder.  Extracts unwind-dw2.o and unwind-dw2-fde-dip.o
# from the compiler's libgcc_eh.a and renames every symbol they define,
# _Unwind_Backtrace -> leakgate_gcc__Unwind_Backtrace and so on, in both
# (the references between them follow).  Their symbols are hidden already;
# renamed, nothing else in a program can bind to them, and a program's own
# _Unwind_* (C++ exceptions) still come from libgcc_s as in a plain run.
# Why: a test binary then does not load libgcc_s.so.1 at all (issue 23,
# docs/internals/performance-record.md "Process start").
#
# -D GCC_EH=<libgcc_eh.a> -D NM=<nm> -D OBJCOPY=<objcopy> -D AR=<ar>
# -D OUT=<directory>
foreach(v GCC_EH NM OBJCOPY AR OUT)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "LeakgateUnwinder.cmake: -D ${v}=... is missing")
  endif()
endforeach()
set(members unwind-dw2.o unwind-dw2-fde-dip.o)
file(MAKE_DIRECTORY "${OUT}/extract")
execute_process(COMMAND "${AR}" x "${GCC_EH}" ${members}
                WORKING_DIRECTORY "${OUT}/extract" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${AR} x ${GCC_EH} ${members}: exit ${rc}")
endif()
set(map "")
foreach(m ${members})
  execute_process(COMMAND "${NM}" --defined-only -g "${OUT}/extract/${m}"
                  OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} ${OUT}/extract/${m}: exit ${rc}")
  endif()
  string(REGEX MATCHALL "[^\n]+" lines "${syms}")
  foreach(line ${lines})
    if(line MATCHES "^[0-9a-fA-F]+ [A-Z] ([A-Za-z_][A-Za-z0-9_]*)$")
      string(APPEND map "${CMAKE_MATCH_1} leakgate_gcc_${CMAKE_MATCH_1}\n")
    endif()
  endforeach()
endforeach()
if(NOT map MATCHES "_Unwind_Backtrace" OR NOT map MATCHES "_Unwind_Find_FDE")
  message(FATAL_ERROR "${GCC_EH}: no _Unwind_Backtrace or _Unwind_Find_FDE")
endif()
file(WRITE "${OUT}/rename.map" "${map}")
foreach(m ${members})
  execute_process(COMMAND "${OBJCOPY}" "--redefine-syms=${OUT}/rename.map"
                          "${OUT}/extract/${m}" "${OUT}/leakgate-${m}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${OBJCOPY} ${OUT}/extract/${m}: exit ${rc}")
  endif()
endforeach()
