//===- StageCache.cpp - The on-disk cache of stage artifacts --------------===//
//
// Entries, counters and locks are written, read and taken through the file
// layer (FileIO.h); the maintenance walk is POSIX too (readdir, lstat,
// unlink): std::filesystem would drag exceptions into a -fno-exceptions
// library.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/StageCache.h"

#include "tilec/runtime/CounterFile.h"
#include "tilec/runtime/FileIO.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

namespace tilec::rt {

namespace {

constexpr std::string_view kMagic = "tilec-cache";
constexpr std::string_view kFormatVersion = "1";
constexpr std::string_view kStatsMagic = "tilec-cache-stats 1";
// The header line is short; a longer first line is not ours.
constexpr size_t kMaxHeaderBytes = 256;
// The largest entry stored or read: a cubin or an IR dump of the largest
// kernels is a few MB. Larger files in the cache are not read (a 6 GiB file
// took 40 s and 6 GB before its header could refuse it).
constexpr uint64_t kMaxEntryBytes = uint64_t(256) << 20;
// How entries are read: regular files of at most kMaxEntryBytes (a FIFO or
// a symlink to a device placed in the cache is refused, not waited on).
const ReadLimits kEntryReadLimits{/*regularOnly=*/true, kMaxEntryBytes};
// A temporary file older than this belongs to no live writer even if its pid
// was reused (a write takes milliseconds), or was written on another host.
constexpr int64_t kStaleTempSeconds = 3600;
// How often a process waiting for another one's build reads the entry: a
// stage takes tens of milliseconds or more, a read well under one.
constexpr std::chrono::milliseconds kLeasePoll(25);

std::string joinPath(std::string_view a, std::string_view b) {
  std::string result(a);
  if (!result.empty() && result.back() != '/')
    result += '/';
  result += b;
  return result;
}

void removeIfSameFile(const std::string &path, dev_t device, ino_t inode) {
  struct stat info;
  if (::lstat(path.c_str(), &info) == 0 && info.st_dev == device &&
      info.st_ino == inode)
    ::unlink(path.c_str());
}

// Names of the entries of a directory; a missing directory has none.
Result<std::vector<std::string>> listDirectory(const std::string &path) {
  std::vector<std::string> names;
  DIR *dir = ::opendir(path.c_str());
  if (!dir) {
    if (errno == ENOENT || errno == ENOTDIR)
      return names;
    return Status::error("cannot list " + path + ": " + std::strerror(errno));
  }
  while (struct dirent *entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..")
      names.emplace_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

bool isHex(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

std::vector<std::string_view> splitSpaces(std::string_view text) {
  std::vector<std::string_view> parts;
  while (!text.empty()) {
    size_t space = text.find(' ');
    parts.push_back(text.substr(0, space));
    if (space == std::string_view::npos)
      break;
    text.remove_prefix(space + 1);
  }
  return parts;
}

// A temporary file is a leftover when its writer (the pid in its name) is
// gone from this host, or when it is too old to belong to a running write.
bool isStaleTemp(std::string_view name, int64_t mtimeSeconds) {
  int64_t now = int64_t(std::time(nullptr));
  if (now - mtimeSeconds > kStaleTempSeconds)
    return true;
  std::optional<pid_t> writer = temporaryFileWriter(name);
  return !writer || (::kill(*writer, 0) != 0 && errno == ESRCH);
}

// One file under <dir>/<stage>/<shard>/.
struct WalkedFile {
  std::string stage;
  std::string shard;
  std::string name;
  std::string relative;
  std::string full;
  uint64_t bytes = 0;
  int64_t mtimeSeconds = 0;
  // Anything else (a symlink, a FIFO, a directory) in an entry's place is
  // not ours to count or prune; verify reports and removes it.
  bool regular = true, directory = false;
};

Result<std::vector<WalkedFile>> walkStageFiles(const std::string &root) {
  // A cache that is a file would read as an empty one, and verify or prune
  // would report success over nothing.
  struct stat rootInfo;
  if (::stat(root.c_str(), &rootInfo) == 0 && !S_ISDIR(rootInfo.st_mode))
    return Status::error("the cache " + root + " is not a directory");
  std::vector<WalkedFile> files;
  for (std::string_view stage : kCacheStages) {
    std::string stageDir = joinPath(root, stage);
    Result<std::vector<std::string>> shards = listDirectory(stageDir);
    if (!shards)
      return shards.status();
    for (const std::string &shard : *shards) {
      std::string shardDir = joinPath(stageDir, shard);
      if (!isDirectory(shardDir))
        continue;
      Result<std::vector<std::string>> names = listDirectory(shardDir);
      if (!names)
        return names.status();
      for (const std::string &name : *names) {
        WalkedFile file;
        file.stage = std::string(stage);
        file.shard = shard;
        file.name = name;
        file.relative = std::string(stage) + "/" + shard + "/" + name;
        file.full = joinPath(shardDir, name);
        struct stat info;
        if (::lstat(file.full.c_str(), &info) != 0)
          continue; // removed meanwhile
        file.regular = S_ISREG(info.st_mode);
        file.directory = S_ISDIR(info.st_mode);
        file.bytes = uint64_t(info.st_size);
        file.mtimeSeconds = int64_t(info.st_mtime);
        files.push_back(std::move(file));
      }
    }
  }
  return files;
}

// The key when `file` is named like an entry in the right shard.
std::optional<std::string> entryKeyOf(const WalkedFile &file) {
  std::string suffix = "." + file.stage;
  if (file.name.size() != 64 + suffix.size() ||
      file.name.compare(64, std::string::npos, suffix) != 0)
    return std::nullopt;
  std::string key = file.name.substr(0, 64);
  if (!StageCache::isValidKey(key))
    return std::nullopt;
  return key;
}

using CounterMap = std::map<std::string, StageCounters, std::less<>>;

// The rows of <dir>/stats: "<stage> hits misses corrupt stores" as since the
// first version, and "remote-<stage> hits misses rejects stores errors waits"
// for the shared tier, which older readers skip (rows written before leases
// have no waits).
constexpr std::string_view kRemoteRowPrefix = "remote-";

CounterRows rowsOf(const CounterMap &counters) {
  CounterRows rows;
  for (const auto &[stage, c] : counters) {
    rows[stage] = {c.hits, c.misses, c.corrupt, c.stores};
    if (!c.remote.empty())
      rows[std::string(kRemoteRowPrefix) + stage] = {
          c.remote.hits,   c.remote.misses, c.remote.rejects,
          c.remote.stores, c.remote.errors, c.remote.waits};
  }
  return rows;
}

CounterMap countersOf(const CounterRows &rows) {
  CounterMap counters;
  for (std::string_view stage : kCacheStages) {
    StageCounters &c = counters[std::string(stage)];
    if (auto it = rows.find(stage);
        it != rows.end() && it->second.size() >= 4) {
      const std::vector<uint64_t> &local = it->second;
      c.hits = local[0];
      c.misses = local[1];
      c.corrupt = local[2];
      c.stores = local[3];
    }
    auto it = rows.find(std::string(kRemoteRowPrefix) + std::string(stage));
    if (it != rows.end() && it->second.size() >= 5) {
      const std::vector<uint64_t> &remote = it->second;
      c.remote = {remote[0], remote[1], remote[2], remote[3], remote[4]};
      if (remote.size() >= 6)
        c.remote.waits = remote[5];
    }
  }
  return counters;
}

} // namespace

//===----------------------------------------------------------------------===//
// CacheKey
//===----------------------------------------------------------------------===//

CacheKey::CacheKey(std::string_view stage) {
  sha_.update("tilec-cache-key 1\n");
  add("stage", stage);
}

CacheKey &CacheKey::add(std::string_view name, std::string_view value) {
  // name=<length>:<value>\n — the length makes the encoding unambiguous
  // whatever the value holds.
  std::string prefix =
      std::string(name) + "=" + std::to_string(value.size()) + ":";
  sha_.update(prefix);
  sha_.update(value);
  sha_.update("\n");
  return *this;
}

CacheKey &CacheKey::add(std::string_view name, int64_t value) {
  return add(name, std::string_view(std::to_string(value)));
}

std::string CacheKey::str() const {
  Sha256 copy = sha_;
  return toHex(copy.finish());
}

//===----------------------------------------------------------------------===//
// Entry format
//===----------------------------------------------------------------------===//

bool StageCache::isValidKey(std::string_view key) {
  return key.size() == 64 && isHex(key);
}

bool StageCache::isKnownStage(std::string_view stage) {
  return std::find(kCacheStages.begin(), kCacheStages.end(), stage) !=
         kCacheStages.end();
}

std::string StageCache::entryPath(std::string_view stage,
                                  std::string_view key) {
  std::string path(stage);
  path += '/';
  path += key.substr(0, 2);
  path += '/';
  path += key;
  path += '.';
  path += stage;
  return path;
}

std::string StageCache::encodeEntry(std::string_view stage,
                                    std::string_view key,
                                    std::string_view payload,
                                    std::string_view meta) {
  std::string entry =
      std::string(kMagic) + " " + std::string(kFormatVersion) + " " +
      std::string(stage) + " " + std::string(key) + " " +
      std::to_string(meta.size()) + " " + std::to_string(payload.size()) + " " +
      Sha256::hashHex(meta) + " " + Sha256::hashHex(payload) + "\n";
  entry.reserve(entry.size() + meta.size() + payload.size());
  entry += meta;
  entry += payload;
  return entry;
}

Result<CacheArtifact> StageCache::decodeEntry(std::string_view bytes,
                                              std::string_view stage,
                                              std::string_view key) {
  size_t newline = bytes.substr(0, kMaxHeaderBytes).find('\n');
  if (newline == std::string_view::npos)
    return Status::error(bytes.empty() ? "empty file" : "no header line");
  std::vector<std::string_view> fields = splitSpaces(bytes.substr(0, newline));
  if (fields.size() != 8 || fields[0] != kMagic)
    return Status::error("malformed header");
  if (fields[1] != kFormatVersion)
    return Status::error("format version '" + std::string(fields[1]) +
                         "' is not " + std::string(kFormatVersion));
  if (fields[2] != stage)
    return Status::error("header names stage '" + std::string(fields[2]) +
                         "', expected '" + std::string(stage) + "'");
  if (fields[3] != key)
    return Status::error("header names key " + std::string(fields[3]) +
                         ", expected " + std::string(key));
  uint64_t metaSize = 0, payloadSize = 0;
  if (!parseDecimalCount(fields[4], metaSize) ||
      !parseDecimalCount(fields[5], payloadSize))
    return Status::error("malformed sizes in the header");
  uint64_t bodySize = bytes.size() - newline - 1;
  if (metaSize + payloadSize != bodySize)
    return Status::error(
        "size mismatch: the header says " +
        std::to_string(metaSize + payloadSize) + " bytes, the file holds " +
        std::to_string(bodySize) +
        (metaSize + payloadSize > bodySize ? " (truncated)" : ""));
  std::string_view body = bytes.substr(newline + 1);
  std::string_view meta = body.substr(0, metaSize);
  std::string_view payload = body.substr(metaSize);
  if (std::string actual = Sha256::hashHex(meta); fields[6] != actual)
    return Status::error("meta checksum mismatch: the header says " +
                         std::string(fields[6]) + ", the meta hashes to " +
                         actual);
  std::string actual = Sha256::hashHex(payload);
  if (fields[7] != actual)
    return Status::error("checksum mismatch: the header says " +
                         std::string(fields[7]) + ", the payload hashes to " +
                         actual);
  CacheArtifact artifact;
  artifact.meta = std::string(meta);
  artifact.payload = std::string(payload);
  artifact.payloadSha256 = std::move(actual);
  return artifact;
}

//===----------------------------------------------------------------------===//
// StageCache
//===----------------------------------------------------------------------===//

namespace {
StageCache::TestHooks &testHooks() {
  static StageCache::TestHooks hooks;
  return hooks;
}
} // namespace

void StageCache::setTestHooks(TestHooks hooks) {
  testHooks() = std::move(hooks);
}

StageCache::StageCache(std::string directory,
                       std::shared_ptr<RemoteCache> remote,
                       WarningHandler warning)
    : directory_(std::move(directory)), warning_(std::move(warning)),
      remote_(std::move(remote)) {
  if (!warning_)
    warning_ = printCacheWarning;
}

StageCache::~StageCache() {
  std::map<std::string, std::string, std::less<>> held;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    held.swap(leases_);
  }
  for (const auto &[name, owner] : held)
    (void)remote_->deleteIfEqual(name, owner);
  flushCounters();
}

void StageCache::warnOnce(const std::string &message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (warned_)
      return;
    warned_ = true;
  }
  warning_(message);
}

bool StageCache::storesEnabled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return storesEnabled_;
}

StageCounters StageCache::counters(std::string_view stage) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = counters_.find(stage);
  return it == counters_.end() ? StageCounters() : it->second;
}

void StageCache::count(std::string_view stage, const StageCounters &delta) {
  std::lock_guard<std::mutex> lock(mutex_);
  counters_[std::string(stage)] += delta;
  unflushed_[std::string(stage)] += delta;
}

std::optional<CacheArtifact> StageCache::lookup(std::string_view stage,
                                                std::string_view key) {
  return lookupImpl(stage, key, /*lease=*/false);
}

std::optional<CacheArtifact>
StageCache::lookupOrLease(std::string_view stage, std::string_view key) {
  return lookupImpl(stage, key, /*lease=*/true);
}

std::optional<CacheArtifact> StageCache::lookupImpl(std::string_view stage,
                                                    std::string_view key,
                                                    bool lease) {
  StageCounters miss;
  miss.misses = 1;
  if (!isKnownStage(stage) || !isValidKey(key)) {
    count(stage, miss);
    return std::nullopt;
  }
  std::string path = joinPath(directory_, entryPath(stage, key));
  Result<FileContents> contents = readFileContents(path, kEntryReadLimits);
  if (!contents) {
    // Absent is the ordinary miss; an unreadable entry is one too (the next
    // store replaces it).
    count(stage, miss);
    return lookupRemotely(stage, key, lease);
  }
  Result<CacheArtifact> artifact = decodeEntry(contents->bytes, stage, key);
  if (!artifact) {
    removeIfSameFile(path, contents->device, contents->inode);
    miss.corrupt = 1;
    count(stage, miss);
    warning_("discarded the invalid cache entry " + path + " (" +
             artifact.message() + "); rebuilding it");
    return lookupRemotely(stage, key, lease);
  }
  // Refresh the mtime: prune() removes the least recently used entries.
  // Fails harmlessly on a read-only cache.
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
  StageCounters hit;
  hit.hits = 1;
  count(stage, hit);
  return std::move(*artifact);
}

std::optional<CacheArtifact> StageCache::lookupRemotely(std::string_view stage,
                                                        std::string_view key,
                                                        bool lease) {
  if (!remote_ || !remote_->enabled())
    return std::nullopt;
  std::string name = remote_->key(stage, key);
  Result<std::optional<std::string>> fetched = remote_->get(name);
  StageCounters delta;
  if (!fetched) {
    // The tier warned about its failure itself.
    delta.remote.errors = 1;
    count(stage, delta);
    return std::nullopt;
  }
  if (!*fetched) {
    delta.remote.misses = 1;
    count(stage, delta);
    if (!lease)
      return std::nullopt;
    return leaseOrWait(stage, key, name);
  }
  return useRemoteEntry(stage, key, name, **fetched);
}

std::optional<CacheArtifact>
StageCache::useRemoteEntry(std::string_view stage, std::string_view key,
                           const std::string &name, const std::string &bytes) {
  StageCounters delta;
  Result<CacheArtifact> artifact = decodeEntry(bytes, stage, key);
  if (!artifact) {
    delta.remote.rejects = 1;
    count(stage, delta);
    warning_("ignored the invalid entry " + name + " of the shared cache " +
             remote_->options().url() + " (" + artifact.message() +
             "); rebuilding it");
    return std::nullopt;
  }
  delta.remote.hits = 1;
  count(stage, delta);
  storeLocally(stage, key, bytes);
  artifact->fromRemote = true;
  return std::move(*artifact);
}

std::string StageCache::leaseName(std::string_view stage,
                                  std::string_view key) const {
  return remote_->key("lease:" + std::string(stage), key);
}

// A value unique among the live holders of leases: a pid is unique on its
// host, and the count among the caches of a process.
static std::string newLeaseOwner() {
  static std::atomic<uint64_t> taken{0};
  char host[256] = "";
  ::gethostname(host, sizeof(host) - 1);
  return std::string(host) + ":" + std::to_string(::getpid()) + ":" +
         std::to_string(++taken);
}

std::optional<CacheArtifact> StageCache::leaseOrWait(std::string_view stage,
                                                     std::string_view key,
                                                     const std::string &name) {
  std::string lease = leaseName(stage, key);
  std::string owner = newLeaseOwner();
  // One lease's life for a holder that died, and one for the process that
  // takes the lease over and builds.
  int leaseMs = remote_->options().leaseMs;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(2 * int64_t(leaseMs));
  StageCounters failed, wait;
  failed.remote.errors = 1;
  wait.remote.waits = 1;
  for (bool first = true;; first = false) {
    Result<bool> taken = remote_->setIfAbsent(lease, owner, leaseMs);
    if (!taken) {
      count(stage, failed);
      return std::nullopt;
    }
    if (*taken)
      return holdLease(stage, key, name, lease, owner);
    if (first)
      count(stage, wait);
    if (std::chrono::steady_clock::now() >= deadline)
      return std::nullopt;
    std::this_thread::sleep_for(kLeasePoll);
    Result<std::optional<std::string>> fetched = remote_->get(name);
    if (!fetched) {
      count(stage, failed);
      return std::nullopt;
    }
    if (*fetched)
      return useRemoteEntry(stage, key, name, **fetched);
  }
}

std::optional<CacheArtifact>
StageCache::holdLease(std::string_view stage, std::string_view key,
                      const std::string &name, const std::string &lease,
                      const std::string &owner) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    leases_[lease] = owner;
  }
  if (const TestHooks &hooks = testHooks(); hooks.afterLease)
    hooks.afterLease(stage);
  // The last holder may have stored the entry and let go of the lease
  // between this process's read and its SET.
  Result<std::optional<std::string>> fetched = remote_->get(name);
  if (!fetched) {
    StageCounters failed;
    failed.remote.errors = 1;
    count(stage, failed);
    return std::nullopt;
  }
  if (!*fetched)
    return std::nullopt;
  std::optional<CacheArtifact> artifact =
      useRemoteEntry(stage, key, name, **fetched);
  // A rejected entry is rebuilt under the lease.
  if (artifact)
    releaseLease(stage, key);
  return artifact;
}

void StageCache::releaseLease(std::string_view stage, std::string_view key) {
  if (!remote_)
    return;
  std::string name = leaseName(stage, key);
  std::string owner;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = leases_.find(name);
    if (it == leases_.end())
      return;
    owner = std::move(it->second);
    leases_.erase(it);
  }
  // A tier that is off already counted its failure; the lease expires.
  if (!remote_->enabled() || remote_->deleteIfEqual(name, owner).ok())
    return;
  StageCounters failed;
  failed.remote.errors = 1;
  count(stage, failed);
}

Status StageCache::writeEntry(std::string_view stage, std::string_view key,
                              const std::string &contents) {
  bool rootExisted = isDirectory(directory_);
  std::string path = joinPath(directory_, entryPath(stage, key));
  std::string dir = path.substr(0, path.rfind('/'));
  TILEC_RETURN_IF_ERROR(makeDirectories(dir));
  if (!rootExisted) {
    // Tells backup tools (and `tar --exclude-caches`) to skip the tree. No
    // lookup depends on it, so it is not worth an fsync.
    AtomicWriteOptions hint;
    hint.durable = false;
    (void)writeFileAtomically(
        joinPath(directory_, "CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This directory is a tilec stage cache (see docs/cache.md).\n",
        hint);
  }
  AtomicWriteOptions options;
  if (const TestHooks &hooks = testHooks(); hooks.beforeRename)
    options.beforeRename = [&] { hooks.beforeRename(stage); };
  Status written = writeFileAtomically(path, contents, options);
  if (!written.ok() && !isDirectory(dir)) {
    // `tilec cache clear` removed the directory between mkdir and open.
    TILEC_RETURN_IF_ERROR(makeDirectories(dir));
    written = writeFileAtomically(path, contents, options);
  }
  return written;
}

bool StageCache::store(std::string_view stage, std::string_view key,
                       std::string_view payload, std::string_view meta) {
  if (!isKnownStage(stage) || !isValidKey(key))
    return false;
  bool toRemote = remote_ && remote_->enabled();
  if (!storesEnabled() && !toRemote)
    return false;
  std::string entry = encodeEntry(stage, key, payload, meta);
  // Lookups would refuse it: not stored (the artifact is rebuilt instead).
  if (entry.size() > kMaxEntryBytes) {
    releaseLease(stage, key);
    return false;
  }
  bool stored = storeLocally(stage, key, entry);
  if (toRemote) {
    StageCounters delta;
    if (remote_->set(remote_->key(stage, key), entry).ok())
      delta.remote.stores = 1;
    else
      delta.remote.errors = 1;
    count(stage, delta);
  }
  // After the remote store: a waiter that sees the lease gone reads the
  // entry before it would build it.
  releaseLease(stage, key);
  return stored;
}

bool StageCache::storeLocally(std::string_view stage, std::string_view key,
                              const std::string &entry) {
  if (!storesEnabled())
    return false;
  Status written = writeEntry(stage, key, entry);
  if (!written.ok()) {
    // A directory in this entry's place (a rename cannot replace one that
    // holds files) fails this key alone: the cache stays writable for the
    // others.
    if (std::string path = joinPath(directory_, entryPath(stage, key));
        isDirectory(path)) {
      warning_("cannot store " + path + ": a directory is in its place (" +
               written.message() + "); `tilec cache verify` reports it");
      return false;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      storesEnabled_ = false;
    }
    warnOnce("the stage cache " + directory_ + " is not writable (" +
             written.message() +
             "); compiling without storing artifacts (set TILEC_CACHE_DIR or "
             "--cache-dir to a writable directory, or use --no-cache)");
    return false;
  }
  StageCounters delta;
  delta.stores = 1;
  count(stage, delta);
  return true;
}

void StageCache::flushCounters() {
  CounterMap pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending.swap(unflushed_);
  }
  if (pending.empty() || !isDirectory(directory_))
    return;
  (void)addToCounterFile(joinPath(directory_, "stats"),
                         joinPath(directory_, "stats.lock"), kStatsMagic,
                         rowsOf(pending));
}

//===----------------------------------------------------------------------===//
// Maintenance
//===----------------------------------------------------------------------===//

Result<std::vector<CacheEntryInfo>> StageCache::list() const {
  Result<std::vector<WalkedFile>> files = walkStageFiles(directory_);
  if (!files)
    return files.status();
  std::vector<CacheEntryInfo> entries;
  for (const WalkedFile &file : *files) {
    if (!file.regular)
      continue;
    std::optional<std::string> key = entryKeyOf(file);
    if (!key || file.shard != key->substr(0, 2))
      continue;
    CacheEntryInfo info;
    info.stage = file.stage;
    info.key = *key;
    info.path = file.relative;
    info.bytes = file.bytes;
    info.mtimeSeconds = file.mtimeSeconds;
    entries.push_back(std::move(info));
  }
  return entries;
}

Result<CacheStats> StageCache::stats() const {
  Result<std::vector<WalkedFile>> files = walkStageFiles(directory_);
  if (!files)
    return files.status();
  CacheStats stats;
  CounterMap counters =
      countersOf(readCounterFile(joinPath(directory_, "stats"), kStatsMagic));
  for (std::string_view stage : kCacheStages) {
    CacheStats::Stage entry;
    entry.name = std::string(stage);
    entry.counters = counters[std::string(stage)];
    stats.stages.push_back(entry);
  }
  for (const WalkedFile &file : *files) {
    if (!file.regular)
      continue;
    if (isTemporaryFileName(file.name)) {
      ++stats.tempFiles;
      stats.tempBytes += file.bytes;
      continue;
    }
    std::optional<std::string> key = entryKeyOf(file);
    if (!key || file.shard != key->substr(0, 2))
      continue;
    for (CacheStats::Stage &stage : stats.stages)
      if (stage.name == file.stage) {
        ++stage.entries;
        stage.bytes += file.bytes;
      }
  }
  return stats;
}

Result<CacheVerifyReport> StageCache::verify() {
  Result<std::vector<WalkedFile>> files = walkStageFiles(directory_);
  if (!files)
    return files.status();
  CacheVerifyReport report;
  for (const WalkedFile &file : *files) {
    if (isTemporaryFileName(file.name)) {
      if (isStaleTemp(file.name, file.mtimeSeconds) &&
          ::unlink(file.full.c_str()) == 0)
        ++report.removedTempFiles;
      else
        ++report.liveTempFiles;
      continue;
    }
    std::optional<std::string> key = entryKeyOf(file);
    if (!key) {
      report.unknownFiles.push_back(file.relative);
      continue;
    }
    if (!file.regular) {
      // Lookups refuse it; removed, so that a store can take the name
      // again (a rename cannot replace a directory that holds files).
      bool removed = file.directory ? ::rmdir(file.full.c_str()) == 0
                                    : ::unlink(file.full.c_str()) == 0;
      report.corrupt.push_back(file.relative + ": not a regular file" +
                               (removed ? "" : " (could not remove it)"));
      continue;
    }
    if (file.bytes > kMaxEntryBytes) {
      // Never read: removed by its size.
      bool removed = ::unlink(file.full.c_str()) == 0;
      report.corrupt.push_back(
          file.relative + ": " + std::to_string(file.bytes) +
          " bytes, more than the " + std::to_string(kMaxEntryBytes) +
          " an entry may hold" + (removed ? "" : " (could not remove it)"));
      continue;
    }
    Result<FileContents> contents =
        readFileContents(file.full, kEntryReadLimits);
    if (!contents) {
      report.corrupt.push_back(file.relative + ": " + contents.message());
      continue;
    }
    std::string reason;
    if (file.shard != key->substr(0, 2)) {
      reason = "misplaced: belongs in " + entryPath(file.stage, *key);
    } else {
      Result<CacheArtifact> artifact =
          decodeEntry(contents->bytes, file.stage, *key);
      if (!artifact)
        reason = artifact.message();
    }
    if (!reason.empty()) {
      removeIfSameFile(file.full, contents->device, contents->inode);
      report.corrupt.push_back(file.relative + ": " + reason);
      continue;
    }
    ++report.valid;
    ++report.validPerStage[file.stage];
  }
  return report;
}

Result<CachePruneReport> StageCache::prune(uint64_t maxBytes) {
  Result<std::vector<WalkedFile>> files = walkStageFiles(directory_);
  if (!files)
    return files.status();
  CachePruneReport report;
  std::vector<const WalkedFile *> entries;
  for (const WalkedFile &file : *files) {
    if (!file.regular)
      continue;
    if (isTemporaryFileName(file.name)) {
      if (isStaleTemp(file.name, file.mtimeSeconds) &&
          ::unlink(file.full.c_str()) == 0)
        ++report.removedTempFiles;
      continue;
    }
    std::optional<std::string> key = entryKeyOf(file);
    if (!key || file.shard != key->substr(0, 2))
      continue;
    entries.push_back(&file);
    report.keptBytes += file.bytes;
    ++report.keptEntries;
  }
  // Oldest first; the path breaks ties so that the order is reproducible.
  std::sort(entries.begin(), entries.end(),
            [](const WalkedFile *a, const WalkedFile *b) {
              if (a->mtimeSeconds != b->mtimeSeconds)
                return a->mtimeSeconds < b->mtimeSeconds;
              return a->relative < b->relative;
            });
  for (const WalkedFile *file : entries) {
    if (report.keptBytes <= maxBytes)
      break;
    if (::unlink(file->full.c_str()) != 0) {
      if (errno == ENOENT)
        continue;
      return Status::error("cannot remove " + file->full + ": " +
                           std::strerror(errno));
    }
    report.keptBytes -= file->bytes;
    --report.keptEntries;
    report.removedBytes += file->bytes;
    ++report.removedEntries;
  }
  return report;
}

Status StageCache::clear() {
  Result<std::vector<WalkedFile>> files = walkStageFiles(directory_);
  if (!files)
    return files.status();
  for (const WalkedFile &file : *files) {
    if (!file.regular || (!isTemporaryFileName(file.name) && !entryKeyOf(file)))
      continue; // not ours
    if (::unlink(file.full.c_str()) != 0 && errno != ENOENT)
      return Status::error("cannot remove " + file.full + ": " +
                           std::strerror(errno));
  }
  // Empty directories go too; one still holding foreign files stays.
  for (std::string_view stage : kCacheStages) {
    std::string stageDir = joinPath(directory_, stage);
    if (Result<std::vector<std::string>> shards = listDirectory(stageDir))
      for (const std::string &shard : *shards)
        ::rmdir(joinPath(stageDir, shard).c_str());
    ::rmdir(stageDir.c_str());
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    counters_.clear();
    unflushed_.clear();
  }
  if (isDirectory(directory_)) {
    Result<FileLock> lock =
        FileLock::acquire(joinPath(directory_, "stats.lock"));
    if (!lock)
      return lock.status();
    std::string stats = joinPath(directory_, "stats");
    if (::unlink(stats.c_str()) != 0 && errno != ENOENT)
      return Status::error("cannot remove " + stats + ": " +
                           std::strerror(errno));
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Sizes
//===----------------------------------------------------------------------===//

Result<uint64_t> parseByteSize(std::string_view text) {
  std::string_view digits = text;
  size_t end = 0;
  while (end < digits.size() && digits[end] >= '0' && digits[end] <= '9')
    ++end;
  uint64_t value = 0;
  if (!parseDecimalCount(digits.substr(0, end), value))
    return Status::error("size '" + std::string(text) +
                         "' must be a number of bytes with an optional K, M, "
                         "G or T suffix (e.g. 100M, 1G)");
  std::string_view suffix = digits.substr(end);
  unsigned shift = 0;
  if (!suffix.empty()) {
    switch (suffix.front()) {
    case 'k':
    case 'K':
      shift = 10;
      break;
    case 'm':
    case 'M':
      shift = 20;
      break;
    case 'g':
    case 'G':
      shift = 30;
      break;
    case 't':
    case 'T':
      shift = 40;
      break;
    case 'b':
    case 'B':
      break;
    default:
      return Status::error("size '" + std::string(text) +
                           "' has an unknown unit '" + std::string(suffix) +
                           "' (expected K, M, G or T)");
    }
    if (shift != 0)
      suffix.remove_prefix(1);
    if (suffix != "" && suffix != "B" && suffix != "b" && suffix != "iB" &&
        suffix != "ib")
      return Status::error("size '" + std::string(text) +
                           "' has an unknown unit (expected K, M, G or T)");
  }
  if (shift != 0 && value > (UINT64_MAX >> shift))
    return Status::error("size '" + std::string(text) + "' is too large");
  return value << shift;
}

std::string formatByteSize(uint64_t bytes) {
  static constexpr const char *units[] = {"K", "M", "G", "T"};
  if (bytes < 1024)
    return std::to_string(bytes) + "B";
  double value = double(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), value < 10 ? "%.1f%s" : "%.0f%s", value,
                units[unit]);
  return text;
}

} // namespace tilec::rt
