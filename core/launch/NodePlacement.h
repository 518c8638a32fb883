// Where this launcher sits in a multi-node run: --nnodes/--node-rank/--master-addr/--master-port,
// else torchrun-style variables, else SLURM's. Pure functions of the flags and an environment map.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace halo::launch {

// Command-line values; unset ones are 0 / -1 / empty.
struct NodeFlags {
  int nnodes = 0;
  int node_rank = -1;
  std::string master_addr;
  uint16_t master_port = 0;
};

struct NodePlacement {
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";  // node 0's address (127.0.0.1 for a one-node run)
  uint16_t master_port = 0;               // 0: any free port (one-node runs only)
  bool multi_node() const { return nnodes > 1; }
};

// Flags win over NNODES/NODE_RANK/MASTER_ADDR/MASTER_PORT, which win over SLURM_NNODES,
// SLURM_NODEID and the first host of SLURM_JOB_NODELIST. A multi-node run without a port
// uses 29500 (torchrun's default). Throws util::Error naming the flag or variable at fault.
NodePlacement resolve_node_placement(const NodeFlags& flags, const std::map<std::string, std::string>& env);

// First host of a SLURM node list: "node[01-04,07],gpu7" -> "node01". Throws util::Error on
// a malformed list.
std::string first_slurm_host(const std::string& nodelist);

// This process's environment as a map (for resolve_node_placement).
std::map<std::string, std::string> process_environment();

}  // namespace halo::launch
