# `cmake --install <build> --prefix <prefix>` and find_package(tilec)
# (docs/install.md). The prefix gets
#
#   bin/              tilec, tilec-opt, tilec-kernel, tilec-replay, tilec-startup
#   include/tilec/    every public header under one root: contract/, runtime/,
#                     sparse/, tilec.h, and the compiler's (JIT/, Pipeline/,
#                     Dialect/, ... with their tablegen'd .h.inc)
#   lib/              the static libraries and libtilec_c.so
#   lib/cmake/tilec/  tilecConfig.cmake, its version file, the exported
#                     targets and TilecBundle.cmake
#
# The targets are exported in two sets so that a program using the libraries
# without LLVM never needs LLVM or MLIR, not even their CMake packages:
#
#   tilecTargets          tilec::contract, tilec::runtime, tilec::tuning
#                         (with tilec::remote_cache, the Redis tier under it),
#                         tilec::sparse, tilec::c and the tools (tilec::tilec
#                         is what tilec_embed_bundle runs)
#   tilecCompilerTargets  tilec::compiler (TilecJIT) and the MLIR-based
#                         libraries under it; loaded by
#                         find_package(tilec COMPONENTS compiler), which finds
#                         MLIR first, since they link MLIR's imported targets
#                         (MLIRIR, ...) and LLVM's by name.

include(CMakePackageConfigHelpers)

set(TILEC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tilec)

set(tilec_libraries tilec_contract tilec_runtime tilec_remote_cache tilec_tuning
                     tilec_sparse tilec_session tilec_c)
foreach(library ${tilec_libraries})
  string(REGEX REPLACE "^tilec_" "" export_name ${library})
  set_target_properties(${library} PROPERTIES EXPORT_NAME ${export_name})
endforeach()
set(tilec_tools tilec tilec-opt tilec-kernel tilec-replay tilec-startup)
install(TARGETS ${tilec_libraries} ${tilec_tools}
  EXPORT tilecTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT tilecTargets
  NAMESPACE tilec::
  DESTINATION ${TILEC_INSTALL_CMAKEDIR})

# Every library that TilecJIT links, named without the prefix (tilec::Pipeline).
# add_mlir_library's own install rule is off for them (DISABLE_INSTALL): it
# would put them into MLIR's export set, which this project never installs.
set(tilec_compiler_libraries
  TilecAnalysis
  TilecKernelBuilder
  TilecKernels
  TilecPipeline
  TilecTarget
  TilecTileDialect
  TilecTileGPUDialect
  TilecTileGPUToLLVM
  TilecTileGPUTransforms
  TilecTileToTileGPU
)
foreach(library ${tilec_compiler_libraries})
  string(REGEX REPLACE "^Tilec" "" export_name ${library})
  set_target_properties(${library} PROPERTIES EXPORT_NAME ${export_name})
endforeach()
set_target_properties(TilecJIT PROPERTIES EXPORT_NAME compiler)
foreach(library TilecJIT ${tilec_compiler_libraries})
  # The build finds these headers through directory-wide include paths.
  target_include_directories(${library} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
install(TARGETS TilecJIT ${tilec_compiler_libraries}
  EXPORT tilecCompilerTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT tilecCompilerTargets
  NAMESPACE tilec::
  DESTINATION ${TILEC_INSTALL_CMAKEDIR})

# The headers of each library live next to it (runtime/launch/include/tilec/
# runtime, ...); installed, they share one include/tilec.
install(DIRECTORY
    contract/include/
    runtime/launch/include/
    runtime/remote-cache/include/
    runtime/tuning/include/
    runtime/session/include/
    sparse/include/
    capi/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(DIRECTORY compiler/include/ ${PROJECT_BINARY_DIR}/compiler/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.h.inc"
  PATTERN CMakeFiles EXCLUDE)

configure_package_config_file(cmake/tilecConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tilecConfig.cmake
  INSTALL_DESTINATION ${TILEC_INSTALL_CMAKEDIR})
# tilec is 0.x: a minor release may change any interface (and the static
# libraries' C++ ABI), so a request for 0.1 accepts 0.1.z only, not 0.2.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tilecConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
# pkg-config for the C API (libtilec_c.so and tilec/tilec.h), for builds
# that do not use CMake: `pkg-config --cflags --libs tilec`.
configure_file(cmake/tilec.pc.in ${PROJECT_BINARY_DIR}/tilec.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tilec.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES
    ${PROJECT_BINARY_DIR}/tilecConfig.cmake
    ${PROJECT_BINARY_DIR}/tilecConfigVersion.cmake
    cmake/TilecBundle.cmake
  DESTINATION ${TILEC_INSTALL_CMAKEDIR})
