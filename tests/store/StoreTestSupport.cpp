// Helpers the store suites share: a fresh history path in its own temporary folder.
#include "StoreTestSupport.h"

#include <unistd.h>

#include <filesystem>

namespace halo::store {

std::string temp_db(const std::string& prefix, const std::string& tag) {
  namespace fs = std::filesystem;
  static int n = 0;
  const fs::path d = fs::temp_directory_path() /
                     ("halo-" + prefix + "-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
  fs::remove_all(d);
  fs::create_directories(d);
  return (d / "h.db").string();
}

}  // namespace halo::store
