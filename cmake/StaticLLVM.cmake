# Fully static, stripped binaries (TILEC_STATIC=ON), to carry to a machine that
# has no LLVM (the GPU machine).
#
# Debian builds LLVM with LLVM_LINK_LLVM_DYLIB=ON: every imported MLIR static
# library links `LLVM` (libLLVM.so), some as `$<LINK_ONLY:LLVM>`, and
# LLVMSupport links libz3.so and the shared zlib/zstd. This file, included
# after find_package(MLIR) and before any target is defined, rewires all of that
# to the static archives that the same packages ship. Linking libMLIR.so and
# the libMLIR*.a archives into one binary would duplicate TypeIDs and
# registries, so the dylibs are switched off entirely.

if(NOT TILEC_LLD)
  message(FATAL_ERROR "tilec: TILEC_STATIC needs ld.lld (for --icf=all and a "
                      "link of the static LLVM archives in reasonable time)")
endif()

# Read by llvm_add_library/llvm_config (LINK_COMPONENTS of our own libraries)
# and by mlir_target_link_libraries.
set(LLVM_LINK_LLVM_DYLIB OFF)
set(MLIR_LINK_MLIR_DYLIB OFF)

# What `LLVM` stands for in the MLIR libraries' link interfaces. Unused archive
# members are not pulled in, so a generous list only costs link time. Not
# "all": the Extensions component wants libPolly.a, which Debian does not ship,
# and a binary that calls InitializeAllTargets (MLIRTargetLLVMIRTransforms)
# must add the targets it needs through TILEC_STATIC_LLVM_EXTRA_COMPONENTS.
set(TILEC_STATIC_LLVM_EXTRA_COMPONENTS "" CACHE STRING
  "LLVM components linked into static binaries in addition to tilec's")
set(tilec_static_llvm_components
  Support Demangle TargetParser BinaryFormat Remarks BitstreamReader
  Core AsmParser BitReader BitWriter IRReader IRPrinter Linker Object
  ProfileData Analysis TransformUtils InstCombine AggressiveInstCombine
  ScalarOpts Vectorize ipo Instrumentation ObjCARCOpts Coroutines CFGuard
  HipStdPar Passes Target MC MCParser CodeGen CodeGenTypes SelectionDAG
  GlobalISel AsmPrinter FrontendOpenMP FrontendOffloading FrontendAtomic
  NVPTXCodeGen NVPTXDesc NVPTXInfo
  ${TILEC_STATIC_LLVM_EXTRA_COMPONENTS})
llvm_map_components_to_libnames(TILEC_STATIC_LLVM_LIBS
  ${tilec_static_llvm_components})

foreach(target ${MLIR_EXPORTED_TARGETS})
  if(NOT TARGET ${target})
    continue()
  endif()
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "STATIC_LIBRARY")
    continue()
  endif()
  get_target_property(deps ${target} INTERFACE_LINK_LIBRARIES)
  if(NOT deps)
    continue()
  endif()
  set(rewritten)
  set(changed FALSE)
  foreach(dep IN LISTS deps)
    if(dep STREQUAL "LLVM" OR dep STREQUAL "$<LINK_ONLY:LLVM>")
      list(APPEND rewritten ${TILEC_STATIC_LLVM_LIBS})
      set(changed TRUE)
    else()
      list(APPEND rewritten "${dep}")
    endif()
  endforeach()
  if(changed)
    list(REMOVE_DUPLICATES rewritten)
    set_target_properties(${target} PROPERTIES
      INTERFACE_LINK_LIBRARIES "${rewritten}")
  endif()
endforeach()

# LLVMSupport: z3 is only for the optional SMT-based analyses, which tilec
# never runs; zlib and zstd must be the static archives (an imported .so cannot
# be carried to a machine without them).
find_library(TILEC_ZLIB_STATIC NAMES libz.a)
find_library(TILEC_ZSTD_STATIC NAMES libzstd.a)
if(NOT TILEC_ZLIB_STATIC OR NOT TILEC_ZSTD_STATIC)
  message(FATAL_ERROR "tilec: TILEC_STATIC needs libz.a and libzstd.a "
                      "(apt-get install zlib1g-dev libzstd-dev)")
endif()
get_target_property(support_deps LLVMSupport INTERFACE_LINK_LIBRARIES)
set(rewritten)
foreach(dep IN LISTS support_deps)
  if(dep MATCHES "z3")
    continue()
  elseif(dep MATCHES "^ZLIB::" OR dep MATCHES "libz\\.so")
    list(APPEND rewritten ${TILEC_ZLIB_STATIC})
  elseif(dep MATCHES "^zstd::" OR dep MATCHES "libzstd\\.so")
    list(APPEND rewritten ${TILEC_ZSTD_STATIC})
  else()
    list(APPEND rewritten "${dep}")
  endif()
endforeach()
set_target_properties(LLVMSupport PROPERTIES
  INTERFACE_LINK_LIBRARIES "${rewritten}")

# Everything defined from here on (lib/, tools/, test/) links LLVM, MLIR,
# libstdc++ and libgcc statically. glibc stays dynamic: the runtime dlopens
# libcuda.so.1 (and the Target library libnvJitLink), and dlopen from a -static
# binary loads a second glibc that crashes; every GPU machine has a glibc at
# least as new as the build machine's 2.36.
# -s strips; --gc-sections needs the -ffunction-sections/-fdata-sections that
# HandleLLVMOptions already adds, and the LLVM archives were built with them.
add_link_options(-static-libstdc++ -static-libgcc
                 -Wl,--gc-sections -Wl,--icf=all -s)
# Binaries from a static build are meant to be copied around; the build-tree
# RPATH to /usr/lib/llvm-22/lib would be meaningless there.
set(CMAKE_SKIP_BUILD_RPATH ON)
message(STATUS "tilec: static build; LLVM components: "
               "${tilec_static_llvm_components}")
