//===- InterpreterDriver.cpp - A CUDA driver that runs ttir on the CPU ----===//
//
// libcuda.so.1 of the interpreter device (tilec/contract/InterpreterDevice.h,
// docs/interpreter.md): the driver entry points tilec's runtime loads
// (runtime/launch/include/tilec/runtime/Driver.h), over host memory and the
// interpreter. A program started with build/lib/interpreter-device first on
// LD_LIBRARY_PATH runs unchanged with one device, "tilec interpreter": the
// runtime compiles its kernels for the "interp" target, whose images are the
// specialized ttir, and every launch runs them program by program here.
//
// What it models and what it does not:
// - Device memory is host memory at the interpreter's made-up addresses
//   (one buffer per allocation), so a kernel's access outside every
//   allocation, past one's end or into a freed one fails its launch with the
//   op's location, the program and the lane; cuGetErrorString of the failed
//   launch's CUresult returns that message, so the runtime's error carries it.
//   New allocations are filled with 0xCB bytes, never zeros.
// - Everything runs when it is queued: streams and events order nothing,
//   and an event's time is a virtual clock that each launch advances by its
//   programs (1 us + 0.1 us a program), so that timings are deterministic.
// - Graphs are node lists run in order when launched (a node depends on at
//   most the one before it).
// - One lock serializes every call. Not modelled: TMA tensor maps
//   (cuTensorMapEncodeTiled fails), PTX images, several devices, contexts
//   other than the primary one.
//
//===----------------------------------------------------------------------===//

#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Interpreter/Interpreter.h"
#include "tilec/contract/InterpreterDevice.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cuda.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

using tilec::interp::KernelMemory;

constexpr size_t kTotalMemory = size_t(16) << 30;
constexpr unsigned char kFreshByte = 0xCB;

struct Allocation {
  std::unique_ptr<uint8_t[]> data;
  size_t bytes = 0;
};

struct LoadedModule {
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

struct Function {
  LoadedModule *module = nullptr;
  mlir::func::FuncOp kernel;
  // Each parameter's size in the launch's kernelParams.
  std::vector<size_t> paramSizes;
};

struct Event {
  double microseconds = 0;
};

struct Opaque {}; // what stream, pool and context handles point at

// A graph's node: a launch (its function, grid and arguments' bytes) or a
// memset.
struct GraphNode {
  CUfunction function = nullptr;
  std::array<unsigned, 3> grid{};
  std::vector<std::vector<uint8_t>> arguments;
  CUdeviceptr memsetTo = 0;
  uint32_t memsetValue = 0;
  size_t memsetElementBytes = 0, memsetCount = 0;
};
struct Graph {
  std::vector<GraphNode> nodes;
};

/// The calling thread's last failed call, for cuGetErrorString, which the
/// runtime calls right after it on the same thread. Messages are kept for
/// the process (one copy each): the pointer cuGetErrorString hands out
/// stays valid whatever other threads fail with later.
struct LastFailure {
  CUresult code = CUDA_SUCCESS;
  const std::string *message = nullptr;
};
thread_local LastFailure lastFailure;

CUresult failure(CUresult code, std::string message) {
  static std::mutex lock;
  static auto *messages = new std::set<std::string>();
  std::lock_guard<std::mutex> guard(lock);
  lastFailure.code = code;
  lastFailure.message =
      &*messages->insert("tilec interpreter device: " + std::move(message))
            .first;
  return code;
}

CUresult invalidArgument() {
  return failure(CUDA_ERROR_INVALID_VALUE,
                 "an argument is null or out of range");
}

CUresult invalidHandle() {
  return failure(CUDA_ERROR_INVALID_HANDLE,
                 "a handle the device did not make or already released");
}

/// The device: its memory, modules and clock, behind one lock.
struct Device {
  std::recursive_mutex lock;
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  KernelMemory memory;
  std::map<CUdeviceptr, Allocation> allocations;
  size_t allocatedBytes = 0;
  size_t allocationCount = 0;
  std::map<LoadedModule *, std::unique_ptr<LoadedModule>> modules;
  std::map<Function *, std::unique_ptr<Function>> functions;
  double clockMicroseconds = 0;
  Opaque primaryContext;

  Device() {
    context.loadDialect<tilec::tile::TileDialect, mlir::arith::ArithDialect,
                        mlir::math::MathDialect, mlir::scf::SCFDialect,
                        mlir::func::FuncDialect>();
  }

  /// The host bytes of [address, address + size), within one live
  /// allocation (a copy's bytes need no alignment, unlike a kernel's).
  uint8_t *resolve(CUdeviceptr address, size_t size, std::string &error) {
    static uint8_t nothing;
    if (size == 0)
      return &nothing; // an empty copy touches no byte
    auto after = allocations.upper_bound(address);
    if (after == allocations.begin() || !memory.resolve(address, 1, error)) {
      // The interpreter's memory says why: in no buffer, or a freed one.
      if (error.empty())
        error = "address " + std::to_string(address) + " is in no allocation";
      return nullptr;
    }
    auto &[start, allocation] = *std::prev(after);
    size_t offset = address - start;
    if (offset > allocation.bytes || size > allocation.bytes - offset) {
      error = "bytes [" + std::to_string(offset) + ", " +
              std::to_string(offset + size) + ") of an allocation of " +
              std::to_string(allocation.bytes) + " bytes";
      return nullptr;
    }
    return allocation.data.get() + offset;
  }
};

Device &device() {
  // Never destroyed: the runtime holds the driver for the process.
  static Device *instance = new Device();
  return *instance;
}

#define LOCKED                                                                 \
  Device &dev = device();                                                      \
  std::lock_guard<std::recursive_mutex> guard(dev.lock)

size_t sizeOfParameter(mlir::Type type) {
  if (llvm::isa<tilec::tile::PointerType>(type))
    return 8;
  if (type.isIntOrFloat())
    return std::max<size_t>(1, type.getIntOrFloatBitWidth() / 8);
  return 0;
}

CUresult copyBytes(uint8_t *to, const uint8_t *from, size_t bytes) {
  if (bytes)
    std::memmove(to, from, bytes);
  return CUDA_SUCCESS;
}

CUresult allocate(CUdeviceptr *pointer, size_t bytes) {
  LOCKED;
  if (!pointer || bytes == 0)
    return failure(CUDA_ERROR_INVALID_VALUE, "allocation of 0 bytes");
  if (bytes > kTotalMemory - dev.allocatedBytes)
    return failure(CUDA_ERROR_OUT_OF_MEMORY,
                   "out of memory: " + std::to_string(bytes) +
                       " bytes asked with " +
                       std::to_string(dev.allocatedBytes) + " allocated");
  Allocation allocation;
  allocation.data.reset(new (std::nothrow) uint8_t[bytes]);
  if (!allocation.data)
    return failure(CUDA_ERROR_OUT_OF_MEMORY,
                   "the host has no " + std::to_string(bytes) + " bytes");
  std::memset(allocation.data.get(), kFreshByte, bytes);
  allocation.bytes = bytes;
  uint64_t address =
      dev.memory.add("allocation " + std::to_string(++dev.allocationCount),
                     allocation.data.get(), bytes);
  // The interpreter's address space holds 2^24 - 1 buffers, freed or not.
  if (address == 0 ||
      !dev.allocations.emplace(address, std::move(allocation)).second)
    return failure(CUDA_ERROR_OUT_OF_MEMORY,
                   "the device's address space is spent (" +
                       std::to_string(dev.allocationCount) +
                       " allocations in this process)");
  dev.allocatedBytes += bytes;
  *pointer = address;
  return CUDA_SUCCESS;
}

CUresult release(CUdeviceptr pointer) {
  LOCKED;
  auto found = dev.allocations.find(pointer);
  if (found == dev.allocations.end() || !dev.memory.release(pointer))
    return failure(CUDA_ERROR_INVALID_VALUE,
                   "free of an address that is no live allocation");
  dev.allocatedBytes -= found->second.bytes;
  dev.allocations.erase(found);
  return CUDA_SUCCESS;
}

CUresult memset(CUdeviceptr to, uint32_t value, size_t elementBytes,
                size_t count) {
  LOCKED;
  std::string error;
  size_t total = 0;
  if (__builtin_mul_overflow(count, elementBytes, &total))
    return failure(CUDA_ERROR_INVALID_VALUE,
                   "memset of " + std::to_string(count) + " elements");
  uint8_t *bytes = dev.resolve(to, total, error);
  if (!bytes)
    return failure(CUDA_ERROR_INVALID_VALUE, "memset: " + error);
  for (size_t i = 0; i < count; ++i)
    std::memcpy(bytes + i * elementBytes, &value, elementBytes);
  return CUDA_SUCCESS;
}

CUresult toDevice(CUdeviceptr to, const void *from, size_t bytes) {
  LOCKED;
  std::string error;
  uint8_t *target = dev.resolve(to, bytes, error);
  if (!target)
    return failure(CUDA_ERROR_INVALID_VALUE, "copy to the device: " + error);
  return copyBytes(target, static_cast<const uint8_t *>(from), bytes);
}

CUresult toHost(void *to, CUdeviceptr from, size_t bytes) {
  LOCKED;
  std::string error;
  uint8_t *source = dev.resolve(from, bytes, error);
  if (!source)
    return failure(CUDA_ERROR_INVALID_VALUE, "copy to the host: " + error);
  return copyBytes(static_cast<uint8_t *>(to), source, bytes);
}

// A launch, for cuLaunchKernel and a graph's launch nodes (one entry point
// of the driver each, so that tools that count the driver's entry points
// count a graph's launches once).
CUresult launchKernel(CUfunction handle, unsigned int gridX, unsigned int gridY,
                      unsigned int gridZ, void **kernelParams, void **extra) {
  LOCKED;
  auto found = dev.functions.find(reinterpret_cast<Function *>(handle));
  if (found == dev.functions.end())
    return invalidHandle();
  if (extra)
    return failure(CUDA_ERROR_NOT_SUPPORTED,
                   "parameters through `extra` are not supported");
  // The real driver's limits on a grid.
  if (gridX == 0 || gridY == 0 || gridZ == 0 || gridX > 0x7FFFFFFFu ||
      gridY > 65535 || gridZ > 65535)
    return failure(CUDA_ERROR_INVALID_VALUE,
                   "grid " + std::to_string(gridX) + "x" +
                       std::to_string(gridY) + "x" + std::to_string(gridZ) +
                       " is out of the driver's range");
  Function &function = *found->second;
  if (!function.paramSizes.empty() && !kernelParams)
    return failure(CUDA_ERROR_INVALID_VALUE, "no kernel parameters");
  // Each parameter as the interpreter takes it: an integer sign-extended,
  // a pointer's address, a float's bits.
  std::vector<int64_t> arguments;
  mlir::TypeRange types = function.kernel.getArgumentTypes();
  for (auto [index, type] : llvm::enumerate(types)) {
    const void *value = kernelParams[index];
    int64_t argument = 0;
    switch (function.paramSizes[index]) {
    case 1:
      argument = *static_cast<const int8_t *>(value);
      break;
    case 2:
      argument = *static_cast<const int16_t *>(value);
      break;
    case 4:
      argument = *static_cast<const int32_t *>(value);
      break;
    default:
      std::memcpy(&argument, value, 8);
    }
    if (type.isF16() || type.isBF16())
      argument &= 0xFFFF;
    else if (type.isF32())
      argument &= 0xFFFFFFFF;
    arguments.push_back(argument);
  }
  // The interpreter's errors, each at its op's file:line (the kernel
  // builder's), one per line.
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&dev.context, [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(diagnostics);
    if (!diagnostics.empty())
      os << "\n";
    if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
      os << file.getFilename().getValue() << ":" << file.getLine() << ":"
         << file.getColumn();
    else
      os << d.getLocation();
    os << ": " << d.str();
    return mlir::success();
  });
  auto module = function.module->module.get();
  if (mlir::failed(tilec::interp::interpretKernel(module, {gridX, gridY, gridZ},
                                                  arguments, dev.memory)))
    return failure(CUDA_ERROR_LAUNCH_FAILED,
                   "kernel '" + function.kernel.getSymName().str() +
                       "' failed: " + diagnostics);
  dev.clockMicroseconds += 1.0 + 0.1 * double(gridX) * gridY * gridZ;
  return CUDA_SUCCESS;
}

// A kernel node's arguments, copied when the node is added or updated, as
// the driver copies them.
std::vector<std::vector<uint8_t>> nodeArguments(const Function &function,
                                                void **kernelParams) {
  std::vector<std::vector<uint8_t>> arguments;
  for (size_t index = 0; index < function.paramSizes.size(); ++index) {
    const auto *bytes = static_cast<const uint8_t *>(kernelParams[index]);
    arguments.emplace_back(bytes, bytes + function.paramSizes[index]);
  }
  return arguments;
}

} // namespace

extern "C" {

CUresult cuGetErrorName(CUresult error, const char **text) {
  if (!text)
    return invalidArgument();
  switch (error) {
#define TILEC_ERROR_NAME(code)                                                 \
  case code:                                                                   \
    *text = #code;                                                             \
    return CUDA_SUCCESS;
    TILEC_ERROR_NAME(CUDA_SUCCESS)
    TILEC_ERROR_NAME(CUDA_ERROR_INVALID_VALUE)
    TILEC_ERROR_NAME(CUDA_ERROR_OUT_OF_MEMORY)
    TILEC_ERROR_NAME(CUDA_ERROR_NOT_INITIALIZED)
    TILEC_ERROR_NAME(CUDA_ERROR_INVALID_DEVICE)
    TILEC_ERROR_NAME(CUDA_ERROR_INVALID_IMAGE)
    TILEC_ERROR_NAME(CUDA_ERROR_INVALID_HANDLE)
    TILEC_ERROR_NAME(CUDA_ERROR_NOT_FOUND)
    TILEC_ERROR_NAME(CUDA_ERROR_LAUNCH_FAILED)
    TILEC_ERROR_NAME(CUDA_ERROR_NOT_SUPPORTED)
#undef TILEC_ERROR_NAME
  default:
    *text = nullptr;
    return invalidArgument();
  }
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  if (!text)
    return CUDA_ERROR_INVALID_VALUE;
  // The failed call's own message, with what the interpreter said.
  if (error != CUDA_SUCCESS && error == lastFailure.code &&
      lastFailure.message) {
    *text = lastFailure.message->c_str();
    return CUDA_SUCCESS;
  }
  return cuGetErrorName(error, text);
}

CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }

CUresult cuDriverGetVersion(int *version) {
  if (!version)
    return invalidArgument();
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  if (!count)
    return invalidArgument();
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *handle, int ordinal) {
  if (!handle)
    return invalidArgument();
  if (ordinal != 0)
    return failure(CUDA_ERROR_INVALID_DEVICE, "the only device is 0");
  *handle = 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int length, CUdevice handle) {
  if (!name || length <= 0 || handle != 0)
    return invalidArgument();
  std::string text(tilec::kInterpreterDeviceName);
  std::strncpy(name, text.c_str(), size_t(length));
  name[length - 1] = '\0';
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice handle) {
  if (!value || handle != 0)
    return invalidArgument();
  switch (attribute) {
  // An sm_90-sized device with a few multiprocessors.
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = 9;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = 0;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = 8;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *value = 48 * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = 227 * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
    *value = 65536;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
    *value = 4 << 20;
    break;
  case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    *value = 1;
    break;
  default:
    *value = 0;
  }
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice handle) {
  if (!bytes || handle != 0)
    return invalidArgument();
  *bytes = kTotalMemory;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice handle) {
  if (!context || handle != 0)
    return invalidArgument();
  LOCKED;
  *context = reinterpret_cast<CUcontext>(&dev.primaryContext);
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice handle) {
  return handle == 0
             ? CUDA_SUCCESS
             : failure(CUDA_ERROR_INVALID_DEVICE, "the only device is 0");
}

CUresult cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }

CUresult cuCtxGetCurrent(CUcontext *context) {
  if (!context)
    return invalidArgument();
  LOCKED;
  *context = reinterpret_cast<CUcontext>(&dev.primaryContext);
  return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }

CUresult cuMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  return allocate(pointer, bytes);
}

CUresult cuMemFree(CUdeviceptr pointer) { return release(pointer); }

// Host memory: the interpreter's device reads and writes the host's, so
// page-locked memory is plain memory here.
CUresult cuMemHostAlloc(void **pointer, size_t bytes, unsigned int) {
  if (!pointer)
    return invalidArgument();
  *pointer = std::calloc(bytes ? bytes : 1, 1);
  return *pointer ? CUDA_SUCCESS
                  : failure(CUDA_ERROR_OUT_OF_MEMORY, "out of host memory");
}

CUresult cuMemFreeHost(void *pointer) {
  std::free(pointer);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD(CUdeviceptr to, const void *from, size_t bytes) {
  return toDevice(to, from, bytes);
}

CUresult cuMemcpyDtoH(void *to, CUdeviceptr from, size_t bytes) {
  return toHost(to, from, bytes);
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr to, const void *from, size_t bytes,
                           CUstream) {
  return toDevice(to, from, bytes);
}

CUresult cuMemcpyDtoHAsync(void *to, CUdeviceptr from, size_t bytes, CUstream) {
  return toHost(to, from, bytes);
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr to, CUdeviceptr from, size_t bytes,
                           CUstream) {
  LOCKED;
  std::string error;
  uint8_t *source = dev.resolve(from, bytes, error);
  uint8_t *target = source ? dev.resolve(to, bytes, error) : nullptr;
  if (!target)
    return failure(CUDA_ERROR_INVALID_VALUE, "device copy: " + error);
  return copyBytes(target, source, bytes);
}

CUresult cuMemsetD8(CUdeviceptr to, unsigned char value, size_t count) {
  return memset(to, value, 1, count);
}

CUresult cuMemsetD32(CUdeviceptr to, unsigned int value, size_t count) {
  return memset(to, value, 4, count);
}

CUresult cuMemsetD8Async(CUdeviceptr to, unsigned char value, size_t count,
                         CUstream) {
  return memset(to, value, 1, count);
}

CUresult cuMemsetD32Async(CUdeviceptr to, unsigned int value, size_t count,
                          CUstream) {
  return memset(to, value, 4, count);
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *) {
  if (!pool)
    return invalidArgument();
  *pool = reinterpret_cast<CUmemoryPool>(new Opaque());
  return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  delete reinterpret_cast<Opaque *>(pool);
  return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool, CUmemPool_attribute, void *) {
  return CUDA_SUCCESS;
}

CUresult cuMemPoolTrimTo(CUmemoryPool, size_t) { return CUDA_SUCCESS; }

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *pointer, size_t bytes,
                                 CUmemoryPool, CUstream) {
  return allocate(pointer, bytes);
}

CUresult cuMemFreeAsync(CUdeviceptr pointer, CUstream) {
  return release(pointer);
}

CUresult cuStreamCreate(CUstream *stream, unsigned int) {
  if (!stream)
    return invalidArgument();
  *stream = reinterpret_cast<CUstream>(new Opaque());
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream stream) {
  delete reinterpret_cast<Opaque *>(stream);
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }

CUresult cuEventCreate(CUevent *event, unsigned int) {
  if (!event)
    return invalidArgument();
  *event = reinterpret_cast<CUevent>(new Event());
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent event) {
  delete reinterpret_cast<Event *>(event);
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent event, CUstream) {
  if (!event)
    return invalidHandle();
  LOCKED;
  reinterpret_cast<Event *>(event)->microseconds = dev.clockMicroseconds;
  return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent event) {
  return event ? CUDA_SUCCESS
               : failure(CUDA_ERROR_INVALID_HANDLE, "a null event");
}

CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned int) {
  return CUDA_SUCCESS;
}

CUresult cuEventElapsedTime(float *milliseconds, CUevent start, CUevent end) {
  if (!milliseconds || !start || !end)
    return invalidArgument();
  *milliseconds =
      static_cast<float>((reinterpret_cast<Event *>(end)->microseconds -
                          reinterpret_cast<Event *>(start)->microseconds) /
                         1000.0);
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *handle, const void *image) {
  if (!handle || !image)
    return invalidArgument();
  LOCKED;
  const char *text = static_cast<const char *>(image);
  std::string_view magic = tilec::kInterpreterImageMagic;
  if (std::strncmp(text, magic.data(), magic.size()) != 0)
    return failure(CUDA_ERROR_INVALID_IMAGE,
                   "the image is not ttir for the interpreter (a cubin? "
                   "the runtime compiles for \"interp\" on this device)");
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&dev.context, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  auto loaded = std::make_unique<LoadedModule>();
  loaded->module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &dev.context, "image");
  if (!loaded->module)
    return failure(CUDA_ERROR_INVALID_IMAGE,
                   "the image does not parse: " + diagnostics);
  LoadedModule *key = loaded.get();
  dev.modules[key] = std::move(loaded);
  *handle = reinterpret_cast<CUmodule>(key);
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadDataEx(CUmodule *, const void *, unsigned int,
                            CUjit_option *, void **) {
  return failure(CUDA_ERROR_NOT_SUPPORTED, "no PTX on this device");
}

CUresult cuModuleUnload(CUmodule handle) {
  LOCKED;
  auto *key = reinterpret_cast<LoadedModule *>(handle);
  if (!dev.modules.count(key))
    return invalidHandle();
  for (auto it = dev.functions.begin(); it != dev.functions.end();)
    it = it->second->module == key ? dev.functions.erase(it) : std::next(it);
  dev.modules.erase(key);
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *handle, CUmodule module,
                             const char *name) {
  if (!handle || !name)
    return invalidArgument();
  LOCKED;
  auto found = dev.modules.find(reinterpret_cast<LoadedModule *>(module));
  if (found == dev.modules.end())
    return invalidHandle();
  auto kernel = found->second->module->lookupSymbol<mlir::func::FuncOp>(name);
  if (!kernel || kernel.isExternal())
    return failure(CUDA_ERROR_NOT_FOUND,
                   std::string("the image has no kernel '") + name + "'");
  auto function = std::make_unique<Function>();
  function->module = found->second.get();
  function->kernel = kernel;
  for (mlir::Type type : kernel.getArgumentTypes()) {
    size_t size = sizeOfParameter(type);
    if (size == 0)
      return failure(CUDA_ERROR_NOT_SUPPORTED,
                     std::string("kernel '") + name +
                         "' takes a parameter the device cannot pass");
    function->paramSizes.push_back(size);
  }
  Function *key = function.get();
  dev.functions[key] = std::move(function);
  *handle = reinterpret_cast<CUfunction>(key);
  return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute,
                            CUfunction) {
  if (!value)
    return invalidArgument();
  switch (attribute) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = 1024;
    break;
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *value = 32;
    break;
  default:
    *value = 0;
  }
  return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) {
  return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction handle, size_t index, size_t *offset,
                            size_t *size) {
  if (!handle || !offset || !size)
    return invalidArgument();
  LOCKED;
  const std::vector<size_t> &sizes =
      reinterpret_cast<Function *>(handle)->paramSizes;
  if (index >= sizes.size())
    return invalidArgument();
  size_t at = 0;
  for (size_t i = 0; i <= index; ++i) {
    at = (at + sizes[i] - 1) / sizes[i] * sizes[i];
    if (i < index)
      at += sizes[i];
  }
  *offset = at;
  *size = sizes[index];
  return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *, CUtensorMapDataType, cuuint32_t,
                                void *, const cuuint64_t *, const cuuint64_t *,
                                const cuuint32_t *, const cuuint32_t *,
                                CUtensorMapInterleave, CUtensorMapSwizzle,
                                CUtensorMapL2promotion,
                                CUtensorMapFloatOOBfill) {
  return failure(CUDA_ERROR_NOT_SUPPORTED, "no TMA tensor maps");
}

CUresult cuLaunchKernel(CUfunction handle, unsigned int gridX,
                        unsigned int gridY, unsigned int gridZ, unsigned int,
                        unsigned int, unsigned int, unsigned int, CUstream,
                        void **kernelParams, void **extra) {
  return launchKernel(handle, gridX, gridY, gridZ, kernelParams, extra);
}

// Graphs: a node list run in order when launched (every node here depends
// on the one before it, which is all tilec's launch sequences build; a node
// with more dependencies is refused).
CUresult cuGraphCreate(CUgraph *graph, unsigned int) {
  if (!graph)
    return invalidArgument();
  *graph = reinterpret_cast<CUgraph>(new Graph());
  return CUDA_SUCCESS;
}

CUresult cuGraphAddKernelNode(CUgraphNode *node, CUgraph graph,
                              const CUgraphNode *, size_t dependencies,
                              const CUDA_KERNEL_NODE_PARAMS *params) {
  LOCKED;
  if (!node || !graph || !params || dependencies > 1)
    return invalidArgument();
  auto found = dev.functions.find(reinterpret_cast<Function *>(params->func));
  if (found == dev.functions.end())
    return invalidHandle();
  if (params->extra)
    return failure(CUDA_ERROR_NOT_SUPPORTED,
                   "parameters through `extra` are not supported");
  GraphNode added;
  added.function = params->func;
  added.grid = {params->gridDimX, params->gridDimY, params->gridDimZ};
  added.arguments = nodeArguments(*found->second, params->kernelParams);
  auto &nodes = reinterpret_cast<Graph *>(graph)->nodes;
  nodes.push_back(std::move(added));
  *node = reinterpret_cast<CUgraphNode>(nodes.size());
  return CUDA_SUCCESS;
}

CUresult cuGraphAddMemsetNode(CUgraphNode *node, CUgraph graph,
                              const CUgraphNode *, size_t dependencies,
                              const CUDA_MEMSET_NODE_PARAMS *params,
                              CUcontext) {
  if (!node || !graph || !params || dependencies > 1 || params->height != 1 ||
      (params->elementSize != 1 && params->elementSize != 2 &&
       params->elementSize != 4))
    return invalidArgument();
  GraphNode added;
  added.memsetTo = params->dst;
  added.memsetValue = params->value;
  added.memsetElementBytes = params->elementSize;
  added.memsetCount = params->width;
  auto &nodes = reinterpret_cast<Graph *>(graph)->nodes;
  nodes.push_back(std::move(added));
  *node = reinterpret_cast<CUgraphNode>(nodes.size());
  return CUDA_SUCCESS;
}

CUresult cuGraphInstantiate(CUgraphExec *exec, CUgraph graph,
                            unsigned long long) {
  if (!exec || !graph)
    return invalidArgument();
  *exec = reinterpret_cast<CUgraphExec>(
      new Graph(*reinterpret_cast<Graph *>(graph)));
  return CUDA_SUCCESS;
}

CUresult cuGraphExecKernelNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                        const CUDA_KERNEL_NODE_PARAMS *params) {
  LOCKED;
  if (!exec || !params)
    return invalidArgument();
  // A node is its place in the graph, counted from 1; an instantiated graph
  // keeps the places.
  auto &nodes = reinterpret_cast<Graph *>(exec)->nodes;
  size_t place = reinterpret_cast<size_t>(node);
  auto found = dev.functions.find(reinterpret_cast<Function *>(params->func));
  if (place == 0 || place > nodes.size() || !nodes[place - 1].function ||
      nodes[place - 1].function != params->func || found == dev.functions.end())
    return invalidArgument();
  GraphNode &updated = nodes[place - 1];
  updated.grid = {params->gridDimX, params->gridDimY, params->gridDimZ};
  updated.arguments = nodeArguments(*found->second, params->kernelParams);
  return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec exec, CUstream) {
  if (!exec)
    return invalidArgument();
  for (const GraphNode &node : reinterpret_cast<Graph *>(exec)->nodes) {
    CUresult result = CUDA_SUCCESS;
    if (node.function) {
      std::vector<void *> params;
      for (const std::vector<uint8_t> &argument : node.arguments)
        params.push_back(const_cast<uint8_t *>(argument.data()));
      result = launchKernel(node.function, node.grid[0], node.grid[1],
                            node.grid[2], params.data(), nullptr);
    } else {
      result = memset(node.memsetTo, node.memsetValue, node.memsetElementBytes,
                      node.memsetCount);
    }
    if (result != CUDA_SUCCESS)
      return result;
  }
  return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec exec) {
  delete reinterpret_cast<Graph *>(exec);
  return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph graph) {
  delete reinterpret_cast<Graph *>(graph);
  return CUDA_SUCCESS;
}

} // extern "C"
