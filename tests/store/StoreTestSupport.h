// Helpers the store suites share: a fresh history path in its own temporary folder.
#pragma once

#include <string>

namespace halo::store {

// <tmp>/halo-<prefix>-<tag>-<pid>-<n>/h.db, its folder emptied and created.
std::string temp_db(const std::string& prefix, const std::string& tag);

}  // namespace halo::store
