//===- LaunchSequence.h - Launches recorded once, replayed ------*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
// A fixed sequence of kernel launches and memsets on one stream, recorded
// once and replayed as a whole: as one CUDA graph launch where the driver
// builds graphs, else step by step (the steps' arguments were packed at
// recording, so a replay costs the driver calls alone). A sequence whose
// work changes from replay to replay reads what changes from device memory
// that the caller writes before the replay (the sparse convolution's map
// build reads its voxel count so: docs/sparse-conv.md, "One launch sequence
// per size bucket").
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_LAUNCHSEQUENCE_H
#define TILEC_RUNTIME_LAUNCHSEQUENCE_H

#include "tilec/contract/Status.h"
#include "tilec/runtime/ArgPack.h"
#include "tilec/runtime/Launch.h"
#include "tilec/runtime/Module.h"

#include <cuda.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace tilec::rt {

class Context;

class LaunchSequence {
public:
  explicit LaunchSequence(const Context &context);
  ~LaunchSequence();
  LaunchSequence(const LaunchSequence &) = delete;
  LaunchSequence &operator=(const LaunchSequence &) = delete;

  // Appends a launch of `kernel` with a copy of `args` (checked as launch()
  // checks them) and keeps the kernel loaded while the sequence lives.
  Status addKernel(std::shared_ptr<const Kernel> kernel, Dim3 grid,
                   const ArgPack &args);
  // Appends a memset of `count` elements of 1 or 4 bytes.
  Status addMemset(CUdeviceptr address, uint32_t value, unsigned elementBytes,
                   size_t count);

  // Builds the steps into one graph, each step after the one before;
  // without it (a driver that cannot build graphs refuses) replay() queues
  // the steps one by one. No step may be added afterwards.
  Status instantiate();
  // Queues every step on `stream`, in order.
  Status replay(CUstream stream) const;
  // A pointer argument of a kernel step: the step's and the argument's
  // indices.
  using Place = std::pair<size_t, size_t>;
  // The pointer arguments that hold `address`: a recording names a buffer
  // that changes from replay to replay by an address of its own.
  std::vector<Place> placesOf(CUdeviceptr address) const;
  // A new address for the pointer arguments at `places`.
  struct PointerUpdate {
    const std::vector<Place> &places;
    CUdeviceptr address;
  };
  // Points the arguments of every update at its address for the replays
  // after it, each graph node they touch updated in place once: a replay
  // that reads its inputs and writes its outputs in new buffers each time
  // instead of copying them. Each pointer is checked as launch() checks it
  // (a kernel specialized for aligned pointers takes no other); on an error
  // no argument changes.
  Status setPointers(std::initializer_list<PointerUpdate> updates);
  // The graph nodes setPointers has updated so far (an update that changes
  // none of a node's pointers leaves the node as it is).
  size_t nodeUpdates() const { return nodeUpdates_; }

  size_t steps() const { return steps_.size(); }
  // Whether replay() launches one graph.
  bool asGraph() const { return exec_ != nullptr; }

private:
  struct Step {
    std::shared_ptr<const Kernel> kernel; // null for a memset
    Dim3 grid;
    std::unique_ptr<ArgPack> args;
    CUgraphNode node = nullptr; // a kernel step's node in graph_
    // Its pack holds pointers its node does not: an update failed.
    bool nodeStale = false;
    CUdeviceptr address = 0;
    uint32_t value = 0;
    unsigned elementBytes = 0;
    size_t count = 0;
  };
  Status queueStep(const Step &step, CUstream stream) const;
  static CUDA_KERNEL_NODE_PARAMS kernelNodeParams(const Step &step);
  Status buildGraph();
  void releaseGraph();

  const Context *context_;
  std::vector<Step> steps_;
  bool sealed_ = false;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  size_t nodeUpdates_ = 0;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_LAUNCHSEQUENCE_H
