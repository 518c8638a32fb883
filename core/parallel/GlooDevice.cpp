// Gloo binds its pairs to one address and advertises it to the peers; on a multi-node world
// that must be the cluster interface, never the hostname's 127.0.0.1 (PyTorch's Python layer
// reads GLOO_SOCKET_IFNAME, the C++ ProcessGroupGloo does not: this file does it for Halo).
#include "parallel/GlooDevice.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "util/Error.h"

namespace halo::parallel {

std::string GlooChoice::describe() const {
  if (!interfaces.empty()) return fmt::format("interface {} (GLOO_SOCKET_IFNAME)", fmt::join(interfaces, ","));
  return "address " + address;
}

std::vector<std::string> split_ifnames(const std::string& value) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : value + ",") {
    if (ch != ',') {
      if (ch != ' ') cur += ch;
      continue;
    }
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
  }
  return out;
}

std::optional<std::string> local_address_towards(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), "9", &hints, &found) != 0 || found == nullptr) return std::nullopt;
  std::optional<std::string> out;
  for (addrinfo* a = found; a != nullptr && !out; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      char text[INET6_ADDRSTRLEN] = {0};
      const void* where = local.ss_family == AF_INET6
                              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr)
                              : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr);
      if (::inet_ntop(local.ss_family, where, text, sizeof text)) out = text;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return out;
}

GlooChoice choose_gloo_device(const WorldInfo& world, const char* ifname_env) {
  GlooChoice c;
  if (world.is_loopback()) {
    c.address = "127.0.0.1";
    return c;
  }
  if (ifname_env != nullptr && *ifname_env != '\0') {
    c.interfaces = split_ifnames(ifname_env);
    if (c.interfaces.empty())
      throw util::Error(fmt::format("GLOO_SOCKET_IFNAME='{}' names no interface", ifname_env),
                        "set it to the cluster interface, e.g. GLOO_SOCKET_IFNAME=eth1 (see `ip -br addr`), or unset "
                        "it to use the interface that routes to MASTER_ADDR");
    for (const auto& name : c.interfaces)
      if (::if_nametoindex(name.c_str()) == 0)
        throw util::Error(fmt::format("GLOO_SOCKET_IFNAME names interface '{}', which this host does not have", name),
                          "list this host's interfaces with `ip -br addr` and name the cluster one");
    return c;
  }
  auto local = local_address_towards(world.master_addr);
  if (!local)
    throw util::Error(fmt::format("rank {}: no local address routes to MASTER_ADDR {}", world.rank, world.master_addr),
                      "check MASTER_ADDR (node 0's address), or name the cluster interface with GLOO_SOCKET_IFNAME");
  c.address = *local;
  return c;
}

std::vector<std::shared_ptr<gloo::transport::Device>> make_gloo_devices(const GlooChoice& choice) {
  std::vector<std::shared_ptr<gloo::transport::Device>> out;
  try {
    if (choice.interfaces.empty()) out.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(choice.address));
    for (const auto& name : choice.interfaces) out.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
  } catch (const std::exception& e) {
    throw util::Error(fmt::format("cannot bind Gloo to {}: {}", choice.describe(), e.what()),
                      "name an interface with an IPv4 or IPv6 address in GLOO_SOCKET_IFNAME (see `ip -br addr`)");
  }
  return out;
}

}  // namespace halo::parallel
