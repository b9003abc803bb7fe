//===- GpuSuite.h - What the GPU test suites share --------------*- C++ -*-===//
//
// One CUDA context per suite, created before its first test; without a GPU
// (CI) every test of the suite skips with the driver's reason. Tests that
// write caches get a fresh folder each (TemporaryFolder).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TEST_GPU_GPUSUITE_H
#define TILEC_TEST_GPU_GPUSUITE_H

#include "tilec/runtime/Context.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace tilec::test {

/// A suite's fixture: `context` for its tests, or a skip. `Base` is
/// testing::Test or a testing::TestWithParam<...>. A derived SetUp calls
/// GpuSuite::SetUp first and returns when IsSkipped().
template <typename Base = testing::Test> class GpuSuite : public Base {
protected:
  static void SetUpTestSuite() {
    auto created = rt::Context::create();
    if (created)
      context = new rt::Context(std::move(*created));
    else
      skipReason = created.message();
  }
  static void TearDownTestSuite() {
    delete context;
    context = nullptr;
  }
  void SetUp() override {
    if (!context)
      GTEST_SKIP() << skipReason;
  }

  inline static rt::Context *context = nullptr;
  inline static std::string skipReason;
};

/// A fresh folder, /tmp/<prefix>-XXXXXX, removed with what is in it when
/// this is destroyed; path() is empty (and the test has failed) when none
/// could be made: a SetUp asserts it is not.
class TemporaryFolder {
public:
  explicit TemporaryFolder(const std::string &prefix) {
    std::string pattern = "/tmp/" + prefix + "-XXXXXX";
    if (::mkdtemp(pattern.data()))
      path_ = pattern;
    else
      ADD_FAILURE() << "mkdtemp " << pattern << " failed";
  }
  ~TemporaryFolder() {
    if (!path_.empty())
      (void)std::system(("rm -rf '" + path_ + "'").c_str());
  }
  TemporaryFolder(const TemporaryFolder &) = delete;
  TemporaryFolder &operator=(const TemporaryFolder &) = delete;

  const std::string &path() const { return path_; }

private:
  std::string path_;
};

} // namespace tilec::test

#endif // TILEC_TEST_GPU_GPUSUITE_H
