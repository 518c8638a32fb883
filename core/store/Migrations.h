// The history schema as forward migrations: migration i (1-based) takes a database from
// PRAGMA user_version i-1 to i. Never edit a released migration; append a new one.
#pragma once

#include <string>
#include <vector>

namespace halo::store {

constexpr int kApplicationId = 0x48616c6f;  // "Halo": PRAGMA application_id of every history file

// SQL of each migration, in order; migrations().size() is the current schema version.
const std::vector<std::string>& migrations();
inline int current_schema_version() { return static_cast<int>(migrations().size()); }

}  // namespace halo::store
