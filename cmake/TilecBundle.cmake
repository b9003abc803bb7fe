# tilec_embed_bundle(<target> BUNDLE <file> [NAME <identifier>] [TILEC <tool>])
#
# Compiles a kernel bundle (`tilec pack`) into <target>: at build time,
# `tilec bundle emit-cpp` turns <file> into <NAME>.h and <NAME>.cpp (the
# cubins as constant data, EmbeddedBundle.h's table and a lookup per kernel),
# the source joins <target> and the header's directory its include path. The
# program then runs from the table with no bundle file, no cache and no
# compiler (docs/deploy.md):
#
#   #include "my_bundle.h"
#   auto bundle = tilec::rt::KernelBundle::fromEmbedded(*my_bundle_bundle());
#   provider.setBundle(*bundle, tilec::rt::BundlePolicy::Strict);
#
# NAME defaults to tilec_bundle; TILEC to the `tilec` target of this build,
# else the installed one that find_package(tilec) imports (tilec::tilec), else
# the `tilec` found on PATH. The source is regenerated when the bundle or the
# tool changes.
function(tilec_embed_bundle target)
  cmake_parse_arguments(ARG "" "BUNDLE;NAME;TILEC" "" ${ARGN})
  if(NOT ARG_BUNDLE)
    message(FATAL_ERROR "tilec_embed_bundle(${target}): BUNDLE <file> is required")
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME tilec_bundle)
  endif()
  set(tool_depends)
  if(ARG_TILEC)
    set(tool ${ARG_TILEC})
  elseif(TARGET tilec)
    set(tool $<TARGET_FILE:tilec>)
    set(tool_depends tilec)
  elseif(TARGET tilec::tilec)
    set(tool $<TARGET_FILE:tilec::tilec>)
    set(tool_depends tilec::tilec)
  else()
    find_program(TILEC_TOOL tilec REQUIRED)
    set(tool ${TILEC_TOOL})
  endif()
  get_filename_component(bundle ${ARG_BUNDLE} ABSOLUTE)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/tilec_bundles/${ARG_NAME})
  add_custom_command(
    OUTPUT ${dir}/${ARG_NAME}.cpp ${dir}/${ARG_NAME}.h
    COMMAND ${tool} bundle emit-cpp ${bundle} --name ${ARG_NAME} --out-dir ${dir}
    DEPENDS ${bundle} ${tool_depends}
    COMMENT "Embedding kernel bundle ${ARG_BUNDLE} as ${ARG_NAME}"
    VERBATIM)
  target_sources(${target} PRIVATE ${dir}/${ARG_NAME}.cpp)
  target_include_directories(${target} PRIVATE ${dir})
endfunction()
