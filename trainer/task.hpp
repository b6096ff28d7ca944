// What the trainer learns: a program's per-position outputs on random inputs, as token classes.
//
// The model's vocabulary is BOS (id 0), the input symbols, then the program's output values that
// are not input symbols (sorted); numerical outputs are classes like any other ("1/3"). A model
// input is [BOS] + symbols; the target at position i+1 is the program's output at i, and BOS is
// never a target. Where the program is undefined on an input (the labeller throws
// UndefinedOnInput) the whole sequence is masked: the interpreter reports one position, not which
// of the others are still defined.
//
// Inputs drawn for training never belong to the held-out set, which is drawn once from a fixed
// seed (independent of the training seed, so every run of a comparison sees the same one). At a
// training length it takes at most a quarter of the inputs, and where the training inputs can be
// enumerated (at most 2e4) it never takes the last training input that shows a symbol with one of
// its outputs at that length: every (length, symbol, output) of the training lengths is trained on.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "language/value.hpp"

namespace raspc {

// The program as a function: outputs (one per input position) for an input; throws
// UndefinedOnInput where the program is undefined on it.
using Labeller = std::function<std::vector<Value>(const std::vector<Value>&)>;

// A batch of B sequences padded to T positions with BOS.
struct Batch {
  int B = 0, T = 0;
  std::vector<int> tokens;   // (B,T)
  std::vector<int> targets;  // (B,T): a token id, -1 where the position does not count
  std::vector<int> lengths;  // (B) BOS included
};

// Held-out inputs of one length, with their targets: -1 masked, -2 an output value the
// vocabulary lacks (it counts, and is always wrong).
struct HeldOutSet {
  int length = 0;  // symbols, BOS not counted
  std::vector<std::vector<int>> tokens, targets;
  // The program's outputs as displayed ("" where undefined), for models with another vocabulary.
  std::vector<std::vector<std::string>> expected;
};

struct TaskOptions {
  std::vector<Value> input_vocab;
  int max_len = 16;                   // longest input (BOS not counted)
  int train_min = 1, train_max = 16;  // lengths drawn for training
  int held_out_per_length = 256;
  uint64_t held_out_seed = 20211;  // fixed: the held-out set is the same in every run
};

class Task {
 public:
  // Collects the output values (every input up to max_len where that is at most 2e4 inputs,
  // otherwise each constant input plus 2000 random ones per length), then draws the held-out sets.
  Task(Labeller labeller, TaskOptions options);

  const std::vector<std::string>& vocab() const { return vocab_; }
  int bos_id() const { return 0; }
  const std::vector<int>& input_ids() const { return input_ids_; }    // by input symbol index
  const std::vector<int>& output_ids() const { return output_ids_; }  // the classes an output can be
  const TaskOptions& options() const { return options_; }

  // Fills `batch` (its vectors already sized for B * (max_len+1)) with B fresh training inputs,
  // none of them held out.
  void fill_batch(Batch& batch, int B, std::mt19937_64& rng);
  // Held-out inputs by length, 1..max_len (index length-1); empty where no input can be spared.
  const std::vector<HeldOutSet>& held_out() const { return held_out_; }
  bool is_held_out(const std::vector<int>& symbols) const;
  // Targets for one input given as symbol indices: targets[0] is -1 (BOS), then one per symbol.
  // Returns false (all -1) where the program is undefined on it.
  bool label(const std::vector<int>& symbols, std::vector<int>& targets, std::vector<std::string>* expected = nullptr);
  // The token id of an output value as displayed; a value the vocabulary lacks is appended to it
  // (and to output_ids), so ids already handed out never change. For datasets, whose inputs may
  // show a value the construction's scan missed.
  int output_id(const std::string& shown);
  // Output values the labeller produced in training that are not in the vocabulary (masked).
  long unrepresentable_targets() const { return unrepresentable_; }

 private:
  static std::string key_of(const std::vector<int>& symbols);
  void draw_held_out();

  Labeller labeller_;
  TaskOptions options_;
  std::vector<std::string> vocab_;
  std::vector<int> input_ids_, output_ids_;
  std::unordered_map<std::string, int> id_of_display_;
  std::unordered_set<std::string> held_out_keys_;
  std::vector<HeldOutSet> held_out_;
  std::vector<Value> input_scratch_;
  std::vector<int> symbol_scratch_, target_scratch_;
  long unrepresentable_ = 0;
};

}  // namespace raspc
