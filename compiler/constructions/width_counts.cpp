// What the interpreter computes for the width constructions: the count of selected keys at each
// query, compared with the query's index (a width step) or as it is (a width part).
#include "compiler/constructions/construction.hpp"

namespace raspc::compiler {
namespace {

int selected_at(const ConstructionInput& selector, int q, int n) {
  const uint8_t* row = selector.selector->data() + size_t(q) * size_t(n);
  int width = 0;
  for (int k = 0; k < n; ++k) width += row[k];
  return width;
}

}  // namespace

std::vector<Value> WidthStep::evaluate(const std::vector<ConstructionInput>& inputs, int n) const {
  std::vector<Value> out(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q) out[size_t(q)] = Value::of_bool((q < selected_at(inputs[0], q, n)) != index_at_least);
  return out;
}

std::vector<Value> WidthPart::evaluate(const std::vector<ConstructionInput>& inputs, int n) const {
  std::vector<Value> out(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q) out[size_t(q)] = Value::of_int(selected_at(inputs[0], q, n));
  return out;
}

}  // namespace raspc::compiler
