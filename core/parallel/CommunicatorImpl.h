// Internals of Communicator shared with Mesh (which creates the c10d backends).
// Only parallel/*.cpp include this; it pulls in c10d's headers.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "parallel/Communicator.h"
#include "parallel/ReceiveAhead.h"

namespace halo::parallel {

struct Communicator::Impl {
  c10::intrusive_ptr<c10d::Backend> backend;
  std::string name;
  BackendKind kind = BackendKind::Gloo;
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  ReceiveAhead ahead;  // Gloo halo receives posted a message ahead (dropped before the backend)
};

}  // namespace halo::parallel
