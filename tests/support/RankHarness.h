// Multi-process tests on real ranks: the test re-runs its own binary (same test, by
// --gtest_filter) once per rank with torchrun's variables; ranks join a Gloo mesh over
// loopback and write results to a folder the parent then compares.
#pragma once

#include <memory>
#include <string>

#include "parallel/Mesh.h"

namespace halo::testing {

class RankHarness {
 public:
  explicit RankHarness(int world_size);
  ~RankHarness();

  // True inside a spawned rank (then run the rank's part and return).
  bool is_rank() const { return is_rank_; }
  int rank() const { return rank_; }
  // Folder shared by the parent and its ranks.
  const std::string& dir() const { return dir_; }
  // In a rank: joins the world as a dp x sp mesh (Gloo).
  std::shared_ptr<parallel::Mesh> join(parallel::MeshShape shape) const;
  // In the parent: runs the current test as world_size ranks; fails the test with the
  // failing rank's log if any rank fails.
  void run_ranks();

 private:
  int world_ = 1;
  bool is_rank_ = false;
  int rank_ = -1;
  std::string dir_;
};

}  // namespace halo::testing
