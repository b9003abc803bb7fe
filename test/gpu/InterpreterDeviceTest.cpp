//===- InterpreterDeviceTest.cpp - the CPU device under the runtime -------===//
//
// The interpreter device (tools/interpreter-device, docs/interpreter.md)
// behind tilec's runtime: what the runtime sees of it, a kernel compiled for
// it by the JIT and run through the ordinary load and launch, and its
// errors (a kernel's access out of bounds, copies past an allocation or into
// a freed one, a cubin) as runtime errors that say what happened. Run with
// `tilec-interpret InterpreterDeviceTest` (ctest does); skips on any other
// device and without one.
//
//===----------------------------------------------------------------------===//

#include "tilec/contract/InterpreterDevice.h"
#include "tilec/JIT/TilecJIT.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Launch.h"
#include "tilec/runtime/LaunchSequence.h"
#include "tilec/runtime/Module.h"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

using namespace tilec;

namespace {

class InterpreterDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto created = rt::Context::create();
    if (!created)
      GTEST_SKIP() << "no device: " << created.message();
    if (created->properties().name != kInterpreterDeviceName)
      GTEST_SKIP() << "the device is " << created->properties().name
                   << ", not the interpreter (run under tilec-interpret)";
    context.emplace(std::move(*created));
  }

  /// vector_add compiled by the JIT for the device's target and loaded.
  rt::Kernel loadVectorAdd(const Specialization &specialization = {}) {
    jit::TilecJIT compiler;
    auto config = Config::parse("BLOCK=128");
    EXPECT_TRUE(config.ok());
    auto artifact =
        compiler.compile("vector_add", *config,
                         context->properties().compileTarget(), specialization);
    EXPECT_TRUE(artifact.ok()) << artifact.message();
    auto module = rt::Module::loadCubin(*context, artifact->cubin.data(),
                                        artifact->cubin.size());
    EXPECT_TRUE(module.ok()) << module.message();
    auto kernel = rt::Kernel::create(*context, *module, artifact->metadata);
    EXPECT_TRUE(kernel.ok()) << kernel.message();
    return std::move(*kernel);
  }

  /// Launches vector_add over n elements with an output of `outElements`.
  Status addVectors(const rt::Kernel &kernel, int n, int outElements,
                    std::vector<float> &out) {
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
      x[i] = 0.5f * float(i);
      y[i] = 3.0f - float(i % 7);
    }
    auto xs = rt::DeviceBuffer::allocate(*context, n * sizeof(float));
    auto ys = rt::DeviceBuffer::allocate(*context, n * sizeof(float));
    auto outs =
        rt::DeviceBuffer::allocate(*context, outElements * sizeof(float));
    if (!xs || !ys || !outs)
      return Status::error("allocation failed");
    TILEC_RETURN_IF_ERROR(xs->copyFromHost(x));
    TILEC_RETURN_IF_ERROR(ys->copyFromHost(y));
    out.assign(outElements, 0.0f);
    std::memset(out.data(), 0xff, out.size() * sizeof(float)); // poisoned
    TILEC_RETURN_IF_ERROR(outs->copyFromHost(out));
    auto pack = kernel.makeArgPack();
    if (!pack)
      return pack.status();
    TILEC_RETURN_IF_ERROR(pack->setPointer(0, xs->ptr()));
    TILEC_RETURN_IF_ERROR(pack->setPointer(1, ys->ptr()));
    TILEC_RETURN_IF_ERROR(pack->setPointer(2, outs->ptr()));
    TILEC_RETURN_IF_ERROR(pack->setInt(3, n));
    rt::Dim3 grid{uint32_t((n + 127) / 128), 1, 1};
    TILEC_RETURN_IF_ERROR(rt::launch(kernel, grid, *pack));
    TILEC_RETURN_IF_ERROR(context->synchronize());
    TILEC_RETURN_IF_ERROR(outs->copyToHost(out));
    for (int i = 0; i < n; ++i)
      if (out[i] != x[i] + y[i])
        return Status::error("out[" + std::to_string(i) + "] is wrong");
    return Status::success();
  }

  std::optional<rt::Context> context;
};

TEST_F(InterpreterDeviceTest, TheRuntimeCompilesForTheInterpreter) {
  EXPECT_EQ(context->properties().compileTarget(), kInterpreterTarget);
  EXPECT_EQ(context->properties().smName(), "sm_90");
}

TEST_F(InterpreterDeviceTest, AKernelRunsThroughLoadAndLaunch) {
  rt::Kernel kernel = loadVectorAdd();
  EXPECT_EQ(kernel.metadata().target, kInterpreterTarget);
  std::vector<float> out;
  Status status = addVectors(kernel, 1000, 1000, out);
  EXPECT_TRUE(status.ok()) << status.message();
}

// A recorded sequence (a memset, then vector_add) replays step by step
// before it is instantiated and as one graph after, each replay reading the
// inputs as they are then.
TEST_F(InterpreterDeviceTest, ALaunchSequenceReplaysStepsAndAsAGraph) {
  auto kernel = std::make_shared<rt::Kernel>(loadVectorAdd());
  constexpr int n = 300;
  auto xs = rt::DeviceBuffer::allocate(*context, n * sizeof(float));
  auto ys = rt::DeviceBuffer::allocate(*context, n * sizeof(float));
  auto outs = rt::DeviceBuffer::allocate(*context, (n + 4) * sizeof(float));
  ASSERT_TRUE(xs && ys && outs);
  std::vector<float> x(n, 1.0f), y(n, 2.0f);
  ASSERT_TRUE(ys->copyFromHost(y).ok());
  auto pack = kernel->makeArgPack();
  ASSERT_TRUE(pack.ok());
  ASSERT_TRUE(pack->setPointer(0, xs->ptr()).ok());
  ASSERT_TRUE(pack->setPointer(1, ys->ptr()).ok());
  ASSERT_TRUE(pack->setPointer(2, outs->ptr()).ok());
  ASSERT_TRUE(pack->setInt(3, n).ok());
  rt::LaunchSequence sequence(*context);
  // The 4 floats past n: 0x7F7F7F7F each, set by the memset only.
  ASSERT_TRUE(sequence.addMemset(outs->address(), 0x7F, 1, outs->size()).ok());
  ASSERT_TRUE(sequence.addKernel(kernel, rt::Dim3{3, 1, 1}, *pack).ok());
  // The pack may change after it was added: the step keeps its copy.
  ASSERT_TRUE(pack->setInt(3, 1).ok());
  auto expectSums = [&](float sum) {
    std::vector<float> out(n + 4);
    ASSERT_TRUE(outs->copyToHost(out).ok());
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(out[i], sum) << i;
    uint32_t tail = 0;
    std::memcpy(&tail, &out[n], 4);
    EXPECT_EQ(tail, 0x7F7F7F7Fu);
  };
  for (bool graph : {false, true}) {
    if (graph) {
      ASSERT_TRUE(sequence.instantiate().ok());
      EXPECT_FALSE(sequence.addMemset(outs->address(), 0, 1, 4).ok());
    }
    EXPECT_EQ(sequence.asGraph(), graph);
    for (float value : {1.0f, 5.0f}) {
      x.assign(n, value);
      ASSERT_TRUE(xs->copyFromHost(x).ok());
      ASSERT_TRUE(sequence.replay(nullptr).ok());
      ASSERT_TRUE(context->synchronize().ok());
      expectSums(value + 2.0f);
    }
  }
}

// setPointers points a recorded step at other buffers, input and output in
// one update, for the replays after it (a graph's node updated in place);
// a pointer the kernel was specialized against is refused and nothing
// changes; a node whose pointers stay is not updated.
TEST_F(InterpreterDeviceTest,
       ALaunchSequenceReadsAndWritesBuffersSetBetweenReplays) {
  Specialization aligned;
  aligned.divisibility = {{"x_ptr", 16}, {"y_ptr", 16}, {"out_ptr", 16}};
  auto kernel = std::make_shared<rt::Kernel>(loadVectorAdd(aligned));
  constexpr int n = 200;
  auto buffer = [&](float value) {
    auto made = rt::DeviceBuffer::allocate(*context, n * sizeof(float));
    EXPECT_TRUE(made.ok()) << made.message();
    EXPECT_TRUE(made->copyFromHost(std::vector<float>(n, value)).ok());
    return std::move(*made);
  };
  rt::DeviceBuffer x1 = buffer(1.0f), x2 = buffer(10.0f), y = buffer(2.0f);
  rt::DeviceBuffer out1 = buffer(0.0f), out2 = buffer(0.0f);
  auto pack = kernel->makeArgPack();
  ASSERT_TRUE(pack.ok());
  ASSERT_TRUE(pack->bind(x1.ptr(), y.ptr(), out1.ptr(), n).ok());
  auto sumsIn = [&](const rt::DeviceBuffer &out) {
    std::vector<float> sums(n);
    EXPECT_TRUE(out.copyToHost(sums).ok());
    return sums;
  };
  for (bool graph : {false, true}) {
    rt::LaunchSequence sequence(*context);
    ASSERT_TRUE(sequence.addKernel(kernel, rt::Dim3{2, 1, 1}, *pack).ok());
    if (graph)
      ASSERT_TRUE(sequence.instantiate().ok());
    ASSERT_EQ(sequence.asGraph(), graph);
    std::vector<rt::LaunchSequence::Place> xs = sequence.placesOf(x1.address());
    std::vector<rt::LaunchSequence::Place> outs =
        sequence.placesOf(out1.address());
    ASSERT_EQ(xs.size(), 1u);
    ASSERT_EQ(outs.size(), 1u);
    ASSERT_TRUE(
        sequence.setPointers({{xs, x2.address()}, {outs, out2.address()}})
            .ok());
    ASSERT_TRUE(sequence.replay(nullptr).ok());
    ASSERT_TRUE(context->synchronize().ok());
    EXPECT_EQ(sumsIn(out2), std::vector<float>(n, 12.0f));
    // A misaligned input is refused with the output's update beside it:
    // the next replay still reads x2 into out2.
    ASSERT_TRUE(out2.copyFromHost(std::vector<float>(n, 0.0f)).ok());
    Status refused =
        sequence.setPointers({{outs, out1.address()}, {xs, x1.address() + 4}});
    EXPECT_NE(refused.message().find("is not a multiple of 16"),
              std::string::npos)
        << refused.message();
    ASSERT_TRUE(sequence.replay(nullptr).ok());
    ASSERT_TRUE(context->synchronize().ok());
    EXPECT_EQ(sumsIn(out2), std::vector<float>(n, 12.0f));
    EXPECT_EQ(sumsIn(out1), std::vector<float>(n, 0.0f));
    // An update that leaves a node's pointers as they are does not touch
    // the node; one of them changed does, and the replay follows it.
    size_t updates = sequence.nodeUpdates();
    ASSERT_TRUE(
        sequence.setPointers({{xs, x2.address()}, {outs, out2.address()}})
            .ok());
    EXPECT_EQ(sequence.nodeUpdates(), updates);
    ASSERT_TRUE(
        sequence.setPointers({{xs, x2.address()}, {outs, out1.address()}})
            .ok());
    EXPECT_EQ(sequence.nodeUpdates(), updates + (graph ? 1 : 0));
    ASSERT_TRUE(sequence.replay(nullptr).ok());
    ASSERT_TRUE(context->synchronize().ok());
    EXPECT_EQ(sumsIn(out1), std::vector<float>(n, 12.0f));
    ASSERT_TRUE(out1.copyFromHost(std::vector<float>(n, 0.0f)).ok());
  }
}

TEST_F(InterpreterDeviceTest, AnAccessOutOfBoundsFailsTheLaunchWithItsOp) {
  rt::Kernel kernel = loadVectorAdd();
  std::vector<float> out;
  // One element short: the last program's store runs past the output.
  Status status = addVectors(kernel, 1000, 999, out);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("CUDA_ERROR_LAUNCH_FAILED"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("vector_add.cpp"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("program (7, 0, 0)"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("is out of bounds"), std::string::npos)
      << status.message();
}

TEST_F(InterpreterDeviceTest, CopiesPastAnAllocationOrIntoAFreedOneFail) {
  const rt::Driver &driver = context->driver();
  const rt::DriverApi &api = driver.api();
  // A live allocation below the one freed, so that the freed one's address
  // falls after a live start.
  CUdeviceptr below = 0, block = 0;
  ASSERT_EQ(api.cuMemAlloc(&below, 16), CUDA_SUCCESS);
  ASSERT_EQ(api.cuMemAlloc(&block, 128), CUDA_SUCCESS);
  std::vector<uint8_t> bytes(129, 1);
  EXPECT_EQ(api.cuMemcpyHtoD(block, bytes.data(), 64), CUDA_SUCCESS);
  Status past =
      driver.check(api.cuMemcpyHtoD(block, bytes.data(), 129), "cuMemcpyHtoD");
  EXPECT_NE(past.message().find("bytes [0, 129) of an allocation of 128"),
            std::string::npos)
      << past.message();
  // Memory no copy wrote holds 0xCB bytes, never zeros a kernel could
  // mistake for initialized counts.
  EXPECT_EQ(api.cuMemcpyDtoH(bytes.data(), block + 60, 8), CUDA_SUCCESS);
  EXPECT_EQ(bytes[3], 0x01);
  EXPECT_EQ(bytes[4], 0xCB);
  // A count whose bytes overflow is refused, not written.
  EXPECT_EQ(api.cuMemsetD32(block, 0, SIZE_MAX / 2), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api.cuMemFree(block), CUDA_SUCCESS);
  Status freed =
      driver.check(api.cuMemcpyDtoH(bytes.data(), block, 4), "cuMemcpyDtoH");
  EXPECT_NE(freed.message().find("which was released"), std::string::npos)
      << freed.message();
  EXPECT_NE(api.cuMemFree(block), CUDA_SUCCESS);
  EXPECT_EQ(api.cuMemFree(below), CUDA_SUCCESS);
}

TEST_F(InterpreterDeviceTest, AnEmptyGridIsRefusedAsTheDriverDoes) {
  rt::Kernel kernel = loadVectorAdd();
  auto pack = kernel.makeArgPack();
  ASSERT_TRUE(pack.ok()) << pack.message();
  auto buffer = rt::DeviceBuffer::allocate(*context, 64);
  ASSERT_TRUE(buffer.ok()) << buffer.message();
  for (size_t i = 0; i < 3; ++i)
    ASSERT_TRUE(pack->setPointer(i, buffer->ptr()).ok());
  ASSERT_TRUE(pack->setInt(3, 0).ok());
  Status status = rt::launch(kernel, rt::Dim3{0, 1, 1}, *pack);
  EXPECT_NE(status.message().find("grid 0x1x1 is out of the driver's range"),
            std::string::npos)
      << status.message();
}

TEST_F(InterpreterDeviceTest, ACubinIsRefusedWithTheReason) {
  const unsigned char elf[] = {0x7F, 'E', 'L', 'F', 2, 1, 1, 0};
  auto module = rt::Module::loadCubin(*context, elf, sizeof(elf));
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.message().find("not ttir for the interpreter"),
            std::string::npos)
      << module.message();
}

} // namespace
