//===- PlanBench.cpp - tilec bench plans ----------------------------------===//
//
// The host's share of a launch of a new size, with no GPU: a stream of point
// clouds launches every map kernel with a new voxel count each time, and
// each launch first needs its autotune key, specialization, integer
// arguments and grid. For every registered kernel, in one process, over the
// same calls of new sizes: the description's own functions (evaluateCall,
// evaluateGrid) against a CallPlan of the call's shape (what SparseEngine
// uses), each result compared with the other's.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/contract/CallPlan.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <chrono>

namespace tilec::tool {

namespace {

// The sizes a stream changes: the counts (a cloud's voxels, a matrix's
// rows). The shapes (kernel sizes, channels, shifts) stay.
bool isCount(const std::string &name) {
  return name == "N" || name == "M" || name == "T" || name == "n_rows" ||
         name == "n_elements";
}

struct Row {
  std::string kernel;
  double describedUs = 0, plannedUs = 0;
  int calls = 0, differ = 0;
};

// What a launch needs of a call, either way, for comparing them.
struct Launch {
  std::string key;
  std::vector<std::pair<std::string, int64_t>> integers;
  uint32_t grid[3] = {0, 0, 0};
  bool ok = false;
  bool operator==(const Launch &other) const {
    return ok == other.ok && key == other.key && integers == other.integers &&
           grid[0] == other.grid[0] && grid[1] == other.grid[1] &&
           grid[2] == other.grid[2];
  }
};

double microsecondsSince(std::chrono::steady_clock::time_point start,
                         size_t calls) {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - start)
             .count() /
         static_cast<double>(calls);
}

Row benchKernel(const KernelDescription &description, int sizes) {
  Row row{description.getName()};
  Call shape;
  shape.sizes = description.getDefaultSizes();
  Result<Config> config =
      description.getConfigs().empty()
          ? Result<Config>(Status::error("no config"))
          : description.configForCall(description.getConfigs().front(), shape);
  if (!config)
    return row;
  std::vector<Call> calls(sizes, shape);
  for (int i = 0; i < sizes; ++i)
    for (auto &[name, value] : calls[i].sizes)
      if (isCount(name))
        value += i;
  std::vector<Launch> described(sizes), planned(sizes);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < sizes; ++i) {
    auto evaluation = description.evaluateCall(calls[i]);
    if (!evaluation)
      continue;
    auto grid = description.evaluateGrid(*config, *evaluation);
    Launch &launch = described[i];
    launch.key =
        evaluation->autotuneKey + "|" + evaluation->specialization.str();
    launch.integers = std::move(evaluation->integerArguments);
    launch.ok = grid.ok();
    if (grid.ok())
      launch.grid[0] = grid->x, launch.grid[1] = grid->y,
      launch.grid[2] = grid->z;
  }
  row.describedUs = microsecondsSince(start, sizes);
  start = std::chrono::steady_clock::now();
  CallPlan plan(description, shape);
  CallPlan::Grid planGrid = plan.grid(*config);
  for (int i = 0; i < sizes; ++i) {
    auto evaluation = plan.evaluate(calls[i]);
    if (!evaluation)
      continue;
    auto grid = planGrid.evaluate(*evaluation);
    Launch &launch = planned[i];
    launch.key =
        evaluation->autotuneKey + "|" + evaluation->specialization.str();
    launch.integers = std::move(evaluation->integerArguments);
    launch.ok = grid.has_value();
    if (grid)
      launch.grid[0] = grid->x, launch.grid[1] = grid->y,
      launch.grid[2] = grid->z;
  }
  row.plannedUs = microsecondsSince(start, sizes);
  row.calls = sizes;
  for (int i = 0; i < sizes; ++i)
    row.differ += !(described[i] == planned[i]);
  return row;
}

} // namespace

int runPlanBench(const std::string &outDir, bool quick) {
  int sizes = quick ? 2000 : 20000;
  std::vector<Row> rows;
  for (const kernel::KernelDefinition *kernel : kernel::listKernels())
    rows.push_back(benchKernel(kernel->getDescription(), sizes));
  llvm::outs() << "plans of " << sizes
               << " new sizes per kernel: the description's evaluateCall + "
                  "evaluateGrid against a CallPlan of the call's shape\n";
  llvm::outs() << llvm::format("%-22s %14s %9s %8s  %s\n", "kernel",
                               "described us", "plan us", "speedup", "check");
  nlohmann::json json = nlohmann::json::array();
  double describedTotal = 0, plannedTotal = 0;
  int differ = 0;
  for (const Row &row : rows) {
    if (!row.calls)
      continue;
    describedTotal += row.describedUs;
    plannedTotal += row.plannedUs;
    differ += row.differ;
    llvm::outs() << llvm::format(
        "%-22s %14.2f %9.2f %7.1fx  %s\n", row.kernel.c_str(), row.describedUs,
        row.plannedUs, row.describedUs / row.plannedUs,
        row.differ ? (std::to_string(row.differ) + " differ").c_str() : "same");
    json.push_back({{"kernel", row.kernel},
                    {"described_us", row.describedUs},
                    {"planned_us", row.plannedUs},
                    {"calls", row.calls},
                    {"differ", row.differ}});
  }
  llvm::outs() << llvm::format(
      "%-22s %14.2f %9.2f %7.1fx  %s\n", "all, summed", describedTotal,
      plannedTotal, describedTotal / plannedTotal, differ ? "DIFFER" : "same");
  if (std::error_code error = llvm::sys::fs::create_directories(outDir)) {
    llvm::errs() << "tilec bench: error: cannot create " << outDir << ": "
                 << error.message() << "\n";
    return 1;
  }
  std::string path = outDir + "/plans.json";
  std::error_code error;
  llvm::raw_fd_ostream file(path, error);
  if (error) {
    llvm::errs() << "tilec bench: error: cannot write " << path << ": "
                 << error.message() << "\n";
    return 1;
  }
  file << nlohmann::json{{"sizes", sizes}, {"kernels", json}}.dump(1) << "\n";
  llvm::outs() << "wrote " << path << "\n";
  return differ ? 1 : 0;
}

} // namespace tilec::tool
