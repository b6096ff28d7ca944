// Every case of shared/acceptance/rasp_cases.tsv whose program compiles gives the same output
// from the compiled model (bidirectional; the vocabulary is the input's symbols plus two more;
// the maximum length is the input's length plus one).
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include "compile_helpers.hpp"
#include "runtime/model_output.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

std::vector<std::string> split_expected(const std::string& text) {
  std::vector<std::string> items;
  std::string inner = text.substr(1, text.size() - 2), item;
  std::stringstream stream(inner);
  while (std::getline(stream, item, ',')) items.push_back(item);
  return items;
}

// The TSV writes booleans T/F and fractions a/b; the model prints True/False and decimals.
bool same_output(const std::string& expected, const std::string& got) {
  if (expected == "T") return got == "True";
  if (expected == "F") return got == "False";
  if (expected == got) return true;
  double want, have;
  size_t slash = expected.find('/');
  try {
    want = slash == std::string::npos ? std::stod(expected)
                                      : std::stod(expected.substr(0, slash)) / std::stod(expected.substr(slash + 1));
    have = std::stod(got);
  } catch (...) {
    return false;
  }
  // The verification's tolerance for numerical outputs (compiler/verify.cpp): float32 LayerNorm
  // around the anchor dimension leaves errors of a few 1e-6.
  return std::fabs(want - have) <= 1e-3 * std::max(1.0, std::fabs(want));
}

}  // namespace

TEST_CASE("the acceptance cases give the same output compiled") {
  std::ifstream in(std::string(RASPC_SHARED_DIR) + "/acceptance/rasp_cases.tsv");
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);  // header
  int compiled = 0, refused = 0;
  std::vector<std::string> refused_ids;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream row(line);
    std::string field;
    while (std::getline(row, field, '\t')) fields.push_back(field);
    REQUIRE(fields.size() == 4);
    const std::string& id = fields[0];
    std::vector<Value> input = parse_input(fields[2]);
    std::vector<Value> vocab;
    for (const Value& v : input)
      if (std::find(vocab.begin(), vocab.end(), v) == vocab.end()) vocab.push_back(v);
    if (input[0].is_string()) vocab.push_back(Value::of_string("z")), vocab.push_back(Value::of_string("q"));
    else vocab.push_back(Value::of_int(0)), vocab.push_back(Value::of_int(9));
    Program program = program_from_text(fields[1] + ";", id + ".rasp");
    CompileOptions o = test_options(vocab, int(input.size()) + 1, Mode::Bidirectional, 300);
    o.exhaustive_limit = 3000;
    CompileResult r;
    try {
      r = compile_program(program, o);
    } catch (const UserError& e) {
      ++refused;
      refused_ids.push_back(id);
      continue;
    }
    ++compiled;
    INFO(id << ": " << r.report.first_mismatch);
    CHECK(r.report.mismatches == 0);
    std::unique_ptr<Backend> backend = make_backend(r.model);
    std::vector<int> tokens;
    for (const Value& v : input) tokens.push_back(r.model.token_id(to_display(v)));
    PositionOutputs outputs = run_positions(*backend, r.model, tokens);
    std::vector<std::string> expected = split_expected(fields[3]);
    REQUIRE(outputs.values.size() == expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      INFO(id << " position " << i << ": expected " << expected[i] << ", got " << outputs.values[i]);
      CHECK(same_output(expected[i], outputs.values[i]));
    }
  }
  std::string list;
  for (const std::string& id : refused_ids) list += id + " ";
  INFO("refused: " << list);
  CHECK(compiled >= 30);
  CHECK(refused_ids.size() <= 8);
}
