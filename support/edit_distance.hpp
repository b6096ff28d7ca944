// How far apart two names are, for "did you mean" suggestions (an undefined RASP name, an
// unknown subcommand or flag).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace raspc {

// The Levenshtein distance: the fewest insertions, deletions and substitutions of bytes.
size_t edit_distance(const std::string& a, const std::string& b);

// The name of `names` nearest `given` for a "did you mean" (one typo in a short name, two in a
// longer one, three beyond), or "" where none is that near or two are equally near.
std::string closest_name(const std::string& given, const std::vector<std::string>& names);

}  // namespace raspc
