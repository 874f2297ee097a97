# SPDX-License-Identifier: MIT
# leakgate_target_defaults(TARGET): C11 without extensions, the STYLE.md
# warning set (errors with LEAKGATE_WERROR), sanitizers with
# LEAKGATE_SANITIZE.  No global flags.
set(LEAKGATE_WARNINGS
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wstrict-prototypes
  -Wmissing-prototypes -Wold-style-definition -Wcast-qual -Wwrite-strings
  -Wformat=2 -Wimplicit-fallthrough -Wnull-dereference -fno-common)

function(leakgate_target_defaults tgt)
  set_target_properties(${tgt} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON
                                          C_EXTENSIONS OFF)
  target_compile_options(${tgt} PRIVATE ${LEAKGATE_WARNINGS})
  target_compile_definitions(${tgt} PRIVATE _GNU_SOURCE)
  if(LEAKGATE_WERROR)
    target_compile_options(${tgt} PRIVATE -Werror)
  endif()
  if(LEAKGATE_SANITIZE)
    target_compile_options(${tgt} PRIVATE -fsanitize=${LEAKGATE_SANITIZE}
                                          -fno-omit-frame-pointer
                                          -fno-sanitize-recover=all)
    target_link_options(${tgt} PRIVATE -fsanitize=${LEAKGATE_SANITIZE})
  endif()
endfunction()
