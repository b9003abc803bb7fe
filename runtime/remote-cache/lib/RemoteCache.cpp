//===- RemoteCache.cpp - The shared cache tier on a Redis server ----------===//

#include "tilec/runtime/RemoteCache.h"

#include "Hiredis.h"
#include "tilec/runtime/Environment.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

namespace tilec::rt {

namespace {

// The layout of the keys (RemoteCache.h); a change that makes old values
// unreadable under the same names bumps it.
constexpr std::string_view kLayoutVersion = "1";
constexpr int kDefaultPort = 6379;
constexpr int kMaxTimeoutMs = 60000;
constexpr int kMaxLeaseMs = 600000;

constexpr unsigned typeBit(int type) { return 1u << unsigned(type); }

bool parseDecimal(std::string_view text, int64_t max, int64_t &value) {
  if (text.empty() || text.size() > 10)
    return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + (c - '0');
  }
  return value <= max;
}

// `out` from the variable `name`'s `text` where it is set: a number of
// milliseconds from 1 to `max`; left alone where the variable is unset or
// empty.
Status readMilliseconds(const char *name, const std::string &text, int64_t max,
                        int &out) {
  if (text.empty())
    return Status::success();
  int64_t value = 0;
  if (!parseDecimal(text, max, value) || value == 0)
    return Status::error(std::string(name) + ": '" + text +
                         "' is not a number of milliseconds from 1 to " +
                         std::to_string(max));
  out = int(value);
  return Status::success();
}

// `address` with the password, if any, left out: errors quote it.
std::string redactPassword(std::string_view address) {
  size_t start = address.find("://");
  start = start == std::string_view::npos ? 0 : start + 3;
  size_t at = address.rfind('@');
  if (at == std::string_view::npos || at < start)
    return std::string(address);
  std::string_view userinfo = address.substr(start, at - start);
  size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos)
    return std::string(address);
  return std::string(address.substr(0, start + colon)) + ":...@" +
         std::string(address.substr(at + 1));
}

// hiredis writes with write(2), so a server that closed the connection
// would end the process with SIGPIPE. The signal is blocked in this thread
// for the duration of a request, and one that the request raised is taken
// back before the mask is restored; the failed write itself reports EPIPE.
class SigpipeBlock {
public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    wasPending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~SigpipeBlock() {
    sigset_t pending;
    sigpending(&pending);
    if (!wasPending_ && sigismember(&pending, SIGPIPE) == 1) {
      struct timespec now = {0, 0};
      sigtimedwait(&pipe_, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock &) = delete;
  SigpipeBlock &operator=(const SigpipeBlock &) = delete;

private:
  sigset_t pipe_;
  sigset_t previous_;
  bool wasPending_ = false;
};

std::string describeType(int type) {
  switch (type) {
  case REDIS_REPLY_STRING:
    return "a string";
  case REDIS_REPLY_ARRAY:
    return "an array";
  case REDIS_REPLY_INTEGER:
    return "an integer";
  case REDIS_REPLY_NIL:
    return "nil";
  case REDIS_REPLY_STATUS:
    return "a status";
  case REDIS_REPLY_ERROR:
    return "an error";
  default:
    return "reply type " + std::to_string(type);
  }
}

} // namespace

void printCacheWarning(const std::string &message) {
  std::fprintf(stderr, "warning: %s\n", message.c_str());
}

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

Result<RemoteCacheOptions>
RemoteCacheOptions::parseAddress(std::string_view address) {
  auto bad = [&](const std::string &why) {
    return Status::error(
        "'" + redactPassword(address) + "' is not a Redis address: " + why +
        " (expected redis://[[user]:password@]host[:port][/db] or "
        "host[:port])");
  };
  RemoteCacheOptions options;
  std::string_view rest = address;
  if (size_t scheme = rest.find("://"); scheme != std::string_view::npos) {
    if (rest.substr(0, scheme) != "redis")
      return bad("the scheme must be redis:// (TLS and unix sockets are not "
                 "supported)");
    rest.remove_prefix(scheme + 3);
  }
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos)
      return bad("the part before '@' needs a ':' before the password "
                 "(redis://:password@host for a password alone)");
    options.user = std::string(userinfo.substr(0, colon));
    options.password = std::string(userinfo.substr(colon + 1));
    rest.remove_prefix(at + 1);
  }
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
    std::string_view database = rest.substr(slash + 1);
    int64_t value = 0;
    if (!database.empty() && !parseDecimal(database, INT32_MAX, value))
      return bad("the database '" + std::string(database) +
                 "' is not a non-negative number");
    options.database = int(value);
    rest = rest.substr(0, slash);
  }
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    if (close == std::string_view::npos)
      return bad("'[' without ']'");
    options.host = std::string(rest.substr(1, close - 1));
    std::string_view after = rest.substr(close + 1);
    if (!after.empty() && after.front() != ':')
      return bad("'" + std::string(after) + "' after the address");
    port = after.empty() ? after : after.substr(1);
  } else {
    size_t colon = rest.find(':');
    if (colon != std::string_view::npos &&
        rest.find(':', colon + 1) != std::string_view::npos)
      return bad("an IPv6 address needs brackets, as in [::1]:6379");
    options.host = std::string(rest.substr(0, colon));
    port = colon == std::string_view::npos ? std::string_view()
                                           : rest.substr(colon + 1);
  }
  if (options.host.empty())
    return bad("no host");
  options.port = kDefaultPort;
  if (!port.empty()) {
    int64_t value = 0;
    if (!parseDecimal(port, 65535, value) || value == 0)
      return bad("the port '" + std::string(port) +
                 "' is not a number from 1 to 65535");
    options.port = int(value);
  }
  return options;
}

Result<std::optional<RemoteCacheOptions>>
RemoteCacheOptions::fromEnvironment(const Environment &environment) {
  if (environment.redis.empty())
    return std::optional<RemoteCacheOptions>();
  Result<RemoteCacheOptions> options = parseAddress(environment.redis);
  if (!options)
    return options.status().withContext("TILEC_REDIS");
  if (const std::string &ns = environment.redisNamespace; !ns.empty()) {
    // Letters, digits, '_', '-' and '.': the namespace starts every key, and
    // the documented cleanup matches "<namespace>:*", which a '*', ':', '?',
    // '[' or a space or newline in it would widen or break.
    std::string_view text = ns;
    if (text.size() > 64 || !std::all_of(text.begin(), text.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
        }))
      return Status::error("TILEC_REDIS_NAMESPACE: '" + std::string(text) +
                           "' must be 1 to 64 letters, digits, '_', '-' or "
                           "'.'");
    options->keyNamespace = ns;
  }
  TILEC_RETURN_IF_ERROR(readMilliseconds("TILEC_REDIS_TIMEOUT_MS",
                                         environment.redisTimeoutMs,
                                         kMaxTimeoutMs, options->timeoutMs));
  TILEC_RETURN_IF_ERROR(readMilliseconds("TILEC_REDIS_LEASE_MS",
                                         environment.redisLeaseMs, kMaxLeaseMs,
                                         options->leaseMs));
  return std::optional<RemoteCacheOptions>(std::move(*options));
}

std::string RemoteCacheOptions::url() const {
  std::string text = "redis://";
  if (!user.empty())
    text += user + "@";
  bool ipv6 = host.find(':') != std::string::npos;
  text += ipv6 ? "[" + host + "]" : host;
  return text + ":" + std::to_string(port) + "/" + std::to_string(database);
}

//===----------------------------------------------------------------------===//
// The connection
//===----------------------------------------------------------------------===//

// A reply copied out of hiredis's, which is freed at once.
struct RemoteCache::Reply {
  int type = REDIS_REPLY_NIL;
  // A string, status or error reply.
  std::string text;
  // An array reply of strings.
  std::vector<std::string> elements;
};

RemoteCache::RemoteCache(RemoteCacheOptions options,
                         CacheWarningHandler warning)
    : options_(std::move(options)), warning_(std::move(warning)) {
  if (!warning_)
    warning_ = printCacheWarning;
  if (options_.hiredisLibrary.empty())
    options_.hiredisLibrary = hiredisLibraryName();
}

RemoteCache::~RemoteCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  disconnectLocked();
}

std::shared_ptr<RemoteCache>
RemoteCache::shared(const Environment &environment) {
  if (environment.redis.empty())
    return nullptr;
  // One tier per distinct setting, for the life of the process.
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<RemoteCache>> tiers;
  std::string setting = environment.redis + '\n' + environment.redisNamespace +
                        '\n' + environment.redisTimeoutMs + '\n' +
                        environment.redisLeaseMs;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = tiers.find(setting); found != tiers.end())
    return found->second;
  std::shared_ptr<RemoteCache> &tier = tiers[setting];
  Result<std::optional<RemoteCacheOptions>> options =
      RemoteCacheOptions::fromEnvironment(environment);
  if (!options)
    printCacheWarning(options.message() + "; using the local caches only");
  else if (*options)
    tier = std::make_shared<RemoteCache>(std::move(**options));
  return tier;
}

std::shared_ptr<RemoteCache> RemoteCache::fromEnvironment() {
  return shared(readEnvironment());
}

std::string RemoteCache::key(std::string_view kind,
                             std::string_view name) const {
  std::string key = options_.keyNamespace;
  key += ':';
  key += kLayoutVersion;
  key += ':';
  key += kind;
  key += ':';
  key += name;
  return key;
}

void RemoteCache::disconnectLocked() {
  // redisFree closes this process's descriptor and sends nothing, so a
  // forked child that drops the connection it inherited leaves its parent's
  // working.
  if (context_)
    api_->free(context_);
  context_ = nullptr;
}

Result<RemoteCache::Reply>
RemoteCache::sendLocked(std::initializer_list<std::string_view> arguments) {
  std::vector<const char *> argv;
  std::vector<size_t> lengths;
  for (std::string_view argument : arguments) {
    argv.push_back(argument.data());
    lengths.push_back(argument.size());
  }
  // One deadline for the whole request: the socket's timeout bounds each
  // read, and a server that sends a byte at a time (or announces a long
  // reply) held a request for as long as it liked.
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(options_.timeoutMs);
  auto timedOut = [&] {
    return Status::error("no reply within " +
                         std::to_string(options_.timeoutMs) + " ms");
  };
  auto ioError = [&]() -> Status {
    if (context_->err == REDIS_ERR_EOF)
      return Status::error("the server closed the connection");
    if (context_->err == REDIS_ERR_IO &&
        (errno == EAGAIN || errno == EWOULDBLOCK))
      return timedOut();
    return Status::error(context_->errstr);
  };
  // Waits until the socket is ready for `events` or the deadline passes.
  auto wait = [&](short events) -> bool {
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0)
        return false;
      struct pollfd descriptor = {context_->fd, events, 0};
      int ready = ::poll(&descriptor, 1, static_cast<int>(left));
      if (ready > 0)
        return true;
      if (ready == 0 || errno != EINTR)
        return false;
    }
  };
  void *raw = nullptr;
  {
    SigpipeBlock block;
    if (api_->appendCommandArgv(context_, int(argv.size()), argv.data(),
                                lengths.data()) != REDIS_OK)
      return Status::error(context_->errstr);
    for (int written = 0; !written;) {
      if (!wait(POLLOUT))
        return timedOut();
      errno = 0;
      if (api_->bufferWrite(context_, &written) != REDIS_OK)
        return ioError();
    }
    while (true) {
      if (api_->getReplyFromReader(context_, &raw) != REDIS_OK)
        return Status::error(context_->errstr);
      if (raw)
        break;
      if (!wait(POLLIN))
        return timedOut();
      errno = 0;
      if (api_->bufferRead(context_) != REDIS_OK)
        return ioError();
    }
  }
  auto *reply = static_cast<redisReply *>(raw);
  Reply copy;
  copy.type = reply->type;
  if (reply->str)
    copy.text.assign(reply->str, reply->len);
  bool flat = true;
  for (size_t i = 0; i < reply->elements; ++i) {
    const redisReply *element = reply->element[i];
    flat = flat && element->type == REDIS_REPLY_STRING;
    if (flat)
      copy.elements.emplace_back(element->str, element->len);
  }
  api_->freeReplyObject(raw);
  if (!flat)
    return Status::error("an array reply holds something else than strings");
  return copy;
}

Status RemoteCache::connectLocked() {
  if (context_ && contextPid_ == ::getpid())
    return Status::success();
  disconnectLocked();
  if (!api_) {
    Result<HiredisApi> api = loadHiredis(options_.hiredisLibrary);
    if (!api)
      return api.status();
    api_ = std::make_unique<HiredisApi>(*api);
  }
  struct timeval timeout;
  timeout.tv_sec = options_.timeoutMs / 1000;
  timeout.tv_usec = (options_.timeoutMs % 1000) * 1000;
  std::string where = "cannot connect to " + options_.host + ":" +
                      std::to_string(options_.port);
  redisContext *context =
      api_->connectWithTimeout(options_.host.c_str(), options_.port, timeout);
  if (!context)
    return Status::error(where + ": out of memory");
  if (context->err) {
    std::string reason = context->errstr;
    api_->free(context);
    return Status::error(where + ": " + reason);
  }
  if (api_->setTimeout(context, timeout) != REDIS_OK) {
    std::string reason = context->errstr;
    api_->free(context);
    return Status::error("cannot set the timeout: " + reason);
  }
  context_ = context;
  contextPid_ = ::getpid();
  auto check = [&](Result<Reply> reply, const char *command) -> Status {
    if (!reply)
      return Status::error(std::string(command) + ": " + reply.message());
    if (reply->type == REDIS_REPLY_ERROR)
      return Status::error(std::string(command) +
                           " was refused: " + reply->text);
    return Status::success();
  };
  if (!options_.password.empty()) {
    Result<Reply> reply =
        options_.user.empty()
            ? sendLocked({"AUTH", options_.password})
            : sendLocked({"AUTH", options_.user, options_.password});
    TILEC_RETURN_IF_ERROR(check(std::move(reply), "AUTH"));
  }
  if (options_.database != 0) {
    std::string database = std::to_string(options_.database);
    TILEC_RETURN_IF_ERROR(check(sendLocked({"SELECT", database}), "SELECT"));
  }
  return Status::success();
}

Result<RemoteCache::Reply>
RemoteCache::request(std::initializer_list<std::string_view> arguments,
                     unsigned expectedTypes) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (off_)
    return Status::error("the shared cache " + options_.url() +
                         " is off after a failure");
  std::string failure;
  Result<Reply> reply = Status::error("not sent");
  if (Status connected = connectLocked(); !connected.ok()) {
    failure = connected.message();
  } else {
    std::string command(*arguments.begin());
    // A script's text would only lengthen the warning.
    if (arguments.size() > 1 && command != "EVAL")
      command += " " + std::string(arguments.begin()[1]);
    reply = sendLocked(arguments);
    if (!reply)
      failure = command + ": " + reply.message();
    else if (reply->type == REDIS_REPLY_ERROR)
      failure = command + ": the server answered '" + reply->text + "'";
    else if (!(expectedTypes & typeBit(reply->type)))
      failure = command + ": unexpected reply, " + describeType(reply->type);
  }
  if (failure.empty())
    return reply;
  off_ = true;
  disconnectLocked();
  lock.unlock();
  warning_("the shared cache " + options_.url() + " failed (" + failure +
           "); using the local caches only for the rest of this process");
  return Status::error(failure);
}

//===----------------------------------------------------------------------===//
// Commands
//===----------------------------------------------------------------------===//

Result<std::optional<std::string>> RemoteCache::get(std::string_view key) {
  Result<Reply> reply = request({"GET", key}, typeBit(REDIS_REPLY_STRING) |
                                                  typeBit(REDIS_REPLY_NIL));
  if (!reply)
    return reply.status();
  if (reply->type == REDIS_REPLY_NIL)
    return std::optional<std::string>();
  return std::optional<std::string>(std::move(reply->text));
}

Status RemoteCache::set(std::string_view key, std::string_view value) {
  Result<Reply> reply =
      request({"SET", key, value}, typeBit(REDIS_REPLY_STATUS));
  return reply ? Status::success() : reply.status();
}

Result<bool> RemoteCache::setIfAbsent(std::string_view key,
                                      std::string_view value, int ttlMs) {
  std::string ttl = std::to_string(ttlMs);
  Result<Reply> reply =
      request({"SET", key, value, "NX", "PX", ttl},
              typeBit(REDIS_REPLY_STATUS) | typeBit(REDIS_REPLY_NIL));
  if (!reply)
    return reply.status();
  return reply->type == REDIS_REPLY_STATUS;
}

Status RemoteCache::deleteIfEqual(std::string_view key,
                                  std::string_view value) {
  static constexpr std::string_view script =
      "if redis.call('GET', KEYS[1]) == ARGV[1] then "
      "return redis.call('DEL', KEYS[1]) else return 0 end";
  Result<Reply> reply =
      request({"EVAL", script, "1", key, value}, typeBit(REDIS_REPLY_INTEGER));
  return reply ? Status::success() : reply.status();
}

Result<std::optional<std::string>>
RemoteCache::hashGet(std::string_view key, std::string_view field) {
  Result<Reply> reply =
      request({"HGET", key, field},
              typeBit(REDIS_REPLY_STRING) | typeBit(REDIS_REPLY_NIL));
  if (!reply)
    return reply.status();
  if (reply->type == REDIS_REPLY_NIL)
    return std::optional<std::string>();
  return std::optional<std::string>(std::move(reply->text));
}

Status RemoteCache::hashSet(std::string_view key, std::string_view field,
                            std::string_view value) {
  Result<Reply> reply =
      request({"HSET", key, field, value}, typeBit(REDIS_REPLY_INTEGER));
  return reply ? Status::success() : reply.status();
}

Result<std::optional<std::pair<std::string, std::string>>>
RemoteCache::hashAnyField(std::string_view key) {
  using Field = std::optional<std::pair<std::string, std::string>>;
  Result<Reply> reply = request({"HRANDFIELD", key, "1", "WITHVALUES"},
                                typeBit(REDIS_REPLY_ARRAY));
  if (!reply)
    return reply.status();
  if (reply->elements.size() != 2)
    return Field();
  return Field(std::make_pair(std::move(reply->elements[0]),
                              std::move(reply->elements[1])));
}

} // namespace tilec::rt
