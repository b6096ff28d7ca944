// Every program of programs/ (found at run time, so new files are picked up) is evaluated and run
// on every `# expect:` line bidirectionally and every `# expect-causal:` line causally. A failure
// names the file and line of the expectation.
#include <catch2/catch.hpp>

#include <set>

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
    ProgramFile file = read_program_file(path);
    INFO(file.path);
    CHECK(file.title_name == file.stem);
    CHECK(file.has_vocab);
    CHECK_NOTHROW(header_vocabulary(file.vocab_text));
    CHECK((file.causal_text == "yes" || file.causal_text == "no"));
    size_t bidirectional = 0, causal = 0;
    for (const Expectation& e : file.expectations) (e.causal ? causal : bidirectional) += 1;
    CHECK(bidirectional >= 3);
    if (file.causal_text == "yes") CHECK(causal >= 1);
    if (file.causal_text == "no") CHECK(causal == 0);
  }
}

TEST_CASE("programs: every expectation of every file holds") {
  size_t checked = 0;
  for (const auto& path : program_paths()) {
    ProgramFile file = read_program_file(path);
    Program program;
    try {
      program = load_program(file.path);
    } catch (const UserError& error) {
      FAIL_CHECK(file.path << " does not evaluate:\n" << error.what());
      continue;
    }
    std::vector<Value> vocabulary = header_vocabulary(file.vocab_text);
    Interpreter bidirectional(program, Mode::Bidirectional);
    Interpreter causal(program, Mode::Causal);
    for (const Expectation& e : file.expectations) {
      INFO(file.path << ":" << e.line << ": " << (e.causal ? "expect-causal" : "expect") << ": " << e.input
                     << " -> " << e.output);
      std::string actual;
      try {
        std::vector<Value> input = parse_input(e.input, file.path + ":" + std::to_string(e.line), &vocabulary);
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
