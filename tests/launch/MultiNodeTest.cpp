// Multi-node `halo launch` on one machine: two launchers as two nodes (nnodes 2, one rank
// each, master 127.0.0.1) give the same losses as one launcher's 2-rank run; bad placements
// are refused before any rank starts, naming the flag or variable.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <thread>

#include "RunHelpers.h"
#include "support/Sockets.h"

namespace halo::testing {
namespace {

namespace fs = std::filesystem;

std::vector<double> rank_losses(const std::string& run_dir, int rank) {
  std::vector<double> out;
  for (const auto& e : read_events(run_dir, "step", rank)) out.push_back(e["losses"]["loss"].get<double>());
  return out;
}

TEST(MultiNode, TwoLaunchersAsTwoNodesEqualOneLauncher) {
  const std::string one = fresh_dir("onenode");
  CliResult single = run_halo("launch --no-progress " + write_experiment(one, {}));
  ASSERT_EQ(single.code, 0) << single.out;

  const std::string dir = fresh_dir("twonodes");
  const std::string exp = write_experiment(dir, {});
  auto [fd, port] = occupy_port();
  ::close(fd);  // a port that was free a moment ago
  const std::string common = "launch --no-progress " + exp +
                             " --nnodes 2 --nproc 1 --master-addr 127.0.0.1 --master-port " + std::to_string(port);
  CliResult node1;
  // Node 1 starts first: its launcher waits for node 0's store.
  std::thread second([&] { node1 = run_halo(common + " --node-rank 1"); });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  CliResult node0 = run_halo(common + " --node-rank 0");
  second.join();
  ASSERT_EQ(node0.code, 0) << node0.out;
  ASSERT_EQ(node1.code, 0) << node1.out;
  EXPECT_NE(node0.out.find("node 0 of 2: ranks 0..0, store 127.0.0.1:" + std::to_string(port) +
                           " (hosted here, listening on all interfaces)"),
            std::string::npos)
      << node0.out;
  EXPECT_NE(node1.out.find("node 1 of 2: ranks 1..1"), std::string::npos) << node1.out;

  // Node 0 is the run's record; node 1 keeps its rank's events and log in <run>/node1.
  const std::string run0 = dir + "/run", run1 = dir + "/run/node1";
  const auto expected = losses(one + "/run");
  ASSERT_EQ(expected.size(), 5u);
  EXPECT_EQ(losses(run0), expected);
  EXPECT_EQ(rank_losses(run1, 1), rank_losses(one + "/run", 1));
  EXPECT_TRUE(read_events(run0, "step", 1).empty());
  EXPECT_TRUE(read_events(run1, "step", 0).empty());
  for (const auto& [run, rank] : {std::pair{run0, 0}, std::pair{run1, 1}}) {
    const auto hello = read_events(run, "hello", rank);
    ASSERT_EQ(hello.size(), 1u) << run;
    EXPECT_EQ(hello[0]["world"], 2);
    EXPECT_TRUE(fs::exists(run + "/rank" + std::to_string(rank) + ".log"));
  }
  EXPECT_TRUE(fs::exists(run0 + "/checkpoints/step-000005.pt"));
  EXPECT_FALSE(fs::exists(run1 + "/checkpoints"));
}

TEST(MultiNode, BadPlacementsAreRefusedNamingTheFlagOrVariable) {
  const std::string dir = fresh_dir("badnodes");
  const std::string exp = write_experiment(dir, {});  // sp=2 x dp=1: 2 ranks
  CliResult world =
      run_halo("launch --no-progress " + exp + " --nnodes 2 --node-rank 0 --nproc 2 --master-addr 127.0.0.1");
  EXPECT_NE(world.code, 0);
  EXPECT_NE(world.out.find("--nnodes 2 x --nproc 2 = 4 ranks, but parallel.sp x parallel.dp = 2 x 1 = 2"),
            std::string::npos)
      << world.out;
  CliResult uneven = run_halo("launch --no-progress " + exp + " --nnodes 3 --node-rank 0 --master-addr 127.0.0.1");
  EXPECT_NE(uneven.code, 0);
  EXPECT_NE(uneven.out.find("= 2 ranks do not split evenly over 3 nodes"), std::string::npos) << uneven.out;
  CliResult rank = run_command("NNODES=2 NODE_RANK=2 MASTER_ADDR=127.0.0.1 " + std::string(HALO_CLI) +
                               " launch --no-progress " + exp);
  EXPECT_NE(rank.code, 0);
  EXPECT_NE(rank.out.find("NODE_RANK=2 is not in [0, 2)"), std::string::npos) << rank.out;
  CliResult slurm = run_command("SLURM_NNODES=2 SLURM_NODEID=1 SLURM_JOB_NODELIST='node[01-02' " +
                                std::string(HALO_CLI) + " launch --no-progress " + exp);
  EXPECT_NE(slurm.code, 0);
  EXPECT_NE(slurm.out.find("SLURM_JOB_NODELIST='node[01-02' cannot be read"), std::string::npos) << slurm.out;
  EXPECT_FALSE(fs::exists(dir + "/run/events.jsonl"));
  EXPECT_FALSE(fs::exists(dir + "/run/node1"));
}

}  // namespace
}  // namespace halo::testing
