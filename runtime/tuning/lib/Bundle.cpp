//===- Bundle.cpp - Exactly the winning cubins, shipped -------------------===//
//
// nlohmann::json without exceptions (the runtime is built -fno-exceptions):
// every value is type-checked before it is read.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/Bundle.h"
#include "tilec/contract/JsonError.h"

#include "tilec/contract/CompileMetadata.h"
#include "tilec/runtime/Crc32c.h"
#include "tilec/runtime/FileIO.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace tilec::rt {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kMagic = "tilec-bundle";
constexpr int kFormatVersion = 1;
// The header line is short; a file whose first line is longer is no bundle.
constexpr size_t kMaxHeaderBytes = 256;

std::string hex32(uint32_t value) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "%08x", value);
  return buffer;
}

std::string describeCubin(const BundleCubin &cubin) {
  return cubin.kernel + " " + cubin.config +
         (cubin.specialization.empty() ? "" : " [" + cubin.specialization + "]") +
         " " + cubin.target;
}

Json buildManifest(const std::string &createdAt, const std::string &packedBy,
                   const std::vector<BundleKernel> &kernels,
                   const std::vector<BundleCubin> &cubins,
                   const std::vector<BundleSelection> &selections) {
  Json manifest = {{"format", kMagic},
                   {"version", kFormatVersion},
                   {"created_at", createdAt},
                   {"packed_by", packedBy}};
  Json kernelList = Json::array();
  for (const BundleKernel &kernel : kernels)
    kernelList.push_back(
        {{"name", kernel.name},
         {"description", Json::parse(kernel.descriptionJson, nullptr, false)}});
  manifest["kernels"] = std::move(kernelList);
  Json cubinList = Json::array();
  uint64_t offset = 0;
  for (const BundleCubin &cubin : cubins) {
    cubinList.push_back(
        {{"kernel", cubin.kernel},
         {"config", cubin.config},
         {"specialization", cubin.specialization},
         {"target", cubin.target},
         {"cubin_key", cubin.cubinKey},
         {"offset", offset},
         {"bytes", cubin.bytes.size()},
         {"crc32c", hex32(cubin.crc32c)},
         {"metadata", Json::parse(cubin.metadataJson, nullptr, false)}});
    offset += cubin.bytes.size();
  }
  manifest["cubins"] = std::move(cubinList);
  Json selectionList = Json::array();
  for (const BundleSelection &selection : selections)
    selectionList.push_back({{"device", selection.device},
                             {"target", selection.target},
                             {"kernel", selection.kernel},
                             {"key", selection.key},
                             {"cubin", selection.cubin},
                             {"config", cubins[selection.cubin].config},
                             {"median_us", selection.medianUs}});
  manifest["selections"] = std::move(selectionList);
  return manifest;
}

//===----------------------------------------------------------------------===//
// Reading a manifest
//===----------------------------------------------------------------------===//

// Reads the fields of one manifest object, recording the first problem with
// the object's path ("cubins[3].crc32c").
class FieldReader {
public:
  FieldReader(const Json &object, std::string path, std::string &error)
      : object_(object), path_(std::move(path)), error_(error) {
    if (!object.is_object())
      fail("", "must be an object");
  }
  std::string string(const char *name) {
    const Json *value = find(name);
    if (!value)
      return "";
    if (!value->is_string())
      return fail(name, "must be a string"), "";
    return value->get<std::string>();
  }
  uint64_t unsignedInteger(const char *name) {
    const Json *value = find(name);
    if (!value)
      return 0;
    if (!value->is_number_unsigned())
      return fail(name, "must be a non-negative integer"), 0;
    return value->get<uint64_t>();
  }
  double number(const char *name) {
    const Json *value = find(name);
    if (!value)
      return 0;
    if (!value->is_number())
      return fail(name, "must be a number"), 0;
    return value->get<double>();
  }
  // An object member, returned as its JSON text.
  std::string objectText(const char *name) {
    const Json *value = find(name);
    if (!value)
      return "";
    if (!value->is_object())
      return fail(name, "must be an object"), "";
    return value->dump();
  }
  void fail(const std::string &name, const std::string &why) {
    if (error_.empty())
      error_ = path_ + (name.empty() ? "" : "." + name) + " " + why;
  }

private:
  const Json *find(const char *name) {
    if (!object_.is_object())
      return nullptr;
    auto it = object_.find(name);
    if (it == object_.end()) {
      fail(name, "is missing");
      return nullptr;
    }
    return &*it;
  }
  const Json &object_;
  std::string path_;
  std::string &error_;
};

const Json *arrayMember(const Json &manifest, const char *name,
                        std::string &error) {
  auto it = manifest.find(name);
  if (it == manifest.end() || !it->is_array()) {
    if (error.empty())
      error = std::string("'") + name + "' must be an array";
    return nullptr;
  }
  return &*it;
}

// Checks that a compile json names the cubin's kernel and target; the rest of
// it is read (CompileMetadata::parse) when the cubin is loaded.
Status checkCubinMetadata(const BundleCubin &cubin, const Json &metadata,
                          size_t index) {
  std::string where = "cubins[" + std::to_string(index) + "] (" +
                      describeCubin(cubin) + ")";
  auto field = [&](const char *name) {
    auto it = metadata.find(name);
    return it != metadata.end() && it->is_string() ? it->get<std::string>()
                                                   : std::string("?");
  };
  if (field("name") != cubin.kernel)
    return Status::error(where + ": the compile json is of kernel '" +
                         field("name") + "'");
  if (field("target") != cubin.target)
    return Status::error(where + ": the compile json is for " +
                         field("target"));
  return Status::success();
}

struct Header {
  size_t headerBytes = 0;
  uint64_t manifestBytes = 0;
  uint64_t payloadBytes = 0;
  std::string manifestCrc32c;
};

Result<Header> parseHeader(std::string_view bytes) {
  size_t newline = bytes.substr(0, kMaxHeaderBytes).find('\n');
  if (bytes.substr(0, kMagic.size()) != kMagic || newline == std::string::npos)
    return Status::error("not a tilec bundle (no 'tilec-bundle' header line)");
  std::istringstream line(std::string(bytes.substr(0, newline)));
  std::string magic, rest;
  int version = 0;
  Header header;
  line >> magic >> version >> header.manifestBytes >> header.payloadBytes >>
      header.manifestCrc32c;
  if (!line || (line >> rest))
    return Status::error("the header line '" +
                         std::string(bytes.substr(0, newline)) +
                         "' does not read 'tilec-bundle <version> "
                         "<manifest-bytes> <payload-bytes> <crc32c>'");
  if (version != kFormatVersion)
    return Status::error("bundle format version " + std::to_string(version) +
                         ", this runtime reads version " +
                         std::to_string(kFormatVersion));
  header.headerBytes = newline + 1;
  uint64_t expected =
      header.headerBytes + header.manifestBytes + header.payloadBytes;
  if (header.manifestBytes > bytes.size() ||
      header.payloadBytes > bytes.size() || expected != bytes.size())
    return Status::error(
        "the header says " + std::to_string(expected) +
        " bytes, the file has " + std::to_string(bytes.size()) + " bytes" +
        (expected > bytes.size() ? " (truncated)" : " (trailing bytes)"));
  return header;
}

} // namespace

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::string KernelBundle::encode(const Contents &contents) {
  std::vector<BundleCubin> cubins = contents.cubins;
  std::string payload;
  for (size_t i = 0; i < cubins.size(); ++i) {
    const std::string &bytes = contents.cubinBytes[i];
    cubins[i].crc32c = crc32c(bytes.data(), bytes.size());
    cubins[i].bytes = bytes;
    payload += bytes;
  }
  std::string manifest =
      buildManifest(contents.createdAt, contents.packedBy, contents.kernels,
                    cubins, contents.selections)
          .dump(1) +
      "\n";
  std::string header = std::string(kMagic) + " " +
                       std::to_string(kFormatVersion) + " " +
                       std::to_string(manifest.size()) + " " +
                       std::to_string(payload.size()) + " " +
                       hex32(crc32c(manifest.data(), manifest.size())) + "\n";
  return header + manifest + payload;
}

std::string KernelBundle::manifestJson() const {
  return buildManifest(createdAt_, packedBy_, kernels(), cubins(), selections())
             .dump(1) +
         "\n";
}

uint64_t KernelBundle::cubinBytesTotal() const {
  uint64_t total = 0;
  for (const BundleCubin &cubin : cubins())
    total += cubin.bytes.size();
  return total;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

Result<std::shared_ptr<const KernelBundle>>
KernelBundle::open(const std::string &path) {
  Result<std::string> bytes = readFile(path);
  if (!bytes)
    return bytes.status().withContext("bundle " + path);
  return decode(std::move(*bytes), path);
}

Result<std::shared_ptr<const KernelBundle>>
KernelBundle::decode(std::string bytes, const std::string &origin) {
  std::shared_ptr<KernelBundle> bundle(new KernelBundle());
  bundle->origin_ = "bundle " + origin;
  auto fail = [&](const std::string &why) {
    return Status::error(bundle->origin_ + ": " + why);
  };
  bundle->storage_ = std::move(bytes);
  const std::string &storage = bundle->storage_;
  bundle->fileBytes_ = storage.size();
  Result<Header> header = parseHeader(storage);
  if (!header)
    return fail(header.message());
  std::string_view manifestText(storage.data() + header->headerBytes,
                                header->manifestBytes);
  if (hex32(crc32c(manifestText.data(), manifestText.size())) !=
      header->manifestCrc32c)
    return fail("the manifest's CRC-32C does not match the header (the file "
                "is corrupt)");
  std::string_view payload(storage.data() + header->headerBytes +
                               header->manifestBytes,
                           header->payloadBytes);
  if (std::string deep = jsonNestingError(manifestText); !deep.empty())
    return fail("the manifest " + deep);
  Json manifest = Json::parse(manifestText, nullptr, false);
  if (manifest.is_discarded() || !manifest.is_object())
    return fail("the manifest is not a JSON object");
  std::string error;
  FieldReader top(manifest, "manifest", error);
  if (top.string("format") != kMagic)
    return fail("the manifest's format is not 'tilec-bundle'");
  bundle->createdAt_ = top.string("created_at");
  bundle->packedBy_ = top.string("packed_by");

  if (const Json *kernels = arrayMember(manifest, "kernels", error))
    for (size_t i = 0; i < kernels->size(); ++i) {
      FieldReader field((*kernels)[i], "kernels[" + std::to_string(i) + "]",
                        error);
      bundle->kernels_.push_back(
          {field.string("name"), field.objectText("description")});
    }
  uint64_t offset = 0;
  if (const Json *cubins = arrayMember(manifest, "cubins", error))
    for (size_t i = 0; i < cubins->size() && error.empty(); ++i) {
      FieldReader field((*cubins)[i], "cubins[" + std::to_string(i) + "]",
                        error);
      BundleCubin cubin;
      cubin.kernel = field.string("kernel");
      cubin.config = field.string("config");
      cubin.specialization = field.string("specialization");
      cubin.target = field.string("target");
      cubin.cubinKey = field.string("cubin_key");
      cubin.metadataJson = field.objectText("metadata");
      uint64_t at = field.unsignedInteger("offset");
      uint64_t size = field.unsignedInteger("bytes");
      std::string crc = field.string("crc32c");
      if (!error.empty())
        break;
      if (at != offset || size > payload.size() - offset)
        return fail("cubins[" + std::to_string(i) + "] spans bytes " +
                    std::to_string(at) + ".." + std::to_string(at + size) +
                    ", the next free byte of the " +
                    std::to_string(payload.size()) + "-byte payload is " +
                    std::to_string(offset));
      cubin.bytes = payload.substr(offset, size);
      offset += size;
      cubin.crc32c = static_cast<uint32_t>(std::strtoul(crc.c_str(), nullptr, 16));
      uint32_t actual = crc32c(cubin.bytes.data(), cubin.bytes.size());
      if (crc.size() != 8 || hex32(cubin.crc32c) != crc || actual != cubin.crc32c)
        return fail("cubins[" + std::to_string(i) + "] (" +
                    describeCubin(cubin) + ") has CRC-32C " + hex32(actual) +
                    ", the manifest says '" + crc + "' (the file is corrupt)");
      if (Status status =
              checkCubinMetadata(cubin, (*cubins)[i]["metadata"], i);
          !status.ok())
        return fail(status.message());
      cubin.index = bundle->cubins_.size();
      bundle->cubins_.push_back(std::move(cubin));
    }
  if (error.empty() && offset != payload.size())
    return fail("the cubins take " + std::to_string(offset) + " bytes of the " +
                std::to_string(payload.size()) + "-byte payload");
  if (const Json *selections = arrayMember(manifest, "selections", error))
    for (size_t i = 0; i < selections->size() && error.empty(); ++i) {
      std::string path = "selections[" + std::to_string(i) + "]";
      FieldReader field((*selections)[i], path, error);
      BundleSelection selection;
      selection.device = field.string("device");
      selection.target = field.string("target");
      selection.kernel = field.string("kernel");
      selection.key = field.string("key");
      selection.cubin = field.unsignedInteger("cubin");
      std::string config = field.string("config");
      selection.medianUs = field.number("median_us");
      if (!error.empty())
        break;
      if (selection.cubin >= bundle->cubins_.size())
        return fail(path + " names cubin " + std::to_string(selection.cubin) +
                    " of " + std::to_string(bundle->cubins_.size()));
      if (config != bundle->cubins_[selection.cubin].config)
        return fail(path + " (" + selection.kernel + " " + selection.key +
                    ") selects " + config + ", its cubin is of " +
                    bundle->cubins_[selection.cubin].config);
      bundle->selections_.push_back(std::move(selection));
    }
  if (!error.empty())
    return fail(error);
  bundle->verified_.assign(bundle->cubins_.size(), true);
  TILEC_RETURN_IF_ERROR(bundle->index());
  return std::shared_ptr<const KernelBundle>(std::move(bundle));
}

Result<std::shared_ptr<const KernelBundle>>
KernelBundle::fromEmbedded(const tilec_embedded_bundle &table) {
  std::shared_ptr<KernelBundle> bundle(new KernelBundle());
  bundle->origin_ =
      std::string("embedded bundle ") + (table.name ? table.name : "?");
  auto fail = [&](const std::string &why) {
    return Status::error(bundle->origin_ + ": " + why);
  };
  if (table.layout_version != TILEC_EMBEDDED_BUNDLE_VERSION)
    return fail("generated for table layout " +
                std::to_string(table.layout_version) + ", this runtime reads " +
                std::to_string(TILEC_EMBEDDED_BUNDLE_VERSION) +
                " (regenerate it with this tilec)");
  // Structure only, allocating nothing per entry: the lookups read the
  // table itself.
  for (unsigned i = 0; i < table.kernel_count; ++i)
    if (!table.kernels[i].name || !table.kernels[i].description_json)
      return fail("kernels[" + std::to_string(i) + "] has a null field");
  for (unsigned i = 0; i < table.cubin_count; ++i) {
    const tilec_embedded_cubin &entry = table.cubins[i];
    if (!entry.data || !entry.kernel || !entry.config || !entry.target ||
        !entry.metadata_json || !entry.specialization || !entry.cubin_key)
      return fail("cubins[" + std::to_string(i) + "] has a null field");
  }
  for (unsigned i = 0; i < table.selection_count; ++i) {
    const tilec_embedded_selection &entry = table.selections[i];
    if (entry.cubin >= table.cubin_count || !entry.kernel || !entry.key ||
        !entry.device || !entry.target)
      return fail("selections[" + std::to_string(i) + "] is malformed");
    if (std::strcmp(table.cubins[entry.cubin].kernel, entry.kernel) != 0)
      return fail("selections[" + std::to_string(i) + "] (" + entry.kernel +
                  ") names a cubin of " + table.cubins[entry.cubin].kernel);
  }
  auto text = [](const char *value) { return value ? value : ""; };
  bundle->createdAt_ = text(table.created_at);
  bundle->packedBy_ = text(table.packed_by);
  bundle->table_ = &table;
  bundle->verified_.assign(table.cubin_count, false);
  bundle->lazyCubins_.resize(table.cubin_count);
  bundle->lazySelections_.resize(table.selection_count);
  return std::shared_ptr<const KernelBundle>(std::move(bundle));
}

BundleCubin KernelBundle::embeddedCubin(size_t index) const {
  const tilec_embedded_cubin &entry = table_->cubins[index];
  BundleCubin cubin;
  cubin.index = index;
  cubin.kernel = entry.kernel;
  cubin.config = entry.config;
  cubin.specialization = entry.specialization;
  cubin.target = entry.target;
  cubin.cubinKey = entry.cubin_key;
  cubin.metadataJson = entry.metadata_json;
  if (entry.metadata)
    cubin.metadata = static_cast<const CompileMetadata *>(entry.metadata());
  cubin.crc32c = entry.crc32c;
  cubin.bytes = std::string_view(reinterpret_cast<const char *>(entry.data),
                                 static_cast<size_t>(entry.bytes));
  return cubin;
}

BundleSelection KernelBundle::embeddedSelection(size_t index) const {
  const tilec_embedded_selection &entry = table_->selections[index];
  return {entry.device, entry.target, entry.kernel,
          entry.key,    entry.cubin,  entry.median_us};
}

void KernelBundle::materialize() const {
  if (!table_)
    return;
  std::call_once(materialized_, [this] {
    for (unsigned i = 0; i < table_->kernel_count; ++i)
      kernels_.push_back(
          {table_->kernels[i].name, table_->kernels[i].description_json});
    for (unsigned i = 0; i < table_->cubin_count; ++i)
      cubins_.push_back(embeddedCubin(i));
    for (unsigned i = 0; i < table_->selection_count; ++i)
      selections_.push_back(embeddedSelection(i));
  });
}

const std::vector<BundleKernel> &KernelBundle::kernels() const {
  materialize();
  return kernels_;
}
const std::vector<BundleCubin> &KernelBundle::cubins() const {
  materialize();
  return cubins_;
}
const std::vector<BundleSelection> &KernelBundle::selections() const {
  materialize();
  return selections_;
}

const BundleCubin &KernelBundle::cubin(size_t index) const {
  if (!table_)
    return cubins_[index];
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<BundleCubin> &slot = lazyCubins_[index];
  if (!slot)
    slot = std::make_unique<BundleCubin>(embeddedCubin(index));
  return *slot;
}

const BundleSelection *KernelBundle::lazySelection(size_t index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<BundleSelection> &slot = lazySelections_[index];
  if (!slot)
    slot = std::make_unique<BundleSelection>(embeddedSelection(index));
  return slot.get();
}

namespace {
std::string cubinIndexKey(std::string_view kernel, std::string_view config,
                          std::string_view specialization,
                          std::string_view target) {
  std::string key;
  for (std::string_view part : {kernel, config, specialization, target})
    (key += part) += '\n';
  return key;
}
} // namespace

Status KernelBundle::index() {
  for (size_t i = 0; i < kernels_.size(); ++i)
    if (!kernelIndex_.emplace(kernels_[i].name, i).second)
      return Status::error(origin_ + ": kernel '" + kernels_[i].name +
                           "' is listed twice");
  for (size_t i = 0; i < cubins_.size(); ++i) {
    const BundleCubin &cubin = cubins_[i];
    if (!kernelIndex_.count(cubin.kernel))
      return Status::error(origin_ + ": cubins[" + std::to_string(i) +
                           "] is of kernel '" + cubin.kernel +
                           "', which the bundle does not describe");
    if (!cubinIndex_
             .emplace(cubinIndexKey(cubin.kernel, cubin.config,
                                    cubin.specialization, cubin.target),
                      i)
             .second)
      return Status::error(origin_ + ": two cubins of " + describeCubin(cubin));
  }
  for (size_t i = 0; i < selections_.size(); ++i) {
    const BundleSelection &selection = selections_[i];
    std::string key = cubinIndexKey(selection.device, selection.target,
                                    selection.kernel, selection.key);
    if (!selectionIndex_.emplace(key, i).second)
      return Status::error(origin_ + ": two selections of " + selection.kernel +
                           " " + selection.key + " on " + selection.device);
    // Another device of the same target: the first in the bundle's order.
    selectionIndex_.emplace(
        cubinIndexKey("", selection.target, selection.kernel, selection.key),
        i);
  }
  return Status::success();
}

Status KernelBundle::checkTarget(const std::string &target) const {
  if (table_)
    for (unsigned i = 0; i < table_->cubin_count; ++i)
      if (target == table_->cubins[i].target)
        return Status::success();
  std::string targets;
  for (const BundleCubin &cubin : cubins()) {
    if (cubin.target == target)
      return Status::success();
    if (targets.find(cubin.target) == std::string::npos)
      targets += (targets.empty() ? "" : ", ") + cubin.target;
  }
  return Status::error(origin_ + " holds cubins for " +
                       (targets.empty() ? std::string("no target") : targets) +
                       ", this device is " + target +
                       " (pack the workload on a GPU of this kind)");
}

const BundleCubin *KernelBundle::findCubin(const std::string &kernel,
                                           const std::string &config,
                                           const std::string &specialization,
                                           const std::string &target) const {
  if (table_) {
    for (unsigned i = 0; i < table_->cubin_count; ++i) {
      const tilec_embedded_cubin &entry = table_->cubins[i];
      if (kernel == entry.kernel && config == entry.config &&
          specialization == entry.specialization && target == entry.target)
        return &cubin(i);
    }
    return nullptr;
  }
  auto it =
      cubinIndex_.find(cubinIndexKey(kernel, config, specialization, target));
  return it == cubinIndex_.end() ? nullptr : &cubins_[it->second];
}

const BundleSelection *
KernelBundle::findSelection(const std::string &device,
                            const std::string &target,
                            const std::string &kernel,
                            const std::string &key) const {
  if (table_) {
    // The device's own winner, else the first of the target in the order.
    int other = -1;
    for (unsigned i = 0; i < table_->selection_count; ++i) {
      const tilec_embedded_selection &entry = table_->selections[i];
      if (kernel != entry.kernel || key != entry.key || target != entry.target)
        continue;
      if (device == entry.device)
        return lazySelection(i);
      if (other < 0)
        other = int(i);
    }
    return other < 0 ? nullptr : lazySelection(size_t(other));
  }
  for (const std::string &name : {device, std::string()}) {
    auto it = selectionIndex_.find(cubinIndexKey(name, target, kernel, key));
    if (it != selectionIndex_.end())
      return &selections_[it->second];
  }
  return nullptr;
}

Result<const KernelDescription *>
KernelBundle::description(const std::string &kernel) const {
  std::string_view json;
  if (table_) {
    for (unsigned i = 0; i < table_->kernel_count && json.empty(); ++i) {
      const tilec_embedded_kernel &entry = table_->kernels[i];
      if (kernel != entry.name)
        continue;
      // Compiled in: nothing to parse.
      if (entry.description)
        return static_cast<const KernelDescription *>(entry.description());
      json = entry.description_json;
    }
  } else if (auto listed = kernelIndex_.find(kernel);
             listed != kernelIndex_.end()) {
    json = kernels_[listed->second].descriptionJson;
  }
  if (json.empty())
    return static_cast<const KernelDescription *>(nullptr);
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<KernelDescription> &slot = descriptions_[kernel];
  if (!slot) {
    Result<KernelDescription> parsed = KernelDescription::fromJson(json);
    if (!parsed)
      return parsed.status().withContext(origin_ + ": the description of '" +
                                         kernel + "'");
    slot = std::make_unique<KernelDescription>(std::move(*parsed));
  }
  return static_cast<const KernelDescription *>(slot.get());
}

Result<std::string_view>
KernelBundle::cubinData(const BundleCubin &cubin) const {
  size_t index = cubin.index;
  if (index >= verified_.size())
    return Status::error(origin_ + ": not a cubin of this bundle");
  std::lock_guard<std::mutex> lock(mutex_);
  if (!verified_[index]) {
    uint32_t actual = crc32c(cubin.bytes.data(), cubin.bytes.size());
    if (actual != cubin.crc32c)
      return Status::error(origin_ + ": cubins[" + std::to_string(index) +
                           "] (" + describeCubin(cubin) + ") has CRC-32C " +
                           hex32(actual) + ", the table says " +
                           hex32(cubin.crc32c) + " (corrupt)");
    verified_[index] = true;
  }
  return cubin.bytes;
}

} // namespace tilec::rt
