// torchrun-style rendezvous: MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE/LOCAL_RANK to a c10d
// TCPStore. Local runs bind the store to 127.0.0.1 only; the launcher usually hosts it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace c10d {
class Store;
}

namespace halo::parallel {

struct WorldInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  uint16_t master_port = 0;
  bool agent_hosts_store = false;  // launcher/agent runs the store server; ranks are clients

  bool is_loopback() const;
};

// Reads torchrun's variables; nullopt when RANK/WORLD_SIZE are unset. Throws util::Error on
// malformed values, naming the variable.
std::optional<WorldInfo> world_from_env();

// Connects to (or, for rank 0 without an agent, hosts) the store. Ref-counted handle.
std::shared_ptr<c10d::Store> connect_store(const WorldInfo& world, std::chrono::milliseconds timeout);

// A store server at `port` (0: any free port) for a launcher; the ranks connect as clients.
// It listens on 127.0.0.1 only, unless all_interfaces (node 0 of a multi-node run, whose
// other nodes must reach it). port() tells the port chosen.
class LocalStoreServer {
 public:
  explicit LocalStoreServer(uint16_t port, int world_size, std::chrono::milliseconds timeout,
                            bool all_interfaces = false);
  ~LocalStoreServer();
  LocalStoreServer(const LocalStoreServer&) = delete;
  LocalStoreServer& operator=(const LocalStoreServer&) = delete;
  uint16_t port() const { return port_; }
  std::shared_ptr<c10d::Store> store() const { return store_; }

 private:
  uint16_t port_ = 0;
  std::shared_ptr<c10d::Store> store_;
};

}  // namespace halo::parallel
