//===- Workload.h - The calls a program makes, to warm up later -*- C++ -*-===//
//
// Part of tilec_tuning, the tuning library (on top of tilec_runtime).
//
// A workload file lists the distinct calls a program made, so that
// `tilec warmup` can tune them all once (filling the autotune and stage
// caches) and their winners can be packed for deployment:
//
//   {"format": "tilec-workload", "version": 1, "calls": [
//     {"kernel": "matmul", "sizes": {"K": 4096, "M": 4096, "N": 4096},
//      "types": {"DTYPE": "f16"}, "params": {"ALLOW_TF32": 0}},
//     {"op": "submanifold_conv3d", "voxels": 64160, "in_channels": 64,
//      "out_channels": 64, "kernel_size": 3, "dilation": 1, "dtype": "f16",
//      "bias": true, "allow_tf32": false}
//   ]}
//
// A kernel call is what Autotuner::select is given (a kernel and its Call);
// an op call is one layer of the sparse convolution, which tunes the kernels
// it calls on a voxel cloud of its size. Each call has one canonical text
// (keys in a fixed order), so that equal calls compare equal as text and a
// file lists each once.
//
// A program records its calls when TILEC_RECORD_WORKLOAD names a file
// (WorkloadRecorder below). Appends merge as the autotune cache's stores do:
// an exclusive flock on <path>.lock, the file re-read, only new calls added,
// the file written back with writeFileAtomically (FileIO.h).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_WORKLOAD_H
#define TILEC_RUNTIME_WORKLOAD_H

#include "tilec/contract/KernelDescription.h"
#include "tilec/contract/Status.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::rt {

/// The op name of a sparse-convolution layer in a workload.
inline constexpr const char *kSubmanifoldConvOp = "submanifold_conv3d";

/// One layer of the sparse convolution (tilec/sparse/SparseConv.h), as
/// plain data: what a layer meets besides its buffers. tilec_sparse
/// converts it to and from its ConvArguments.
struct ConvLayer {
  int64_t voxels = 0;
  int64_t inChannels = 0, outChannels = 0;
  /// The window per axis (x, y, z): odd extents, dilations.
  std::array<int, 3> kernelSize{3, 3, 3}, dilation{1, 1, 1};
  /// "f16", "bf16" or "f32".
  std::string dtype = "f16";
  bool bias = false;
  bool allowTf32 = false;
  /// Row strides of x and y in elements; 0 means dense rows (the channels).
  /// They specialize the kernel, so a strided layer keys differently.
  int64_t xRowStride = 0, yRowStride = 0;
};

/// One entry of a workload: a kernel call or an op call.
struct WorkloadCall {
  /// A kernel call: the kernel's name (empty for an op call) and its call.
  std::string kernel;
  Call call;
  /// An op call: the convolution layer.
  std::optional<ConvLayer> conv;

  static WorkloadCall kernelCall(std::string kernel, Call call);
  /// Row strides equal to the channels are dense: stored as 0, so that both
  /// spellings of a layer have one text.
  static WorkloadCall convCall(ConvLayer layer);

  bool isOp() const { return conv.has_value(); }
  /// The canonical JSON text of the entry, on one line: a kernel call as
  /// kernel, sizes, types, params (each map sorted by name, all three always
  /// written), an op call as op, voxels, in_channels, out_channels,
  /// kernel_size, dilation, dtype, bias, allow_tf32 (and the row strides
  /// where they are not dense).
  std::string encode() const;
  /// Whether the call is one a workload file can list (what parsing its
  /// text checks: a kernel name, scalar type names, a positive voxel count,
  /// an odd kernel size, ...); the error names the field.
  Status validate() const;
  /// A short summary for people: "matmul M=4096,N=4096,K=4096 DTYPE=f16
  /// ALLOW_TF32=0", "submanifold_conv3d N=64160 64->64 k3 d1 f16 bias".
  std::string describe() const;
};

class Workload {
public:
  std::vector<WorkloadCall> calls;

  /// Reads and parses `path`; errors name the file.
  static Result<Workload> load(const std::string &path);
  /// Parses a workload's text. Errors read "workload <origin>: calls[3]:
  /// 'voxels' must be a positive integer"; unknown fields are errors, since
  /// a field nobody reads is a mistake in the file or a newer format.
  static Result<Workload> parse(std::string_view text,
                                const std::string &origin);

  /// The file's canonical text: the header, then one call per line (each
  /// its WorkloadCall::encode()), in order.
  std::string encode() const;

  /// Whether a call with the same canonical text is listed.
  bool contains(const WorkloadCall &call) const;
  /// Appends `call` unless it is listed; returns whether it was added.
  bool add(WorkloadCall call);
};

/// Adds the `calls` that `path` does not list yet, in order, under an
/// exclusive flock on <path>.lock: the file is re-read under the lock, so
/// that processes recording at once keep each other's calls. The parent
/// directory is created if needed. A file that does not parse is moved
/// aside to <path>.corrupt, with a warning in `warnings`, rather than
/// overwritten; the new file then lists `calls`. A call that does not
/// validate() is an error, before the file is touched: a file must never
/// list what its reader refuses.
Status appendToWorkloadFile(const std::string &path,
                            const std::vector<WorkloadCall> &calls,
                            std::vector<std::string> *warnings = nullptr);

/// Appends every distinct call it is given to a workload file, once per
/// process: a repeated call costs its canonical text and a set lookup, a new
/// one a locked append. Recording never fails the caller: a call a workload
/// cannot list is skipped with a warning on stderr, and the first failure to
/// write is one warning and turns recording off. Thread-safe.
class WorkloadRecorder {
public:
  /// Records into `path`; an empty path records nothing.
  explicit WorkloadRecorder(std::string path);
  WorkloadRecorder(const WorkloadRecorder &) = delete;
  WorkloadRecorder &operator=(const WorkloadRecorder &) = delete;

  /// The process's recorder: $TILEC_RECORD_WORKLOAD, read once; off when
  /// unset or empty. Autotuner::select and submanifoldConv3d record through
  /// it.
  static WorkloadRecorder &process();

  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  const std::string &path() const { return path_; }

  void recordKernelCall(const std::string &kernel, const Call &call);
  void recordConvLayer(const ConvLayer &layer);
  void record(const WorkloadCall &call);

private:
  std::string path_;
  // Cleared under mutex_; read first without it, so that a program that
  // does not record pays one load per call.
  std::atomic<bool> enabled_{false};
  std::mutex mutex_;
  // Canonical texts recorded (or found listed) in this process.
  std::set<std::string> recorded_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_WORKLOAD_H
