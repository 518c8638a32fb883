// Version strings compiled in from CMake definitions.
// HALO_VERSION and HALO_GIT_REV come from the top-level CMakeLists.txt.
#include "util/Version.h"

namespace halo::util {

std::string version() { return HALO_VERSION; }
std::string git_revision() { return HALO_GIT_REV; }

}  // namespace halo::util
