//===- FileIOTest.cpp - The runtime's file layer --------------------------===//
//
// mkdir -p, whole-file reads, atomic writes under concurrent processes, a
// file size limit and a full disk, writers killed before the rename, and the
// lock against another process. Every test works in its own temporary
// directory; the processes are forked.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/FileIO.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rt = tilec::rt;

namespace {

std::vector<std::string> listDirectory(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *handle = ::opendir(dir.c_str())) {
    while (struct dirent *entry = ::readdir(handle))
      if (std::string(entry->d_name) != "." &&
          std::string(entry->d_name) != "..")
        names.push_back(entry->d_name);
    ::closedir(handle);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> temporaries(const std::string &dir) {
  std::vector<std::string> names = listDirectory(dir);
  names.erase(std::remove_if(names.begin(), names.end(),
                             [](const std::string &name) {
                               return !rt::isTemporaryFileName(name);
                             }),
              names.end());
  return names;
}

// What a forked child returned: its exit code (-1 when a signal ended it)
// and the text it reported.
struct ChildResult {
  int exitCode = -1;
  std::string output;
};

// Runs `body` in a child process; it fills its report and returns the exit
// code.
ChildResult runInChild(const std::function<int(std::string &)> &body) {
  int report[2];
  if (::pipe(report) != 0)
    return {-1, "pipe failed"};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(report[0]);
    std::string output;
    int code = body(output);
    (void)!::write(report[1], output.data(), output.size());
    ::_exit(code);
  }
  ::close(report[1]);
  ChildResult result;
  char chunk[4096];
  ssize_t got;
  while ((got = ::read(report[0], chunk, sizeof(chunk))) > 0)
    result.output.append(chunk, size_t(got));
  ::close(report[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status))
    result.exitCode = WEXITSTATUS(status);
  return result;
}

// Waits up to `ms` for a byte on `fd`; 0 when none came.
char readByteWithin(int fd, int ms) {
  struct pollfd wait = {fd, POLLIN, 0};
  char byte = 0;
  if (::poll(&wait, 1, ms) == 1 && ::read(fd, &byte, 1) == 1)
    return byte;
  return 0;
}

class FileIOTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/tilec-fileio-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir = pattern;
  }
  void TearDown() override {
    std::string command = "rm -rf '" + dir + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }

  std::string dir;
};

TEST_F(FileIOTest, MakeDirectoriesCreatesNestedPathsAndAcceptsExistingOnes) {
  std::string nested = dir + "/a/b/c";
  ASSERT_TRUE(rt::makeDirectories(nested).ok());
  EXPECT_TRUE(rt::isDirectory(nested));
  EXPECT_TRUE(rt::makeDirectories(nested).ok());
  EXPECT_TRUE(rt::makeDirectories(dir + "/a//b/c/d/").ok());
  EXPECT_TRUE(rt::isDirectory(dir + "/a/b/c/d"));
  EXPECT_TRUE(rt::makeDirectories("/").ok());
}

TEST_F(FileIOTest, MakeDirectoriesThroughAFileNamesIt) {
  ASSERT_TRUE(rt::writeFileAtomically(dir + "/file", "x").ok());
  tilec::Status through = rt::makeDirectories(dir + "/file/sub");
  EXPECT_EQ(through.message(),
            "cannot create directory " + dir + "/file/sub: Not a directory");
  tilec::Status onto = rt::makeDirectories(dir + "/file");
  EXPECT_EQ(onto.message(), dir + "/file is not a directory");
}

TEST_F(FileIOTest, ConcurrentMakeDirectoriesAllSucceed) {
  std::string nested = dir + "/x/y/z/w";
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0)
      ::_exit(rt::makeDirectories(nested).ok() ? 0 : 1);
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_TRUE(rt::isDirectory(nested));
}

TEST_F(FileIOTest, ReadOfAMissingFileNamesThePathAndTheReason) {
  tilec::Result<std::string> missing = rt::readFile(dir + "/missing.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.message(),
            dir + "/missing.json: cannot open: No such file or directory");
  tilec::Result<std::string> directory = rt::readFile(dir);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.message(), dir + ": cannot read: Is a directory");
}

TEST_F(FileIOTest, ReadReturnsTheWholeFileAndItsIdentity) {
  // Larger than one read chunk, and not a multiple of it.
  std::string contents;
  for (int i = 0; i < (1 << 20) + 17; ++i)
    contents += char('a' + i % 23);
  std::string path = dir + "/big";
  ASSERT_TRUE(rt::writeFileAtomically(path, contents).ok());
  tilec::Result<rt::FileContents> read = rt::readFileContents(path);
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->bytes, contents);
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(read->device, info.st_dev);
  EXPECT_EQ(read->inode, info.st_ino);
}

// Limits for files from outside: a FIFO is refused at once (its open would
// wait for a writer), a symlink to /dev/zero too (its read never ends), a
// file over the bound before a byte of it is read.
TEST_F(FileIOTest, LimitedReadsRefuseWhatIsNotARegularFileOrTooLarge) {
  const rt::ReadLimits limits{/*regularOnly=*/true, /*maxBytes=*/1000};
  std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  tilec::Result<rt::FileContents> read = rt::readFileContents(fifo, limits);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.message(), fifo + ": not a regular file");
  std::string zero = dir + "/zero";
  ASSERT_EQ(::symlink("/dev/zero", zero.c_str()), 0);
  read = rt::readFileContents(zero, limits);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.message(), zero + ": not a regular file");
  // A sparse 1 GiB file: refused by its size, so the test reads nothing.
  std::string large = dir + "/large";
  ASSERT_TRUE(rt::writeFileAtomically(large, "x").ok());
  ASSERT_EQ(::truncate(large.c_str(), off_t(1) << 30), 0);
  read = rt::readFileContents(large, limits);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.message(),
            large + ": 1073741824 bytes, more than the 1000 allowed");
  // Within the limits the file reads as without them.
  std::string small = dir + "/small";
  ASSERT_TRUE(rt::writeFileAtomically(small, std::string(1000, 'y')).ok());
  read = rt::readFileContents(small, limits);
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->bytes, std::string(1000, 'y'));
}

TEST_F(FileIOTest, AtomicWriteReplacesTheFileAndLeavesNoTemporary) {
  std::string path = dir + "/entry";
  ASSERT_TRUE(rt::writeFileAtomically(path, "old").ok());
  ASSERT_TRUE(rt::writeFileAtomically(path, "new contents").ok());
  EXPECT_EQ(*rt::readFile(path), "new contents");
  rt::AtomicWriteOptions quick;
  quick.durable = false;
  ASSERT_TRUE(rt::writeFileAtomically(path, "", quick).ok());
  EXPECT_EQ(*rt::readFile(path), "");
  EXPECT_EQ(listDirectory(dir), std::vector<std::string>{"entry"});
}

TEST_F(FileIOTest, WriteIntoAMissingDirectoryNamesThePath) {
  std::string path = dir + "/no/such/entry";
  tilec::Status status = rt::writeFileAtomically(path, "x");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("cannot create " + path + ".tmp.", 0), 0u)
      << status.message();
  EXPECT_NE(status.message().find(": No such file or directory"),
            std::string::npos)
      << status.message();
}

// Writers in several processes replace one file again and again while this
// process reads it: every read must be one writer's whole contents.
TEST_F(FileIOTest, ConcurrentWritersNeverLeaveAHalfWrittenFile) {
  constexpr int kWriters = 6;
  constexpr int kWrites = 40;
  constexpr size_t kBytes = 512 << 10;
  std::string path = dir + "/shared";
  ASSERT_TRUE(rt::writeFileAtomically(path, std::string(kBytes, '0')).ok());
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> writers;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gate[1]);
      char byte;
      (void)!::read(gate[0], &byte, 1);
      std::string contents(kBytes, char('a' + w));
      int failures = 0;
      for (int i = 0; i < kWrites; ++i)
        failures += !rt::writeFileAtomically(path, contents).ok();
      ::_exit(failures);
    }
    writers.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]); // opens the gate

  int reads = 0, torn = 0, running = kWriters;
  while (running > 0) {
    tilec::Result<std::string> read = rt::readFile(path);
    ++reads;
    bool whole = read && read->size() == kBytes &&
                 std::all_of(read->begin(), read->end(),
                             [&](char c) { return c == read->front(); });
    torn += !whole;
    for (pid_t &pid : writers) {
      int status = 0;
      if (pid > 0 && ::waitpid(pid, &status, WNOHANG) == pid) {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << "a writer failed";
        pid = 0;
        --running;
      }
    }
  }
  EXPECT_EQ(torn, 0) << "of " << reads << " reads";
  EXPECT_GT(reads, 1);
  EXPECT_EQ(temporaries(dir), std::vector<std::string>{});
}

// RLIMIT_FSIZE makes the write fail part way, as a full disk does.
TEST_F(FileIOTest, AFailedWriteKeepsTheOldContentsAndRemovesTheTemporary) {
  std::string path = dir + "/entry";
  ASSERT_TRUE(rt::writeFileAtomically(path, "old contents\n").ok());
  ChildResult child = runInChild([&](std::string &report) {
    ::signal(SIGXFSZ, SIG_IGN); // EFBIG instead of the signal
    struct rlimit limit = {64 << 10, 64 << 10};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0)
      return 2;
    tilec::Status status =
        rt::writeFileAtomically(path, std::string(1 << 20, 'x'));
    report = status.message();
    return status.ok() ? 1 : 0;
  });
  ASSERT_EQ(child.exitCode, 0) << "the write past the limit succeeded";
  EXPECT_EQ(child.output.rfind("cannot write " + path + ".tmp.", 0), 0u)
      << child.output;
  EXPECT_NE(child.output.find(": File too large"), std::string::npos)
      << child.output;
  EXPECT_EQ(*rt::readFile(path), "old contents\n");
  EXPECT_EQ(temporaries(dir), std::vector<std::string>{});
}

// A real full disk: a 256 KiB tmpfs in a mount namespace of a child (needs
// CAP_SYS_ADMIN; skipped without it).
TEST_F(FileIOTest, AFullDiskReportsNoSpaceAndFreesTheTemporary) {
  std::string mount = dir + "/small";
  ASSERT_TRUE(rt::makeDirectories(mount).ok());
  ChildResult child = runInChild([&](std::string &report) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tilec-test", mount.c_str(), "tmpfs", 0, "size=256k") != 0) {
      report = std::string("cannot mount a tmpfs: ") + std::strerror(errno);
      return 77;
    }
    std::string path = mount + "/entry";
    if (tilec::Status s = rt::writeFileAtomically(path, "old"); !s.ok()) {
      report = "first write: " + s.message();
      return 1;
    }
    tilec::Status full = rt::writeFileAtomically(path, std::string(1 << 20, 'x'));
    report = full.message() + "\n";
    if (full.ok() ||
        full.message().find(": No space left on device") == std::string::npos)
      return 1;
    tilec::Result<std::string> kept = rt::readFile(path);
    report += "kept: " + (kept ? *kept : kept.message()) + "\n";
    report +=
        "temporaries: " + std::to_string(temporaries(mount).size()) + "\n";
    // Fits only if the failed write's 256 KiB went with its temporary.
    tilec::Status after =
        rt::writeFileAtomically(path, std::string(192 << 10, 'y'));
    report += "after: " + (after.ok() ? "ok" : after.message()) + "\n";
    return 0;
  });
  if (child.exitCode == 77)
    GTEST_SKIP() << child.output;
  ASSERT_EQ(child.exitCode, 0) << child.output;
  EXPECT_NE(child.output.find("kept: old\n"), std::string::npos)
      << child.output;
  EXPECT_NE(child.output.find("temporaries: 0\n"), std::string::npos)
      << child.output;
  EXPECT_NE(child.output.find("after: ok\n"), std::string::npos)
      << child.output;
}

TEST_F(FileIOTest, AWriterKilledBeforeTheRenameLeavesTheOldFile) {
  std::string path = dir + "/entry";
  ASSERT_TRUE(rt::writeFileAtomically(path, "old").ok());
  pid_t writer = ::fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    rt::AtomicWriteOptions options;
    options.beforeRename = [] { ::_exit(86); };
    (void)rt::writeFileAtomically(path, "new", options);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(writer, &status, 0), writer);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 86);
  EXPECT_EQ(*rt::readFile(path), "old");
  std::vector<std::string> left = temporaries(dir);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(rt::temporaryFileWriter(left[0]), writer) << left[0];
}

TEST(FileIO, TemporaryFileNames) {
  EXPECT_TRUE(rt::isTemporaryFileName("ab.cubin.tmp.1234.0123456789abcdef"));
  EXPECT_EQ(rt::temporaryFileWriter("ab.cubin.tmp.1234.0123456789abcdef"),
            1234);
  EXPECT_FALSE(rt::isTemporaryFileName("ab.cubin"));
  EXPECT_EQ(rt::temporaryFileWriter("ab.cubin"), std::nullopt);
  EXPECT_EQ(rt::temporaryFileWriter("ab.tmp.x1.0"), std::nullopt);
  EXPECT_EQ(rt::temporaryFileWriter("ab.tmp.0.0"), std::nullopt);
}

TEST(FileIO, ParentDirectory) {
  EXPECT_EQ(rt::parentDirectory("/a/b/c.json"), "/a/b");
  EXPECT_EQ(rt::parentDirectory("/c.json"), "/");
  EXPECT_EQ(rt::parentDirectory("c.json"), ".");
  EXPECT_EQ(rt::parentDirectory("a/c.json"), "a");
}

TEST_F(FileIOTest, TheLockExcludesAnotherProcessUntilReleased) {
  std::string path = dir + "/cache.lock";
  tilec::Result<rt::FileLock> acquired = rt::FileLock::acquire(path);
  ASSERT_TRUE(acquired) << acquired.message();
  // Held through a moved-to object: the move must not release it.
  std::optional<rt::FileLock> held(std::move(*acquired));
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  pid_t other = ::fork();
  ASSERT_GE(other, 0);
  if (other == 0) {
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    bool busy =
        fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    (void)!::write(report[1], busy ? "B" : "F", 1);
    tilec::Result<rt::FileLock> mine = rt::FileLock::acquire(path);
    (void)!::write(report[1], mine ? "L" : "E", 1);
    ::_exit(0);
  }
  ::close(report[1]);
  EXPECT_EQ(readByteWithin(report[0], 10000), 'B')
      << "another process could take the lock";
  EXPECT_EQ(readByteWithin(report[0], 300), 0)
      << "acquire() returned while the lock was held";
  held.reset();
  EXPECT_EQ(readByteWithin(report[0], 10000), 'L')
      << "the lock was not handed over on release";
  ::close(report[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(other, &status, 0), other);
}

void ignoreSignal(int) {}

// A signal without SA_RESTART interrupts flock with EINTR; the wait goes on.
TEST_F(FileIOTest, WaitingForTheLockSurvivesSignals) {
  std::string path = dir + "/cache.lock";
  std::optional<rt::FileLock> held;
  {
    tilec::Result<rt::FileLock> acquired = rt::FileLock::acquire(path);
    ASSERT_TRUE(acquired) << acquired.message();
    held.emplace(std::move(*acquired));
  }
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t waiter = ::fork();
  ASSERT_GE(waiter, 0);
  if (waiter == 0) {
    struct sigaction action = {};
    action.sa_handler = ignoreSignal;
    ::sigaction(SIGUSR1, &action, nullptr);
    (void)!::write(ready[1], "R", 1);
    ::_exit(rt::FileLock::acquire(path) ? 0 : 1);
  }
  ::close(ready[1]);
  ASSERT_EQ(readByteWithin(ready[0], 10000), 'R');
  ::close(ready[0]);
  for (int i = 0; i < 5; ++i) {
    ::usleep(40000);
    ::kill(waiter, SIGUSR1);
  }
  held.reset();
  int status = 0;
  ASSERT_EQ(::waitpid(waiter, &status, 0), waiter);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "acquire() gave up on a signal";
}

TEST_F(FileIOTest, ALockInAMissingDirectoryNamesThePath) {
  std::string path = dir + "/no/such.lock";
  tilec::Result<rt::FileLock> lock = rt::FileLock::acquire(path);
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.message(),
            "cannot open lock file " + path + ": No such file or directory");
}

} // namespace
