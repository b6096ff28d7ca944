// The reference interpreter: evaluates a Program on one input sequence.
//
// It is the oracle of every test, the label source of the trainer and the "direct rule" of the
// benchmark, so it is exact (rational arithmetic) and fast (values are 24-byte PODs, the node
// order is precomputed, buffers are reused between runs).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "language/program.hpp"

namespace raspc {

enum class Mode { Bidirectional, Causal };

// Thrown where the program itself is undefined on an input (a mean over strings, a missing dict
// key, ...). Its message names the position and points at the expression.
class UndefinedOnInput : public UserError {
 public:
  UndefinedOnInput(const std::string& formatted, int position) : UserError(formatted), position(position) {}
  int position;
};

struct Trace {
  std::vector<std::vector<Value>> sop;            // by NodeId; empty for selectors
  std::vector<std::vector<uint8_t>> selector;     // by NodeId: n*n, [q*n + k]; empty for s-ops
};

class Interpreter {
 public:
  Interpreter(const Program& program, Mode mode);
  // The program's output at every position. With `trace`, every node's value too.
  std::vector<Value> run(const std::vector<Value>& input, Trace* trace = nullptr);
  // Interventions (raspc patch): from the next run on, s-op `id` takes `values` (one per position,
  // as many as the input has) instead of what it computes, and everything after it computes from
  // them. A run whose input has another length is a logic_error.
  void set_override(NodeId id, std::vector<Value> values);
  void clear_overrides() { overrides_.clear(); }
  // The value of any node (an s-op) on the input, for the compiler's diagnostics.
  const std::vector<Value>& last_value(NodeId id) const;

 private:
  const Program& program_;
  Mode mode_;
  std::vector<NodeId> needed_;                 // nodes the output depends on, in order
  std::vector<std::vector<Value>> sop_;        // reused buffers
  std::vector<std::vector<uint8_t>> selector_; // reused buffers
  std::vector<NodeId> unneeded_;               // the other nodes, evaluated only for a Trace
  std::vector<uint8_t> evaluated_;             // by NodeId: holds a value from the last run
  std::map<NodeId, std::vector<Value>> overrides_;

  void evaluate(NodeId id, const std::vector<Value>& input, int n);
  void evaluate_elementwise(const Node& node, std::vector<Value>& out, int n);
  void evaluate_aggregate(const Node& node, std::vector<Value>& out, int n);
  Value mean_of_selected(const Node& node, const uint8_t* row, const std::vector<Value>& values, int n,
                         int selected, int q) const;
  Value exact_mean(const Node& node, const uint8_t* row, const std::vector<Value>& values, int n, int selected,
                   int q) const;
  [[noreturn]] void fail_mean_of_strings(const Node& node, const uint8_t* row, const std::vector<Value>& values,
                                         int n, int selected, int q) const;
};

}  // namespace raspc
