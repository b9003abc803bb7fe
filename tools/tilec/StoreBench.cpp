//===- StoreBench.cpp - tilec bench stores --------------------------------===//
//
// The autotune cache's stores of a first call, with no GPU: every entry of
// an autotune file (a first call's, e.g. the network bench's
// first-tilec-autotune.json), stored one by one into a fresh cache in the
// order its tunings started, as the process that tuned them stored them.
// Twice, in one process: as one process alone stores (the file is read again
// only when another writer wrote it), and with the file touched before every
// store, as if another process had written it each time (each store then
// reads, parses and re-serializes the whole file, what every store did
// before). Both files must come out the same bytes.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tilec::tool {

namespace {

using Json = nlohmann::ordered_json;

struct Stored {
  double startedMs = 0;
  std::string device, kernel, key;
  rt::AutotuneEntry entry;
};

int failBench(const std::string &message) {
  llvm::errs() << "tilec bench stores: error: " << message << "\n";
  return 1;
}

// The file's entries in the order their tunings started (entries without a
// start keep the file's order, first).
Result<std::vector<Stored>> readStores(const std::string &path) {
  Result<std::string> text = rt::readFile(path);
  if (!text)
    return text.status();
  Json root = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!root.is_object())
    return Status::error(path + " is not an autotune cache (a JSON object)");
  std::vector<Stored> stores;
  for (auto device = root.begin(); device != root.end(); ++device)
    for (auto kernel = device->begin();
         device->is_object() && kernel != device->end(); ++kernel)
      for (auto key = kernel->begin();
           kernel->is_object() && key != kernel->end(); ++key) {
        Result<rt::AutotuneEntry> entry =
            rt::AutotuneCache::decodeEntry(key->dump());
        if (!entry)
          return entry.status().withContext("entry " + device.key() + "/" +
                                            kernel.key() + "/" + key.key());
        double started = 0;
        if (auto tuning = key->find("tuning");
            tuning != key->end() && tuning->is_object())
          if (auto at = tuning->find("started_unix_ms");
              at != tuning->end() && at->is_number())
            started = at->get<double>();
        stores.push_back(
            {started, device.key(), kernel.key(), key.key(), *entry});
      }
  std::stable_sort(stores.begin(), stores.end(),
                   [](const Stored &a, const Stored &b) {
                     return a.startedMs < b.startedMs;
                   });
  return stores;
}

struct Replay {
  double totalMs = 0, slowestMs = 0;
  size_t bytes = 0;
  std::string text;
};

// Stores every entry into a fresh cache at `path`; with `touched`, the
// file's times are set before each store, as another writer's would be.
Result<Replay> replay(const std::vector<Stored> &stores,
                      const std::string &path, bool touched) {
  ::unlink(path.c_str());
  rt::AutotuneCache cache(path);
  TILEC_RETURN_IF_ERROR(cache.load());
  Replay result;
  using Clock = std::chrono::steady_clock;
  for (const Stored &stored : stores) {
    if (touched)
      ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
    Clock::time_point start = Clock::now();
    TILEC_RETURN_IF_ERROR(
        cache.store(stored.device, stored.kernel, stored.key, stored.entry));
    double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    result.totalMs += ms;
    result.slowestMs = std::max(result.slowestMs, ms);
  }
  Result<std::string> text = rt::readFile(path);
  if (!text)
    return text.status();
  result.bytes = text->size();
  result.text = std::move(*text);
  return result;
}

} // namespace

int runStoreBench(const std::string &from, const std::string &outDir) {
  if (from.empty())
    return failBench("name the autotune file to replay (--from FILE)");
  Result<std::vector<Stored>> stores = readStores(from);
  if (!stores)
    return failBench(stores.message());
  if (stores->empty())
    return failBench(from + " holds no entries to store");
  if (std::error_code error = llvm::sys::fs::create_directories(outDir))
    return failBench("cannot create " + outDir + ": " + error.message());
  Result<Replay> alone = replay(*stores, outDir + "/alone.json", false);
  if (!alone)
    return failBench(alone.message());
  Result<Replay> others = replay(*stores, outDir + "/touched.json", true);
  if (!others)
    return failBench(others.message());
  bool same = alone->text == others->text;

  size_t count = stores->size();
  llvm::outs() << count << " stores of " << from << " into a fresh cache, "
               << alone->bytes << " B at the end\n";
  llvm::outs() << llvm::format("%-40s %10s %12s %12s\n", "", "total ms",
                               "ms a store", "slowest ms");
  auto row = [&](const char *name, const Replay &replayed) {
    llvm::outs() << llvm::format("%-40s %10.1f %12.2f %12.2f\n", name,
                                 replayed.totalMs, replayed.totalMs / count,
                                 replayed.slowestMs);
  };
  row("alone (read again when another wrote)", *alone);
  row("another writer before each store", *others);
  llvm::outs() << llvm::format("ratio %.1fx; the two files %s\n",
                               others->totalMs / alone->totalMs,
                               same ? "are the same bytes" : "DIFFER");

  std::string path = outDir + "/stores.json";
  nlohmann::json json = {
      {"from", from},
      {"stores", count},
      {"bytes", alone->bytes},
      {"alone",
       {{"total_ms", alone->totalMs}, {"slowest_ms", alone->slowestMs}}},
      {"touched",
       {{"total_ms", others->totalMs}, {"slowest_ms", others->slowestMs}}},
      {"same_bytes", same}};
  if (Status written = rt::writeFileAtomically(path, json.dump(1) + "\n");
      !written.ok())
    return failBench(written.message());
  llvm::outs() << "wrote " << path << "\n";
  return same ? 0 : 1;
}

} // namespace tilec::tool
