# SPDX-License-Identifier: MIT
# Included by the script-mode checks: set every NAME=VALUE of the list ENV
# in the environment of the commands they run.
foreach(kv IN LISTS ENV)
  string(FIND "${kv}" "=" eq)
  string(SUBSTRING "${kv}" 0 ${eq} k)
  math(EXPR vstart "${eq} + 1")
  string(SUBSTRING "${kv}" ${vstart} -1 v)
  set(ENV{${k}} "${v}")
endforeach()
