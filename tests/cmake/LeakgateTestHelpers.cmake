# SPDX-License-Identifier: MIT
# Helpers shared by the test directories (included by tests/CMakeLists.txt).

# leakgate_mark_line(<var> <file> <mark>): <var> = the line number of the
# comment "MARK:<mark>" in <file> (relative to the calling directory or
# absolute), so that expectations name lines without hard-coding them.
function(leakgate_mark_line var file mark)
  get_filename_component(path ${file} ABSOLUTE
                         BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
  file(STRINGS ${path} lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(line MATCHES "MARK:${mark}( |$)")
      set(${var} ${n} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "no MARK:${mark} in ${file}")
endfunction()
