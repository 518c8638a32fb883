// The error a collective or halo exchange throws when it fails (a peer died, hung or closed
// its connection): a consequence of another rank's failure, which the launcher names first.
#pragma once

#include "util/Error.h"

namespace halo::parallel {

class PeerLostError : public util::Error {
 public:
  using util::Error::Error;
};

}  // namespace halo::parallel
