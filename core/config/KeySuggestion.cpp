// Key suggestions for unknown experiment keys: an edit distance, prefixes and suffixes, and the
// initials of multi-word keys, compared on the last part of the dotted path.
#include "config/KeySuggestion.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace halo::config {

std::pair<std::string, std::string> split_key(const std::string& path) {
  const auto dot = path.rfind('.');
  if (dot == std::string::npos) return {"", path};
  return {path.substr(0, dot), path.substr(dot + 1)};
}

namespace {

// Levenshtein distance (one row).
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0]++;
    for (size_t j = 1; j <= b.size(); ++j)
      diag = std::exchange(row[j], std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])}));
  }
  return row[b.size()];
}

// Close enough to suggest: a small edit distance, a prefix or suffix ("batch_size",
// "num_workers"), or the initials of a multi-word key ("lr" for "learning_rate").
bool similar(const std::string& a, const std::string& b) {
  const auto& s = a.size() < b.size() ? a : b;
  const auto& l = a.size() < b.size() ? b : a;
  if (s.size() >= 3 && (l.starts_with(s) || l.ends_with(s))) return true;
  std::string initials;  // of the words between underscores
  for (size_t i = 0; i < l.size(); ++i)
    if ((i == 0 || l[i - 1] == '_') && l[i] != '_') initials += l[i];
  if (initials.size() >= 2 && s == initials) return true;
  return edit_distance(a, b) <= (l.size() <= 4 ? 1u : 2u);
}

}  // namespace

// The known key closest to an unknown one, comparing last parts; same section on ties.
std::optional<std::string> closest_key(const std::string& path, const std::set<std::string>& known) {
  const auto [parent, leaf] = split_key(path);
  std::optional<std::string> best;
  size_t best_score = std::numeric_limits<size_t>::max();
  for (const auto& k : known) {
    const auto [kparent, kleaf] = split_key(k);
    if (!similar(leaf, kleaf)) continue;
    const size_t score = 2 * edit_distance(leaf, kleaf) + (kparent != parent);  // exact elsewhere beats close here
    if (score < best_score) best = k, best_score = score;
  }
  return best;
}

}  // namespace halo::config
