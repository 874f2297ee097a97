# SPDX-License-Identifier: MIT
# Script mode: which thresholds file a test binary uses, and where its
# relative output paths land (docs/cli.md, "Files and paths").
#   NAMED_BIN  a test binary built with leakgate_thresholds_file(NAMED)
#   VOID_BIN   a test binary with `main(void)` -> leakgate_cunit_main(0, NULL)
#   NAMED      the thresholds file NAMED_BIN's build named (rewritten here)
#   WORK       a scratch directory (emptied first)
# Both binaries have exactly one leaking test.
set(failed "")
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/elsewhere)
get_filename_component(named_dir ${NAMED} DIRECTORY)
file(REMOVE_RECURSE ${named_dir})
file(MAKE_DIRECTORY ${named_dir})
set(strict "version: 1\ndefaults:\n  stack_limit: 0\n")
set(lenient "version: 1\ndefaults:\n  stack_limit: 1 MiB\n")
file(WRITE ${NAMED} "${strict}")
# leakgate.yaml in the working directory loses to the file the build named.
file(WRITE ${WORK}/elsewhere/leakgate.yaml "${lenient}")
file(WRITE ${WORK}/lenient.yaml "${lenient}")

# check(<what> <exit> <regex or ""> <command...>): run in WORK/elsewhere.
function(check what exit re)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK}/elsewhere
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT "${rc}" STREQUAL "${exit}")
    string(APPEND failed "${what}: exit ${rc}, expected ${exit}\n${out}${err}\n")
  elseif(NOT re STREQUAL "" AND NOT "${out}${err}" MATCHES "${re}")
    string(APPEND failed "${what}: output does not match ${re}\n${out}${err}\n")
  endif()
  set(failed "${failed}" PARENT_SCOPE)
endfunction()

function(expect_file what path)
  if(NOT EXISTS ${path})
    string(APPEND failed "${what}: ${path} was not written\n")
  endif()
  set(failed "${failed}" PARENT_SCOPE)
endfunction()

string(REPLACE "." "\\." named_re "${NAMED}")
string(REPLACE "+" "\\+" named_re "${named_re}")

# 1. No option, any working directory: the file the build named.
check("build-named file" 1 "(add|writes one) to ${named_re}" ${NAMED_BIN})
# 2. LEAKGATE_THRESHOLDS wins over it, --thresholds over both.
set(ENV{LEAKGATE_THRESHOLDS} ${WORK}/lenient.yaml)
check("LEAKGATE_THRESHOLDS wins" 0 "" ${NAMED_BIN})
check("--thresholds wins" 1 "(add|writes one) to ${named_re}"
      ${NAMED_BIN} --thresholds ${NAMED})
unset(ENV{LEAKGATE_THRESHOLDS})
# 3. --update-thresholds from elsewhere writes the named file, and no
#    stray leakgate.yaml appears in the working directory.
file(REMOVE ${WORK}/elsewhere/leakgate.yaml)
check("update from elsewhere" 0 "" ${NAMED_BIN} --update-thresholds)
file(READ ${NAMED} text)
if(NOT text MATCHES "strtab/rename")
  string(APPEND failed "update did not write ${NAMED}:\n${text}\n")
endif()
if(EXISTS ${WORK}/elsewhere/leakgate.yaml)
  string(APPEND failed "update wrote a stray ${WORK}/elsewhere/leakgate.yaml\n")
endif()
check("updated file passes" 0 "" ${NAMED_BIN})
# 4. The named file missing: an error naming it (exit 2), and
#    --update-thresholds creates it.
file(REMOVE ${NAMED})
check("named file missing" 2 "${named_re}: no such thresholds file"
      ${NAMED_BIN})
check("update creates the named file" 0 "" ${NAMED_BIN} --update-thresholds)
expect_file("update creates the named file" ${NAMED})

# 5. Relative outputs are relative to the working directory; missing
#    parent directories are created, in every form.
set(ENV{LEAKGATE_JSON} results/)
set(ENV{LEAKGATE_JUNIT} out/deeper/junit.xml)
check("relative outputs" 1 "" ${VOID_BIN} --report-dir report/run1)
unset(ENV{LEAKGATE_JSON})
unset(ENV{LEAKGATE_JUNIT})
file(GLOB results ${WORK}/elsewhere/results/*.json)
if(NOT results)
  string(APPEND failed "LEAKGATE_JSON=results/ wrote no results/*.json\n")
endif()
expect_file("LEAKGATE_JUNIT" ${WORK}/elsewhere/out/deeper/junit.xml)
expect_file("--report-dir" ${WORK}/elsewhere/report/run1/index.html)
expect_file("--report-dir" ${WORK}/elsewhere/report/run1/old/leak.before.heap)
check("%p form" 0 "" ${VOID_BIN} --filter old/clean --json a/b/r-%p.json)
file(GLOB results ${WORK}/elsewhere/a/b/r-*.json)
if(NOT results)
  string(APPEND failed "--json a/b/r-%p.json wrote nothing\n")
endif()

# 6. main(void) + leakgate_cunit_main(0, NULL): options from the command
#    line (read from /proc/self/cmdline) and from the environment.
check("main(void) --list" 0 "old/clean\nold/leak\nold/\\[suite\\]" ${VOID_BIN} --list)
check("main(void) --filter" 0 "Test: clean" ${VOID_BIN} --filter old/clean)
check("main(void) bad option" 2 "unknown option '--bogus'" ${VOID_BIN} --bogus)
set(ENV{LEAKGATE_FILTER} old/leak)
check("main(void) LEAKGATE_FILTER" 1 "FAIL old/leak: 112 B" ${VOID_BIN})
unset(ENV{LEAKGATE_FILTER})

if(failed)
  message(FATAL_ERROR "${failed}")
endif()
message(STATUS "ok: thresholds file order, relative outputs, main(void)")
