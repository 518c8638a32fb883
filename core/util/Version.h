// Halo's version and the git revision it was built from (set by CMake).
// Used by `halo --version`, run records and exports.
#pragma once

#include <string>

namespace halo::util {

std::string version();       // "0.1.0"
std::string git_revision();  // short hash or "unknown"

}  // namespace halo::util
