//===- Module.h - Loaded device code and its launchable kernels -*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_MODULE_H
#define TILEC_RUNTIME_MODULE_H

#include "tilec/runtime/ArgPack.h"
#include "tilec/runtime/Context.h"
#include "tilec/contract/CompileMetadata.h"
#include "tilec/contract/Status.h"

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::rt {

// A CUmodule. Shared, because every Kernel taken from it keeps it loaded.
class Module {
public:
  // A cubin (ELF) or fatbin image, through cuModuleLoadData. Anything else is
  // refused before the driver sees it: the driver would read a non-ELF
  // buffer as a NUL-terminated PTX string, past the end of `size`.
  static Result<std::shared_ptr<Module>>
  loadCubin(const Context &context, const void *data, size_t size);
  // PTX text, compiled by the driver's JIT (cuModuleLoadDataEx); a failure
  // carries the JIT's error log.
  static Result<std::shared_ptr<Module>> loadPtx(const Context &context,
                                                 std::string_view ptx);
  // loadCubin for ELF/fatbin images, loadPtx otherwise.
  static Result<std::shared_ptr<Module>> load(const Context &context,
                                              std::string_view image);

  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  Result<CUfunction> function(const std::string &name) const;

  CUmodule handle() const { return module_; }
  const Driver &driver() const { return *driver_; }

private:
  Module(const Driver &driver, CUmodule module)
      : driver_(&driver), module_(module) {}

  const Driver *driver_;
  CUmodule module_;
};

// A function of a loaded module with the metadata needed to launch it.
class Kernel {
public:
  // Looks up metadata.kernelName and checks that it can run on the context's
  // device: the block fits the function's thread limit and the shared memory
  // fits the device's opt-in maximum. Above the default 48 KiB it opts the
  // function in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). A kernel
  // with tensor maps must have a 128-byte parameter for each after its
  // signature's; their offsets are read for makeArgPack.
  static Result<Kernel> create(const Context &context,
                               std::shared_ptr<const Module> module,
                               CompileMetadata metadata);

  // An ArgPack for this kernel's signature and tensor maps, the maps at the
  // function's offsets (ArgPack::placeTensorMaps).
  Result<ArgPack> makeArgPack() const;

  const CompileMetadata &metadata() const { return metadata_; }
  CUfunction function() const { return function_; }
  const Driver &driver() const { return *driver_; }
  uint32_t blockThreads() const { return blockThreads_; }
  uint32_t sharedBytes() const { return metadata_.sharedBytes; }
  uint64_t signatureHash() const { return signatureHash_; }

  // What the driver reports for the loaded function (cuFuncGetAttribute).
  int registers() const { return registers_; }
  int localBytes() const { return localBytes_; }
  int staticSharedBytes() const { return staticSharedBytes_; }
  int maxThreadsPerBlock() const { return maxThreadsPerBlock_; }

private:
  Kernel() = default;

  const Driver *driver_ = nullptr;
  std::shared_ptr<const Module> module_;
  CompileMetadata metadata_;
  CUfunction function_ = nullptr;
  uint32_t blockThreads_ = 0;
  uint64_t signatureHash_ = 0;
  // Where the loaded function takes its tensor maps (cuFuncGetParamInfo).
  std::vector<size_t> tensorMapOffsets_;
  int registers_ = 0;
  int localBytes_ = 0;
  int staticSharedBytes_ = 0;
  int maxThreadsPerBlock_ = 0;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_MODULE_H
