//===- ArgPack.h - Typed kernel arguments for cuLaunchKernel ----*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
// An ArgPack is built once per kernel signature: it lays the arguments out as
// the kernel's parameter space does (each at an offset aligned to its size)
// and precomputes the void** array cuLaunchKernel reads. Setting a value and
// launching afterwards allocate nothing, which keeps repeated launches lean.
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

class ArgPack {
public:
  static Result<ArgPack> create(std::vector<KernelArg> signature);

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
  // Identifies the sequence of argument types; launch() compares it with the
  // kernel's so that a pack built for another signature is refused.
  uint64_t signatureHash() const { return signatureHash_; }

  // The array for cuLaunchKernel's kernelParams: entry i points at argument i.
  void **kernelParams() const { return pointers_.get(); }
  // The packed parameter space (for CU_LAUNCH_PARAM_BUFFER_POINTER) and the
  // offset of each argument in it.
  const void *buffer() const { return storage_.get(); }
  size_t bufferSize() const { return bufferSize_; }
  size_t offset(size_t index) const { return offsets_[index]; }

  static uint64_t hashSignature(const std::vector<KernelArg> &signature);

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

  std::vector<KernelArg> signature_;
  std::vector<size_t> offsets_;
  size_t bufferSize_ = 0;
  // uint64_t elements keep the base 8-byte aligned, the largest alignment.
  std::unique_ptr<uint64_t[]> storage_;
  std::unique_ptr<void *[]> pointers_;
  std::vector<bool> isSet_;
  size_t setCount_ = 0;
  uint64_t signatureHash_ = 0;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_ARGPACK_H
