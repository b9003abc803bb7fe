//===- Crc32c.h - CRC-32C (Castagnoli) checksums ----------------*- C++ -*-===//
//
// Part of tilec_tuning. The checksum of each cubin in a kernel bundle
// (Bundle.h): CRC-32C, as in iSCSI, ext4 and RocksDB, because it is checked
// on the start-up path of a program and the SSE4.2 instruction computes it
// at several GB/s (a 55 KB cubin in microseconds), where SHA-256 would take
// a third of a millisecond. It detects corruption, not tampering.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_CRC32C_H
#define TILEC_RUNTIME_CRC32C_H

#include <cstddef>
#include <cstdint>

namespace tilec::rt {

// The CRC-32C of `size` bytes at `data` (crc32c("123456789") is 0xe3069283).
uint32_t crc32c(const void *data, size_t size);

} // namespace tilec::rt

#endif // TILEC_RUNTIME_CRC32C_H
