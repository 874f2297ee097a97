# SPDX-License-Identifier: MIT
# Script mode: FILE exists and its text matches every regex of MATCH
# (joined with "@@").
string(REPLACE "@@" ";" match_list "${MATCH}")
if(NOT EXISTS ${FILE})
  message(FATAL_ERROR "${FILE} was not written")
endif()
file(READ ${FILE} text)
foreach(re IN LISTS match_list)
  if(NOT text MATCHES "${re}")
    message(FATAL_ERROR "${FILE} does not match ${re}:\n${text}")
  endif()
endforeach()
message(STATUS "ok: ${FILE}")
