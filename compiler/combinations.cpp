// The combinations of values that several s-ops can hold together at one position (ir.hpp,
// joint_combinations): what a lookup table enumerates, what the budget counts and what a rewrite
// evaluates a map on.
#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

#include "compiler/ir.hpp"

namespace raspc::compiler {

bool joint_combinations(const Inference& inference, const std::vector<NodeId>& support, int max_len, size_t limit,
                        std::vector<JointCombination>& out) {
  out.clear();
  auto info = [&](size_t i) -> const SopInfo& { return inference.info[size_t(support[i])]; };
  bool positional = false;
  for (size_t i = 0; i < support.size(); ++i) positional = positional || !info(i).by_position.empty();
  // Parts of one split width in `support` (their slots), and the keys they share by position.
  std::vector<std::pair<std::vector<size_t>, const std::vector<int>*>> split_parts;
  for (const DisjointWidths& group : inference.disjoint_widths) {
    std::vector<size_t> slots;
    for (NodeId member : group.members) {
      auto it = std::find(support.begin(), support.end(), member);
      if (it != support.end()) slots.push_back(size_t(it - support.begin()));
    }
    if (slots.size() > 1) split_parts.push_back({std::move(slots), &group.keys_at});
  }
  auto occurs = [&](const std::vector<size_t>& digits, int position) {
    for (const auto& [slots, keys_at] : split_parts) {
      double sum = 0;
      for (size_t i : slots) sum += info(i).values[digits[i]].number.to_double();
      int keys = position >= 0 ? (*keys_at)[size_t(position)] : *std::max_element(keys_at->begin(), keys_at->end());
      if (sum > keys) return false;
    }
    return true;
  };
  // The digits each s-op may take: all of its values, or those it can hold at one position.
  std::vector<std::vector<size_t>> choices(support.size());
  // The parts of a split width sum to at most the keys a query sees, so about half of their
  // product occurs: that product may pass the limit fourfold before the combinations are counted
  // (a stable sort's two widths at max length 256: 257 x 256 pairs at the last position, 33,000
  // of them possible).
  const size_t listed_limit = split_parts.empty() ? limit : 4 * limit;
  auto enumerate = [&](auto&& visit) {
    size_t count = 1;
    for (const std::vector<size_t>& c : choices) {
      if (c.empty()) return true;
      count *= c.size();
      if (count > listed_limit) return false;
    }
    std::vector<size_t> at(support.size(), 0), digits(support.size());
    for (;;) {
      for (size_t i = 0; i < support.size(); ++i) digits[i] = choices[i][at[i]];
      visit(digits);
      size_t i = 0;
      for (; i < support.size(); ++i) {
        if (++at[i] < choices[i].size()) break;
        at[i] = 0;
      }
      if (i == support.size()) return true;
    }
  };
  if (!positional) {
    for (size_t i = 0; i < support.size(); ++i)
      for (size_t d = 0; d < info(i).values.size(); ++d) choices[i].push_back(d);
    return enumerate([&](const std::vector<size_t>& digits) {
      if (occurs(digits, -1)) out.push_back({digits, {}});
    });
  }
  // Combinations seen at earlier positions, by their mixed-radix number (the product of the value
  // set sizes fits in 64 bits for any table within the limits; the ordered map is the fallback).
  unsigned __int128 radix_product = 1;
  for (size_t i = 0; i < support.size() && radix_product <= UINT64_MAX; ++i)
    radix_product *= std::max<size_t>(1, info(i).values.size());
  const bool numbered = radix_product <= UINT64_MAX;
  std::unordered_map<uint64_t, size_t> by_number;
  std::map<std::vector<size_t>, size_t> by_digits;
  auto slot = [&](const std::vector<size_t>& digits) -> std::pair<size_t, bool> {
    if (!numbered) {
      auto [it, fresh] = by_digits.emplace(digits, out.size());
      return {it->second, fresh};
    }
    uint64_t number = 0;
    for (size_t i = support.size(); i-- > 0;) number = number * std::max<size_t>(1, info(i).values.size()) + digits[i];
    auto [it, fresh] = by_number.emplace(number, out.size());
    return {it->second, fresh};
  };
  size_t entries = 0;
  for (int p = 0; p < max_len; ++p) {
    for (size_t i = 0; i < support.size(); ++i) {
      const std::vector<Value>& all = info(i).values;
      choices[i].clear();
      for (const Value& v : info(i).values_at(p))
        choices[i].push_back(size_t(std::lower_bound(all.begin(), all.end(), v, ValueLess{}) - all.begin()));
    }
    // Stops at the first combination past the limit (each position can add up to the limit's
    // worth), or past kPositionEntryLimit (combination, position) pairs in all.
    bool within = enumerate([&](const std::vector<size_t>& digits) {
      if (out.size() > limit || entries > kPositionEntryLimit || !occurs(digits, p)) return;
      auto [at, fresh] = slot(digits);
      if (fresh) out.push_back({digits, {}});
      out[at].positions.push_back(p);
      ++entries;
    });
    if (!within || out.size() > limit || entries > kPositionEntryLimit) return false;
  }
  return true;
}

}  // namespace raspc::compiler
