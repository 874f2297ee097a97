# SPDX-License-Identifier: MIT
# Script mode: two binaries of one project built from the same test
# sources and discovered under one TEST_PREFIX (none, or the same) make
# leakgate_discover_tests() warn at configure time, naming both and the
# call to change; the call changed as printed configures without the
# warning and gives ctest distinct names (its [outputs] test's name says
# the target once).  Binaries from different
# sources, one target discovered twice, or different prefixes stay quiet.
# MODULE is cmake/LeakgateDiscoverTests.cmake, WORK a scratch directory,
# CC the C compiler.
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
file(COPY_FILE ${WORK}/fake.c ${WORK}/other.c)

# configure(NAME BODY... EXPECT_WARNING): a project whose CMakeLists.txt
# ends with the BODY strings; the warning must appear (TRUE) or not (FALSE).
function(configure name)
  set(parts ${ARGN})
  list(POP_BACK parts expect)
  string(CONCAT body ${parts})
  set(dir ${WORK}/${name})
  file(MAKE_DIRECTORY ${dir})
  file(WRITE ${dir}/CMakeLists.txt
    "cmake_minimum_required(VERSION 3.21)\nproject(${name} C)\n"
    "enable_testing()\ninclude(${MODULE})\n${body}")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${dir} -B ${dir}/build
                          -DCMAKE_C_COMPILER=${CC}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(all "${out}${err}")
  set(warned FALSE)
  string(REGEX REPLACE "[ \t\r\n]+" " " flat "${all}")
  if(flat MATCHES "are built from the same test sources")
    set(warned TRUE)
  endif()
  if(NOT rc EQUAL 0 OR NOT warned STREQUAL expect)
    string(APPEND failed "${name}: exit ${rc}, warning ${warned}, expected "
                         "${expect}:\n${all}\n")
  endif()
  set(failed "${failed}" PARENT_SCOPE)
  set(output "${flat}" PARENT_SCOPE)
endfunction()

string(CONCAT two "add_executable(fake_a ${WORK}/fake.c)\n"
                 "add_executable(fake_b ${WORK}/fake.c)\n")

# 1. Must fire: same sources, no prefix; the message names both and the
# call to write.
configure(no_prefix "${two}leakgate_discover_tests(fake_a)\n"
                    "leakgate_discover_tests(fake_b)\n" TRUE)
foreach(re "fake_a and fake_b are built from the same test sources"
           "discovered both without a TEST_PREFIX"
           "leakgate_discover_tests\\(fake_b TEST_PREFIX fake_b/\\)")
  if(NOT output MATCHES "${re}")
    string(APPEND failed "no_prefix: output does not match ${re}:\n${output}\n")
  endif()
endforeach()

# 2. The printed call, as written: quiet, and ctest's names are distinct.
configure(applied "${two}leakgate_discover_tests(fake_a)\n"
                  "leakgate_discover_tests(fake_b TEST_PREFIX fake_b/)\n"
                  FALSE)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/applied/build
                OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir
                        ${WORK}/applied/build -N
                OUTPUT_VARIABLE listed RESULT_VARIABLE rc2)
if(NOT rc EQUAL 0 OR NOT listed MATCHES "Total Tests: 6"
   OR NOT listed MATCHES "fake_b/s/t\n" OR NOT listed MATCHES ": s/t\n")
  string(APPEND failed "applied: expected s/t and fake_b/s/t:\n${out}${listed}\n")
endif()
# The [outputs] tests: the prefix already names fake_b, so its name does
# not say it twice (fake_b/[outputs], not fake_b/fake_b/[outputs]).
if(NOT listed MATCHES ": fake_b/\\[outputs\\]\n"
   OR NOT listed MATCHES ": fake_a/\\[outputs\\]\n"
   OR listed MATCHES "fake_b/fake_b")
  string(APPEND failed "applied: expected fake_a/[outputs] and "
                       "fake_b/[outputs]:\n${listed}\n")
endif()

# 3. Must fire: the same prefix for both.
configure(same_prefix "${two}leakgate_discover_tests(fake_a TEST_PREFIX x/)\n"
                      "leakgate_discover_tests(fake_b TEST_PREFIX x/)\n" TRUE)
if(NOT output MATCHES "both with TEST_PREFIX x/")
  string(APPEND failed "same_prefix: does not name the prefix:\n${output}\n")
endif()

# 4. Stays quiet: different sources, no prefix.
configure(other_sources
  "add_executable(fake_a ${WORK}/fake.c)\n"
  "add_executable(fake_b ${WORK}/other.c)\n"
  "leakgate_discover_tests(fake_a)\nleakgate_discover_tests(fake_b)\n" FALSE)

# 5. Stays quiet: one target discovered twice (PER test and PER binary).
configure(one_target "add_executable(fake_a ${WORK}/fake.c)\n"
  "leakgate_discover_tests(fake_a)\n"
  "leakgate_discover_tests(fake_a PER binary)\n" FALSE)

# 6. Stays quiet: each its own prefix.
configure(prefixed "${two}leakgate_discover_tests(fake_a TEST_PREFIX a/)\n"
                   "leakgate_discover_tests(fake_b TEST_PREFIX b/)\n" FALSE)

# 7. Must fire: a binary that runs instead of listing (not linked with
# leakgate: LEAKGATE_LIST means nothing to it) fails the build, naming
# it, instead of making ctest tests of its output's lines; a banner line
# with a '/' beside a real listing is left out, not made a test.
file(WRITE ${WORK}/ungated.c [=[
#include <stdio.h>
int main(void)
{
    puts("     http://cunit.sourceforge.net/\nasserts   17  17  n/a");
    return 0;
}
]=])
file(WRITE ${WORK}/banner.c [=[
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
    puts("runner 1.0: data in ./data/");
    if (getenv("LEAKGATE_LIST"))
        puts("s/t\ns/[suite]");
    return 0;
}
]=])
configure(ungated "add_executable(ungated ${WORK}/ungated.c)\n"
                  "leakgate_discover_tests(ungated)\n" FALSE)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/ungated/build
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(REGEX REPLACE "[ \t\r\n]+" " " flat "${out}${err}")
if(rc EQUAL 0 OR NOT flat MATCHES "listed no CUnit test .no 'suite/.suite.' line.: it ran without leakgate")
  string(APPEND failed "ungated: the build did not fail naming it:\n${out}${err}\n")
endif()
configure(banner "add_executable(banner ${WORK}/banner.c)\n"
                 "leakgate_discover_tests(banner)\n" FALSE)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/banner/build
                OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir
                        ${WORK}/banner/build -N
                OUTPUT_VARIABLE listed RESULT_VARIABLE rc2)
if(NOT rc EQUAL 0 OR NOT listed MATCHES "Total Tests: 3"
   OR listed MATCHES "runner")
  string(APPEND failed "banner: expected s/t, s/[suite] and [outputs] only:\n"
                       "${out}${listed}\n")
endif()

if(failed)
  message(FATAL_ERROR "${failed}")
endif()
message(STATUS "discover_prefix: warned for same sources under one prefix, "
               "quiet otherwise, the printed call applied")
