// The pipeline's table: docs/compiler.md lists it row for row, --dump-after shows every pass, and
// every rewrite says truly whether it changed the program.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "../language/program_files.hpp"
#include "compile_helpers.hpp"
#include "compiler/pipeline.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

// The rows of the first Markdown table under "## The pipeline" in docs/compiler.md.
std::vector<std::vector<std::string>> documented_pipeline() {
  std::ifstream in(std::string(RASPC_SOURCE_DIR) + "/docs/compiler.md");
  REQUIRE(in);
  std::string line;
  while (std::getline(in, line) && line != "## The pipeline") {
  }
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '|') {
      if (!rows.empty()) break;
      continue;
    }
    // "| a | b |": the cells between the bars, without the spaces around them.
    std::vector<std::string> cells;
    for (size_t start = 1, bar; (bar = line.find('|', start)) != std::string::npos; start = bar + 1) {
      std::string cell = line.substr(start, bar - start);
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      cells.push_back(cell);
    }
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST_CASE("pipeline: docs/compiler.md lists the table's passes, in order, with what each needs and guarantees") {
  std::vector<std::vector<std::string>> documented = documented_pipeline();
  REQUIRE(documented.size() >= 2);
  CHECK(documented[0] == std::vector<std::string>{"pass", "needs", "guarantees"});
  documented.erase(documented.begin(), documented.begin() + 2);  // the header and its rule
  std::vector<std::vector<std::string>> table;
  for (const compiler::Pass& pass : compiler::pipeline()) table.push_back({pass.name, pass.needs, pass.guarantees});
  CHECK(documented == table);
  CHECK(compiler_pass_names().size() == table.size());
}

TEST_CASE("pipeline: --dump-after takes every pass and shows that pass's result") {
  ProgramFile f = load_program("sort");
  CompileOptions o = test_options(header_vocabulary(f.header), 5, Mode::Bidirectional);
  std::map<std::string, std::string> dumps;
  for (const std::string& name : compiler_pass_names()) {
    o.dump_after = name;
    std::string delivered;
    o.on_dump = [&](const std::string& dump) { delivered = dump; };
    const CompileResult r = compile_program(f.program, o);
    CHECK(r.report.mismatches == 0);
    CHECK(delivered == r.dump);
    dumps[name] = r.dump;
  }
  const std::vector<std::string> rewrites{"causal_prefixes", "simplify",      "merge_means",  "width_steps",
                                          "width_predicates", "tiebreak_keys", "count_sorts",  "count_ranks",
                                          "prune_inputs",     "split_widths",  "pair_selectors", "output_copy"};
  for (const std::string& name : rewrites) CHECK(dumps[name].rfind("# " + name + ": ", 0) == 0);
  CHECK(dumps["infer"].rfind("# infer: value sets and encodings\n", 0) == 0);
  CHECK(dumps["schedule"].rfind("# schedule: ", 0) == 0);
  CHECK(dumps["allocate"].rfind("# allocate: ", 0) == 0);
  CHECK(dumps["budget"].rfind("# budget: ", 0) == 0);
  CHECK(dumps["budget"].find(" parameters before the MLP units, ") != std::string::npos);
  CHECK(dumps["budget"].find("(--max-parameters 200,000,000; the lowering counts the units as it builds them)\n") !=
        std::string::npos);
  CHECK(dumps["lower"].rfind("# lower: ", 0) == 0);
  CHECK(nlohmann::json::parse(dumps["assemble"]).contains("residual_labels"));
  CHECK(nlohmann::json::parse(dumps["verify"])["mismatches"] == 0);
  // sort's stable sort becomes a counting sort in count_sorts, not before: its steps are new there.
  CHECK(dumps["width_steps"].find("_below_1") == std::string::npos);
  CHECK(dumps["count_sorts"].find("_below_1") != std::string::npos);
}

TEST_CASE("pipeline: a rewrite says whether it changed the program") {
  // Every program of programs/ in both modes, pass by pass as run_passes runs them: a rewrite
  // returns true exactly where the program it leaves differs from the one it was given.
  // programs/ exercises most rewrites; these five programs the rest (an explicit width step, an
  // `or` of different pairs, an output the embedding holds, counts compared: ranked from max length
  // 20 on, at which it compiles, a key tie-broken by the position), so no row's check is vacuous.
  std::vector<std::pair<std::string, Program>> programs;
  for (const auto& path : program_paths()) programs.emplace_back(path.stem().string(), load_program(path.stem().string()).program);
  const std::vector<Value> abcd = parse_vocabulary("abcd");
  for (const char* text : {"indices < selector_width(select(tokens, tokens, ==));",
                           "selector_width(not (select(tokens, tokens, ==) and select(indices, indices, ==)));",
                           "tokens;",
                           "hist = selector_width(select(tokens, tokens, ==));\nselector_width(select(hist, hist, ==));",
                           "key = (tokens == \"a\") + indices / 10;\nselector_width(select(key, key, <));"})
    programs.emplace_back(text, program_from_text(text));
  std::map<std::string, int> changes;
  for (const auto& [name, program] : programs) {
    const bool from_text = name.find(';') != std::string::npos;
    const std::vector<Value> vocab = from_text ? abcd : header_vocabulary(load_program(name).header);
    for (Mode mode : {Mode::Bidirectional, Mode::Causal}) {
      CompileOptions o = test_options(vocab, name.find("select(hist, hist") != std::string::npos ? 20 : 8, mode);
      compiler::CompileState state(program, o);
      for (const compiler::Pass& pass : compiler::pipeline()) {
        if (pass.name == "infer") break;
        INFO(name << (mode == Mode::Causal ? " causal" : "") << ": " << pass.name);
        const std::string before = compiler::dump_program(state.program);
        const bool changed = compiler::run_pass(state, pass);
        CHECK(changed == (compiler::dump_program(state.program) != before));
        changes[pass.name] += changed;
      }
    }
  }
  for (const compiler::Pass& pass : compiler::pipeline()) {
    if (pass.name == "infer") break;
    INFO(pass.name);
    CHECK(changes[pass.name] > 0);
  }
}
