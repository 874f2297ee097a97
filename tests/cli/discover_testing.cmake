# SPDX-License-Identifier: MIT
# Script mode: leakgate_discover_tests() in a project that never enables
# testing fails the configuration, naming each CMakeLists.txt that lacks
# enable_testing() and printing the line to add; the line, added where the
# message says, gives a ctest that lists the tests.  Enabling testing after
# the call, or include(CTest), is accepted; BUILD_TESTING=OFF is not
# checked.  MODULE is cmake/LeakgateDiscoverTests.cmake, WORK a scratch
# directory, CC the C compiler.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(failed "")

# A fake test binary: `LEAKGATE_LIST=1` prints two CUnit names.
file(WRITE ${WORK}/fake.c [=[
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (getenv("LEAKGATE_LIST"))
        puts("s/[suite]\ns/t");
    return 0;
}
]=])

# project(NAME TOP SUB): TOP is the top-level CMakeLists.txt's body after
# project(); a non-empty SUB makes a subdirectory "sub" with that body.
function(project_dir name top sub)
  set(dir ${WORK}/${name})
  if(NOT minimum)
    set(minimum 3.21)
  endif()
  file(MAKE_DIRECTORY ${dir})
  file(WRITE ${dir}/CMakeLists.txt
    "cmake_minimum_required(VERSION ${minimum})\nproject(${name} C)\n"
    "include(${MODULE})\n${top}")
  if(sub)
    file(MAKE_DIRECTORY ${dir}/sub)
    file(WRITE ${dir}/sub/CMakeLists.txt "${sub}")
  endif()
endfunction()

# configure(NAME EXPECT_RC [REGEX...]): configure WORK/NAME; the exit
# status must be EXPECT_RC (0 or 1) and the output match each REGEX.
function(configure name expect)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK}/${name}
                          -B ${WORK}/${name}/build -DCMAKE_C_COMPILER=${CC}
                          ${CONFIGURE_ARGS}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(all "${out}${err}")
  if(NOT rc EQUAL expect)
    string(APPEND failed "${name}: configure exit ${rc}, expected "
                         "${expect}:\n${all}\n")
  endif()
  foreach(re IN LISTS ARGN)
    if(NOT all MATCHES "${re}")
      string(APPEND failed "${name}: output does not match ${re}:\n${all}\n")
    endif()
  endforeach()
  set(failed "${failed}" PARENT_SCOPE)
  set(output "${all}" PARENT_SCOPE)
endfunction()

set(add "add_executable(fake ${WORK}/fake.c)\nleakgate_discover_tests(fake)\n")

# 1. No enable_testing() anywhere: fails, naming the file and the line.
project_dir(none "${add}" "")
configure(none 1
  "leakgate_discover_tests\\(fake\\): testing is not enabled in"
  "none/CMakeLists.txt"
  "Total Tests: 0"
  "\n +enable_testing\\(\\)\n")

# 2. The message followed as written: the line after project().
file(READ ${WORK}/none/CMakeLists.txt body)
string(REPLACE "project(none C)\n" "project(none C)\nenable_testing()\n"
       body "${body}")
file(WRITE ${WORK}/none/CMakeLists.txt "${body}")
configure(none 0)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/none/build
                OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${WORK}/none/build -N
                OUTPUT_VARIABLE listed RESULT_VARIABLE rc2)
if(NOT rc EQUAL 0 OR NOT listed MATCHES "Total Tests: 3")
  string(APPEND failed "none fixed: expected 2 tests and [outputs]:\n${out}${listed}\n")
endif()

# 3. enable_testing() after the call, in the same directory: accepted.
project_dir(after "${add}enable_testing()\n" "")
configure(after 0)

# 4. include(CTest) enables testing; with BUILD_TESTING=OFF nothing is
# checked (the project asked for no tests).
project_dir(ctest "include(CTest)\n${add}" "")
configure(ctest 0)
set(CONFIGURE_ARGS -DBUILD_TESTING=OFF)
configure(ctest 0)
set(CONFIGURE_ARGS "")

# 5. Testing enabled in the subdirectory only: ctest at the top would not
# see it (no top-level CTestTestfile.cmake), so the top file is named.
project_dir(sub_only "add_subdirectory(sub)\n" "enable_testing()\n${add}")
configure(sub_only 1 "sub_only/CMakeLists.txt\n")
if(output MATCHES "sub_only/sub/CMakeLists.txt")
  string(APPEND failed "sub_only: names the subdirectory, which has it\n")
endif()

# 6. Enabled at the top after add_subdirectory(): the subdirectory's
# tests are lost (its scope was copied before), so it is named.
project_dir(late_top "add_subdirectory(sub)\nenable_testing()\n" "${add}")
configure(late_top 1 "late_top/sub/CMakeLists.txt")

# 7. Enabled at the top before add_subdirectory(): accepted.
project_dir(top "enable_testing()\nadd_subdirectory(sub)\n" "${add}")
configure(top 0)

# 8. A project added to a build that does not test (a superbuild): its
# own top enables testing, which is where its tests are run from.
project_dir(super "add_subdirectory(sub)\n"
  "project(sub C)\nenable_testing()\n${add}")
configure(super 0)

# 9. Projects that ask for an old CMake (wslay's tests/: 3.2): the module
# sets the policies it needs itself, THRESHOLDS included (IN_LIST needs
# CMP0057), and the tests are registered and listed.
string(CONCAT add_thr "add_executable(fake ${WORK}/fake.c)\nenable_testing()\n"
       "leakgate_discover_tests(fake THRESHOLDS ${WORK}/fake.yaml)\n")
file(WRITE ${WORK}/fake.yaml "version: 1\n")
foreach(minimum 2.8.12 3.1 3.2)
  string(REPLACE "." "_" old "old_${minimum}")
  project_dir(${old} "${add_thr}" "")
  configure(${old} 0)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/${old}/build
                  OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
  execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${WORK}/${old}/build -N
                  OUTPUT_VARIABLE listed RESULT_VARIABLE rc2)
  if(NOT rc EQUAL 0 OR NOT listed MATCHES "Total Tests: 3")
    string(APPEND failed "${old}: expected 2 tests and [outputs]:\n${out}${listed}\n")
  endif()
endforeach()
unset(minimum)

if(failed)
  message(FATAL_ERROR "${failed}")
endif()
