# SPDX-License-Identifier: MIT
#
# leakgate_discover_tests(TARGET
#                         [THRESHOLDS file]
#                         [TEST_PREFIX prefix]
#                         [WORKING_DIRECTORY dir]
#                         [EXTRA_ARGS args...]
#                         [PROPERTIES name value...])
#
# Registers one ctest test per CUnit test of TARGET, named "<suite>/<test>",
# plus "<suite>/[suite]" for each suite's own init/cleanup window, like
# gtest_discover_tests().  The names come from `TARGET --list`, run after
# each build; each ctest test runs `TARGET --filter <exact name>`.
set(_LEAKGATE_DISCOVER_DIR ${CMAKE_CURRENT_LIST_DIR})

function(leakgate_discover_tests target)
  cmake_parse_arguments(LG "" "THRESHOLDS;TEST_PREFIX;WORKING_DIRECTORY"
                        "EXTRA_ARGS;PROPERTIES" ${ARGN})
  if(NOT TARGET ${target})
    message(FATAL_ERROR "leakgate_discover_tests: ${target} is not a target")
  endif()
  if(NOT LG_WORKING_DIRECTORY)
    set(LG_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  set(args ${LG_EXTRA_ARGS})
  if(LG_THRESHOLDS)
    get_filename_component(LG_THRESHOLDS ${LG_THRESHOLDS} ABSOLUTE)
    list(PREPEND args --thresholds ${LG_THRESHOLDS})
  endif()
  set(base ${CMAKE_CURRENT_BINARY_DIR}/${target}_leakgate)
  set(ctest_file ${base}_tests.cmake)
  set(include_file ${base}_include.cmake)
  add_custom_command(TARGET ${target} POST_BUILD
    BYPRODUCTS ${ctest_file}
    COMMAND ${CMAKE_COMMAND}
            -D "TEST_TARGET=${target}"
            -D "TEST_EXECUTABLE=$<TARGET_FILE:${target}>"
            -D "TEST_WORKING_DIR=${LG_WORKING_DIRECTORY}"
            -D "TEST_ARGS=${args}"
            -D "TEST_PREFIX=${LG_TEST_PREFIX}"
            -D "TEST_PROPERTIES=${LG_PROPERTIES}"
            -D "CTEST_FILE=${ctest_file}"
            -P ${_LEAKGATE_DISCOVER_DIR}/LeakgateAddTests.cmake
    VERBATIM)
  file(WRITE ${include_file}
    "if(EXISTS \"${ctest_file}\")\n"
    "  include(\"${ctest_file}\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
