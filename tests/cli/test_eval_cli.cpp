// `raspc eval` as a user runs it: stdout, stderr and the exit code.
#include <catch2/catch.hpp>

#include "tests/cli/run_raspc.hpp"

namespace {

using Result = raspc::testing::CommandResult;

std::filesystem::path scratch() { return raspc::testing::scratch_folder(); }

// Runs `raspc ARGS` in the scratch folder (arguments are passed through the shell as written).
Result raspc_cli(const std::string& args) { return raspc::testing::run_raspc(args, scratch()); }

void write(const std::string& name, const std::string& text) { std::ofstream(scratch() / name) << text; }

}  // namespace

TEST_CASE("eval cli: a file on a string input") {
  write("hist.rasp", "# histogram\nhist = selector_width(select(tokens, tokens, ==));\nhist;\n");
  Result r = raspc_cli("eval hist.rasp --input hello");
  CHECK(r.code == 0);
  CHECK(r.out == "[1,1,2,2,1]\n");
  CHECK(r.err == "");
}

TEST_CASE("eval cli: -e with an integer input, exact fractions, bools") {
  CHECK(raspc_cli("eval -e 'sort(tokens, tokens)' --input '[3,1,2,4]'").out == "[1,2,3,4]\n");
  CHECK(raspc_cli("eval -e 'aggregate(full_s, indicator(tokens == \"e\"));' --input hey").out == "[1/3,1/3,1/3]\n");
  CHECK(raspc_cli("eval -e 'not tokens == \"l\"' --input hello").out == "[False,False,False,False,False]\n");
  CHECK(raspc_cli("eval -e 'tokens + \"a\"' --input '\"hey\"'").out == "[ha,ea,ya]\n");
}

TEST_CASE("eval cli: causal mode, vocabulary, output name") {
  CHECK(raspc_cli("eval -e length --input abc --causal").out == "[1,2,3]\n");
  CHECK(raspc_cli("eval -e length --input abc").out == "[3,3,3]\n");
  CHECK(raspc_cli("eval -e 'tokens' --input hello --vocab ehlo").out == "[h,e,l,l,o]\n");
  Result named = raspc_cli("eval -e 'a = indices * 2; b = indices + 1; b;' --input abc --output a");
  CHECK(named.out == "[0,2,4]\n");
}

TEST_CASE("eval cli: --trace prints every named s-op, then the output") {
  Result r = raspc_cli("eval -e 'h = selector_width(select(tokens, tokens, ==)); s = select(tokens, tokens, ==); r = h + 1; r' "
                   "--input hello --trace");
  CHECK(r.code == 0);
  CHECK(r.out == "h: [1,1,2,2,1]\nr: [2,2,3,3,2]\n[2,2,3,3,2]\n");
}

TEST_CASE("eval cli: --analyse prints RASP's layers and heads") {
  Result hist = raspc_cli("eval -e 'selector_width(select(tokens, tokens, ==))' --analyse");
  CHECK(hist.code == 0);
  CHECK(hist.out == "layers: 1, heads per layer: 1, max heads: 1\n");
  Result sort = raspc_cli("eval -e 'sort(tokens, tokens)' --analyse --input hello");
  CHECK(sort.out == "layers: 2, heads per layer: 1 1, max heads: 1\n[e,h,l,l,o]\n");
}

TEST_CASE("eval cli: user errors go to stderr with exit code 1") {
  Result syntax = raspc_cli("eval -e 'x = tokens +' --input abc");
  CHECK(syntax.code == 1);
  CHECK(syntax.out == "");
  CHECK(syntax.err == "-e:1:13: error: expected an expression but found `;`\n  x = tokens +;\n              ^\n");

  Result vocab = raspc_cli("eval -e tokens --input hez --vocab ehlo");
  CHECK(vocab.code == 1);
  CHECK(vocab.err == "--input:1:3: error: the token \"z\" is not in the vocabulary (e h l o)\n  hez\n    ^\n");

  Result empty = raspc_cli("eval -e tokens --input ''");
  CHECK(empty.code == 1);
  CHECK(empty.err.rfind("--input:1:1: error: the input is empty", 0) == 0);

  Result mixed = raspc_cli("eval -e tokens --input '[1,\"a\"]'");
  CHECK(mixed.code == 1);
  CHECK(mixed.err.rfind("--input:1:4: error: a sequence must hold only integers or only strings", 0) == 0);

  Result missing = raspc_cli("eval nothing_here.rasp --input abc");
  CHECK(missing.code == 1);
  CHECK(missing.err == "nothing_here.rasp: error: cannot open the file (does it exist, and is it readable?)\n");

  Result neither = raspc_cli("eval --input abc");
  CHECK(neither.code == 1);
  CHECK(neither.err == "raspc eval: error: give either a program FILE or -e EXPRESSION (exactly one of them)\n");

  Result no_input = raspc_cli("eval -e tokens");
  CHECK(no_input.code == 1);
  CHECK(no_input.err ==
        "raspc eval: error: give an input sequence with --input (as in --input hello or --input \"[3,1,2]\")\n");

  Result library = raspc_cli("eval -e 'length = 3; tokens' --input abc");
  CHECK(library.code == 1);
  CHECK(library.err.rfind("-e:1:1: error: `length` is a name of the standard library and cannot be reassigned", 0) == 0);
}

TEST_CASE("eval cli: a mean over strings is undefined on the input") {
  Result r = raspc_cli("eval -e 'aggregate(select(indices, indices, <=), tokens)' --input ab");
  CHECK(r.code == 1);
  CHECK(r.out == "");
  CHECK(r.err.rfind("-e:1:1: error: ", 0) == 0);
  CHECK(r.err.find("position 1") != std::string::npos);
}

TEST_CASE("eval cli: load reads a file beside the program, --output must name an s-op") {
  write("helpers.rasp", "def reverse(seq) { return aggregate(select(indices, length - indices - 1, ==), seq); }\n");
  write("main.rasp", "load \"helpers\";\nflipped = reverse(tokens);\nflipped;\n");
  Result r = raspc_cli("eval main.rasp --input abc");
  CHECK(r.code == 0);
  CHECK(r.out == "[c,b,a]\n");
  Result unknown = raspc_cli("eval main.rasp --input abc --output nope");
  CHECK(unknown.code == 1);
  CHECK(unknown.err == "--output: error: the program has no top-level s-op named `nope` (its named s-ops: flipped)\n");
}
