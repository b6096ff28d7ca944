// How far apart two names are, for "did you mean" suggestions (an undefined RASP name, an
// unknown subcommand or flag).
#pragma once

#include <cstddef>
#include <string>

namespace raspc {

// The Levenshtein distance: the fewest insertions, deletions and substitutions of bytes.
size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace raspc
