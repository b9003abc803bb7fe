//===- AtomicScanGpuTest.cpp - atomics and scans on the GPU ---------------===//
//
// Test kernels written with the KernelBuilder for tile.atomic_rmw,
// tile.atomic_cas and tile.scan, compiled to cubins (also without a GPU, so
// that ptxas checks the PTX) and run against results computed here. Where a
// layout gives an element to several threads, the tests check that the
// atomic happened once and that every copy got the old value: each thread's
// copy is made observable through a splat or a reduction within its own warp.
// Outputs are poisoned before each run.
//
//===----------------------------------------------------------------------===//

#include "GpuSuite.h"
#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelDefinition.h"
#include "tilec/Pipeline/Pipeline.h"
#include "tilec/contract/CompileMetadata.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Launch.h"
#include "tilec/runtime/Module.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>

using tilec::kernel::KernelBuilder;
using tilec::kernel::Tensor;
using tilec::tile::AtomicRMWKind;
using tilec::tile::ReduceKind;

namespace {

constexpr uint32_t kPoison = 0x7fc00bad;

struct ArgSpec {
  std::string name;
  /// "ptr<i32>", "ptr<f32>", "ptr<i64>" or "i32".
  std::string type;
};

/// Compiles a test kernel whose body `body` builds; failures carry the
/// diagnostics.
class TestKernel {
public:
  TestKernel(std::string name, std::vector<ArgSpec> args, unsigned numWarps,
             std::function<void(KernelBuilder &)> body)
      : name(std::move(name)), args(std::move(args)), numWarps(numWarps),
        body(std::move(body)) {}

  /// ttir -> cubin; empty on success, else the error.
  std::string compile() {
    mlir::DialectRegistry registry;
    tilec::registerPipelineDialects(registry);
    mlir::MLIRContext context(registry);
    tilec::kernel::KernelDefinition::loadDialects(context);
    std::string diagnostics;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return mlir::success();
    });
    mlir::OpBuilder builder(&context);
    mlir::Location loc =
        mlir::FileLineColLoc::get(&context, "AtomicScanGpuTest.cpp", 1, 1);
    mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    llvm::SmallVector<mlir::Type> types;
    for (const ArgSpec &arg : args) {
      mlir::Type scalar = llvm::StringRef(arg.type).contains("f32")
                              ? builder.getF32Type()
                          : llvm::StringRef(arg.type).contains("i64")
                              ? mlir::Type(builder.getI64Type())
                              : mlir::Type(builder.getI32Type());
      types.push_back(llvm::StringRef(arg.type).starts_with("ptr")
                          ? tilec::tile::PointerType::get(scalar)
                          : scalar);
    }
    auto func = mlir::func::FuncOp::create(builder, loc, name,
                                           builder.getFunctionType(types, {}));
    func->setAttr(tilec::tile::TileDialect::getKernelAttrName(),
                  builder.getUnitAttr());
    mlir::Block *entry = func.addEntryBlock();
    KernelBuilder kb(entry, loc);
    for (auto [index, arg] : llvm::enumerate(args)) {
      mlir::BlockArgument value = entry->getArgument(index);
      value.setLoc(
          mlir::NameLoc::get(mlir::StringAttr::get(&context, arg.name), loc));
      kb.bindArg(arg.name, value);
    }
    body(kb);
    if (kb.hasErrors())
      return "kernel builder errors:\n" + diagnostics;
    builder.setInsertionPointToEnd(entry);
    mlir::func::ReturnOp::create(builder, loc);
    tilec::CompileOptions options;
    options.numWarps = numWarps;
    auto compiled = tilec::compileKernel(*module, options);
    if (!compiled)
      return llvm::toString(compiled.takeError()) + "\n" + diagnostics;
    cubin = compiled->cubin;
    metadataJson = compiled->metadataJson();
    return "";
  }

  template <typename... Args>
  tilec::Status run(const tilec::rt::Context &context, uint32_t grid,
                    const Args &...launchArgs) {
    auto metadata = tilec::CompileMetadata::parse(metadataJson);
    if (!metadata.ok())
      return tilec::Status::error(metadata.message());
    auto loaded =
        tilec::rt::Module::loadCubin(context, cubin.data(), cubin.size());
    if (!loaded.ok())
      return tilec::Status::error(loaded.message());
    auto kernel = tilec::rt::Kernel::create(context, *loaded, *metadata);
    if (!kernel.ok())
      return tilec::Status::error(kernel.message());
    auto pack = kernel->makeArgPack();
    if (!pack.ok())
      return tilec::Status::error(pack.message());
    tilec::Status bound = pack->bind(launchArgs...);
    if (!bound.ok())
      return bound;
    tilec::Status launched =
        tilec::rt::launch(*kernel, tilec::rt::Dim3{grid, 1, 1}, *pack);
    if (!launched.ok())
      return launched;
    return context.synchronize();
  }

private:
  std::string name;
  std::vector<ArgSpec> args;
  unsigned numWarps;
  std::function<void(KernelBuilder &)> body;
  std::string cubin, metadataJson;
};

class AtomicScanGpuTest : public tilec::test::GpuSuite<> {
protected:
  // The compiles need no GPU: each test runs them, then skips
  // (SKIP_WITHOUT_GPU).
  void SetUp() override {}

  /// A device buffer holding `values`.
  template <typename T>
  tilec::rt::DeviceBuffer upload(const std::vector<T> &values) {
    auto buffer =
        tilec::rt::DeviceBuffer::allocate(*context, values.size() * sizeof(T));
    EXPECT_TRUE(buffer.ok()) << buffer.message();
    EXPECT_TRUE(buffer->copyFromHost(values).ok());
    return std::move(*buffer);
  }
  /// A poisoned device buffer of `count` 32- or 64-bit elements.
  tilec::rt::DeviceBuffer poisoned(size_t bytes) {
    auto buffer = tilec::rt::DeviceBuffer::allocate(*context, bytes);
    EXPECT_TRUE(buffer.ok()) << buffer.message();
    EXPECT_TRUE(buffer->memset32(kPoison).ok());
    return std::move(*buffer);
  }
  template <typename T>
  std::vector<T> download(const tilec::rt::DeviceBuffer &buffer, size_t count) {
    std::vector<T> values(count);
    EXPECT_TRUE(buffer.copyToHost(values).ok());
    return values;
  }
};

#define COMPILE_OR_FAIL(kernel)                                                \
  do {                                                                         \
    std::string error = (kernel).compile();                                    \
    ASSERT_TRUE(error.empty()) << error;                                       \
  } while (false)

// After the compiles: they need no GPU.
#define SKIP_WITHOUT_GPU()                                                     \
  do {                                                                         \
    if (!context)                                                              \
      GTEST_SKIP() << skipReason;                                              \
  } while (false)

#define RUN_OR_FAIL(call)                                                      \
  do {                                                                         \
    tilec::Status launchStatus = (call);                                       \
    ASSERT_TRUE(launchStatus.ok()) << launchStatus.message();                  \
  } while (false)

//===----------------------------------------------------------------------===//
// atomic_rmw
//===----------------------------------------------------------------------===//

/// bins[keys[i]] += 1 (or 1.0f) for i < n, 1024 keys per program.
TestKernel histogramKernel(bool isFloat) {
  return TestKernel(isFloat ? "histogram_f32" : "histogram_i32",
                    {{"bins", isFloat ? "ptr<f32>" : "ptr<i32>"},
                     {"keys", "ptr<i32>"},
                     {"n", "i32"}},
                    4, [isFloat](KernelBuilder &kb) {
                      Tensor offs = kb.programId(0) * 1024 + kb.arange(0, 1024);
                      Tensor mask = offs < kb.arg("n");
                      Tensor keys = kb.load(kb.arg("keys") + offs, mask);
                      Tensor one = isFloat ? kb.constant(1.0, kb.f32Type())
                                           : kb.constant(1, kb.i32Type());
                      kb.atomicRmw(AtomicRMWKind::Add, kb.arg("bins") + keys,
                                   one, mask,
                                   tilec::tile::MemSemantic::Relaxed);
                    });
}

TEST_F(AtomicScanGpuTest, HistogramCountsEveryCollision) {
  TestKernel i32Kernel = histogramKernel(false);
  TestKernel f32Kernel = histogramKernel(true);
  COMPILE_OR_FAIL(i32Kernel);
  COMPILE_OR_FAIL(f32Kernel);
  SKIP_WITHOUT_GPU();
  const int n = 100003, numBins = 37;
  std::mt19937 random(7);
  std::vector<int32_t> keys(n);
  std::vector<int64_t> expected(numBins, 0);
  for (int32_t &key : keys) {
    // Skewed: bin 0 takes about half of all keys.
    key = random() % 2 ? 0 : static_cast<int32_t>(random() % numBins);
    ++expected[key];
  }
  auto keysBuffer = upload(keys);
  auto bins = upload(std::vector<int32_t>(numBins, 0));
  RUN_OR_FAIL(i32Kernel.run(*context, (n + 1023) / 1024, bins, keysBuffer, n));
  std::vector<int32_t> counts = download<int32_t>(bins, numBins);
  for (int bin = 0; bin < numBins; ++bin)
    EXPECT_EQ(counts[bin], expected[bin]) << "bin " << bin;

  auto floatBins = upload(std::vector<float>(numBins, 0.0f));
  RUN_OR_FAIL(
      f32Kernel.run(*context, (n + 1023) / 1024, floatBins, keysBuffer, n));
  std::vector<float> floatCounts = download<float>(floatBins, numBins);
  // Integers below 2^24 are exact in f32, whatever the order of the adds.
  for (int bin = 0; bin < numBins; ++bin)
    EXPECT_EQ(floatCounts[bin], static_cast<float>(expected[bin]))
        << "bin " << bin;
}

/// counters[i] += 1 for i < size, a tensor of `size` elements on `numWarps`
/// warps (fewer elements than threads: copies). olds[pid][i] is the old value
/// the owner stored; seen[pid][t] the sum over i of the old values thread t's
/// copies hold (a reduction within its warp, splat to one value per thread).
TestKernel replicatedKernel(int size, unsigned numWarps) {
  int threads = 32 * numWarps;
  return TestKernel(
      "replicated_add",
      {{"counters", "ptr<i32>"}, {"olds", "ptr<i32>"}, {"seen", "ptr<i32>"}},
      numWarps, [=](KernelBuilder &kb) {
        Tensor pid = kb.programId(0);
        Tensor index = kb.arange(0, size);
        Tensor old =
            kb.atomicRmw(AtomicRMWKind::Add, kb.arg("counters") + index, 1);
        kb.store(kb.arg("olds") + (pid * size + index), old);
        Tensor sum = kb.full({threads}, kb.sum(old, 0), kb.i32Type());
        kb.store(kb.arg("seen") + (pid * threads + kb.arange(0, threads)), sum);
      });
}

void checkReplicated(const std::vector<int32_t> &counters,
                     const std::vector<int32_t> &olds,
                     const std::vector<int32_t> &seen, int size, int threads,
                     int programs) {
  for (int i = 0; i < size; ++i) {
    EXPECT_EQ(counters[i], programs) << "counter " << i;
    std::vector<int32_t> values;
    for (int p = 0; p < programs; ++p)
      values.push_back(olds[p * size + i]);
    std::sort(values.begin(), values.end());
    for (int p = 0; p < programs; ++p)
      ASSERT_EQ(values[p], p)
          << "old values of counter " << i << " are not 0.." << programs - 1;
  }
  for (int p = 0; p < programs; ++p) {
    int64_t sum = 0;
    for (int i = 0; i < size; ++i)
      sum += olds[p * size + i];
    for (int t = 0; t < threads; ++t)
      ASSERT_EQ(seen[p * threads + t], sum)
          << "program " << p << ", thread " << t
          << " holds other old values than the owners";
  }
}

TEST_F(AtomicScanGpuTest, ReplicatedTensorAtomicRunsOncePerElement) {
  // 32 elements on 4 warps: the copies are in other warps (shared memory);
  // 16 elements on 1 warp: in other lanes (shuffles); 64 on 4 warps: both.
  const std::pair<int, unsigned> shapes[] = {{32, 4}, {16, 1}, {64, 4}};
  std::vector<TestKernel> kernels;
  for (auto [size, numWarps] : shapes) {
    kernels.push_back(replicatedKernel(size, numWarps));
    COMPILE_OR_FAIL(kernels.back());
  }
  SKIP_WITHOUT_GPU();
  for (auto [index, shape] : llvm::enumerate(shapes)) {
    auto [size, numWarps] = shape;
    SCOPED_TRACE(testing::Message()
                 << size << " elements, " << numWarps << " warps");
    const int programs = 300, threads = 32 * numWarps;
    auto counters = upload(std::vector<int32_t>(size, 0));
    auto olds = poisoned(programs * size * 4);
    auto seen = poisoned(programs * threads * 4);
    RUN_OR_FAIL(kernels[index].run(*context, programs, counters, olds, seen));
    checkReplicated(download<int32_t>(counters, size),
                    download<int32_t>(olds, programs * size),
                    download<int32_t>(seen, programs * threads), size, threads,
                    programs);
  }
}

/// counter += 1 once per program; seen[pid][t] is the old value thread t
/// holds (a splat).
TestKernel scalarKernel(unsigned numWarps) {
  int threads = 32 * numWarps;
  return TestKernel(
      "scalar_add", {{"counter", "ptr<i32>"}, {"seen", "ptr<i32>"}}, numWarps,
      [=](KernelBuilder &kb) {
        Tensor old = kb.atomicRmw(AtomicRMWKind::Add, kb.arg("counter"), 1);
        Tensor each = kb.full({threads}, old, kb.i32Type());
        kb.store(kb.arg("seen") +
                     (kb.programId(0) * threads + kb.arange(0, threads)),
                 each);
      });
}

TEST_F(AtomicScanGpuTest, ScalarAtomicRunsOncePerProgram) {
  // 4 warps: the old value reaches the other warps through shared memory;
  // 1 warp: by a shuffle.
  const unsigned warpCounts[] = {4, 1};
  std::vector<TestKernel> kernels;
  for (unsigned numWarps : warpCounts) {
    kernels.push_back(scalarKernel(numWarps));
    COMPILE_OR_FAIL(kernels.back());
  }
  SKIP_WITHOUT_GPU();
  for (auto [index, numWarps] : llvm::enumerate(warpCounts)) {
    SCOPED_TRACE(testing::Message() << numWarps << " warps");
    const int programs = 1000, threads = 32 * numWarps;
    auto counter = upload(std::vector<int32_t>{0});
    auto seen = poisoned(programs * threads * 4);
    RUN_OR_FAIL(kernels[index].run(*context, programs, counter, seen));
    EXPECT_EQ(download<int32_t>(counter, 1)[0], programs);
    std::vector<int32_t> values = download<int32_t>(seen, programs * threads);
    std::set<int32_t> distinct;
    for (int p = 0; p < programs; ++p) {
      for (int t = 1; t < threads; ++t)
        ASSERT_EQ(values[p * threads + t], values[p * threads])
            << "program " << p << ", thread " << t;
      distinct.insert(values[p * threads]);
    }
    EXPECT_EQ(distinct.size(), static_cast<size_t>(programs));
    EXPECT_EQ(*distinct.begin(), 0);
    EXPECT_EQ(*distinct.rbegin(), programs - 1);
  }
}

TEST_F(AtomicScanGpuTest, MaxMinAndBitwiseIntoOneAddress) {
  // out[k] = op over all vals, every lane aiming at the same address.
  const AtomicRMWKind kinds[] = {AtomicRMWKind::Max,  AtomicRMWKind::Min,
                                 AtomicRMWKind::UMax, AtomicRMWKind::UMin,
                                 AtomicRMWKind::And,  AtomicRMWKind::Or,
                                 AtomicRMWKind::Xor};
  TestKernel kernel(
      "reduce_into_one",
      {{"out", "ptr<i32>"}, {"vals", "ptr<i32>"}, {"n", "i32"}}, 4,
      [&](KernelBuilder &kb) {
        Tensor offs = kb.programId(0) * 256 + kb.arange(0, 256);
        Tensor mask = offs < kb.arg("n");
        Tensor vals = kb.load(kb.arg("vals") + offs, mask);
        for (auto [k, kind] : llvm::enumerate(kinds))
          kb.atomicRmw(
              kind, kb.broadcastTo(kb.arg("out") + static_cast<int>(k), {256}),
              vals, mask);
      });
  COMPILE_OR_FAIL(kernel);
  SKIP_WITHOUT_GPU();
  const int n = 5000;
  std::mt19937 random(3);
  std::vector<int32_t> vals(n);
  for (int32_t &v : vals)
    v = static_cast<int32_t>(random());
  // Masked-off lanes must not take part: the tail of the last program reads
  // past n only through the mask.
  std::vector<int32_t> initial = {INT32_MIN, INT32_MAX, 0, -1, -1, 0, 0};
  std::vector<int32_t> expected = initial;
  for (int32_t v : vals) {
    auto u = static_cast<uint32_t>(v);
    expected[0] = std::max(expected[0], v);
    expected[1] = std::min(expected[1], v);
    expected[2] =
        static_cast<int32_t>(std::max(static_cast<uint32_t>(expected[2]), u));
    expected[3] =
        static_cast<int32_t>(std::min(static_cast<uint32_t>(expected[3]), u));
    expected[4] &= v;
    expected[5] |= v;
    expected[6] ^= v;
  }
  auto out = upload(initial);
  auto valsBuffer = upload(vals);
  RUN_OR_FAIL(kernel.run(*context, (n + 255) / 256, out, valsBuffer, n));
  std::vector<int32_t> result = download<int32_t>(out, initial.size());
  for (size_t k = 0; k < initial.size(); ++k)
    EXPECT_EQ(result[k], expected[k])
        << tilec::tile::stringifyAtomicRMWKind(kinds[k]).str();
}

TEST_F(AtomicScanGpuTest, ExchangeAndWideAddKeepEveryValue) {
  // Element i swaps float(i) into slot i % 8 and adds 2^33 + 1 to i64 counter
  // i % 4: the old values and the final slots hold every value exactly once.
  TestKernel kernel(
      "xchg_and_add64",
      {{"slots", "ptr<f32>"},
       {"olds", "ptr<f32>"},
       {"counters", "ptr<i64>"},
       {"n", "i32"}},
      4, [](KernelBuilder &kb) {
        Tensor offs = kb.programId(0) * 512 + kb.arange(0, 512);
        Tensor mask = offs < kb.arg("n");
        Tensor old =
            kb.atomicRmw(AtomicRMWKind::Xchg, kb.arg("slots") + offs % 8,
                         kb.cast(offs, kb.f32Type()), mask);
        kb.store(kb.arg("olds") + offs, old, mask);
        kb.atomicRmw(AtomicRMWKind::Add, kb.arg("counters") + offs % 4,
                     kb.constant((int64_t(1) << 33) + 1, kb.i64Type()), mask);
      });
  COMPILE_OR_FAIL(kernel);
  SKIP_WITHOUT_GPU();
  const int n = 4000;
  auto slots = upload(std::vector<float>(8, -1.0f));
  auto olds = poisoned(n * 4);
  auto counters = upload(std::vector<int64_t>(4, 0));
  RUN_OR_FAIL(kernel.run(*context, (n + 511) / 512, slots, olds, counters, n));
  std::vector<float> finalSlots = download<float>(slots, 8);
  std::vector<float> oldValues = download<float>(olds, n);
  for (int slot = 0; slot < 8; ++slot) {
    std::multiset<float> before = {-1.0f}, after = {finalSlots[slot]};
    for (int i = slot; i < n; i += 8) {
      before.insert(static_cast<float>(i));
      after.insert(oldValues[i]);
    }
    EXPECT_EQ(before, after) << "slot " << slot;
  }
  std::vector<int64_t> sums = download<int64_t>(counters, 4);
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(sums[k], (n / 4) * ((int64_t(1) << 33) + 1)) << "counter " << k;
}

//===----------------------------------------------------------------------===//
// atomic_cas
//===----------------------------------------------------------------------===//

TEST_F(AtomicScanGpuTest, CompareAndSwapBuildsASet) {
  // Open addressing with linear probing: keys[i] goes to the first slot from
  // keys[i] % capacity that is empty (claimed by the CAS) or holds it
  // already (a duplicate, seen through the old value). status[i] is 1 for
  // the one insertion of a key, 2 for its duplicates, 0 if the probes ran
  // out (never: there are capacity probes).
  const int capacity = 2048, block = 256;
  TestKernel kernel(
      "hash_set_insert",
      {{"table", "ptr<i32>"},
       {"keys", "ptr<i32>"},
       {"status", "ptr<i32>"},
       {"n", "i32"}},
      4, [&](KernelBuilder &kb) {
        Tensor offs = kb.programId(0) * block + kb.arange(0, block);
        Tensor active = offs < kb.arg("n");
        Tensor keys = kb.load(kb.arg("keys") + offs, active);
        Tensor home = keys & (capacity - 1);
        Tensor none = kb.zeros({block}, kb.i32Type());
        tilec::kernel::Tensors result = kb.forRange(
            0, capacity, 1, {none},
            [&](Tensor probe, llvm::ArrayRef<Tensor> c) {
              Tensor status = c[0];
              Tensor pending = active & (status == 0);
              Tensor slot = (home + probe) & (capacity - 1);
              Tensor old =
                  kb.atomicCas(kb.arg("table") + slot, -1, keys, pending);
              Tensor inserted = pending & (old == -1);
              Tensor duplicate = pending & (old == keys);
              return tilec::kernel::Tensors{
                  kb.where(inserted, 1, kb.where(duplicate, 2, status))};
            });
        kb.store(kb.arg("status") + offs, result[0], active);
      });
  COMPILE_OR_FAIL(kernel);
  SKIP_WITHOUT_GPU();
  std::mt19937 random(11);
  std::vector<int32_t> distinctKeys;
  std::set<int32_t> used;
  while (distinctKeys.size() < 1400) {
    auto key = static_cast<int32_t>(random() % (1 << 20));
    if (used.insert(key).second)
      distinctKeys.push_back(key);
  }
  const int n = 3001;
  std::vector<int32_t> keys(n);
  for (int32_t &key : keys)
    key = distinctKeys[random() % distinctKeys.size()];
  auto table = upload(std::vector<int32_t>(capacity, -1));
  auto keysBuffer = upload(keys);
  auto statusBuffer = poisoned(n * 4);
  RUN_OR_FAIL(kernel.run(*context, (n + block - 1) / block, table, keysBuffer,
                         statusBuffer, n));
  std::vector<int32_t> slots = download<int32_t>(table, capacity);
  std::vector<int32_t> statuses = download<int32_t>(statusBuffer, n);
  std::map<int32_t, int> inTable, insertions;
  for (int32_t slot : slots)
    if (slot != -1)
      ++inTable[slot];
  std::set<int32_t> present(keys.begin(), keys.end());
  EXPECT_EQ(inTable.size(), present.size());
  for (auto [key, count] : inTable) {
    EXPECT_EQ(count, 1) << "key " << key << " is in the table " << count
                        << " times";
    EXPECT_TRUE(present.count(key)) << "key " << key << " was never inserted";
  }
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(statuses[i] == 1 || statuses[i] == 2)
        << "key " << i << " has status " << statuses[i];
    if (statuses[i] == 1)
      ++insertions[keys[i]];
  }
  for (int32_t key : present)
    EXPECT_EQ(insertions[key], 1) << "key " << key;
}

//===----------------------------------------------------------------------===//
// scan
//===----------------------------------------------------------------------===//

struct ScanCase {
  std::vector<int64_t> shape;
  int axis;
  ReduceKind kind;
  bool reverse;
  bool isFloat;
  unsigned numWarps = 4;
};

std::string describe(const ScanCase &c) {
  std::string text;
  for (int64_t size : c.shape)
    text += std::to_string(size) + "x";
  text += c.isFloat ? "f32" : "i32";
  text += " axis " + std::to_string(c.axis) + " " +
          tilec::tile::stringifyReduceKind(c.kind).str() +
          (c.reverse ? " reverse" : "") + " " + std::to_string(c.numWarps) +
          " warps";
  return text;
}

/// y = scan(x) of one row-major block.
TestKernel scanKernel(const ScanCase &c) {
  return TestKernel(
      "scan",
      {{"x", c.isFloat ? "ptr<f32>" : "ptr<i32>"},
       {"y", c.isFloat ? "ptr<f32>" : "ptr<i32>"}},
      c.numWarps, [c](KernelBuilder &kb) {
        Tensor offs;
        if (c.shape.size() == 1) {
          offs = kb.arange(0, c.shape[0]);
        } else {
          Tensor rows = kb.expandDims(kb.arange(0, c.shape[0]), 1);
          Tensor cols = kb.expandDims(kb.arange(0, c.shape[1]), 0);
          offs = rows * static_cast<int>(c.shape[1]) + cols;
        }
        Tensor x = kb.load(kb.arg("x") + offs);
        kb.store(kb.arg("y") + offs, kb.scan(x, c.axis, c.kind, c.reverse));
      });
}

double combine(ReduceKind kind, double a, double b) {
  auto bits = [](double v) { return static_cast<uint32_t>(int32_t(v)); };
  switch (kind) {
  case ReduceKind::Add:
    return a + b;
  case ReduceKind::Max:
    return std::max(a, b);
  case ReduceKind::Min:
    return std::min(a, b);
  case ReduceKind::UMax:
    return int32_t(std::max(bits(a), bits(b)));
  case ReduceKind::UMin:
    return int32_t(std::min(bits(a), bits(b)));
  case ReduceKind::And:
    return int32_t(bits(a) & bits(b));
  case ReduceKind::Or:
    return int32_t(bits(a) | bits(b));
  case ReduceKind::Xor:
    return int32_t(bits(a) ^ bits(b));
  case ReduceKind::Mul:
    return a * b;
  }
  return 0;
}

class ScanGpuTest : public AtomicScanGpuTest,
                    public testing::WithParamInterface<ScanCase> {};

TEST_P(ScanGpuTest, MatchesSequentialScan) {
  const ScanCase &c = GetParam();
  SCOPED_TRACE(describe(c));
  TestKernel kernel = scanKernel(c);
  COMPILE_OR_FAIL(kernel);
  SKIP_WITHOUT_GPU();
  int64_t rows = c.shape.size() == 1 ? 1 : c.shape[0];
  int64_t cols = c.shape.back();
  int64_t count = rows * cols;
  // Floats are multiples of 1/4 below 2^10 in magnitude: every partial sum
  // is exact in f32, so any association order gives the same bits.
  std::mt19937 random(5);
  std::vector<double> x(count);
  for (double &v : x)
    v = c.isFloat
            ? (static_cast<int>(random() % 33) - 16) / 4.0
            : static_cast<double>(static_cast<int32_t>(random() % 2001) - 1000);
  std::vector<double> expected(x);
  // Along the axis: `outer` lines of `length` elements `stride` apart.
  bool alongRows = c.shape.size() == 2 && c.axis == 0;
  int64_t length = alongRows ? rows : cols;
  int64_t lines = count / length, stride = alongRows ? cols : 1;
  for (int64_t line = 0; line < lines; ++line) {
    int64_t first = alongRows ? line : line * cols;
    for (int64_t step = 1; step < length; ++step) {
      int64_t i = c.reverse ? length - 1 - step : step;
      int64_t prev = c.reverse ? i + 1 : i - 1;
      expected[first + i * stride] =
          combine(c.kind, expected[first + prev * stride],
                  expected[first + i * stride]);
    }
  }
  auto y = poisoned(count * 4);
  if (c.isFloat) {
    std::vector<float> input(x.begin(), x.end());
    auto xBuffer = upload(input);
    RUN_OR_FAIL(kernel.run(*context, 1, xBuffer, y));
    std::vector<float> result = download<float>(y, count);
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(result[i], static_cast<float>(expected[i])) << "element " << i;
  } else {
    std::vector<int32_t> input;
    for (double v : x)
      input.push_back(static_cast<int32_t>(v));
    auto xBuffer = upload(input);
    RUN_OR_FAIL(kernel.run(*context, 1, xBuffer, y));
    std::vector<int32_t> result = download<int32_t>(y, count);
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(result[i], static_cast<int32_t>(expected[i]))
          << "element " << i;
  }
}

std::vector<ScanCase> scanCases() {
  std::vector<ScanCase> cases;
  for (int64_t size : {16, 32, 64, 128, 256, 1024, 4096}) {
    cases.push_back({{size}, 0, ReduceKind::Add, false, false});
    cases.push_back({{size}, 0, ReduceKind::Add, true, false});
  }
  for (int64_t size : {32, 1024, 4096}) {
    cases.push_back({{size}, 0, ReduceKind::Add, false, true});
    cases.push_back({{size}, 0, ReduceKind::Max, false, true});
    cases.push_back({{size}, 0, ReduceKind::Max, true, false});
  }
  for (ReduceKind kind : {ReduceKind::Min, ReduceKind::UMax, ReduceKind::UMin,
                          ReduceKind::And, ReduceKind::Or, ReduceKind::Xor})
    cases.push_back({{512}, 0, kind, false, false});
  cases.push_back({{256}, 0, ReduceKind::Add, false, false, 1});
  cases.push_back({{2048}, 0, ReduceKind::Add, true, true, 8});
  for (auto shape :
       {std::vector<int64_t>{1024, 16}, {16, 128}, {4, 8}, {64, 64}, {2, 256}})
    for (int axis : {0, 1}) {
      cases.push_back({shape, axis, ReduceKind::Add, false, false});
      cases.push_back({shape, axis, ReduceKind::Add, true, true});
    }
  cases.push_back({{16, 128}, 1, ReduceKind::Max, false, true});
  return cases;
}

std::string scanCaseName(const testing::TestParamInfo<ScanCase> &info) {
  std::string name = describe(info.param);
  for (char &ch : name)
    if (!isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scans, ScanGpuTest, testing::ValuesIn(scanCases()),
                         scanCaseName);

//===----------------------------------------------------------------------===//
// histogram and bin_rank
//===----------------------------------------------------------------------===//

struct BinnedCase {
  int64_t size, bins;
  /// Values are drawn from [-2, spread): a few below 0, many equal when
  /// spread is small, some past the last bin when spread > bins.
  int64_t spread;
  bool masked;
  unsigned numWarps = 4;
};

std::string describe(const BinnedCase &c) {
  return std::to_string(c.size) + " values in " + std::to_string(c.bins) +
         " bins spread " + std::to_string(c.spread) +
         (c.masked ? " masked " : " ") + std::to_string(c.numWarps) + " warps";
}

/// counts = histogram(x, mask), rank = binRank(x, mask) of one block; the
/// mask is m != 0.
TestKernel binnedKernel(const BinnedCase &c) {
  return TestKernel("binned",
                    {{"x", "ptr<i32>"},
                     {"m", "ptr<i32>"},
                     {"counts", "ptr<i32>"},
                     {"rank", "ptr<i32>"}},
                    c.numWarps, [c](KernelBuilder &kb) {
                      Tensor offs = kb.arange(0, c.size);
                      Tensor x = kb.load(kb.arg("x") + offs);
                      Tensor mask;
                      if (c.masked)
                        mask = kb.load(kb.arg("m") + offs) != 0;
                      kb.store(kb.arg("counts") + kb.arange(0, c.bins),
                               kb.histogram(x, c.bins, mask));
                      kb.store(kb.arg("rank") + offs,
                               kb.binRank(x, c.bins, mask));
                    });
}

class BinnedGpuTest : public AtomicScanGpuTest,
                      public testing::WithParamInterface<BinnedCase> {};

TEST_P(BinnedGpuTest, MatchesSequentialCounts) {
  const BinnedCase &c = GetParam();
  SCOPED_TRACE(describe(c));
  TestKernel kernel = binnedKernel(c);
  COMPILE_OR_FAIL(kernel);
  SKIP_WITHOUT_GPU();
  std::mt19937 random(11);
  std::vector<int32_t> x(c.size), m(c.size);
  for (int64_t i = 0; i < c.size; ++i) {
    x[i] = static_cast<int32_t>(random() % (c.spread + 2)) - 2;
    m[i] = c.masked ? static_cast<int32_t>(random() % 4 != 0) : 1;
  }
  std::vector<int32_t> counts(c.bins, 0), rank(c.size, 0);
  for (int64_t i = 0; i < c.size; ++i)
    if (m[i] && x[i] >= 0 && x[i] < c.bins)
      rank[i] = counts[x[i]]++;
  auto xBuffer = upload(x);
  auto mBuffer = upload(m);
  auto countsBuffer = poisoned(4 * c.bins);
  auto rankBuffer = poisoned(4 * c.size);
  RUN_OR_FAIL(
      kernel.run(*context, 1, xBuffer, mBuffer, countsBuffer, rankBuffer));
  std::vector<int32_t> gotCounts = download<int32_t>(countsBuffer, c.bins);
  std::vector<int32_t> gotRank = download<int32_t>(rankBuffer, c.size);
  for (int64_t b = 0; b < c.bins; ++b)
    ASSERT_EQ(gotCounts[b], counts[b]) << "bin " << b;
  for (int64_t i = 0; i < c.size; ++i)
    ASSERT_EQ(gotRank[i], rank[i])
        << "element " << i << " (value " << x[i] << ", mask " << m[i] << ")";
}

std::vector<BinnedCase> binnedCases() {
  std::vector<BinnedCase> cases;
  // 16 and 64 values on 4 warps: lanes and warps holding copies; 256 and
  // 1024: several rounds a thread.
  for (int64_t size : {16, 64, 128, 256, 1024})
    for (bool masked : {false, true}) {
      cases.push_back({size, 128, 140, masked});
      cases.push_back({size, 128, 3, masked});
    }
  cases.push_back({512, 4, 6, true, 1});
  cases.push_back({2048, 1024, 1100, true, 8});
  cases.push_back({4096, 64, 64, false, 8});
  cases.push_back({32, 256, 300, true, 2});
  return cases;
}

std::string binnedCaseName(const testing::TestParamInfo<BinnedCase> &info) {
  std::string name = describe(info.param);
  for (char &ch : name)
    if (!isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Binned, BinnedGpuTest,
                         testing::ValuesIn(binnedCases()), binnedCaseName);

} // namespace
