//===- Module.cpp - Loaded device code and its launchable kernels ---------===//

#include "tilec/runtime/Module.h"

#include "tilec/contract/InterpreterDevice.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace tilec::rt {
namespace {

constexpr std::string_view kElfMagic("\x7F"
                                     "ELF",
                                     4);
// The first word of a fatbin, little-endian 0xBA55ED50. An image for the
// interpreter device is ttir text behind kInterpreterImageMagic.
constexpr std::string_view kFatbinMagic("\x50\xED\x55\xBA", 4);

bool startsWith(const void *data, size_t size, std::string_view magic) {
  return size >= magic.size() &&
         std::memcmp(data, magic.data(), magic.size()) == 0;
}

bool isBinaryImage(const void *data, size_t size) {
  return startsWith(data, size, kElfMagic) ||
         startsWith(data, size, kFatbinMagic) ||
         startsWith(data, size, kInterpreterImageMagic);
}

// Kernels without an opt-in may use this much shared memory per block on
// every architecture since Volta.
constexpr uint32_t kDefaultSharedLimit = 48 * 1024;

} // namespace

Result<std::shared_ptr<Module>>
Module::loadCubin(const Context &context, const void *data, size_t size) {
  if (!isBinaryImage(data, size))
    return Status::error("not a cubin: the image (" + std::to_string(size) +
                         " bytes) has neither an ELF nor a fatbin header");
  const Driver &driver = context.driver();
  CUmodule module = nullptr;
  TILEC_RETURN_IF_ERROR(driver.check(
      driver.api().cuModuleLoadData(&module, data), "cuModuleLoadData"));
  return std::shared_ptr<Module>(new Module(driver, module));
}

Result<std::shared_ptr<Module>> Module::loadPtx(const Context &context,
                                                std::string_view ptx) {
  const Driver &driver = context.driver();
  // The driver reads PTX up to a NUL, which a string_view need not have.
  std::string text(ptx);
  std::vector<char> errorLog(16384, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {
      errorLog.data(),
      reinterpret_cast<void *>(static_cast<uintptr_t>(errorLog.size() - 1))};
  CUmodule module = nullptr;
  CUresult result = driver.api().cuModuleLoadDataEx(&module, text.c_str(), 2,
                                                    options, values);
  if (result != CUDA_SUCCESS) {
    std::string log(errorLog.data());
    while (!log.empty() && (log.back() == '\n' || log.back() == '\0'))
      log.pop_back();
    Status status = driver.failure(result, "cuModuleLoadDataEx (PTX JIT)");
    return log.empty() ? status : Status::error(status.message() + "\n" + log);
  }
  return std::shared_ptr<Module>(new Module(driver, module));
}

Result<std::shared_ptr<Module>> Module::load(const Context &context,
                                             std::string_view image) {
  if (isBinaryImage(image.data(), image.size()))
    return loadCubin(context, image.data(), image.size());
  return loadPtx(context, image);
}

Module::~Module() {
  if (module_)
    (void)driver_->api().cuModuleUnload(module_);
}

Result<CUfunction> Module::function(const std::string &name) const {
  CUfunction function = nullptr;
  if (Status status = driver_->check(
          driver_->api().cuModuleGetFunction(&function, module_, name.c_str()),
          "cuModuleGetFunction");
      !status.ok())
    return status.withContext("kernel '" + name + "'");
  return function;
}

Result<Kernel> Kernel::create(const Context &context,
                              std::shared_ptr<const Module> module,
                              CompileMetadata metadata) {
  const Driver &driver = context.driver();
  const DriverApi &api = driver.api();
  const DeviceProperties &device = context.properties();
  Result<CUfunction> function = module->function(metadata.kernelName);
  if (!function)
    return function.status();

  Kernel kernel;
  kernel.driver_ = &driver;
  kernel.function_ = *function;
  struct AttributeField {
    CUfunction_attribute attribute;
    const char *spelling;
    int Kernel::*field;
  };
  const AttributeField fields[] = {
      {CU_FUNC_ATTRIBUTE_NUM_REGS, "NUM_REGS", &Kernel::registers_},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "LOCAL_SIZE_BYTES",
       &Kernel::localBytes_},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES",
       &Kernel::staticSharedBytes_},
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK",
       &Kernel::maxThreadsPerBlock_},
  };
  for (const AttributeField &field : fields) {
    if (Status status = driver.check(
            api.cuFuncGetAttribute(&(kernel.*field.field), field.attribute,
                                   kernel.function_),
            "cuFuncGetAttribute");
        !status.ok())
      return status.withContext("kernel '" + metadata.kernelName +
                                "': reading " + field.spelling);
  }

  const std::string what = "kernel '" + metadata.kernelName + "'";
  uint32_t blockThreads = metadata.blockThreads();
  if (blockThreads > static_cast<uint32_t>(kernel.maxThreadsPerBlock_))
    return Status::error(
        what + " needs " + std::to_string(blockThreads) +
        " threads per block (num_warps " + std::to_string(metadata.numWarps) +
        ") but the loaded function allows at most " +
        std::to_string(kernel.maxThreadsPerBlock_) + " (it uses " +
        std::to_string(kernel.registers_) + " registers per thread)");

  // Static shared memory (declared in the kernel) counts against the same
  // per-block limit as the dynamic amount the launch requests.
  uint64_t totalShared =
      uint64_t(metadata.sharedBytes) + uint64_t(kernel.staticSharedBytes_);
  if (totalShared > uint64_t(device.maxSharedBytesPerBlockOptin))
    return Status::error(what + " needs " + std::to_string(totalShared) +
                         " bytes of shared memory per block (shared_bytes " +
                         std::to_string(metadata.sharedBytes) + " + static " +
                         std::to_string(kernel.staticSharedBytes_) + ") but " +
                         device.name + " (" + device.smName() +
                         ") allows at most " +
                         std::to_string(device.maxSharedBytesPerBlockOptin));
  if (totalShared > kDefaultSharedLimit) {
    if (Status status =
            driver.check(api.cuFuncSetAttribute(
                             kernel.function_,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             static_cast<int>(metadata.sharedBytes)),
                         "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
        !status.ok())
      return status.withContext(what);
  }

  // The hidden tensor-map parameters follow the signature's: the function
  // must have a 128-byte one for each, and where the function takes them is
  // where makeArgPack's buffer puts them.
  for (size_t j = 0; j < metadata.tensorMaps.size(); ++j) {
    size_t index = metadata.signature.size() + j;
    size_t offset = 0, size = 0;
    std::string which = what + ": tensor_maps[" + std::to_string(j) +
                        "] is parameter " + std::to_string(index);
    if (Status status = driver.check(
            api.cuFuncGetParamInfo(kernel.function_, index, &offset, &size),
            "cuFuncGetParamInfo");
        !status.ok())
      return status.withContext(which + ", which the loaded function lacks");
    if (size != 128)
      return Status::error(which + ", which the loaded function takes as " +
                           std::to_string(size) +
                           " bytes, not a 128-byte tensor map");
    kernel.tensorMapOffsets_.push_back(offset);
  }

  kernel.module_ = std::move(module);
  kernel.blockThreads_ = blockThreads;
  kernel.signatureHash_ =
      ArgPack::hashSignature(metadata.signature, metadata.tensorMaps);
  kernel.metadata_ = std::move(metadata);
  return kernel;
}

Result<ArgPack> Kernel::makeArgPack() const {
  Result<ArgPack> pack =
      ArgPack::create(metadata_.signature, metadata_.tensorMaps);
  if (pack && !tensorMapOffsets_.empty())
    if (Status status = pack->placeTensorMaps(tensorMapOffsets_); !status.ok())
      return status.withContext("kernel '" + metadata_.kernelName + "'");
  return pack;
}

} // namespace tilec::rt
