//===- Sha256.h - SHA-256 (FIPS 180-4) for the runtime ----------*- C++ -*-===//
//
// Part of tilec_tuning, the tuning library (on top of tilec_runtime).
//
// The stage cache names and checks its entries by SHA-256. The runtime must
// read the cache without LLVM (llvm::SHA256 exists only on the compiler side),
// so it carries this small implementation; test/unit/Cache checks it against
// the FIPS 180-2 test vectors and against llvm::SHA256.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_SHA256_H
#define TILEC_RUNTIME_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tilec::rt {

class Sha256 {
public:
  using Digest = std::array<uint8_t, 32>;

  Sha256() { reset(); }

  void reset();
  void update(const void *data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  // Returns the digest of everything passed to update() and resets.
  Digest finish();

  static Digest hash(std::string_view data);
  // Lowercase hex of the digest of `data` (64 characters).
  static std::string hashHex(std::string_view data);

private:
  void compress(const uint8_t *block);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t length_ = 0;
};

// Lowercase hex of `size` bytes.
std::string toHex(const uint8_t *bytes, size_t size);
inline std::string toHex(const Sha256::Digest &digest) {
  return toHex(digest.data(), digest.size());
}

} // namespace tilec::rt

#endif // TILEC_RUNTIME_SHA256_H
