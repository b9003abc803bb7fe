//===- RedisFixture.h - A real redis-server for one test --------*- C++ -*-===//
//
// The shared-cache tests talk to the real server: redis-server on a free
// loopback port, in the test's temporary directory, with persistence off.
// It runs in a process group of its own, is killed with SIGKILL when the
// object goes (a failed assertion included), and dies with the test process
// if that is killed first (PR_SET_PDEATHSIG), so no server outlives its test.
//
// Without redis-server the tests that need one skip, saying so; with
// TILEC_REQUIRE_REDIS=1 (scripts/test.sh, which installs it) they fail
// instead, so that CI cannot pass without running them.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TEST_UNIT_CACHE_REDISFIXTURE_H
#define TILEC_TEST_UNIT_CACHE_REDISFIXTURE_H

#include "tilec/runtime/RemoteCache.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tilec::test {

class RedisServer {
public:
  // The redis-server on PATH (or in /usr/bin, /usr/sbin), or empty.
  static std::string findExecutable() {
    std::vector<std::string> directories = {"/usr/bin", "/usr/sbin",
                                            "/usr/local/bin"};
    if (const char *path = std::getenv("PATH")) {
      std::string list = path;
      for (size_t start = 0; start <= list.size();) {
        size_t end = list.find(':', start);
        if (end == std::string::npos)
          end = list.size();
        directories.insert(directories.begin(),
                           list.substr(start, end - start));
        start = end + 1;
      }
    }
    for (const std::string &directory : directories) {
      std::string candidate = directory + "/redis-server";
      if (::access(candidate.c_str(), X_OK) == 0)
        return candidate;
    }
    return "";
  }

  // A port nothing listens on right now (the kernel's pick).
  static int freePort() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = loopback(0);
    socklen_t length = sizeof(address);
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) ==
            0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) == 0)
      port = ntohs(address.sin_port);
    ::close(fd);
    return port;
  }

  // Starts a server in `directory` (its log is <directory>/redis.log) with
  // `extra` arguments; null when none answered PING within 10 s in any of
  // three tries (another process may take the port between the pick and the
  // bind).
  static std::unique_ptr<RedisServer>
  start(const std::string &executable, const std::string &directory,
        std::vector<std::string> extra = {}) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      std::unique_ptr<RedisServer> server(
          new RedisServer(executable, directory, freePort(), extra));
      if (server->waitUntilReady())
        return server;
    }
    return nullptr;
  }

  ~RedisServer() { kill(); }
  RedisServer(const RedisServer &) = delete;
  RedisServer &operator=(const RedisServer &) = delete;

  int port() const { return port_; }
  // "127.0.0.1:<port>", as TILEC_REDIS takes it.
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  // SIGKILL to the server's group, then reaps it. Idempotent.
  void kill() {
    if (pid_ <= 0)
      return;
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  // Freezes and thaws the server: connections are still accepted by the
  // kernel, but nothing answers.
  void pause() { ::kill(pid_, SIGSTOP); }
  void resume() { ::kill(pid_, SIGCONT); }

  // Sends one command and returns the first line of the reply ("+PONG",
  // ":12", "$-1"), or nothing when the server did not answer within 2 s.
  std::optional<std::string>
  command(const std::vector<std::string> &arguments) const {
    std::optional<std::string> reply = rawReply(arguments);
    if (!reply)
      return std::nullopt;
    return reply->substr(0, reply->find("\r\n"));
  }

  // The connections' last commands, from CLIENT LIST ("get", "set", ...),
  // this query's own left out.
  std::vector<std::string> clientCommands() const {
    std::vector<std::string> commands;
    std::optional<std::string> list = rawReply({"CLIENT", "LIST"});
    for (size_t at = list ? list->find(" cmd=") : std::string::npos;
         at != std::string::npos; at = list->find(" cmd=", at + 1)) {
      std::string command =
          list->substr(at + 5, list->find(' ', at + 5) - at - 5);
      if (command != "client|list")
        commands.push_back(command);
    }
    return commands;
  }

  // How many keys of the default namespace are entries, not leases; -1 when
  // the server does not answer.
  long entryCount() const {
    std::optional<std::string> reply =
        command({"EVAL",
                 "return #redis.call('KEYS', 'tilec:1:*') - "
                 "#redis.call('KEYS', 'tilec:1:lease:*')",
                 "0"});
    if (!reply || reply->empty() || (*reply)[0] != ':')
      return -1;
    return std::strtol(reply->c_str() + 1, nullptr, 10);
  }

  // DBSIZE: how many keys the server holds; -1 when it does not answer.
  long keyCount() const {
    std::optional<std::string> reply = command({"DBSIZE"});
    if (!reply || reply->empty() || (*reply)[0] != ':')
      return -1;
    return std::strtol(reply->c_str() + 1, nullptr, 10);
  }

private:
  // The whole reply of one command whose reply is a status, an integer or
  // a bulk string, or nothing after 2 s of silence.
  std::optional<std::string>
  rawReply(const std::vector<std::string> &arguments) const {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = loopback(port_);
    if (::connect(fd, reinterpret_cast<sockaddr *>(&address),
                  sizeof(address)) != 0) {
      ::close(fd);
      return std::nullopt;
    }
    std::string request = "*" + std::to_string(arguments.size()) + "\r\n";
    for (const std::string &argument : arguments)
      request +=
          "$" + std::to_string(argument.size()) + "\r\n" + argument + "\r\n";
    std::string reply;
    // The first line, then a bulk string's body and its CRLF.
    auto complete = [&reply] {
      size_t end = reply.find("\r\n");
      if (end == std::string::npos)
        return false;
      if (reply[0] != '$')
        return true;
      long body = std::strtol(reply.c_str() + 1, nullptr, 10);
      return body < 0 || reply.size() >= end + 2 + size_t(body) + 2;
    };
    if (::write(fd, request.data(), request.size()) ==
        ssize_t(request.size())) {
      pollfd ready = {fd, POLLIN, 0};
      char buffer[4096];
      while (!complete() && ::poll(&ready, 1, 2000) == 1) {
        ssize_t got = ::read(fd, buffer, sizeof(buffer));
        if (got <= 0)
          break;
        reply.append(buffer, size_t(got));
      }
    }
    ::close(fd);
    if (!complete())
      return std::nullopt;
    return reply;
  }

  RedisServer(const std::string &executable, const std::string &directory,
              int port, const std::vector<std::string> &extra)
      : port_(port) {
    std::vector<std::pair<std::string, std::string>> settings = {
        {"--port", std::to_string(port)},
        {"--bind", "127.0.0.1"},
        // No snapshots and no append-only file: nothing outlives the test.
        {"--save", ""},
        {"--appendonly", "no"},
        {"--daemonize", "no"},
        {"--dir", directory},
        {"--logfile", directory + "/redis.log"}};
    std::vector<std::string> arguments = {executable};
    for (const auto &[name, value] : settings) {
      arguments.push_back(name);
      arguments.push_back(value);
    }
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      std::vector<char *> argv;
      for (std::string &argument : arguments)
        argv.push_back(argument.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    if (pid_ > 0)
      ::setpgid(pid_, pid_);
  }

  bool waitUntilReady() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (pid_ <= 0 || ::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      // +PONG, or -NOAUTH from a server that wants a password.
      if (command({"PING"}))
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill();
    return false;
  }

  static sockaddr_in loopback(int port) {
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_port = htons(uint16_t(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
  }

  pid_t pid_ = -1;
  int port_ = 0;
};

// A temporary directory with a server running in it.
class RedisTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/tilec-redis-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root = pattern;
    std::string executable = RedisServer::findExecutable();
    if (executable.empty()) {
      const char *required = std::getenv("TILEC_REQUIRE_REDIS");
      ASSERT_FALSE(required && std::string(required) == "1")
          << "redis-server not found, and TILEC_REQUIRE_REDIS=1";
      GTEST_SKIP() << "redis-server not found (Debian: apt-get install "
                      "redis-server; scripts/install-deps.sh installs it)";
    }
    server = RedisServer::start(executable, root);
    ASSERT_TRUE(server) << "redis-server did not start; see " << root
                        << "/redis.log";
  }
  void TearDown() override {
    server.reset();
    ASSERT_EQ(std::system(("rm -rf '" + root + "'").c_str()), 0);
  }

  rt::RemoteCacheOptions options() const {
    rt::RemoteCacheOptions options;
    options.port = server->port();
    return options;
  }
  // A tier on the test's server (or with `options`) whose warnings go to
  // `warnings`.
  std::shared_ptr<rt::RemoteCache> connect() { return connect(options()); }
  std::shared_ptr<rt::RemoteCache> connect(rt::RemoteCacheOptions options) {
    return std::make_shared<rt::RemoteCache>(
        std::move(options),
        [this](const std::string &message) { warnings.push_back(message); });
  }

  std::string root;
  std::unique_ptr<RedisServer> server;
  std::vector<std::string> warnings;
};

} // namespace tilec::test

#endif // TILEC_TEST_UNIT_CACHE_REDISFIXTURE_H
