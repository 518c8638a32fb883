// Rendezvous through c10d's TCPStore. The listening socket is bound here (127.0.0.1 for local
// runs, so nothing listens on other interfaces) and handed to TCPStore (masterListenFd).
#include "parallel/Rendezvous.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "util/Error.h"

namespace halo::parallel {

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

long env_int(const char* name, long lo, long hi, long fallback) {
  auto v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v->c_str(), &end, 10);
  if (errno != 0 || end == v->c_str() || *end != '\0' || x < lo || x > hi)
    throw util::Error(fmt::format("environment variable {}='{}' is not an integer in [{}, {}]", name, *v, lo, hi),
                      "set it as torchrun does, or unset it for a single-process run");
  return x;
}

// A TCP socket bound to 127.0.0.1:port (or every interface) and listening; returns fd and the port chosen.
std::pair<int, uint16_t> listen_on(uint16_t port, bool all_interfaces = false) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw util::Error(fmt::format("cannot create the rendezvous socket: {}", std::strerror(errno)));
  // Like TCPStore's own socket: a port whose previous owner just exited (TIME_WAIT) is reusable.
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(all_interfaces ? INADDR_ANY : INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 128) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw util::Error(fmt::format("cannot listen on {}:{} for the rendezvous: {}",
                                  all_interfaces ? "0.0.0.0" : "127.0.0.1", port, why),
                      all_interfaces ? "pick another --master-port (MASTER_PORT) free on node 0, the same on every node"
                                     : "pick another MASTER_PORT, or leave it unset so a free port is chosen");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return {fd, ntohs(addr.sin_port)};
}

c10d::TCPStoreOptions client_options(uint16_t port, int world, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions o;
  o.port = port;
  o.isServer = false;
  o.numWorkers = world;
  o.waitWorkers = false;
  o.timeout = timeout;
  return o;
}

}  // namespace

bool WorldInfo::is_loopback() const {
  return master_addr == "127.0.0.1" || master_addr == "localhost" || master_addr == "::1";
}

std::optional<WorldInfo> world_from_env() {
  if (!env("RANK") || !env("WORLD_SIZE")) return std::nullopt;
  WorldInfo w;
  w.world_size = static_cast<int>(env_int("WORLD_SIZE", 1, 1 << 20, 1));
  w.rank = static_cast<int>(env_int("RANK", 0, w.world_size - 1, 0));
  w.local_rank = static_cast<int>(env_int("LOCAL_RANK", 0, 1 << 20, w.rank));
  w.master_addr = env("MASTER_ADDR").value_or("127.0.0.1");
  w.master_port = static_cast<uint16_t>(env_int("MASTER_PORT", 1, 65535, 29500));
  const std::string agent = env("TORCHELASTIC_USE_AGENT_STORE").value_or(env("HALO_AGENT_STORE").value_or(""));
  w.agent_hosts_store = agent == "1" || agent == "True" || agent == "true";
  return w;
}

std::shared_ptr<c10d::Store> connect_store(const WorldInfo& world, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions o = client_options(world.master_port, world.world_size, timeout);
  if (world.rank == 0 && !world.agent_hosts_store) {
    o.isServer = true;
    if (world.is_loopback()) o.masterListenFd = listen_on(world.master_port).first;
  }
  try {
    auto store = c10::make_intrusive<c10d::TCPStore>(world.master_addr, o);
    return std::shared_ptr<c10d::Store>(store.release(),
                                        [](c10d::Store* s) { c10::intrusive_ptr<c10d::Store>::reclaim(s); });
  } catch (const std::exception& e) {
    throw util::Error(fmt::format("rank {} could not reach the rendezvous store at {}:{}: {}", world.rank,
                                  world.master_addr, world.master_port, e.what()),
                      "check MASTER_ADDR/MASTER_PORT and that rank 0 (or the launcher) is running");
  }
}

LocalStoreServer::LocalStoreServer(uint16_t port, int world_size, std::chrono::milliseconds timeout,
                                   bool all_interfaces) {
  auto [fd, chosen] = listen_on(port, all_interfaces);
  port_ = chosen;
  c10d::TCPStoreOptions o = client_options(chosen, world_size, timeout);
  o.isServer = true;
  o.masterListenFd = fd;
  auto store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", o);
  store_ = std::shared_ptr<c10d::Store>(store.release(),
                                        [](c10d::Store* s) { c10::intrusive_ptr<c10d::Store>::reclaim(s); });
}

LocalStoreServer::~LocalStoreServer() = default;

}  // namespace halo::parallel
