// Parent: host a loopback store, spawn ranks with RankSpawner, wait with a timeout.
// Rank: identified by HALO_TEST_DIR in its environment.
#include "support/RankHarness.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "launch/RankSpawner.h"
#include "parallel/Rendezvous.h"

namespace halo::testing {

namespace fs = std::filesystem;

RankHarness::RankHarness(int world_size) : world_(world_size) {
  if (const char* d = std::getenv("HALO_TEST_DIR")) {
    is_rank_ = true;
    dir_ = d;
    rank_ = std::atoi(std::getenv("RANK"));
    return;
  }
  static int counter = 0;
  dir_ = (fs::temp_directory_path() / fmt::format("halo-test-{}-{}", ::getpid(), counter++)).string();
  fs::create_directories(dir_);
}

RankHarness::~RankHarness() {
  if (!is_rank_) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

std::shared_ptr<parallel::Mesh> RankHarness::join(parallel::MeshShape shape) const {
  auto world = parallel::world_from_env();
  auto store = parallel::connect_store(*world, std::chrono::seconds(120));
  return std::make_shared<parallel::Mesh>(*world, store, shape, parallel::BackendKind::Gloo, std::chrono::seconds(120));
}

void RankHarness::run_ranks() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string filter = fmt::format("--gtest_filter={}.{}", info->test_suite_name(), info->name());
  parallel::LocalStoreServer server(0, world_, std::chrono::seconds(120));
  launch::RankSpawner ranks(launch::self_executable(), {filter},
                            {{"HALO_TEST_DIR", dir_}, {"HALO_AGENT_STORE", "1"}, {"OMP_NUM_THREADS", "1"}}, dir_);
  ranks.start(world_, server.port());
  for (const auto& e : ranks.wait_all(std::chrono::seconds(600)))
    ASSERT_EQ(e.code, 0) << "rank " << e.rank << " failed; its log:\n" << ranks.log_tail(e.rank, 40);
}

}  // namespace halo::testing
