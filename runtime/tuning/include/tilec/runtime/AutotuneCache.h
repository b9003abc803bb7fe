//===- AutotuneCache.h - Persistent autotuning results ----------*- C++ -*-===//
//
// Part of tilec_tuning, the tuning library (on top of tilec_runtime).
//
// The winners of autotuning and every candidate's timing, in one JSON file
// shared by all processes of a user:
//
//   $TILEC_AUTOTUNE_CACHE, default ~/.tilec/autotune_cache.json
//   { "<device name>": { "<kernel>": { "<key>": { "config": "...",
//                                                 "timings": [...], ... } } } }
//
// The key is the kernel's autotune key evaluated for a call
// ("M=4096,N=4096,K=4096,DTYPE=f16,ALLOW_TF32=0"). Besides the winner and the
// timings an entry carries what a process without a compiler needs to run
// the winner: the stage-cache key of its cubin, its compile json, and the
// kernel's description (key derivations, grid, arguments), so that a new call
// can be keyed and launched from the file alone.
//
// Writes merge: store() takes an exclusive flock on <path>.lock, re-reads the
// file, replaces only its own entry (other entries stay byte for byte what
// their writers wrote, including fields this version does not know) and
// writes the file back with writeFileAtomically (FileIO.h: a temporary file
// created with O_EXCL, fsynced, renamed over <path>, the directory fsynced).
// Readers take no lock: a rename is atomic, so they see the old or the new
// file, never half of one. Two processes tuning different keys at once both
// keep their entries. Re-reading is skipped when the file is still the one
// this process's last store wrote (the same inode, held open since, and the
// same size and times, under the lock): then what it holds is already in
// memory, and a store serializes its own entry only. A first call that
// tunes a network stores hundreds of entries into a file of megabytes;
// reading, parsing and re-serializing all of it at each store had cost more
// than the tunings themselves.
//
// With a shared tier (RemoteCache.h), entries are also kept on the server,
// one hash per device and kernel, one field per key:
//
//   <namespace>:1:autotune:<device>:<kernel>   field <key>
//     value "tilec-autotune 1 <json-bytes> <sha256>\n<entry json>"
//
// The checksum covers the device, kernel and key with the JSON, so a value
// that was damaged, or copied under another field, is rejected (counted,
// reported, not used). A field is written alone (HSET), so machines that
// tune different keys of one kernel at once all keep theirs; two that tune
// the same key both hold a valid winner, and the last write stays. find()
// and findDescription() ask the tier when the file as loaded has nothing,
// and copy a valid entry into the file; store() writes to both. Counters of
// the tier go to <path>.stats (CounterFile.h).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_AUTOTUNECACHE_H
#define TILEC_RUNTIME_AUTOTUNECACHE_H

#include "tilec/runtime/KernelCompiler.h"
#include "tilec/runtime/RemoteCache.h"
#include "tilec/contract/Status.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::rt {

// One candidate of one tuning run.
struct ConfigTiming {
  // Canonical config text.
  std::string config;
  // "ok" (benchmarked), "screened" (timed on the short screening budget
  // only: too far from the fastest to be timed in full), "pruned" (cannot
  // run on the device, or the kernel's pruneUnless says it is not worth
  // trying) or "failed" (compile, load or launch error); `reason` says why
  // for the last three.
  std::string status = "ok";
  std::string reason;
  // Kernel time over the repetitions (L2 flushed before each), microseconds.
  double medianUs = 0;
  double p20Us = 0;
  double p80Us = 0;
  double minUs = 0;
  int repetitions = 0;
  // From the ptxas report; -1 when unknown (compile failed).
  int registers = -1;
  int64_t sharedBytes = -1;
  int64_t spillBytes = 0;
  // Wall time of this candidate's compile (a stage-cache hit is fast).
  double compileMs = 0;

  // It was benchmarked ("ok" or "screened"): the times above are its own.
  bool timed() const { return status == "ok" || status == "screened"; }
};

struct AutotuneEntry {
  // The winner, canonical text.
  std::string config;
  std::vector<ConfigTiming> timings;
  // How to load the winner without compiling: the target it was compiled
  // for, the stage-cache key of its cubin (empty when it was compiled without
  // a cache) and its compile json.
  std::string target;
  std::string cubinKey;
  std::string metadataJson;
  // The kernel's description (tilec/contract/KernelDescription.h): how a
  // process without a compiler derives keys, configs, arguments and grids.
  std::optional<KernelDescription> description;
  // Provenance: UTC time of tuning ("2026-11-29T12:00:00Z"), the compiler
  // identity from the compile json, the per-config time budget.
  std::string tunedAt;
  std::string compilerId;
  double budgetMs = 0;
  // How long the tuning took, wall time in ms: when it started (Unix time),
  // all of it up to its entry, its compiles (first submitted to last
  // finished; those queued ahead and done before it count as waited for),
  // building the inputs, benchmarking. What a first call of a new shape
  // spends, key by key. All 0 in entries written before they were kept.
  struct TuningTimes {
    double startedUnixMs = 0;
    double totalMs = 0;
    double compileMs = 0;
    double inputsMs = 0;
    double benchmarkMs = 0;
  };
  TuningTimes tuning;

  // The winner's measured median in microseconds; 0 when it was not
  // benchmarked (a kernel with a single candidate).
  double winnerMedianUs() const;
};

class AutotuneCache {
public:
  // A cache backed by `path` and, when it is given, the shared tier `remote`
  // (RemoteCache::fromEnvironment() is TILEC_REDIS's); nothing is read until
  // load().
  explicit AutotuneCache(std::string path,
                         std::shared_ptr<RemoteCache> remote = nullptr);
  // Flushes the counters.
  ~AutotuneCache();
  AutotuneCache(const AutotuneCache &) = delete;
  AutotuneCache &operator=(const AutotuneCache &) = delete;

  const std::string &path() const { return path_; }

  // Reads the file. A missing file is an empty cache. A file that is not
  // JSON, or not an object of objects, is an error naming the path and the
  // problem; entries that do not parse are skipped and listed in warnings().
  Status load();

  // The entry for (device, kernel, key), or null: from memory, else from
  // the shared tier (then also merged into the file).
  const AutotuneEntry *find(const std::string &device,
                            const std::string &kernel, const std::string &key);
  // The description stored with any entry of `kernel` on `device`, or null:
  // how a process without a compiler computes keys. Asks the shared tier
  // for an entry of the kernel when memory has none.
  const KernelDescription *findDescription(const std::string &device,
                                           const std::string &kernel);

  // Merges `entry` into the file under the lock (see above) and into memory,
  // and writes it to the shared tier. The parent directory is created if
  // needed. A file that does not parse is moved aside to <path>.corrupt
  // (with a warning) rather than overwritten in place. The error is the
  // file's; the tier's failures are its own warning.
  Status store(const std::string &device, const std::string &kernel,
               const std::string &key, const AutotuneEntry &entry);

  RemoteCache *remote() const { return remote_.get(); }
  // This process's use of the shared tier since construction.
  const RemoteCounters &remoteCounters() const { return remoteCounters_; }
  // Adds the counters not yet flushed to <path>.stats. Best effort.
  void flushCounters();
  // The counters in <path>.stats, summed over every process that flushed.
  RemoteCounters remoteStats() const;

  using KeyMap = std::map<std::string, AutotuneEntry>;
  using KernelMap = std::map<std::string, KeyMap>;
  // device -> kernel -> key -> entry, as last loaded or stored.
  const std::map<std::string, KernelMap> &entries() const { return entries_; }
  const std::vector<std::string> &warnings() const { return warnings_; }

  // The JSON of an entry, and back; exposed for tools and tests.
  static std::string encodeEntry(const AutotuneEntry &entry);
  static Result<AutotuneEntry> decodeEntry(const std::string &json);
  // The shared tier's value of an entry (see above), and back: the error
  // says what did not match.
  static std::string encodeRemoteEntry(const std::string &device,
                                       const std::string &kernel,
                                       const std::string &key,
                                       const AutotuneEntry &entry);
  static Result<AutotuneEntry> decodeRemoteEntry(std::string_view value,
                                                 const std::string &device,
                                                 const std::string &kernel,
                                                 const std::string &key);

private:
  void count(const RemoteCounters &delta);
  // A remote lookup without an entry: a miss if the server answered, else an
  // error.
  void countRemoteMiss(bool answered);
  std::string remoteKey(const std::string &device,
                        const std::string &kernel) const;
  // Merges one entry into the file under its lock and into mirror_. The file
  // is read again only when it is not the one the mirror holds (another
  // process wrote it, or this one has not stored since load()): the result
  // says whether it was. A file that does not parse is moved aside, with a
  // warning.
  Result<bool> mergeIntoFile(const std::string &device,
                             const std::string &kernel, const std::string &key,
                             const AutotuneEntry &entry);
  // Checks a value fetched for (device, kernel, key) and keeps a valid one
  // in memory and in the file; null when it was rejected.
  const AutotuneEntry *adoptRemote(const std::string &device,
                                   const std::string &kernel,
                                   const std::string &key,
                                   std::string_view value);

  // The file as this process last read or wrote it (AutotuneCache.cpp).
  struct FileMirror;

  std::string path_;
  std::shared_ptr<RemoteCache> remote_;
  std::unique_ptr<FileMirror> mirror_;
  std::map<std::string, KernelMap> entries_;
  std::vector<std::string> warnings_;
  RemoteCounters remoteCounters_;
  RemoteCounters unflushed_;
  bool warnedCopy_ = false;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_AUTOTUNECACHE_H
