#include "support/edit_distance.hpp"

#include <algorithm>
#include <vector>

namespace raspc {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest_name(const std::string& given, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = std::string::npos;
  bool tied = false;
  for (const std::string& name : names) {
    const size_t d = edit_distance(given, name);
    if (d < best_distance) best = name, best_distance = d, tied = false;
    else if (d == best_distance && name != best) tied = true;
  }
  // One typo in a short name, two in a longer one; a tie is no suggestion.
  const size_t allowed = given.size() <= 4 ? 1 : given.size() <= 8 ? 2 : 3;
  return best_distance <= allowed && !tied ? best : "";
}

}  // namespace raspc
