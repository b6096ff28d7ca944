// The shared acceptance facts about RASP (RASPC_SHARED_DIR/acceptance/rasp_cases.tsv), each checked
// with the interpreter in bidirectional mode. The file is read at run time, so new rows are picked
// up; a failing row names its id.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "language/interpret.hpp"

using namespace raspc;

namespace {

struct AcceptanceCase {
  int line = 0;
  std::string id, program, input, expected;
};

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, '\t')) fields.push_back(field);
  return fields;
}

// The acceptance notation: bools as T/F, everything else as to_display writes it, in brackets.
std::string acceptance_notation(const std::vector<Value>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) text += ",";
    const Value& v = values[i];
    text += v.is_bool() ? (v.boolean ? "T" : "F") : to_display(v);
  }
  return text + "]";
}

}  // namespace

TEST_CASE("acceptance: every row of rasp_cases.tsv holds for the interpreter") {
  const std::string path = std::string(RASPC_SHARED_DIR) + "/acceptance/rasp_cases.tsv";
  if (!std::filesystem::exists(path))
    FAIL("the acceptance cases are missing: " << path
                                              << " does not exist (configure with -DRASPC_SHARED_DIR=<folder holding "
                                                 "acceptance/>)");
  std::ifstream in(path);
  std::string line;
  std::vector<AcceptanceCase> cases;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || number == 1) continue;  // the first line names the columns
    std::vector<std::string> fields = split_tabs(line);
    INFO(path << ":" << number);
    REQUIRE(fields.size() == 4);
    cases.push_back({number, fields[0], fields[1], fields[2], fields[3]});
  }
  REQUIRE(!cases.empty());

  for (const AcceptanceCase& c : cases) {
    INFO("case " << c.id << " (" << path << ":" << c.line << "): " << c.program << " on " << c.input);
    std::string actual;
    try {
      auto source = std::make_shared<SourceFile>();
      source->name = "rasp_cases.tsv:" + c.id;
      // A row is one line whose last statement may lack its `;`, as typed at the reference REPL.
      source->text = c.program;
      if (source->text.find_last_not_of(" ") != std::string::npos &&
          source->text[source->text.find_last_not_of(" ")] != ';')
        source->text += ";";
      Program program = evaluate_program(source);
      Interpreter interpreter(program, Mode::Bidirectional);
      actual = acceptance_notation(interpreter.run(parse_input(c.input, "input of " + c.id)));
    } catch (const UserError& error) {
      actual = std::string("error: ") + error.what();
    }
    CHECK(actual == c.expected);
  }
}
