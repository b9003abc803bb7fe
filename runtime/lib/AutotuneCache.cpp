//===- AutotuneCache.cpp - Persistent autotuning results ------------------===//
//
// nlohmann::json without exceptions (the runtime is built -fno-exceptions):
// every value is type-checked before it is read, since an accessor on the
// wrong type would abort.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/AutotuneCache.h"

#include "ReadFile.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tilec::rt {
namespace {

using Json = nlohmann::ordered_json;

std::string errnoText() { return std::strerror(errno); }

std::string homeDirectory() {
  if (const char *env = std::getenv("HOME"); env && *env)
    return env;
  struct passwd entry;
  struct passwd *found = nullptr;
  char buffer[4096];
  if (::getpwuid_r(::getuid(), &entry, buffer, sizeof(buffer), &found) == 0 &&
      found && found->pw_dir && *found->pw_dir)
    return found->pw_dir;
  return "";
}

// mkdir -p of the directory part of `path`.
Status makeParentDirectories(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0)
    return Status::success();
  std::string directory = path.substr(0, slash);
  for (size_t pos = 1; pos <= directory.size(); ++pos) {
    if (pos != directory.size() && directory[pos] != '/')
      continue;
    std::string prefix = directory.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return Status::error("cannot create directory " + prefix + ": " +
                           errnoText());
  }
  return Status::success();
}

// An exclusive flock on a sidecar file, held for the object's lifetime. The
// lock file is never removed: removing it would let a second writer lock a
// new file while a first still holds the old one.
class FileLock {
public:
  static Result<std::unique_ptr<FileLock>> acquire(const std::string &path) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      return Status::error("cannot open lock file " + path + ": " +
                           errnoText());
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno == EINTR)
        continue;
      Status status =
          Status::error("cannot lock " + path + ": " + errnoText());
      ::close(fd);
      return status;
    }
    return std::unique_ptr<FileLock>(new FileLock(fd));
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }

private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

Status writeAll(int fd, const std::string &data, const std::string &path) {
  size_t written = 0;
  while (written < data.size()) {
    ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return Status::error("cannot write " + path + ": " + errnoText());
    }
    written += static_cast<size_t>(n);
  }
  return Status::success();
}

// Writes `contents` to a temporary file next to `path`, fsyncs it and renames
// it over `path`.
Status replaceFile(const std::string &path, const std::string &contents) {
  static std::atomic<unsigned> counter{0};
  std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." +
                     std::to_string(counter++);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::error("cannot create " + temp + ": " + errnoText());
  Status status = writeAll(fd, contents, temp);
  // fsync before the rename: after a crash the name then points at the whole
  // new file or the old one.
  if (status.ok() && ::fsync(fd) != 0)
    status = Status::error("cannot fsync " + temp + ": " + errnoText());
  ::close(fd);
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0)
    status = Status::error("cannot rename " + temp + " to " + path + ": " +
                           errnoText());
  if (!status.ok())
    ::unlink(temp.c_str());
  return status;
}

//===----------------------------------------------------------------------===//
// JSON <-> entries
//===----------------------------------------------------------------------===//

const Json *member(const Json &object, const char *name) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

std::string getString(const Json &object, const char *name) {
  const Json *value = member(object, name);
  return value && value->is_string() ? value->get<std::string>() : "";
}

double getNumber(const Json &object, const char *name, double fallback = 0) {
  const Json *value = member(object, name);
  return value && value->is_number() ? value->get<double>() : fallback;
}

int64_t getInteger(const Json &object, const char *name, int64_t fallback) {
  const Json *value = member(object, name);
  return value && value->is_number_integer() ? value->get<int64_t>()
                                              : fallback;
}

Json encodeDeclaration(const KernelDescription &declaration) {
  Json json = Json::object();
  json["key"] = Json::array();
  for (const AutotuneKeyDecl &entry : declaration.key) {
    Json item = {{"name", entry.name}};
    if (!entry.derivation.empty())
      item["derivation"] = entry.derivation;
    json["key"].push_back(item);
  }
  json["grid"] = declaration.grid;
  json["param_defaults"] = Json::object();
  for (const auto &[name, value] : declaration.paramDefaults)
    json["param_defaults"][name] = value;
  json["type_defaults"] = Json::object();
  for (const auto &[name, value] : declaration.typeDefaults)
    json["type_defaults"][name] = value;
  json["derived_params"] = Json::object();
  for (const auto &[name, value] : declaration.derivedParams)
    json["derived_params"][name] = value;
  return json;
}

KernelDescription decodeDeclaration(const Json &json) {
  KernelDescription declaration;
  if (const Json *key = member(json, "key"); key && key->is_array())
    for (const Json &item : *key)
      if (item.is_object() && !getString(item, "name").empty())
        declaration.key.push_back(
            {getString(item, "name"), getString(item, "derivation")});
  if (const Json *grid = member(json, "grid"); grid && grid->is_array())
    for (const Json &axis : *grid)
      if (axis.is_string())
        declaration.grid.push_back(axis.get<std::string>());
  if (const Json *defaults = member(json, "param_defaults");
      defaults && defaults->is_object())
    for (auto it = defaults->begin(); it != defaults->end(); ++it)
      if (it->is_number_integer())
        declaration.paramDefaults[it.key()] = it->get<int64_t>();
  if (const Json *defaults = member(json, "type_defaults");
      defaults && defaults->is_object())
    for (auto it = defaults->begin(); it != defaults->end(); ++it)
      if (it->is_string())
        declaration.typeDefaults[it.key()] = it->get<std::string>();
  if (const Json *derived = member(json, "derived_params");
      derived && derived->is_object())
    for (auto it = derived->begin(); it != derived->end(); ++it)
      if (it->is_string())
        declaration.derivedParams[it.key()] = it->get<std::string>();
  return declaration;
}

Json encodeTiming(const ConfigTiming &timing) {
  Json json = {{"config", timing.config}, {"status", timing.status}};
  if (!timing.reason.empty())
    json["reason"] = timing.reason;
  if (timing.status == "ok") {
    json["median_us"] = timing.medianUs;
    json["p20_us"] = timing.p20Us;
    json["p80_us"] = timing.p80Us;
    json["min_us"] = timing.minUs;
    json["reps"] = timing.repetitions;
  }
  if (timing.registers >= 0)
    json["registers"] = timing.registers;
  if (timing.sharedBytes >= 0)
    json["shared_bytes"] = timing.sharedBytes;
  if (timing.spillBytes > 0)
    json["spill_bytes"] = timing.spillBytes;
  json["compile_ms"] = timing.compileMs;
  return json;
}

ConfigTiming decodeTiming(const Json &json) {
  ConfigTiming timing;
  timing.config = getString(json, "config");
  timing.status = getString(json, "status");
  if (timing.status.empty())
    timing.status = "ok";
  timing.reason = getString(json, "reason");
  timing.medianUs = getNumber(json, "median_us");
  timing.p20Us = getNumber(json, "p20_us");
  timing.p80Us = getNumber(json, "p80_us");
  timing.minUs = getNumber(json, "min_us");
  timing.repetitions = static_cast<int>(getInteger(json, "reps", 0));
  timing.registers = static_cast<int>(getInteger(json, "registers", -1));
  timing.sharedBytes = getInteger(json, "shared_bytes", -1);
  timing.spillBytes = getInteger(json, "spill_bytes", 0);
  timing.compileMs = getNumber(json, "compile_ms");
  return timing;
}

Json encodeEntryJson(const AutotuneEntry &entry) {
  Json json = Json::object();
  json["config"] = entry.config;
  json["timings"] = Json::array();
  for (const ConfigTiming &timing : entry.timings)
    json["timings"].push_back(encodeTiming(timing));
  json["tuned_at"] = entry.tunedAt;
  json["budget_ms"] = entry.budgetMs;
  if (!entry.compilerId.empty())
    json["compiler_id"] = entry.compilerId;
  Json kernel = Json::object();
  kernel["target"] = entry.target;
  if (!entry.cubinKey.empty())
    kernel["cubin_key"] = entry.cubinKey;
  if (!entry.metadataJson.empty()) {
    // Stored as an object (readable, diffable); text that is not JSON is kept
    // as a string rather than lost.
    Json metadata =
        Json::parse(entry.metadataJson, nullptr, /*allow_exceptions=*/false);
    if (metadata.is_discarded())
      kernel["metadata"] = entry.metadataJson;
    else
      kernel["metadata"] = std::move(metadata);
  }
  json["kernel"] = std::move(kernel);
  json["declaration"] = encodeDeclaration(entry.declaration);
  return json;
}

Result<AutotuneEntry> decodeEntryJson(const Json &json) {
  if (!json.is_object())
    return Status::error("an entry must be an object");
  AutotuneEntry entry;
  entry.config = getString(json, "config");
  if (entry.config.empty())
    return Status::error("the entry has no \"config\" string");
  if (const Json *timings = member(json, "timings");
      timings && timings->is_array())
    for (const Json &timing : *timings)
      if (timing.is_object())
        entry.timings.push_back(decodeTiming(timing));
  entry.tunedAt = getString(json, "tuned_at");
  entry.budgetMs = getNumber(json, "budget_ms");
  entry.compilerId = getString(json, "compiler_id");
  if (const Json *kernel = member(json, "kernel")) {
    entry.target = getString(*kernel, "target");
    entry.cubinKey = getString(*kernel, "cubin_key");
    if (const Json *metadata = member(*kernel, "metadata")) {
      if (metadata->is_string())
        entry.metadataJson = metadata->get<std::string>();
      else if (metadata->is_object())
        entry.metadataJson = metadata->dump();
    }
  }
  if (const Json *declaration = member(json, "declaration"))
    entry.declaration = decodeDeclaration(*declaration);
  return entry;
}

// Reads `path` into a JSON object; a missing file is an empty object. The
// error says what is wrong with the file.
Result<Json> readCacheFile(const std::string &path, bool &exists) {
  exists = detail::fileExists(path);
  if (!exists)
    return Json::object();
  Result<std::string> text = detail::readFile(path);
  if (!text)
    return text.status();
  if (text->empty())
    return Json::object();
  Json json = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return Status::error(path + " is not valid JSON");
  if (!json.is_object())
    return Status::error(path + " must hold a JSON object (device -> kernel "
                                "-> key -> entry)");
  return json;
}

} // namespace

AutotuneCache::AutotuneCache(std::string path) : path_(std::move(path)) {}

std::string AutotuneCache::defaultPath() {
  if (const char *path = std::getenv("TILEC_AUTOTUNE_CACHE"); path && *path)
    return path;
  std::string home = homeDirectory();
  if (home.empty())
    return "/tmp/tilec-" + std::to_string(::getuid()) +
           "/autotune_cache.json";
  return home + "/.tilec/autotune_cache.json";
}

std::string AutotuneCache::encodeEntry(const AutotuneEntry &entry) {
  return encodeEntryJson(entry).dump(2);
}

Result<AutotuneEntry> AutotuneCache::decodeEntry(const std::string &json) {
  Json parsed = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded())
    return Status::error("an autotune entry is not valid JSON");
  return decodeEntryJson(parsed);
}

namespace {

// Fills `entries` from the file's JSON; problems go to `warnings`.
void decodeAll(const Json &root,
               std::map<std::string, AutotuneCache::KernelMap> &entries,
               std::vector<std::string> &warnings, const std::string &path) {
  entries.clear();
  for (auto device = root.begin(); device != root.end(); ++device) {
    if (!device->is_object()) {
      warnings.push_back(path + ": device '" + device.key() +
                         "' is not an object; ignored");
      continue;
    }
    for (auto kernel = device->begin(); kernel != device->end(); ++kernel) {
      if (!kernel->is_object()) {
        warnings.push_back(path + ": " + device.key() + "/" + kernel.key() +
                           " is not an object; ignored");
        continue;
      }
      for (auto key = kernel->begin(); key != kernel->end(); ++key) {
        Result<AutotuneEntry> entry = decodeEntryJson(*key);
        if (!entry) {
          warnings.push_back(path + ": entry " + device.key() + "/" +
                             kernel.key() + "/" + key.key() + ": " +
                             entry.message() + "; ignored");
          continue;
        }
        entries[device.key()][kernel.key()][key.key()] = std::move(*entry);
      }
    }
  }
}

} // namespace

Status AutotuneCache::load() {
  warnings_.clear();
  bool exists = false;
  Result<Json> root = readCacheFile(path_, exists);
  if (!root)
    return root.status().withContext("autotune cache");
  decodeAll(*root, entries_, warnings_, path_);
  return Status::success();
}

const AutotuneEntry *AutotuneCache::find(const std::string &device,
                                         const std::string &kernel,
                                         const std::string &key) const {
  auto d = entries_.find(device);
  if (d == entries_.end())
    return nullptr;
  auto k = d->second.find(kernel);
  if (k == d->second.end())
    return nullptr;
  auto e = k->second.find(key);
  return e == k->second.end() ? nullptr : &e->second;
}

const KernelDescription *
AutotuneCache::findDeclaration(const std::string &device,
                               const std::string &kernel) const {
  auto d = entries_.find(device);
  if (d == entries_.end())
    return nullptr;
  auto k = d->second.find(kernel);
  if (k == d->second.end())
    return nullptr;
  for (const auto &[key, entry] : k->second)
    if (!entry.declaration.key.empty() && !entry.declaration.grid.empty())
      return &entry.declaration;
  return nullptr;
}

Status AutotuneCache::store(const std::string &device,
                            const std::string &kernel, const std::string &key,
                            const AutotuneEntry &entry) {
  auto fail = [&](const Status &status) {
    return status.withContext("cannot store into the autotune cache " + path_);
  };
  if (Status status = makeParentDirectories(path_); !status.ok())
    return fail(status);
  Result<std::unique_ptr<FileLock>> lock = FileLock::acquire(path_ + ".lock");
  if (!lock)
    return fail(lock.status());

  // Under the lock: what is on disk now is the latest, whoever wrote it.
  bool exists = false;
  Result<Json> root = readCacheFile(path_, exists);
  if (!root) {
    // Never overwrite a file we cannot read: keep it for a human to look at.
    std::string aside = path_ + ".corrupt";
    if (::rename(path_.c_str(), aside.c_str()) != 0)
      return fail(Status::error(root.message() + ", and moving it to " +
                                aside + " failed: " + errnoText()));
    warnings_.push_back(root.message() + "; moved to " + aside +
                        " and started a new cache");
    root = Json::object();
  }
  Json &deviceJson = (*root)[device];
  if (!deviceJson.is_object())
    deviceJson = Json::object();
  Json &kernelJson = deviceJson[kernel];
  if (!kernelJson.is_object())
    kernelJson = Json::object();
  kernelJson[key] = encodeEntryJson(entry);

  if (Status status = replaceFile(path_, root->dump(2) + "\n"); !status.ok())
    return fail(status);
  decodeAll(*root, entries_, warnings_, path_);
  return Status::success();
}

} // namespace tilec::rt
