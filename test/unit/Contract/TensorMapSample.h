//===- TensorMapSample.h - A compile json with tensor maps ------*- C++ -*-===//
//
// A matmul's compile json whose A and B are read through TMA tensor maps
// (and whose every other optional field is set):
// CompileMetadataTest reads it, and WriteMetadataCpp turns it into C++
// (CompileMetadata::toCpp) that the test compiles in and compares.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TEST_UNIT_CONTRACT_TENSORMAPSAMPLE_H
#define TILEC_TEST_UNIT_CONTRACT_TENSORMAPSAMPLE_H

namespace tilec::test {

inline const char *const kTensorMapSampleJson = R"({
  "name": "matmul", "kernel_name": "matmul_tma", "target": "sm_90a",
  "num_warps": 8, "threads_per_warp": 32, "num_stages": 4,
  "shared_bytes": 131072, "registers": 168, "spill_stores": 0,
  "spill_loads": 0, "stack_frame_bytes": 16, "wgmma_serialized": true,
  "config": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
  "types": {"DTYPE": "f16"},
  "signature": [{"name": "a_ptr", "type": "ptr<f16>", "divisibility": 16},
                {"name": "b_ptr", "type": "ptr<bf16>", "divisibility": 16},
                {"name": "c_ptr", "type": "ptr<f32>"},
                {"name": "M", "type": "i32"},
                {"name": "N", "type": "i32"},
                {"name": "K", "type": "i64"},
                {"name": "stride_am", "type": "i32", "divisibility": 16},
                {"name": "stride_bk", "type": "u64"},
                {"name": "alpha", "type": "f32"}],
  "tensor_maps": [{"base": "a_ptr", "rows": "M", "cols": "K",
                   "row_stride": "stride_am", "element": "f16",
                   "box_rows": 128, "box_cols": 64, "swizzle": 128},
                  {"base": "b_ptr", "rows": "K", "cols": "N",
                   "row_stride": "stride_bk", "element": "bf16",
                   "box_rows": 64, "box_cols": 32, "swizzle": 0}],
  "hashes": {"ptx": "9a0b", "cubin": "77c1"},
  "compiler_id": "tilec 0.1 llvm 22",
  "compile_ms": {"ptx": 12.5, "cubin": 40.25},
  "cache": {"cubin": {"key": "0123abcd", "result": "remote hit"}}
})";

} // namespace tilec::test

#endif // TILEC_TEST_UNIT_CONTRACT_TENSORMAPSAMPLE_H
