//===- Crc32c.cpp - CRC-32C (Castagnoli) checksums ------------------------===//

#include "tilec/runtime/Crc32c.h"

#include <array>
#include <cstring>

namespace tilec::rt {
namespace {

// The reflected Castagnoli polynomial.
constexpr uint32_t kPolynomial = 0x82f63b78u;

std::array<uint32_t, 256> makeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ (crc & 1 ? kPolynomial : 0);
    table[byte] = crc;
  }
  return table;
}

uint32_t crc32cPortable(uint32_t crc, const uint8_t *bytes, size_t size) {
  static const std::array<uint32_t, 256> table = makeTable();
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ bytes[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t
crc32cHardware(uint32_t crc, const uint8_t *bytes, size_t size) {
  uint64_t wide = crc;
  for (; size >= 8; size -= 8, bytes += 8) {
    uint64_t word;
    std::memcpy(&word, bytes, 8);
    wide = __builtin_ia32_crc32di(wide, word);
  }
  crc = static_cast<uint32_t>(wide);
  for (; size > 0; --size, ++bytes)
    crc = __builtin_ia32_crc32qi(crc, *bytes);
  return crc;
}
#endif

} // namespace

uint32_t crc32c(const void *data, size_t size) {
  const auto *bytes = static_cast<const uint8_t *>(data);
  uint32_t crc = 0xffffffffu;
#if defined(__x86_64__)
  static const bool hasSse42 = __builtin_cpu_supports("sse4.2");
  if (hasSse42)
    return ~crc32cHardware(crc, bytes, size);
#endif
  return ~crc32cPortable(crc, bytes, size);
}

} // namespace tilec::rt
