# SPDX-License-Identifier: MIT
# Script mode: the ratchet for peak limits (issue 16 item 3), one CASE per
# ctest, on the corpus's peak suites (tests/integration/corpus_peak.c:
# peak/freed_big 2 MiB, peak_setup/fixture 3 MiB, peak/under_limit
# 256 KiB, peak_stable/small 8 KiB and medium 64 KiB, every run the same).
# peak/thread is left out with `--filter 'peak*/[!t]*'`: its peak depends
# on whether the process made a thread before (glibc's thread descriptor).
#   CORPUS  the corpus   LEAKGATE  the CLI   SRC  this directory
#   WORK  scratch
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(YAML ${WORK}/t.yaml)
set(PEAKS "peak*/[!t]*")

# run(<exit> <outvar> [PROG p] ARGS ...)
function(run expected outvar)
  cmake_parse_arguments(R "" "PROG" "ARGS" ${ARGN})
  if(NOT R_PROG)
    set(R_PROG ${CORPUS})
  endif()
  execute_process(COMMAND ${R_PROG} ${R_ARGS} WORKING_DIRECTORY ${WORK}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT "${rc}" STREQUAL "${expected}")
    file(READ ${YAML} y)
    message(FATAL_ERROR "${R_PROG} ${R_ARGS}: exit ${rc}, expected "
                        "${expected}\n${out}${err}--- ${YAML}\n${y}")
  endif()
  set(${outvar} "${out}${err}" PARENT_SCOPE)
endfunction()

function(must text re)
  if(NOT text MATCHES "${re}")
    message(FATAL_ERROR "does not match ${re}:\n${text}")
  endif()
endfunction()

function(must_not text re)
  if(text MATCHES "${re}")
    message(FATAL_ERROR "matches ${re}:\n${text}")
  endif()
endfunction()

function(same_file a b)
  file(READ ${a} x)
  file(READ ${b} y)
  if(NOT x STREQUAL y)
    message(FATAL_ERROR "${a} differs from ${b}:\n${x}---\n${y}")
  endif()
endfunction()

# What an update printed: from its header on.
function(update_lines text outvar)
  string(FIND "${text}" "leakgate: thresholds " at)
  if(at LESS 0)
    message(FATAL_ERROR "no update printed:\n${text}")
  endif()
  string(SUBSTRING "${text}" ${at} -1 lines)
  set(${outvar} "${lines}" PARENT_SCOPE)
endfunction()

# The YAML the run's thresholds document suggests (SPEC section 7: one
# per run, at its end), without its 2-space indent.
function(suggestion text outvar)
  string(REGEX MATCH "the thresholds document of this run [^\n]*, add to [^\n]*:\n(  [^\n]*\n)+"
         block "${text}")
  string(FIND "${block}" "\n" nl)
  math(EXPR nl "${nl} + 3")
  string(SUBSTRING "${block}" ${nl} -1 block)
  string(REPLACE "\n  " "\n" block "${block}")
  set(${outvar} "${block}" PARENT_SCOPE)
endfunction()

if(CASE STREQUAL "accept")
  # Fires: the windows over their peak_limit get one that accepts the peak
  # plus headroom: raised in place (block and flow), or a new exact entry
  # for a window of a glob.  Quiet: windows within their limit, comments,
  # order and style stay byte for byte; a second update changes nothing.
  configure_file(${SRC}/peak/glob.yaml ${YAML} COPYONLY)
  run(1 o ARGS --thresholds ${YAML} --filter ${PEAKS})
  must("${o}" "FAIL peak/freed_big: [^\n]*peak over its limit")
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS} --update-thresholds)
  must("${o}" "raised    tests \"peak_setup/fixture\" \\(line 9\\): peak_limit 1,048,576 B -> 3,342,336 B \\(peak 3,145,728 B \\+ headroom\\)")
  must("${o}" "raised    tests \"peak_stable/medium\" \\(line 12\\): peak_limit 32,768 B -> 69,632 B \\(peak 65,536 B \\+ headroom\\)")
  must("${o}" "added     tests \"peak/freed_big\" \\(new entry\\): peak_limit 2,228,224 B \\(peak 2,097,152 B \\+ headroom\\)")
  must("${o}" "3 changes written to")
  update_lines("${o}" o)
  must_not("${o}" "under_limit|peak_stable/small|loose")
  same_file(${YAML} ${SRC}/peak/glob_accepted.yaml)
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS})
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS} --update-thresholds)
  must("${o}" "t.yaml needs no change")
  same_file(${YAML} ${SRC}/peak/glob_accepted.yaml)
elseif(CASE STREQUAL "no_limit_quiet")
  # Quiet: a file without peak limits (or with `peak_limit: ~`) gates no
  # peak, and the ratchet writes none: every peak is measured only.
  foreach(text "version: 1\n" "version: 1\ndefaults:\n  peak_limit: ~\n")
    file(WRITE ${YAML} "${text}")
    run(0 o ARGS --thresholds ${YAML} --filter "peak*")
    run(0 o ARGS --thresholds ${YAML} --filter "peak*" --update-thresholds)
    must("${o}" "t.yaml needs no change")
    file(READ ${YAML} y)
    must_not("${y}" "tests")
  endforeach()
elseif(CASE STREQUAL "record_every_peak")
  # Fires: `defaults: peak_limit: 0` records the peak of every window that
  # allocated.  Quiet: windows whose heap never rose above their start
  # (the suites' own windows here) get no entry.
  file(WRITE ${YAML} "version: 1\ndefaults:\n  peak_limit: 0\n")
  run(1 o ARGS --thresholds ${YAML} --filter ${PEAKS})
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS} --update-thresholds)
  must("${o}" "5 changes written")
  same_file(${YAML} ${SRC}/peak/every_peak.yaml)
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS})
elseif(CASE STREQUAL "option")
  # Fires: a run with --peak-limit (the defaults' limit) accepts the peaks
  # over it in tests entries, which win over the option.  Quiet: with a
  # limit above every peak, nothing is written.
  file(WRITE ${YAML} "version: 1\n")
  run(1 o ARGS --thresholds ${YAML} --filter ${PEAKS} --peak-limit "1 MiB")
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS} --peak-limit "1 MiB"
      --update-thresholds)
  must("${o}" "added     tests \"peak/freed_big\" \\(new entry\\): peak_limit 2,228,224 B")
  must("${o}" "added     tests \"peak_setup/fixture\" \\(new entry\\): peak_limit 3,342,336 B")
  must("${o}" "2 changes written")
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS} --peak-limit "1 MiB")
  file(WRITE ${YAML} "version: 1\n")
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS} --peak-limit "4 MiB"
      --update-thresholds)
  must("${o}" "t.yaml needs no change")
elseif(CASE STREQUAL "tighten")
  # Fires: a peak_limit far above the peak plus headroom is loose and
  # --tighten lowers it to that (comment kept).  Quiet: one within the
  # slack (14 KiB for 8 KiB + 4 KiB headroom, 25%) is not; with --slack 0
  # it is.
  file(WRITE ${YAML} [=[
version: 1
tests:
  "peak/freed_big":
    peak_limit: 64 MiB  # generous
  "peak_stable/small":
    peak_limit: 14 KiB
]=])
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS} --tighten)
  must("${o}" "would lower tests \"peak/freed_big\" \\(line 3\\): peak_limit 67,108,864 B -> 2,228,224 B \\(largest measured peak 2,097,152 B \\+ headroom\\)")
  update_lines("${o}" o)
  must_not("${o}" "peak_stable/small")
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS} --tighten --slack 0)
  must("${o}" "would lower tests \"peak_stable/small\" \\(line 5\\): peak_limit 14,336 B -> 12,288 B \\(largest measured peak 8,192 B \\+ headroom\\)")
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS} --update-thresholds)
  must("${o}" "loose     tests \"peak/freed_big\" \\(line 3\\): peak_limit 67,108,864 B is far above 2,228,224 B")
  must("${o}" "1 loose limit")
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS} --update-thresholds
      --tighten)
  must("${o}" "lowered   tests \"peak/freed_big\"")
  file(READ ${YAML} y)
  must("${y}" "\"peak/freed_big\":\n    peak_limit: 2176 KiB  # generous\n  \"peak_stable/small\":\n    peak_limit: 14 KiB\n")
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS})
  run(0 o ARGS --thresholds ${YAML} --filter ${PEAKS} --tighten)
  must("${o}" "needs no change")
  update_lines("${o}" o)
  must_not("${o}" "loose")
elseif(CASE STREQUAL "tighten_complete")
  # The results of a whole run (no --filter) tighten glob entries and
  # defaults too.  Fires: "peak/*" and "peak_setup/*" at 64 MiB.  Quiet:
  # "peak_stable/*" at 80 KiB, within 25% of 64 KiB + 4 KiB.
  file(READ ${SRC}/../integration/corpus.yaml y)
  string(REPLACE "peak_limit: 1 MiB" "peak_limit: 64 MiB" y "${y}")
  string(REPLACE "peak_limit: 256 KiB" "peak_limit: 80 KiB" y "${y}")
  file(WRITE ${YAML} "${y}")
  run(1 o ARGS --thresholds ${YAML} --json ${WORK}/all.json)
  run(0 o PROG ${LEAKGATE} ARGS thresholds merge ${WORK}/all.json
      --into ${YAML} --tighten --dry-run)
  must("${o}" "would lower tests \"peak/\\*\" \\(line [0-9]+\\): peak_limit 67,108,864 B -> 2,228,224 B \\(largest measured peak 2,097,152 B \\+ headroom\\)")
  must("${o}" "would lower tests \"peak_setup/\\*\" \\(line [0-9]+\\): peak_limit 67,108,864 B -> 3,342,336 B")
  must_not("${o}" "peak_stable")
elseif(CASE STREQUAL "merge_max")
  # Fires: merging the results of several processes takes the largest
  # peak of a window (here a copy of a result with the peak doubled).
  # Quiet: the order of the results does not matter, and one result alone
  # gives its own peak's limit.
  file(WRITE ${YAML} "version: 1\ndefaults:\n  peak_limit: 1 MiB\n")
  run(1 o ARGS --thresholds ${YAML} --filter peak/freed_big
      --json ${WORK}/a.json)
  file(READ ${WORK}/a.json json_a)
  string(REPLACE "\"peak_bytes\": 2097152," "\"peak_bytes\": 4194304,"
         json_b "${json_a}")
  if(json_a STREQUAL json_b)
    message(FATAL_ERROR "no peak_bytes 2097152 in a.json:\n${json_a}")
  endif()
  file(WRITE ${WORK}/b.json "${json_b}")
  foreach(order "a,b" "b,a" "a")
    file(WRITE ${YAML} "version: 1\ndefaults:\n  peak_limit: 1 MiB\n")
    set(files "")
    string(REPLACE "," ";" order_list "${order}")
    foreach(f IN LISTS order_list)
      list(APPEND files ${WORK}/${f}.json)
    endforeach()
    run(0 o PROG ${LEAKGATE} ARGS thresholds merge ${files} --into ${YAML})
    file(READ ${YAML} y)
    if(order STREQUAL "a") # (no variable is named a: if() would read it)
      must("${y}" "\"peak/freed_big\":\n    peak_limit: 2176 KiB\n$")
    else()
      must("${o}" "peak_limit 4,456,448 B \\(peak 4,194,304 B \\+ headroom\\)")
      must("${y}" "\"peak/freed_big\":\n    peak_limit: 4352 KiB\n$")
    endif()
  endforeach()
elseif(CASE STREQUAL "suggestion_applies")
  # Fires: a window over its peak_limit (from defaults, from a suites
  # entry) is told the peak_limit that accepts it, which applied as printed
  # passes and is what `thresholds merge` writes.  Quiet: a window that
  # fails for a leak only is not told to set a peak_limit.
  foreach(case "defaults:\n  peak_limit: 1 MiB\n;peak/freed_big;2176 KiB"
               "suites:\n  peak_setup:\n    peak_limit: 1 MiB\n;peak_setup/fixture;3264 KiB")
    list(GET case 0 head)
    list(GET case 1 test)
    list(GET case 2 size)
    file(WRITE ${YAML} "version: 1\n${head}")
    run(1 o ARGS --thresholds ${YAML} --filter ${test} --json ${WORK}/r.json)
    suggestion("${o}" yaml)
    must("${yaml}" "^tests:\n  \"${test}\":\n    peak_limit: ${size}   # peak [0-9,]+ B \\+ headroom\n$")
    file(APPEND ${YAML} "${yaml}")
    run(0 o ARGS --thresholds ${YAML} --filter ${test})
    file(WRITE ${WORK}/m.yaml "version: 1\n${head}")
    run(0 o PROG ${LEAKGATE} ARGS thresholds merge ${WORK}/r.json
        --into ${WORK}/m.yaml)
    file(READ ${YAML} a)
    file(READ ${WORK}/m.yaml b)
    string(REGEX REPLACE " *#[^\n]*" "" a "${a}")
    if(NOT a STREQUAL b)
      message(FATAL_ERROR "suggestion and merge differ:\n${a}---\n${b}")
    endif()
  endforeach()
  file(WRITE ${YAML} "version: 1\ndefaults:\n  peak_limit: 1 MiB\n")
  run(1 o ARGS --thresholds ${YAML} --filter leaks/malloc)
  must("${o}" "FAIL leaks/malloc")
  suggestion("${o}" yaml)
  must("${yaml}" "stacks:")
  must_not("${yaml}" "peak_limit")
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()
