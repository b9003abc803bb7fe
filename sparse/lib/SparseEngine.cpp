//===- SparseEngine.cpp - Launching the sparse convolution's kernels ------===//

#include "CallBinding.h"
#include "MapSequence.h"

#include "tilec/contract/CallPlan.h"

#include "tilec/sparse/SparseConv.h"

#include "tilec/runtime/Driver.h"
#include "tilec/runtime/Launch.h"

#include <algorithm>

namespace tilec::sparse {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  }
  return "?";
}

// The launches of one call shape from one bucket: the bucket's kernel and
// a copy of its pack whose signature was checked against the description
// once, and where each argument goes. Every exact call of the shape sets its
// integers and pointers into this one pack and launches (the driver copies
// the arguments at the launch), so that a call of a new size copies no pack
// and binds no names.
struct SparseEngine::BoundShape {
  std::shared_ptr<const rt::Kernel> kernel;
  rt::ArgPack pack;
  // The pointer arguments' names and indices in the pack.
  std::vector<std::pair<std::string, size_t>> pointers;
  // The integer arguments' names, in the order the shape's evaluations list
  // them, and their indices in the pack.
  std::vector<std::pair<std::string, size_t>> integers;
};

struct SparseEngine::LaunchPlan {
  std::shared_ptr<BoundShape> bound;
  rt::Dim3 grid;
  // The call's integer arguments, by index in the bound shape's pack.
  std::vector<std::pair<size_t, int64_t>> integers;
};

// What every call of one autotune bucket shares: the chosen kernel, its
// config and an argument pack to copy.
struct SparseEngine::BucketPlan {
  std::shared_ptr<const rt::Kernel> kernel;
  Config config;
  rt::ArgPack pack;
  // config.str(): a shape's grids are by config (a bucket tuned again may
  // choose another).
  std::string configText;
};

// A bucket's plan for one call shape: the bucket (its autotune key and
// specialization, and its choice), its pack bound for the shape, and the
// grid of its config for the shape.
struct SparseEngine::BoundBucket {
  std::string autotuneKey;
  Specialization specialization;
  const BucketPlan *bucket;
  std::shared_ptr<BoundShape> bound;
  const CallPlan::Grid *grid;
  // Whether a call evaluated so falls in this bucket.
  bool holds(const CallPlan::Evaluation &evaluation) const {
    return evaluation.autotuneKey == autotuneKey &&
           evaluation.specialization.divisibility ==
               specialization.divisibility &&
           evaluation.specialization.equalToOne == specialization.equalToOne;
  }
};

// The calls of one shape: their plan, and the grid of each config its
// buckets chose.
struct SparseEngine::ShapePlan {
  ShapePlan(std::string name, const KernelDescription &description,
            const Call &shape)
      : name(std::move(name)), plan(description, shape) {}
  // The kernel and CallPlan::shapeOf: the key in shapes_.
  std::string name;
  CallPlan plan;
  std::map<std::string, CallPlan::Grid> grids;
  // The grid plan of `config` (whose str() is `configText`), made on first
  // use.
  const CallPlan::Grid &gridOf(const std::string &configText,
                               const Config &config) {
    auto found = grids.find(configText);
    if (found == grids.end())
      found = grids.emplace(configText, plan.grid(config)).first;
    return found->second;
  }
  // The bucket the shape's last call fell in: the next call in the same
  // bucket (a map build's launch over a new voxel count) takes its pack and
  // grid without keying the bucket anew.
  std::optional<BoundBucket> last;
};

SparseEngine::SparseEngine(rt::KernelProvider &provider,
                           rt::Autotuner &autotuner, rt::AutotuneCache &cache)
    : provider_(provider), autotuner_(autotuner), cache_(cache) {}
SparseEngine::~SparseEngine() {
  if (hostStats_)
    (void)context().driver().api().cuMemFreeHost(hostStats_);
}

Status SparseEngine::allocateHostStats() {
  if (hostStats_)
    return Status::success();
  const rt::Driver &driver = context().driver();
  return driver.check(
      driver.api().cuMemHostAlloc(&hostStats_, 2 * kDeferredStatsBytes, 0),
      "cuMemHostAlloc");
}

Result<void *> SparseEngine::checkedStats() {
  TILEC_RETURN_IF_ERROR(allocateHostStats());
  return static_cast<void *>(static_cast<char *>(hostStats_) +
                             kDeferredStatsBytes);
}

Result<SparseEngine::DeferredCheck> SparseEngine::deferredCheck() {
  TILEC_RETURN_IF_ERROR(allocateHostStats());
  if (!statsCopied_) {
    TILEC_ASSIGN_OR_RETURN(
        event, rt::Event::create(context(), CU_EVENT_DISABLE_TIMING));
    statsCopied_ = std::move(event);
  }
  ++deferredChecks_;
  return DeferredCheck{hostStats_, &*statsCopied_};
}

Status SparseEngine::synchronize(CUstream stream) const {
  const rt::Driver &driver = context().driver();
  return driver.check(driver.api().cuStreamSynchronize(stream),
                      "cuStreamSynchronize");
}

Result<rt::DevicePtr> SparseEngine::scratch(size_t bytes) {
  if (!scratch_ || scratch_->size() < bytes) {
    scratch_.reset();
    // Half again as much, so that a few growing builds do not reallocate
    // every time.
    auto buffer = rt::DeviceBuffer::allocate(context(), bytes + bytes / 2);
    if (!buffer)
      return buffer.status();
    scratch_ = std::move(*buffer);
  }
  return scratch_->ptr();
}

Result<rt::PoolBuffer> SparseEngine::allocateMaps(size_t bytes,
                                                  CUstream stream) {
  if (!pool_) {
    Result<std::unique_ptr<rt::DevicePool>> pool =
        rt::DevicePool::create(context());
    if (!pool)
      return pool.status();
    pool_ = std::move(*pool);
  }
  return pool_->allocate(bytes, stream);
}

Status
SparseEngine::orderLegacyStreamAfter(const std::vector<CUstream> &streams) {
  for (CUstream stream : streams) {
    // The legacy default stream orders itself after the others' work.
    if (stream == nullptr || stream == CU_STREAM_LEGACY)
      continue;
    if (!ordering_) {
      Result<rt::Event> event =
          rt::Event::create(context(), CU_EVENT_DISABLE_TIMING);
      if (!event)
        return event.status();
      ordering_ = std::move(*event);
    }
    // A wait takes the event as recorded when it is queued, so one event
    // serves every stream in turn.
    TILEC_RETURN_IF_ERROR(ordering_->record(stream));
    TILEC_RETURN_IF_ERROR(ordering_->makeWait(nullptr));
  }
  return Status::success();
}

namespace {

// Plans kept at most (each a kernel's argument pack for one exact call).
constexpr size_t kMaxPlans = 4096;

std::string planKey(const std::string &kernel, const Call &call) {
  return kernel + callKey(call);
}

// A map kernel's one config completed for `call`.
Result<Config> singleConfig(const KernelDescription &description,
                            const Call &call) {
  if (description.getConfigs().empty())
    return Status::error(description.getName() + " declares no config");
  return description.configForCall(description.getConfigs().front(), call);
}

// A launch's key and integer arguments. A stream of new sizes plans every
// launch of a map build anew: from the plan of the call's shape
// (expressions parsed once, sizes in slots), or where the plan cannot tell,
// from the description's own evaluation (with its error; the grid then comes
// from the description too).
Result<CallPlan::Evaluation>
evaluateLaunch(const CallPlan &plan, const KernelDescription &description,
               const Call &call) {
  if (std::optional<CallPlan::Evaluation> planned = plan.evaluate(call))
    return std::move(*planned);
  Result<KernelDescription::CallEvaluation> evaluation =
      description.evaluateCall(call);
  if (!evaluation)
    return evaluation.status();
  CallPlan::Evaluation described;
  described.autotuneKey = std::move(evaluation->autotuneKey);
  described.specialization = std::move(evaluation->specialization);
  described.integerArguments = std::move(evaluation->integerArguments);
  return described;
}

// The key a call's bucket is chosen under (Autotuner::chosenForKey).
std::string bucketKeyOf(const CallPlan::Evaluation &evaluation) {
  return rt::specializedAutotuneKey(evaluation.autotuneKey,
                                    evaluation.specialization);
}

// The grid of `config` for the call `evaluation` was made of: from its
// shape's grid plan, else (where the plan cannot tell) the description's.
Result<rt::Dim3> evaluateGrid(const CallPlan::Grid &grid,
                              const CallPlan::Evaluation &evaluation,
                              const KernelDescription &description,
                              const Config &config, const Call &call) {
  if (std::optional<GridSize> planned = grid.evaluate(evaluation))
    return rt::Dim3(*planned);
  return description.evaluateGrid(config, call);
}

} // namespace

Result<const KernelDescription *>
SparseEngine::describe(const std::string &kernel) {
  if (auto found = descriptions_.find(kernel); found != descriptions_.end())
    return &found->second;
  Result<KernelDescription> description = autotuner_.describe(kernel);
  if (!description)
    return description.status();
  return &descriptions_.emplace(kernel, std::move(*description)).first->second;
}

struct SparseEngine::ShapeEvaluation {
  const KernelDescription *description;
  ShapePlan *shape;
  CallPlan::Evaluation evaluation;
};

Result<SparseEngine::ShapeEvaluation>
SparseEngine::evaluateShape(const std::string &kernel, const Call &call) {
  Result<const KernelDescription *> description = describe(kernel);
  if (!description)
    return description.status();
  std::string shapeName = kernel + CallPlan::shapeOf(call);
  auto found = shapes_.find(shapeName);
  if (found == shapes_.end())
    found = shapes_
                .emplace(shapeName, std::make_unique<ShapePlan>(
                                        shapeName, **description, call))
                .first;
  ShapePlan *shape = found->second.get();
  Result<CallPlan::Evaluation> evaluation =
      evaluateLaunch(shape->plan, **description, call);
  if (!evaluation)
    return evaluation.status();
  return ShapeEvaluation{*description, shape, std::move(*evaluation)};
}

std::optional<rt::TuneResult> SparseEngine::chosen(const std::string &kernel,
                                                   const Call &call) {
  Result<ShapeEvaluation> evaluated = evaluateShape(kernel, call);
  if (!evaluated)
    return std::nullopt; // select() reports it
  const CallPlan::Evaluation &evaluation = evaluated->evaluation;
  std::optional<rt::TuneResult> result =
      autotuner_.chosenForKey(kernel, bucketKeyOf(evaluation));
  if (!result)
    return std::nullopt;
  Result<rt::Dim3> grid = evaluateGrid(
      evaluated->shape->gridOf(result->config.str(), result->config),
      evaluation, *evaluated->description, result->config, call);
  if (!grid)
    return std::nullopt; // select() reports it
  result->grid = *grid;
  return result;
}

size_t SparseEngine::retirePredictions() {
  size_t retired = autotuner_.retirePredictions();
  plans_.clear();
  buckets_.clear();
  shapes_.clear();
  bound_.clear();
  ++choiceGeneration_;
  return retired;
}

Result<rt::TuneResult> SparseEngine::select(const std::string &kernel,
                                            const Call &call,
                                            const rt::InputsFactory &inputs) {
  if (std::optional<rt::TuneResult> result = chosen(kernel, call)) {
    // As select() does first: a workload names every call.
    rt::WorkloadRecorder::process().recordKernelCall(kernel, call);
    return std::move(*result);
  }
  return autotuner_.select(kernel, call, inputs);
}

bool SparseEngine::hasChoice(const std::string &kernel, const Call &call) {
  Result<ShapeEvaluation> evaluated = evaluateShape(kernel, call);
  if (!evaluated)
    return autotuner_.hasChoice(kernel, call);
  return autotuner_.hasChoiceForKey(kernel, bucketKeyOf(evaluated->evaluation));
}

Result<SparseEngine::LaunchPlan *>
SparseEngine::plan(const std::string &kernel, const Call &call,
                   const rt::InputsFactory &inputs) {
  std::string key = planKey(kernel, call);
  if (auto found = plans_.find(key); found != plans_.end())
    return found->second.get();
  // A stream of clouds of new sizes makes new plans forever; they are cheap
  // to rebuild from their buckets, so the tables are bounded (and cleared
  // together: a shape's last bucket points into the others).
  if (plans_.size() >= kMaxPlans || buckets_.size() >= kMaxPlans ||
      shapes_.size() >= kMaxPlans || bound_.size() >= kMaxPlans) {
    plans_.clear();
    buckets_.clear();
    shapes_.clear();
    bound_.clear();
  }
  Result<ShapeEvaluation> evaluated = evaluateShape(kernel, call);
  if (!evaluated)
    return evaluated.status();
  std::optional<BoundBucket> &last = evaluated->shape->last;
  if (!last || !last->holds(evaluated->evaluation)) {
    Result<BoundBucket> bucket = planBucket(kernel, call, inputs, *evaluated);
    if (!bucket)
      return bucket.status();
    evaluated->shape->last = std::move(*bucket);
  }
  return planLaunch(key, *evaluated, *evaluated->shape->last, call);
}

Result<SparseEngine::LaunchPlan *>
SparseEngine::planLaunch(const std::string &key,
                         const ShapeEvaluation &evaluated,
                         const BoundBucket &bucket, const Call &call) {
  Result<rt::Dim3> grid =
      evaluateGrid(*bucket.grid, evaluated.evaluation, *evaluated.description,
                   bucket.bucket->config, call);
  if (!grid)
    return grid.status();
  Result<std::vector<std::pair<size_t, int64_t>>> integers =
      placeIntegers(*bucket.bound, *evaluated.description,
                    evaluated.evaluation.integerArguments);
  if (!integers)
    return integers.status();
  auto plan = std::make_unique<LaunchPlan>(
      LaunchPlan{bucket.bound, *grid, std::move(*integers)});
  return (plans_[key] = std::move(plan)).get();
}

Result<SparseEngine::BoundBucket>
SparseEngine::planBucket(const std::string &kernel, const Call &call,
                         const rt::InputsFactory &inputs,
                         ShapeEvaluation &evaluated) {
  const CallPlan::Evaluation *evaluation = &evaluated.evaluation;
  std::string bucketKey = kernel + "\n" + bucketKeyOf(*evaluation);
  auto bucket = buckets_.find(bucketKey);
  if (bucket == buckets_.end()) {
    // Through the autotuner, so that the map kernel's config and cubin key
    // land in the autotune cache (and a bundle can serve them) like a tuned
    // kernel's: a kernel with a single candidate is recorded, not
    // benchmarked.
    Result<rt::TuneResult> selected = autotuner_.select(kernel, call, inputs);
    if (!selected)
      return selected.status();
    Result<rt::ArgPack> pack = selected->kernel->makeArgPack();
    if (!pack)
      return pack.status();
    bucket = buckets_
                 .emplace(std::move(bucketKey),
                          std::make_unique<BucketPlan>(BucketPlan{
                              selected->kernel, selected->config,
                              std::move(*pack), selected->config.str()}))
                 .first;
    // A selection may build inputs, which launch through this engine: the
    // shape's plan is looked up again rather than trusted to have stayed.
    Result<ShapeEvaluation> again = evaluateShape(kernel, call);
    if (!again)
      return again.status();
    evaluated = std::move(*again);
    evaluation = &evaluated.evaluation;
  }
  ShapePlan &shape = *evaluated.shape;
  const BucketPlan &chosen = *bucket->second;
  Result<std::shared_ptr<BoundShape>> bound =
      boundShape(bucket->first + "\n" + shape.name, chosen,
                 *evaluated.description, evaluation->integerArguments);
  if (!bound)
    return bound.status();
  return BoundBucket{evaluation->autotuneKey, evaluation->specialization,
                     &chosen, std::move(*bound),
                     &shape.gridOf(chosen.configText, chosen.config)};
}

Result<std::shared_ptr<SparseEngine::BoundShape>> SparseEngine::boundShape(
    const std::string &key, const BucketPlan &bucket,
    const KernelDescription &description,
    const std::vector<std::pair<std::string, int64_t>> &integers) {
  // A bucket chosen again (after the tables were cleared) may have loaded
  // another kernel: the bound shape follows it.
  if (auto found = bound_.find(key);
      found != bound_.end() && found->second->kernel == bucket.kernel)
    return found->second;
  auto bound = std::make_shared<BoundShape>(
      BoundShape{bucket.kernel, bucket.pack, {}, {}});
  // Binding once checks the loaded cubin's signature against the
  // description and says where the pointers go.
  auto pointers = bindIntegerArguments(bound->pack, description, integers);
  if (!pointers)
    return pointers.status();
  bound->pointers = std::move(*pointers);
  const std::vector<ArgumentDecl> &signature = description.getSignature();
  for (const auto &[name, value] : integers) {
    auto declared = std::find_if(
        signature.begin(), signature.end(),
        [&](const ArgumentDecl &argument) { return argument.name == name; });
    if (declared == signature.end())
      return Status::error(description.getName() + ": no argument " + name);
    bound->integers.emplace_back(name, declared - signature.begin());
  }
  return bound_[key] = std::move(bound);
}

Result<std::vector<std::pair<size_t, int64_t>>> SparseEngine::placeIntegers(
    const BoundShape &bound, const KernelDescription &description,
    const std::vector<std::pair<std::string, int64_t>> &integers) {
  std::vector<std::pair<size_t, int64_t>> placed;
  placed.reserve(integers.size());
  for (size_t i = 0; i < integers.size(); ++i) {
    const auto &[name, value] = integers[i];
    // The shape's evaluations list the same names in the same order; by
    // name where one does not (the description's own evaluation).
    if (i < bound.integers.size() && bound.integers[i].first == name) {
      placed.emplace_back(bound.integers[i].second, value);
      continue;
    }
    auto found =
        std::find_if(bound.integers.begin(), bound.integers.end(),
                     [&](const auto &entry) { return entry.first == name; });
    if (found == bound.integers.end())
      return Status::error(description.getName() + ": no argument " + name);
    placed.emplace_back(found->second, value);
  }
  return placed;
}

void SparseEngine::precompile(
    const std::vector<std::pair<std::string, Call>> &calls) {
  for (const auto &[kernel, call] : calls) {
    // A size inside a bucket this process already ran needs nothing: its
    // kernel is loaded, whatever the exact size.
    if (plans_.count(planKey(kernel, call)) || hasChoice(kernel, call))
      continue;
    Result<const KernelDescription *> description = describe(kernel);
    if (!description)
      continue;
    Result<Config> config = singleConfig(**description, call);
    if (!config)
      continue;
    Specialization specialization = (*description)->specializationOf(call);
    // A bundle's cubin loads without compiling; a kernel loaded for another
    // bucket serves this one.
    if (const rt::KernelBundle *bundle = provider_.bundle();
        bundle && bundle->findCubin(kernel, config->str(), specialization.str(),
                                    provider_.target()))
      continue;
    if (provider_.findLoaded(kernel, *config, specialization))
      continue;
    // In the build's order, on the provider's workers, before the
    // candidates queued for later tunings (a convolution queues its own
    // before it builds its maps): the build's first launch waits only for
    // its own kernel (or compiles it, if no worker has started it), not for
    // the whole list.
    provider_.compileAhead(kernel, *config, specialization,
                           rt::CompileAhead::When::Next);
  }
}

bool SparseEngine::firstUseOf(const std::string &signature) {
  // Bounded like the plans: a forgotten signature only precompiles again.
  if (signatures_.size() >= kMaxPlans)
    signatures_.clear();
  return signatures_.insert(signature).second;
}

Status SparseEngine::launch(const std::string &kernel, const Call &call,
                            std::initializer_list<PointerArg> pointers,
                            CUstream stream, const rt::InputsFactory &inputs) {
  return launchWith(kernel, call, pointers.begin(), pointers.size(), stream,
                    inputs);
}

Status
SparseEngine::launch(const std::string &kernel, const Call &call,
                     const std::map<std::string, rt::DevicePtr> &pointers,
                     CUstream stream, const rt::InputsFactory &inputs) {
  std::vector<PointerArg> listed(pointers.begin(), pointers.end());
  return launchWith(kernel, call, listed.data(), listed.size(), stream, inputs);
}

Status SparseEngine::launchWith(const std::string &kernel, const Call &call,
                                const PointerArg *pointers, size_t count,
                                CUstream stream,
                                const rt::InputsFactory &inputs) {
  Result<LaunchPlan *> plan = this->plan(kernel, call, inputs);
  if (!plan)
    return plan.status();
  const LaunchPlan &launch = **plan;
  if (launch.grid.x == 0 || launch.grid.y == 0 || launch.grid.z == 0)
    return Status::success();
  BoundShape &bound = *launch.bound;
  for (const auto &[index, value] : launch.integers)
    if (Status status = bound.pack.setInt(index, value); !status.ok())
      return status.withContext(kernel);
  const PointerArg *end = pointers + count;
  for (const auto &[name, index] : bound.pointers) {
    const PointerArg *pointer =
        std::find_if(pointers, end, [&name = name](const PointerArg &arg) {
          return arg.first == name;
        });
    if (pointer == end)
      return Status::error(kernel + ": no buffer for " + name);
    if (Status status = bound.pack.setPointer(index, pointer->second);
        !status.ok())
      return status.withContext(kernel + " argument " + name);
  }
  if (recording_)
    return recording_->addKernel(bound.kernel, launch.grid, bound.pack);
  return rt::launch(*bound.kernel, launch.grid, bound.pack, stream);
}

Status SparseEngine::memset(rt::DevicePtr address, uint32_t value,
                            unsigned elementBytes, size_t count,
                            CUstream stream) {
  if (recording_)
    return recording_->addMemset(address.address, value, elementBytes, count);
  return rt::memsetAsync(context().driver(), address.address, value,
                         elementBytes, count, stream);
}

} // namespace tilec::sparse
