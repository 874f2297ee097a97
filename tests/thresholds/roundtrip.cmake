# SPDX-License-Identifier: MIT
# Script mode: the ratchet round trip on ratchet_suite under the real gate.
#   SUITE  ratchet_suite     SRC  tests/thresholds     WORK  scratch dir
# record a baseline on a leaking suite -> re-run passes -> add a leak ->
# re-run fails -> accept it -> remove it and tighten: back to the
# baseline byte for byte; then a stack grows (raised in place) and
# shrinks (tightened back).  Every written file is compared with
# SRC/expected/ byte for byte; hand-written comments, order, quoting and
# unrelated entries are in those files.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(YAML ${WORK}/leakgate.yaml)
configure_file(${SRC}/start.yaml ${YAML} COPYONLY)

# step(<name> <exit> [ENV k=v...] [ARGS ...] [MATCH re...] [NOMATCH re...])
function(step name expected)
  cmake_parse_arguments(S "" "" "ENV;ARGS;MATCH;NOMATCH" ${ARGN})
  foreach(kv IN LISTS S_ENV)
    string(REGEX MATCH "^[^=]+" k "${kv}")
    string(REGEX REPLACE "^[^=]+=" "" v "${kv}")
    set(ENV{${k}} "${v}")
  endforeach()
  execute_process(COMMAND ${SUITE} --thresholds ${YAML} ${S_ARGS}
                  WORKING_DIRECTORY ${WORK}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  foreach(kv IN LISTS S_ENV)
    string(REGEX MATCH "^[^=]+" k "${kv}")
    unset(ENV{${k}})
  endforeach()
  set(all "${out}${err}")
  if(NOT "${rc}" STREQUAL "${expected}")
    message(FATAL_ERROR "${name}: exit ${rc}, expected ${expected}\n${all}")
  endif()
  foreach(re IN LISTS S_MATCH)
    if(NOT all MATCHES "${re}")
      message(FATAL_ERROR "${name}: output does not match ${re}\n${all}")
    endif()
  endforeach()
  foreach(re IN LISTS S_NOMATCH)
    if(all MATCHES "${re}")
      message(FATAL_ERROR "${name}: output matches ${re}\n${all}")
    endif()
  endforeach()
  message(STATUS "ok: ${name}")
endfunction()

function(same name expected)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${YAML} ${expected}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(READ ${YAML} got)
    file(READ ${expected} want)
    message(FATAL_ERROR "${name}: ${YAML} differs from ${expected}\n"
                        "--- expected\n${want}--- got\n${got}---")
  endif()
  message(STATUS "ok: ${name}: identical to ${expected}")
endfunction()

step("a leaking suite fails" 1 MATCH "FAIL store/keep" "FAIL parse/tokens")
step("record a baseline" 0 ARGS --update-thresholds
     MATCH "added     tests \"store/keep\" \\(new entry\\): stacks rule \\[main, run_all, test_store_keep, store_make_entry\\] limit 96 B"
           "3 changes written to"
           "stale     ignore rule \\[tzset\\] \\(line 31\\)")
same("baseline" ${SRC}/expected/baseline.yaml)
step("re-run passes" 0 NOMATCH "FAIL")
step("an update with nothing to do changes nothing" 0 ARGS --update-thresholds
     MATCH "needs no change")
same("baseline unchanged" ${SRC}/expected/baseline.yaml)
step("a new leak fails" 1 ENV RATCHET_EXTRA_LEAK=1
     MATCH "FAIL parse/extra: 48 B" "extra_leak")
step("accept it" 0 ENV RATCHET_EXTRA_LEAK=1 ARGS --update-thresholds
     MATCH "added     tests \"parse/extra\" \\(new entry\\): stacks rule \\[main, run_all, test_parse_extra, extra_leak\\] limit 48 B")
same("accepted" ${SRC}/expected/extra_leak.yaml)
step("accepted leak passes" 0 ENV RATCHET_EXTRA_LEAK=1 NOMATCH "FAIL")
step("leak removed: --tighten alone reports" 0 ARGS --tighten
     MATCH "would remove tests \"parse/extra\" \\(line 29\\): stacks rule \\[main, run_all, test_parse_extra, extra_leak\\] \\(line 31\\): matched no stack"
           "dry run: not written")
same("dry run wrote nothing" ${SRC}/expected/extra_leak.yaml)
step("without --tighten the stale rule is reported" 0 ARGS --update-thresholds
     MATCH "stale     tests \"parse/extra\" \\(line 29\\): stacks rule \\[main, run_all, test_parse_extra, extra_leak\\]")
step("tighten" 0 ARGS --update-thresholds --tighten
     MATCH "removed   tests \"parse/extra\" \\(line 29\\): the entry, left empty")
same("tightened back to the baseline" ${SRC}/expected/baseline.yaml)
step("a stack grows" 1 ENV RATCHET_GROW=4
     MATCH "FAIL parse/grow: 256 B" "limit 64 B")
step("accept the growth" 0 ENV RATCHET_GROW=4 ARGS --update-thresholds
     MATCH "raised    tests \"parse/grow\" \\(line 14\\): stacks rule \\[main, run_all, test_parse_grow, parse_grow_buffer\\] \\(line 16\\): limit 64 B -> 256 B")
same("raised in place" ${SRC}/expected/grown.yaml)
step("it shrinks: the limit is loose" 0
     MATCH "loose     tests \"parse/grow\" \\(line 14\\): stacks rule \\[main, run_all, test_parse_grow, parse_grow_buffer\\] \\(line 16\\) limit 256 B is far above 64 B"
     ARGS --update-thresholds)
step("a slack of 4 KiB keeps it" 0 ARGS --update-thresholds --tighten --slack 4KiB
     MATCH "needs no change")
same("slack kept the limit" ${SRC}/expected/grown.yaml)
step("tighten with no slack" 0 ARGS --update-thresholds --tighten --slack 0%
     MATCH "lowered   tests \"parse/grow\" \\(line 14\\): stacks rule \\[main, run_all, test_parse_grow, parse_grow_buffer\\] \\(line 16\\) limit 256 B -> 64 B")
same("tightened back again" ${SRC}/expected/baseline.yaml)
step("a filtered run tightens only its own exact entry" 0
     ARGS --filter store/keep --update-thresholds --tighten
     MATCH "needs no change" NOMATCH "stale")
step("bad slack" 2 ARGS --tighten --slack lots
     MATCH "option '--slack': invalid slack 'lots'")

# One result file per process: a directory, or %p in the name.
step("results into a directory" 0 ARGS --json ${WORK}/res/ --junit ${WORK}/res/)
step("again: a second file, nothing replaced" 0 ARGS --json ${WORK}/res/)
step("a %p name" 0 ARGS --json ${WORK}/run-%p.json)
file(GLOB jsons ${WORK}/res/*.json)
file(GLOB xmls ${WORK}/res/*.xml)
file(GLOB pids ${WORK}/run-*.json)
list(LENGTH jsons nj)
list(LENGTH xmls nx)
list(LENGTH pids np)
if(NOT nj EQUAL 2 OR NOT nx EQUAL 1 OR NOT np EQUAL 1)
  message(FATAL_ERROR "per-process files: ${jsons} / ${xmls} / ${pids}")
endif()
foreach(f IN LISTS pids)
  get_filename_component(name ${f} NAME)
  if(NOT name MATCHES "^run-[0-9]+[.]json$")
    message(FATAL_ERROR "%p was not replaced by the pid: ${name}")
  endif()
endforeach()
message(STATUS "ok: per-process result files ${jsons} ${xmls} ${pids}")

