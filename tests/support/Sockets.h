// Test probes of the machine's TCP sockets: which addresses listen on a port (/proc/net/tcp)
// and a port held busy by the test, for the rendezvous security and fault tests.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace halo::testing {

// IPv4 sockets in LISTEN state as (address in /proc/net/tcp's byte order, port);
// 127.0.0.1 reads 0x0100007F there.
std::vector<std::pair<uint32_t, uint16_t>> listening_sockets();
constexpr uint32_t kProcLoopback = 0x0100007F;

bool listening_on(uint16_t port);

// A TCP socket listening on 127.0.0.1 at a free port: (fd, port). Close the fd to free it.
std::pair<int, uint16_t> occupy_port();

}  // namespace halo::testing
