# tilec_generate_registry(<output> <MACRO> <ENTRY> <source>...)
#
# Writes <output> with one `ENTRY(name)` line per `MACRO(name)` that opens a
# line of a source: how the kernel registry (kernels/, TILEC_KERNEL) and the
# reference registry (test/reference/, TILEC_REFERENCE) find their entries,
# so that adding a kernel or a reference is adding its file. The output is
# rewritten only when the list changes.
function(tilec_generate_registry output macro entry)
  set(list "")
  foreach(source ${ARGN})
    file(STRINGS ${source} definitions REGEX "^${macro}\\([a-z_0-9]+\\)")
    foreach(definition ${definitions})
      string(REGEX REPLACE "^${macro}\\(([a-z_0-9]+)\\).*" "\\1" name
             "${definition}")
      string(APPEND list "${entry}(${name})\n")
    endforeach()
  endforeach()
  file(CONFIGURE OUTPUT ${output} CONTENT "${list}")
endfunction()
