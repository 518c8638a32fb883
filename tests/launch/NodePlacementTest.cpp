// Multi-node placement from flags, torchrun-style variables and SLURM's (pure functions):
// precedence, SLURM node lists, and errors that name the flag or variable at fault.
#include <gtest/gtest.h>

#include "launch/NodePlacement.h"
#include "util/Error.h"

namespace halo::launch {
namespace {

using Env = std::map<std::string, std::string>;

std::string error_of(const NodeFlags& f, const Env& env) {
  try {
    resolve_node_placement(f, env);
  } catch (const util::Error& e) {
    return e.problem() + " | " + e.hint();
  }
  return "no error";
}

TEST(NodePlacement, OneNodeByDefaultOnLoopbackWhateverMasterAddrSays) {
  NodePlacement p = resolve_node_placement({}, {});
  EXPECT_EQ(p.nnodes, 1);
  EXPECT_EQ(p.node_rank, 0);
  EXPECT_EQ(p.master_addr, "127.0.0.1");
  EXPECT_EQ(p.master_port, 0);
  EXPECT_FALSE(p.multi_node());
  p = resolve_node_placement({}, {{"MASTER_ADDR", "10.1.2.3"}, {"MASTER_PORT", "29611"}});
  EXPECT_EQ(p.master_addr, "127.0.0.1");
  EXPECT_EQ(p.master_port, 29611);
}

TEST(NodePlacement, TorchrunVariables) {
  const NodePlacement p = resolve_node_placement(
      {}, {{"NNODES", "2"}, {"NODE_RANK", "1"}, {"MASTER_ADDR", "h0"}, {"MASTER_PORT", "29600"}});
  EXPECT_EQ(p.nnodes, 2);
  EXPECT_EQ(p.node_rank, 1);
  EXPECT_EQ(p.master_addr, "h0");
  EXPECT_EQ(p.master_port, 29600);
  EXPECT_TRUE(p.multi_node());
}

TEST(NodePlacement, SlurmVariablesWithDefaultPort) {
  const NodePlacement p = resolve_node_placement(
      {}, {{"SLURM_NNODES", "4"}, {"SLURM_NODEID", "2"}, {"SLURM_JOB_NODELIST", "node[01-04],gpu7"}});
  EXPECT_EQ(p.nnodes, 4);
  EXPECT_EQ(p.node_rank, 2);
  EXPECT_EQ(p.master_addr, "node01");
  EXPECT_EQ(p.master_port, 29500);
}

TEST(NodePlacement, FlagsWinOverTorchrunVariablesWhichWinOverSlurm) {
  const Env env = {{"NNODES", "2"},       {"NODE_RANK", "1"},    {"MASTER_ADDR", "h0"},           {"MASTER_PORT", "7"},
                   {"SLURM_NNODES", "8"}, {"SLURM_NODEID", "5"}, {"SLURM_JOB_NODELIST", "n[1-8]"}};
  NodePlacement p = resolve_node_placement({}, env);
  EXPECT_EQ(p.nnodes, 2);
  EXPECT_EQ(p.node_rank, 1);
  EXPECT_EQ(p.master_addr, "h0");  // MASTER_ADDR before the node list
  EXPECT_EQ(p.master_port, 7);
  p = resolve_node_placement({3, 2, "10.0.0.9", 1234}, env);
  EXPECT_EQ(p.nnodes, 3);
  EXPECT_EQ(p.node_rank, 2);
  EXPECT_EQ(p.master_addr, "10.0.0.9");
  EXPECT_EQ(p.master_port, 1234);
  // A flag set to 0 (node 0) still wins over NODE_RANK.
  EXPECT_EQ(resolve_node_placement({0, 0, "", 0}, env).node_rank, 0);
}

TEST(NodePlacement, ErrorsNameTheFlagOrVariable) {
  const std::string rank_env = error_of({}, {{"NNODES", "2"}, {"NODE_RANK", "2"}, {"MASTER_ADDR", "h"}});
  EXPECT_NE(rank_env.find("NODE_RANK=2 is not in [0, 2) (the number of nodes, from NNODES)"), std::string::npos)
      << rank_env;
  const std::string rank_flag = error_of({2, 5, "h", 0}, {});
  EXPECT_NE(rank_flag.find("--node-rank=5 is not in [0, 2) (the number of nodes, from --nnodes)"), std::string::npos)
      << rank_flag;
  const std::string slurm = error_of({}, {{"SLURM_NNODES", "2"}, {"SLURM_NODEID", "3"}});
  EXPECT_NE(slurm.find("SLURM_NODEID=3 is not in [0, 2)"), std::string::npos) << slurm;
  const std::string one = error_of({}, {{"NODE_RANK", "1"}});
  EXPECT_NE(one.find("NODE_RANK=1 is not in [0, 1) (the number of nodes, from the default of 1)"), std::string::npos)
      << one;
  const std::string junk = error_of({}, {{"NNODES", "two"}});
  EXPECT_NE(junk.find("NNODES='two' is not an integer in [1, 65536]"), std::string::npos) << junk;
  const std::string port = error_of({}, {{"MASTER_PORT", "70000"}});
  EXPECT_NE(port.find("MASTER_PORT='70000' is not an integer in [1, 65535]"), std::string::npos) << port;
  const std::string no_rank = error_of({2, -1, "h", 0}, {});
  EXPECT_NE(no_rank.find("a 2-node run needs this node's rank | give --node-rank R (or NODE_RANK"), std::string::npos)
      << no_rank;
  const std::string no_addr = error_of({2, 1, "", 0}, {});
  EXPECT_NE(no_addr.find("a 2-node run needs node 0's address | give --master-addr HOST (or MASTER_ADDR"),
            std::string::npos)
      << no_addr;
}

TEST(NodePlacement, FirstHostOfSlurmNodeList) {
  EXPECT_EQ(first_slurm_host("node01"), "node01");
  EXPECT_EQ(first_slurm_host("node[01-04]"), "node01");
  EXPECT_EQ(first_slurm_host("node[07,01-04],gpu7"), "node07");
  EXPECT_EQ(first_slurm_host("gpu7,node[1-2]"), "gpu7");
  EXPECT_EQ(first_slurm_host("n[3-4]-ib"), "n3-ib");
  EXPECT_EQ(first_slurm_host("rack[2-3]-n[005-006]"), "rack2-n005");
  for (const char* bad : {"node[01-04", "node]", "[a-b]", "node[]", ",node1", ""}) {
    try {
      first_slurm_host(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const util::Error& e) {
      EXPECT_NE(e.problem().find(std::string("SLURM_JOB_NODELIST='") + bad + "' cannot be read"), std::string::npos)
          << e.problem();
      EXPECT_NE(e.hint().find("MASTER_ADDR"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace halo::launch
