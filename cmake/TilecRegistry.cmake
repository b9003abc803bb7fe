# tilec_generate_registry(<output> <MACRO> <ENTRY> <source>...)
#
# Writes <output> with one `ENTRY(name)` line per `MACRO(name)` that opens a
# line of a source: how the kernel registry (kernels/, TILEC_KERNEL) and the
# reference registry (check/reference/, TILEC_REFERENCE) find their entries,
# so that adding a kernel or a reference is adding its file. The output is
# rewritten only when the list changes.
function(tilec_generate_registry output macro entry)
  set(list "")
  foreach(source ${ARGN})
    # A definition the strict pattern below would miss is an error, not a
    # kernel that silently never registers.
    file(STRINGS ${source} loose REGEX "^[ \t]*${macro}[ \t]*\\(")
    file(STRINGS ${source} definitions REGEX "^${macro}\\([a-z_0-9]+\\)")
    list(LENGTH loose loose_count)
    list(LENGTH definitions count)
    if(NOT loose_count EQUAL count)
      message(FATAL_ERROR "${source}: write ${macro}(name) at the start of a "
                          "line, name in lower case letters, digits and _")
    endif()
    foreach(definition ${definitions})
      string(REGEX REPLACE "^${macro}\\(([a-z_0-9]+)\\).*" "\\1" name
             "${definition}")
      string(APPEND list "${entry}(${name})\n")
    endforeach()
  endforeach()
  file(CONFIGURE OUTPUT ${output} CONTENT "${list}")
endfunction()
