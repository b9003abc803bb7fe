//===- StageKey.cpp - The cache key of each stage -------------------------===//

#include "tilec/Pipeline/StageKey.h"

#include "tilec/runtime/StageCache.h"

#include <type_traits>

namespace tilec {

static_assert(rt::kCacheStages.size() == unsigned(Stage::Cubin) + 1,
              "one cache directory per stage");

llvm::StringRef getStageName(Stage stage) {
  std::string_view name = rt::kCacheStages[unsigned(stage)];
  return llvm::StringRef(name.data(), name.size());
}

StageOptions getStageOptions(const CompileOptions &options,
                             llvm::StringRef kernelName) {
  StageOptions stages{options, options.ptx, options.cubin};
  stages.ptx.chip = options.target;
  stages.cubin.chip = options.target;
  stages.cubin.kernelName = kernelName.str();
  return stages;
}

// A field's value in a key: text as it is, numbers, bools and enums in
// decimal, a list as its length and then each element. A field of any other
// type does not compile here until its encoding is chosen.
static void addValue(rt::CacheKey &key, const char *name,
                     const std::string &value) {
  key.add(name, value);
}

template <class T>
static std::enable_if_t<std::is_integral_v<T> || std::is_enum_v<T>>
addValue(rt::CacheKey &key, const char *name, T value) {
  key.add(name, int64_t(value));
}

static void addValue(rt::CacheKey &key, const char *name,
                     const std::vector<std::string> &values) {
  key.add(name, int64_t(values.size()));
  for (const std::string &value : values)
    key.add(name, value);
}

/// Adds the fields of `options` that `stage` reads; false when a derived one
/// cannot be keyed.
template <class Options>
static bool addFields(rt::CacheKey &key, Stage stage, const Options &options) {
  bool keyable = true;
  forEachField<Options>([&](const auto &field) {
    using Field = std::decay_t<decltype(field)>;
    if constexpr (Field::kind != FieldKind::Excluded) {
      if (!field.stages.contains(stage))
        return;
      if constexpr (Field::kind == FieldKind::Keyed) {
        addValue(key, field.name, options.*field.member);
      } else {
        std::string value = field.derive(options);
        keyable = keyable && !value.empty();
        key.add(field.name, value);
      }
    }
  });
  return keyable;
}

std::string getStageKey(Stage stage, llvm::StringRef compilerId,
                        llvm::StringRef inputHash,
                        const StageOptions &options) {
  rt::CacheKey key(std::string_view(getStageName(stage)));
  llvm::StringRef input =
      stage == Stage::TTIR ? "input" : getStageName(Stage(unsigned(stage) - 1));
  key.add("compiler", std::string_view(compilerId))
      .add(std::string_view(input), std::string_view(inputHash));
  bool keyable = addFields(key, stage, options.compile) &&
                 addFields(key, stage, options.ptx) &&
                 addFields(key, stage, options.cubin);
  return keyable ? key.str() : "";
}

} // namespace tilec
