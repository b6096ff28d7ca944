// Every program of programs/ (found at run time, so new files are picked up) is evaluated and run
// on every `# expect:` line bidirectionally and every `# expect-causal:` line causally. A failure
// names the file and line of the expectation.
#include <catch2/catch.hpp>

#include <set>

#include "language/input.hpp"
#include "language/program_file.hpp"
#include "program_files.hpp"

using namespace raspc;
using namespace raspc::testing;

TEST_CASE("programs: the library holds the required programs") {
  std::set<std::string> stems;
  for (const auto& path : program_paths()) stems.insert(path.stem().string());
  for (const char* required :
       {"length", "reverse", "hist", "double_hist", "sort", "sort_unique", "most_freq", "frac_prevs",
        "pair_balance", "dyck1", "dyck2", "dyck3", "shuffle_dyck", "shuffle_dyck2", "shift", "detect_pattern",
        "count_less_freq", "long_addition", "aab"}) {
    INFO("programs/" << required << ".rasp");
    CHECK(stems.count(required) == 1);
  }
}

TEST_CASE("programs: every file has a header with its name, vocabulary, mode and expectations") {
  for (const auto& path : program_paths()) {
    INFO(path.string());
    ProgramHeader header;
    try {
      header = read_program_header(read_source_file(path.string()));
    } catch (const UserError& error) {
      FAIL_CHECK("the header is malformed:\n" << error.what());
      continue;
    }
    CHECK(header.name == path.stem().string());
    CHECK(!header.description.empty());
    CHECK(!header.vocab_text.empty());
    CHECK_NOTHROW(header_vocabulary(header));
    REQUIRE(header.causal.has_value());
    size_t bidirectional = 0, causal = 0;
    for (const Expectation& e : header.expectations) (e.causal ? causal : bidirectional) += 1;
    CHECK(bidirectional >= 3);
    if (*header.causal) CHECK(causal >= 1);
    if (!*header.causal) CHECK(causal == 0);
  }
}

TEST_CASE("programs: every expectation of every file holds") {
  size_t checked = 0;
  for (const auto& path : program_paths()) {
    const std::string file = path.string();
    Program program;
    ProgramHeader header;
    std::vector<Value> vocabulary;
    try {
      auto source = read_source_file(file);
      header = read_program_header(source);
      vocabulary = header_vocabulary(header);
      program = evaluate_program(source);
    } catch (const UserError& error) {
      FAIL_CHECK(file << " does not evaluate:\n" << error.what());
      continue;
    }
    Interpreter bidirectional(program, Mode::Bidirectional);
    Interpreter causal(program, Mode::Causal);
    for (const Expectation& e : header.expectations) {
      INFO(file << ":" << e.line << ": " << (e.causal ? "expect-causal" : "expect") << ": " << e.input << " -> "
                << e.output);
      std::string actual;
      try {
        std::vector<Value> input = parse_input(e.input, file + ":" + std::to_string(e.line), &vocabulary);
        actual = display_all((e.causal ? causal : bidirectional).run(input));
      } catch (const UserError& error) {
        actual = std::string("error: ") + error.what();
      }
      CHECK(actual == e.output);
      ++checked;
    }
  }
  CHECK(checked >= 100);
}
