// Multi-node across real network hosts on one machine (needs root, as CI runs): two network
// namespaces joined by a veth pair, one `halo launch` in each (2 ranks, sp 2 x dp 2).
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>
#include <utility>

#include "RunHelpers.h"

namespace halo::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Two hosts: namespaces <tag>-0 and <tag>-1 with 10.231.0.1/24 and 10.231.0.2/24 on the ends
// of a veth pair created inside them (the addresses exist nowhere else). The destructor kills
// whatever still runs in them and deletes both, also when the test failed half-way.
class TwoHosts {
 public:
  TwoHosts() : tag_("halo" + std::to_string(::getpid()) + "x" + std::to_string(counter_++)) {}
  ~TwoHosts() {
    for (int i = 0; i < 2; ++i) {
      run_command("for p in $(ip netns pids " + ns(i) + " 2>/dev/null); do kill -9 $p; done");
      run_command("ip netns del " + ns(i));
    }
  }
  // Empty when both hosts are up, else what failed.
  std::string create() {
    const std::string steps[] = {
        "ip netns add " + ns(0),
        "ip netns add " + ns(1),
        "ip link add hv0 netns " + ns(0) + " type veth peer name hv1 netns " + ns(1),
        "ip -n " + ns(0) + " addr add " + addr(0) + "/24 dev hv0",
        "ip -n " + ns(1) + " addr add " + addr(1) + "/24 dev hv1",
        "ip -n " + ns(0) + " link set lo up && ip -n " + ns(0) + " link set hv0 up",
        "ip -n " + ns(1) + " link set lo up && ip -n " + ns(1) + " link set hv1 up",
    };
    for (const auto& s : steps)
      if (CliResult r = run_command(s); r.code != 0) return "`" + s + "` failed: " + r.out;
    return "";
  }
  // Whether this machine lets root make network namespaces at all (a container may not).
  static std::string unsupported() {
    if (::geteuid() != 0) return "this test makes network namespaces and needs root (CI runs as root)";
    const std::string probe = "halo-probe-" + std::to_string(::getpid());
    CliResult r = run_command("ip netns add " + probe);
    run_command("ip netns del " + probe);
    return r.code == 0 ? "" : "`ip netns add` is not permitted here: " + r.out;
  }
  std::string ns(int i) const { return tag_ + "-" + std::to_string(i); }
  static std::string addr(int i) { return "10.231.0." + std::to_string(i + 1); }
  // Processes still running inside namespace i.
  std::string pids(int i) const { return run_command("ip netns pids " + ns(i)).out; }

 private:
  std::string tag_;
  static inline int counter_ = 0;
};

// `halo launch` as node `node` of 2, inside that node's namespace.
std::vector<std::string> node_launch(const TwoHosts& hosts, int node, const std::string& exp, const std::string& db) {
  return {"ip",
          "netns",
          "exec",
          hosts.ns(node),
          HALO_CLI,
          "launch",
          "--no-progress",
          "--db",
          db,
          exp,
          "--nnodes",
          "2",
          "--node-rank",
          std::to_string(node),
          "--master-addr",
          TwoHosts::addr(0),
          "--master-port",
          "29500"};
}

const nlohmann::json kHybrid = {{"parallel", {{"sp", 2}, {"dp", 2}}}};

TEST(MultiHost, TwoNamespacesAsTwoHostsEqualOneLauncher) {
  if (const std::string why = TwoHosts::unsupported(); !why.empty()) GTEST_SKIP() << why;
  TwoHosts hosts;
  const std::string failed = hosts.create();
  ASSERT_EQ(failed, "");
  const std::string one = fresh_dir("onehost");
  CliResult single = run_halo("launch --no-progress --db " + one + "/history.db " + write_experiment(one, kHybrid));
  ASSERT_EQ(single.code, 0) << single.out;

  const std::string dir = fresh_dir("twohosts");
  const std::string exp = write_experiment(dir, kHybrid), db = dir + "/history.db";
  const pid_t node1 = spawn_logged(node_launch(hosts, 1, exp, db), dir + "/node1.txt");
  const pid_t node0 = spawn_logged(node_launch(hosts, 0, exp, db), dir + "/node0.txt");
  const int code0 = wait_exit(node0, 240s), code1 = wait_exit(node1, 60s);
  const std::string out0 = file_text(dir + "/node0.txt"), out1 = file_text(dir + "/node1.txt");
  ASSERT_EQ(code0, 0) << out0 << "\n--- node 1:\n" << out1;
  ASSERT_EQ(code1, 0) << out1;
  EXPECT_NE(out0.find("node 0 of 2: ranks 0..1, store 10.231.0.1:29500"), std::string::npos) << out0;
  EXPECT_NE(out1.find("node 1 of 2: ranks 2..3"), std::string::npos) << out1;
  for (const auto& [run, rank] : {std::pair{dir + "/run", 0}, std::pair{dir + "/run/node1", 2}}) {
    const auto hello = read_events(run, "hello", rank);
    ASSERT_EQ(hello.size(), 1u) << run;
    EXPECT_EQ(hello[0]["world"], 4);
  }
  const auto expected = losses(one + "/run");
  ASSERT_EQ(expected.size(), 5u);
  EXPECT_EQ(losses(dir + "/run"), expected);
}

TEST(MultiHost, KilledNodeStopsTheOtherWithinThirtySecondsAndLeavesNothing) {
  if (const std::string why = TwoHosts::unsupported(); !why.empty()) GTEST_SKIP() << why;
  auto hosts = std::make_unique<TwoHosts>();
  const std::string failed = hosts->create();
  ASSERT_EQ(failed, "");
  const std::string dir = fresh_dir("twohosts-kill");
  nlohmann::json patch = kHybrid;
  patch["schedule"] = {{"steps", 100000}};
  const std::string exp = write_experiment(dir, patch), db = dir + "/history.db";
  const pid_t node1 = spawn_logged(node_launch(*hosts, 1, exp, db), dir + "/node1.txt");
  const pid_t node0 = spawn_logged(node_launch(*hosts, 0, exp, db), dir + "/node0.txt");
  ASSERT_TRUE(wait_for_first_step(dir + "/run/node1", 2, 120s)) << file_text(dir + "/node1.txt");
  ASSERT_TRUE(wait_for_first_step(dir + "/run", 0, 60s)) << file_text(dir + "/node0.txt");
  ::kill(node1, SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  EXPECT_EQ(wait_exit(node1, 10s), 128 + SIGKILL);
  const int code0 = wait_exit(node0, 60s);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  const std::string out0 = file_text(dir + "/node0.txt");
  EXPECT_EQ(code0, 1) << out0;
  EXPECT_LT(took, 30.0) << out0;
  EXPECT_NE(out0.find("failed: rank "), std::string::npos) << out0;
  CliResult list = run_halo("runs list --json --db " + db);
  ASSERT_EQ(list.code, 0) << list.out;
  const auto runs = nlohmann::json::parse(list.out);
  ASSERT_EQ(runs.size(), 1u) << list.out;
  EXPECT_EQ(runs[0]["status"], "FAILED") << list.out;
  EXPECT_NE(runs[0]["exit_reason"].get<std::string>().find("rank "), std::string::npos) << list.out;
  // No rank outlives its launcher: both namespaces are empty within 10 s.
  for (int i = 0; i < 2; ++i) {
    for (int t = 0; t < 100 && !hosts->pids(i).empty(); ++t) std::this_thread::sleep_for(100ms);
    EXPECT_EQ(hosts->pids(i), "") << "still running in " << hosts->ns(i);
  }
  // And the hosts are gone with the test's pair.
  const std::string names[] = {hosts->ns(0), hosts->ns(1)};
  hosts.reset();
  const std::string left = run_command("ip netns list").out;
  for (const auto& n : names) EXPECT_EQ(left.find(n), std::string::npos) << left;
}

}  // namespace
}  // namespace halo::testing
