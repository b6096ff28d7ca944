// Counts as people read them: 1,234,567.
#pragma once

#include <string>

namespace raspc {

// `count` rounded to a whole number, its digits grouped by threes with commas.
std::string with_commas(double count);

}  // namespace raspc
