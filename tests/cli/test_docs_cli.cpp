// The documentation's examples, run: every code block of README.md, docs/*.md and
// programs/README.md that shows a raspc command is run, and must print what the block shows, so
// the documentation cannot go stale.
//
// Two forms are recognised:
//   $ raspc ARGS          a command; the lines up to the next `$ ` line (or the block's end) are
//   output lines          its standard output, exactly
//   raspc ARGS   # OUT    (programs/README.md) a command whose standard output is the line OUT
// Commands of one file run in order in one folder (a later one may use a file an earlier one
// wrote), with programs/ linked there; they go through the shell as written, so `2>&1` and
// `; echo "exit $?"` show standard error and the exit code. Blocks without such lines (shell
// setup, Python) are left alone. One part of a line is the machine's, not the documentation's:
// the verification estimate's time and threads (`about 0.3 s estimated on 2 threads`; `under
// 0.1 s`, `about 7 min`: wall time on every core), compared as `about S s estimated on T threads`
// on both sides.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <regex>
#include <sstream>
#include <vector>

#include "tests/cli/run_raspc.hpp"

namespace {

using raspc::testing::slurp;

struct Example {
  int line = 0;  // in the Markdown file, of the command
  std::string command, expected;
};

// `raspc ARGS   # comment` -> {"raspc ARGS", "comment"}; no comment -> {"raspc ARGS", ""}.
std::pair<std::string, std::string> split_comment(const std::string& line) {
  const size_t hash = line.find("  #");
  if (hash == std::string::npos) return {line, ""};
  std::string command = line.substr(0, hash);
  command.erase(command.find_last_not_of(' ') + 1);
  std::string comment = line.substr(line.find('#', hash) + 1);
  comment.erase(0, comment.find_first_not_of(' '));
  return {command, comment};
}

std::vector<Example> examples_of(const std::string& markdown) {
  std::vector<Example> examples;
  std::istringstream in(markdown);
  bool in_block = false;
  Example* open = nullptr;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      open = nullptr;
      continue;
    }
    if (!in_block) continue;
    if (line.rfind("$ ", 0) == 0) {
      examples.push_back({number, split_comment(line.substr(2)).first, ""});
      open = &examples.back();
      if (open->command.rfind("raspc ", 0) != 0) examples.pop_back(), open = nullptr;  // not ours to run
    } else if (open) {
      open->expected += line + "\n";
    } else if (line.rfind("raspc ", 0) == 0) {
      auto [command, comment] = split_comment(line);
      if (!comment.empty()) examples.push_back({number, command, comment + "\n"});
    }
  }
  return examples;
}

std::string without_machine_estimate(const std::string& text) {
  static const std::regex estimate("(about [0-9.]+ (s|min)|under 0\\.1 s) estimated on [0-9]+ threads?");
  return std::regex_replace(text, estimate, "about S s estimated on T threads");
}

void run_examples(const std::string& relative_path) {
  const std::string source = RASPC_SOURCE_DIR;
  const std::vector<Example> examples = examples_of(slurp(source + "/" + relative_path));
  const std::filesystem::path folder = raspc::testing::scratch_folder() / std::filesystem::path(relative_path).stem();
  std::filesystem::create_directories(folder);
  if (!std::filesystem::exists(folder / "programs"))
    std::filesystem::create_directory_symlink(source + "/programs", folder / "programs");
  for (const Example& example : examples) {
    const std::string command = "'" RASPC_BINARY "'" + example.command.substr(5);
    const std::string shell = "cd '" + folder.string() + "' && (" + command + ") > example.out 2> example.err < /dev/null";
    INFO(relative_path << ":" << example.line << ": " << example.command);
    const int status = std::system(shell.c_str());
    INFO("standard error: " << slurp(folder / "example.err"));
    CHECK(status == 0);
    CHECK(without_machine_estimate(slurp(folder / "example.out")) == without_machine_estimate(example.expected));
  }
}

}  // namespace

TEST_CASE("docs: the examples parser finds both forms") {
  const auto examples = examples_of(
      "text\n```\n$ raspc eval x\n[1]\n$ ls\nfile\n```\n```\nraspc eval y   # [2]\nraspc compile z\n```\n$ raspc no\n");
  REQUIRE(examples.size() == 2);
  CHECK(examples[0].line == 3);
  CHECK(examples[0].command == "raspc eval x");
  CHECK(examples[0].expected == "[1]\n");
  CHECK(examples[1].command == "raspc eval y");
  CHECK(examples[1].expected == "[2]\n");
}

TEST_CASE("docs: the verification estimate is the one part of an output compared without its numbers") {
  CHECK(without_machine_estimate("verification to come: 1,364 inputs, under 0.1 s estimated on 2 threads\n") ==
        "verification to come: 1,364 inputs, about S s estimated on T threads\n");
  CHECK(without_machine_estimate("about 42 s estimated on 1 thread") == "about S s estimated on T threads");
  CHECK(without_machine_estimate("about 7 min estimated on 1 thread") == "about S s estimated on T threads");
  CHECK(without_machine_estimate("minimum logit margin 45.00") == "minimum logit margin 45.00");
}

TEST_CASE("docs: every documented file has runnable examples") {
  for (const char* file : {"README.md", "docs/language.md", "docs/compiler.md", "docs/json.md", "programs/README.md"}) {
    INFO(file);
    CHECK(!examples_of(slurp(std::string(RASPC_SOURCE_DIR) + "/" + file)).empty());
  }
}

TEST_CASE("docs: README.md's examples print what they show") { run_examples("README.md"); }
TEST_CASE("docs: docs/language.md's examples print what they show") { run_examples("docs/language.md"); }
TEST_CASE("docs: docs/compiler.md's examples print what they show") { run_examples("docs/compiler.md"); }
TEST_CASE("docs: docs/json.md's examples print what they show") { run_examples("docs/json.md"); }
TEST_CASE("docs: programs/README.md's examples print what they show") { run_examples("programs/README.md"); }
TEST_CASE("docs: the other pages of docs/ print what they show") {
  for (const auto& entry : std::filesystem::directory_iterator(std::string(RASPC_SOURCE_DIR) + "/docs")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".md" && name != "language.md" && name != "compiler.md" && name != "json.md")
      run_examples("docs/" + name);
  }
}
