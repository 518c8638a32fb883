// The Gloo transport devices a rank binds: loopback for local runs, else the interfaces named
// in GLOO_SOCKET_IFNAME, else the address of the interface that routes to MASTER_ADDR.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "parallel/Rendezvous.h"

namespace gloo::transport {
class Device;
}

namespace halo::parallel {

// How a rank's Gloo device is chosen, as the rank reports it ("interface eth1",
// "address 10.0.0.2 (routes to MASTER_ADDR 10.0.0.1)", "loopback 127.0.0.1").
struct GlooChoice {
  std::vector<std::string> interfaces;  // from GLOO_SOCKET_IFNAME, in order
  std::string address;                  // else: the address to bind
  std::string describe() const;
};

// GLOO_SOCKET_IFNAME split at commas (as torch.distributed does), empty parts dropped.
std::vector<std::string> split_ifnames(const std::string& value);

// The local address the kernel would use to reach `host` (a UDP socket connected to it, then
// getsockname; no packet is sent). nullopt when `host` does not resolve or has no route.
std::optional<std::string> local_address_towards(const std::string& host);

// Loopback worlds bind 127.0.0.1; otherwise GLOO_SOCKET_IFNAME (`ifname_env`), else the address
// routing to world.master_addr. util::Error when none works, naming the variable or address.
GlooChoice choose_gloo_device(const WorldInfo& world, const char* ifname_env);

// The devices of `choice` (one per interface); util::Error naming a missing interface.
std::vector<std::shared_ptr<gloo::transport::Device>> make_gloo_devices(const GlooChoice& choice);

}  // namespace halo::parallel
