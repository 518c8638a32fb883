// What an unknown experiment key was probably meant to be ("batch_size" -> data.batch, "lr" ->
// optim.lr): used by the unknown-key warnings and by --set's refusal of an unknown key.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>

namespace halo::config {

// "optim.lr" -> {"optim", "lr"}; a key without a dot -> {"", key}.
std::pair<std::string, std::string> split_key(const std::string& path);

// The known key closest to an unknown one, comparing last parts; the same section wins ties;
// none when nothing is close enough to suggest.
std::optional<std::string> closest_key(const std::string& path, const std::set<std::string>& known);

}  // namespace halo::config
