// The world of dp x sp ranks: sp ranks share one sample split along W (a sharding group),
// dp groups see different samples. Rank = dp_index * sp + sp_index.
#pragma once

#include <chrono>
#include <memory>

#include "parallel/Communicator.h"
#include "parallel/Rendezvous.h"

namespace c10d {
class Store;
}

namespace halo::parallel {

struct MeshShape {
  int dp = 1;
  int sp = 1;
  int world() const { return dp * sp; }
};

class Mesh {
 public:
  // Joins the world through `store` and creates the world, sp and dp groups of `kind`.
  Mesh(const WorldInfo& world, std::shared_ptr<c10d::Store> store, MeshShape shape, BackendKind kind,
       std::chrono::milliseconds timeout);
  // One process alone: sp = dp = 1, no network.
  static std::shared_ptr<Mesh> solo();

  MeshShape shape() const { return shape_; }
  int rank() const { return rank_; }
  int sp_index() const { return rank_ % shape_.sp; }
  int dp_index() const { return rank_ / shape_.sp; }
  Communicator& world() const { return *world_; }
  Communicator& sp() const { return *sp_; }
  Communicator& dp() const { return *dp_; }
  std::shared_ptr<Communicator> sp_ptr() const { return sp_; }

 private:
  Mesh() = default;
  MeshShape shape_;
  int rank_ = 0;
  std::shared_ptr<Communicator> world_, sp_, dp_;
};

}  // namespace halo::parallel
