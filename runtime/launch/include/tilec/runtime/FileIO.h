//===- FileIO.h - The runtime's one POSIX file layer ------------*- C++ -*-===//
//
// Part of tilec_runtime, the launch library: its loaders read through it, and
// the caches of the tuning library (StageCache, AutotuneCache) write through
// it, so that every file they share with other processes gets the same
// guarantees.
//
// POSIX only: std::filesystem would bring exceptions into a -fno-exceptions
// library. Errors name the path and the system's reason.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_FILEIO_H
#define TILEC_RUNTIME_FILEIO_H

#include "tilec/contract/Status.h"

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tilec::rt {

// mkdir -p: creates `path` and its missing parents (mode 0777 less the
// umask). A directory that exists already, or that another process creates
// meanwhile, is success; a path that ends in something else is an error.
Status makeDirectories(const std::string &path);

bool isDirectory(const std::string &path);
bool isRegularFile(const std::string &path);

// The directory part of `path`: "." when it has none.
std::string parentDirectory(const std::string &path);

// A whole file, with the identity (device, inode) of the file that was read,
// so that a reader that rejects it can remove that file and not one renamed
// over it meanwhile.
struct FileContents {
  std::string bytes;
  dev_t device = 0;
  ino_t inode = 0;
};

// What a reader of files from outside accepts: a regular file (not a FIFO,
// which would block the open or the read, nor a device such as /dev/zero
// behind a symlink, which never ends) of at most `maxBytes` (checked before
// anything is read, and again while reading).
struct ReadLimits {
  bool regularOnly = false;
  uint64_t maxBytes = UINT64_MAX;
};

// Errors read "<path>: cannot open: <reason>", "<path>: cannot read:
// <reason>", "<path>: not a regular file" and "<path>: N bytes, more than
// the M allowed".
Result<FileContents> readFileContents(const std::string &path,
                                      const ReadLimits &limits = {});
Result<std::string> readFile(const std::string &path);

struct AtomicWriteOptions {
  // fsync the file before the rename (so that the name never points at data
  // the kernel has not written back) and its directory after it (so that the
  // rename itself survives a power loss). Off only for files whose loss
  // costs nothing but a count.
  bool durable = true;
  // Runs between the write and the rename; tests kill the process there.
  std::function<void()> beforeRename;
};

// Replaces `path` with `contents` so that a reader, or a process that opens
// it after a crash, sees the old file or the new one and never a part: the
// contents go to a temporary file in the same directory, created with
// O_EXCL under a name no other writer uses (<path>.tmp.<pid>.<random hex>),
// written in full (short writes continued, EINTR retried), then renamed over
// `path`. On any failure (a full disk, a file size limit, a missing
// directory, a failed rename) the temporary file is removed and `path` keeps
// its old contents. When only the final directory fsync fails, the new
// contents are in place but may not survive a power loss, and the error says
// so.
Status writeFileAtomically(const std::string &path, std::string_view contents,
                           const AtomicWriteOptions &options = {});

// Whether `name` (a file name, no directory) is one of writeFileAtomically's
// temporary files, and the pid of the process that created it: a cleaner
// removes the leftovers of writers that are gone.
bool isTemporaryFileName(std::string_view name);
std::optional<pid_t> temporaryFileWriter(std::string_view name);

// An exclusive flock on a lock file, held until the object is destroyed.
// The lock file is created when missing and never removed: removing it would
// let a second process lock a new file while a first still holds the old
// one.
class FileLock {
public:
  // Waits for the lock; a signal that interrupts the wait does not end it.
  static Result<FileLock> acquire(const std::string &path);

  FileLock(FileLock &&other) noexcept;
  FileLock &operator=(FileLock &&other) noexcept;
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;
  ~FileLock();

private:
  explicit FileLock(int fd) : fd_(fd) {}
  void release();

  int fd_ = -1;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_FILEIO_H
