//===- KernelHarness.cpp - run kernels on the GPU against a reference ----===//

#include "tilec/Harness/KernelHarness.h"

#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Event.h"
#include "tilec/runtime/Launch.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <sstream>

namespace tilec::harness {
namespace {

/// A device buffer holding `host`, or poisoned (all bits set: NaN) when
/// `poison` is set so an element the kernel misses cannot pass.
Result<rt::DeviceBuffer> upload(const rt::Context &context,
                                const std::vector<uint8_t> &host,
                                bool poison) {
  auto buffer = rt::DeviceBuffer::allocate(context, host.size());
  if (!buffer)
    return buffer.status();
  Status status = poison ? buffer->memset8(0xff)
                         : buffer->copyFromHost(host.data(), host.size());
  if (!status.ok())
    return status;
  return std::move(*buffer);
}

/// Binds every argument of the signature: pointers to the reference's
/// tensors (uploaded; the output poisoned), integers to the call's values.
Status bindArguments(const rt::Context &context,
                     const KernelDescription &kernel, HostProblem &host,
                     Problem &problem) {
  auto arguments = signatureArguments(kernel, host);
  if (!arguments)
    return arguments.status();
  for (const HostArgument &argument : *arguments) {
    Problem::Argument bound;
    if (argument.tensor) {
      auto buffer = upload(context, argument.tensor->bytes, argument.isOutput);
      if (!buffer)
        return buffer.status();
      if (argument.isOutput) {
        problem.outputBuffer = problem.buffers.size();
        problem.outputFormat = argument.tensor->format;
      }
      bound.isPointer = true;
      bound.buffer = problem.buffers.size();
      problem.buffers.push_back(std::move(*buffer));
    } else {
      bound.value = argument.value;
    }
    problem.arguments.push_back(bound);
  }
  return Status::success();
}

} // namespace

Status requirePositive(const std::map<std::string, int64_t> &sizes) {
  for (const auto &[name, value] : sizes)
    if (value <= 0)
      return Status::error("size '" + name + "=" + std::to_string(value) +
                           "' must be positive");
  return Status::success();
}

Result<std::map<std::string, int64_t>> parseSizes(const std::string &text) {
  auto sizes = parseNamedIntegers(text);
  if (!sizes)
    return sizes.status();
  TILEC_RETURN_IF_ERROR(requirePositive(*sizes));
  return sizes;
}

RunRequest requestFor(const KernelDescription &kernel, bool tails) {
  RunRequest request;
  request.kernel = &kernel;
  request.call.sizes = tails ? kernel.getTailSizes() : kernel.getDefaultSizes();
  return request;
}

std::string RunReport::describe() const {
  std::ostringstream os;
  os << (passed ? "PASS" : "FAIL");
  if (medianMs > 0)
    os << " " << medianMs * 1000 << " us (median)";
  os << ": " << checkedElements << " elements, worst err/tol "
     << worstErrorRatio << ", max |err| " << maxAbsError << " (rtol " << rtol
     << ", atol " << atol << ")";
  return os.str();
}

Result<HostProblem> buildHostProblem(const RunRequest &request,
                                     bool withReference) {
  if (!request.kernel)
    return Status::error("a run request without a kernel description");
  const KernelDescription &kernel = *request.kernel;
  ReferenceFn reference = findReference(kernel.getName());
  if (!reference)
    return Status::error("the harness has no reference for kernel '" +
                         kernel.getName() + "' (test/reference/)");
  // Integer arguments may be 0 (radix_scatter's SHIFT=0, as a recorded map
  // build calls it); a negative size has no tensor.
  for (const auto &[name, value] : request.call.sizes)
    if (value < 0)
      return Status::error("size '" + name + "=" + std::to_string(value) +
                           "' must not be negative");
  auto values = kernel.evaluateIntegerArguments(request.call);
  if (!values)
    return values.status();
  HostProblem problem;
  problem.integers = {values->begin(), values->end()};
  // The arguments are i32: a value out of range is refused before the
  // reference allocates for it (ArgPack would refuse it at the launch).
  for (const ArgumentDecl &argument : kernel.getSignature())
    if (argument.type == "i32")
      if (int64_t value = problem.integers.at(argument.name);
          value < INT32_MIN || value > INT32_MAX)
        return Status::error(kernel.getName() + "'s argument " +
                             argument.name + " = " + std::to_string(value) +
                             " does not fit in i32");
  auto flops = kernel.evaluateFlops(request.call);
  if (!flops)
    return flops.status();
  problem.flopCount = *flops;

  Random rng(request.seed);
  ReferenceRequest inputs{kernel, request.call, problem.integers, withReference,
                          rng};
  auto host = reference(inputs);
  if (!host)
    return host.status().withContext("reference of " + kernel.getName());
  problem.reference = std::move(*host);
  size_t outputElements =
      problem.reference.tensors.at(problem.reference.output).size();
  if (withReference && problem.reference.expected.size() != outputElements)
    return Status::error("the reference of " + kernel.getName() + " expects " +
                         std::to_string(problem.reference.expected.size()) +
                         " elements of an output of " +
                         std::to_string(outputElements));
  return problem;
}

Result<std::vector<HostArgument>>
signatureArguments(const KernelDescription &kernel, HostProblem &problem) {
  ReferenceProblem &reference = problem.reference;
  std::vector<HostArgument> arguments;
  bool outputBound = false;
  for (const ArgumentDecl &argument : kernel.getSignature()) {
    HostArgument bound;
    bound.name = argument.name;
    if (argument.type.compare(0, 4, "ptr<") == 0) {
      auto tensor = reference.tensors.find(argument.name);
      if (tensor == reference.tensors.end())
        return Status::error("the reference of " + kernel.getName() +
                             " has no tensor for '" + argument.name + "'");
      bound.tensor = &tensor->second;
      bound.isOutput = argument.name == reference.output;
      outputBound |= bound.isOutput;
    } else if (auto value = problem.integers.find(argument.name);
               value != problem.integers.end()) {
      bound.value = value->second;
    } else {
      return Status::error("the harness cannot pass " + kernel.getName() +
                           "'s argument '" + argument.name + "' of type " +
                           argument.type);
    }
    arguments.push_back(bound);
  }
  if (!outputBound)
    return Status::error("the reference of " + kernel.getName() +
                         " names output '" + reference.output +
                         "', which is not a pointer argument");
  return arguments;
}

Result<std::unique_ptr<Problem>> buildProblem(const rt::Context &context,
                                              const RunRequest &request,
                                              bool withReference) {
  auto host = buildHostProblem(request, withReference);
  if (!host)
    return host.status();
  const KernelDescription &kernel = *request.kernel;
  auto problem = std::make_unique<Problem>();
  problem->kernel = kernel.getName();
  TILEC_RETURN_IF_ERROR(bindArguments(context, kernel, *host, *problem));
  problem->expected = std::move(host->reference.expected);
  problem->tolerance = host->reference.tolerance;
  problem->flopCount = host->flopCount;
  return problem;
}

rt::InputsFactory benchmarkInputsFor(const rt::Context &context,
                                     RunRequest request) {
  return [&context, request = std::move(request)]()
             -> Result<std::shared_ptr<const rt::BenchmarkInputs>> {
    auto problem = buildProblem(context, request, /*withReference=*/false);
    if (!problem)
      return problem.status();
    return std::shared_ptr<const rt::BenchmarkInputs>(std::move(*problem));
  };
}

Status Problem::bind(rt::ArgPack &pack) const {
  if (pack.size() != arguments.size())
    return Status::error(kernel + " takes " + std::to_string(pack.size()) +
                             " arguments, the harness built " +
                             std::to_string(arguments.size()));
  for (size_t index = 0; index < arguments.size(); ++index) {
    const Argument &argument = arguments[index];
    Status status =
        argument.isPointer
            ? pack.setPointer(index, buffers[argument.buffer].ptr())
            : pack.setInt(index, argument.value);
    if (!status.ok())
      return status;
  }
  return Status::success();
}

Result<RunReport> Problem::check() const {
  if (expected.empty())
    return Status::error("the " + kernel +
                             " problem was built without a reference");
  const rt::DeviceBuffer &output = buffers[outputBuffer];
  HostTensor result(outputFormat, expected.size());
  TILEC_RETURN_IF_ERROR(
      output.copyToHost(result.bytes.data(), result.bytes.size()));
  return compareOutput(result, expected, tolerance);
}

RunReport compareOutput(const HostTensor &result,
                        const std::vector<double> &expected,
                        const Tolerance &tolerance) {
  RunReport report;
  report.rtol = tolerance.rtol;
  report.atol = tolerance.atol;
  report.checkedElements = static_cast<int64_t>(expected.size());
  bool integer = result.format == ElementFormat::I32 ||
                 result.format == ElementFormat::I64;
  for (size_t i = 0; i < expected.size(); ++i) {
    double got = result.get(i), want = expected[i];
    // An element the kernel must not write: it stays poisoned (all bits
    // set: NaN, or -1 in an integer format).
    if (std::isnan(want)) {
      if (!(integer ? got == -1 : std::isnan(got)))
        report.worstErrorRatio = report.maxAbsError = INFINITY;
      continue;
    }
    double error = std::fabs(got - want);
    double ratio = error / (report.atol + report.rtol * std::fabs(want));
    if (!std::isfinite(got))
      ratio = error = INFINITY;
    report.maxAbsError = std::max(report.maxAbsError, error);
    report.worstErrorRatio = std::max(report.worstErrorRatio, ratio);
  }
  report.passed = report.worstErrorRatio <= 1.0;
  return report;
}

Result<RunReport> runAndCheck(const rt::Context &context,
                              const rt::Kernel &kernel,
                              const RunRequest &request) {
  if (!request.kernel)
    return Status::error("a run request without a kernel description");
  auto grid = request.kernel->evaluateGrid(request.config, request.call);
  if (!grid)
    return grid.status();
  auto problem = buildProblem(context, request, /*withReference=*/true);
  if (!problem)
    return problem.status();
  auto pack = kernel.makeArgPack();
  if (!pack)
    return pack.status();
  Status status = (*problem)->bind(*pack);
  if (!status.ok())
    return status;
  for (int launch = 0; launch < std::max(request.launches, 1); ++launch)
    if (!(status = rt::launch(kernel, *grid, *pack)).ok())
      return status;
  status = context.synchronize();
  if (!status.ok())
    return status.withContext("running " + request.kernel->getName());

  auto checked = (*problem)->check();
  if (!checked)
    return checked.status();
  RunReport report = *checked;

  if (request.timingRepetitions > 0) {
    for (int warmup = 0; warmup < 3; ++warmup)
      if (!(status = rt::launch(kernel, *grid, *pack)).ok())
        return status;
    auto median = medianEventMs(
        context, [&] { return rt::launch(kernel, *grid, *pack); },
        request.timingRepetitions);
    if (!median)
      return median.status();
    report.medianMs = *median;
  }
  return report;
}

Result<double> medianEventMs(const rt::Context &context,
                             const std::function<Status()> &run,
                             int repetitions) {
  auto start = rt::Event::create(context);
  auto stop = rt::Event::create(context);
  if (!start || !stop)
    return !start ? start.status() : stop.status();
  std::vector<double> times;
  for (int rep = 0; rep < repetitions; ++rep) {
    Status status = start->record();
    if (status.ok())
      status = run();
    if (status.ok())
      status = stop->record();
    if (status.ok())
      status = stop->synchronize();
    if (!status.ok())
      return status;
    auto elapsed = rt::Event::elapsedMs(*start, *stop);
    if (!elapsed)
      return elapsed.status();
    times.push_back(*elapsed);
  }
  if (times.empty())
    return Status::error("no repetitions to time");
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace tilec::harness
