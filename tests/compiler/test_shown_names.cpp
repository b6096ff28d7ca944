// The names a compiled model shows its user (run --trace, view, Python's decode_residual): the
// source's, stored beside the labels the compiler makes up (assemble.cpp, Program::shown_name).
#include <catch2/catch.hpp>

#include <set>

#include "compile_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

// The model's s-ops as (label, shown name), in the metadata's order.
std::vector<std::pair<std::string, std::string>> shown_sops(const Model& model) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const nlohmann::json& sop : model.metadata.at("sops"))
    out.push_back({sop.at("name").get<std::string>(), sop.at("shown").get<std::string>()});
  return out;
}

Model compiled(const Program& program, const std::vector<Value>& vocab, int max_len, Mode mode = Mode::Bidirectional) {
  CompileOptions o = test_options(vocab, max_len, mode);
  o.verify = false;  // about names: test_programs_compile.cpp verifies these models
  return compile_program(program, o).model;
}

}  // namespace

TEST_CASE("most_freq's s-ops show the names its source gives them") {
  ProgramFile f = load_program("most_freq");
  const Model model = compiled(f.program, header_vocabulary(f.header), 8);
  using Row = std::pair<std::string, std::string>;
  // A def's local name without the id that tells two calls apart; an s-op the program never names
  // shows its expression; the parts of the width inside the library's sort are its call's parts.
  CHECK(shown_sops(model) ==
        std::vector<Row>{{"tokens", "tokens"},
                         {"indices", "indices"},
                         {"frequency#4.scratch", "frequency (scratch)"},
                         {"aggregate#7", "has_focus(same_token and select(indices, indices, <))"},
                         {"key#11", "key"},
                         {"shown#13", "shown"},
                         {"selector_width#18_1.scratch", "sort(shown, key), part 1 of 2 (scratch)"},
                         {"selector_width#18_2.scratch", "sort(shown, key), part 2 of 2 (scratch)"},
                         {"map#20", "sort(shown, key)"},
                         {"most_freq", "most_freq"}});
  std::vector<std::string> heads;
  for (const nlohmann::json& layer : model.metadata.at("heads"))
    for (const nlohmann::json& head : layer) heads.push_back(head.at("shown").get<std::string>());
  CHECK(heads == std::vector<std::string>{"frequency", "has_focus(same_token and select(indices, indices, <))",
                                          "sort(shown, key), part 1 of 2", "sort(shown, key), part 2 of 2",
                                          "most_freq"});
}

TEST_CASE("a counting sort's steps show as its sort's steps, and a program's own name wins the library's") {
  const std::vector<Value> digits = digits_1_to_4();
  const Model sorted = compiled(program_from_text("sorted = sort(tokens, tokens);\nsorted;\n"), digits, 4);
  std::vector<std::string> shown;
  for (const auto& [label, name] : shown_sops(sorted)) shown.push_back(name);
  CHECK(shown == std::vector<std::string>{"tokens", "sort(tokens, tokens), step 1 of 3 (scratch)",
                                          "sort(tokens, tokens), step 1 of 3",
                                          "sort(tokens, tokens), step 2 of 3 (scratch)",
                                          "sort(tokens, tokens), step 2 of 3",
                                          "sort(tokens, tokens), step 3 of 3 (scratch)",
                                          "sort(tokens, tokens), step 3 of 3", "sorted"});
  // `length` keeps its label (the library's name) and shows the program's.
  const Model length = compiled(program_from_text("n_tokens = length;\nn_tokens;\n"), digits, 4);
  CHECK(shown_sops(length).back() == std::pair<std::string, std::string>{"length", "n_tokens"});
}

TEST_CASE("s-ops that would show alike are told apart by place, then by call") {
  // Two calls of one def: each call's `width` is the same expression at the same place.
  const Program program = program_from_text(
      "def count_same(s) {\n"
      "  width = selector_width(select(s, s, ==));\n"
      "  return width + 1;\n"
      "}\n"
      "a = count_same(tokens);\n"
      "b = count_same(tokens == \"x\");\n"
      "a + b;\n");
  const Model model = compiled(program, {Value::of_string("x"), Value::of_string("y")}, 4);
  std::vector<std::string> widths;
  for (const auto& [label, name] : shown_sops(model))
    if (name.rfind("width", 0) == 0) widths.push_back(name);
  CHECK(widths == std::vector<std::string>{"width at 2:11 (1 of 2) (scratch)", "width at 2:11 (2 of 2) (scratch)"});
}

TEST_CASE("every program's s-ops show names its source gives, each once") {
  for (const char* name : {"aab", "count_less_freq", "detect_pattern", "double_hist", "frac_prevs", "hist", "length",
                           "pair_balance", "reverse", "shift", "sort", "most_freq", "sort_unique", "dyck1", "dyck2",
                           "dyck3", "shuffle_dyck", "shuffle_dyck2", "long_addition"})
    for (Mode mode : {Mode::Bidirectional, Mode::Causal}) {
      ProgramFile f = load_program(name);
      const Model model = compiled(f.program, header_vocabulary(f.header), 5, mode);
      std::set<std::string> seen;
      for (const auto& [label, shown] : shown_sops(model)) {
        INFO(name << (mode == Mode::Causal ? " causal" : "") << ": " << label << " shows as " << shown);
        CHECK(seen.insert(shown).second);
        // No identifier the compiler made up: no kind with an id (map#20), no def-local id (key#11).
        CHECK(shown.find('#') == std::string::npos);
      }
    }
}
