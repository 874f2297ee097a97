# SPDX-License-Identifier: MIT
# Script mode: `leakgate run` on a plain build and the linked build of the
# same suite must give the same results.
#   LINKED_JSON, LINKED_JUNIT, RUN_JSON, RUN_JUNIT  the four files
# JUnit: identical once times, the binary's path and its build-id are
# blanked.  JSON: the same records with the same status, totals, limits,
# notes and report text (binary blanked), and per stack the same bytes,
# objects, verdict and shown frames (function, line); raw addresses and the
# runner frames below the test (trampolines live in different objects)
# may differ.
set(failed "")

function(normalize_text var)
  set(t "${${var}}")
  string(REGEX REPLACE "time=\"[0-9.]+\"" "time=\"T\"" t "${t}")
  string(REGEX REPLACE "(leakgate\\.(binary|build_id)\" value=)\"[^\"]*\""
         "\\1\"X\"" t "${t}")
  string(REGEX REPLACE "binary [^ \n]+ \\(build-id [0-9a-f]+\\)"
         "binary X (build-id X)" t "${t}")
  string(REGEX REPLACE "binary [^ \n]+ \\(no build-id\\)" "binary X" t "${t}")
  set(${var} "${t}" PARENT_SCOPE)
endfunction()

# The frames a report shows ("function:line;..."): the user's code.
function(shown_frames var json i s)
  set(out "")
  string(JSON nf ERROR_VARIABLE err LENGTH "${json}" tests ${i} stacks ${s}
         frames)
  if(NOT err AND nf GREATER 0)
    math(EXPR flast "${nf} - 1")
    foreach(f RANGE ${flast})
      string(JSON shown GET "${json}" tests ${i} stacks ${s} frames ${f} shown)
      if(shown)
        string(JSON fn GET "${json}" tests ${i} stacks ${s} frames ${f}
               function)
        string(JSON line GET "${json}" tests ${i} stacks ${s} frames ${f} line)
        string(APPEND out "${fn}:${line};")
      endif()
    endforeach()
  endif()
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

file(READ "${LINKED_JUNIT}" a)
file(READ "${RUN_JUNIT}" b)
normalize_text(a)
normalize_text(b)
if(NOT a STREQUAL b)
  string(APPEND failed "JUnit differs:\n--- linked\n${a}\n--- run\n${b}\n")
endif()

file(READ "${LINKED_JSON}" a)
file(READ "${RUN_JSON}" b)
macro(same what)
  string(JSON va ERROR_VARIABLE ea GET "${a}" ${ARGN})
  string(JSON vb ERROR_VARIABLE eb GET "${b}" ${ARGN})
  if("${what}" STREQUAL "text")
    normalize_text(va)
    normalize_text(vb)
  endif()
  if(ea OR eb)
    string(APPEND failed "${ARGN}: ${ea} ${eb}\n")
  elseif(NOT "${va}" STREQUAL "${vb}")
    string(APPEND failed "${ARGN}: linked '${va}' run '${vb}'\n")
  endif()
endmacro()

foreach(k sampling jemalloc_version thresholds report_dir)
  same(value environment ${k})
endforeach()
foreach(k tests passed failed not_judged)
  same(value summary ${k})
endforeach()
string(JSON n LENGTH "${a}" tests)
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  foreach(k name status measured retained_bytes retained_objects
            counted_stacks excluded_bytes stack_limit total_limit stacks_over
            total_over not_judged_why notes)
    same(value tests ${i} ${k})
  endforeach()
  same(text tests ${i} report)
  string(JSON ns LENGTH "${a}" tests ${i} stacks)
  string(JSON nsb LENGTH "${b}" tests ${i} stacks)
  if(NOT ns EQUAL nsb)
    string(APPEND failed "tests ${i}: ${ns} stacks linked, ${nsb} run\n")
  elseif(ns GREATER 0)
    math(EXPR slast "${ns} - 1")
    foreach(s RANGE ${slast})
      foreach(k bytes objects judged counted limit limit_source over ignored)
        same(value tests ${i} stacks ${s} ${k})
      endforeach()
      shown_frames(fa "${a}" ${i} ${s})
      shown_frames(fb "${b}" ${i} ${s})
      if(NOT fa STREQUAL fb)
        string(APPEND failed "tests ${i} stack ${s}: frames '${fa}' / '${fb}'\n")
      endif()
    endforeach()
  endif()
endforeach()

if(failed)
  message(FATAL_ERROR "${failed}")
endif()
message(STATUS "ok: ${n} records agree")
