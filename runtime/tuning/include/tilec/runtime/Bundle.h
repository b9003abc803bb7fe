//===- Bundle.h - Exactly the winning cubins, shipped ----------*- C++ -*-===//
//
// Part of tilec_tuning (docs/deploy.md). A kernel bundle is what a program
// needs to run a workload with no compiler and no cache directory: for each
// (device, kernel, autotune key) a service meets, the winning config, and
// the cubin of each such config with its compile json; plus each kernel's
// description, from which a call's key, arguments and grid are derived.
// `tilec pack` writes one from the autotune and stage caches.
//
// A bundle file:
//
//   tilec-bundle 1 <manifest-bytes> <payload-bytes> <manifest-crc32c>\n
//   <manifest: JSON><payload: the cubins, back to back>
//
// The manifest lists the kernels (name, description), the cubins (kernel,
// config, specialization, target, stage-cache key, compile json, offset and
// size in the payload, CRC-32C) and the selections (device, target, kernel,
// key, cubin index, config, median). Opening one checks, before any kernel
// can be loaded from it: the header, that the sizes add up to the file's
// size exactly, the manifest's CRC-32C, every field, that the cubins tile
// the payload with nothing unused, every cubin's CRC-32C, that each compile
// json names its kernel and target, that each selection's config is its
// cubin's. A bundle that fails any check is refused with the reason. (The
// checksums are CRC-32C, not SHA-256: they guard against corruption on the
// start-up path, where a SHA-256 of the manifest alone took a millisecond.)
// What is only read when used is parsed then: a compile json when its cubin
// is loaded, a description when its kernel is first called.
//
// The same content compiled into a program (EmbeddedBundle.h, from `tilec
// bundle emit-cpp`) is wrapped, not copied: its structure is checked, each
// lookup reads the table, and each cubin's CRC-32C is checked before it is
// first handed out, so that start-up parses and allocates next to nothing.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_BUNDLE_H
#define TILEC_RUNTIME_BUNDLE_H

#include "tilec/runtime/EmbeddedBundle.h"
#include "tilec/contract/CompileMetadata.h"
#include "tilec/contract/KernelDescription.h"
#include "tilec/contract/Status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::rt {

struct BundleKernel {
  std::string name;
  // KernelDescription::toJson().
  std::string descriptionJson;
};

struct BundleCubin {
  // Its position in the bundle's cubins.
  size_t index = 0;
  std::string kernel;
  // Canonical texts (Config::str, Specialization::str).
  std::string config;
  std::string specialization;
  std::string target;
  std::string cubinKey;
  std::string metadataJson;
  // The same compiled into an embedded table (its `metadata` accessor), or
  // null: parse metadataJson.
  const CompileMetadata *metadata = nullptr;
  uint32_t crc32c = 0;
  // The cubin's bytes: in the bundle's storage (a file's contents, the
  // embedded data), or owned by Contents when packing.
  std::string_view bytes;
};

struct BundleSelection {
  std::string device;
  std::string target;
  std::string kernel;
  std::string key;
  size_t cubin = 0;
  double medianUs = 0;
};

// What a program that has a bundle may do when it lacks a call's kernel.
enum class BundlePolicy {
  // A call the bundle does not hold is an error naming the kernel and key.
  Strict,
  // Such a call goes on to the caches and the compiler (where linked).
  FallBack,
};

class KernelBundle {
public:
  // What `tilec pack` writes: cubins' bytes are owned here.
  struct Contents {
    std::string createdAt;
    std::string packedBy;
    std::vector<BundleKernel> kernels;
    std::vector<BundleCubin> cubins;
    std::vector<std::string> cubinBytes; // parallel to `cubins`
    std::vector<BundleSelection> selections;
  };
  // The bundle file's bytes for `contents` (cubins' CRC-32C computed here).
  static std::string encode(const Contents &contents);

  // Reads and checks a bundle file (see the file comment). Errors name the
  // file and what failed.
  static Result<std::shared_ptr<const KernelBundle>>
  open(const std::string &path);
  // The same from a file's bytes; `origin` names it in errors.
  static Result<std::shared_ptr<const KernelBundle>>
  decode(std::string bytes, const std::string &origin);
  // Wraps a table compiled into the program (it must outlive the bundle).
  static Result<std::shared_ptr<const KernelBundle>>
  fromEmbedded(const tilec_embedded_bundle &table);

  // "bundle <path>" or "embedded bundle <name>": how errors name it.
  const std::string &origin() const { return origin_; }
  const std::string &createdAt() const { return createdAt_; }
  const std::string &packedBy() const { return packedBy_; }
  // The whole content (an embedded bundle copies it out of its table on
  // the first call: tools and tests use these, the lookups below do not).
  const std::vector<BundleKernel> &kernels() const;
  const std::vector<BundleCubin> &cubins() const;
  const std::vector<BundleSelection> &selections() const;
  // The cubin at `index` of cubins(), without copying the others out of an
  // embedded table.
  const BundleCubin &cubin(size_t index) const;
  // The file's size (0 for an embedded bundle), and the cubins' bytes.
  uint64_t fileBytes() const { return fileBytes_; }
  uint64_t cubinBytesTotal() const;

  // Refuses a device of `target` ("sm_90") when the bundle holds no cubin
  // for it: a bundle for another GPU would only fail later, per call.
  Status checkTarget(const std::string &target) const;

  // The cubin of (kernel, config, specialization) for `target`, or null.
  const BundleCubin *findCubin(const std::string &kernel,
                               const std::string &config,
                               const std::string &specialization,
                               const std::string &target) const;
  // The winner for (kernel, key): the one tuned on `device` itself, else the
  // one tuned on another device of the same target; null when neither.
  const BundleSelection *findSelection(const std::string &device,
                                       const std::string &target,
                                       const std::string &kernel,
                                       const std::string &key) const;
  // The kernel's description, parsed on first use; null when the bundle
  // does not hold the kernel, an error when its description does not parse.
  Result<const KernelDescription *>
  description(const std::string &kernel) const;

  // `cubin`'s bytes, its CRC-32C checked (once) against the manifest.
  Result<std::string_view> cubinData(const BundleCubin &cubin) const;

  // The manifest as a bundle file holds it (for `tilec bundle show`).
  std::string manifestJson() const;

private:
  KernelBundle() = default;
  Status index();
  // An embedded table's entries as bundle entries.
  BundleCubin embeddedCubin(size_t index) const;
  BundleSelection embeddedSelection(size_t index) const;
  void materialize() const;
  const BundleSelection *lazySelection(size_t index) const;

  std::string origin_;
  std::string createdAt_;
  std::string packedBy_;
  std::string storage_;
  uint64_t fileBytes_ = 0;
  // Wrapped, not copied: an embedded bundle looks entries up in the table
  // itself, so that wrapping it allocates almost nothing (start-up).
  const tilec_embedded_bundle *table_ = nullptr;
  mutable std::once_flag materialized_;
  mutable std::vector<std::unique_ptr<BundleCubin>> lazyCubins_;
  mutable std::vector<std::unique_ptr<BundleSelection>> lazySelections_;
  mutable std::vector<BundleKernel> kernels_;
  mutable std::vector<BundleCubin> cubins_;
  mutable std::vector<BundleSelection> selections_;
  std::map<std::string, size_t> cubinIndex_;
  std::map<std::string, size_t> selectionIndex_;
  std::map<std::string, size_t> kernelIndex_;

  mutable std::mutex mutex_;
  mutable std::vector<bool> verified_;
  mutable std::map<std::string, std::unique_ptr<KernelDescription>>
      descriptions_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_BUNDLE_H
