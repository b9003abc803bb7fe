//===- PlanBench.cpp - tilec bench plans ----------------------------------===//
//
// The host's share of a launch of a new size, with no GPU: a stream of point
// clouds launches every map kernel with a new voxel count each time, and
// each launch first needs its autotune key, specialization, integer
// arguments and grid. For every registered kernel, in one process, over the
// same calls of new sizes: the description's own functions (evaluateCall,
// evaluateGrid) against a CallPlan of the call's shape (what SparseEngine
// uses), each result compared with the other's; then the same for the calls
// of whole map builds (sparse::mapBuildCalls), as SparseEngine plans them
// (a plan per kernel and shape, kept across builds).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/contract/CallPlan.h"
#include "tilec/sparse/SparseConv.h"

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

// What a planning gave: its key and integer arguments, and the grid where
// there is one.
template <typename Evaluation>
Launch launchOf(Evaluation &evaluation, const GridSize *grid) {
  Launch launch;
  launch.key = evaluation.autotuneKey + "|" + evaluation.specialization.str();
  launch.integers = std::move(evaluation.integerArguments);
  launch.ok = grid != nullptr;
  if (grid)
    launch.grid[0] = grid->x, launch.grid[1] = grid->y,
    launch.grid[2] = grid->z;
  return launch;
}

// A call planned the description's way (what the engine did before plans).
Launch describedLaunch(const KernelDescription &description,
                       const Config &config, const Call &call) {
  auto evaluation = description.evaluateCall(call);
  if (!evaluation)
    return Launch();
  auto grid = description.evaluateGrid(config, *evaluation);
  return launchOf(*evaluation, grid.ok() ? &*grid : nullptr);
}

// A call planned through the plan of its shape and the grid of its config.
Launch plannedLaunch(const CallPlan &plan, const CallPlan::Grid &planGrid,
                     const Call &call) {
  auto evaluation = plan.evaluate(call);
  if (!evaluation)
    return Launch();
  auto grid = planGrid.evaluate(*evaluation);
  return launchOf(*evaluation, grid ? &*grid : nullptr);
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
  for (int i = 0; i < sizes; ++i)
    described[i] = describedLaunch(description, *config, calls[i]);
  row.describedUs = microsecondsSince(start, sizes);
  start = std::chrono::steady_clock::now();
  CallPlan plan(description, shape);
  CallPlan::Grid planGrid = plan.grid(*config);
  for (int i = 0; i < sizes; ++i)
    planned[i] = plannedLaunch(plan, planGrid, calls[i]);
  row.plannedUs = microsecondsSince(start, sizes);
  row.calls = sizes;
  for (int i = 0; i < sizes; ++i)
    row.differ += !(described[i] == planned[i]);
  return row;
}

struct BuildRow {
  std::string name;
  size_t calls = 0;
  int builds = 0, differ = 0;
  double describedUs = 0, plannedUs = 0;
};

// `builds` map builds of new voxel counts from `voxels` up: every call of
// each planned the description's way, then through plans kept per kernel
// and shape (the config of each, as its bucket's, found once per shape).
BuildRow benchBuilds(const std::string &name, int64_t voxels,
                     const sparse::Window &window, bool lean, int builds) {
  BuildRow row{name};
  row.builds = builds;
  std::vector<std::vector<std::pair<std::string, Call>>> calls;
  for (int i = 0; i < builds; ++i)
    calls.push_back(sparse::mapBuildCalls(voxels + i, window, lean));
  row.calls = calls.front().size();
  struct Shape {
    const KernelDescription *description;
    Config config;
    std::optional<CallPlan> plan;
    std::optional<CallPlan::Grid> grid;
  };
  std::map<std::string, Shape> shapes;
  for (const auto &[kernel, call] : calls.front()) {
    const kernel::KernelDefinition *definition = kernel::lookupKernel(kernel);
    if (!definition)
      continue;
    const KernelDescription &description = definition->getDescription();
    Result<Config> config =
        description.configForCall(description.getConfigs().front(), call);
    if (config)
      shapes.emplace(kernel + CallPlan::shapeOf(call),
                     Shape{&description, *config, std::nullopt, std::nullopt});
  }
  auto shapeOf = [&](const std::string &kernel, const Call &call) {
    auto found = shapes.find(kernel + CallPlan::shapeOf(call));
    return found == shapes.end() ? nullptr : &found->second;
  };
  std::vector<Launch> described, planned;
  auto start = std::chrono::steady_clock::now();
  for (const auto &build : calls)
    for (const auto &[kernel, call] : build)
      if (Shape *shape = shapeOf(kernel, call))
        described.push_back(
            describedLaunch(*shape->description, shape->config, call));
  row.describedUs = microsecondsSince(start, builds);
  start = std::chrono::steady_clock::now();
  for (const auto &build : calls)
    for (const auto &[kernel, call] : build) {
      Shape *shape = shapeOf(kernel, call);
      if (!shape)
        continue;
      if (!shape->plan) {
        shape->plan.emplace(*shape->description, call);
        shape->grid.emplace(shape->plan->grid(shape->config));
      }
      planned.push_back(plannedLaunch(*shape->plan, *shape->grid, call));
    }
  row.plannedUs = microsecondsSince(start, builds);
  for (size_t i = 0; i < described.size(); ++i)
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
  // Whole map builds, as a stream of clouds of new sizes makes them.
  int builds = quick ? 200 : 2000;
  std::vector<BuildRow> buildRows = {
      benchBuilds("k3, key order", 15192, sparse::Window::cube(3), false,
                  builds),
      benchBuilds("k3, lean groups", 15192, sparse::Window::cube(3), true,
                  builds),
      benchBuilds("k5 dilated 2", 15192, sparse::Window::cube(5, 2), false,
                  builds),
      benchBuilds("k1x3x3", 15192, sparse::Window{{1, 3, 3}, {1, 1, 1}}, false,
                  builds)};
  llvm::outs() << "\nmap builds of " << builds
               << " new voxel counts from 15,192 (sparse::mapBuildCalls: "
                  "every call a first build precompiles)\n";
  llvm::outs() << llvm::format("%-22s %6s %14s %9s %8s  %s\n", "window",
                               "calls", "described us", "plan us", "speedup",
                               "check");
  nlohmann::json buildJson = nlohmann::json::array();
  for (const BuildRow &row : buildRows) {
    differ += row.differ;
    llvm::outs() << llvm::format(
        "%-22s %6zu %14.2f %9.2f %7.1fx  %s\n", row.name.c_str(), row.calls,
        row.describedUs, row.plannedUs, row.describedUs / row.plannedUs,
        row.differ ? (std::to_string(row.differ) + " differ").c_str() : "same");
    buildJson.push_back({{"window", row.name},
                         {"calls", row.calls},
                         {"builds", row.builds},
                         {"described_us", row.describedUs},
                         {"planned_us", row.plannedUs},
                         {"differ", row.differ}});
  }
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
  file << nlohmann::json{{"sizes", sizes},
                         {"kernels", json},
                         {"map_builds", buildJson}}
              .dump(1)
       << "\n";
  llvm::outs() << "wrote " << path << "\n";
  return differ ? 1 : 0;
}

} // namespace tilec::tool
