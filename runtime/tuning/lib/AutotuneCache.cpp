//===- AutotuneCache.cpp - Persistent autotuning results ------------------===//
//
// nlohmann::json without exceptions (the runtime is built -fno-exceptions):
// every value is type-checked before it is read, since an accessor on the
// wrong type would abort.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/AutotuneCache.h"
#include "tilec/contract/JsonError.h"

#include "tilec/runtime/CounterFile.h"
#include "tilec/runtime/FileIO.h"
#include "tilec/runtime/StageCache.h"

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unistd.h>

namespace tilec::rt {
namespace {

using Json = nlohmann::ordered_json;

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
  return value && value->is_number_integer() ? value->get<int64_t>() : fallback;
}

// A stored description that does not parse is dropped with a warning: the
// entry still gives its config, and a process with a compiler describes the
// kernel itself.
std::optional<KernelDescription>
decodeDescription(const std::string &text, const std::string &entry,
                  std::vector<std::string> *warnings) {
  Result<KernelDescription> description = KernelDescription::fromJson(text);
  if (!description) {
    if (warnings)
      warnings->push_back(entry + ": " + description.message() +
                          "; the description is ignored");
    return std::nullopt;
  }
  return std::move(*description);
}

Json encodeTiming(const ConfigTiming &timing) {
  Json json = {{"config", timing.config}, {"status", timing.status}};
  if (!timing.reason.empty())
    json["reason"] = timing.reason;
  if (timing.timed()) {
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

// The fields of an entry's "tuning" object, and where each goes.
constexpr const char *kTuningTimeNames[] = {
    "started_unix_ms", "total_ms", "compile_ms", "inputs_ms", "benchmark_ms"};
void readTuningTime(AutotuneEntry::TuningTimes &times, std::string_view name,
                    double value) {
  if (!std::isfinite(value) || value < 0)
    return;
  if (name == "started_unix_ms")
    times.startedUnixMs = value;
  else if (name == "total_ms")
    times.totalMs = value;
  else if (name == "compile_ms")
    times.compileMs = value;
  else if (name == "inputs_ms")
    times.inputsMs = value;
  else if (name == "benchmark_ms")
    times.benchmarkMs = value;
}

Json encodeEntryJson(const AutotuneEntry &entry) {
  Json json = Json::object();
  json["config"] = entry.config;
  json["timings"] = Json::array();
  for (const ConfigTiming &timing : entry.timings)
    json["timings"].push_back(encodeTiming(timing));
  json["tuned_at"] = entry.tunedAt;
  json["budget_ms"] = entry.budgetMs;
  if (entry.tuning.totalMs > 0) {
    const AutotuneEntry::TuningTimes &times = entry.tuning;
    json["tuning"] = {{"started_unix_ms", times.startedUnixMs},
                      {"total_ms", times.totalMs},
                      {"compile_ms", times.compileMs},
                      {"inputs_ms", times.inputsMs},
                      {"benchmark_ms", times.benchmarkMs}};
  }
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
  if (entry.description)
    json["description"] = Json::parse(entry.description->toJson(), nullptr,
                                      /*allow_exceptions=*/false);
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
  if (const Json *tuning = member(json, "tuning");
      tuning && tuning->is_object())
    for (const char *name : kTuningTimeNames)
      readTuningTime(entry.tuning, name, getNumber(*tuning, name));
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
  if (const Json *description = member(json, "description");
      description && description->is_object())
    entry.description = decodeDescription(description->dump(), "", nullptr);
  return entry;
}

// Reads `path` into a JSON object; a missing file is an empty object. The
// error says what is wrong with the file.
Result<Json> readCacheFile(const std::string &path, bool &exists) {
  exists = isRegularFile(path);
  if (!exists)
    return Json::object();
  Result<std::string> text = readFile(path);
  if (!text)
    return text.status();
  if (text->empty())
    return Json::object();
  if (std::string deep = jsonNestingError(*text); !deep.empty())
    return Status::error(path + " is not valid JSON: it " + deep);
  Json json = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return Status::error(path + " is not valid JSON");
  if (!json.is_object())
    return Status::error(path + " must hold a JSON object (device -> kernel "
                                "-> key -> entry)");
  return json;
}

//===----------------------------------------------------------------------===//
// Streaming load
//===----------------------------------------------------------------------===//

// Builds the entries straight from the parser's events, without a DOM: a
// program's first kernel waits for this load, and nlohmann's DOM costs about
// four times what the tokenizer alone does (allocating every value). The
// compile json of an entry is re-serialized as it streams by, since the
// runtime parses it as text anyway.
class StreamingLoader : public nlohmann::json_sax<nlohmann::json> {
public:
  StreamingLoader(std::map<std::string, AutotuneCache::KernelMap> &entries,
                  std::vector<std::string> &warnings, const std::string &path)
      : entries_(entries), warnings_(warnings), path_(path) {}

  bool null() override {
    if (capturing())
      return captureRaw("null");
    return scalar(Kind::Other);
  }
  bool boolean(bool value) override {
    if (capturing())
      return captureRaw(value ? "true" : "false");
    return scalar(Kind::Other);
  }
  bool number_integer(number_integer_t value) override {
    if (capturing())
      return captureRaw(std::to_string(value));
    number_ = static_cast<double>(value);
    integer_ = value;
    return scalar(Kind::Integer);
  }
  bool number_unsigned(number_unsigned_t value) override {
    if (capturing())
      return captureRaw(std::to_string(value));
    number_ = static_cast<double>(value);
    integer_ = static_cast<int64_t>(value);
    return scalar(Kind::Integer);
  }
  bool number_float(number_float_t value, const string_t &text) override {
    if (capturing())
      return captureRaw(text);
    number_ = value;
    return scalar(Kind::Real);
  }
  bool string(string_t &value) override {
    if (capturing())
      return captureRaw(quote(value));
    string_ = std::move(value);
    return scalar(Kind::String);
  }
  bool binary(binary_t &) override { return scalar(Kind::Other); }

  bool start_object(std::size_t) override { return open(false); }
  bool start_array(std::size_t) override { return open(true); }
  bool key(string_t &key) override {
    Frame &frame = frames_.back();
    if (capturing()) {
      separate(frame);
      capture_ += quote(key) + ":";
      frame.afterKey = true;
    }
    frame.key = std::move(key);
    return true;
  }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &error) override {
    parseError_ = error.what();
    return false;
  }

  const std::string &parseError() const { return parseError_; }
  bool rootIsObject() const { return rootIsObject_; }

private:
  enum class Kind { Integer, Real, String, Other, Object, Array };
  struct Frame {
    bool isArray = false;
    // The key of the value being read (objects).
    std::string key;
    // Values seen so far, for commas while capturing.
    size_t count = 0;
    bool afterKey = false;
  };

  // The keys of the open containers plus the current key: where a value
  // lands. Arrays contribute "[]".
  size_t depth() const { return frames_.size(); }
  const std::string &keyAt(size_t level) const {
    static const std::string array = "[]";
    return frames_[level].isArray ? array : frames_[level].key;
  }
  // device/kernel/key of the entry at frames_[3] (or about to open there).
  std::string entryName() const {
    return frames_[0].key + "/" + frames_[1].key + "/" + frames_[2].key;
  }

  bool capturing() const { return captureDepth_ > 0; }
  bool skipping() const { return skipDepth_ > 0; }
  // Ignores the container being opened, whatever it holds.
  void skipContainer(bool isArray) {
    frames_.push_back(Frame{isArray, {}, 0, false});
    skipDepth_ = depth();
  }
  void separate(Frame &frame) {
    if (frame.afterKey) {
      frame.afterKey = false;
      return;
    }
    if (frame.count++ > 0)
      capture_ += ",";
  }
  bool captureRaw(const std::string &text) {
    separate(frames_.back());
    capture_ += text;
    return true;
  }
  static std::string quote(const std::string &text) {
    std::string out = "\"";
    for (unsigned char c : text) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        char buffer[8];
        std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
        out += buffer;
      } else {
        out += static_cast<char>(c);
      }
    }
    return out + "\"";
  }

  bool open(bool isArray) {
    Frame frame{isArray, {}, 0, false};
    if (skipping()) {
      frames_.push_back(frame);
      return true;
    }
    if (capturing()) {
      separate(frames_.back());
      capture_ += isArray ? "[" : "{";
      frames_.push_back(frame);
      return true;
    }
    if (depth() == 0) {
      rootIsObject_ = !isArray;
      frames_.push_back(frame);
      return !isArray;
    }
    // Where this container sits decides what it is.
    if ((depth() == 1 || depth() == 2) && isArray) {
      notAnObject();
      skipContainer(isArray);
      return true;
    }
    if (depth() == 3) {
      if (isArray) {
        warnings_.push_back(path_ + ": entry " + entryName() +
                            ": an entry must be an object; ignored");
        skipContainer(isArray);
        return true;
      }
      entry_ = AutotuneEntry();
      inEntry_ = true;
    }
    if (inEntry_ && !isArray &&
        ((depth() == 5 && keyAt(3) == "kernel" && frames_[4].key == "metadata") ||
         (depth() == 4 && frames_[3].key == "description"))) {
      captureIsDescription_ = depth() == 4;
      frames_.push_back(frame);
      captureDepth_ = depth();
      capture_ = "{";
      return true;
    }
    if (inEntry_ && !isArray && depth() == 5 && keyAt(3) == "timings" &&
        frames_[4].isArray)
      entry_.timings.emplace_back();
    frames_.push_back(frame);
    return true;
  }

  bool close() {
    bool wasArray = frames_.back().isArray;
    frames_.pop_back();
    if (skipping()) {
      if (depth() + 1 == skipDepth_)
        skipDepth_ = 0;
      return true;
    }
    if (capturing()) {
      capture_ += wasArray ? "]" : "}";
      if (depth() + 1 == captureDepth_) {
        captureDepth_ = 0;
        if (captureIsDescription_)
          entry_.description = describedBy(capture_);
        else
          entry_.metadataJson = std::move(capture_);
        capture_.clear();
      }
      return true;
    }
    if (inEntry_ && depth() == 3) {
      inEntry_ = false;
      if (entry_.config.empty()) {
        warnings_.push_back(path_ + ": entry " + entryName() +
                            ": the entry has no \"config\" string; ignored");
      } else {
        entries_[frames_[0].key][frames_[1].key][frames_[2].key] =
            std::move(entry_);
      }
    }
    return true;
  }

  void notAnObject() {
    if (depth() == 1)
      warnings_.push_back(path_ + ": device '" + frames_[0].key +
                          "' is not an object; ignored");
    else
      warnings_.push_back(path_ + ": " + frames_[0].key + "/" + frames_[1].key +
                          " is not an object; ignored");
  }

  // A scalar at the current position.
  bool scalar(Kind kind) {
    if (depth() == 0 || skipping())
      return true; // a scalar root: rootIsObject stays false
    if (depth() <= 2) {
      notAnObject();
      return true;
    }
    if (depth() == 3) {
      warnings_.push_back(path_ + ": entry " + entryName() +
                          ": an entry must be an object; ignored");
      return true;
    }
    if (!inEntry_)
      return true;
    const std::string &field = keyAt(3);
    if (depth() == 4) {
      if (kind == Kind::String && field == "config")
        entry_.config = std::move(string_);
      else if (kind == Kind::String && field == "tuned_at")
        entry_.tunedAt = std::move(string_);
      else if (kind == Kind::String && field == "compiler_id")
        entry_.compilerId = std::move(string_);
      else if ((kind == Kind::Integer || kind == Kind::Real) &&
               field == "budget_ms")
        entry_.budgetMs = number_;
      return true;
    }
    if (depth() == 5 && field == "tuning" &&
        (kind == Kind::Integer || kind == Kind::Real)) {
      readTuningTime(entry_.tuning, keyAt(4), number_);
      return true;
    }
    if (depth() == 5 && field == "kernel" && kind == Kind::String) {
      const std::string &name = keyAt(4);
      if (name == "target")
        entry_.target = std::move(string_);
      else if (name == "cubin_key")
        entry_.cubinKey = std::move(string_);
      else if (name == "metadata")
        entry_.metadataJson = std::move(string_);
      return true;
    }
    if (depth() == 6 && field == "timings" && frames_[4].isArray &&
        !entry_.timings.empty()) {
      readTiming(entry_.timings.back(), keyAt(5), kind);
      return true;
    }
    return true;
  }

  void readTiming(ConfigTiming &timing, const std::string &name, Kind kind) {
    bool isNumber = kind == Kind::Integer || kind == Kind::Real;
    if (kind == Kind::String) {
      if (name == "config")
        timing.config = std::move(string_);
      else if (name == "status")
        timing.status = string_.empty() ? "ok" : std::move(string_);
      else if (name == "reason")
        timing.reason = std::move(string_);
    } else if (isNumber) {
      if (name == "median_us")
        timing.medianUs = number_;
      else if (name == "p20_us")
        timing.p20Us = number_;
      else if (name == "p80_us")
        timing.p80Us = number_;
      else if (name == "min_us")
        timing.minUs = number_;
      else if (name == "compile_ms")
        timing.compileMs = number_;
      else if (kind == Kind::Integer && name == "reps")
        timing.repetitions = static_cast<int>(integer_);
      else if (kind == Kind::Integer && name == "registers")
        timing.registers = static_cast<int>(integer_);
      else if (kind == Kind::Integer && name == "shared_bytes")
        timing.sharedBytes = integer_;
      else if (kind == Kind::Integer && name == "spill_bytes")
        timing.spillBytes = integer_;
    }
  }

  std::map<std::string, AutotuneCache::KernelMap> &entries_;
  std::vector<std::string> &warnings_;
  const std::string &path_;
  std::vector<Frame> frames_;
  bool rootIsObject_ = false;
  bool inEntry_ = false;
  AutotuneEntry entry_;
  // The depth of the container being captured or skipped (0: none).
  size_t captureDepth_ = 0;
  // Whether the container being captured is the entry's description (else
  // its compile json).
  bool captureIsDescription_ = false;
  size_t skipDepth_ = 0;
  std::string capture_;
  // The descriptions read so far, by their text: the entries of one kernel
  // all store the same description, and parsing one costs a hundred times
  // more than copying it (the map kernels alone add dozens of entries).
  std::map<std::string, std::optional<KernelDescription>> descriptions_;
  std::optional<KernelDescription> describedBy(const std::string &text) {
    auto [it, fresh] = descriptions_.try_emplace(text);
    if (fresh)
      it->second = decodeDescription(text, path_ + ": entry " + entryName(),
                                     &warnings_);
    return it->second;
  }
  std::string string_;
  double number_ = 0;
  int64_t integer_ = 0;
  std::string parseError_;
};
} // namespace

double AutotuneEntry::winnerMedianUs() const {
  for (const ConfigTiming &timing : timings)
    if (timing.config == config && timing.status == "ok")
      return timing.medianUs;
  return 0;
}

namespace {

// Which file a path names, and what it holds: another writer replaces the
// file (a rename of its own temporary file), which gives the path another
// inode, and a writer that rewrites it in place changes its size or times.
struct FileStamp {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  struct timespec modified {};
  struct timespec changed {};

  explicit FileStamp(const struct stat &info)
      : device(info.st_dev), inode(info.st_ino), size(info.st_size),
        modified(info.st_mtim), changed(info.st_ctim) {}
  bool operator==(const FileStamp &other) const {
    return device == other.device && inode == other.inode &&
           size == other.size && modified.tv_sec == other.modified.tv_sec &&
           modified.tv_nsec == other.modified.tv_nsec &&
           changed.tv_sec == other.changed.tv_sec &&
           changed.tv_nsec == other.changed.tv_nsec;
  }
};

// The file at `path` opened, not stat()ed (an open revalidates a network
// file system's cached attributes, close-to-open consistency; a stat of the
// path may be answered from them), and its stamp; -1 when it is not a
// regular file.
int openStamped(const std::string &path, std::optional<FileStamp> &stamp) {
  stamp.reset();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (fd >= 0 && ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    stamp = FileStamp(info);
    return fd;
  }
  if (fd >= 0)
    ::close(fd);
  return -1;
}

// `text` (a value's dump(2)) as it sits `depth` spaces in: what nlohmann's
// pretty printer writes for a value nested that deep (a JSON string holds no
// raw newline, so every newline is the printer's own).
void appendIndented(std::string &out, const std::string &text, size_t depth) {
  std::string newline = "\n" + std::string(depth, ' ');
  size_t from = 0;
  for (size_t at; (at = text.find('\n', from)) != std::string::npos;
       from = at + 1) {
    out.append(text, from, at - from);
    out += newline;
  }
  out.append(text, from, std::string::npos);
}

// One part of an entry's name in FileMirror::texts, its length first: JSON
// names may hold any character, NUL included, so no separator would do.
std::string namePart(const std::string &part) {
  return std::to_string(part.size()) + ":" + part;
}

std::string textKey(const std::string &device, const std::string &kernel,
                    const std::string &key) {
  return namePart(device) + namePart(kernel) + namePart(key);
}

} // namespace

// The file as this process last read or wrote it, under the lock: its
// stamp, its JSON and each entry's text as the file holds it.
struct AutotuneCache::FileMirror {
  std::optional<FileStamp> stamp;
  // The file of `stamp`, held open: while it is, no other file can take its
  // inode, so a path that still has that inode names this very file.
  int held = -1;
  Json root = Json::object();
  // By textKey(device, kernel, key): an entry's dump(2) as the file holds
  // it, six spaces in (entryText).
  std::map<std::string, std::string> texts;
  // The last dump, its buffer kept for the next (a fresh one of megabytes
  // at every store cost more in page faults than in copying).
  std::string dumped;
  // Whether the file was read again without its entries joining memory (a
  // shared tier's entry copied in keeps the pointers to the others): the
  // next store decodes them all.
  bool memoryBehind = false;

  ~FileMirror() { forget(); }
  void forget() {
    stamp.reset();
    if (held >= 0)
      ::close(held);
    held = -1;
  }
  // Holds the file at `path` as the one the mirror is (none when it cannot
  // be opened: the next store reads it again).
  void hold(const std::string &path) {
    forget();
    held = openStamped(path, stamp);
  }
  // Whether `path` still names the file the mirror holds, as it was.
  bool holds(const std::string &path) const {
    std::optional<FileStamp> now;
    int fd = openStamped(path, now);
    if (fd >= 0)
      ::close(fd);
    return stamp && now && *now == *stamp;
  }

  // An entry's text as the file holds it.
  static std::string entryText(const Json &entry) {
    std::string text;
    appendIndented(text, entry.dump(2), 6);
    return text;
  }

  // What root.dump(2) writes, byte for byte, and a newline, with each
  // entry's text from `texts` (serialized once, when it was stored or first
  // read).
  const std::string &dump() {
    dumped.clear();
    if (root.empty())
      dumped = "{}";
    else
      appendMembers(dumped, root, 0, "");
    dumped += "\n";
    return dumped;
  }

  // The non-empty object `object`, `depth` spaces in, whose members are
  // named `prefix` + namePart(their key) (as textKey names them): devices at
  // depth 0, kernels at 2, entries at 4, each entry's text from `texts`.
  void appendMembers(std::string &out, const Json &object, size_t depth,
                     const std::string &prefix) {
    out += "{";
    const char *comma = "\n";
    for (auto member = object.begin(); member != object.end(); ++member) {
      out += comma;
      comma = ",\n";
      out += std::string(depth + 2, ' ') + Json(member.key()).dump() + ": ";
      std::string name = prefix + namePart(member.key());
      if (depth == 4) {
        auto [text, fresh] = texts.try_emplace(name);
        if (fresh)
          text->second = entryText(*member);
        out += text->second;
      } else if (!member->is_object() || member->empty()) {
        appendIndented(out, member->dump(2), depth + 2);
      } else {
        appendMembers(out, *member, depth + 2, name);
      }
    }
    out += "\n" + std::string(depth, ' ') + "}";
  }
};

AutotuneCache::AutotuneCache(std::string path,
                             std::shared_ptr<RemoteCache> remote)
    : path_(std::move(path)), remote_(std::move(remote)),
      mirror_(std::make_unique<FileMirror>()) {}

AutotuneCache::~AutotuneCache() { flushCounters(); }

std::string AutotuneCache::encodeEntry(const AutotuneEntry &entry) {
  return encodeEntryJson(entry).dump(2);
}

Result<AutotuneEntry> AutotuneCache::decodeEntry(const std::string &json) {
  if (std::string deep = jsonNestingError(json); !deep.empty())
    return Status::error("an autotune entry is not valid JSON: it " + deep);
  Json parsed = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded())
    return Status::error("an autotune entry is not valid JSON");
  return decodeEntryJson(parsed);
}

namespace {

constexpr std::string_view kRemoteMagic = "tilec-autotune";
constexpr std::string_view kRemoteVersion = "1";
constexpr std::string_view kStatsFormat = "tilec-autotune-stats 1";

// Over where the entry belongs and what it says: a value moved to another
// field fails the check as a damaged one does.
std::string remoteChecksum(const std::string &device, const std::string &kernel,
                           const std::string &key, std::string_view json) {
  return CacheKey("autotune")
      .add("device", device)
      .add("kernel", kernel)
      .add("key", key)
      .add("entry", json)
      .str();
}

} // namespace

std::string AutotuneCache::encodeRemoteEntry(const std::string &device,
                                             const std::string &kernel,
                                             const std::string &key,
                                             const AutotuneEntry &entry) {
  std::string json = encodeEntryJson(entry).dump();
  return std::string(kRemoteMagic) + " " + std::string(kRemoteVersion) + " " +
         std::to_string(json.size()) + " " +
         remoteChecksum(device, kernel, key, json) + "\n" + json;
}

Result<AutotuneEntry> AutotuneCache::decodeRemoteEntry(
    std::string_view value, const std::string &device,
    const std::string &kernel, const std::string &key) {
  size_t newline = value.substr(0, 256).find('\n');
  if (newline == std::string_view::npos)
    return Status::error(value.empty() ? "empty value" : "no header line");
  std::string_view header = value.substr(0, newline);
  std::string_view json = value.substr(newline + 1);
  std::string expected = std::string(kRemoteMagic) + " " +
                         std::string(kRemoteVersion) + " " +
                         std::to_string(json.size()) + " ";
  if (header.substr(0, expected.size()) != expected)
    return Status::error("the header '" + std::string(header) + "' is not '" +
                         expected +
                         "<sha256>' (another format, or a size mismatch)");
  std::string_view checksum = header.substr(expected.size());
  std::string actual = remoteChecksum(device, kernel, key, json);
  if (checksum != actual)
    return Status::error("checksum mismatch: the header says " +
                         std::string(checksum) + ", the entry of " + device +
                         "/" + kernel + "/" + key + " hashes to " + actual);
  return decodeEntry(std::string(json));
}

namespace {

// The entry `json` of (device, kernel, key) into `entries`, or why not into
// `warnings`.
void decodeInto(const Json &json, const std::string &device,
                const std::string &kernel, const std::string &key,
                std::map<std::string, AutotuneCache::KernelMap> &entries,
                std::vector<std::string> &warnings, const std::string &path) {
  Result<AutotuneEntry> entry = decodeEntryJson(json);
  if (!entry) {
    warnings.push_back(path + ": entry " + device + "/" + kernel + "/" + key +
                       ": " + entry.message() + "; ignored");
    return;
  }
  entries[device][kernel][key] = std::move(*entry);
}

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
      for (auto key = kernel->begin(); key != kernel->end(); ++key)
        decodeInto(*key, device.key(), kernel.key(), key.key(), entries,
                   warnings, path);
    }
  }
}

} // namespace

Status AutotuneCache::load() {
  warnings_.clear();
  entries_.clear();
  // The next store reads the file again and decodes it all: a load that
  // fails here leaves memory empty, and a store must not keep it so.
  mirror_->forget();
  if (!isRegularFile(path_)) {
    // Missing is an empty cache; a directory (or a device) in its place is
    // not: it read as empty, and no winner could ever be stored.
    struct stat info;
    if (::stat(path_.c_str(), &info) == 0)
      return Status::error("autotune cache: " + path_ +
                           " is not a regular file");
    return Status::success();
  }
  Result<std::string> text = readFile(path_);
  if (!text)
    return text.status().withContext("autotune cache");
  if (text->empty())
    return Status::success();
  std::map<std::string, KernelMap> entries;
  std::vector<std::string> warnings;
  StreamingLoader loader(entries, warnings, path_);
  bool parsed = nlohmann::json::sax_parse(*text, &loader);
  if (!parsed && !loader.rootIsObject() && loader.parseError().empty())
    return Status::error("autotune cache: " + path_ +
                         " must hold a JSON object (device -> kernel -> key "
                         "-> entry)");
  if (!parsed)
    return Status::error("autotune cache: " + path_ + " is not valid JSON (" +
                         loader.parseError() + ")");
  if (!loader.rootIsObject())
    return Status::error("autotune cache: " + path_ +
                         " must hold a JSON object (device -> kernel -> key "
                         "-> entry)");
  entries_ = std::move(entries);
  warnings_ = std::move(warnings);
  return Status::success();
}

Result<bool> AutotuneCache::mergeIntoFile(const std::string &device,
                                          const std::string &kernel,
                                          const std::string &key,
                                          const AutotuneEntry &entry) {
  FileMirror &mirror = *mirror_;
  auto fail = [&](const Status &status) {
    return status.withContext("cannot store into the autotune cache " + path_);
  };
  if (Status status = makeDirectories(parentDirectory(path_)); !status.ok())
    return fail(status);
  Result<FileLock> lock = FileLock::acquire(path_ + ".lock");
  if (!lock)
    return fail(lock.status());

  // Under the lock: what is on disk now is the latest, whoever wrote it.
  bool reread = !mirror.holds(path_);
  if (reread) {
    mirror.forget();
    mirror.texts.clear();
    bool exists = false;
    Result<Json> read = readCacheFile(path_, exists);
    if (!read) {
      // Never overwrite a file we cannot read: keep it for a human to look
      // at.
      std::string aside = path_ + ".corrupt";
      if (::rename(path_.c_str(), aside.c_str()) != 0)
        return fail(Status::error(read.message() + ", and moving it to " +
                                  aside + " failed: " + std::strerror(errno)));
      warnings_.push_back(read.message() + "; moved to " + aside +
                          " and started a new cache");
      read = Json::object();
    }
    mirror.root = std::move(*read);
  }
  Json &deviceJson = mirror.root[device];
  if (!deviceJson.is_object())
    deviceJson = Json::object();
  Json &kernelJson = deviceJson[kernel];
  if (!kernelJson.is_object())
    kernelJson = Json::object();
  Json &keyJson = kernelJson[key];
  keyJson = encodeEntryJson(entry);
  mirror.texts[textKey(device, kernel, key)] = FileMirror::entryText(keyJson);

  if (Status status = writeFileAtomically(path_, mirror.dump());
      !status.ok()) {
    // The file is what it was; the mirror holds the entry it lacks.
    mirror.forget();
    return fail(status);
  }
  // Still under the lock: the file just written (else the next store reads
  // it again).
  mirror.hold(path_);
  return reread;
}

std::string AutotuneCache::remoteKey(const std::string &device,
                                     const std::string &kernel) const {
  return remote_->key("autotune", device + ":" + kernel);
}

const AutotuneEntry *AutotuneCache::adoptRemote(const std::string &device,
                                                const std::string &kernel,
                                                const std::string &key,
                                                std::string_view value) {
  Result<AutotuneEntry> entry = decodeRemoteEntry(value, device, kernel, key);
  RemoteCounters delta;
  if (!entry) {
    delta.rejects = 1;
    count(delta);
    remote_->warn("ignored the invalid autotune entry " + key + " in " +
                  remoteKey(device, kernel) + " of the shared cache " +
                  remote_->options().url() + " (" + entry.message() + ")");
    return nullptr;
  }
  delta.hits = 1;
  count(delta);
  Result<bool> copied = mergeIntoFile(device, kernel, key, *entry);
  if (copied && *copied)
    mirror_->memoryBehind = true;
  if (!copied && !warnedCopy_) {
    warnedCopy_ = true;
    remote_->warn(copied.message() + "; entries from the shared cache are "
                                     "used without being kept locally");
  }
  // Only this entry joins memory: pointers to the others stay valid.
  AutotuneEntry &kept = entries_[device][kernel][key];
  kept = std::move(*entry);
  return &kept;
}

const AutotuneEntry *AutotuneCache::find(const std::string &device,
                                         const std::string &kernel,
                                         const std::string &key) {
  if (auto d = entries_.find(device); d != entries_.end())
    if (auto k = d->second.find(kernel); k != d->second.end())
      if (auto e = k->second.find(key); e != k->second.end())
        return &e->second;
  if (!remote_ || !remote_->enabled())
    return nullptr;
  Result<std::optional<std::string>> value =
      remote_->hashGet(remoteKey(device, kernel), key);
  if (!value || !*value) {
    countRemoteMiss(value.ok());
    return nullptr;
  }
  return adoptRemote(device, kernel, key, **value);
}

const KernelDescription *
AutotuneCache::findDescription(const std::string &device,
                               const std::string &kernel) {
  if (auto d = entries_.find(device); d != entries_.end())
    if (auto k = d->second.find(kernel); k != d->second.end())
      for (const auto &[key, entry] : k->second)
        if (entry.description)
          return &*entry.description;
  if (!remote_ || !remote_->enabled())
    return nullptr;
  Result<std::optional<std::pair<std::string, std::string>>> field =
      remote_->hashAnyField(remoteKey(device, kernel));
  if (!field || !*field) {
    countRemoteMiss(field.ok());
    return nullptr;
  }
  const AutotuneEntry *entry =
      adoptRemote(device, kernel, (*field)->first, (*field)->second);
  return entry && entry->description ? &*entry->description : nullptr;
}

Status AutotuneCache::store(const std::string &device,
                            const std::string &kernel, const std::string &key,
                            const AutotuneEntry &entry) {
  Result<bool> reread = mergeIntoFile(device, kernel, key, entry);
  Status stored = reread ? Status::success() : reread.status();
  if (reread && (*reread || mirror_->memoryBehind)) {
    // What other processes wrote joins memory with the file.
    decodeAll(mirror_->root, entries_, warnings_, path_);
    mirror_->memoryBehind = false;
  } else if (reread) {
    // Memory already holds the file but for this entry: as the file has it.
    decodeInto(mirror_->root[device][kernel][key], device, kernel, key,
               entries_, warnings_, path_);
  }
  // Also when the file could not be written: the team still gets the result.
  if (remote_ && remote_->enabled()) {
    RemoteCounters delta;
    Status sent =
        remote_->hashSet(remoteKey(device, kernel), key,
                         encodeRemoteEntry(device, kernel, key, entry));
    if (sent.ok())
      delta.stores = 1;
    else
      delta.errors = 1;
    count(delta);
  }
  return stored;
}

void AutotuneCache::countRemoteMiss(bool answered) {
  // A request that failed was the tier's own warning.
  RemoteCounters delta;
  (answered ? delta.misses : delta.errors) = 1;
  count(delta);
}

void AutotuneCache::count(const RemoteCounters &delta) {
  remoteCounters_ += delta;
  unflushed_ += delta;
}

void AutotuneCache::flushCounters() {
  if (unflushed_.empty())
    return;
  RemoteCounters pending = unflushed_;
  unflushed_ = RemoteCounters();
  CounterRows rows;
  rows["remote"] = {pending.hits, pending.misses, pending.rejects,
                    pending.stores, pending.errors};
  (void)addToCounterFile(path_ + ".stats", path_ + ".stats.lock", kStatsFormat,
                         rows);
}

RemoteCounters AutotuneCache::remoteStats() const {
  CounterRows rows = readCounterFile(path_ + ".stats", kStatsFormat);
  RemoteCounters counters;
  if (auto it = rows.find("remote"); it != rows.end() && it->second.size() >= 5)
    counters = {it->second[0], it->second[1], it->second[2], it->second[3],
                it->second[4]};
  return counters;
}

} // namespace tilec::rt
