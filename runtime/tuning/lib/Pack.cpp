//===- Pack.cpp - From the caches to a bundle, and to C++ -----------------===//

#include "tilec/runtime/Pack.h"

#include "tilec/contract/CompileMetadata.h"
#include "tilec/contract/CppSource.h"
#include "tilec/contract/KernelDescription.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/StageCache.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace tilec::rt {
namespace {

// The specialization a key was stored under ("...|K%16,M%16").
Result<Specialization> keySpecialization(const std::string &key) {
  size_t bar = key.find('|');
  if (bar == std::string::npos)
    return Specialization();
  return Specialization::parse(key.substr(bar + 1));
}

// Packs the winners into `result`, one cubin per distinct compile.
class Packer {
public:
  Packer(StageCache *stageCache, KernelCompiler *compiler, bool recompile,
         PackResult &result)
      : stageCache_(stageCache), compiler_(compiler), recompile_(recompile),
        result_(result) {}

  // Adds one winner, or returns why it cannot be packed.
  Status add(const std::string &device, const std::string &kernel,
             const std::string &key, const AutotuneEntry &entry) {
    if (entry.target.empty())
      return Status::error("the entry records no target");
    Result<Specialization> specialization = keySpecialization(key);
    if (!specialization)
      return specialization.status();
    TILEC_RETURN_IF_ERROR(addKernel(kernel, entry));
    PackedWinner winner{device, kernel, key, entry.config, ""};
    if (isStale(kernel, key)) {
      winner.source = "stale key";
      result_.stale.push_back(std::move(winner));
      return Status::success();
    }
    std::string identity = kernel + "\n" + entry.config + "\n" +
                           specialization->str() + "\n" + entry.target;
    auto [slot, fresh] = cubinIndex_.emplace(identity, 0);
    if (fresh) {
      Result<std::string> source = addCubin(kernel, entry, *specialization);
      if (!source) {
        cubinIndex_.erase(slot);
        return source.status();
      }
      slot->second = result_.contents.cubins.size() - 1;
      winner.source = *source;
    } else {
      winner.source = "shared";
    }
    result_.contents.selections.push_back(
        {device, entry.target, kernel, key, slot->second, entry.winnerMedianUs()});
    result_.winners.push_back(std::move(winner));
    return Status::success();
  }

private:
  Status addKernel(const std::string &kernel, const AutotuneEntry &entry) {
    if (kernels_.count(kernel))
      return Status::success();
    std::string description;
    if (compiler_) {
      Result<KernelDescription> described = compiler_->describe(kernel);
      if (!described)
        return described.status();
      description = described->toJson();
      std::vector<std::string> &names = currentKeyNames_[kernel];
      for (const AutotuneKeyEntry &key : described->getAutotuneKey())
        names.push_back(key.name);
    } else if (entry.description) {
      description = entry.description->toJson();
    } else {
      return Status::error("the entry holds no description of '" + kernel +
                           "' and no compiler is linked to describe it");
    }
    kernels_.insert(kernel);
    result_.contents.kernels.push_back({kernel, description});
    return Status::success();
  }

  // The cubin and compile json of the winner; returns where they came from.
  Result<std::string> addCubin(const std::string &kernel,
                               const AutotuneEntry &entry,
                               const Specialization &specialization) {
    BundleCubin cubin;
    cubin.kernel = kernel;
    cubin.config = entry.config;
    cubin.specialization = specialization.str();
    cubin.target = entry.target;
    std::string why;
    if (!stageCache_)
      why = "no stage cache";
    else if (entry.cubinKey.empty() || entry.metadataJson.empty())
      why = "the entry records no cubin key";
    else if (std::optional<CacheArtifact> cached =
                 stageCache_->lookup("cubin", entry.cubinKey)) {
      cubin.cubinKey = entry.cubinKey;
      cubin.metadataJson = entry.metadataJson;
      push(std::move(cubin), std::move(cached->payload));
      return std::string("stage cache");
    } else {
      why = "the stage cache " + stageCache_->directory() + " has no cubin " +
            entry.cubinKey;
    }
    if (!compiler_ || !recompile_)
      return Status::error(why + (compiler_ ? ", and recompiling is off"
                                            : ", and no compiler is linked "
                                              "to rebuild it"));
    Result<Config> config = Config::parse(entry.config);
    if (!config)
      return config.status();
    Result<CompiledArtifact> artifact =
        compiler_->compile(kernel, *config, entry.target, specialization);
    if (!artifact)
      return artifact.status().withContext(why + "; recompiling it");
    cubin.metadataJson = artifact->metadata.toJson();
    cubin.cubinKey = artifact->metadata.cubinKey();
    push(std::move(cubin), std::move(artifact->cubin));
    return std::string("recompiled");
  }

  // Whether `key` ("LOG2_N=14,V=27|N%16") names other keys than the kernel's
  // description from the compiler (none: nothing to compare with).
  bool isStale(const std::string &kernel, const std::string &key) const {
    auto current = currentKeyNames_.find(kernel);
    if (current == currentKeyNames_.end())
      return false;
    // The key's values, before the specialization facts after '|'.
    std::string values = key.substr(0, key.find('|'));
    std::vector<std::string> names;
    for (size_t start = 0; start < values.size();) {
      size_t end = std::min(values.find(',', start), values.size());
      std::string field = values.substr(start, end - start);
      names.push_back(field.substr(0, field.find('=')));
      start = end + 1;
    }
    return names != current->second;
  }

  void push(BundleCubin cubin, std::string bytes) {
    result_.contents.cubins.push_back(std::move(cubin));
    result_.contents.cubinBytes.push_back(std::move(bytes));
  }

  StageCache *stageCache_;
  KernelCompiler *compiler_;
  bool recompile_;
  PackResult &result_;
  std::set<std::string> kernels_;
  // The autotune key's names of each kernel the compiler described.
  std::map<std::string, std::vector<std::string>> currentKeyNames_;
  std::map<std::string, size_t> cubinIndex_;
};

} // namespace

Result<PackResult> packBundle(const AutotuneCache &cache,
                              StageCache *stageCache, KernelCompiler *compiler,
                              const PackOptions &options) {
  PackResult result;
  result.contents.createdAt =
      options.createdAt.empty() ? utcTimestamp() : options.createdAt;
  result.contents.packedBy = options.packedBy;
  Packer packer(stageCache, compiler, options.recompile, result);
  std::string problems;
  bool deviceSeen = options.device.empty();
  for (const auto &[device, kernels] : cache.entries()) {
    if (!options.device.empty() && device != options.device)
      continue;
    deviceSeen = true;
    for (const auto &[kernel, keys] : kernels) {
      if (!options.kernels.empty() &&
          std::find(options.kernels.begin(), options.kernels.end(), kernel) ==
              options.kernels.end())
        continue;
      for (const auto &[key, entry] : keys)
        if (Status status = packer.add(device, kernel, key, entry);
            !status.ok())
          problems += "\n  " + device + " " + kernel + " " + key + ": " +
                      status.message();
    }
  }
  if (!deviceSeen)
    return Status::error("the autotune cache " + cache.path() +
                         " has no winners for device '" + options.device + "'");
  if (!problems.empty())
    return Status::error("cannot pack every winner of " + cache.path() + ":" +
                         problems);
  if (result.winners.empty())
    return Status::error(
        "the autotune cache " + cache.path() + " has no winners to pack" +
        (options.kernels.empty() ? "" : " of those kernels") +
        (result.stale.empty()
             ? ""
             : " (" + std::to_string(result.stale.size()) +
                   " left out: their keys predate their kernels' current "
                   "autotune keys; tune again)"));
  return result;
}

//===----------------------------------------------------------------------===//
// C++
//===----------------------------------------------------------------------===//

namespace {

bool isIdentifier(const std::string &name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string bytesArray(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 5 + bytes.size() / 16 * 4);
  char buffer[8];
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i % 20 == 0)
      out += "\n   ";
    std::snprintf(buffer, sizeof(buffer), " %u,",
                  static_cast<unsigned char>(bytes[i]));
    out += buffer;
  }
  return out;
}

std::string hex32(uint32_t value) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "0x%08xu", value);
  return buffer;
}

// Each kernel's description and each cubin's compile json as code that
// builds them (CppSource.h), behind the table's accessors kernel_<i>() and
// metadata_<i>(). What cannot be read is a corrupt bundle.
Result<std::string> emitPreparedObjects(const KernelBundle &bundle) {
  std::string out = "namespace {\n\n";
  for (size_t i = 0; i < bundle.kernels().size(); ++i) {
    const BundleKernel &kernel = bundle.kernels()[i];
    Result<KernelDescription> description =
        KernelDescription::fromJson(kernel.descriptionJson);
    if (!description)
      return description.status().withContext(bundle.origin() + ": kernel '" +
                                              kernel.name + "'");
    std::string build = "build_kernel_" + std::to_string(i);
    out += description->toCpp(build) + "const void *kernel_" +
           std::to_string(i) + "(void) { return &" + build + "(); }\n\n";
  }
  for (size_t i = 0; i < bundle.cubins().size(); ++i) {
    const BundleCubin &cubin = bundle.cubins()[i];
    Result<CompileMetadata> metadata = CompileMetadata::parse(cubin.metadataJson);
    if (!metadata)
      return metadata.status().withContext(bundle.origin() + ": cubins[" +
                                           std::to_string(i) + "]");
    std::string build = "build_metadata_" + std::to_string(i);
    out += metadata->toCpp(build) + "const void *metadata_" +
           std::to_string(i) + "(void) { return &" + build + "(); }\n\n";
  }
  return out + "} // namespace\n\n";
}

} // namespace

Result<EmbeddedSource> emitEmbeddedBundle(const KernelBundle &bundle,
                                          const std::string &name) {
  if (!isIdentifier(name))
    return Status::error("the bundle name '" + name +
                         "' must be a C identifier");
  for (const BundleKernel &kernel : bundle.kernels())
    if (!isIdentifier(kernel.name))
      return Status::error("kernel '" + kernel.name +
                           "' is no C identifier, so it has no lookup function");
  EmbeddedSource out;
  std::string guard = "TILEC_BUNDLE_" + name + "_H";
  std::transform(guard.begin(), guard.end(), guard.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  std::string summary = "/* Generated by `tilec bundle emit-cpp` from " +
                        bundle.origin() + ": " +
                        std::to_string(bundle.cubins().size()) + " cubins, " +
                        std::to_string(bundle.selections().size()) +
                        " selections. Do not edit. */\n";
  out.header = summary + "#ifndef " + guard + "\n#define " + guard +
               "\n\n#include \"tilec/runtime/EmbeddedBundle.h\"\n\n"
               "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
               "/* The whole bundle, for tilec::rt::KernelBundle::fromEmbedded. */\n"
               "const tilec_embedded_bundle *" +
               name + "_bundle(void);\n\n";
  out.source = summary + "#include \"" + name + ".h\"\n\n" +
               "#include \"tilec/contract/CompileMetadata.h\"\n"
               "#include \"tilec/contract/KernelDescription.h\"\n\n"
               "#include <cstdint>\n#include <limits>\n#include <string.h>\n"
               "#include <string>\n"
               "#include <utility>\n\n";
  Result<std::string> prepared = emitPreparedObjects(bundle);
  if (!prepared)
    return prepared.status();
  out.source += *prepared;
  for (size_t i = 0; i < bundle.cubins().size(); ++i)
    out.source += "alignas(64) static const unsigned char cubin_" +
                  std::to_string(i) + "[] = {" +
                  bytesArray(bundle.cubins()[i].bytes) + "\n};\n\n";
  out.source += "static const tilec_embedded_kernel kernels[] = {\n";
  for (const BundleKernel &kernel : bundle.kernels())
    out.source += "  {" + cppStringLiteral(kernel.name) + ",\n   " +
                  cppStringLiteral(kernel.descriptionJson) + ",\n   kernel_" +
                  std::to_string(&kernel - bundle.kernels().data()) + "},\n";
  out.source += "};\n\nstatic const tilec_embedded_cubin cubins[] = {\n";
  for (size_t i = 0; i < bundle.cubins().size(); ++i) {
    const BundleCubin &cubin = bundle.cubins()[i];
    out.source += "  {" + cppStringLiteral(cubin.kernel) + ", " + cppStringLiteral(cubin.config) +
                  ", " + cppStringLiteral(cubin.specialization) + ", " +
                  cppStringLiteral(cubin.target) + ",\n   " + cppStringLiteral(cubin.cubinKey) +
                  ",\n   " + cppStringLiteral(cubin.metadataJson) +
                  ", metadata_" + std::to_string(i) + ",\n   cubin_" +
                  std::to_string(i) + ", " + std::to_string(cubin.bytes.size()) +
                  "ull, " + hex32(cubin.crc32c) + "},\n";
  }
  // The selections in the bundle's order (KernelBundle::fromEmbedded must
  // see what the file holds), and an index of them grouped by kernel and
  // sorted by key, then position, for each kernel's lookup.
  out.source += "};\n\nstatic const tilec_embedded_selection selections[] = {\n";
  for (const BundleSelection &s : bundle.selections()) {
    char median[32];
    std::snprintf(median, sizeof(median), "%.17g", s.medianUs);
    out.source += "  {" + cppStringLiteral(s.device) + ", " + cppStringLiteral(s.target) + ", " +
                  cppStringLiteral(s.kernel) + ",\n   " + cppStringLiteral(s.key) + ", " +
                  std::to_string(s.cubin) + ", " + median + "},\n";
  }
  if (bundle.selections().empty())
    out.source += "  {0, 0, 0, 0, 0, 0},\n";
  std::vector<size_t> order(bundle.selections().size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  auto sortKey = [&](size_t i) {
    const BundleSelection &s = bundle.selections()[i];
    return std::tie(s.kernel, s.key, i);
  };
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return sortKey(a) < sortKey(b); });
  out.source += "};\n\nstatic const unsigned int by_kernel_and_key[] = {";
  std::map<std::string, std::pair<size_t, size_t>> ranges;
  for (size_t at = 0; at < order.size(); ++at) {
    auto range =
        ranges.emplace(bundle.selections()[order[at]].kernel, std::pair{at, at})
            .first;
    range->second.second = at + 1;
    out.source += (at % 16 == 0 ? "\n   " : "") + std::string(" ") +
                  std::to_string(order[at]) + ",";
  }
  if (order.empty())
    out.source += "0";
  const size_t selectionCount = order.size();
  out.source +=
      "\n};\n\nstatic const tilec_embedded_bundle bundle = {\n"
      "  TILEC_EMBEDDED_BUNDLE_VERSION, " +
      cppStringLiteral(name) + ", " + cppStringLiteral(bundle.createdAt()) + ",\n  " +
      cppStringLiteral(bundle.packedBy()) + ",\n  kernels, " +
      std::to_string(bundle.kernels().size()) + ", cubins, " +
      std::to_string(bundle.cubins().size()) + ", selections, " +
      std::to_string(selectionCount) + "};\n\nconst tilec_embedded_bundle *" +
      name + "_bundle(void) { return &bundle; }\n\n"
      "/* Of by_kernel_and_key[first, end), the selection with `key` tuned on\n"
      "   `device`, else the first of that key in the bundle's order. */\n"
      "static const tilec_embedded_selection *\n"
      "find(unsigned first, unsigned end, const char *device, "
      "const char *key) {\n"
      "  const tilec_embedded_selection *any = 0;\n"
      "  unsigned last = end;\n"
      "  while (first < last) {\n"
      "    unsigned middle = first + (last - first) / 2;\n"
      "    if (strcmp(selections[by_kernel_and_key[middle]].key, key) < 0)\n"
      "      first = middle + 1;\n"
      "    else\n"
      "      last = middle;\n"
      "  }\n"
      "  for (; first < end; ++first) {\n"
      "    const tilec_embedded_selection *s = &selections[by_kernel_and_key[first]];\n"
      "    if (strcmp(s->key, key) != 0)\n"
      "      break;\n"
      "    if (!any)\n"
      "      any = s;\n"
      "    if (strcmp(s->device, device) == 0)\n"
      "      return s;\n"
      "  }\n"
      "  return any;\n"
      "}\n";
  for (const BundleKernel &kernel : bundle.kernels()) {
    auto range = ranges.count(kernel.name) ? ranges[kernel.name]
                                           : std::pair<size_t, size_t>{0, 0};
    std::string signature = "const tilec_embedded_selection *" + name +
                            "_find_" + kernel.name +
                            "(const char *device, const char *key)";
    out.header += "/* The winner of " + kernel.name +
                  " for `key` (the autotune key with its specialization) on "
                  "`device`, else on another device of the bundle; NULL when "
                  "there is none. */\n" +
                  signature + ";\n";
    out.source += "\n" + signature + " {\n  return find(" +
                  std::to_string(range.first) + ", " +
                  std::to_string(range.second) + ", device, key);\n}\n";
  }
  out.header += "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* " + guard + " */\n";
  return out;
}

} // namespace tilec::rt
