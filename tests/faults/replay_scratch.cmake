# SPDX-License-Identifier: MIT
# Script mode: a replay keeps its scratch files in a private directory.
#   1. A replay that works leaves nothing in $TMPDIR, and never writes
#      through a link planted there under the names earlier versions used.
#   2. A replay that dies keeps its directory (mode 0700, the replay's log
#      inside), and the error names it.
#   3. A replay that does not reproduce what the first run's fast pass
#      left (a test that allocates differently each run) fails the test,
#      says so, and prints the `rerun: false` entry that measures it.
# -DFAULTS=path of the faults program, -DDIR=scratch directory of the test.
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR}/tmp)
file(WRITE ${DIR}/victim "untouched\n")
foreach(name leakgate-replay.list leakgate-replay.list.log
             leakgate-replay.list.json)
  file(CREATE_LINK ${DIR}/victim ${DIR}/tmp/${name} SYMBOLIC)
endforeach()
set(ENV{TMPDIR} ${DIR}/tmp)
set(failed "")

execute_process(COMMAND ${FAULTS} --filter leak/plain
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT err MATCHES "replaying the run in a fresh process")
  string(APPEND failed "leak/plain: exit ${rc}, expected 1 after a replay\n${err}\n")
endif()
file(GLOB left RELATIVE ${DIR}/tmp ${DIR}/tmp/*)
list(SORT left)
if(NOT left STREQUAL "leakgate-replay.list;leakgate-replay.list.json;leakgate-replay.list.log")
  string(APPEND failed "the replay left files in TMPDIR: ${left}\n")
endif()
file(READ ${DIR}/victim victim)
if(NOT victim STREQUAL "untouched\n")
  string(APPEND failed "a planted link was followed: victim now '${victim}'\n")
endif()

set(ENV{FAULTS_MARK} ${DIR}/mark)
execute_process(COMMAND ${FAULTS} --filter replay/dies
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 3)
  string(APPEND failed "replay/dies: exit ${rc}, expected 3\n${err}\n")
endif()
if(NOT err MATCHES "its output is in (${DIR}/tmp/leakgate-replay\\.[A-Za-z0-9]+)/replay\\.log")
  string(APPEND failed "the error does not name the kept log:\n${err}\n")
else()
  set(kept ${CMAKE_MATCH_1})
  if(NOT EXISTS ${kept}/replay.log)
    string(APPEND failed "${kept}/replay.log was not kept\n")
  endif()
  file(READ ${kept}/replay.log log)
  execute_process(COMMAND stat -c %a ${kept} OUTPUT_VARIABLE mode
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT mode STREQUAL "700")
    string(APPEND failed "${kept} has mode ${mode}, expected 700\n")
  endif()
endif()
file(REMOVE ${DIR}/mark)
execute_process(COMMAND ${FAULTS} --filter replay/differs
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(want "leakgate: FAIL replay/differs: the replay did not reproduce the first run: its fast first pass left 48 B in 1 object, the exact replay 0 B in 0 objects")
if(NOT rc EQUAL 1 OR NOT err MATCHES "${want}" OR
   NOT err MATCHES "'replay/differs':\n +rerun: false")
  string(APPEND failed "replay/differs: exit ${rc}, expected 1 with\n${want}\n${err}\n")
endif()
if(failed)
  message(FATAL_ERROR "${failed}")
endif()
message(STATUS "ok: private replay directory, removed after a replay that worked, kept (0700) after one that died; a replay that does not reproduce fails")
