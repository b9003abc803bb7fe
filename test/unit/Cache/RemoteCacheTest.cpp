//===- RemoteCacheTest.cpp - The connection to the shared tier ------------===//
//
// Addresses and the environment, the commands against a real redis-server,
// AUTH and SELECT, and the failure policy: no server, no hiredis, a frozen
// server, a refused password each give one warning and turn the tier off
// without waiting past the timeout.
//
//===----------------------------------------------------------------------===//

#include "RedisFixture.h"

#include "tilec/runtime/RemoteCache.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

using tilec::rt::RemoteCache;
using tilec::rt::RemoteCacheOptions;
using tilec::test::RedisServer;
using tilec::test::RedisTest;

namespace {

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

TEST(RemoteCacheAddress, ParsesUrlsAndHostPorts) {
  auto plain = RemoteCacheOptions::parseAddress("cachebox");
  ASSERT_TRUE(plain) << plain.message();
  EXPECT_EQ(plain->host, "cachebox");
  EXPECT_EQ(plain->port, 6379);
  EXPECT_EQ(plain->database, 0);
  EXPECT_EQ(plain->url(), "redis://cachebox:6379/0");

  auto full = RemoteCacheOptions::parseAddress(
      "redis://builder:s3cret@10.0.0.7:6380/4");
  ASSERT_TRUE(full) << full.message();
  EXPECT_EQ(full->host, "10.0.0.7");
  EXPECT_EQ(full->port, 6380);
  EXPECT_EQ(full->database, 4);
  EXPECT_EQ(full->user, "builder");
  EXPECT_EQ(full->password, "s3cret");
  // Messages never carry the password.
  EXPECT_EQ(full->url(), "redis://builder@10.0.0.7:6380/4");

  auto password = RemoteCacheOptions::parseAddress("redis://:pw@host");
  ASSERT_TRUE(password);
  EXPECT_EQ(password->user, "");
  EXPECT_EQ(password->password, "pw");

  auto ipv6 = RemoteCacheOptions::parseAddress("[::1]:7000");
  ASSERT_TRUE(ipv6) << ipv6.message();
  EXPECT_EQ(ipv6->host, "::1");
  EXPECT_EQ(ipv6->port, 7000);
  EXPECT_EQ(ipv6->url(), "redis://[::1]:7000/0");

  auto hostPort = RemoteCacheOptions::parseAddress("127.0.0.1:6390");
  ASSERT_TRUE(hostPort);
  EXPECT_EQ(hostPort->port, 6390);
}

TEST(RemoteCacheAddress, ErrorsNameThePartThatIsWrong) {
  struct Case {
    const char *address;
    const char *expected;
  };
  for (Case c : {Case{"rediss://host", "the scheme must be redis://"},
                 Case{"host:0", "the port '0' is not a number from 1 to"},
                 Case{"host:99999", "the port '99999'"},
                 Case{"host:http", "the port 'http'"},
                 Case{"redis://host/x", "the database 'x'"},
                 Case{"redis://:6379", "no host"},
                 Case{"::1:6379", "an IPv6 address needs brackets"},
                 Case{"redis://user@host", "needs a ':' before the password"},
                 Case{"[::1", "'[' without ']'"}}) {
    auto parsed = RemoteCacheOptions::parseAddress(c.address);
    ASSERT_FALSE(parsed) << c.address;
    EXPECT_NE(parsed.message().find(c.expected), std::string::npos)
        << c.address << ": " << parsed.message();
    EXPECT_NE(parsed.message().find(std::string("'") + c.address + "'"),
              std::string::npos)
        << parsed.message();
  }
  auto secret = RemoteCacheOptions::parseAddress("redis://u:hunter2@h:x");
  ASSERT_FALSE(secret);
  EXPECT_EQ(secret.message().find("hunter2"), std::string::npos)
      << secret.message();
  EXPECT_NE(secret.message().find("'redis://u:...@h:x'"), std::string::npos)
      << secret.message();
}

TEST(RemoteCacheAddress, EnvironmentNamesTheVariable) {
  tilec::rt::Environment environment;
  auto unset = RemoteCacheOptions::fromEnvironment(environment);
  ASSERT_TRUE(unset);
  EXPECT_FALSE(*unset);

  environment.redis = "redis://cachebox:6390/2";
  environment.redisNamespace = "team-a";
  environment.redisTimeoutMs = "250";
  auto set = RemoteCacheOptions::fromEnvironment(environment);
  ASSERT_TRUE(set) << set.message();
  ASSERT_TRUE(*set);
  EXPECT_EQ((*set)->host, "cachebox");
  EXPECT_EQ((*set)->database, 2);
  EXPECT_EQ((*set)->keyNamespace, "team-a");
  EXPECT_EQ((*set)->timeoutMs, 250);
  EXPECT_EQ((*set)->leaseMs, 30000);
  EXPECT_EQ(RemoteCache(**set).key("cubin", "ab12"), "team-a:1:cubin:ab12");

  // A namespace that would widen or break "<namespace>:*" is refused.
  for (const char *bad : {"team*", "a:b", "x\ny", "with space", "q?"}) {
    environment.redisNamespace = bad;
    auto refused = RemoteCacheOptions::fromEnvironment(environment);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.message().find("TILEC_REDIS_NAMESPACE: '"),
              std::string::npos)
        << refused.message();
  }
  environment.redisNamespace = "team-a.v2_x";
  EXPECT_TRUE(RemoteCacheOptions::fromEnvironment(environment));
  environment.redisNamespace = "team-a";

  environment.redisTimeoutMs = "0";
  auto zero = RemoteCacheOptions::fromEnvironment(environment);
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.message().find("TILEC_REDIS_TIMEOUT_MS: '0'"),
            std::string::npos)
      << zero.message();
  environment.redisTimeoutMs.clear();
  environment.redisLeaseMs = "2500";
  EXPECT_EQ((**RemoteCacheOptions::fromEnvironment(environment)).leaseMs, 2500);
  environment.redisLeaseMs = "600001";
  auto longLease = RemoteCacheOptions::fromEnvironment(environment);
  ASSERT_FALSE(longLease);
  EXPECT_NE(longLease.message().find("TILEC_REDIS_LEASE_MS: '600001'"),
            std::string::npos)
      << longLease.message();
  environment.redisLeaseMs.clear();
  environment.redis = "host:port";
  auto bad = RemoteCacheOptions::fromEnvironment(environment);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.message().rfind("TILEC_REDIS: 'host:port'", 0), 0u)
      << bad.message();
}

// A server that answers a byte every 100 ms (each read within the socket's
// timeout) and announces a long reply: the request ends at its deadline. It
// held a compile 21.9 s with a timeout of 150 ms when the timeout bounded
// each read instead of the reply.
TEST(RemoteCacheFailure, ADrippingReplyEndsAtTheDeadline) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(
      ::bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof(address)),
      0);
  ASSERT_EQ(::listen(listener, 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(
      ::getsockname(listener, reinterpret_cast<sockaddr *>(&address), &length),
      0);
  std::atomic<bool> stop{false};
  std::thread server([&] {
    int client = ::accept(listener, nullptr, nullptr);
    if (client < 0)
      return;
    char request[256];
    (void)::read(client, request, sizeof(request));
    std::string reply = "$1000\r\n" + std::string(1000, 'x') + "\r\n";
    for (char byte : reply) {
      if (stop || ::write(client, &byte, 1) != 1)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::close(client);
  });
  RemoteCacheOptions options;
  options.port = ntohs(address.sin_port);
  std::vector<std::string> warnings;
  RemoteCache remote(options, [&](const std::string &message) {
    warnings.push_back(message);
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(remote.get("tilec:1:cubin:x"));
  double elapsed = msSince(start);
  stop = true;
  server.join();
  ::close(listener);
  EXPECT_GE(elapsed, 140);
  EXPECT_LT(elapsed, 1500);
  EXPECT_FALSE(remote.enabled());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("no reply within 150 ms"), std::string::npos)
      << warnings[0];
}

// Nothing listens on the port: the first request warns, later ones fail at
// once and say nothing.
TEST(RemoteCacheFailure, NoServerWarnsOnceAndTurnsOff) {
  RemoteCacheOptions options;
  options.port = RedisServer::freePort();
  std::vector<std::string> warnings;
  RemoteCache remote(options, [&](const std::string &message) {
    warnings.push_back(message);
  });
  EXPECT_TRUE(remote.enabled());
  auto start = std::chrono::steady_clock::now();
  auto value = remote.get("tilec:1:cubin:x");
  EXPECT_FALSE(value);
  EXPECT_FALSE(remote.enabled());
  EXPECT_FALSE(remote.set("tilec:1:cubin:x", "v").ok());
  EXPECT_FALSE(remote.hashGet("h", "f"));
  EXPECT_LT(msSince(start), 1000);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(
                "cannot connect to 127.0.0.1:" + std::to_string(options.port) +
                ": Connection refused"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("using the local caches only"), std::string::npos);
}

// A program on a machine without libhiredis runs local-only.
TEST(RemoteCacheFailure, MissingHiredisWarnsOnce) {
  RemoteCacheOptions options;
  options.hiredisLibrary = "libtilec-no-such-hiredis.so.0";
  std::vector<std::string> warnings;
  RemoteCache remote(options, [&](const std::string &message) {
    warnings.push_back(message);
  });
  EXPECT_FALSE(remote.get("k"));
  EXPECT_FALSE(remote.get("k"));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cannot load libtilec-no-such-hiredis.so.0"),
            std::string::npos)
      << warnings[0];
}

TEST_F(RedisTest, StringsAndHashFields) {
  auto remote = connect();
  auto absent = remote->get(remote->key("cubin", "none"));
  ASSERT_TRUE(absent) << absent.message();
  EXPECT_FALSE(*absent);
  // Values are binary: NUL and 0xff bytes survive.
  std::string value("tilec\0cache\xff", 12);
  ASSERT_TRUE(remote->set("k", value).ok());
  auto got = remote->get("k");
  ASSERT_TRUE(got && *got);
  EXPECT_EQ(**got, value);

  EXPECT_FALSE(*remote->hashAnyField("h"));
  ASSERT_TRUE(remote->hashSet("h", "f1", "one").ok());
  ASSERT_TRUE(remote->hashSet("h", "f2", "two").ok());
  EXPECT_EQ(**remote->hashGet("h", "f1"), "one");
  EXPECT_FALSE(*remote->hashGet("h", "f3"));
  auto any = remote->hashAnyField("h");
  ASSERT_TRUE(any && *any) << any.message();
  EXPECT_EQ((*any)->second, (*any)->first == "f1" ? "one" : "two");
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(server->keyCount(), 2);
}

// A lease is created once, expires, and is deleted only by its owner.
TEST_F(RedisTest, LeaseIsTakenOnceAndReleasedByItsOwner) {
  auto remote = connect();
  EXPECT_TRUE(*remote->setIfAbsent("lease", "a", 60000));
  EXPECT_FALSE(*remote->setIfAbsent("lease", "b", 60000));
  ASSERT_TRUE(remote->deleteIfEqual("lease", "b").ok());
  EXPECT_EQ(**remote->get("lease"), "a");
  ASSERT_TRUE(remote->deleteIfEqual("lease", "a").ok());
  EXPECT_FALSE(*remote->get("lease"));

  EXPECT_TRUE(*remote->setIfAbsent("short", "a", 50));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(*remote->setIfAbsent("short", "b", 60000));
  EXPECT_TRUE(warnings.empty());
}

// A request to a wrong type is an error reply: it turns the tier off too.
TEST_F(RedisTest, ErrorReplyTurnsTheTierOff) {
  auto remote = connect();
  ASSERT_TRUE(remote->hashSet("h", "f", "v").ok());
  EXPECT_FALSE(remote->get("h"));
  EXPECT_FALSE(remote->enabled());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("GET h: the server answered 'WRONGTYPE"),
            std::string::npos)
      << warnings[0];
}

// A server that accepts connections but answers nothing (stopped) costs one
// timeout, then nothing.
TEST_F(RedisTest, FrozenServerTimesOutOnce) {
  auto remote = connect();
  ASSERT_TRUE(remote->set("k", "v").ok());
  server->pause();
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(remote->get("k"));
  for (int i = 0; i < 10; ++i)
    EXPECT_FALSE(remote->get("k"));
  double elapsed = msSince(start);
  server->resume();
  // One wait of 150 ms, with room for a loaded machine.
  EXPECT_GE(elapsed, 140);
  EXPECT_LT(elapsed, 1500);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("no reply within 150 ms"), std::string::npos)
      << warnings[0];
}

// A connection that was made before a fork is not shared by the child.
TEST_F(RedisTest, ForkedChildOpensItsOwnConnection) {
  auto remote = connect();
  ASSERT_TRUE(remote->set("parent", "1").ok());
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool ok = remote->set("child", "2").ok() && remote->get("parent").ok();
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto value = remote->get("child");
  ASSERT_TRUE(value && *value) << value.message();
  EXPECT_EQ(**value, "2");
  EXPECT_TRUE(warnings.empty());
}

class RedisAuthTest : public RedisTest {
protected:
  void SetUp() override {
    RedisTest::SetUp();
    if (IsSkipped() || HasFatalFailure())
      return;
    server.reset();
    server = RedisServer::start(RedisServer::findExecutable(), root,
                                {"--requirepass", "s3cret"});
    ASSERT_TRUE(server);
  }
};

TEST_F(RedisAuthTest, PasswordAndDatabase) {
  RemoteCacheOptions withPassword = options();
  withPassword.password = "s3cret";
  withPassword.database = 3;
  auto remote = connect(withPassword);
  ASSERT_TRUE(remote->set("k", "in db 3").ok());
  EXPECT_EQ(**remote->get("k"), "in db 3");
  withPassword.database = 0;
  EXPECT_FALSE(*connect(withPassword)->get("k"));
  EXPECT_TRUE(warnings.empty());

  RemoteCacheOptions wrong = options();
  wrong.password = "guess";
  auto refused = connect(wrong);
  EXPECT_FALSE(refused->get("k"));
  EXPECT_FALSE(refused->get("k"));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("AUTH was refused"), std::string::npos)
      << warnings[0];
  EXPECT_EQ(warnings[0].find("guess"), std::string::npos) << warnings[0];

  auto anonymous = connect();
  EXPECT_FALSE(anonymous->get("k"));
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[1].find("NOAUTH"), std::string::npos) << warnings[1];
}

} // namespace
