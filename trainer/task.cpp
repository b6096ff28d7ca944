#include "trainer/task.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "language/interpret.hpp"

namespace raspc {

namespace {

// Inputs up to which a set of them is enumerated rather than sampled.
constexpr uint64_t kEnumerableInputs = 20000;

// |V|^L, saturating at `limit`.
uint64_t count_inputs(size_t symbols, int length, uint64_t limit) {
  uint64_t n = 1;
  for (int i = 0; i < length; ++i) {
    if (n > limit / std::max<size_t>(symbols, 1)) return limit;
    n *= symbols;
  }
  return n;
}

// The i-th input of one length in lexicographic order.
void nth_input(uint64_t i, size_t symbols, int length, std::vector<int>& out) {
  out.assign(length, 0);
  for (int p = length - 1; p >= 0; --p) {
    out[p] = int(i % symbols);
    i /= symbols;
  }
}

}  // namespace

Task::Task(Labeller labeller, TaskOptions options) : labeller_(std::move(labeller)), options_(std::move(options)) {
  const size_t S = options_.input_vocab.size();
  vocab_.push_back("BOS");
  id_of_display_["BOS"] = 0;
  for (const Value& v : options_.input_vocab) {
    std::string s = to_display(v);
    input_ids_.push_back(int(vocab_.size()));
    id_of_display_[s] = int(vocab_.size());
    vocab_.push_back(s);
  }

  // The output value set, from every input where that is cheap, else from a wide sample.
  std::set<Value, ValueLess> outputs;
  auto collect = [&](const std::vector<int>& symbols) {
    input_scratch_.clear();
    for (int s : symbols) input_scratch_.push_back(options_.input_vocab[s]);
    try {
      for (const Value& v : labeller_(input_scratch_)) outputs.insert(v);
    } catch (const UndefinedOnInput&) {
    }
  };
  uint64_t total = 0;
  for (int L = 1; L <= options_.max_len; ++L) total += count_inputs(S, L, 1ull << 40);
  std::vector<int> symbols;
  if (total <= kEnumerableInputs) {
    for (int L = 1; L <= options_.max_len; ++L)
      for (uint64_t i = 0, n = count_inputs(S, L, 1ull << 40); i < n; ++i) {
        nth_input(i, S, L, symbols);
        collect(symbols);
      }
  } else {
    std::mt19937_64 rng(options_.held_out_seed ^ 0x76a1u);
    std::uniform_int_distribution<int> symbol(0, int(S) - 1);
    for (int L = 1; L <= options_.max_len; ++L) {
      for (size_t s = 0; s < S; ++s) {
        symbols.assign(L, int(s));
        collect(symbols);
      }
      for (int i = 0; i < 2000; ++i) {
        symbols.resize(L);
        for (int& x : symbols) x = symbol(rng);
        collect(symbols);
      }
    }
  }
  std::set<int> output_set;
  for (const Value& v : outputs) {
    std::string s = to_display(v);
    auto it = id_of_display_.find(s);
    if (it == id_of_display_.end()) {
      it = id_of_display_.emplace(s, int(vocab_.size())).first;
      vocab_.push_back(s);
    }
    output_set.insert(it->second);
  }
  output_ids_.assign(output_set.begin(), output_set.end());
  draw_held_out();
}

std::string Task::key_of(const std::vector<int>& symbols) {
  std::string key;
  key.reserve(symbols.size() * 2);
  for (int s : symbols) {
    key.push_back(char(s & 0xff));
    key.push_back(char(s >> 8));
  }
  return key;
}

bool Task::is_held_out(const std::vector<int>& symbols) const { return held_out_keys_.count(key_of(symbols)) > 0; }

bool Task::label(const std::vector<int>& symbols, std::vector<int>& targets, std::vector<std::string>* expected) {
  targets.assign(symbols.size() + 1, -1);
  if (expected) expected->assign(symbols.size(), "");
  input_scratch_.clear();
  for (int s : symbols) input_scratch_.push_back(options_.input_vocab[s]);
  std::vector<Value> outputs;
  try {
    outputs = labeller_(input_scratch_);
  } catch (const UndefinedOnInput&) {
    return false;
  }
  for (size_t i = 0; i < symbols.size() && i < outputs.size(); ++i) {
    const std::string shown = to_display(outputs[i]);
    auto it = id_of_display_.find(shown);
    targets[i + 1] = it == id_of_display_.end() ? -2 : it->second;
    if (expected) (*expected)[i] = shown;
  }
  return true;
}

int Task::output_id(const std::string& shown) {
  auto it = id_of_display_.find(shown);
  if (it != id_of_display_.end()) {
    if (std::find(output_ids_.begin(), output_ids_.end(), it->second) == output_ids_.end())
      output_ids_.push_back(it->second);  // an input symbol that is also an output value
    return it->second;
  }
  const int id = int(vocab_.size());
  id_of_display_.emplace(shown, id);
  vocab_.push_back(shown);
  output_ids_.push_back(id);
  return id;
}

void Task::draw_held_out() {
  const size_t S = options_.input_vocab.size();
  std::mt19937_64 rng(options_.held_out_seed);
  std::uniform_int_distribution<int> symbol(0, int(S) - 1);
  std::vector<int> symbols, targets;

  // (length, symbol, output) triples an input carries: what a model can only learn from inputs
  // that show it. Holding out every witness of one ("dddd" is the only length-4 input where "d"
  // counts 4) asks for an output the model never saw, and the test then measures the split.
  auto triples_of = [&](const std::vector<int>& input) {
    std::set<std::tuple<int, int, int>> triples;
    label(input, targets);
    for (size_t p = 0; p < input.size(); ++p)
      if (targets[p + 1] != -1) triples.insert({int(input.size()), input[p], targets[p + 1]});
    return triples;
  };
  // Training witnesses per triple, where the training inputs are few enough to enumerate (with
  // more, a held-out set of a few hundred per length is a vanishing share of any triple's).
  std::map<std::tuple<int, int, int>, long> witnesses;
  uint64_t training_inputs = 0;
  for (int L = options_.train_min; L <= options_.train_max; ++L) training_inputs += count_inputs(S, L, 1ull << 40);
  const bool covered = training_inputs <= kEnumerableInputs;
  if (covered)
    for (int L = options_.train_min; L <= options_.train_max; ++L)
      for (uint64_t i = 0, n = count_inputs(S, L, 1ull << 40); i < n; ++i) {
        nth_input(i, S, L, symbols);
        for (const auto& t : triples_of(symbols)) ++witnesses[t];
      }
  // Holds an input out unless that would take the last training witness of one of its triples.
  auto admit = [&](const std::vector<int>& input, bool trained_length) {
    if (!covered || !trained_length) return true;
    const auto triples = triples_of(input);
    for (const auto& t : triples)
      if (witnesses[t] <= 1) return false;
    for (const auto& t : triples) --witnesses[t];
    return true;
  };

  for (int L = 1; L <= options_.max_len; ++L) {
    HeldOutSet set;
    set.length = L;
    const uint64_t space = count_inputs(S, L, 1ull << 40);
    const bool trained_length = L >= options_.train_min && L <= options_.train_max;
    // At a training length at least three quarters of the inputs stay for training: with half
    // held out, small spaces lost whole groups of inputs (all orders of "aaad" for histogram),
    // and whether a model learnt them was a matter of its seed.
    const uint64_t cap = trained_length ? space / 4 : space;
    const uint64_t k = std::min<uint64_t>(options_.held_out_per_length, cap);
    std::vector<std::vector<int>> chosen;
    if (space <= std::max<uint64_t>(4 * k, 4096)) {
      std::vector<uint64_t> order(space);
      for (uint64_t i = 0; i < space; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      for (uint64_t i = 0; i < space && chosen.size() < k; ++i) {
        nth_input(order[i], S, L, symbols);
        if (admit(symbols, trained_length)) chosen.push_back(symbols);
      }
    } else {
      std::unordered_set<std::string> seen;
      while (chosen.size() < k && seen.size() < space) {
        symbols.resize(L);
        for (int& x : symbols) x = symbol(rng);
        if (seen.insert(key_of(symbols)).second && admit(symbols, trained_length)) chosen.push_back(symbols);
      }
    }
    for (const std::vector<int>& c : chosen) {
      held_out_keys_.insert(key_of(c));
      std::vector<int> tokens{bos_id()};
      for (int s : c) tokens.push_back(input_ids_[s]);
      std::vector<std::string> expected;
      label(c, targets, &expected);
      set.tokens.push_back(std::move(tokens));
      set.targets.push_back(targets);
      set.expected.push_back(std::move(expected));
    }
    held_out_.push_back(std::move(set));
  }
}

void Task::fill_batch(Batch& batch, int B, std::mt19937_64& rng) {
  const size_t S = options_.input_vocab.size();
  std::uniform_int_distribution<int> length(options_.train_min, options_.train_max);
  std::uniform_int_distribution<int> symbol(0, int(S) - 1);
  batch.B = B;
  batch.T = 0;
  for (int b = 0; b < B; ++b) {
    // A training input is never a held-out one; at most a quarter of any training length is
    // held out, so this redraws a third of a time in the worst case.
    do {
      symbol_scratch_.resize(length(rng));
      for (int& x : symbol_scratch_) x = symbol(rng);
    } while (is_held_out(symbol_scratch_));
    label(symbol_scratch_, target_scratch_);
    batch.lengths[b] = int(symbol_scratch_.size()) + 1;
    batch.T = std::max(batch.T, batch.lengths[b]);
    // Staged at stride max_len+1; compacted to stride T below.
    int* tokens = batch.tokens.data() + size_t(b) * (options_.max_len + 1);
    int* targets = batch.targets.data() + size_t(b) * (options_.max_len + 1);
    tokens[0] = bos_id();
    for (size_t i = 0; i < symbol_scratch_.size(); ++i) tokens[i + 1] = input_ids_[symbol_scratch_[i]];
    for (size_t i = 0; i < target_scratch_.size(); ++i) {
      if (target_scratch_[i] == -2) ++unrepresentable_;
      targets[i] = target_scratch_[i] < 0 ? -1 : target_scratch_[i];
    }
  }
  // Compact from stride max_len+1 to stride T, padding with BOS and -1 (forward order is safe:
  // the destination never runs ahead of the source).
  const int stride = options_.max_len + 1;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < batch.T; ++t) {
      const bool real = t < batch.lengths[b];
      batch.tokens[size_t(b) * batch.T + t] = real ? batch.tokens[size_t(b) * stride + t] : bos_id();
      batch.targets[size_t(b) * batch.T + t] = real ? batch.targets[size_t(b) * stride + t] : -1;
    }
}

}  // namespace raspc
