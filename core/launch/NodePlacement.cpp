// Resolution of the node placement: each value from the first source that has it, parsed
// with an error that names that source (flag or variable).
#include "launch/NodePlacement.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "util/Error.h"

extern char** environ;

namespace halo::launch {

namespace {

using Env = std::map<std::string, std::string>;

std::optional<std::string> get(const Env& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

long parse_int(const std::string& text, const std::string& source, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || x < lo || x > hi)
    throw util::Error(fmt::format("{}='{}' is not an integer in [{}, {}]", source, text, lo, hi),
                      fmt::format("fix {} (command-line flags win over the environment)", source));
  return x;
}

// An integer from the first of: the flag (when set), then each variable in order.
struct Found {
  long value;
  std::string source;
};
std::optional<Found> pick_int(bool flag_set, long flag_value, const char* flag, std::initializer_list<const char*> vars,
                              const Env& env, long lo, long hi) {
  if (flag_set) return Found{parse_int(std::to_string(flag_value), flag, lo, hi), flag};
  for (const char* v : vars)
    if (auto text = get(env, v)) return Found{parse_int(*text, v, lo, hi), v};
  return std::nullopt;
}

}  // namespace

std::string first_slurm_host(const std::string& nodelist) {
  const auto bad = [&](const std::string& why) {
    return util::Error(fmt::format("SLURM_JOB_NODELIST='{}' cannot be read: {}", nodelist, why),
                       "set MASTER_ADDR (or --master-addr) to node 0's address");
  };
  std::string host;
  size_t i = 0;
  while (i < nodelist.size() && nodelist[i] != ',') {
    if (nodelist[i] == ']') throw bad("a ']' without its '['");
    if (nodelist[i] != '[') {
      host += nodelist[i++];
      continue;
    }
    const size_t close = nodelist.find(']', i);
    if (close == std::string::npos) throw bad("a '[' without its ']'");
    const std::string inside = nodelist.substr(i + 1, close - i - 1);
    const std::string first = inside.substr(0, inside.find_first_of(",-"));
    if (first.empty() || first.find_first_not_of("0123456789") != std::string::npos)
      throw bad(fmt::format("'[{}]' does not start with a number", inside));
    host += first;
    i = close + 1;
  }
  if (host.empty()) throw bad("no host name before the first ','");
  return host;
}

NodePlacement resolve_node_placement(const NodeFlags& flags, const Env& env) {
  NodePlacement p;
  const auto nnodes =
      pick_int(flags.nnodes != 0, flags.nnodes, "--nnodes", {"NNODES", "SLURM_NNODES"}, env, 1, 1 << 16);
  p.nnodes = nnodes ? static_cast<int>(nnodes->value) : 1;
  const auto rank =
      pick_int(flags.node_rank != -1, flags.node_rank, "--node-rank", {"NODE_RANK", "SLURM_NODEID"}, env, 0, 1 << 16);
  if (rank && rank->value >= p.nnodes)
    throw util::Error(fmt::format("{}={} is not in [0, {}) (the number of nodes, from {})", rank->source, rank->value,
                                  p.nnodes, nnodes ? nnodes->source : "the default of 1"),
                      "node ranks are 0 .. nnodes-1, one launcher per node");
  p.node_rank = rank ? static_cast<int>(rank->value) : 0;
  const auto port =
      pick_int(flags.master_port != 0, flags.master_port, "--master-port", {"MASTER_PORT"}, env, 1, 65535);
  if (!p.multi_node()) {  // one node: loopback only, whatever MASTER_ADDR says
    p.master_port = port ? static_cast<uint16_t>(port->value) : 0;
    return p;
  }
  if (!rank)
    throw util::Error(fmt::format("a {}-node run needs this node's rank", p.nnodes),
                      "give --node-rank R (or NODE_RANK; under srun SLURM_NODEID is set)");
  p.master_port = port ? static_cast<uint16_t>(port->value) : 29500;
  if (!flags.master_addr.empty()) {
    p.master_addr = flags.master_addr;
  } else if (auto addr = get(env, "MASTER_ADDR")) {
    p.master_addr = *addr;
  } else if (auto list = get(env, "SLURM_JOB_NODELIST")) {
    p.master_addr = first_slurm_host(*list);
  } else {
    throw util::Error(fmt::format("a {}-node run needs node 0's address", p.nnodes),
                      "give --master-addr HOST (or MASTER_ADDR; under SLURM the first host of SLURM_JOB_NODELIST)");
  }
  return p;
}

Env process_environment() {
  Env env;
  for (char** e = environ; *e; ++e)
    if (const char* eq = std::strchr(*e, '=')) env[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
  return env;
}

}  // namespace halo::launch
