//===- CubinAssembler.cpp - PTX -> cubin ----------------------------------===//

#include "tilec/Target/CubinAssembler.h"
#include "tilec/Target/PTXEmitter.h"
#include "tilec/runtime/Environment.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <optional>

#ifndef TILEC_DEFAULT_PTXAS_PATH
#define TILEC_DEFAULT_PTXAS_PATH ""
#endif

using namespace tilec;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

//===----------------------------------------------------------------------===//
// Parsing `ptxas -v`
//===----------------------------------------------------------------------===//

/// Removes the "ptxas info    :", "ptxas         .", "info    :" prefixes.
static llvm::StringRef stripLogPrefix(llvm::StringRef line) {
  line = line.trim();
  line.consume_front("ptxas");
  line = line.ltrim();
  if (line.consume_front("info"))
    line = line.ltrim();
  if (line.consume_front(":") || line.consume_front("."))
    line = line.ltrim();
  return line.rtrim();
}

/// Reads the comma-separated "N unit" items of a resource line into `info`,
/// e.g. "Used 40 registers, used 1 barriers, 4608 bytes smem, 384 bytes
/// cmem[0]" or "0 bytes stack frame, 8 bytes spill stores, 8 bytes spill
/// loads". Returns false if an item does not start with a number.
static bool parseResourceItems(llvm::StringRef text, CubinInfo &info) {
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    item = item.trim();
    if (!item.consume_front("Used "))
      item.consume_front("used ");
    uint64_t value = 0;
    if (item.consumeInteger(10, value))
      return false;
    item = item.trim();
    if (item == "registers")
      info.registers = static_cast<unsigned>(value);
    else if (item == "barriers")
      info.barriers = static_cast<unsigned>(value);
    else if (item == "bytes smem")
      info.sharedStaticBytes = value;
    else if (item == "bytes stack frame" || item == "stack")
      info.stackFrameBytes = value;
    else if (item == "bytes spill stores")
      info.spillStoreBytes = value;
    else if (item == "bytes spill loads")
      info.spillLoadBytes = value;
    else if (item.starts_with("bytes cmem["))
      info.constBytes += value;
    // Other items ("bytes lmem", "bytes cumulative stack size", ...) are not
    // part of CubinInfo.
  }
  return true;
}

llvm::Expected<CubinInfo> tilec::parsePtxasInfo(llvm::StringRef log,
                                                llvm::StringRef kernelName) {
  // Everything is keyed by function: ptxas reports device functions too, and
  // nvJitLink appends a second, post-link block whose numbers win (they
  // include callees and the driver-reserved shared memory).
  struct Entry {
    CubinInfo info;
    bool isEntry = false;
    bool hasUsage = false;
    bool resetCmem = true;
  };
  // In order of appearance, which is how the error messages list them.
  std::vector<std::pair<std::string, Entry>> functions;
  llvm::StringMap<size_t> indexOf;
  auto lookup = [&](llvm::StringRef name) -> Entry & {
    auto [it, inserted] = indexOf.try_emplace(name, functions.size());
    if (inserted)
      functions.emplace_back(name.str(), Entry());
    return functions[it->second].second;
  };
  Entry *current = nullptr;

  llvm::SmallVector<llvm::StringRef> lines;
  log.split(lines, '\n');
  for (llvm::StringRef rawLine : lines) {
    llvm::StringRef line = stripLogPrefix(rawLine);
    if (line.consume_front("Compiling entry function '")) {
      llvm::StringRef name = line.take_until([](char c) { return c == '\''; });
      current = &lookup(name);
      current->isEntry = true;
      continue;
    }
    if (line.consume_front("Function properties for ")) {
      // ptxas: "for name"; nvJitLink's post-link block: "for 'name':".
      line.consume_back(":");
      line = line.trim();
      if (line.size() >= 2 && line.front() == '\'' && line.back() == '\'')
        line = line.drop_front().drop_back();
      current = &lookup(line);
      // A new block for this function: its cmem items are counted afresh.
      current->resetCmem = true;
      continue;
    }
    // "(C7520) Potential Performance Loss: wgmma.mma_async instructions are
    // serialized due to ... in the function 'name'": noted before the
    // function's own block.
    if (line.contains("wgmma.mma_async instructions are serialized")) {
      constexpr llvm::StringLiteral kFunction = "in the function '";
      size_t at = line.rfind(kFunction);
      if (at != llvm::StringRef::npos) {
        llvm::StringRef name =
            line.drop_front(at + kFunction.size()).take_until([](char c) {
              return c == '\'';
            });
        lookup(name).info.wgmmaSerialized = 1;
      }
      continue;
    }
    if (!current)
      continue;
    bool isUsage = line.starts_with("Used ") || line.starts_with("used ");
    bool isFrame = line.contains("bytes stack frame");
    if (!isUsage && !isFrame)
      continue;
    if (isUsage && current->resetCmem) {
      current->info.constBytes = 0;
      current->resetCmem = false;
    }
    if (!parseResourceItems(line, current->info))
      return makeError("cannot parse the ptxas resource line '" +
                       rawLine.trim() + "'");
    current->hasUsage |= isUsage;
  }

  auto listNames = [&](auto predicate) {
    std::string names;
    for (auto &[name, entry] : functions)
      if (predicate(entry))
        names += (names.empty() ? "" : ", ") + name;
    return names.empty() ? std::string("none") : names;
  };
  auto isKernel = [](const Entry &e) { return e.isEntry || e.hasUsage; };

  if (kernelName.empty()) {
    const Entry *only = nullptr;
    unsigned count = 0;
    for (auto &[name, entry] : functions)
      if (isKernel(entry)) {
        only = &entry;
        ++count;
      }
    if (count != 1)
      return makeError("the ptxas report describes " + llvm::Twine(count) +
                       " kernels (" + listNames(isKernel) +
                       "); name the one to read");
    return only->info;
  }
  auto it = indexOf.find(kernelName);
  if (it == indexOf.end() || !functions[it->second].second.hasUsage)
    return makeError("the ptxas report has no resource usage for kernel '" +
                     kernelName + "' (kernels found: " + listNames(isKernel) +
                     ")");
  return functions[it->second].second.info;
}

//===----------------------------------------------------------------------===//
// Running ptxas
//===----------------------------------------------------------------------===//

static bool isExecutableFile(llvm::StringRef path) {
  return llvm::sys::fs::is_regular_file(path) &&
         llvm::sys::fs::can_execute(path);
}

llvm::Expected<std::string> tilec::findPtxas(llvm::StringRef explicitPath) {
  if (!explicitPath.empty()) {
    if (isExecutableFile(explicitPath))
      return explicitPath.str();
    return makeError("ptxas '" + explicitPath +
                     "' (CubinOptions::ptxasPath) is not an executable file; "
                     "point it, or the environment variable TILEC_PTXAS, at "
                     "the ptxas of a CUDA toolkit");
  }
  if (std::string env = rt::readEnvironment().ptxas; !env.empty()) {
    if (isExecutableFile(env))
      return env;
    return makeError(
        "TILEC_PTXAS='" + env +
        "' is not an executable file; set TILEC_PTXAS to the "
        "ptxas of a CUDA toolkit (e.g. /usr/local/cuda/bin/ptxas)");
  }
  llvm::StringRef configured = TILEC_DEFAULT_PTXAS_PATH;
  if (!configured.empty() && isExecutableFile(configured))
    return configured.str();
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  return makeError(
      "ptxas not found: set the environment variable TILEC_PTXAS to the "
      "ptxas of a CUDA toolkit (e.g. /usr/local/cuda/bin/ptxas); tried " +
      (configured.empty()
           ? std::string()
           : "the configure-time path '" + configured.str() + "' and ") +
      "PATH. Without a toolkit, `pip install nvidia-cuda-nvcc` ships one "
      "(<site-packages>/nvidia/cu13/bin/ptxas; tilec's wheel uses it by "
      "itself)");
}

std::string tilec::getPtxasIdentity(const CubinOptions &options) {
  if (options.backend != CubinBackend::Ptxas)
    return "";
  llvm::Expected<std::string> ptxas = findPtxas(options.ptxasPath);
  if (!ptxas) {
    llvm::consumeError(ptxas.takeError());
    return "";
  }
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = versions.try_emplace(*ptxas);
  if (!inserted)
    return it->second;
  llvm::SmallString<128> output;
  if (llvm::sys::fs::createTemporaryFile("tilec-ptxas-version", "txt", output))
    return "";
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(output), llvm::StringRef(output)};
  int status = llvm::sys::ExecuteAndWait(*ptxas, {*ptxas, "--version"},
                                         std::nullopt, redirects,
                                         /*SecondsToWait=*/30);
  auto text = llvm::MemoryBuffer::getFile(output);
  llvm::sys::fs::remove(output);
  if (status == 0 && text)
    it->second = (*text)->getBuffer().trim().str();
  return it->second;
}

std::string tilec::formatCommandLine(const std::vector<std::string> &args) {
  std::string line;
  for (const std::string &arg : args) {
    if (!line.empty())
      line += ' ';
    bool safe = !arg.empty() && llvm::all_of(arg, [](char c) {
      return llvm::isAlnum(c) || llvm::StringRef("-_=./:+,@%").contains(c);
    });
    if (safe) {
      line += arg;
      continue;
    }
    line += '\'';
    for (char c : arg)
      line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

namespace {
/// A private temporary directory, removed on destruction unless kept.
class TempDir {
public:
  static llvm::Expected<TempDir> create() {
    TempDir dir;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("tilec-cubin", dir.path))
      return makeError("cannot create a temporary directory: " + ec.message());
    return dir;
  }
  TempDir(TempDir &&other) : path(std::move(other.path)), kept(other.kept) {
    other.kept = true;
  }
  TempDir &operator=(TempDir &&) = delete;
  ~TempDir() {
    if (!kept)
      llvm::sys::fs::remove_directories(path, /*IgnoreErrors=*/true);
  }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<128> full(path);
    llvm::sys::path::append(full, name);
    return std::string(full.str());
  }
  void keep() { kept = true; }

  llvm::SmallString<128> path;

private:
  TempDir() = default;
  bool kept = false;
};
} // namespace

static llvm::Error writeFile(llvm::StringRef path, llvm::StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return makeError("cannot write '" + path + "': " + ec.message());
  os << contents;
  os.close();
  if (os.has_error())
    return makeError("cannot write '" + path + "': " + os.error().message());
  return llvm::Error::success();
}

static llvm::Expected<std::string> readFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read '" + path +
                     "': " + buffer.getError().message());
  return (*buffer)->getBuffer().str();
}

/// The kernel whose resources CubinResult::info holds.
static std::string selectKernel(llvm::StringRef ptx,
                                const CubinOptions &options) {
  if (!options.kernelName.empty())
    return options.kernelName;
  llvm::SmallVector<std::string, 1> names = getPTXKernelNames(ptx);
  return names.empty() ? std::string() : names.front();
}

/// Fills info and kernelName of a successful result from its log.
static llvm::Error fillInfo(CubinResult &result, llvm::StringRef ptx,
                            const CubinOptions &options) {
  result.kernelName = selectKernel(ptx, options);
  if (result.kernelName.empty())
    return llvm::Error::success(); // A module without kernels: nothing to read.
  llvm::Expected<CubinInfo> info =
      parsePtxasInfo(result.log, result.kernelName);
  if (!info)
    return info.takeError();
  result.info = *info;
  return llvm::Error::success();
}

static llvm::Expected<CubinResult> runPtxas(llvm::StringRef ptx,
                                            const CubinOptions &options) {
  llvm::Expected<std::string> ptxas = findPtxas(options.ptxasPath);
  if (!ptxas)
    return ptxas.takeError();
  llvm::Expected<TempDir> dir = TempDir::create();
  if (!dir)
    return dir.takeError();
  std::string ptxPath = dir->file("kernel.ptx");
  std::string cubinPath = dir->file("kernel.cubin");
  std::string logPath = dir->file("ptxas.log");
  if (llvm::Error error = writeFile(ptxPath, ptx))
    return std::move(error);

  std::vector<std::string> args = {*ptxas, "-v", "--gpu-name=" + options.chip,
                                   "-O" + std::to_string(options.optLevel)};
  args.insert(args.end(), options.extraFlags.begin(), options.extraFlags.end());
  args.insert(args.end(), {ptxPath, "-o", cubinPath});
  llvm::SmallVector<llvm::StringRef> argRefs(args.begin(), args.end());
  // stdout and stderr go to one file so that errors and the -v report keep
  // their order; stdin is /dev/null.
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(logPath), llvm::StringRef(logPath)};
  std::string execError;
  bool execFailed = false;
  int rc = llvm::sys::ExecuteAndWait(
      *ptxas, argRefs, /*Env=*/std::nullopt, redirects, options.timeoutSeconds,
      /*MemoryLimit=*/0, &execError, &execFailed);
  std::string log;
  if (llvm::Expected<std::string> text = readFile(logPath))
    log = std::move(*text);
  else
    llvm::consumeError(text.takeError());

  if (execFailed)
    return makeError("cannot run ptxas '" + *ptxas + "': " + execError);
  if (rc != 0) {
    // Keep the PTX (only) so that the printed command can be rerun.
    dir->keep();
    llvm::sys::fs::remove(cubinPath);
    llvm::sys::fs::remove(logPath);
    // A negative code is a crash, a signal or the timeout; execError says
    // which ("Child timed out", "Segmentation fault", ...).
    std::string reason =
        rc < 0 ? "terminated: " + execError : "exit code " + std::to_string(rc);
    return makeError("ptxas failed (" + reason + ") assembling for " +
                     options.chip + ":\n" + llvm::StringRef(log).rtrim() +
                     "\nrepro: " + formatCommandLine(args));
  }

  llvm::Expected<std::string> cubin = readFile(cubinPath);
  if (!cubin)
    return cubin.takeError();
  CubinResult result;
  result.cubin = std::move(*cubin);
  result.log = std::move(log);
  if (llvm::Error error = fillInfo(result, ptx, options))
    return std::move(error);
  return result;
}

//===----------------------------------------------------------------------===//
// nvJitLink
//===----------------------------------------------------------------------===//

namespace {
// The subset of nvJitLink.h that is used, declared here so that building does
// not need the header; the library is loaded with dlopen because linking it
// would make every tilec binary require it at load time.
using NvJitLinkHandle = struct NvJitLinkOpaque *;
using NvJitLinkResult = int;
constexpr NvJitLinkResult kNvJitLinkSuccess = 0;
constexpr int kNvJitLinkInputPtx = 2;

struct NvJitLinkApi {
  NvJitLinkResult (*create)(NvJitLinkHandle *, uint32_t, const char **);
  NvJitLinkResult (*destroy)(NvJitLinkHandle *);
  NvJitLinkResult (*addData)(NvJitLinkHandle, int, const void *, size_t,
                             const char *);
  NvJitLinkResult (*complete)(NvJitLinkHandle);
  NvJitLinkResult (*getLinkedCubinSize)(NvJitLinkHandle, size_t *);
  NvJitLinkResult (*getLinkedCubin)(NvJitLinkHandle, void *);
  NvJitLinkResult (*getErrorLogSize)(NvJitLinkHandle, size_t *);
  NvJitLinkResult (*getErrorLog)(NvJitLinkHandle, char *);
  NvJitLinkResult (*getInfoLogSize)(NvJitLinkHandle, size_t *);
  NvJitLinkResult (*getInfoLog)(NvJitLinkHandle, char *);
};
} // namespace

/// Loads libnvJitLink once: $TILEC_NVJITLINK, else the loader's search path,
/// else the toolkit's usual location.
static llvm::Expected<const NvJitLinkApi *> loadNvJitLink() {
  static std::once_flag once;
  static NvJitLinkApi api;
  static std::string loadError;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (std::string env = rt::readEnvironment().nvJitLink; !env.empty())
      candidates.push_back(env);
    candidates.push_back("libnvJitLink.so.13");
    candidates.push_back("/usr/local/cuda/lib64/libnvJitLink.so.13");
    void *lib = nullptr;
    std::string tried;
    for (const std::string &candidate : candidates) {
      lib = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib)
        break;
      const char *why = dlerror();
      tried += "\n  " + candidate + ": " + (why ? why : "unknown error");
    }
    if (!lib) {
      loadError =
          "cannot load libnvJitLink (set TILEC_NVJITLINK to its path):" + tried;
      return;
    }
    auto resolve = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, name));
      if (!fn && loadError.empty())
        loadError = std::string("libnvJitLink lacks the symbol ") + name;
    };
    resolve(api.create, "nvJitLinkCreate");
    resolve(api.destroy, "nvJitLinkDestroy");
    resolve(api.addData, "nvJitLinkAddData");
    resolve(api.complete, "nvJitLinkComplete");
    resolve(api.getLinkedCubinSize, "nvJitLinkGetLinkedCubinSize");
    resolve(api.getLinkedCubin, "nvJitLinkGetLinkedCubin");
    resolve(api.getErrorLogSize, "nvJitLinkGetErrorLogSize");
    resolve(api.getErrorLog, "nvJitLinkGetErrorLog");
    resolve(api.getInfoLogSize, "nvJitLinkGetInfoLogSize");
    resolve(api.getInfoLog, "nvJitLinkGetInfoLog");
  });
  if (!loadError.empty())
    return makeError(loadError);
  return &api;
}

static llvm::Expected<CubinResult> runNvJitLink(llvm::StringRef ptx,
                                                const CubinOptions &options) {
  llvm::Expected<const NvJitLinkApi *> loaded = loadNvJitLink();
  if (!loaded)
    return loaded.takeError();
  const NvJitLinkApi &api = **loaded;

  std::vector<std::string> flags = {"-arch=" + options.chip,
                                    "-O" + std::to_string(options.optLevel),
                                    "-verbose"};
  for (const std::string &flag : options.extraFlags)
    flags.push_back("-Xptxas=" + flag);
  std::vector<const char *> flagPtrs;
  for (const std::string &flag : flags)
    flagPtrs.push_back(flag.c_str());

  NvJitLinkHandle handle = nullptr;
  if (NvJitLinkResult rc = api.create(
          &handle, static_cast<uint32_t>(flagPtrs.size()), flagPtrs.data());
      rc != kNvJitLinkSuccess)
    return makeError("nvJitLinkCreate failed (result " + llvm::Twine(rc) +
                     ") with options: " + formatCommandLine(flags));
  llvm::scope_exit destroy([&] { api.destroy(&handle); });
  auto readLog = [&](auto sizeFn, auto logFn) {
    size_t size = 0;
    if (sizeFn(handle, &size) != kNvJitLinkSuccess || size == 0)
      return std::string();
    std::string text(size, '\0');
    if (logFn(handle, text.data()) != kNvJitLinkSuccess)
      return std::string();
    text.resize(strnlen(text.data(), text.size()));
    return text;
  };

  NvJitLinkResult rc = api.addData(handle, kNvJitLinkInputPtx, ptx.data(),
                                   ptx.size(), "kernel.ptx");
  const char *step = "nvJitLinkAddData";
  if (rc == kNvJitLinkSuccess) {
    rc = api.complete(handle);
    step = "nvJitLinkComplete";
  }
  if (rc != kNvJitLinkSuccess) {
    std::string log = readLog(api.getErrorLogSize, api.getErrorLog);
    std::string message = std::string(step) + " failed (result " +
                          std::to_string(rc) + ") assembling for " +
                          options.chip + ":\n" +
                          llvm::StringRef(log).rtrim().str();
    // Keep the PTX and give the equivalent ptxas command, as the ptxas
    // path does.
    if (llvm::Expected<TempDir> dir = TempDir::create()) {
      std::string ptxPath = dir->file("kernel.ptx");
      if (llvm::Error error = writeFile(ptxPath, ptx)) {
        llvm::consumeError(std::move(error));
      } else {
        dir->keep();
        llvm::Expected<std::string> ptxas = findPtxas(options.ptxasPath);
        std::vector<std::string> args = {ptxas ? *ptxas : std::string("ptxas"),
                                         "-v", "--gpu-name=" + options.chip,
                                         "-O" +
                                             std::to_string(options.optLevel)};
        if (!ptxas)
          llvm::consumeError(ptxas.takeError());
        args.insert(args.end(), options.extraFlags.begin(),
                    options.extraFlags.end());
        args.insert(args.end(), {ptxPath, "-o", dir->file("kernel.cubin")});
        message += "\nrepro: " + formatCommandLine(args);
      }
    } else {
      llvm::consumeError(dir.takeError());
    }
    return makeError(message);
  }

  CubinResult result;
  size_t size = 0;
  if (api.getLinkedCubinSize(handle, &size) != kNvJitLinkSuccess || size == 0)
    return makeError("nvJitLink produced no cubin");
  result.cubin.resize(size);
  if (api.getLinkedCubin(handle, result.cubin.data()) != kNvJitLinkSuccess)
    return makeError("nvJitLinkGetLinkedCubin failed");
  result.log = readLog(api.getInfoLogSize, api.getInfoLog);
  if (llvm::Error error = fillInfo(result, ptx, options))
    return std::move(error);
  return result;
}

llvm::Expected<CubinResult> tilec::assembleCubin(llvm::StringRef ptx,
                                                 const CubinOptions &options) {
  switch (options.backend) {
  case CubinBackend::Ptxas:
    return runPtxas(ptx, options);
  case CubinBackend::NvJitLink:
    return runNvJitLink(ptx, options);
  }
  llvm_unreachable("unknown CubinBackend");
}
