#include "support/number_text.hpp"

namespace raspc {

std::string with_commas(double count) {
  const bool negative = count < 0;
  std::string digits = std::to_string(static_cast<unsigned long long>((negative ? -count : count) + 0.5));
  for (int i = int(digits.size()) - 3; i > 0; i -= 3) digits.insert(size_t(i), ",");
  return negative ? "-" + digits : digits;
}

}  // namespace raspc
