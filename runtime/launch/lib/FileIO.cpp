//===- FileIO.cpp - The runtime's one POSIX file layer --------------------===//

#include "tilec/runtime/FileIO.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

namespace tilec::rt {

namespace {

constexpr std::string_view kTemporaryMarker = ".tmp.";

std::string errnoText(int error) { return std::strerror(error); }

// open(2), retried when a signal interrupts it (it can on NFS and FUSE).
int openRetrying(const char *path, int flags, mode_t mode = 0) {
  int fd;
  do
    fd = ::open(path, flags, mode);
  while (fd < 0 && errno == EINTR);
  return fd;
}

// 16 hex digits; O_EXCL still catches the rare clash.
std::string randomHex() {
  uint64_t value = 0;
  if (::getrandom(&value, sizeof(value), GRND_NONBLOCK) !=
      ssize_t(sizeof(value))) {
    // Without entropy (early boot), the pid in the name already separates
    // processes; this separates the writers of one process.
    static std::atomic<uint64_t> counter{0};
    value =
        uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (++counter << 48);
  }
  static constexpr char digits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4)
    text[i] = digits[value & 15];
  return text;
}

Status writeAll(int fd, std::string_view data, const std::string &path) {
  while (!data.empty()) {
    ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      int error = errno;
      if (error == EINTR)
        continue;
      return Status::error("cannot write " + path + ": " + errnoText(error));
    }
    data.remove_prefix(size_t(written));
  }
  return Status::success();
}

// Creates the temporary file of a write to `path`; sets `temp` to its name.
Result<int> createTemporary(const std::string &path, std::string &temp) {
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    temp = path + std::string(kTemporaryMarker) + std::to_string(::getpid()) +
           "." + randomHex();
    fd = openRetrying(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                      0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0)
    return Status::error("cannot create " + temp + ": " + errnoText(errno));
  return fd;
}

// Writes, syncs and closes `fd`: close reports what a filesystem with
// delayed allocation (NFS, quotas) only finds out then.
Status fillTemporary(int fd, std::string_view contents, const std::string &temp,
                     bool durable) {
  Status written = writeAll(fd, contents, temp);
  if (durable && written.ok() && ::fsync(fd) != 0)
    written = Status::error("cannot fsync " + temp + ": " + errnoText(errno));
  if (::close(fd) != 0 && written.ok())
    written = Status::error("cannot close " + temp + ": " + errnoText(errno));
  return written;
}

// Makes a rename in `directory` durable. A filesystem that cannot sync a
// directory (EINVAL) has nothing more to offer.
Status syncDirectory(const std::string &directory) {
  int fd = openRetrying(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return Status::error("cannot open directory " + directory + ": " +
                         errnoText(errno));
  int error = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  if (error != 0 && error != EINVAL)
    return Status::error("cannot fsync directory " + directory + ": " +
                         errnoText(error));
  return Status::success();
}

} // namespace

Status makeDirectories(const std::string &path) {
  // Each prefix that ends before a '/' (and the whole path), in order.
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    std::string prefix = path.substr(0, end);
    if (!prefix.empty() && prefix.back() != '/' &&
        ::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      return Status::error("cannot create directory " + prefix + ": " +
                           errnoText(errno));
    if (end == std::string::npos)
      break;
  }
  if (!isDirectory(path))
    return Status::error(path + " is not a directory");
  return Status::success();
}

bool isDirectory(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool isRegularFile(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::string parentDirectory(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

Result<FileContents> readFileContents(const std::string &path,
                                      const ReadLimits &limits) {
  // O_NONBLOCK: opening a FIFO for reading waits for a writer otherwise. It
  // changes nothing for a regular file.
  int flags = O_RDONLY | O_CLOEXEC | (limits.regularOnly ? O_NONBLOCK : 0);
  int fd = openRetrying(path.c_str(), flags);
  if (fd < 0)
    return Status::error(path + ": cannot open: " + errnoText(errno));
  auto fail = [&](const std::string &message) {
    ::close(fd);
    return Status::error(path + ": " + message);
  };
  auto tooLarge = [&](uint64_t bytes) {
    return fail(std::to_string(bytes) + " bytes, more than the " +
                std::to_string(limits.maxBytes) + " allowed");
  };
  FileContents contents;
  struct stat info;
  if (::fstat(fd, &info) == 0) {
    if (limits.regularOnly && !S_ISREG(info.st_mode))
      return fail("not a regular file");
    if (uint64_t(info.st_size) > limits.maxBytes)
      return tooLarge(uint64_t(info.st_size));
    contents.device = info.st_dev;
    contents.inode = info.st_ino;
    if (info.st_size > 0)
      contents.bytes.reserve(size_t(info.st_size));
  } else if (limits.regularOnly) {
    return fail("cannot stat: " + errnoText(errno));
  }
  char chunk[65536];
  while (true) {
    ssize_t got = ::read(fd, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return fail("cannot read: " + errnoText(errno));
    if (got == 0)
      break;
    // A file that grows while it is read is held to the same bound.
    if (contents.bytes.size() + size_t(got) > limits.maxBytes)
      return tooLarge(contents.bytes.size() + size_t(got));
    contents.bytes.append(chunk, size_t(got));
  }
  ::close(fd);
  return contents;
}

Result<std::string> readFile(const std::string &path) {
  Result<FileContents> contents = readFileContents(path);
  if (!contents)
    return contents.status();
  return std::move(contents->bytes);
}

Status writeFileAtomically(const std::string &path, std::string_view contents,
                           const AtomicWriteOptions &options) {
  std::string temp;
  Result<int> fd = createTemporary(path, temp);
  if (!fd)
    return fd.status();
  if (Status filled = fillTemporary(*fd, contents, temp, options.durable);
      !filled.ok()) {
    ::unlink(temp.c_str());
    return filled;
  }
  if (options.beforeRename)
    options.beforeRename();
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    return Status::error("cannot rename " + temp + " to " + path + ": " +
                         errnoText(error));
  }
  if (!options.durable)
    return Status::success();
  return syncDirectory(parentDirectory(path))
      .withContext(path + " is written but may not survive a power loss");
}

bool isTemporaryFileName(std::string_view name) {
  return name.find(kTemporaryMarker) != std::string_view::npos;
}

std::optional<pid_t> temporaryFileWriter(std::string_view name) {
  size_t marker = name.rfind(kTemporaryMarker);
  if (marker == std::string_view::npos)
    return std::nullopt;
  std::string_view rest = name.substr(marker + kTemporaryMarker.size());
  std::string_view digits = rest.substr(0, rest.find('.'));
  if (digits.empty() || digits.size() > 9)
    return std::nullopt;
  pid_t pid = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return std::nullopt;
    pid = pid * 10 + (c - '0');
  }
  if (pid == 0)
    return std::nullopt;
  return pid;
}

Result<FileLock> FileLock::acquire(const std::string &path) {
  int fd = openRetrying(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    return Status::error("cannot open lock file " + path + ": " +
                         errnoText(errno));
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR)
      continue;
    int error = errno;
    ::close(fd);
    return Status::error("cannot lock " + path + ": " + errnoText(error));
  }
  return FileLock(fd);
}

FileLock::FileLock(FileLock &&other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

FileLock &FileLock::operator=(FileLock &&other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() {
  if (fd_ < 0)
    return;
  // Unlocked explicitly: a child forked while the lock was held shares the
  // open file, and closing only this descriptor would leave it locked until
  // the child exits.
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
  fd_ = -1;
}

} // namespace tilec::rt
