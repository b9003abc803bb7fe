//===- ArgPack.h - Typed kernel arguments for cuLaunchKernel ----*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
// An ArgPack is built once per kernel signature: it lays the arguments out as
// the kernel's parameter space does (each at an offset aligned to its size)
// and precomputes the void** array cuLaunchKernel reads. Setting a value and
// launching afterwards allocate nothing, which keeps repeated launches lean.
//
// A kernel that copies tiles with TMA also takes one hidden 128-byte
// parameter per tensor map (the compile json's tensor_maps), after the
// signature's. The caller never sets them: the pack encodes each from the
// arguments it names (encodeTensorMaps, which launch() calls), so size(),
// bind(), the setters and complete() are about the signature's arguments
// only.
//
// Where a map sits in the packed buffer is the loaded function's business:
// the PTX declares it `.param .align 64`, and ptxas puts it at a 64-byte
// aligned address of the constant bank the parameters start in at an
// offset of their own, so on sm_90 (parameters from c[0x0][0x210]) a map
// sits 48 bytes past a multiple of 64 into the buffer. create() puts maps at
// multiples of 64; Kernel::makeArgPack moves them to the function's offsets
// (placeTensorMaps). kernelParams, which launch() passes, is right either
// way: the driver places each parameter itself.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_ARGPACK_H
#define TILEC_RUNTIME_ARGPACK_H

#include "tilec/contract/ArgType.h"
#include "tilec/runtime/DevicePtr.h"
#include "tilec/contract/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace tilec::rt {

class Driver;

class ArgPack {
public:
  // `tensorMaps` are the kernel's hidden tensor-map parameters in order; a
  // map that breaks resolveTensorMap's rules (a name that is not a pointer or
  // integer argument of `signature`, ...) is refused.
  static Result<ArgPack> create(std::vector<KernelArg> signature,
                                std::vector<TensorMapParam> tensorMaps = {});

  ArgPack(const ArgPack &other);
  ArgPack &operator=(const ArgPack &other);
  ArgPack(ArgPack &&) noexcept = default;
  ArgPack &operator=(ArgPack &&) noexcept = default;

  // Each setter checks the index, that the value's kind matches the declared
  // type (a pointer for ptr, an integer for i*/u*, a floating-point value for
  // f*), that an integer fits the declared width, and that the value keeps
  // the kernel's specialization (a multiple of the argument's divisibility,
  // 1 where the kernel assumed 1). Floating-point values
  // are rounded to the declared format (to nearest, ties to even).
  Status setPointer(size_t index, DevicePtr value);
  // What setPointer(index, value) would refuse, without setting it.
  Status checkPointer(size_t index, DevicePtr value) const;
  // Whether argument `index` is set to the pointer `value`.
  bool holdsPointer(size_t index, DevicePtr value) const;
  Status setInt(size_t index, int64_t value);
  Status setUInt(size_t index, uint64_t value);
  Status setFloat(size_t index, double value);

  // Sets every argument in order; the count must equal the signature's.
  // Accepts DevicePtr, nullptr, anything with a `DevicePtr ptr() const`
  // (DeviceBuffer), C++ integers (bool included) and floating-point values.
  template <typename... Args> Status bind(const Args &...args) {
    if (sizeof...(Args) != size())
      return arityError(sizeof...(Args));
    size_t index = 0;
    Status status;
    ((status.ok() ? (void)(status = setOne(index++, args)) : (void)0), ...);
    return status;
  }

  size_t size() const { return signature_.size(); }
  const std::vector<KernelArg> &signature() const { return signature_; }
  // True once every argument has been set.
  bool complete() const { return setCount_ == signature_.size(); }
  bool isSet(size_t index) const { return isSet_[index]; }
  // Identifies the sequence of argument types and the tensor maps; launch()
  // compares it with the kernel's so that a pack built for another signature,
  // or without the kernel's maps, is refused.
  uint64_t signatureHash() const { return signatureHash_; }

  const std::vector<TensorMapParam> &tensorMaps() const { return tensorMaps_; }
  size_t tensorMapCount() const { return mapSlots_.size(); }
  bool hasTensorMaps() const { return !mapSlots_.empty(); }

  // Encodes every tensor map into its slot from the current values of the
  // arguments it names: base, rows and cols, and the row stride in elements.
  // A map whose four values are those of its last encode is left as it is,
  // so repeated launches with the same arrays cost four compares per map.
  // Refused, with the map named: an argument it names that is not set, rows
  // or cols below 1 (the driver has no empty arrays, and a map of one row
  // instead would let the kernel read memory outside the array: the caller
  // skips an empty problem's launch instead), a negative row stride, or an
  // array the driver's rules refuse (checkTiledArray2D). A refused map's slot
  // is zeroed. The maps are a cache of the arguments, hence const; like the
  // setters, not to be called on one pack from two threads at once.
  Status encodeTensorMaps(const Driver &driver) const;

  // Moves tensor map j to offsets[j] of the packed buffer: the loaded
  // function's layout (cuFuncGetParamInfo). Each map must lie past the
  // arguments and apart from the others. The arguments keep their values;
  // the maps are encoded again at their next encodeTensorMaps.
  Status placeTensorMaps(const std::vector<size_t> &offsets);

  // The array for cuLaunchKernel's kernelParams: entry i points at argument
  // i, entry size() + j at tensor map j.
  void **kernelParams() const { return pointers_.get(); }
  // The packed parameter space (for CU_LAUNCH_PARAM_BUFFER_POINTER), 64-byte
  // aligned, and the offset of each argument and tensor map in it (see the
  // top of this file for where a kernel's maps are).
  const void *buffer() const { return storage_.get(); }
  size_t bufferSize() const { return bufferSize_; }
  size_t offset(size_t index) const { return offsets_[index]; }
  size_t tensorMapOffset(size_t map) const { return mapSlots_[map].offset; }

  // What launch() compares: the argument types in order and, when there are
  // maps, each map's arguments (by position), element, box and swizzle.
  static uint64_t
  hashSignature(const std::vector<KernelArg> &signature,
                const std::vector<TensorMapParam> &tensorMaps = {});

private:
  ArgPack() = default;

  template <typename T> struct HasPtrMethod {
    template <typename U>
    static auto test(int)
        -> std::is_same<decltype(std::declval<const U &>().ptr()), DevicePtr>;
    template <typename> static std::false_type test(...);
    static constexpr bool value = decltype(test<T>(0))::value;
  };
  template <typename> static constexpr bool kUnsupported = false;

  template <typename T> Status setOne(size_t index, const T &value) {
    if constexpr (std::is_same_v<T, DevicePtr>)
      return setPointer(index, value);
    else if constexpr (std::is_same_v<T, std::nullptr_t>)
      return setPointer(index, DevicePtr{});
    else if constexpr (HasPtrMethod<T>::value)
      return setPointer(index, value.ptr());
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      return setInt(index, static_cast<int64_t>(value));
    else if constexpr (std::is_integral_v<T>)
      return setUInt(index, static_cast<uint64_t>(value));
    else if constexpr (std::is_floating_point_v<T>)
      return setFloat(index, static_cast<double>(value));
    else
      static_assert(kUnsupported<T>,
                    "kernel arguments are DevicePtr, buffers, integers or "
                    "floating-point values");
  }

  Status arityError(size_t given) const;
  Status checkIndex(size_t index) const;
  Status typeError(size_t index, const char *given) const;
  // The value (its 64 bits; `negative` for a negative integer) against the
  // argument's divisibility and equal-to-one specialization.
  Status checkSpecialization(size_t index, uint64_t bits, bool negative) const;
  void store(size_t index, const void *bytes);
  void rebuildPointers();
  size_t storageBlocks() const;
  // The end of the arguments in the packed buffer.
  size_t argumentsEnd() const;
  // Argument `index`'s bytes, zero-extended.
  uint64_t storedBits(size_t index) const;
  Status encodeTensorMap(const Driver &driver, size_t map) const;

  // A tensor map's arguments and its place in the parameter space, with the
  // values it was last encoded from.
  struct MapSlot {
    ResolvedTensorMap args;
    size_t offset = 0;
    mutable bool encoded = false;
    // The stored bits of base, rows, cols and rowStride.
    mutable uint64_t encodedFrom[4] = {};
  };

  // The parameter space's unit: a tensor map is read 64-byte aligned.
  struct alignas(64) StorageBlock {
    unsigned char bytes[64];
  };

  std::vector<KernelArg> signature_;
  std::vector<TensorMapParam> tensorMaps_;
  std::vector<size_t> offsets_;
  std::vector<MapSlot> mapSlots_;
  size_t bufferSize_ = 0;
  std::unique_ptr<StorageBlock[]> storage_;
  std::unique_ptr<void *[]> pointers_;
  std::vector<bool> isSet_;
  size_t setCount_ = 0;
  uint64_t signatureHash_ = 0;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_ARGPACK_H
