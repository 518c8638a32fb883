// /proc/net/tcp parsing and a plain listening socket (test-only probes, no protocol).
#include "Sockets.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace halo::testing {

std::vector<std::pair<uint32_t, uint16_t>> listening_sockets() {
  std::vector<std::pair<uint32_t, uint16_t>> out;
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    unsigned slot = 0, addr = 0, port = 0, raddr = 0, rport = 0, state = 0;
    if (std::sscanf(line.c_str(), " %u: %x:%x %x:%x %x", &slot, &addr, &port, &raddr, &rport, &state) == 6 &&
        state == 0x0A)
      out.emplace_back(addr, static_cast<uint16_t>(port));
  }
  return out;
}

bool listening_on(uint16_t port) {
  for (const auto& [addr, p] : listening_sockets())
    if (p == port) return true;
  return false;
}

std::pair<int, uint16_t> occupy_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 1) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("cannot open a listening test socket on 127.0.0.1");
  return {fd, ntohs(a.sin_port)};
}

}  // namespace halo::testing
